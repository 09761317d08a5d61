#!/usr/bin/env bash
# The test command of the README: every crate's tests, the conformance suite on the Vulkan
# device of the machine (lavapipe in CI) under the Khronos validation layer, which fails a
# test on any message.
#
# `scripts/test.sh --quick` is the fast loop for the common edit (docs/architecture.md,
# "Testing and measuring"): every crate's unit tests, the translator's suites (front end, golden SPIR-V,
# words), and a small device sample (integer, control flow, memory, the driver-bug probes),
# all under the validation layer. CI runs the full command.
set -euo pipefail
cd "$(dirname "$0")/.."
export PISA_VK_VALIDATION="${PISA_VK_VALIDATION:-1}"
# A first dispatch includes lavapipe's compile of the kernel, which on a cold shader cache,
# with the tests' threads sharing the cores, can pass the default 60 s for the largest
# kernels (checked ones, sub-group kernels on virtual lanes: docs/performance.md); the tests
# of timeouts set their own.
export PISA_VK_TIMEOUT="${PISA_VK_TIMEOUT:-300}"
if [ "${1:-}" = "--quick" ]; then
  shift
  # --workspace everywhere: the same feature set as the full command, so nothing is rebuilt.
  exec cargo test --workspace --locked --lib \
    --test frontend_examples --test frontend_errors --test frontend_diagnostics \
    --test frontend_ir --test did_you_mean --test golden --test spirv_words --test link \
    --test integer --test control_flow --test memory --test driver_bugs "$@"
fi
cargo test --workspace --locked "$@"
