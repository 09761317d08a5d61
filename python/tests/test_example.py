"""The Mandelbrot example: its kernel against the same float32 arithmetic in NumPy, and its
PNG writer."""

import importlib.util
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mandelbrot.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("mandelbrot_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def numpy_mandelbrot(width, height, x0, y0, dx, dy, max_iter):
    """The kernel's loop in NumPy float32, operation for operation (each one rounded: the
    translator marks float results NoContraction, so nothing is fused on the device)."""
    f = np.float32
    cx = f(x0) + np.arange(width, dtype=f) * f(dx)
    cy = f(y0) + np.arange(height, dtype=f) * f(dy)
    cx, cy = np.broadcast_to(cx, (height, width)), np.broadcast_to(cy[:, None], (height, width))
    zx = np.zeros((height, width), f)
    zy = np.zeros((height, width), f)
    count = np.zeros((height, width), np.uint32)
    active = np.ones((height, width), bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(max_iter):
            zx2, zy2 = zx * zx, zy * zy
            active &= ~(zx2 + zy2 > f(4.0))
            t = zx * zy
            zy = np.where(active, (t + t) + cy, zy)
            zx = np.where(active, (zx2 - zy2) + cx, zx)
            count += active
    return count


def test_mandelbrot_matches_numpy(ctx, example):
    width, height, max_iter = 67, 45, 100  # not multiples of the 16 x 16 work-groups
    counts = example.mandelbrot(ctx, width, height, center=(-0.6, 0.1), span=3.0, max_iter=max_iter)
    step = np.float32(3.0 / width)
    x0 = np.float32(-0.6 - 3.0 / 2)
    y0 = np.float32(0.1 + step * height / 2)
    expected = numpy_mandelbrot(width, height, x0, y0, step, -step, max_iter)
    assert counts.shape == (height, width) and counts.dtype == np.uint32
    np.testing.assert_array_equal(counts, expected)
    assert counts.max() == max_iter and counts.min() <= 1  # inside and far outside


def test_png_writer(example, tmp_path):
    rgb = np.zeros((3, 5, 3), np.uint8)
    rgb[1, 2] = [255, 128, 1]
    path = tmp_path / "t.png"
    example.write_png(path, rgb)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and struct.unpack(">II", data[16:24]) == (5, 3)
    idat = data.index(b"IDAT")
    (size,) = struct.unpack(">I", data[idat - 4 : idat])
    rows = np.frombuffer(zlib.decompress(data[idat + 4 : idat + 4 + size]), np.uint8).reshape(3, 16)
    assert (rows[:, 0] == 0).all()  # filter byte
    np.testing.assert_array_equal(rows[:, 1:].reshape(3, 5, 3), rgb)
    assert data.endswith(b"IEND" + struct.pack(">I", zlib.crc32(b"IEND")))
