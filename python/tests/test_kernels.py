"""Kernels run from Python against results NumPy computes: saxpy, a reduction, a 2-D kernel, a
program of two linked modules."""

import numpy as np
import pytest

import pisa_vk


def test_saxpy_matches_numpy_with_special_values(ctx, examples):
    saxpy = ctx.load(examples / "saxpy.pisa").kernel("saxpy")
    rng = np.random.default_rng(1)
    n = 1000  # not a multiple of the block: the kernel's bounds check runs
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    big = np.finfo(np.float32).max
    x[:7] = [0.0, -0.0, np.inf, -np.inf, np.nan, big, np.float32(1e-45)]
    y[:7] = [-0.0, -0.0, 1.0, 1.0, 1.0, big, 0.0]
    alpha = np.float32(-2.5)
    # fmad is fused (one rounding, docs/spec-notes.md §27): the product of two float32 is
    # exact in float64, so rounding the float64 sum to float32 is the fused result.
    with np.errstate(invalid="ignore", over="ignore"):
        expected = (np.float64(alpha) * x.astype(np.float64) + y).astype(np.float32)
    y_device = y.copy()
    saxpy(n, 64, alpha, pisa_vk.In(x), y_device, n)
    np.testing.assert_array_equal(y_device, expected)
    # the special values, by hand: -2.5*0 + -0 = -0; -2.5*-0 + -0 = +0; infinities; NaN;
    # -2.5*max + max = -1.5*max overflows; -2.5 * the least denormal rounds to -2 of them
    assert np.signbit(y_device[0]) and not np.signbit(y_device[1])
    assert y_device[2] == -np.inf and y_device[3] == np.inf and np.isnan(y_device[4])
    assert y_device[5] == -np.inf
    assert y_device[6] == np.float32(-2 * 1.401298464324817e-45)


def test_saxpy_python_scalars_and_untouched_input(ctx, examples):
    saxpy = ctx.load(examples / "saxpy.pisa").kernel("saxpy")
    x = np.arange(10, dtype=np.float32)
    y = np.full(10, 0.5, np.float32)
    x_before = x.copy()
    saxpy(10, 4, 3.0, x, y, 10)  # x without In(): uploaded, copied back, unchanged
    np.testing.assert_array_equal(y, 3 * x_before + 0.5)
    np.testing.assert_array_equal(x, x_before)
    # only the first 7 elements: the rest stay as they were
    y2 = np.zeros(10, np.float32)
    saxpy(10, 4, 1.0, x, y2, 7)
    np.testing.assert_array_equal(y2, np.where(np.arange(10) < 7, x_before, 0))


def test_reduction_per_work_group_and_total(ctx, examples):
    reduce = ctx.load(examples / "reduce.pisa").kernel("reduce")
    assert reduce.reqd_work_group_size == (64, 1, 1)
    rng = np.random.default_rng(2)
    groups = 37
    data = rng.integers(0, 2**32, size=groups * 64, dtype=np.uint64).astype(np.uint32)
    data[:4] = [0, 0xFFFFFFFF, 0xFFFFFFFF, 1]  # wrap-around in the first group
    sums = np.zeros(groups, np.uint32)
    reduce(groups * 64, 64, pisa_vk.In(data), pisa_vk.Out(sums))
    expected = (data.reshape(groups, 64).astype(np.uint64).sum(axis=1) % 2**32).astype(np.uint32)
    np.testing.assert_array_equal(sums, expected)
    total = int(sums.astype(np.uint64).sum()) % 2**32
    assert total == int(data.astype(np.uint64).sum()) % 2**32


def test_reduction_refuses_another_block_size(ctx, examples):
    reduce = ctx.load(examples / "reduce.pisa").kernel("reduce")
    sums = np.zeros(1, np.uint32)
    with pytest.raises(pisa_vk.LaunchError, match="reqd_work_group_size"):
        reduce(64, 32, np.zeros(64, np.uint32), sums)


@pytest.mark.parametrize("block", [(8, 8), (16, 4), (1, 1)])
def test_matmul_2d_matches_numpy(ctx, kernels, block):
    matmul = ctx.load(kernels / "matmul.pisa").kernel("matmul")
    rng = np.random.default_rng(3)
    m, k, n = 37, 23, 29  # not multiples of the block
    a = rng.integers(-1000, 1001, size=(m, k), dtype=np.int32)
    b = rng.integers(-1000, 1001, size=(k, n), dtype=np.int32)
    a[0, :] = np.iinfo(np.int32).max  # a wrapping row: compared modulo 2^32
    c = np.full((m, n), 7, np.int32)  # every element is overwritten
    matmul((n, m), block, a, b, pisa_vk.Out(c), m, n, k)
    expected = (a.astype(np.int64) @ b.astype(np.int64)) % 2**32
    np.testing.assert_array_equal(c.view(np.uint32), expected.astype(np.uint32))


def test_matmul_with_device_buffers(ctx, kernels):
    """Buffers stay on the device between calls: C = A @ B, then D = C @ B."""
    matmul = ctx.load(kernels / "matmul.pisa").kernel("matmul")
    rng = np.random.default_rng(4)
    a = rng.integers(-50, 51, size=(5, 6), dtype=np.int32)
    b = rng.integers(-50, 51, size=(6, 6), dtype=np.int32)
    da, db = ctx.buffer(a), ctx.buffer(b)
    dc, dd = ctx.zeros((5, 6), np.int32), ctx.zeros((5, 6), np.int32)
    matmul((6, 5), (4, 4), da, db, dc, 5, 6, 6)
    matmul((6, 5), (4, 4), dc, db, dd, 5, 6, 6)
    np.testing.assert_array_equal(dc.get(), a @ b)
    np.testing.assert_array_equal(dd.get(), a @ b @ b)
    assert dd.shape == (5, 6) and dd.dtype == np.int32 and dd.nbytes == 120
    np.testing.assert_array_equal(np.asarray(dd), a @ b @ b)


def test_linked_program(ctx, examples):
    linked = examples / "linked"
    module = ctx.load(linked / "clamp.pisa", linked=[linked / "lib.pisa"])
    data = np.array([-5, 0, 3, 9, 12, -100, 7, 100, np.iinfo(np.int32).min], np.int32)
    expected = np.clip(data, 0, 10)
    module.kernel("clamp_all")(data.size, 4, data, data.size, 0, 10)
    np.testing.assert_array_equal(data, expected)
    assert module.symbol("clamped", np.uint32)[0] == 5  # -5, 12, -100, 100, min changed


def test_offset_shifts_the_global_ids(ctx):
    # out[i - offset] = %globaloffset.x + i for the work-items of the launch
    src = """.version 0.1;
.target 100;
.kernel @ids(.param[8] %out) {
  .reg .64b %p, %off, %base;
  .reg .32b %i, %g, %s, %l;
  ld.param.64b %p, [%out];
  mov.32b %g, %groupid.x;
  mov.32b %s, %enqueuedlocalsize.x;
  mov.32b %l, %localid.x;
  umad.32b %i, %g, %s, %l;
  mov.64b %base, %globaloffset.x;
  umul.full.32b %off, %i, 8;
  iadd.64b %p, %p, %off;
  st.global.64b [%p], %base;
}
"""
    ids = ctx.load(src).kernel("ids")
    out = np.zeros(4, np.uint64)
    ids(4, 2, out, offset=1000)
    np.testing.assert_array_equal(out, [1000] * 4)
