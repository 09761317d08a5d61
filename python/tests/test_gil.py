"""The GIL is released while a kernel runs: another Python thread makes progress during a
long dispatch. (A dispatch holding the GIL would freeze the other thread for its whole
length: no tick could fall inside it.)"""

import threading
import time

import numpy as np

A, C, M = 1664525, 1013904223, 2**32


def lcg_power(n: int, x: int = 1) -> int:
    """f^n(x) for f(x) = A x + C mod 2^32, by squaring the affine map (independent of the
    kernel's loop)."""
    a, c, pa, pc = A, C, 1, 0
    while n:
        if n & 1:
            pa, pc = (a * pa) % M, (a * pc + c) % M
        a, c = (a * a) % M, (a * c + c) % M
        n >>= 1
    return (pa * x + pc) % M


def test_another_thread_runs_during_a_dispatch(ctx, kernels):
    spin = ctx.load(kernels / "spin.pisa").kernel("spin")
    out = np.zeros(1, np.uint32)

    # Calibrate: enough iterations for a dispatch of about 0.6 s on this device.
    n = 1 << 20
    while True:
        start = time.perf_counter()
        spin(1, 1, out, n)
        took = time.perf_counter() - start
        assert out[0] == lcg_power(n)
        if took > 0.05 or n >= 1 << 31:
            break
        n <<= 2
    n = max(1, min(M - 1, int(n * 0.6 / max(took, 1e-6))))

    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())  # pure Python: needs the GIL for every tick

    thread = threading.Thread(target=ticker)
    thread.start()
    try:
        time.sleep(0.05)
        start = time.perf_counter()
        spin(1, 1, out, n)
        end = time.perf_counter()
    finally:
        stop.set()
        thread.join()
    assert out[0] == lcg_power(n)  # the kernel really ran its n iterations
    took = end - start
    assert took > 0.1, f"the dispatch took only {took:.3f} s: too short to tell"
    # ticks in the middle half of the dispatch: none if it held the GIL
    lo, hi = start + took / 4, end - took / 4
    inside = sum(lo <= t <= hi for t in ticks)
    assert inside > 100, f"{inside} ticks of the other thread during {took:.3f} s of dispatch"
