#!/usr/bin/env bash
# Runs the bundle of `scripts/device/bundle.sh` on a GPU machine without Rust, inside one short
# lease (about 9 minutes in all): the device list; every test binary of the crates that drive a
# device (the conformance suite included) under the Khronos validation layer, four at a time;
# the benchmarks that drive a device (the translator's CPU-only ones are left out), one at a
# time so that nothing else disturbs their timings; then the exhaustive f32 transcendental run
# beside a differential campaign. Each stage stops starting work at its deadline and each
# program has its own time limit, so a hang costs one program, not the lease.
#
# Usage: run.sh OUTDIR [DIFFTEST_COUNT]. OUTDIR receives devices.txt, tests.log (the summary
# first, then every binary's whole output), bench.log, exhaustive.log and difftest.log.
# Stage budgets in seconds: PISA_DEVICE_TESTS_S (230), PISA_DEVICE_BENCH_S (180; 0 skips it),
# PISA_DEVICE_LAST_S (110: the exhaustive run and the campaign, side by side; 0 skips it).
# PISA_DEVICE_REQUIRE_GPU=1 stops at once when Vulkan shows no GPU.
#
# The machine needs a Vulkan loader, the GPU's driver (ICD) and the Khronos validation layer.
# The first lease (NVIDIA H200, 2026-12-04) had the driver only: Debian's libvulkan1,
# vulkan-validationlayers, libglvnd0, libegl1, libgl1, libglx0, libgles2 and libopengl0
# packages, unpacked with `dpkg -x PKG /` and `ldconfig`, and
# VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json made it work (without
# the libglvnd packages the loader says "Unable to find a Vulkan driver").
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: run.sh OUTDIR [DIFFTEST_COUNT]}
count=${2:-10000}
tests_s=${PISA_DEVICE_TESTS_S:-230}
bench_s=${PISA_DEVICE_BENCH_S:-180}
last_s=${PISA_DEVICE_LAST_S:-110}
out=$(mkdir -p "$out" && cd "$out" && pwd)
mkdir -p .devbin/run
tar -C .devbin/run -xJf .devbin/bundle.tar.xz
root=$(cat .devbin/run/root)
# The binaries name files by the absolute path of the checkout they were built in.
if [ "$PWD" != "$root" ] && [ ! -e "$root" ]; then mkdir -p "$(dirname "$root")" && ln -s "$PWD" "$root"; fi
mkdir -p target/release && cp .devbin/run/bin/* target/release/
export PATH=$PWD/target/release:$PATH
{ nvidia-smi -L; lscpu | grep -E '^(Model name|CPU\(s\))'; grep -o -m1 'avx512f' /proc/cpuinfo; pisa-vk devices; } 2>&1 |
  tee "$out/devices.txt"
# PISA_DEVICE_REQUIRE_GPU=1: stop here, at once, when Vulkan shows no GPU (a driver not found).
if [ "${PISA_DEVICE_REQUIRE_GPU:-0}" = 1 ] && ! grep -qE '\((Discrete|Integrated|Virtual)\)' "$out/devices.txt"; then
  echo "run.sh: no GPU among the Vulkan devices; stopping" >&2
  exit 2
fi

# One test binary: its whole output to a log of its own, a one-line verdict to stdout.
run_test() {
  local t=$1 deadline=$2 name log rc
  set -o pipefail
  name=$(basename "$t")
  log="$out/tests.d/$name.log"
  if [ "$(date +%s)" -ge "$deadline" ]; then echo "$name: NOT RUN (stage deadline)"; return; fi
  local start=$SECONDS left=$((deadline + 20 - $(date +%s)))
  # At most 200 s, and not much past the stage's deadline.
  PISA_VK_VALIDATION=1 timeout $((left < 200 ? left : 200)) "$t" --test-threads 4 2>&1 |
    head -c 2000000 >"$log"
  rc=$?
  echo "$name: rc $rc, $((SECONDS - start)) s, $(grep -E '^test result' "$log" | tr '\n' ' ')"
}
export -f run_test
export out
echo "== tests (PISA_VK_VALIDATION=1), $(date -u +%T)"
mkdir -p "$out/tests.d"
deadline=$(($(date +%s) + tests_s))
# Largest first: the long suites start early.
ls -S .devbin/run/tests/* | xargs -P 4 -I{} bash -c 'run_test "$1" '"$deadline" _ {} |
  tee "$out/tests.summary"
{
  cat "$out/tests.summary"
  for f in "$out"/tests.d/*.log; do
    [ -e "$f" ] || continue
    echo "==== $(basename "$f" .log)"
    grep -vE '^test .* \.\.\. ok$' "$f"
  done
} >"$out/tests.log"
rm -rf "$out/tests.d" "$out/tests.summary"

echo "== benches, $(date -u +%T)" | tee "$out/bench.log"
export PISA_BENCH_GLSL_SPIRV=$PWD/.devbin/run/glsl
deadline=$(($(date +%s) + bench_s))
bench() { # bench NAME [ENV=VALUE...]: every bench binary called NAME-<hash>
  local name=$1 b
  shift
  for b in .devbin/run/benches/"$name"-*; do
    [ -e "$b" ] || continue
    local left=$((deadline + 10 - $(date +%s)))
    if [ "$left" -le 10 ]; then echo "-- $name: NOT RUN (stage deadline)"; continue; fi
    echo "-- $name $*" && env "$@" timeout $((left < 60 ? left : 60)) "$b" --bench \
      --warm-up-time 1 --measurement-time 2 2>&1 |
      grep -vE '^\s*$|Warming|Collecting|Analyzing|Found|outliers|high (mild|severe)|low (mild|severe)'
  done
}
{
  bench float_rounding
  bench vs_glsl
  bench virtual_lanes
  bench recursion
  bench memcheck
  bench vs_glsl PISA_BENCH_CANCEL=1
  bench reduction
  bench dispatch PISA_BENCH_ROUNDS=500
} 2>&1 | tee -a "$out/bench.log"

if [ "$last_s" -eq 0 ]; then echo "== done (last stage skipped), $(date -u +%T)"; exit 0; fi
echo "== last stage, $(date -u +%T): the exhaustive f32 run beside a difftest campaign"
half=$((($(nproc) + 1) / 2))
(
  echo "== every f32 input of the transcendentals (docs/float-accuracy.md)"
  for t in .devbin/run/tests/float_transcendental*; do
    PISA_EXHAUSTIVE=${PISA_EXHAUSTIVE:-fsin,fcos,fexp2,flog2,ftanh,frcp,frsqrt.fast} \
      timeout "$last_s" "$t" --ignored --exact every_f32_input --nocapture 2>&1 | tail -n 20
    echo "rc $?"
  done
) >"$out/exhaustive.log" 2>&1 &
(
  echo "== difftest (up to $count programs, seed 1, $half threads)"
  PISA_DIFFTEST_NO_MINIMIZE=1 timeout "$last_s" pisa-difftest --count "$count" --seed 1 \
    --threads "$half" 2>&1 | tail -n 40
  echo "rc $?"
  ls target/difftest/failure-*.pisa 2>/dev/null | head -n 4 | while read -r f; do
    echo "==== $f"
    cat "$f"
  done
) >"$out/difftest.log" 2>&1 &
wait
cat "$out/exhaustive.log" "$out/difftest.log"
echo "== done, $(date -u +%T)"
