#!/usr/bin/env bash
# The test command of the README: every crate's tests, the conformance suite on the Vulkan
# device of the machine (lavapipe in CI) under the Khronos validation layer, which fails a
# test on any message.
set -euo pipefail
cd "$(dirname "$0")/.."
export PISA_VK_VALIDATION="${PISA_VK_VALIDATION:-1}"
cargo test --workspace --locked "$@"
