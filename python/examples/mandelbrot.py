"""The Mandelbrot set, computed by a PISA kernel and plotted with matplotlib.

Run it as a script (``python mandelbrot.py``, ``--help`` for options) or in Jupyter
(``%run mandelbrot.py``, or paste it into a cell and call ``show(mandelbrot())``). Without
matplotlib it writes the image as a PNG with a tiny built-in writer instead.

The kernel runs one work-item per pixel on a 2-D NDRange: ``grid = (width, height)`` in
work-items, work-groups of 16 x 16 (pisa_vk's grid counts work-items, as OpenCL's NDRange,
not work-groups).
"""

from __future__ import annotations

import argparse
import struct
import zlib
from pathlib import Path

import numpy as np

import pisa_vk

KERNEL = """\
// Mandelbrot iteration counts: out[y*w + x] = the number of steps z -> z^2 + c (float32,
// z0 = 0) before |z|^2 > 4, at most max_iter, for c = (x0 + x*dx, y0 + y*dy).
// One work-item per pixel of a 2-D NDRange (x, y).
.version 0.1;
.target 100;

.kernel @mandelbrot(.param[8] %out, .param[4] %w, .param[4] %h, .param[4] %x0, .param[4] %y0,
                    .param[4] %dx, .param[4] %dy, .param[4] %max_iter) {
  .reg .64b %p, %off;
  .reg .32b %px, %py, %width, %height, %limit, %i, %g, %s, %l, %at;
  .reg .32b %cx, %cy, %zx, %zy, %zx2, %zy2, %t, %step;
  .pred %outside, %done;

  ld.param.64b %p, [%out];
  ld.param.32b %width, [%w];
  ld.param.32b %height, [%h];
  ld.param.32b %limit, [%max_iter];
  mov.32b %g, %groupid.x;
  mov.32b %s, %enqueuedlocalsize.x;
  mov.32b %l, %localid.x;
  umad.32b %px, %g, %s, %l;
  mov.32b %g, %groupid.y;
  mov.32b %s, %enqueuedlocalsize.y;
  mov.32b %l, %localid.y;
  umad.32b %py, %g, %s, %l;
  ucmp.ge.32b %outside, %px, %width;
  return.cond %outside;
  ucmp.ge.32b %outside, %py, %height;
  return.cond %outside;

  // c = (x0 + px * dx, y0 + py * dy): a multiply, then an add (two roundings)
  i2f.f.u32 %t, %px;
  ld.param.32b %step, [%dx];
  fmul.f %t, %t, %step;
  ld.param.32b %cx, [%x0];
  fadd.f %cx, %cx, %t;
  i2f.f.u32 %t, %py;
  ld.param.32b %step, [%dy];
  fmul.f %t, %t, %step;
  ld.param.32b %cy, [%y0];
  fadd.f %cy, %cy, %t;

  mov.32b %zx, 0;
  mov.32b %zy, 0;
  mov.32b %i, 0;
loop:
  ucmp.ge.32b %done, %i, %limit;
  goto.cond %done, store;
  fmul.f %zx2, %zx, %zx;
  fmul.f %zy2, %zy, %zy;
  fadd.f %t, %zx2, %zy2;
  fcmp.gt.f %done, %t, 4.0;
  goto.cond %done, store;
  fmul.f %t, %zx, %zy;          // zy = 2 zx zy + cy
  fadd.f %t, %t, %t;
  fadd.f %zy, %t, %cy;
  fsub.f %t, %zx2, %zy2;        // zx = zx^2 - zy^2 + cx
  fadd.f %zx, %t, %cx;
  iadd.32b %i, %i, 1;
  goto loop;
store:
  umad.32b %at, %py, %width, %px;
  umul.full.32b %off, %at, 4;
  iadd.64b %p, %p, %off;
  st.global.32b [%p], %i;
}
"""


def mandelbrot(
    ctx: pisa_vk.Context | None = None,
    width: int = 800,
    height: int = 600,
    center: tuple[float, float] = (-0.6, 0.0),
    span: float = 3.2,
    max_iter: int = 256,
) -> np.ndarray:
    """Iteration counts (``uint32``, ``height`` x ``width``) of the points of a ``span``-wide
    window around ``center``; ``max_iter`` marks the points taken to be in the set."""
    ctx = ctx or pisa_vk.Context()
    kernel = ctx.load(KERNEL, name="mandelbrot.pisa").kernel("mandelbrot")
    step = np.float32(span / width)
    x0 = np.float32(center[0] - span / 2)
    y0 = np.float32(center[1] + step * height / 2)  # row 0 is the top of the picture
    counts = np.zeros((height, width), np.uint32)
    kernel((width, height), (16, 16), pisa_vk.Out(counts), width, height, x0, y0, step, -step, max_iter)
    return counts


def colorize(counts: np.ndarray, max_iter: int) -> np.ndarray:
    """RGB bytes (``height`` x ``width`` x 3): black inside the set, a blue-orange palette
    outside (Bernstein polynomials of the normalized count)."""
    t = np.sqrt(counts / max_iter)
    rgb = np.stack([9 * (1 - t) * t**3, 15 * (1 - t) ** 2 * t**2, 8.5 * (1 - t) ** 3 * t], axis=-1)
    rgb = (np.clip(rgb, 0, 1) * 255).astype(np.uint8)
    rgb[counts >= max_iter] = 0
    return rgb


def write_png(path: str | Path, rgb: np.ndarray) -> None:
    """Writes 8-bit RGB pixels (``height`` x ``width`` x 3) as a PNG file (no dependency)."""
    height, width, _ = rgb.shape
    rows = np.concatenate([np.zeros((height, 1), np.uint8), rgb.reshape(height, -1)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    png += chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)) + chunk(b"IEND", b"")
    Path(path).write_bytes(png)


def show(counts: np.ndarray, max_iter: int = 256, out: str | Path | None = None) -> None:
    """Plots the counts with matplotlib (inline in Jupyter), saving to ``out`` when given;
    without matplotlib, writes ``out`` (default ``mandelbrot.png``) with :func:`write_png`."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        out = out or "mandelbrot.png"
        write_png(out, colorize(counts, max_iter))
        print(f"matplotlib is not installed: wrote {out} with the built-in PNG writer")
        return
    fig, ax = plt.subplots(figsize=(8, 8 * counts.shape[0] / counts.shape[1]))
    ax.imshow(colorize(counts, max_iter), interpolation="nearest")
    ax.set_axis_off()
    ax.set_title("Mandelbrot set, computed by a PISA kernel")
    if out:
        fig.savefig(out, bbox_inches="tight")
        print(f"wrote {out}")
    plt.show()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=800)
    parser.add_argument("--height", type=int, default=600)
    parser.add_argument("--max-iter", type=int, default=256)
    parser.add_argument("--center", type=float, nargs=2, default=(-0.6, 0.0))
    parser.add_argument("--span", type=float, default=3.2, help="width of the window in the plane")
    parser.add_argument("--out", help="save the picture here (PNG)")
    args = parser.parse_args(argv)
    ctx = pisa_vk.Context()
    print(f"device: {ctx.device['name']}")
    counts = mandelbrot(ctx, args.width, args.height, tuple(args.center), args.span, args.max_iter)
    show(counts, args.max_iter, args.out)


if __name__ == "__main__":
    main()
