"""Argument kinds (issue 26 point 1, spec-notes §89): each slip of a new user is refused
before anything runs with ArgumentError naming the parameter and the PISA line, the context
stays usable (a correct call afterwards gives right values), raw_address keeps the old
behaviour; and arrays the kernel never writes are not copied back (issue 29 point 3)."""

import numpy as np
import pytest

import pisa_vk

# out[r] = sum of m[r * cols + c] for c < cols, one work-item per row; `%cols` is compared
# unsigned (ucmp, line 15), the rows are f32 (`ld.global.32b` feeding `fadd.f`, line 19).
ROW_SUM = """.version 0.1;
.target 100;
.kernel @row_sum(.param[8] %m, .param[8] %out, .param[4] %cols) {
  .reg .64b %pm, %po, %off, %at;
  .reg .32b %r, %c, %n, %x, %s, %i;
  .pred %more;
  ld.param.64b %pm, [%m];
  ld.param.64b %po, [%out];
  ld.param.32b %n, [%cols];
  mov.32b %r, %groupid.x;
  mov.32b %c, 0;
  mov.32b %s, 0;
  umul.32b %i, %r, %n;
loop:
  ucmp.lt.32b %more, %c, %n;
  goto.cond !%more, done;
  umul.full.32b %off, %i, 4;
  iadd.64b %off, %off, %pm;
  ld.global.32b %x, [%off];
  fadd.f %s, %s, %x;
  iadd.32b %i, %i, 1;
  iadd.32b %c, %c, 1;
  goto loop;
done:
  umul.full.32b %at, %r, 4;
  iadd.64b %at, %at, %po;
  st.global.32b [%at], %s;
}
"""


@pytest.fixture(scope="module")
def row_sum(ctx):
    return ctx.load(ROW_SUM, name="row_sum.pisa").kernel("row_sum")


@pytest.fixture(scope="module")
def saxpy(ctx):
    from conftest import EXAMPLES

    return ctx.load(EXAMPLES / "saxpy.pisa").kernel("saxpy")


def test_params_carry_their_kinds(row_sum, saxpy):
    m, out, cols = row_sum.params
    assert m.kind["kind"] == "address" and m.kind["read"] and not m.kind["write"]
    assert out.kind["write"] and not out.kind["read"]
    assert cols.kind["kind"] == "int" and cols.kind["signed"] is False
    assert cols.kind["at"] == "row_sum.pisa:15:3: `ucmp.lt.32b %more, %c, %n`"
    assert [p.kind["kind"] for p in saxpy.params] == ["float", "address", "address", "int"]


def test_slips_are_refused_and_the_context_stays_usable(row_sum):
    m = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = np.zeros(4, np.float32)
    pisa_vk.transfer_stats(reset=True)
    # The segfault: 1000.0 for the column count.
    with pytest.raises(pisa_vk.ArgumentError, match=r"%cols.*a 32-bit float.*row_sum\.pisa:15:3"):
        row_sum(4, 1, m, out, 1000.0)
    with pytest.raises(pisa_vk.ArgumentError, match=r"%cols.*a negative integer"):
        row_sum(4, 1, m, out, -3)
    # An int where the kernel dereferences an address.
    with pytest.raises(pisa_vk.ArgumentError, match=r"%m.*dereferences it.*row_sum\.pisa:19:3"):
        row_sum(4, 1, 4096, out, 3)
    # A float64 array where the kernel loads 32 bits and does fadd.f.
    with pytest.raises(pisa_vk.ArgumentError, match=r"%m.*a buffer of 64-bit floats"):
        row_sum(4, 1, m.astype(np.float64), out, 3)
    # Nothing was copied for the refused calls.
    assert pisa_vk.transfer_stats()["uploads"] == 0
    np.testing.assert_array_equal(out, 0)
    row_sum(4, 1, m, out, 3)
    np.testing.assert_array_equal(out, [3.0, 12.0, 21.0, 30.0])


def test_buffer_for_an_integer_and_int_for_a_float(ctx, saxpy):
    x = np.array([1, 2, 3, 4], np.float32)
    y = np.ones(4, np.float32)
    n = ctx.zeros(1, np.uint32)
    # A 4-byte count cannot take an 8-byte address anyway; alpha takes an int as its float.
    with pytest.raises(pisa_vk.ArgumentError):
        saxpy(4, 2, 2.0, x, y, n)
    saxpy(4, 2, 2, x, y, 4)
    np.testing.assert_array_equal(y, [3, 5, 7, 9])
    # A float16 array where the kernel does float math on 32-bit loads.
    with pytest.raises(pisa_vk.ArgumentError, match=r"%xs.*16-bit floats"):
        saxpy(4, 2, 2.0, x.astype(np.float16), y, 4)


def test_raw_address_keeps_the_old_behaviour(ctx, saxpy):
    x = ctx.buffer(np.array([1, 2, 3, 4], np.float32))
    y = np.ones(4, np.float32)
    saxpy(4, 2, 2.0, pisa_vk.raw_address(x.address), y, 4)
    np.testing.assert_array_equal(y, [3, 5, 7, 9])
    # The bits of ints where the kernel reads floats, on purpose.
    bits = np.array([1.0, 2.0, 3.0, 4.0], np.float32).view(np.int32)
    saxpy(4, 2, 1.0, pisa_vk.raw_address(bits), y, 4)
    np.testing.assert_array_equal(y, [4, 7, 10, 13])


def test_arrays_the_kernel_only_reads_are_not_copied_back(saxpy):
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, np.float32)
    pisa_vk.transfer_stats(reset=True)
    saxpy(1000, 64, 2.0, x, y, 1000)
    np.testing.assert_array_equal(y, 2 * np.arange(1000) + 1)
    # x (read only): uploaded; y (read and written): uploaded and copied back.
    assert pisa_vk.transfer_stats() == {
        "uploads": 2, "upload_bytes": 8000, "downloads": 1, "download_bytes": 4000
    }


def test_saxpy_copies_example_counts_the_copies():
    """python/examples/saxpy_copies.py: before (raw_address) 2 uploads + 2 downloads, with
    the kinds 2 uploads + 1 download. PISA_VK_COPIES_MB sizes it (256 for the figures in
    docs/python.md; 16 by default)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    mb = os.environ.get("PISA_VK_COPIES_MB", "16")
    example = Path(__file__).resolve().parents[1] / "examples" / "saxpy_copies.py"
    out = subprocess.run(
        [sys.executable, str(example), "--mb", mb], capture_output=True, text=True, check=True
    ).stdout
    print(out)
    half = int(mb) // 2
    assert f"2 uploads ({int(mb)} MiB), 2 downloads ({int(mb)} MiB), {2 * int(mb)} MiB copied" in out
    assert f"2 uploads ({int(mb)} MiB), 1 downloads ({half} MiB), {int(mb) + half} MiB copied" in out
