"""The copies a saxpy from NumPy makes, counted with ``pisa_vk.transfer_stats``: with the
argument kinds the translator infers (``x`` is only read through: not copied back) against
the behaviour before them, which ``pisa_vk.raw_address`` keeps (every writable array
uploaded and copied back). spec-notes §90; the figures are in docs/python.md.

``python saxpy_copies.py --mb 256`` (the data in all: two float32 arrays of half that each).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import pisa_vk

SAXPY = Path(__file__).resolve().parents[2] / "examples" / "saxpy.pisa"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=256, help="megabytes of data (x and y)")
    args = parser.parse_args()
    n = args.mb * (1 << 20) // 8
    ctx = pisa_vk.Context()
    saxpy = ctx.load(SAXPY).kernel("saxpy")
    x = np.arange(n, dtype=np.float32) % 1024
    y0 = np.ones(n, np.float32)
    want = np.float32(2) * x + y0
    for label, wrap in [
        ("before (raw_address: copied both ways)", pisa_vk.raw_address),
        ("with argument kinds", lambda a: a),
    ]:
        y = y0.copy()
        pisa_vk.transfer_stats(reset=True)
        saxpy(n, 256, 2.0, wrap(x), wrap(y), n)
        stats = pisa_vk.transfer_stats(reset=True)
        assert np.array_equal(y, want)
        total = stats["upload_bytes"] + stats["download_bytes"]
        print(
            f"{label}: {stats['uploads']} uploads ({stats['upload_bytes'] >> 20} MiB), "
            f"{stats['downloads']} downloads ({stats['download_bytes'] >> 20} MiB), "
            f"{total >> 20} MiB copied"
        )


if __name__ == "__main__":
    main()
