#!/usr/bin/env bash
# Builds and installs the Python package into a fresh virtual environment with pip (the way a
# user installs it: `pip install ./python`), then runs its pytest suite against the installed
# copy, under the Khronos validation layer unless PISA_VK_VALIDATION says otherwise.
# Needs python3 (3.11+) with venv, cargo, and a Vulkan device; what CI runs (.ci/run).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$python" -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip --disable-pip-version-check)
# The release build of the extension lands in python/target and is reused by later runs.
"${pip[@]}" install --progress-bar off "$here" pytest
"$work/venv/bin/python" -c 'import pisa_vk, sys; print("pisa_vk from", pisa_vk.__file__)'

export PISA_VK_VALIDATION="${PISA_VK_VALIDATION:-1}"
# Run from outside the source tree so that `import pisa_vk` finds the installed package.
cd "$work"
"$work/venv/bin/python" -m pytest -p no:cacheprovider -q "$here/tests" "$@"
