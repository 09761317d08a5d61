#!/usr/bin/env bash
# Builds a self-contained bundle of pisa-vk's release test, benchmark and tool binaries
# (`.devbin/bundle.tar.xz`) for a GPU machine that has a Vulkan driver but no Rust toolchain.
# `scripts/device/run.sh` runs it there. The binaries keep this checkout's absolute paths
# (CARGO_MANIFEST_DIR), so run.sh links the same path to the checkout on that machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=.devbin
rm -rf "$out/stage" && mkdir -p "$out/stage/tests" "$out/stage/benches" "$out/stage/bin"
# Test and bench executables of the crates that drive a device.
list() { python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        pkg = m["package_id"]
        kind = m["target"]["kind"][0]
        device_crate = any(p in pkg for p in ("pisa-conformance", "pisa-runtime", "pisa-vk"))
        if kind == "bench" or device_crate:
            print(kind, m["executable"])
'; }
cargo test --release --locked --workspace --no-run --message-format=json 2>/dev/null | list |
  while read -r kind exe; do
    # Examples run as programs; the 10,000-cycle leak checks are too long for a short lease.
    case "$kind:$(basename "$exe")" in bin:*|example:*leak_check*) ;; *) cp "$exe" "$out/stage/tests/" ;; esac
  done
cargo bench --locked -p pisa-vk -p pisa-runtime -p pisa-translator --no-run --message-format=json 2>/dev/null | list |
  while read -r kind exe; do
    if [ "$kind" = bench ]; then cp "$exe" "$out/stage/benches/"; fi
  done
# The GLSL side of the vs_glsl benchmark, compiled here: the GPU machine may lack glslang.
mkdir -p "$out/stage/glsl"
for f in host-api/benches/vs_glsl/*.comp; do
  glslangValidator -V --target-env vulkan1.2 -o "$out/stage/glsl/$(basename "$f").spv" "$f" >/dev/null
done
cargo build --release --locked -p pisa-vk -p pisa-conformance --bins
cp target/release/pisa-vk target/release/pisa-difftest "$out/stage/bin/"
strip "$out"/stage/tests/* "$out"/stage/benches/* "$out"/stage/bin/*
echo "$root" > "$out/stage/root"
tar -C "$out/stage" -cJf "$out/bundle.tar.xz" .
ls -la "$out/bundle.tar.xz"
