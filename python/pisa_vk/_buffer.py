"""``Buffer``: device memory with a shape and a dtype, for control over copies.

Passing a NumPy array to a kernel uploads it and copies it back on every call; a Buffer stays
on the device between calls and is copied only when asked (:meth:`Buffer.get`,
:meth:`Buffer.set`).

Where the device memory is host-visible (every buffer of this version: lavapipe, integrated
GPUs, discrete GPUs with resizable BAR), a Buffer is also an array without a copy:
``np.asarray(buf)`` and ``np.from_dlpack(buf)`` are NumPy views of the device memory itself
(``__array_interface__``, ``__dlpack__``), and ``buf[i]``, ``buf[2:5]``, ``buf[i] = v`` read
and write through such a view. A view keeps the buffer alive.
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from ._args import as_bytes, count_transfer, device_layout
from .errors import SizeError


def _little(dtype: np.dtype) -> np.dtype:
    """``dtype`` in little-endian byte order (the device's)."""
    return dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype


class Buffer:
    """Device memory holding an array of ``shape`` and ``dtype`` (C order, little-endian).

    Made by :meth:`Context.buffer` (a copy of an array) or :meth:`Context.zeros`. As a kernel
    argument it passes its device address; nothing is copied.
    """

    def __init__(self, native, shape: Tuple[int, ...], dtype: np.dtype, context_native=None):
        self._native = native
        # The native Context that made it (a view of it passed to a kernel of another
        # context is refused, as a Buffer is by the host API).
        self._context_native = context_native
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        #: Why :meth:`Context.asarray` copied an array into this buffer instead of sharing
        #: its memory (``None``: it was not made by such a copy).
        self.copy_reason: Optional[str] = None

    @property
    def imported(self) -> bool:
        """Whether the memory is a NumPy array's own, imported by :meth:`Context.asarray`
        without a copy (kernels and the array share it), rather than the device's."""
        return self._native.imported

    @property
    def address(self) -> int:
        """The device address a kernel's pointer parameter receives."""
        return self._native.address

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return self._native.nbytes

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d buffer")
        return self.shape[0]

    @property
    def host_visible(self) -> bool:
        """Whether the host sees the device memory itself (then views need no copy)."""
        return self._native.mapped_address is not None

    @property
    def __array_interface__(self) -> dict:
        """NumPy's array interface over the mapped device memory (``AttributeError`` when the
        memory is not host-visible, so that NumPy falls back to :meth:`__array__`)."""
        address = self._native.mapped_address
        if address is None:
            raise AttributeError("__array_interface__: the buffer's memory is not host-visible")
        dtype = _little(self.dtype)
        return {
            "version": 3,
            "shape": self.shape,
            "typestr": dtype.str,
            "descr": dtype.descr,
            "data": (address, False),
            "strides": None,
        }

    def view(self) -> np.ndarray:
        """A writable NumPy array over the device memory itself (no copy), of the buffer's
        shape and (little-endian) dtype; it keeps the buffer alive. Host reads and writes
        through it while a kernel on another thread, or a submitted stream, uses the buffer
        give unspecified values. ``BufferError`` when the memory is not host-visible."""
        if not self.host_visible:
            raise BufferError("the buffer's memory is not host-visible: use get() and set()")
        return np.asarray(self)

    def __array__(self, dtype=None, copy=None):
        if copy is not True and self.host_visible:
            array = np.asarray(self)  # through __array_interface__: a view
        elif copy is False:
            raise ValueError("the buffer's memory is not host-visible: it can only be copied")
        else:
            array = self.get()
        if dtype is None or np.dtype(dtype) == array.dtype:
            return array
        if copy is False:
            raise ValueError(f"a {self.dtype} buffer cannot be seen as {np.dtype(dtype)} without a copy")
        return array.astype(dtype)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The DLPack capsule of the mapped memory (a CPU device: the host address), for
        ``np.from_dlpack(buf)``, ``torch.from_dlpack(buf)``... No copy; ``BufferError`` when
        the memory is not host-visible."""
        view = self.view()
        kwargs = {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return view.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self) -> Tuple[int, int]:
        """``(1, 0)``: DLPack's CPU device (the memory is reached at a host address)."""
        if not self.host_visible:
            raise BufferError("the buffer's memory is not host-visible")
        return (1, 0)

    def __getitem__(self, index):
        """Elements read through a view of the memory (no copy of the whole buffer): a
        scalar for an element, a NumPy view for a slice (or a copy for fancy indexing, as
        NumPy does). Without host-visible memory, an element of a copy."""
        if self.host_visible:
            return np.asarray(self)[index]
        return self.get()[index]

    def __setitem__(self, index, value) -> None:
        """Writes elements through a view of the memory (read-modify-write of a copy when the
        memory is not host-visible)."""
        if self.host_visible:
            np.asarray(self)[index] = value
        else:
            array = self.get()
            array[index] = value
            self.set(array)

    def get(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """A copy of the contents as a new array (or into ``out``, of the same shape and dtype)."""
        if out is None:
            out = np.empty(self.shape, _little(self.dtype))
        elif out.shape != self.shape or out.dtype != self.dtype:
            raise SizeError(f"out is {out.dtype} {out.shape}, the buffer {self.dtype} {self.shape}")
        device = device_layout(out)
        self._native.read_into(as_bytes(device))
        count_transfer("download", self.nbytes)
        if device is not out:
            out[...] = device
        return out

    def set(self, values) -> None:
        """Overwrites the contents with ``values`` (converted to the dtype and broadcast to the
        shape)."""
        values = np.asarray(values, dtype=self.dtype)
        try:
            array = np.broadcast_to(values, self.shape)
        except ValueError:
            raise SizeError(
                f"{values.size} values of shape {values.shape} for a buffer of "
                f"{self.dtype} {self.shape} ({self.nbytes} bytes): give its shape or one that "
                "broadcasts to it"
            ) from None
        self._native.write(as_bytes(device_layout(array)))
        count_transfer("upload", self.nbytes)

    def __repr__(self) -> str:
        return f"<pisa_vk.Buffer {self.dtype} {self.shape} at {self.address:#x}>"
