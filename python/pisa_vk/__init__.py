"""pisa_vk: run PISA (Intel Portable ISA) kernels on any Vulkan device from Python.

>>> import numpy as np, pisa_vk
>>> ctx = pisa_vk.Context()
>>> saxpy = ctx.load("examples/saxpy.pisa").kernel("saxpy")
>>> x = np.arange(8, dtype=np.float32); y = np.ones(8, np.float32)
>>> saxpy(8, 4, 2.0, pisa_vk.In(x), y, 8)      # grid = 8 work-items, blocks of 4
>>> y
array([ 1.,  3.,  5.,  7.,  9., 11., 13., 15.], dtype=float32)

A thin layer over the Rust host API (crate ``pisa-vk``): :class:`Context`, :class:`Module`,
:class:`Kernel`, :class:`Symbol`, :class:`Buffer` (device memory, also a NumPy view of it
without a copy where the memory is host-visible), :class:`Stream` (batches submitted
without waiting); :mod:`pisa_vk.dask` runs kernels on every chunk of Dask arrays; the
translator's and runtime's timings go to the ``logging`` logger ``pisa_vk``; errors are :class:`PisaError`\\ s, invalid
PISA a :class:`CompileError` carrying the rendered diagnostics. See docs/python.md.
"""

from ._args import In, InOut, Out, raw_address, transfer_stats
from ._buffer import Buffer
from ._context import Context
from ._module import Kernel, Module, Param, Symbol, SymbolInfo
from ._stream import Read, Stream, Submission
from . import errors
from .errors import *  # noqa: F401,F403 (the exception classes)

__version__ = "0.1.0"


def cpu_caps() -> str:
    """What pisa-vk decided about lavapipe's CPU features when it was imported
    (docs/driver-bugs.md): ``"capped"`` (it set ``GALLIUM_OVERRIDE_CPU_CAPS=avx`` so that
    lavapipe's LLVM cannot miscompile masked merges on this AVX-512 CPU), ``"set by user"``,
    ``"not needed"`` (no AVX-512) or ``"too late"`` (Vulkan was loaded before)."""
    from . import _native

    return _native.cpu_caps()


def cpu_has_avx512() -> bool:
    """Whether the CPU has AVX-512."""
    from . import _native

    return _native.cpu_has_avx512()


def devices():
    """Every Vulkan device of the machine, as dicts: ``index``, ``uuid`` (what
    ``PISA_VK_DEVICE`` or ``Context(uuid)`` takes to pin one device), ``name``, ``type``,
    ``driver``, ``api_version`` and compute limits (:meth:`Context.devices`)."""
    return Context.devices()


__all__ = [
    "Context",
    "Module",
    "Kernel",
    "Symbol",
    "SymbolInfo",
    "Param",
    "Buffer",
    "Stream",
    "Submission",
    "Read",
    "In",
    "Out",
    "InOut",
    "devices",
    "cpu_caps",
    "cpu_has_avx512",
    "transfer_stats",
    "raw_address",
    *errors.__all__,
]
