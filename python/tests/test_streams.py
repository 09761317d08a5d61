"""Streams: commands recorded in order and submitted as one batch without waiting, against
values NumPy computes (and conftest.lcg_power for the spin kernel)."""

import threading
import time

import numpy as np
import pytest
from conftest import lcg_power

import pisa_vk


def fused_saxpy(alpha, x, y):
    """alpha * x + y in float32 with one rounding (PISA's fmad is fused, docs/spec-notes.md
    §27): the float32 product is exact in float64."""
    with np.errstate(invalid="ignore", over="ignore"):
        return (np.float64(alpha) * x.astype(np.float64) + y).astype(np.float32)


@pytest.fixture(scope="module")
def saxpy(ctx, examples):
    return ctx.load(examples / "saxpy.pisa").kernel("saxpy")


def test_write_two_dependent_launches_and_read_in_one_submission(ctx, saxpy):
    n = 1000  # not a multiple of the block: partial edge work-group
    rng = np.random.default_rng(7)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    x[:4] = [0.0, -0.0, np.inf, np.nan]
    z0 = np.full(n, 0.25, np.float32)
    bx, by, bz = ctx.zeros(n), ctx.zeros(n), ctx.buffer(z0)
    s = ctx.stream()
    s.write(bx, x).write(by, y)
    s.launch(saxpy, n, 64, np.float32(1.5), bx, by, n)  # y = 1.5 x + y
    first = s.read(by)  # read between the launches: sees the first only
    s.launch(saxpy, n, 64, -2.0, by, bz, n)  # z = -2 y + z, needs the first launch's y
    second = s.read(bz, 10, 20)
    assert len(s) == 6
    sub = s.submit()
    assert sub.wait() is sub
    y1 = fused_saxpy(np.float32(1.5), x, y)
    z1 = fused_saxpy(np.float32(-2.0), y1, z0)
    np.testing.assert_array_equal(first.get(), y1)
    assert first.get().shape == (n,) and first.get().dtype == np.float32
    np.testing.assert_array_equal(second.get(), z1[10:20])
    np.testing.assert_array_equal(bz.get(), z1)  # the buffer holds the final values too
    assert sub.done() and sub.command_times is None


def test_numpy_array_arguments_are_copied_back_at_wait(ctx, saxpy):
    x = np.arange(10, dtype=np.float32)
    y = np.full(10, 0.5, np.float32)
    s = ctx.stream()
    s.launch(saxpy, 10, 4, 3.0, pisa_vk.In(x), y, 10)
    assert len(s) == 2  # the launch and the read of y (x is In: not read back)
    sub = s.submit()
    sub.wait()
    np.testing.assert_array_equal(y, 3 * np.arange(10, dtype=np.float32) + 0.5)


def test_copy_and_fill_with_ranges(ctx):
    src = ctx.buffer(np.arange(16, dtype=np.int32) - 8)
    dst = ctx.zeros(16, np.int32)
    halves = ctx.zeros((2, 8), np.uint16)
    s = ctx.stream()
    s.fill(dst, -1)  # one repeated byte: a device fill
    s.copy(dst, src, src_start=2, src_stop=6, dst_start=10)
    s.fill(dst, 0x12345678, 0, 3)  # not one repeated byte: a write
    s.fill(halves, 0xBEEF, 5)
    whole = s.read(dst)
    s.copy(dst, src)  # a whole copy after the read: the read saw the state before it
    s.write(dst, [7, 8], start=14)
    after = s.read(dst)
    s.submit().wait()
    expected = np.full(16, -1, np.int32)
    expected[10:14] = np.arange(2, 6) - 8
    expected[0:3] = 0x12345678
    np.testing.assert_array_equal(whole.get(), expected)
    np.testing.assert_array_equal(after.get(), np.r_[np.arange(14) - 8, 7, 8].astype(np.int32))
    np.testing.assert_array_equal(halves.get().reshape(-1), np.where(np.arange(16) >= 5, 0xBEEF, 0))
    assert halves.get().shape == (2, 8)


def test_poll_then_wait_with_the_gil_released(ctx, spin):
    n = spin.iterations(0.4)
    out = ctx.zeros(1, np.uint32)
    s = ctx.stream()
    s.launch(spin.kernel, 1, 1, out, n)
    value = s.read(out)
    start = time.perf_counter()
    sub = s.submit()
    submitted = time.perf_counter() - start
    assert not sub.done(), "a 0.4 s kernel finished before the first poll"
    with pytest.raises(pisa_vk.StreamError):
        value.get()  # not waited for yet
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    thread = threading.Thread(target=ticker)
    thread.start()
    try:
        wait_start = time.perf_counter()
        sub.wait()
        wait_end = time.perf_counter()
    finally:
        stop.set()
        thread.join()
    assert submitted < (wait_end - start) / 2, "submit() waited for the kernel"
    assert sub.done()
    assert value.get()[0] == lcg_power(n)
    took = wait_end - wait_start
    lo, hi = wait_start + took / 4, wait_end - took / 4
    inside = sum(lo <= t <= hi for t in ticks)
    assert took > 0.1 and inside > 100, f"{inside} ticks of another thread during {took:.3f} s of wait"


def test_timed_stream_has_one_time_per_command(ctx, saxpy):
    n = 256
    x = np.linspace(-1, 1, n, dtype=np.float32)
    bx, by = ctx.buffer(x), ctx.zeros(n)
    try:
        s = ctx.stream(timed=True)
    except pisa_vk.DeviceError as e:
        pytest.skip(f"SKIPPED: the device's queue has no timestamps ({e})")
    s.fill(by, 1.0)
    s.launch(saxpy, n, 64, 2.0, bx, by, n)
    s.copy(bx, by)
    r = s.read(bx)
    sub = s.submit().wait()
    times = sub.command_times
    assert len(times) == 4
    assert all(isinstance(t, float) and t >= 0 for t in times), times
    np.testing.assert_array_equal(r.get(), fused_saxpy(np.float32(2.0), x, np.ones(n, np.float32)))


def test_errors(ctx, saxpy):
    buf = ctx.zeros(8)
    other = ctx.zeros(8, np.int32)
    s = ctx.stream()
    with pytest.raises(pisa_vk.ArgumentError):
        s.launch(saxpy, 8, 4, 1.0, buf, 8)  # one argument short
    with pytest.raises(pisa_vk.SizeError):
        s.read(buf, 4, 9)
    with pytest.raises(pisa_vk.SizeError):
        s.write(buf, np.zeros(3), start=6)
    with pytest.raises(pisa_vk.ArgumentError):
        s.copy(other, buf)
    with pytest.raises(pisa_vk.LaunchError):
        s.launch(saxpy, 8, 0, 1.0, buf, buf, 8)
    with pytest.raises(pisa_vk.LaunchError):  # found by the host API: too big a work-group
        s.launch(saxpy, 8, ctx.device["max_workgroup_invocations"] + 1, 1.0, buf, buf, 8)
    assert len(s) == 0  # a failed record records nothing
    s.write(buf, 1.0)
    sub = s.submit()
    assert sub.wait().command_times is None
    with pytest.raises(pisa_vk.StreamError):
        s.submit()  # a stream submits once
    with pytest.raises(pisa_vk.StreamError):
        s.fill(buf, 0)  # and records nothing after
    np.testing.assert_array_equal(buf.get(), np.ones(8, np.float32))
