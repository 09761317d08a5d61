"""PISA's 32-lane sub-groups from Python on a device whose sub-groups are narrower (lavapipe:
8 lanes): the host API runs them on virtual lanes (docs/spec-notes.md §88), for any
work-group size. `fred.max.f` once raised `DeviceError: ... requiredSubgroupSize 32` here."""

import numpy as np
import pytest

import pisa_vk

# Each work-item stores `%activemask` and the largest value of its sub-group (`fred.max.f`).
ACTIVE_MAX = """.version 0.1;
.target 100;
.kernel @k(.param[8] %in, .param[8] %out) {
  .reg .64b %p, %q, %off;
  .reg .32b %i, %g, %e, %am, %m;
  mov.32b %i, %localid.x;
  mov.32b %g, %groupid.x;
  mov.32b %e, %enqueuedlocalsize.x;
  umad.32b %i, %g, %e, %i;
  umul.full.32b %off, %i, 4;
  ld.param.64b %p, [%in];
  iadd.64b %p, %p, %off;
  ld.global.32b %m, [%p];
  fred.max.f %m, %m, 0xffffffff;
  mov.32b %am, %activemask;
  ld.param.64b %q, [%out];
  umul.full.32b %off, %i, 8;
  iadd.64b %q, %q, %off;
  st.global.32b [%q], %am;
  st.global.32b [%q + 4], %m;
}
"""


@pytest.mark.parametrize("block", [1, 5, 32, 33, 100])
def test_fred_and_activemask_at_32_lanes_for_any_block(ctx, tmp_path, block):
    path = tmp_path / "k.pisa"
    path.write_text(ACTIVE_MAX)
    k = ctx.load(path).kernel("k")
    n = 100
    values = ((np.arange(n) * 37) % 101).astype(np.float32) - 50.0
    values[3] = -0.0
    values[70] = np.inf
    out = np.zeros(2 * n, np.uint32)
    k(n, block, pisa_vk.In(values), out)
    for i in range(n):
        group, local = divmod(i, block)
        size = min(block, n - group * block)
        first = 32 * (local // 32)
        present = min(size - first, 32)
        mask = 0xFFFFFFFF if present == 32 else (1 << present) - 1
        start = group * block + first
        want = np.float32(values[start : start + present].max())
        assert out[2 * i] == mask, f"block {block} work-item {i}"
        assert out[2 * i + 1] == want.view(np.uint32), f"block {block} work-item {i}"
