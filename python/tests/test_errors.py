"""Errors are Python exceptions: invalid PISA raises CompileError with the rendered diagnostic
(file:line:col, the source line, a caret); misuse raises the matching PisaError."""

import time

import numpy as np
import pytest
from conftest import lcg_power

import pisa_vk

BAD = """.version 0.1;
.target 100;
.kernel @k(.param[8] %out) {
  .reg .32b %x;
  iadd.32b %x, %x, %nope;
  frobnicate.32b %x;
}
"""


def test_invalid_program_raises_the_rendered_diagnostics(ctx):
    with pytest.raises(pisa_vk.CompileError) as info:
        ctx.load(BAD, name="bad.pisa")
    e = info.value
    text = str(e)
    assert text == e.diagnostics
    lines = text.splitlines()
    # every error: file:line:col: error: message, then the source line and a caret under it
    first = lines.index(next(line for line in lines if line.startswith("bad.pisa:5:")))
    assert lines[first].startswith("bad.pisa:5:20: error:") and "%nope" in lines[first]
    assert lines[first + 2] == "5 |   iadd.32b %x, %x, %nope;"
    assert lines[first + 3] == "  |                    ^^^^^"
    assert any(x.startswith("bad.pisa:6:3: error:") and "frobnicate" in x for x in lines)
    assert "6 |   frobnicate.32b %x;" in lines
    assert [(d.file, d.line, d.column) for d in e.errors] == [("bad.pisa", 5, 20), ("bad.pisa", 6, 3)]
    assert str(e.errors[1]).startswith("bad.pisa:6:3: error: ")


def test_inline_source_gets_a_placeholder_name(ctx):
    with pytest.raises(pisa_vk.CompileError, match=r"^<source>:2:9: error: "):
        ctx.load(".version 0.1;\n.target 999;\n")


def test_link_errors_name_both_files(ctx):
    main = ("main.pisa", """.version 0.1;
.target 100;
.import .global .align 4 @table[8];
.kernel @k() {
  return;
}
""")
    lib = ("lib.pisa", """.version 0.1;
.target 100;
.export .global .align 4 @table[16] = { .zero 16 };
""")
    with pytest.raises(pisa_vk.CompileError) as info:
        ctx.load(main, linked=[lib])
    text = str(info.value)
    assert "main.pisa:3:26: error: imported variable `@table`" in text
    assert "lib.pisa:3:26: note: exported here" in text


def test_unresolved_import_is_refused(ctx, examples):
    with pytest.raises(pisa_vk.CompileError, match="clamp.pisa:9:.*error: .*@clamp"):
        ctx.load(examples / "linked" / "clamp.pisa")


def test_missing_file_is_file_not_found(ctx, tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        ctx.load(tmp_path / "missing.pisa")
    assert info.value.filename == str(tmp_path / "missing.pisa")
    with pytest.raises(TypeError):
        ctx.load(42)


def test_launch_errors(ctx, kernels):
    spin = ctx.load(kernels / "spin.pisa").kernel("spin")
    out = np.zeros(1, np.uint32)
    for grid, block, message in [
        (1, 0, "block .* at least 1"),
        (-1, 1, "grid .* at least 1"),
        (0, 1, "grid .* at least 1"),
        ((1, 1, 1, 1), 1, "1 to 3 dimensions"),
        ("x", 1, "grid must be an int"),
        (1, 1_000_000, "work-group size|maxComputeWorkGroup|limit"),
        (2**40, 1, r"1099511627776 work-groups in dimension x .*: at most 4294967295"),
    ]:
        with pytest.raises((pisa_vk.LaunchError, pisa_vk.DeviceError), match=message):
            spin(grid, block, out, 1)
    assert out[0] == 0  # nothing ran, nothing was copied back


def test_unknown_kernel_lists_the_kernels(ctx, kernels):
    module = ctx.load(kernels / "symbols.pisa")
    with pytest.raises(pisa_vk.NotFoundError, match=r"no kernel `nope` in the module \(kernels: bump\)"):
        module.kernel("nope")


def test_errors_are_pisa_errors_and_builtins():
    assert issubclass(pisa_vk.ArgumentError, TypeError)
    assert issubclass(pisa_vk.NotFoundError, LookupError)
    assert issubclass(pisa_vk.LaunchError, ValueError)
    assert issubclass(pisa_vk.KernelTimeout, TimeoutError)
    for cls in (pisa_vk.CompileError, pisa_vk.ArgumentError, pisa_vk.NotFoundError,
                pisa_vk.SizeError, pisa_vk.DeviceError, pisa_vk.LaunchError,
                pisa_vk.DeviceBusy):
        assert issubclass(cls, pisa_vk.PisaError)


def test_bad_device_selector():
    with pytest.raises(pisa_vk.DeviceError, match="no Vulkan device matches"):
        pisa_vk.Context("no such device, surely")
    with pytest.raises(TypeError):
        pisa_vk.Context(1.5)


def test_a_dispatch_past_the_timeout_raises_kernel_timeout(monkeypatch, spin, kernels):
    monkeypatch.setenv("PISA_VK_TIMEOUT", "0.2")
    ctx = pisa_vk.Context()  # reads PISA_VK_TIMEOUT when it is made
    ctx.validation_messages()  # drop what context creation reported (as conftest's ctx does)
    kernel = ctx.load(kernels / "spin.pisa").kernel("spin")
    out = np.zeros(1, np.uint32)
    n = spin.iterations(1.5)  # well past the 0.2 s timeout, even if the machine speeds up
    start = time.perf_counter()
    message = r"did not finish within 0\.2\d* s \(PISA_VK_TIMEOUT\)"
    with pytest.raises(pisa_vk.KernelTimeout, match=message) as info:
        kernel(1, 1, out, n)
    assert isinstance(info.value, TimeoutError)
    assert time.perf_counter() - start < 1.2
    assert out[0] == 0  # nothing copied back
    # The kernel goes on to its end on the device (about 1.5 s); until then every call that
    # needs the device is refused at once with DeviceBusy, then the context works again.
    deadline = time.perf_counter() + 30
    while True:
        try:
            kernel(1, 1, out, 1000)
            break
        except pisa_vk.DeviceBusy as busy:
            assert "timed out earlier" in str(busy)
            assert time.perf_counter() < deadline, "the context stayed busy for 30 s"
            time.sleep(0.25)
    assert out[0] == lcg_power(1000)
    assert ctx.validation_messages() == []


def test_a_checked_bad_access_raises_memory_violation(monkeypatch):
    monkeypatch.setenv("PISA_VK_CHECKED", "1")
    ctx = pisa_vk.Context()  # reads PISA_VK_CHECKED when it is made
    ctx.validation_messages()
    src = (".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {\n  .reg .64b %p;\n"
           "  .reg .32b %v;\n  ld.param.64b %p, [%out];\n  mov.32b %v, 7;\n"
           "  st.global.32b [%p + 16], %v;\n  st.global.32b [%p], %v;\n}\n")
    out = np.zeros(4, np.uint32)  # 16 bytes: the store at +16 is just past its end
    with pytest.raises(pisa_vk.MemoryViolation, match="just past the end") as info:
        ctx.load(src, name="bad.pisa").kernel("k")(1, 1, out)
    assert isinstance(info.value, RuntimeError)
    assert "bad.pisa:8:" in str(info.value)
    assert ctx.validation_messages() == []


def test_a_buffer_of_another_context_is_refused(ctx):
    # Its address means nothing to this context's device (on lavapipe it is a host pointer
    # the kernel would write through): refused before anything runs, in a call and a stream.
    other = pisa_vk.Context()
    src = (".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {\n  .reg .64b %p;\n"
           "  .reg .32b %v;\n  ld.param.64b %p, [%out];\n  mov.32b %v, 7;\n"
           "  st.global.32b [%p], %v;\n}\n")
    k = ctx.load(src, name="store.pisa").kernel("k")
    theirs = other.zeros(4, np.uint32)
    with pytest.raises(pisa_vk.ArgumentError, match="buffer of another context"):
        k(1, 1, theirs)
    with pytest.raises(pisa_vk.ArgumentError, match="buffer of another context"):
        ctx.stream().launch(k, 1, 1, theirs)
    assert list(theirs.get()) == [0, 0, 0, 0]
    ours = ctx.zeros(4, np.uint32)
    k(1, 1, ours)
    assert list(ours.get()) == [7, 0, 0, 0]
    assert other.validation_messages() == []


def test_a_checked_context_reports_a_bad_access_and_an_unchecked_one_does_not(ctx):
    src = (".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {\n  .reg .64b %p;\n"
           "  .reg .32b %v;\n  ld.param.64b %p, [%out];\n  mov.32b %v, 7;\n"
           "  st.global.32b [%p + 16], %v;\n}\n")
    checked = pisa_vk.Context(checked=True)
    out = checked.zeros(4, np.uint32)  # 16 bytes: the store at +16 is just past its end
    with pytest.raises(pisa_vk.MemoryViolation, match="just past the end") as info:
        checked.load(src, name="bad.pisa").kernel("k")(1, 1, out)
    assert "bad.pisa:8:" in str(info.value)
    assert list(out.get()) == [0, 0, 0, 0]
    assert checked.validation_messages() == []
    # checked=False: unchecked whatever PISA_VK_CHECKED says; an in-bounds store runs.
    good = src.replace("[%p + 16]", "[%p + 12]")
    plain = pisa_vk.Context(checked=False)
    buf = plain.zeros(4, np.uint32)
    plain.load(good).kernel("k")(1, 1, buf)
    assert list(buf.get()) == [0, 0, 0, 7]


def test_a_buffer_set_of_the_wrong_size_is_a_size_error(ctx):
    buf = ctx.zeros(4, np.uint32)
    with pytest.raises(pisa_vk.SizeError, match=r"3 values of shape \(3,\) for a buffer of uint32 \(4,\)"):
        buf.set([1, 2, 3])
    buf.set(7)  # one value broadcasts
    assert buf.get().tolist() == [7, 7, 7, 7]
    buf.set([0, 1, 2, 0xFFFFFFFF])
    assert buf.get().tolist() == [0, 1, 2, 0xFFFFFFFF]


FACT = """.version 0.1;
.target 100;
.function .64b @fact(.reg .64b %n) {
  .reg .64b %m, %f;
  .pred %p;
  ucmp.le.64b %p, %n, 1;
  return.cond %p, 1;
  isub.64b %m, %n, 1;
  call %f, @fact(%m);
  umul.64b %f, %f, %n;
  return %f;
}
.kernel @k(.param[8] %out, .param[8] %in) {
  .reg .64b %pin, %pout, %off, %x, %r;
  .reg .32b %i, %g, %s, %l;
  mov.32b %g, %groupid.x;
  mov.32b %s, %enqueuedlocalsize.x;
  mov.32b %l, %localid.x;
  umad.32b %i, %g, %s, %l;
  umul.full.32b %off, %i, 8;
  ld.param.64b %pin, [%in];
  iadd.64b %pin, %pin, %off;
  ld.global.64b %x, [%pin];
  ld.param.64b %pout, [%out];
  iadd.64b %pout, %pout, %off;
  call %r, @fact(%x);
  st.global.64b [%pout], %r;
}
"""


def test_recursion_runs_and_a_stack_overflow_raises_its_facts(ctx):
    # fact(n) nests n activations of its cycle: 9 is one too many at stack_depth=8.
    out = ctx.zeros(8, np.uint64)
    inp = ctx.buffer(np.array([1, 2, 3, 4, 5, 9, 6, 7], np.uint64))
    ctx.load(FACT, name="fact.pisa").kernel("k")(8, 8, out, inp)
    assert list(out.get()) == [1, 2, 6, 24, 120, 362880, 720, 5040]
    shallow = ctx.load(FACT, name="fact.pisa", stack_depth=8).kernel("k")
    with pytest.raises(pisa_vk.StackOverflow) as info:
        shallow(8, 8, out, inp)
    e = info.value
    assert isinstance(e, RuntimeError)
    assert (e.kernel, e.function, e.file, e.line, e.column) == ("k", "fact", "fact.pisa", 9, 3)
    assert e.call == "call %f, @fact(%m)"
    assert (e.work_item, e.local_id, e.group_id) == ((5, 0, 0), (5, 0, 0), (0, 0, 0))
    assert (e.depth, e.further) == (8, 0)
    assert "stack overflow" in str(e) and "fact.pisa:9:3" in str(e)
    # The same module runs a launch within the depth afterwards.
    inp = ctx.buffer(np.array([8, 1, 0, 7, 2, 3, 4, 5], np.uint64))
    shallow(8, 8, out, inp)
    assert list(out.get()) == [40320, 1, 1, 5040, 2, 6, 24, 120]
    with pytest.raises(ValueError, match="stack_depth"):
        ctx.load(FACT, stack_depth=0)
    assert ctx.validation_messages() == []


def big_private(nbytes):
    """A kernel whose work-items each own a `.private` array of `nbytes` bytes (in device
    scratch, past 64 KiB): each stores its local id in the last word, reads it back and
    writes it to `out[0]`."""
    last = nbytes - 8
    return f""".version 0.1;
.target 100;
.kernel @k(.param[8] %out) {{
  .private .align 8 @a[{nbytes}];
  .reg .64b %p, %v;
  .reg .32b %i;
  mov.32b %i, %localid.x;
  zext.64b.32b %v, %i;
  st.private.64b [@a+{last}], %v;
  ld.private.64b %v, [@a+{last}];
  ld.param.64b %p, [%out];
  st.global.64b [%p], %v;
}}
"""


def test_a_work_group_beyond_the_largest_allocation_raises_scratch_error(ctx):
    # 256 MiB of `.private` per work-item; one more work-item per group than the device's
    # largest buffer holds. Nothing is allocated or run: the launch is refused first.
    nbytes = 1 << 28
    limit = ctx.device["max_allocation_size"]
    block = limit // nbytes + 1
    if block > ctx.device["max_workgroup_invocations"]:
        pytest.skip(f"the device allocates {limit} bytes: no work-group reaches it")
    k = ctx.load(big_private(nbytes), name="big.pisa").kernel("k")
    out = ctx.zeros(1, np.uint64)
    with pytest.raises(pisa_vk.ScratchError) as info:
        k(block, block, out)
    e = info.value
    assert isinstance(e, pisa_vk.DeviceError) and isinstance(e, RuntimeError)
    assert (e.kernel, e.limit) == ("k", limit)
    # The slice of a work-item holds the array (and may hold more: alignment, a stack).
    assert e.stride >= nbytes and e.invocations >= block
    assert e.size == e.stride * e.invocations and e.size > limit
    assert "`k`" in str(e) and f"{e.size} bytes" in str(e) and str(limit) in str(e)
    assert ctx.validation_messages() == []
