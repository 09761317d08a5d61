#!/usr/bin/env bash
# Builds the Python package the way it ships and runs its pytest suite against the installed
# copy, with no Rust toolchain on PATH, under the Khronos validation layer unless
# PISA_VK_VALIDATION says otherwise. What CI runs (.ci/run); docs/python.md, "Wheels".
#
#  1. `maturin sdist`: the source distribution (the workspace crates it needs included);
#  2. `pip wheel` of that sdist (a source install, as pip does for `pip install ./python` or
#     an sdist from an index): maturin builds the extension (release) and, with zig from the
#     `ziglang` package, links it against glibc 2.28 and audits it, so the wheel is
#     `cp311-abi3-manylinux_2_28_x86_64` (MATURIN_PEP517_ARGS);
#  3. a fresh virtual environment installs that wheel with its `dask` extra and pytest, and
#     runs python/tests with PATH = the venv's bin only (no cargo, no rustc: the suite checks).
#
# One release build in all; cargo's artifacts stay in python/target for the next run.
# PISA_VK_WHEEL=path/to.whl skips 1-2 and tests that wheel. Arguments go to pytest.
# Needs python3 (3.11+) with venv, cargo, PyPI (maturin, ziglang, numpy, dask, pytest) and
# a Vulkan device.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
pipflags=(--disable-pip-version-check --progress-bar off)

wheel="${PISA_VK_WHEEL:-}"
if [ -z "$wheel" ]; then
    "$python" -m venv "$work/build"
    "$work/build/bin/python" -m pip install "${pipflags[@]}" 'maturin>=1.9.4,<2' ziglang
    PATH="$work/build/bin:$PATH" maturin sdist -m "$here/Cargo.toml" -o "$work/dist"
    sdist=("$work"/dist/*.tar.gz)
    # --no-build-isolation: the maturin and zig installed above build it.
    PATH="$work/build/bin:$PATH" CARGO_TARGET_DIR="$here/target" \
        MATURIN_PEP517_ARGS="--compatibility manylinux_2_28 --zig" \
        "$work/build/bin/python" -m pip wheel "${pipflags[@]}" --no-deps --no-build-isolation \
        -w "$work/dist" "${sdist[0]}"
    wheels=("$work"/dist/*.whl)
    wheel="${wheels[0]}"
    echo "built $(basename "${sdist[0]}") and $(basename "$wheel")"
fi

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install "${pipflags[@]}" "$wheel[dask]" pytest
# Run from outside the source tree so that `import pisa_vk` finds the installed package, with
# a PATH where no Rust toolchain can be found (only the venv's bin).
cd "$work"
export PISA_VK_VALIDATION="${PISA_VK_VALIDATION:-1}"
PATH="$work/venv/bin" "$work/venv/bin/python" -c 'import pisa_vk; print("pisa_vk from", pisa_vk.__file__)'
PATH="$work/venv/bin" PISA_VK_EXPECT_WHEEL=1 \
    "$work/venv/bin/python" -m pytest -p no:cacheprovider -q "$here/tests" "$@"
