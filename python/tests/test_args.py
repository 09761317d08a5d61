"""How arguments reach the kernel: scalar bytes per .param size (checked by a kernel that
copies its parameters out), array copies in and out, Buffers."""

import struct

import numpy as np
import pytest

import pisa_vk


@pytest.fixture(scope="module")
def echo(ctx, kernels):
    return ctx.load(kernels / "echo.pisa").kernel("echo")


def run_echo(echo, a, b, c, d, s=bytes(16)):
    out = np.zeros(32, np.uint8)
    echo(1, 1, a, b, c, d, s, pisa_vk.Out(out))
    return out.tobytes()


def expect(a: bytes, b: bytes, c: bytes, d: bytes, s: bytes = bytes(16)) -> bytes:
    return a + b"\0" + b + c + d + s


def test_params_describe_the_kernel(echo):
    assert [(p.name, p.size) for p in echo.params] == [
        ("a", 1), ("b", 2), ("c", 4), ("d", 8), ("s", 16), ("out", 8)
    ]
    offsets = [p.offset for p in echo.params]
    assert offsets == sorted(offsets) and all(p.offset % p.align == 0 for p in echo.params)


@pytest.mark.parametrize(
    "a, b, c, d, want",
    [
        (0, 0, 0, 0, expect(b"\0", b"\0\0", b"\0" * 4, b"\0" * 8)),
        (-1, -1, -1, -1, expect(b"\xff", b"\xff\xff", b"\xff" * 4, b"\xff" * 8)),
        (255, 65535, 2**32 - 1, 2**64 - 1, expect(b"\xff", b"\xff\xff", b"\xff" * 4, b"\xff" * 8)),
        (-128, -32768, -(2**31), -(2**63),
         expect(b"\x80", b"\x00\x80", b"\0\0\0\x80", b"\0" * 7 + b"\x80")),
        (True, 0x1234, 0x12345678, 0x0123456789ABCDEF,
         expect(b"\x01", b"\x34\x12", b"\x78\x56\x34\x12", bytes.fromhex("efcdab8967452301"))),
    ],
)
def test_python_ints_are_twos_complement_of_the_param_size(echo, a, b, c, d, want):
    assert run_echo(echo, a, b, c, d) == want


def test_python_floats_take_the_param_size(echo):
    # .param[2] -> binary16, .param[4] -> binary32, .param[8] -> binary64
    got = run_echo(echo, 0, 1.0, -2.5, 0.1)
    assert got[2:4] == b"\x00\x3c"  # 1.0 as half
    assert got[4:8] == struct.pack("<f", -2.5)
    assert got[8:16] == struct.pack("<d", 0.1)
    got = run_echo(echo, 0, float("inf"), float("nan"), -0.0)
    assert got[2:4] == b"\x00\x7c"
    assert np.isnan(np.frombuffer(got[4:8], "<f4")[0])
    assert got[8:16] == b"\0" * 7 + b"\x80"


def test_numpy_scalars_pass_their_bytes(echo):
    got = run_echo(echo, np.int8(-2), np.float16(0.5), np.float32(3.25), np.float64(-1e300))
    assert got[0:1] == b"\xfe"
    assert got[2:4] == np.float16(0.5).tobytes()
    assert got[4:8] == struct.pack("<f", 3.25)
    assert got[8:16] == struct.pack("<d", -1e300)
    big_endian = np.array(0x01020304, dtype=">u4")[()]
    assert run_echo(echo, 0, 0, big_endian, 0)[4:8] == b"\x04\x03\x02\x01"


def test_bytes_fill_a_struct_param(echo):
    s = bytes(range(16))
    assert run_echo(echo, 0, 0, 0, 0, s)[16:32] == s


@pytest.mark.parametrize(
    "args, message",
    [
        ((256, 0, 0, 0), "does not fit in 8 bits"),
        ((-129, 0, 0, 0), "does not fit in 8 bits"),
        ((0, 0, 2**32, 0), "does not fit in 32 bits"),
        ((0, 0, 0, 2**64), "does not fit in 64 bits"),
        ((1.0, 0, 0, 0), "a float is 2, 4 or 8 bytes"),
        ((0, 0, 1e39, 0), "overflows a 32-bit float"),
        ((0, 1e5, 0, 0), "overflows a 16-bit float"),
        ((np.float32(1), 0, 0, 0), "float32 scalar is 4 bytes"),
        ((0, 0, np.int64(1), 0), "int64 scalar is 8 bytes"),
        (("1", 0, 0, 0), "a str cannot be passed"),
        (([1], 0, 0, 0), "a list cannot be passed"),
        ((None, 0, 0, 0), "a NoneType cannot be passed"),
        ((0, 0, np.zeros(2, np.float32), 0), r"argument 2 \(%c\) is .param\[4\]; an array"),
        ((0, 0, 0, b"\0" * 7), "7 bytes were given"),
    ],
)
def test_wrong_argument_types_raise_argument_error(echo, args, message):
    out = np.zeros(32, np.uint8)
    with pytest.raises(pisa_vk.ArgumentError, match=message) as info:
        echo(1, 1, *args, bytes(16), out)
    assert isinstance(info.value, TypeError)


def test_wrong_argument_count(echo):
    message = r"takes 6 argument\(s\) \(%a, %b, %c, %d, %s, %out\), 5 given"
    with pytest.raises(pisa_vk.ArgumentError, match=message):
        echo(1, 1, 0, 0, 0, 0, bytes(16))
    with pytest.raises(TypeError):
        echo(1, 1)


SCALE = """.version 0.1;
.target 100;
// data[i] = data[i] * 2 + in[i] for i < n; in[i] = 0 afterwards
.kernel @twice(.param[8] %data, .param[8] %in, .param[4] %n) {
  .reg .64b %p, %q, %off;
  .reg .32b %i, %g, %s, %l, %len, %x, %y, %zero;
  .pred %out;
  ld.param.64b %p, [%data];
  ld.param.64b %q, [%in];
  ld.param.32b %len, [%n];
  mov.32b %g, %groupid.x;
  mov.32b %s, %enqueuedlocalsize.x;
  mov.32b %l, %localid.x;
  umad.32b %i, %g, %s, %l;
  ucmp.ge.32b %out, %i, %len;
  return.cond %out;
  umul.full.32b %off, %i, 4;
  iadd.64b %p, %p, %off;
  iadd.64b %q, %q, %off;
  ld.global.32b %x, [%p];
  ld.global.32b %y, [%q];
  umad.32b %x, %x, 2, %y;
  st.global.32b [%p], %x;
  mov.32b %zero, 0;
  st.global.32b [%q], %zero;
}
"""


@pytest.fixture(scope="module")
def twice(ctx):
    return ctx.load(SCALE, name="twice.pisa").kernel("@twice")


def test_in_is_not_copied_back_out_is_not_uploaded(twice):
    data = np.arange(8, dtype=np.uint32)
    inc = np.full(8, 100, np.uint32)
    twice(8, 4, data, pisa_vk.In(inc), 8)
    np.testing.assert_array_equal(data, np.arange(8) * 2 + 100)
    np.testing.assert_array_equal(inc, 100)  # the kernel zeroed its copy only
    data = np.arange(8, dtype=np.uint32)
    twice(8, 4, pisa_vk.Out(data), inc, 8)  # the device copy of data starts at zero
    np.testing.assert_array_equal(data, 100)
    np.testing.assert_array_equal(inc, 0)  # copied back by default


def test_read_only_arrays_are_not_copied_back(twice):
    data = np.arange(8, dtype=np.uint32)
    inc = np.full(8, 1, np.uint32)
    inc.flags.writeable = False
    twice(8, 4, data, inc, 8)
    np.testing.assert_array_equal(inc, 1)
    np.testing.assert_array_equal(data, np.arange(8) * 2 + 1)
    with pytest.raises(ValueError, match="read-only"):
        pisa_vk.Out(inc)


def test_non_contiguous_and_big_endian_arrays(twice):
    base = np.arange(16, dtype=np.uint32)
    view = base[::2]  # not contiguous: a contiguous copy travels, results land in the view
    inc = np.arange(8, dtype=">u4")  # big-endian: converted for the device and back
    twice(8, 4, view, inc, 8)
    np.testing.assert_array_equal(base[::2], np.arange(0, 16, 2) * 2 + np.arange(8))
    np.testing.assert_array_equal(base[1::2], np.arange(1, 16, 2))
    assert inc.dtype == np.dtype(">u4")
    np.testing.assert_array_equal(inc, 0)


def test_same_array_twice_is_one_device_buffer(twice):
    data = np.arange(8, dtype=np.uint32)
    # data[i] = data[i]*2 + data[i] and then data[i] = 0, in one memory: each work-item reads
    # both before it writes, so the result is 0 everywhere (two copies would give 3*i)
    twice(8, 4, data, data, 8)
    np.testing.assert_array_equal(data, 0)


def test_two_dimensional_array_and_zero_sized_grid(twice):
    data = np.arange(12, dtype=np.uint32).reshape(3, 4)
    twice(12, 4, data, np.ones((3, 4), np.uint32), 12)
    np.testing.assert_array_equal(data, np.arange(12).reshape(3, 4) * 2 + 1)
    twice(0, 4, data, np.ones((3, 4), np.uint32), 12)  # no work-item: nothing changes
    np.testing.assert_array_equal(data, np.arange(12).reshape(3, 4) * 2 + 1)


def test_buffers_stay_on_the_device(ctx, twice):
    data = ctx.buffer(np.arange(8, dtype=np.uint32))
    inc = ctx.buffer(np.full(8, 3, np.uint32))
    twice(8, 4, data, inc, 8)
    twice(8, 4, data, inc, 8)  # inc is 0 on the device after the first call
    np.testing.assert_array_equal(data.get(), np.arange(8) * 4 + 6)
    np.testing.assert_array_equal(inc.get(), 0)
    inc.set(5)  # broadcast
    twice(8, 4, data, inc, 8)
    np.testing.assert_array_equal(data.get(), (np.arange(8) * 4 + 6) * 2 + 5)
    out = np.empty(8, np.uint32)
    assert data.get(out) is out
    assert len(data) == 8 and data.size == 8 and data.address % 16 == 0
    with pytest.raises(pisa_vk.SizeError):
        data.get(np.empty(4, np.uint32))
    with pytest.raises(ValueError):
        data.set(np.zeros(3, np.uint32))  # does not broadcast to (8,)
