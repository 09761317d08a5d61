"""``Context``: a Vulkan device, and what is made on it (modules, buffers)."""

from __future__ import annotations

import os
import warnings
from typing import Iterable, List, Optional, Tuple, Union

import numpy as np

from . import _log, _native
from ._args import as_bytes, buffer_of, count_transfer, device_layout
from ._buffer import Buffer
from ._module import Module

#: A module of a program: a path (``str`` without ``;`` or newline, or ``os.PathLike``), PISA
#: source text (a ``str`` with a ``;`` or a newline: every program has ``.version ...;``), or a
#: ``(name, text)`` pair (``name`` is what diagnostics call it).
Program = Union[str, "os.PathLike[str]", Tuple[str, str]]


def _is_source(text: str) -> bool:
    return "\n" in text or ";" in text


def _source(item: Program, position: int) -> Tuple[str, str]:
    """``(name, text)`` of one module of a program; ``position`` (1-based) names inline text."""
    if isinstance(item, tuple):
        name, text = item
        return str(name), str(text)
    if isinstance(item, str) and _is_source(item):
        return ("<source>" if position == 1 else f"<source {position}>"), item
    if isinstance(item, (str, os.PathLike)):
        path = os.fspath(item)
        with open(path, encoding="utf-8") as f:
            return path, f.read()
    raise TypeError(f"a module is a path, PISA source text or a (name, text) pair, not {type(item).__name__}")


# Whether a driver-bug warning was given in this process (Context._warn_driver_bugs).
_warned_driver_bugs = False


class Context:
    """A device to run PISA kernels on.

    ``Context()`` opens the default device (``PISA_VK_DEVICE`` when set: an index, a device
    UUID or a name substring; else the best one: discrete GPU > integrated > CPU),
    ``Context(0)`` the first of :meth:`devices`, ``Context("6d657361-...")`` the device of
    that UUID, ``Context("llvmpipe")`` the first whose name contains the text. Every device
    feature pisa-vk can use is enabled, for modules loaded later.

    ``checked=True`` translates every module it loads with the memory checker: each load,
    store and atomic is bounds-checked first, and a bad one raises :class:`MemoryViolation`
    naming the PISA line, the work-item and the buffer it missed (kernels run about 1.5-2x
    slower on lavapipe). ``checked=None`` (the default) follows ``PISA_VK_CHECKED``.

    ``Context("reference")`` runs kernels on the CPU reference interpreter instead of a
    device (``pisa-vk run --device reference``), on NumPy arrays and scalars, with the
    bounds checks always on; ``sanitize`` (``"race"``, ``"init"``, ``"sync"``, ``"all"``, a
    comma-separated list or a list of them, ``True`` for all) adds its sanitizers, whose
    findings raise :class:`SanitizerError` with structured reports. ``subgroup_size`` is
    the interpreter's sub-group width (default 32).
    """

    def __init__(self, device: Union[None, int, str] = None, *, checked: Optional[bool] = None,
                 sanitize=None, subgroup_size: Optional[int] = None):
        from ._reference import ReferenceNative, sanitize_text

        _log.sync()
        try:
            if device == "reference":
                self._native = ReferenceNative(sanitize_text(sanitize), subgroup_size)
            elif sanitize not in (None, False) or subgroup_size is not None:
                raise ValueError(
                    "sanitize and subgroup_size apply to the reference interpreter: "
                    "Context('reference', sanitize=...)"
                )
            else:
                self._native = _native.Context(device, checked)
        finally:
            _log.flush()
        # Found when the context was made; read once here, not at every launch.
        self._driver_warnings = self._native.driver_warnings()

    @property
    def is_reference(self) -> bool:
        """Whether kernels run on the CPU reference interpreter (``Context("reference")``)."""
        return not isinstance(self._native, _native.Context)

    def _need_device(self, what: str) -> None:
        if self.is_reference:
            from ._reference import no_device

            raise no_device(what)

    def driver_bugs(self) -> dict:
        """The known driver bugs the device's probes found when the context was made
        (docs/driver-bugs.md): ``{"masked_merge": bool}`` (lavapipe's LLVM miscompiling masked
        merges on AVX-512 CPUs, which pisa-vk avoids unless ``GALLIUM_OVERRIDE_CPU_CAPS`` says
        otherwise). The first kernel launch on a context with one raises a RuntimeWarning."""
        return self._native.driver_bugs()

    def _warn_driver_bugs(self) -> None:
        """Warns (RuntimeWarning) at the first launch of the process on a device with a known
        driver bug that gives wrong results; once per process."""
        global _warned_driver_bugs
        if self._driver_warnings and not _warned_driver_bugs:
            _warned_driver_bugs = True
            for w in self._driver_warnings:
                warnings.warn(w, RuntimeWarning, stacklevel=4)

    @staticmethod
    def devices() -> List[dict]:
        """Every Vulkan device of the machine (dicts like :attr:`device`, with its ``index``
        and ``uuid``)."""
        return _native.Context.devices()

    @property
    def device(self) -> dict:
        """The device in use: ``index``, ``uuid`` (what ``PISA_VK_DEVICE`` takes to pin it),
        ``name``, ``type`` (``"discrete"``, ``"integrated"``, ``"cpu"``, ...), ``driver``,
        ``api_version``, ``subgroup_size`` and compute limits."""
        return self._native.device

    def load(self, program: Program, *, linked: Iterable[Program] = (), name: Optional[str] = None,
             stack_depth: Optional[int] = None) -> Module:
        """Translates and loads a PISA program: ``program`` and the modules ``linked`` with it
        (``.export``/``.import`` resolved across them), each a path, source text or a
        ``(name, text)`` pair. ``name`` renames inline source in diagnostics. Raises
        :class:`CompileError` with the rendered diagnostics when the program is invalid.

        ``stack_depth`` (default 64) bounds the activations of a call cycle's functions
        (recursion) nested in one work-item; a call that would nest more raises
        :class:`StackOverflow` at the launch."""
        if stack_depth is not None and (not isinstance(stack_depth, int) or not 1 <= stack_depth < 2**32):
            raise ValueError(f"stack_depth must be an int from 1 to 2**32 - 1, not {stack_depth!r}")
        items = [program, *linked]
        sources = [_source(item, k + 1) for k, item in enumerate(items)]
        if name is not None:
            sources[0] = (name, sources[0][1])
        _log.sync()
        try:
            native = self._native.load(sources, stack_depth)
        finally:
            _log.flush()
        return Module(self, native, " + ".join(n for n, _ in sources))

    def buffer(self, array) -> Buffer:
        """A device buffer holding a copy of ``array`` (its shape and dtype)."""
        self._need_device("a Buffer")
        array = np.asarray(array)
        device = device_layout(array)
        buf = Buffer(self._native.buffer(device.nbytes), array.shape, device.dtype, self._native)
        buf._native.write(as_bytes(device))
        count_transfer("upload", device.nbytes)
        return buf

    def asarray(self, array, *, copy: Optional[bool] = None) -> Buffer:
        """``array`` as a device :class:`Buffer`, sharing its memory where possible (NumPy's
        ``copy`` rule: ``None`` shares when it can and copies otherwise, ``False`` shares or
        raises ``ValueError`` saying why not, ``True`` always copies).

        What is shared: a Buffer of this context (returned as it is); a NumPy view of one
        (``np.asarray(buf)``, ``buf.view()``, viewing it whole); and a plain NumPy array's own
        memory, imported without a copy where the device allows it
        (``VK_EXT_external_memory_host``; lavapipe, most desktop drivers): the array must be
        writable, C-contiguous, little-endian and not empty, and its address aligned as the
        device needs (its offset inside its page a multiple of the device's buffer alignment,
        at least 16 bytes). The Buffer and the array are then one memory: what a kernel writes, the array
        shows, and the other way round; the Buffer keeps the array alive.

        ``buf.imported`` says whether the memory is the array's, ``buf.copy_reason`` why a
        ``copy=None`` call copied (``None`` when it did not)."""
        self._need_device("a Buffer")
        if copy not in (None, False, True):
            raise ValueError(f"copy must be None, False or True, not {copy!r}")
        shared, reason = (None, "copy=True") if copy else self._share(array)
        if shared is not None:
            return shared
        if copy is False:
            raise ValueError(f"cannot share the memory of the array: {reason}")
        buf = self.buffer(array)
        buf.copy_reason = reason if copy is None else None
        return buf

    def _share(self, array) -> Tuple[Optional[Buffer], str]:
        """The Buffer that is ``array``'s memory (see :meth:`asarray`), or ``None`` and why not."""
        if isinstance(array, Buffer):
            if array._context_native is self._native:
                return array, ""
            return None, "a Buffer of another context"
        if not isinstance(array, np.ndarray):
            return None, f"a {type(array).__name__} is not a NumPy array"
        shared = buffer_of(array)
        if shared is not None:
            if shared[0]._context_native is not self._native:
                return None, "a view of a Buffer of another context"
            if shared[1] != 0 or array.nbytes != shared[0].nbytes:
                return None, "a view of part of a Buffer"
            buf = shared[0]
            if array.shape == buf.shape and array.dtype == buf.dtype:
                return buf, ""
            return Buffer(buf._native, array.shape, array.dtype, self._native), ""
        if array.dtype.hasobject:
            return None, f"dtype {array.dtype} (Python objects) has no device representation"
        if array.dtype.byteorder == ">":
            return None, "the array is big-endian (the device is little-endian)"
        if not array.flags.c_contiguous:
            return None, "the array is not C-contiguous"
        if not array.flags.writeable:
            return None, "the array is read-only (kernels may write a buffer)"
        if array.nbytes == 0:
            return None, "the array is empty"
        native, reason = self._native.import_host(array.reshape(-1).view(np.uint8))
        if native is None:
            return None, reason
        buf = Buffer(native, array.shape, array.dtype, self._native)
        buf._host = array  # the array it is (the native buffer also keeps it alive)
        return buf, ""

    @property
    def host_import_alignment(self) -> Optional[int]:
        """The alignment (``minImportedHostPointerAlignment``, a page on most devices) that
        :meth:`asarray` imports host memory in, or ``None`` when the device cannot import host
        memory (then :meth:`asarray` copies arrays)."""
        return self._native.host_import_alignment()

    def empty(self, shape, dtype=np.float32) -> Buffer:
        """A device buffer of ``shape`` and ``dtype``, as :meth:`zeros` (device memory is
        always cleared)."""
        return self.zeros(shape, dtype)

    def zeros(self, shape, dtype=np.float32) -> Buffer:
        """A zero-filled device buffer of ``shape`` and ``dtype``."""
        self._need_device("a Buffer")
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return Buffer(self._native.buffer(nbytes), shape, dtype, self._native)

    def stream(self, timed: bool = False) -> "Stream":
        """A new :class:`Stream`: launches, writes, reads, copies and fills recorded in order
        and submitted as one batch without waiting. ``timed`` measures the GPU time of each
        command (:class:`DeviceError` on a queue without timestamps)."""
        from ._stream import Stream

        self._need_device("a stream (or timed=True)")
        return Stream(self, timed)

    def validation_messages(self) -> List[str]:
        """Takes the Khronos validation layer's messages since the last call (only with
        ``PISA_VK_VALIDATION=1``; empty otherwise)."""
        return self._native.validation_messages()

    def __repr__(self) -> str:
        if self.is_reference and self._native.sanitize:
            return f"<pisa_vk.Context 'reference' sanitize={self._native.sanitize!r}>"
        return f"<pisa_vk.Context {self.device['name']!r}>"
