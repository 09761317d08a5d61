"""Shared fixtures: one device context for the session, the test kernels, and a check after
every test that the Khronos validation layer (on with PISA_VK_VALIDATION=1, as in CI) reported
nothing."""

from pathlib import Path

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
