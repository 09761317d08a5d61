"""How the package was installed, when python/run-tests.sh says it tested a built wheel
(PISA_VK_EXPECT_WHEEL=1): an abi3 manylinux wheel, installed and working where no Rust
toolchain is on PATH."""

import importlib.metadata
import os
import shutil
from pathlib import Path

import pytest

import pisa_vk

pytestmark = pytest.mark.skipif(
    os.environ.get("PISA_VK_EXPECT_WHEEL") != "1", reason="not a run of the built wheel (run-tests.sh)"
)


def test_no_rust_toolchain_on_path():
    assert shutil.which("cargo") is None and shutil.which("rustc") is None, os.environ["PATH"]


def test_the_installed_wheel_is_abi3_manylinux():
    dist = importlib.metadata.distribution("pisa-vk")
    wheel = dist.read_text("WHEEL")
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
    assert tags and all(t.startswith("cp311-abi3-manylinux_2_28_") for t in tags), wheel
    # The extension is the wheel's, in site-packages, not a build tree's.
    native = Path(pisa_vk._native.__file__)
    assert "site-packages" in native.parts, native
    assert "dask" in (dist.metadata.get_all("Provides-Extra") or [])
