"""``Context("reference", sanitize=...)``: kernels on the CPU reference interpreter with its
sanitizers. The five bug programs of issue 28 (the ones of reference/tests/sanitize.rs, so the
lines are the same: line 1 is ``.version``) are found from Python at the right line with the
right work-items, and their fixed twins run clean and give the results NumPy computes."""

import numpy as np
import pytest

import pisa_vk


def reduction(sync: str) -> str:
    """A tree reduction in shared memory; ``sync`` ends each round (the bug: nothing)."""
    return f""".version 0.1;
.target 100;
.kernel @k(.param[8] %in, .param[8] %sums) {{
  .shared .align 4 @partial[256];
  .reg .64b %pin, %pout, %off;
  .reg .32b %lid, %gid, %i, %v, %w, %stride, %slot, %other;
  .pred %active, %more, %first;
  ld.param.64b %pin, [%in];
  ld.param.64b %pout, [%sums];
  mov.32b %lid, %localid.x;
  mov.32b %gid, %groupid.x;
  umad.32b %i, %gid, 64, %lid;
  umul.full.32b %off, %i, 4;
  iadd.64b %pin, %pin, %off;
  ld.global.32b %v, [%pin];
  shl.32b %slot, %lid, 2;
  st.shared.32b [@partial + %slot], %v;
  barrier.workgroup;
  mov.32b %stride, 32;
loop:
  ucmp.lt.32b %active, %lid, %stride;
  goto.cond !%active, skip;
  iadd.32b %other, %lid, %stride;
  shl.32b %other, %other, 2;
  ld.shared.32b %v, [@partial + %slot];
  ld.shared.32b %w, [@partial + %other];
  iadd.32b %v, %v, %w;
  st.shared.32b [@partial + %slot], %v;
skip:
  {sync}
  shr.32b %stride, %stride, 1;
  ucmp.ne.32b %more, %stride, 0;
  goto.cond %more, loop;
  ucmp.eq.32b %first, %lid, 0;
  return.cond !%first;
  ld.shared.32b %v, [@partial];
  umul.full.32b %off, %gid, 4;
  iadd.64b %pout, %pout, %off;
  st.global.32b [%pout], %v;
}}
"""


def counter(bump: str) -> str:
    """Work-item 0 of each work-group adds 1 to a global counter with ``bump``."""
    return f""".version 0.1;
.target 100;
.kernel @k(.param[8] %c) {{
  .reg .64b %p;
  .reg .32b %v;
  .pred %first;
  ld.param.64b %p, [%c];
  ucmp.eq.32b %first, %localid.x, 0;
  goto.cond !%first, done;
{bump}
done:
  return;
}}
"""


# Each work-item of a work-group of 64 stores in[gid] in tile[lid], then (after a barrier)
# writes tile[63 - lid] to out[gid].
TILE = """.version 0.1;
.target 100;
.kernel @k(.param[8] %in, .param[8] %out) {
  .shared .align 4 @tile[256];
  .reg .64b %pin, %pout, %off;
  .reg .32b %lid, %gid, %v, %slot;
  ld.param.64b %pin, [%in];
  ld.param.64b %pout, [%out];
  mov.32b %lid, %localid.x;
  umad.32b %gid, %groupid.x, 64, %lid;
  umul.full.32b %off, %gid, 4;
  ld.global.32b %v, [%pin + %off];
  shl.32b %slot, %lid, 2;
  st.shared.32b [@tile + %slot], %v;
  barrier.workgroup;
  isub.32b %slot, 63, %lid;
  shl.32b %slot, %slot, 2;
  ld.shared.32b %v, [@tile + %slot];
  st.global.32b [%pout + %off], %v;
}
"""


def divergent(body: str, after: str) -> str:
    """A work-group of 32 where ``body`` runs under ``if (%localid.x < 16)``, ``after`` for
    everyone; out[lid] = %r."""
    return f""".version 0.1;
.target 100;
.kernel @k(.param[8] %out) {{
  .reg .64b %p, %off;
  .reg .32b %lid, %v, %r;
  .pred %low;
  ld.param.64b %p, [%out];
  mov.32b %lid, %localid.x;
  mov.32b %v, %lid;
  mov.32b %r, 0;
  ucmp.lt.32b %low, %lid, 16;
  goto.cond !%low, skip;
{body}
skip:
{after}
  umul.full.32b %off, %lid, 4;
  st.global.32b [%p + %off], %r;
}}
"""


@pytest.fixture(scope="module")
def san():
    return pisa_vk.Context("reference", sanitize="all")


def found(kernel, *args):
    """The SanitizerError a call raises."""
    with pytest.raises(pisa_vk.SanitizerError) as caught:
        kernel(*args)
    return caught.value


def test_a_missing_barrier_in_a_shared_memory_reduction_is_a_race(san):
    data = np.arange(128, dtype=np.uint32) * 3 + 1
    sums = np.zeros(2, np.uint32)
    e = found(san.load(reduction("// no barrier")).kernel("k"), 128, 64, data, sums)
    assert e.reports and all(r.check == "race" for r in e.reports)
    pairs = {(r.first.line, r.second.line) for r in e.reports}
    # the store of a partial sum (line 28) and the load of it as %w (line 26), either order
    assert (28, 26) in pairs or (26, 28) in pairs, pairs
    r = e.reports[0]
    assert r.first.work_item != r.second.work_item
    assert r.space == "shared" and r.what == "partial in @k" and r.count >= 1
    assert len(pairs) == len(e.reports), "one report per pair of lines"
    assert e.error is None and np.all(sums == 0), "nothing copied back"
    assert "<source>:28:" in str(e) or "<source>:26:" in str(e)
    # the twin: clean, and the sums are NumPy's
    san.load(reduction("barrier.workgroup;")).kernel("k")(128, 64, data, sums)
    assert np.array_equal(sums, data.reshape(2, 64).sum(axis=1, dtype=np.uint32))


def test_work_groups_racing_on_a_global_counter_without_atomics(san):
    bug = counter("  ld.global.32b %v, [%p];\n  iadd.32b %v, %v, 1;\n  st.global.32b [%p], %v;")
    c = np.zeros(1, np.uint32)
    e = found(san.load(bug).kernel("k"), 8, 4, c)
    pairs = {(r.first.line, r.second.line) for r in e.reports}
    assert (12, 10) in pairs and (12, 12) in pairs, pairs
    r = next(r for r in e.reports if (r.first.line, r.second.line) == (12, 10))
    assert r.first.group_id == (0, 0, 0) and r.second.group_id == (1, 0, 0)
    assert r.space == "global" and r.what == "argument 0 (%c)"
    assert r.first.access == "store" and r.second.access == "load"
    # the race checker alone finds it; the others do not
    only_init = pisa_vk.Context("reference", sanitize=["init", "sync"])
    only_init.load(bug).kernel("k")(8, 4, c)
    assert c[0] == 2
    twin = counter("  mov.32b %v, 1;\n  iatom.global.add.32b %v, [%p], %v;")
    c[0] = 0
    san.load(twin).kernel("k")(8, 4, c)
    assert c[0] == 2


def test_a_cuda_style_grid_reads_an_unwritten_shared_tile(san):
    k = san.load(TILE).kernel("k")
    data = np.arange(128, dtype=np.uint32) * 3 + 1
    out = np.zeros(128, np.uint32)
    # the intended launch: 128 work-items in work-groups of 64: clean
    k(128, 64, data, out)
    assert np.array_equal(out, data.reshape(2, 64)[:, ::-1].reshape(-1))
    # a CUDA-style grid: `2` meant as two work-groups is two work-items, one partial
    # work-group whose work-items read tile[63] and tile[62], which nobody wrote
    e = found(k, 2, 64, data, np.zeros(128, np.uint32))
    assert len(e.reports) == 1, e.reports
    r = e.reports[0]
    assert (r.check, r.first.line, r.second) == ("init", 18, None)
    assert r.first.local_id == (0, 0, 0) and r.count == 2
    assert (r.space, r.address, r.what) == ("shared", 252, "tile in @k")
    assert r.first.access == "load"


def test_a_barrier_inside_a_branch_taken_by_half_the_work_group(san):
    out = np.zeros(32, np.uint32)
    e = found(san.load(divergent("  barrier.workgroup;", "")).kernel("k"), 32, 32, out)
    assert len(e.reports) == 1, e.reports
    r = e.reports[0]
    assert (r.check, r.first.line) == ("sync", 13)
    assert [m[0] for m in r.missing] == list(range(16, 32))
    assert r.space is None and r.first.access is None
    san.load(divergent("", "  barrier.workgroup;")).kernel("k")(32, 32, out)
    assert np.array_equal(out, np.zeros(32))


def test_a_shfl_whose_mask_names_inactive_lanes(san):
    out = np.zeros(32, np.uint32)
    bug = divergent("  shfl.idx.32b %r, %v, 3, 0xffffffff;", "")
    e = found(san.load(bug).kernel("k"), 32, 32, out)
    assert len(e.reports) == 1, e.reports
    r = e.reports[0]
    assert (r.check, r.first.line, r.count) == ("sync", 13, 1)
    assert [m[0] for m in r.missing] == list(range(16, 32))
    twin = divergent("  shfl.idx.32b %r, %v, 3, 0x0000ffff;", "")
    san.load(twin).kernel("k")(32, 32, out)
    # lanes below 16 read lane 3's %v (3); the others keep 0
    assert np.array_equal(out, [3] * 16 + [0] * 16)


def test_the_reference_context_without_sanitizers_and_its_limits(examples):
    ref = pisa_vk.Context("reference")
    assert ref.is_reference and ref.device["type"] == "reference"
    saxpy = ref.load(examples / "saxpy.pisa").kernel("saxpy")
    x = np.arange(100, dtype=np.float32)
    y = np.ones(100, np.float32)
    saxpy(100, 32, 2.0, pisa_vk.In(x), y, 100)
    assert np.array_equal(y, 2 * x + 1)
    # the bounds checks always run
    with pytest.raises(pisa_vk.MemoryViolation):
        saxpy(200, 32, 2.0, pisa_vk.In(x), y, 200)
    # arguments are checked by kind as on a device
    with pytest.raises(pisa_vk.ArgumentError):
        saxpy(100, 32, 2.0, x, y, 1.5)
    # what needs device memory says so
    for call in (lambda: ref.zeros(4), lambda: ref.asarray(x), lambda: ref.stream(),
                 lambda: saxpy(100, 32, 2.0, x, y, 100, timed=True)):
        with pytest.raises(pisa_vk.PisaError, match="needs a Vulkan device"):
            call()
    with pytest.raises(ValueError, match="unknown sanitizer 'races'"):
        pisa_vk.Context("reference", sanitize="races")
    with pytest.raises(ValueError, match="reference interpreter"):
        pisa_vk.Context(sanitize="all")
    with pytest.raises(pisa_vk.CompileError, match="unknown instruction"):
        ref.load(".version 0.1;\n.target 100;\n.kernel @k() { foo; }")
