"""Shared fixtures: one device context for the session, the test kernels, and a check after
every test that the Khronos validation layer (on with PISA_VK_VALIDATION=1, as in CI) reported
nothing."""

import time
from pathlib import Path

import numpy as np
import pytest

import pisa_vk

KERNELS = Path(__file__).parent / "kernels"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def pytest_report_header(config):
    device = pisa_vk.Context.devices()
    names = ", ".join(d["name"] for d in device) or "none"
    return [f"pisa_vk: {pisa_vk.__file__}", f"Vulkan devices: {names}"]


@pytest.fixture(scope="session")
def ctx():
    return pisa_vk.Context()


@pytest.fixture(autouse=True)
def no_validation_messages(ctx):
    ctx.validation_messages()  # drop what came before the test (context creation)
    yield
    messages = ctx.validation_messages()
    assert not messages, "validation layer messages:\n" + "\n".join(messages)


@pytest.fixture(scope="session")
def kernels():
    return KERNELS


@pytest.fixture(scope="session")
def examples():
    if not (EXAMPLES / "saxpy.pisa").exists():
        pytest.skip(f"SKIPPED: the repository's examples/ folder is not at {EXAMPLES}")
    return EXAMPLES


A, C, M = 1664525, 1013904223, 2**32


def lcg_power(n: int, x: int = 1) -> int:
    """f^n(x) for f(x) = A x + C mod 2^32 (what kernels/spin.pisa computes with n loop
    iterations), by squaring the affine map: independent of the kernel's loop."""
    a, c, pa, pc = A, C, 1, 0
    while n:
        if n & 1:
            pa, pc = (a * pa) % M, (a * pc + c) % M
        a, c = (a * a) % M, (a * c + c) % M
        n >>= 1
    return (pa * x + pc) % M


class Spin:
    """kernels/spin.pisa on one work-item, with the iteration count for a wanted duration."""

    def __init__(self, ctx):
        self.kernel = ctx.load(KERNELS / "spin.pisa").kernel("spin")
        out = np.zeros(1, np.uint32)
        n = 1 << 20
        while True:
            start = time.perf_counter()
            self.kernel(1, 1, out, n)
            took = time.perf_counter() - start
            assert out[0] == lcg_power(n)
            if took > 0.05 or n >= 1 << 31:
                break
            n <<= 2
        self.per_iteration = max(took, 1e-6) / n

    def iterations(self, seconds: float) -> int:
        return max(1, min(M - 1, int(seconds / self.per_iteration)))


@pytest.fixture(scope="session")
def spin(ctx):
    return Spin(ctx)
