"""Ctrl-C stops a running kernel (docs/spec-notes.md §91): SIGINT while a call or a wait runs
raises KeyboardInterrupt within a second, the kernel is cancelled on the device (its loop
checks a cancel word: kernels of a checked context have the check; it is off by default for
its cost, docs/performance.md), and the context works at once. Before, Ctrl-C was seen only
when the kernel ended (for an endless one, after the 60 s timeout)."""

import os
import signal
import threading
import time

import numpy as np
import pytest
from conftest import lcg_power

import pisa_vk


def interrupt_after(seconds: float) -> dict:
    """Sends SIGINT to this process after `seconds` (from a timer thread); the returned
    dict gets the time it was sent."""
    sent = {}

    def fire():
        sent["at"] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(seconds, fire).start()
    return sent


@pytest.fixture(autouse=True)
def sigint_raises():
    """SIGINT raises KeyboardInterrupt during these tests, also in a process started with
    SIGINT ignored (a background job of a non-interactive shell inherits SIG_IGN)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.fixture(scope="module")
def checked_spin(kernels):
    """kernels/spin.pisa in a checked context: its loop checks the cancel word."""
    cctx = pisa_vk.Context(checked=True)
    cctx.validation_messages()
    return cctx, cctx.load(kernels / "spin.pisa").kernel("spin")


LONG = 0xFFFFFFFF  # iterations: minutes of work, far past the tests


def test_ctrl_c_during_a_call_stops_the_kernel_within_a_second(checked_spin):
    _, spin = checked_spin
    out = np.zeros(1, np.uint32)
    n = LONG
    sent = interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        spin(1, 1, out, n)
    took = time.perf_counter() - sent["at"]
    assert took < 1.0, took
    # The context works at once, and the kernel computes as before.
    start = time.perf_counter()
    spin(1, 1, out, 1000)
    assert time.perf_counter() - start < 1.0
    assert out[0] == lcg_power(1000)


def test_ctrl_c_during_a_wait_stops_the_submission_within_a_second(checked_spin):
    ctx, spin = checked_spin
    out = ctx.zeros(1, np.uint32)
    s = ctx.stream()
    s.launch(spin, 1, 1, out, LONG)
    sub = s.submit()
    sent = interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        sub.wait()
    took = time.perf_counter() - sent["at"]
    assert took < 1.0, took
    # The submission stays cancelled; the context works at once.
    with pytest.raises(pisa_vk.StreamError, match="cancelled"):
        sub.wait()
    host = np.zeros(1, np.uint32)
    spin(1, 1, host, 77)
    assert host[0] == lcg_power(77)
