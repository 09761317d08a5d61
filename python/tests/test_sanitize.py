"""``Context("reference", sanitize=...)``: kernels on the CPU reference interpreter with its
sanitizers. The five bug programs of issue 28 (the files of tests/programs/sanitize/ that
reference/tests/sanitize.rs reads too, so the lines are the same: line 1 is ``.version``)
are found from Python at the right line with the right work-items, and their fixed twins
run clean and give the results NumPy computes."""

from pathlib import Path

import numpy as np
import pytest

import pisa_vk

# The programs live in the repository's tests/programs/sanitize/ (README.md there says what
# each does), shared with reference/tests/sanitize.rs: a bug and its fixed twin each.
PROGRAMS = Path(__file__).resolve().parents[2] / "tests" / "programs" / "sanitize"


def program(name: str) -> str:
    """The text of ``tests/programs/sanitize/<name>.pisa`` (loaded as inline source, so
    diagnostics call it ``<source>``)."""
    path = PROGRAMS / f"{name}.pisa"
    if not path.is_file():
        pytest.skip(f"SKIPPED: the repository's tests/programs/sanitize/ is not at {PROGRAMS}")
    return path.read_text()


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
    e = found(san.load(program("reduction-no-barrier")).kernel("k"), 128, 64, data, sums)
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
    san.load(program("reduction-barrier")).kernel("k")(128, 64, data, sums)
    assert np.array_equal(sums, data.reshape(2, 64).sum(axis=1, dtype=np.uint32))


def test_work_groups_racing_on_a_global_counter_without_atomics(san):
    bug = program("counter-load-add-store")
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
    twin = program("counter-atomic-add")
    c[0] = 0
    san.load(twin).kernel("k")(8, 4, c)
    assert c[0] == 2


def test_a_cuda_style_grid_reads_an_unwritten_shared_tile(san):
    k = san.load(program("tile")).kernel("k")
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
    e = found(san.load(program("barrier-in-branch")).kernel("k"), 32, 32, out)
    assert len(e.reports) == 1, e.reports
    r = e.reports[0]
    assert (r.check, r.first.line) == ("sync", 13)
    assert [m[0] for m in r.missing] == list(range(16, 32))
    assert r.space is None and r.first.access is None
    san.load(program("barrier-after-branch")).kernel("k")(32, 32, out)
    assert np.array_equal(out, np.zeros(32))


def test_a_shfl_whose_mask_names_inactive_lanes(san):
    out = np.zeros(32, np.uint32)
    bug = program("shfl-mask-inactive")
    e = found(san.load(bug).kernel("k"), 32, 32, out)
    assert len(e.reports) == 1, e.reports
    r = e.reports[0]
    assert (r.check, r.first.line, r.count) == ("sync", 13, 1)
    assert [m[0] for m in r.missing] == list(range(16, 32))
    twin = program("shfl-mask-active")
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
