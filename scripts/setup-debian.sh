#!/usr/bin/env bash
# Installs what pisa-vk needs on a fresh Debian 12 (bookworm) machine, as root:
# Mesa 25's lavapipe (CPU Vulkan driver) from bookworm-backports, the Vulkan loader,
# the Khronos validation layer, SPIRV-Tools and glslang-tools (glslangValidator, for the GLSL
# side of `cargo bench --bench vs_glsl`), plus a C++ toolchain for the
# `spirv-tools` crate. Idempotent: a second run changes nothing.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "setup-debian.sh: run as root (apt-get needs it)" >&2
  exit 2
fi

export DEBIAN_FRONTEND=noninteractive
sources=/etc/apt/sources.list.d/debian.sources

# Add bookworm-backports to the existing Suites: line that names bookworm, reusing that
# entry's URI (no mirror host name is written anywhere by this script).
if [ -f "$sources" ] && ! grep -q 'bookworm-backports' "$sources"; then
  sed -i -E '0,/^Suites:(.*\bbookworm\b.*)$/s//Suites:\1 bookworm-backports/' "$sources"
fi

apt-get update -qq
apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers >/dev/null
apt-get install -y -qq libvulkan1 vulkan-tools spirv-tools glslang-tools vulkan-validationlayers \
  build-essential cmake python3 pkg-config git >/dev/null
# The Python package (python/, docs/python.md): venv and pip to build and test it in.
apt-get install -y -qq python3-venv python3-pip >/dev/null

echo "setup-debian.sh: Vulkan devices:"
vulkaninfo --summary 2>/dev/null | grep -E 'deviceName|driverName|apiVersion' || true
