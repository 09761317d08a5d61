"""pisa_vk: run PISA (Intel Portable ISA) kernels on any Vulkan device from Python.

>>> import numpy as np, pisa_vk
>>> ctx = pisa_vk.Context()
>>> saxpy = ctx.load("examples/saxpy.pisa").kernel("saxpy")
>>> x = np.arange(8, dtype=np.float32); y = np.ones(8, np.float32)
>>> saxpy(8, 4, 2.0, pisa_vk.In(x), y, 8)      # grid = 8 work-items, blocks of 4
>>> y
array([ 1.,  3.,  5.,  7.,  9., 11., 13., 15.], dtype=float32)

A thin layer over the Rust host API (crate ``pisa-vk``): :class:`Context`, :class:`Module`,
:class:`Kernel`, :class:`Symbol`, :class:`Buffer`; errors are :class:`PisaError`\\ s, invalid
PISA a :class:`CompileError` carrying the rendered diagnostics. See docs/python.md.
"""

from ._args import In, InOut, Out
from ._buffer import Buffer
from ._context import Context
from ._module import Kernel, Module, Param, Symbol, SymbolInfo
from . import errors
from .errors import *  # noqa: F401,F403 (the exception classes)

__version__ = "0.1.0"

__all__ = [
    "Context",
    "Module",
    "Kernel",
    "Symbol",
    "SymbolInfo",
    "Param",
    "Buffer",
    "In",
    "Out",
    "InOut",
    *errors.__all__,
]
