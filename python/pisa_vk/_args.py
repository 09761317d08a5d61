"""Kernel arguments: how Python values become the bytes of ``.param`` parameters.

A kernel's parameters are known only by their sizes (PISA's ``.param[N]``), so each value is
encoded for the size of its parameter:

* a NumPy array is uploaded into a fresh device buffer whose 8-byte device address is the
  parameter; after the dispatch the buffer is copied back into the array, unless the array is
  read-only or wrapped in :class:`In` (:class:`Out` skips the upload instead);
* a NumPy array that is a view of a :class:`~pisa_vk.Buffer`'s memory (``np.asarray(buf)``,
  a C-contiguous slice of it) passes the device address of its first element: no copy;
* a :class:`~pisa_vk.Buffer` or :class:`~pisa_vk.Symbol` passes its device address (no copy);
* a NumPy scalar (``np.float32(2)``, ``np.uint64(7)``) passes its bytes; its size must be the
  parameter's;
* a Python ``int`` is the parameter's size in two's complement (it must fit, signed or not);
  a Python ``float`` is an IEEE float of the parameter's size (2, 4 or 8 bytes);
* ``bytes`` are the parameter's bytes as they are (for struct-like ``.param[N]``).

Each argument is first checked against how the kernel uses its parameter (its *kind*, which
the translator infers from the kernel's code: spec-notes §89): a float or a negative int for
an unsigned integer, an int or a float where the kernel dereferences an address, an array or
Buffer where it only computes with the value, an array whose dtype contradicts the data the
kernel loads (float64 where it loads 32 bits and does ``fadd.f``) raise ``ArgumentError``
naming the parameter and the PISA line that decides, before anything is copied or run. A
Python ``int`` for a parameter the kernel uses as a float is converted to that float.
:func:`raw_address` passes a value unchecked (the old behaviour), as do ``bytes``.

Copies follow the kinds too: an array the kernel never writes through is not copied back
(an array it only writes is still uploaded, since a kernel may write only some elements:
wrap it in :class:`Out` to skip that).
"""

from __future__ import annotations

import math
import operator
import struct
from typing import Any, Dict, List, Tuple

import numpy as np

from .errors import ArgumentError

#: Host <-> device copies made for the user since the last :func:`transfer_stats` reset.
_TRANSFERS = {"uploads": 0, "upload_bytes": 0, "downloads": 0, "download_bytes": 0}


def count_transfer(kind: str, nbytes: int) -> None:
    """Counts one copy (``"upload"`` or ``"download"``) of ``nbytes``."""
    _TRANSFERS[kind + "s"] += 1
    _TRANSFERS[kind + "_bytes"] += int(nbytes)


def transfer_stats(reset: bool = False) -> Dict[str, int]:
    """How many host -> device (``uploads``) and device -> host (``downloads``) copies the
    package made, and their bytes, since the process started or the last ``reset=True``:
    kernel arguments that were arrays, ``Buffer.get``/``set``, ``Context.buffer``. Views of
    buffers and Buffer arguments count nothing: they are not copied."""
    stats = dict(_TRANSFERS)
    if reset:
        for key in _TRANSFERS:
            _TRANSFERS[key] = 0
    return stats


def buffer_of(array: np.ndarray):
    """``(Buffer, byte offset)`` when ``array`` is a C-contiguous, little-endian view of a
    :class:`~pisa_vk.Buffer`'s mapped memory lying inside it, else ``None``."""
    from ._buffer import Buffer

    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    if not isinstance(base, Buffer) or base._native.mapped_address is None:
        return None
    if not array.flags.c_contiguous or array.dtype.byteorder == ">" or array.dtype.hasobject:
        return None
    start = array.__array_interface__["data"][0] - base._native.mapped_address
    if start < 0 or start + array.nbytes > base.nbytes:
        return None
    return base, start


class raw_address:
    """``value`` passed as it is, not checked against the parameter's kind: an ``int`` that
    is a device address where the kernel dereferences one, an array or Buffer where the
    kernel computes with the address as an integer, an array of any dtype. Arrays are still
    copied in and out (both ways). The escape for code that means it (spec-notes §89)."""

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return f"raw_address({self.value!r})"


def _element(dtype: np.dtype) -> tuple:
    """The ``("buffer", bits, class)`` of an array of ``dtype``, for the kind check."""
    if dtype.kind == "f":
        return ("buffer", dtype.itemsize * 8, "float")
    if dtype.kind in "iu":
        return ("buffer", dtype.itemsize * 8, "int")
    if dtype.kind == "b":
        return ("buffer", 8, "int")
    return ("buffer", 0, None)


def _given(value, size: int) -> tuple:
    """What ``value`` is for a ``.param[size]``, for the host API's kind check."""
    from ._buffer import Buffer
    from ._module import Symbol

    if isinstance(value, _Direction):
        value = value.array
    if isinstance(value, np.ndarray):
        return _element(value.dtype)
    if isinstance(value, Buffer):
        return _element(value.dtype)
    if isinstance(value, Symbol):
        return ("buffer", 0, None)
    if isinstance(value, np.generic):
        dtype = np.asarray(value).dtype
        if dtype.kind == "f":
            return ("float", dtype.itemsize * 8)
        if dtype.kind in "iub":
            return ("int", dtype.itemsize * 8, bool(value < 0))
        return ("raw",)
    if isinstance(value, float):
        return ("float", size * 8)
    if isinstance(value, int):
        return ("int", size * 8, value < 0)
    return ("raw",)


class _Direction:
    """An array with an explicit copy direction (see :class:`In`, :class:`Out`, :class:`InOut`)."""

    upload = True
    download = True

    def __init__(self, array: np.ndarray):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"{type(self).__name__}() takes a NumPy array, not {type(array).__name__}")
        if self.download and not array.flags.writeable:
            raise ValueError(
                f"{type(self).__name__}() of a read-only array: the kernel's results cannot be copied back"
            )
        self.array = array

    def __repr__(self) -> str:
        return f"{type(self).__name__}(<{self.array.dtype} array {self.array.shape}>)"


class In(_Direction):
    """An array the kernel only reads: uploaded, never copied back."""

    download = False


class Out(_Direction):
    """An array the kernel only writes: not uploaded (the device buffer starts zeroed), copied
    back after the dispatch."""

    upload = False


class InOut(_Direction):
    """An array uploaded and copied back: what a writable array gets without a wrapper."""


def device_layout(array: np.ndarray) -> np.ndarray:
    """``array`` as the device sees it: C-contiguous and little-endian (a copy only when
    needed)."""
    dtype = array.dtype
    if dtype.hasobject:
        raise ArgumentError(f"an array of dtype {dtype} (Python objects) has no device representation")
    if dtype.byteorder == ">":
        dtype = dtype.newbyteorder("<")
    device = np.ascontiguousarray(array, dtype=dtype)
    # ascontiguousarray makes a 0-d array 1-d; keep the shape so results copy back.
    return device if device.shape == array.shape else device.reshape(array.shape)


def as_bytes(array: np.ndarray) -> np.ndarray:
    """The bytes of a C-contiguous array, as a flat ``uint8`` view of the same memory."""
    return array.reshape(-1).view(np.uint8)


def encode_scalar(value: Any, size: int, what: str) -> bytes:
    """The bytes of the scalar ``value`` for a ``.param[size]``; ``what`` names the argument in
    errors."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) != size:
            raise ArgumentError(f"{what} is .param[{size}], but {len(raw)} bytes were given")
        return raw
    if isinstance(value, np.generic):
        item = np.asarray(value)
        if item.dtype.hasobject or item.dtype.itemsize != size:
            raise ArgumentError(
                f"{what} is .param[{size}], but a {item.dtype} scalar is {item.dtype.itemsize} bytes"
            )
        return device_layout(item).tobytes()
    if isinstance(value, float):
        return _encode_float(value, size, what)
    try:
        integer = operator.index(value)
    except TypeError:
        raise ArgumentError(
            f"{what} is .param[{size}]: a {type(value).__name__} cannot be passed "
            "(give a NumPy array, a Buffer, a Symbol, a NumPy scalar, an int, a float or bytes)"
        ) from None
    if not -(1 << (8 * size - 1)) <= integer < (1 << (8 * size)):
        raise ArgumentError(f"{what} is .param[{size}]: {integer} does not fit in {8 * size} bits")
    return (integer % (1 << (8 * size))).to_bytes(size, "little")


def _encode_float(value: float, size: int, what: str) -> bytes:
    if size == 8:
        return struct.pack("<d", value)
    if size == 4:
        try:
            return struct.pack("<f", value)
        except OverflowError:
            raise ArgumentError(f"{what} is .param[4]: {value!r} overflows a 32-bit float") from None
    if size == 2:
        with np.errstate(over="ignore"):
            half = np.float16(value)
        if math.isfinite(value) and not np.isfinite(half):
            raise ArgumentError(f"{what} is .param[2]: {value!r} overflows a 16-bit float")
        return half.astype("<f2").tobytes()
    raise ArgumentError(
        f"{what} is .param[{size}]: a float is 2, 4 or 8 bytes (pass a NumPy scalar or bytes)"
    )


class Staging:
    """The device buffers of one kernel call: uploads the array arguments, encodes every
    argument, and copies results back after the dispatch. An array passed twice (by the same
    object) gets one buffer, so the kernel sees one memory."""

    def __init__(self, native_context):
        self._ctx = native_context
        # id(array) -> [array, device copy, native buffer, upload, download]
        self._arrays: Dict[int, list] = {}
        # Buffers whose memory array arguments are views of (passed by address, no copy).
        self._borrowed: List[Any] = []

    def encode(self, params, args, check=None) -> List[Any]:
        """The arguments of ``args`` for ``params`` (``Param`` tuples), uploading arrays: a
        Buffer and an uploaded array pass their native buffer (the host API writes its
        address and refuses one of another context), anything else its parameter bytes.
        ``check(index, given)`` refuses an argument whose kind contradicts the parameter's
        (before anything is uploaded); arrays the kernel never writes are not copied back."""
        from ._buffer import Buffer
        from ._module import Symbol

        # Each argument is its bytes, or the array whose device address it will be.
        plan: List[Any] = []
        for index, (param, value) in enumerate(zip(params, args, strict=True)):
            what = f"argument {index} (%{param.name})"
            kind = getattr(param, "kind", None) or {}
            raw = isinstance(value, raw_address)
            if raw:
                value = value.value
                if isinstance(value, (Buffer, Symbol)):
                    # Its address as bytes: the host API takes those unchecked.
                    if isinstance(value, Buffer):
                        self._borrowed.append(value._native)
                    value = struct.pack("<Q", value.address)
            else:
                if (
                    kind.get("kind") == "float"
                    and isinstance(value, int)
                    and not isinstance(value, (bool, np.generic))
                ):
                    value = float(value)  # the float the kernel computes with
                if check is not None:
                    check(index, _given(value, param.size))
            # Whether the kernel may write through it (unknown: yes).
            writes = raw or not (kind.get("kind") == "address" and not kind.get("write", True))
            pointer = isinstance(value, (np.ndarray, _Direction, Buffer, Symbol))
            if pointer and param.size != 8:
                raise ArgumentError(
                    f"{what} is .param[{param.size}]; an array, Buffer or Symbol passes an "
                    "8-byte device address"
                )
            if isinstance(value, (np.ndarray, _Direction)):
                array, up, down = _direction(value)
                shared = buffer_of(array)
                if shared is not None:
                    if not _same_context(shared[0], self._ctx):
                        raise ArgumentError(f"{what}: a view of a buffer of another context")
                    self._borrowed.append(shared[0]._native)
                    plan.append(struct.pack("<Q", shared[0].address + shared[1]))
                    continue
                entry = self._arrays.setdefault(id(array), [array, None, None, False, False])
                entry[3] |= up
                entry[4] |= down and writes
                plan.append(array)
            elif isinstance(value, Buffer):
                plan.append(value._native)
            elif isinstance(value, Symbol):
                plan.append(struct.pack("<Q", value.address))
            else:
                plan.append(encode_scalar(value, param.size, what))
        for entry in self._arrays.values():
            device = device_layout(entry[0])
            native = self._ctx.buffer(device.nbytes)
            if entry[3]:
                native.write(as_bytes(device))
                count_transfer("upload", device.nbytes)
            entry[1], entry[2] = device, native
        return [self._arrays[id(p)][2] if isinstance(p, np.ndarray) else p for p in plan]

    def buffers(self) -> list:
        """The native buffers made for the array arguments, and those that array arguments
        are views of."""
        return [entry[2] for entry in self._arrays.values()] + self._borrowed

    def downloads(self) -> list:
        """``(array, device copy, native buffer)`` of each array to copy back."""
        return [(array, device, native) for array, device, native, _, down in self._arrays.values() if down]

    def copy_back(self) -> None:
        """Copies the device buffers of the arrays to copy back into them."""
        for array, device, native in self.downloads():
            if device is array:  # already contiguous and little-endian: read in place
                native.read_into(as_bytes(array))
            else:
                native.read_into(as_bytes(device))
                array[...] = device
            count_transfer("download", device.nbytes)


def _same_context(buf, native_context) -> bool:
    """Whether the Buffer ``buf`` was made by ``native_context`` (the native Context)."""
    return buf._context_native is native_context


def _direction(value) -> Tuple[np.ndarray, bool, bool]:
    """``(array, upload, download)`` of an array argument."""
    if isinstance(value, _Direction):
        return value.array, value.upload, value.download
    return value, True, bool(value.flags.writeable)
