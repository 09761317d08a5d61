"""A saxpy over large arrays from NumPy, two ways, with the copies each one makes counted
(``pisa_vk.transfer_stats``) and timed:

* plain arrays: ``saxpy(n, 256, a, In(x), y, n)`` uploads ``x`` and ``y`` and copies ``y``
  back on every call (three copies of ``n`` floats);
* device memory seen by NumPy: ``x`` and ``y`` made by ``ctx.zeros`` and filled through their
  views, then ``saxpy(n, 256, a, xb, yb, n)``; NumPy reads the result through the view: no
  copy at all (where the memory is host-visible: lavapipe, integrated GPUs, resizable BAR);
* NumPy's own arrays imported: ``xb, yb = ctx.asarray(x), ctx.asarray(y)`` wraps their
  memory without a copy (``VK_EXT_external_memory_host``), the kernel writes ``y`` itself.

``python zero_copy_saxpy.py --mb 256`` (the size of each array; ``--repeat`` calls each way).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import pisa_vk

SAXPY = Path(__file__).resolve().parents[2] / "examples" / "saxpy.pisa"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=256, help="megabytes per array")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n = args.mb * (1 << 20) // 4
    ctx = pisa_vk.Context()
    saxpy = ctx.load(SAXPY).kernel("saxpy")
    rng = np.random.default_rng(0)
    x = rng.integers(0, 1 << 10, n).astype(np.float32)
    y0 = rng.integers(0, 1 << 10, n).astype(np.float32)
    want = np.float32(2) * x + y0

    y = y0.copy()
    saxpy(n, 256, 2.0, pisa_vk.In(x), y, n)  # warm-up: pipeline
    times = []
    pisa_vk.transfer_stats(reset=True)
    for _ in range(args.repeat):
        y[...] = y0
        start = time.perf_counter()
        saxpy(n, 256, 2.0, pisa_vk.In(x), y, n)
        times.append(time.perf_counter() - start)
    assert np.array_equal(y, want)
    before = pisa_vk.transfer_stats(reset=True)
    report("NumPy arrays", before, args.repeat, min(times))

    xb, yb = ctx.zeros(n, np.float32), ctx.zeros(n, np.float32)
    xv, yv = xb.view(), yb.view()
    xv[...] = x
    times = []
    pisa_vk.transfer_stats(reset=True)
    for _ in range(args.repeat):
        yv[...] = y0
        start = time.perf_counter()
        saxpy(n, 256, 2.0, xb, yb, n)
        times.append(time.perf_counter() - start)
    assert np.array_equal(yv, want)
    after = pisa_vk.transfer_stats(reset=True)
    report("device memory viewed by NumPy", after, args.repeat, min(times))
    gpu = saxpy(n, 256, 2.0, xb, yb, n, timed=True)
    print(f"  the kernel alone (timed=True): {gpu * 1e3:.1f} ms")
    del xb, yb, xv, yv

    y[...] = y0
    pisa_vk.transfer_stats(reset=True)
    start = time.perf_counter()
    xi, yi = ctx.asarray(x), ctx.asarray(y)
    imported = time.perf_counter() - start
    if not (xi.imported and yi.imported):
        print(f"NumPy arrays imported: not on this device ({xi.copy_reason or yi.copy_reason})")
        return
    times = []
    for _ in range(args.repeat):
        y[...] = y0
        start = time.perf_counter()
        saxpy(n, 256, 2.0, xi, yi, n)
        times.append(time.perf_counter() - start)
    assert np.array_equal(y, want)  # the kernel wrote NumPy's own memory
    report("NumPy arrays imported (ctx.asarray)", pisa_vk.transfer_stats(reset=True), args.repeat, min(times))
    print(f"  importing both arrays: {imported * 1e3:.2f} ms")


def report(what: str, stats: dict, calls: int, best: float) -> None:
    copies = stats["uploads"] + stats["downloads"]
    megabytes = (stats["upload_bytes"] + stats["download_bytes"]) / (1 << 20)
    print(f"{what}: {copies // calls} copies per call ({megabytes / calls:.0f} MB: "
          f"{stats['uploads'] // calls} up, {stats['downloads'] // calls} down), "
          f"best call {best * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
