"""Buffers as arrays without a copy (host-visible memory: lavapipe, integrated GPUs,
resizable BAR): NumPy views, DLPack, indexing, views as kernel arguments, and the copies a
call makes, counted."""

import numpy as np
import pytest

import pisa_vk

# dst[i] = src[i] * 3 + i (u32, wrapping) for i < n: a kernel that reads one buffer and
# writes another, with a result no copy of the input could give.
TRIPLE = """\
.version 0.1;
.target 100;
.kernel @triple(.param[8] %src, .param[8] %dst, .param[4] %n) {
  .reg .64b %ps, %pd, %off;
  .reg .32b %i, %g, %s, %l, %count, %v;
  .pred %done;
  ld.param.64b %ps, [%src];
  ld.param.64b %pd, [%dst];
  ld.param.32b %count, [%n];
  mov.32b %g, %groupid.x;
  mov.32b %s, %enqueuedlocalsize.x;
  mov.32b %l, %localid.x;
  umad.32b %i, %g, %s, %l;
  ucmp.ge.32b %done, %i, %count;
  return.cond %done;
  umul.full.32b %off, %i, 4;
  iadd.64b %ps, %ps, %off;
  iadd.64b %pd, %pd, %off;
  ld.global.32b %v, [%ps];
  umad.32b %v, %v, 3, %i;
  st.global.32b [%pd], %v;
  return;
}
"""


@pytest.fixture(scope="module")
def triple(ctx):
    return ctx.load(TRIPLE).kernel("triple")


def expected(src):
    src = np.asarray(src, np.uint64)
    return ((src * 3 + np.arange(src.size, dtype=np.uint64)) % 2**32).astype(np.uint32)


def test_buffers_are_host_visible_on_this_device(ctx):
    # Every buffer of this runtime version is mapped; the rest of the file relies on it.
    assert ctx.zeros(4, np.uint32).host_visible


def test_numpy_view_and_buffer_share_memory_both_ways(ctx, triple):
    buf = ctx.zeros(64, np.uint32)
    view = np.asarray(buf)
    assert view.__array_interface__["data"][0] == buf._native.mapped_address
    assert view.flags.writeable and view.base is buf
    # Written through the view, read by the device and by Buffer.get.
    view[:] = np.arange(64, dtype=np.uint32) * 7 + 2**31
    assert np.array_equal(buf.get(), view)
    out = ctx.zeros(64, np.uint32)
    triple(64, 16, buf, out, 64)
    # Written by the device, seen through views made before the dispatch (no copy back).
    out_view = out.view()
    assert np.array_equal(out_view, expected(view))
    # Written by Buffer.set, seen through the old view.
    buf.set(5)
    assert (view == 5).all()


def test_dlpack_shares_memory(ctx):
    buf = ctx.buffer(np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4))
    assert buf.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(buf)
    assert a.shape == (3, 4) and a.dtype == np.float32
    assert np.shares_memory(a, buf.view())
    a[2, 3] = -8.5
    assert buf.get()[2, 3] == -8.5
    buf[0, 0] = 42
    assert a[0, 0] == 42
    del buf  # the DLPack array keeps the memory alive
    assert a[2, 3] == -8.5


def test_indexing_reads_and_writes_through_a_view(ctx):
    buf = ctx.buffer(np.arange(10, dtype=np.int16))
    assert buf[3] == 3 and isinstance(buf[3], np.int16)
    assert buf[-1] == 9
    part = buf[2:5]
    assert np.array_equal(part, [2, 3, 4]) and np.shares_memory(part, buf.view())
    part[0] = -1
    buf[9] = 300
    assert np.array_equal(buf.get(), [0, 1, -1, 3, 4, 5, 6, 7, 8, 300])
    assert list(buf[[1, 9]]) == [1, 300]
    with pytest.raises(IndexError):
        buf[10]
    assert list(buf)[:3] == [0, 1, -1]


def test_copy_true_and_another_dtype_copy(ctx):
    buf = ctx.buffer(np.arange(4, dtype=np.uint32))
    copied = np.array(buf, copy=True)
    assert not np.shares_memory(copied, buf.view())
    assert np.array_equal(np.asarray(buf, dtype=np.float64), [0.0, 1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        np.array(buf, dtype=np.float64, copy=False)


def test_views_as_kernel_arguments_are_not_copied(ctx, triple):
    src = ctx.zeros(100, np.uint32)
    dst = ctx.zeros(100, np.uint32)
    s, d = src.view(), dst.view()
    s[:] = np.arange(100, dtype=np.uint32) * 11
    pisa_vk.transfer_stats(reset=True)
    # A slice of a view passes the address of its first element.
    triple(50, 16, s[50:], d[10:], 50)
    assert pisa_vk.transfer_stats() == {"uploads": 0, "upload_bytes": 0, "downloads": 0, "download_bytes": 0}
    want = np.zeros(100, np.uint32)
    want[10:60] = expected(s[50:])
    assert np.array_equal(dst.get(), want)


def test_plain_arrays_are_copied_and_counted(ctx, triple):
    src = np.arange(1000, dtype=np.uint32)
    dst = np.zeros(1000, np.uint32)
    pisa_vk.transfer_stats(reset=True)
    triple(1000, 64, pisa_vk.In(src), dst, 1000)
    assert np.array_equal(dst, expected(src))
    # In: uploaded only; a writable array: uploaded and copied back.
    assert pisa_vk.transfer_stats() == {"uploads": 2, "upload_bytes": 8000, "downloads": 1, "download_bytes": 4000}
    triple(1000, 64, pisa_vk.In(src), pisa_vk.Out(dst), 1000)
    assert pisa_vk.transfer_stats(reset=True)["uploads"] == 3


def test_a_view_of_another_contexts_buffer_is_refused(ctx, triple):
    other = pisa_vk.Context()
    foreign = other.zeros(8, np.uint32)
    with pytest.raises(pisa_vk.ArgumentError, match="another context"):
        triple(8, 8, foreign.view(), ctx.zeros(8, np.uint32), 8)


def test_asarray_wraps_views_and_copies_the_rest(ctx):
    buf = ctx.zeros((4, 4), np.float32)
    assert ctx.asarray(buf) is buf
    assert ctx.asarray(buf.view()) is buf
    as_bytes = ctx.asarray(buf.view().view(np.uint8))
    assert as_bytes.address == buf.address and as_bytes.dtype == np.uint8 and as_bytes.shape == (4, 16)
    host = np.arange(6, dtype=np.float64)[::2]  # not contiguous: copied
    copied = ctx.asarray(host)
    assert copied.address != buf.address and not copied.imported
    assert np.array_equal(copied.get(), host) and not np.shares_memory(copied.view(), host)
    assert "C-contiguous" in copied.copy_reason
    # A part of a buffer's memory is not the buffer: a copy.
    part = ctx.asarray(buf.view()[1:])
    assert part.address != buf.address and part.shape == (3, 4)
    assert part.copy_reason == "a view of part of a Buffer"


def test_asarray_imports_numpy_memory_shared_both_ways(ctx, triple):
    # lavapipe offers VK_EXT_external_memory_host (4096-byte pages)
    assert ctx.host_import_alignment == 4096
    src = np.arange(1000, dtype=np.uint32)
    dst = np.zeros(1000, np.uint32)
    bsrc, bdst = ctx.asarray(src), ctx.asarray(dst)
    assert bsrc.imported and bdst.imported and bsrc.copy_reason is None
    assert np.shares_memory(bsrc.view(), src) and bdst.view().ctypes.data == dst.ctypes.data
    pisa_vk.transfer_stats(reset=True)
    # the kernel writes the buffer; the NumPy array shows it, with no copy
    triple(1000, 64, bsrc, bdst, 1000)
    assert np.array_equal(dst, expected(src))
    # NumPy writes the array; the kernel reads it
    src[:] = np.arange(1000, dtype=np.uint32)[::-1] * 5
    triple(1000, 64, bsrc, bdst, 1000)
    assert np.array_equal(dst, expected(src))
    assert pisa_vk.transfer_stats() == {"uploads": 0, "upload_bytes": 0, "downloads": 0, "download_bytes": 0}
    # a large array (malloc places it 16 bytes into a page, below lavapipe's 64-byte buffer
    # alignment) is imported too, and so is a 2-D one; streams reach the memory as well
    big = np.zeros((512, 1024), np.uint32)
    bbig = ctx.asarray(big)
    assert bbig.imported and bbig.shape == (512, 1024)
    s = ctx.stream()
    s.fill(bbig, 9, start=5, stop=7)
    s.launch(triple, 1000, 64, bsrc, bbig, 1000)
    s.submit().wait()
    assert np.array_equal(big.reshape(-1)[:1000], expected(src)) and big.reshape(-1)[1000] == 0


def test_an_imported_buffer_keeps_its_array_alive(ctx, triple):
    import gc
    import weakref

    class Owned(np.ndarray):
        pass  # an ndarray subclass can be weakly referenced

    host = np.arange(256, dtype=np.uint32).view(Owned)
    alive = weakref.ref(host)
    buf = ctx.asarray(host)
    assert buf.imported
    del host
    gc.collect()
    assert alive() is not None, "the buffer holds the array"
    out = ctx.zeros(256, np.uint32)
    triple(256, 64, buf, out, 256)
    assert np.array_equal(out.get(), expected(np.arange(256)))
    del buf
    gc.collect()
    assert alive() is None, "the array goes with the buffer"


def test_asarray_copies_what_it_cannot_import_and_says_why(ctx):
    base = np.zeros(64, np.uint8)
    cases = [
        (np.arange(8, dtype=np.float32)[::2], "C-contiguous"),
        (np.frombuffer(b"\0" * 16, np.uint32), "read-only"),
        (np.arange(4, dtype=">u4"), "big-endian"),
        (np.zeros(0, np.float32), "empty"),
        (base[4:36].view(np.uint32), "not a multiple of 16"),  # 4 bytes past an aligned start
    ]
    for array, why in cases:
        buf = ctx.asarray(array)
        assert not buf.imported and why in buf.copy_reason, (why, buf.copy_reason)
        assert np.array_equal(buf.get(), array) and buf.get().shape == array.shape
        with pytest.raises(ValueError, match=why):
            ctx.asarray(array, copy=False)
    # copy=True copies what could be shared
    host = np.ones(16, np.float32)
    copied = ctx.asarray(host, copy=True)
    assert not copied.imported and copied.copy_reason is None
    assert not np.shares_memory(copied.view(), host)
    shared = ctx.asarray(host, copy=False)
    assert shared.imported
    # the same memory imported twice would be two buffers at one address: the second copies
    again = ctx.asarray(host)
    assert "already" in again.copy_reason


def test_timed_call_returns_gpu_seconds_and_copies_back(ctx, triple):
    src = np.arange(4096, dtype=np.uint32)
    dst = np.zeros(4096, np.uint32)
    seconds = triple(4096, 64, pisa_vk.In(src), dst, 4096, timed=True)
    assert isinstance(seconds, float) and 0 < seconds < 10
    assert np.array_equal(dst, expected(src))
    assert triple(4096, 64, pisa_vk.In(src), dst, 4096) is None
