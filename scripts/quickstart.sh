#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install lavapipe and the Vulkan tools (needs
# root, or sudo), build pisa-vk, and run the vector-add example kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -eq 0 ]; then
  bash scripts/setup-debian.sh
else
  sudo bash scripts/setup-debian.sh
fi
if ! command -v cargo >/dev/null; then
  echo "quickstart: cargo not found: install Rust 1.85 or newer (https://rustup.rs) and run again" >&2
  exit 1
fi
cargo run --release --locked -p pisa-vk -- run examples/vector_add.pisa --kernel vector_add \
  --grid 4 --block 4 --arg 'f32[]:1,2,3,4' --arg 'f32[]:10,20,30,40' --arg 'f32[4]' --arg u32:4
