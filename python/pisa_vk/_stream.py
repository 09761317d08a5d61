"""``Stream``: launches, writes, reads, copies and fills recorded in order and submitted as one
batch without waiting; ``Submission`` to poll or wait for it; ``Read`` for what a read brings
back (the host API's ``Context::stream``, ``Submission``, ``Completed``).

Commands run in the order they are recorded, each seeing the writes of those before it. A
stream submits once. Its buffers, modules and arrays stay alive until the submission has
finished, even when the Python objects are dropped earlier.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from . import _log
from ._args import as_bytes, count_transfer, device_layout
from ._buffer import Buffer
from ._module import Kernel, Size, Symbol
from .errors import ArgumentError, SizeError, StreamError


def _span(buf: Buffer, start: int, stop: Optional[int], what: str) -> Tuple[int, int]:
    """The element range ``start:stop`` of ``buf`` (``stop`` ``None``: to the end), checked
    to be inside it."""
    if not isinstance(buf, Buffer):
        raise ArgumentError(f"{what} takes a pisa_vk.Buffer, not {type(buf).__name__}")
    start = operator.index(start)
    stop = buf.size if stop is None else operator.index(stop)
    if not 0 <= start <= stop <= buf.size:
        raise SizeError(f"{what}: elements {start}..{stop} are not inside a buffer of {buf.size}")
    return start, stop


def _store(raw: bytes, array: np.ndarray, device: np.ndarray) -> None:
    """Copies the device bytes ``raw`` of ``array`` (whose device layout is ``device``) in."""
    as_bytes(device)[...] = np.frombuffer(raw, np.uint8)
    count_transfer("download", len(raw))
    if device is not array:
        array[...] = device


class Read:
    """The result of :meth:`Stream.read`: its values once the submission has been waited for
    (:meth:`get`)."""

    def __init__(self, index: int, shape: Tuple[int, ...], dtype: np.dtype):
        self._index = index
        self._submission: Optional[Submission] = None
        self.shape = shape
        self.dtype = dtype

    def get(self) -> np.ndarray:
        """The values read, as a new array (the buffer's dtype; its shape for a whole read,
        1-D for a range). Raises :class:`StreamError` before the submission was waited for."""
        if self._submission is None:
            raise StreamError("the stream of this read has not been submitted")
        raw = self._submission._native.read(self._index)
        little = self.dtype.newbyteorder("<") if self.dtype.byteorder == ">" else self.dtype
        return np.frombuffer(raw, little).reshape(self.shape).copy()

    def __repr__(self) -> str:
        return f"<pisa_vk.Read {self.dtype} {self.shape}>"


class Stream:
    """Commands recorded for one submission; made by :meth:`Context.stream`.

    Recording checks everything it can (argument sizes, ranges, the launch geometry, building
    the kernel's pipeline) and raises then, recording nothing. :meth:`submit` sends the batch
    to the device and returns at once.
    """

    def __init__(self, context, timed: bool):
        self.context = context
        self.timed = bool(timed)
        self._native = context._native.stream(self.timed)
        self._reads: List[Read] = []
        # Run after a successful wait: copy results back into array arguments of launches.
        self._after: List[Callable[[Any], None]] = []

    def __len__(self) -> int:
        """How many commands are recorded (0 once submitted)."""
        return len(self._native)

    def launch(self, kernel: Kernel, grid: Size, block: Size, *args: Any, offset: Size = 0) -> "Stream":
        """Records a launch of ``kernel``, with the arguments of a call (``kernel(grid, block,
        *args, offset=...)``). A NumPy array argument is uploaded now into a fresh device
        buffer; when the kernel may write it (not read-only, not ``In``), a read of that
        buffer is recorded right after the launch (one more command) and copied into the array
        by :meth:`Submission.wait`."""
        if not isinstance(kernel, Kernel):
            raise ArgumentError(f"Stream.launch takes a pisa_vk.Kernel, not {type(kernel).__name__}")
        launch, staging = kernel._encode(grid, block, args, offset)
        keep = staging.buffers()
        keep += [a._native for a in args if isinstance(a, Buffer)]
        keep += [a.module._native for a in args if isinstance(a, Symbol)]
        self._native.launch(kernel.module._native, kernel.name, *launch, keep)
        for array, device, native in staging.downloads():
            index = self._native.read(native, 0, native.nbytes)
            self._after.append(lambda sub, i=index, a=array, d=device: _store(sub._native.read(i), a, d))
        return self

    def write(self, buf: Buffer, values, start: Optional[int] = None) -> "Stream":
        """Records a write of ``values`` (copied now): converted to the buffer's dtype and
        broadcast to its shape, or, with ``start``, flattened into the elements from
        ``start``."""
        if start is None:
            _span(buf, 0, None, "Stream.write")
            array = np.broadcast_to(np.asarray(values, dtype=buf.dtype), buf.shape)
            start = 0
        else:
            array = np.asarray(values, dtype=buf.dtype).reshape(-1)
            _span(buf, start, start + array.size, "Stream.write")
        self._native.write(buf._native, start * buf.dtype.itemsize, as_bytes(device_layout(array)))
        return self

    def read(self, buf: Buffer, start: int = 0, stop: Optional[int] = None) -> Read:
        """Records a read of the elements ``start:stop`` of ``buf`` (all of it by default),
        taken in stream order; its values come from :meth:`Read.get` after the wait."""
        start, stop = _span(buf, start, stop, "Stream.read")
        size = buf.dtype.itemsize
        index = self._native.read(buf._native, start * size, stop * size)
        whole = start == 0 and stop == buf.size
        read = Read(index, buf.shape if whole else (stop - start,), buf.dtype)
        self._reads.append(read)
        return read

    def copy(self, dst: Buffer, src: Buffer, *, src_start: int = 0, src_stop: Optional[int] = None,
             dst_start: int = 0) -> "Stream":
        """Records a device copy of the elements ``src_start:src_stop`` of ``src`` (all of it
        by default) into ``dst`` from element ``dst_start``. Both have the same dtype; a whole
        copy needs buffers of the same size."""
        if not isinstance(dst, Buffer) or not isinstance(src, Buffer):
            raise ArgumentError("Stream.copy takes two pisa_vk.Buffers")
        if dst.dtype != src.dtype:
            raise ArgumentError(f"Stream.copy from a {src.dtype} buffer into a {dst.dtype} one")
        start, stop = _span(src, src_start, src_stop, "Stream.copy from")
        if (start, src_stop, dst_start) == (0, None, 0) and src.size != dst.size:
            raise SizeError(f"Stream.copy of {src.size} elements into a buffer of {dst.size}")
        _span(dst, dst_start, dst_start + stop - start, "Stream.copy into")
        size = src.dtype.itemsize
        self._native.copy(src._native, start * size, stop * size, dst._native, dst_start * size)
        return self

    def fill(self, buf: Buffer, value, start: int = 0, stop: Optional[int] = None) -> "Stream":
        """Records setting the elements ``start:stop`` of ``buf`` (all by default) to
        ``value`` (converted to the dtype): a device fill when the value is one repeated byte,
        else a write of the repeated value (one command either way)."""
        start, stop = _span(buf, start, stop, "Stream.fill")
        item = device_layout(np.asarray(value, dtype=buf.dtype).reshape(()))
        size = buf.dtype.itemsize
        self._native.fill(buf._native, start * size, stop * size, item.tobytes())
        return self

    def submit(self) -> "Submission":
        """Submits the recorded commands and returns at once. Raises :class:`StreamError` when
        the stream was submitted before, :class:`DeviceBusy` while a dispatch that timed out
        still runs."""
        _log.sync()
        try:
            sub = Submission(self._native.submit(), self.timed, self._after)
        finally:
            _log.flush()
        for read in self._reads:
            read._submission = sub
        return sub

    def __repr__(self) -> str:
        return f"<pisa_vk.Stream commands={len(self)} timed={self.timed}>"


class Submission:
    """A submitted :class:`Stream`: :meth:`done` polls it, :meth:`wait` waits for it (with the
    GIL released); then its :class:`Read`\\ s have values and, for a timed stream,
    :attr:`command_times` the GPU time of each command. Dropping it unwaited waits for the
    device (at most ``PISA_VK_TIMEOUT``) and discards errors."""

    def __init__(self, native, timed: bool, after: List[Callable[[Any], None]]):
        self._native = native
        self.timed = timed
        self._after = after

    def done(self) -> bool:
        """Whether the device has finished it (a look at its fence, never a wait)."""
        return self._native.done()

    def wait(self) -> "Submission":
        """Waits for it (at most ``PISA_VK_TIMEOUT`` seconds: :class:`KernelTimeout`) and copies
        results into the array arguments of its launches; raises the error of any command
        (again on a later call). Returns the submission itself."""
        _log.sync()
        try:
            self._native.wait()
        finally:
            _log.flush()
        after, self._after = self._after, []
        for copy_in in after:
            copy_in(self)
        return self

    @property
    def command_times(self) -> Optional[List[float]]:
        """For a timed stream, the GPU time in seconds of each command in recording order
        (a launch whose grid has partial edge work-groups is one command); ``None`` for an
        untimed one. Raises :class:`StreamError` before :meth:`wait`."""
        return self._native.command_times()

    def __repr__(self) -> str:
        return f"<pisa_vk.Submission done={self.done()}>"
