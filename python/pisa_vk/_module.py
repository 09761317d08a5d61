"""``Module`` (a loaded PISA program), ``Kernel`` (one of its kernels, callable) and ``Symbol``
(one of its variables, readable and writable like a NumPy array)."""

from __future__ import annotations

import operator
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _log
from ._args import Staging, as_bytes, device_layout
from .errors import ArgumentError, LaunchError, NotFoundError, SizeError

Size = Union[int, Sequence[int]]


class Param(NamedTuple):
    """A kernel's ``.param``: its name (without ``%``), offset in the argument block, size
    and alignment in bytes, and its kind: how the kernel uses it (spec-notes §89), a dict
    with ``"kind"`` (``"address"``, ``"int"``, ``"float"`` or ``"unknown"``), ``"text"``
    (in words), ``"at"`` (``file:line:col`` of the instruction that decides it), and for an
    address ``"read"``/``"write"``/``"space"``, for numbers ``"bits"``."""

    name: str
    offset: int
    size: int
    align: int
    kind: Optional[dict] = None


class SymbolInfo(NamedTuple):
    """A module variable: its name, ``.host_access`` name, whether it is exported, its space
    (``"global"`` or ``"const"``) and its size in bytes."""

    name: str
    host_access: Optional[str]
    exported: bool
    space: str
    nbytes: int


class Module:
    """A PISA program loaded on a device: its kernels and its module variables. Made by
    :meth:`Context.load`."""

    def __init__(self, context, native, name: str):
        self.context = context
        self._native = native
        self.name = name
        self._kernels = {
            kname: (tuple(Param(*p) for p in params), reqd) for kname, params, reqd in native.kernels()
        }

    @property
    def kernels(self) -> List[str]:
        """The names of the program's kernels, in declaration order."""
        return list(self._kernels)

    @property
    def symbols(self) -> List[SymbolInfo]:
        """Every variable of the program's globals arena."""
        return [SymbolInfo(*g) for g in self._native.globals()]

    def kernel(self, name: str) -> "Kernel":
        """The kernel ``name`` (with or without ``@``), callable as
        ``kernel(grid, block, *args)``."""
        bare = name[1:] if name.startswith("@") else name
        if bare not in self._kernels:
            raise NotFoundError(f"no kernel `{bare}` in the module (kernels: {', '.join(self._kernels)})")
        params, reqd = self._kernels[bare]
        return Kernel(self, bare, params, reqd)

    def symbol(self, name: str, dtype=np.uint8, shape: Optional[Size] = None) -> "Symbol":
        """The module variable ``name`` (its ``.host_access`` name, its exported name, or its
        own name when only one variable has it), seen as an array of ``dtype`` (bytes by
        default) of ``shape`` (by default as many elements as fit)."""
        return Symbol(self, name, dtype, shape)

    def __repr__(self) -> str:
        return f"<pisa_vk.Module {self.name!r} kernels={self.kernels}>"


def _dims(value: Size, what: str, least: int) -> List[int]:
    """1 to 3 sizes from an int or a sequence of ints, each at least ``least``."""
    try:
        sizes = [operator.index(value)]
    except TypeError:
        try:
            sizes = [operator.index(v) for v in value]
        except TypeError:
            raise LaunchError(f"{what} must be an int or 1 to 3 ints, not {value!r}") from None
    if not 1 <= len(sizes) <= 3:
        raise LaunchError(f"{what} must have 1 to 3 dimensions, {len(sizes)} given")
    if any(s < least or s >= 1 << 64 for s in sizes):
        raise LaunchError(f"{what} {tuple(sizes)}: every size must be at least {least}")
    return sizes


class Kernel:
    """A kernel of a loaded program. Call it as ``kernel(grid, block, *args)``:

    * ``grid``: the global size in **work-items** per dimension (an int, or a tuple of 2 or 3
      for a 2-D or 3-D NDRange), as in OpenCL and ``pisa-vk run --grid``; not a count of
      work-groups. It need not be a multiple of ``block``.
    * ``block``: the work-group size (an int or a tuple).
    * ``args``: one per ``.param``, encoded for the parameter's size (see ``pisa_vk._args``):
      arrays are uploaded and copied back, Buffers and Symbols pass their address, scalars their
      bytes.
    * ``offset`` (keyword): ``%globaloffset``, an int or a tuple (default 0).
    * ``timed`` (keyword): return the kernel's GPU time in seconds, measured with timestamp
      queries around the launch (the launch runs as a timed stream of one command;
      ``DeviceError`` on a queue without timestamps).

    The call returns when the kernel has finished, with the GIL released meanwhile; it returns
    ``None``, or the GPU time with ``timed=True``.
    """

    def __init__(self, module: Module, name: str, params: Tuple[Param, ...], reqd):
        self.module = module
        self.name = name
        self.params = params
        self.reqd_work_group_size = tuple(reqd) if reqd is not None else None

    def __call__(self, grid: Size, block: Size, *args: Any, offset: Size = 0, timed: bool = False):
        if timed:
            stream = self.module.context.stream(timed=True)
            stream.launch(self, grid, block, *args, offset=offset)
            return stream.submit().wait().command_times[0]
        launch, staging = self._encode(grid, block, args, offset)
        _log.sync()
        try:
            self.module._native.dispatch(self.name, *launch)
        finally:
            _log.flush()
        staging.copy_back()
        return None

    def _encode(self, grid: Size, block: Size, args: Sequence[Any], offset: Size):
        """``([global, local, offsets, arguments], staging)`` of a launch with ``args``
        (arrays uploaded into the staging's buffers); what a call and a stream's launch share."""
        self.module.context._warn_driver_bugs()
        global_size = _dims(grid, "grid", 1)
        local_size = _dims(block, "block", 1)
        offsets = _dims(offset, "offset", 0)
        offsets += [0] * (3 - len(offsets))
        if len(args) != len(self.params):
            names = ", ".join(f"%{p.name}" for p in self.params)
            raise ArgumentError(
                f"kernel `{self.name}` takes {len(self.params)} argument(s) ({names}), {len(args)} given"
            )
        staging = Staging(self.module.context._native)
        native = self.module._native
        blobs = staging.encode(self.params, args, lambda i, given: native.check_arg(self.name, i, given))
        return [global_size, local_size, offsets, blobs], staging

    def prepare(self, block: Size) -> None:
        """Builds the kernel's pipeline for work-groups of ``block`` now (it is otherwise built
        at the first call), reporting a bad block size or a missing device feature."""
        _log.sync()
        try:
            self.module._native.prepare(self.name, _dims(block, "block", 1))
        finally:
            _log.flush()

    def __repr__(self) -> str:
        params = ", ".join(f".param[{p.size}] %{p.name}" for p in self.params)
        return f"<pisa_vk.Kernel @{self.name}({params})>"


class Symbol:
    """A module variable, read and written as a NumPy array of a chosen dtype.

    ``sym.get()`` returns a copy, ``sym.set(values)`` overwrites it (values are converted to
    the dtype and broadcast), ``sym[i]`` and ``sym[i] = v`` read and write elements (a whole
    read-modify-write), ``np.asarray(sym)`` reads it. As a kernel argument it passes its device
    address. A ``.const`` variable is read-only (PISA's constant memory is initialized by the
    module): ``set`` and item assignment raise ``PisaError`` naming the space.
    """

    def __init__(self, module: Module, name: str, dtype, shape: Optional[Size]):
        self.module = module
        self.name, self.space, self.nbytes, self.address = module._native.symbol(name)
        self._key = name
        self.dtype = np.dtype(dtype)
        if self.dtype.hasobject or self.dtype.itemsize == 0:
            raise TypeError(f"a symbol cannot be seen as {self.dtype}")
        if shape is None:
            if self.nbytes % self.dtype.itemsize:
                raise SizeError(
                    f"`{name}` is {self.nbytes} bytes, not a whole number of {self.dtype} "
                    f"({self.dtype.itemsize} bytes)"
                )
            self.shape: Tuple[int, ...] = (self.nbytes // self.dtype.itemsize,)
        else:
            try:
                self.shape = (operator.index(shape),)
            except TypeError:
                self.shape = tuple(operator.index(s) for s in shape)
            count = int(np.prod(self.shape, dtype=np.int64))
            if count * self.dtype.itemsize != self.nbytes:
                raise SizeError(
                    f"`{name}` is {self.nbytes} bytes; shape {self.shape} of {self.dtype} is "
                    f"{count * self.dtype.itemsize}"
                )

    def get(self) -> np.ndarray:
        """A copy of the contents."""
        raw = self.module._native.read_symbol(self._key)
        little = self.dtype.newbyteorder("<") if self.dtype.byteorder == ">" else self.dtype
        return np.frombuffer(raw, dtype=little).reshape(self.shape).astype(self.dtype)

    def set(self, values) -> None:
        """Overwrites the contents with ``values`` (converted to the dtype, broadcast to the
        shape)."""
        array = np.broadcast_to(np.asarray(values, dtype=self.dtype), self.shape)
        self.module._native.write_symbol(self._key, as_bytes(device_layout(array)))

    def __array__(self, dtype=None, copy=None):
        array = self.get()
        return array if dtype is None else array.astype(dtype, copy=False)

    def __getitem__(self, index):
        return self.get()[index]

    def __setitem__(self, index, value) -> None:
        array = self.get()
        array[index] = value
        self.set(array)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d symbol")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<pisa_vk.Symbol @{self.name} .{self.space} {self.dtype} {self.shape}>"
