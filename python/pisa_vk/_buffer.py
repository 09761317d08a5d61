"""``Buffer``: device memory with a shape and a dtype, for control over copies.

Passing a NumPy array to a kernel uploads it and copies it back on every call; a Buffer stays
on the device between calls and is copied only when asked (:meth:`Buffer.get`,
:meth:`Buffer.set`).
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from ._args import as_bytes, device_layout
from .errors import SizeError


class Buffer:
    """Device memory holding an array of ``shape`` and ``dtype`` (C order, little-endian).

    Made by :meth:`Context.buffer` (a copy of an array) or :meth:`Context.zeros`. As a kernel
    argument it passes its device address; nothing is copied.
    """

    def __init__(self, native, shape: Tuple[int, ...], dtype: np.dtype):
        self._native = native
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

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

    def get(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """A copy of the contents as a new array (or into ``out``, of the same shape and dtype)."""
        if out is None:
            little = self.dtype.newbyteorder("<") if self.dtype.byteorder == ">" else self.dtype
            out = np.empty(self.shape, little)
        elif out.shape != self.shape or out.dtype != self.dtype:
            raise SizeError(f"out is {out.dtype} {out.shape}, the buffer {self.dtype} {self.shape}")
        device = device_layout(out)
        self._native.read_into(as_bytes(device))
        if device is not out:
            out[...] = device
        return out

    def set(self, values) -> None:
        """Overwrites the contents with ``values`` (converted to the dtype and broadcast to the
        shape)."""
        array = np.broadcast_to(np.asarray(values, dtype=self.dtype), self.shape)
        self._native.write(as_bytes(device_layout(array)))

    def __array__(self, dtype=None, copy=None):
        array = self.get()
        return array if dtype is None else array.astype(dtype, copy=False)

    def __repr__(self) -> str:
        return f"<pisa_vk.Buffer {self.dtype} {self.shape} at {self.address:#x}>"
