"""Module variables read and written from Python as NumPy arrays (.global and .const)."""

import numpy as np
import pytest

import pisa_vk


@pytest.fixture
def module(ctx, kernels):
    return ctx.load(kernels / "symbols.pisa")  # a fresh program: initial values each test


def bump(module):
    out = np.zeros(5, np.uint32)
    module.kernel("bump")(1, 1, pisa_vk.Out(out))
    return out


def test_initial_values_and_metadata(module):
    counter = module.symbol("counter", np.uint32)
    assert counter.get().tolist() == [41]
    assert (counter.name, counter.space, counter.nbytes, counter.shape) == ("count", "global", 4, (1,))
    table = module.symbol("table", np.uint32)
    assert table.space == "const"
    np.testing.assert_array_equal(np.asarray(table), [1, 2, 3, 4])
    assert module.symbol("table").get().tolist() == [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]
    infos = {s.name: s for s in module.symbols}
    assert infos["count"].host_access == "counter" and infos["table"].space == "const"
    assert infos["scale"].host_access is None and infos["scale"].nbytes == 8


def test_the_kernel_sees_host_writes_and_the_host_sees_kernel_writes(module):
    counter = module.symbol("counter", np.uint32)
    assert bump(module)[4] == 42
    assert counter[0] == 42
    counter.set(1000)
    assert bump(module)[4] == 1001
    counter[0] = 2**32 - 1
    assert bump(module)[4] == 0  # wraps on the device
    assert counter.get().tolist() == [0]


def test_const_is_written_by_the_host_and_read_by_kernels(module):
    # Like the Rust host API (and cudaMemcpyToSymbol), the host may set a .const variable
    # before a dispatch; kernels only read it (PISA has no store to .const).
    table = module.symbol("table", np.uint32)
    np.testing.assert_array_equal(bump(module)[:4], [1, 2, 3, 4])
    table.set([10, 20, 30, 40])
    np.testing.assert_array_equal(bump(module)[:4], [10, 20, 30, 40])
    table[2] = 7
    np.testing.assert_array_equal(bump(module)[:4], [10, 20, 7, 40])


def test_const_cannot_be_stored_to_by_a_kernel(ctx):
    src = """.version 0.1;
.target 100;
.const .align 4 @C[4] = { .32b 7 };
.kernel @k() {
  .reg .32b %r;
  mov.32b %r, 1;
  st.const.32b [@C], %r;
}
"""
    with pytest.raises(pisa_vk.CompileError, match="unknown qualifier `.const` for `st`"):
        ctx.load(src)


def test_dtypes_shapes_and_names(module):
    scale = module.symbol("@scale", np.float64)  # found by its own name (no .host_access)
    scale.set(-0.25)
    assert scale.get().tolist() == [-0.25]
    assert module.symbol("scale", np.uint32).get().tolist() == [0, 0xBFD00000]
    assert module.symbol("table", np.uint16, shape=(2, 4)).get().shape == (2, 4)
    big = module.symbol("counter", ">u4")
    big.set(0x01020304)
    assert module.symbol("counter").get().tolist() == [4, 3, 2, 1]
    assert big.get().tolist() == [0x01020304]


def test_symbol_errors(module):
    with pytest.raises(pisa_vk.NotFoundError, match="no `.host_access` name or module variable `nope`"):
        module.symbol("nope")
    with pytest.raises(LookupError):
        module.kernel("nope")
    with pytest.raises(pisa_vk.SizeError, match="not a whole number"):
        module.symbol("counter", np.float64)
    with pytest.raises(pisa_vk.SizeError, match="shape"):
        module.symbol("table", np.uint32, shape=(3,))
    counter = module.symbol("counter", np.uint32)
    with pytest.raises(ValueError):
        counter.set([1, 2])  # does not broadcast to one element
    assert counter.get().tolist() == [41]
