#!/usr/bin/env bash
# Runs the bundle of `scripts/device/bundle.sh` on a GPU machine without Rust: the device
# list, every test binary of the crates that drive a device (the conformance suite included)
# under the Khronos validation layer, the benchmarks, and a differential campaign.
# Usage: run.sh OUTDIR [DIFFTEST_COUNT]. Logs go to OUTDIR; each step has its own time limit.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: run.sh OUTDIR [DIFFTEST_COUNT]}
count=${2:-10000}
mkdir -p "$out" .devbin/run
tar -C .devbin/run -xJf .devbin/bundle.tar.xz
root=$(cat .devbin/run/root)
# The binaries name files by the absolute path of the checkout they were built in.
if [ "$PWD" != "$root" ] && [ ! -e "$root" ]; then mkdir -p "$(dirname "$root")" && ln -s "$PWD" "$root"; fi
mkdir -p target/release && cp .devbin/run/bin/* target/release/
export PATH=$PWD/target/release:$PATH
{ nvidia-smi -L 2>&1; pisa-vk devices; } 2>&1 | tee "$out/devices.txt"

echo "== tests (PISA_VK_VALIDATION=1)" | tee "$out/tests.log"
for t in .devbin/run/tests/*; do
  echo "-- $(basename "$t")" | tee -a "$out/tests.log"
  PISA_VK_VALIDATION=1 timeout 120 "$t" --test-threads 8 2>&1 \
    | grep -E '^test |test result|panicked|FAILED|left:|right:|error' | tee -a "$out/tests.log"
done

echo "== benches" | tee "$out/bench.log"
export PISA_BENCH_GLSL_SPIRV=$PWD/.devbin/run/glsl
for b in .devbin/run/benches/*; do
  timeout 75 "$b" --bench --warm-up-time 1 --measurement-time 2 2>&1 \
    | grep -vE '^\s*$|Warming|Collecting|Analyzing|Found|outliers|high (mild|severe)|low (mild|severe)' \
    | tee -a "$out/bench.log"
done

echo "== difftest ($count programs)" | tee "$out/difftest.log"
PISA_DIFFTEST_NO_MINIMIZE=1 timeout 150 pisa-difftest --count "$count" --seed 1 \
  --threads "$(nproc)" 2>&1 | tail -n 40 | tee -a "$out/difftest.log"
for f in $(ls target/difftest/failure-*.pisa 2>/dev/null | head -n 4); do cp "$f" "$out/"; done
