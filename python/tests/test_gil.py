"""The GIL is released while a kernel runs: another Python thread makes progress during a
long dispatch. (A dispatch holding the GIL would freeze the other thread for its whole
length: no tick could fall inside it.)"""

import threading
import time

import numpy as np
from conftest import lcg_power


def test_another_thread_runs_during_a_dispatch(spin):
    n = spin.iterations(0.6)
    out = np.zeros(1, np.uint32)
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
        spin.kernel(1, 1, out, n)
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
