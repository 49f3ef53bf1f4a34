#!/usr/bin/env bash
# The one prepared script for a machine with an NVIDIA GPU (driver
# installed, libcuda.so.1 on the loader path). It builds tlcheck with
# -tags cuda, runs the CUDA tests (GPU vs emulation bit for bit, refinement
# of every kernel, planted faults, out-of-memory naming the call), runs
# `tlcheck gate --device cuda`, the planted-fault gate (must exit 1), and
# the benchmarks matmul 1024³/4096³ and sum 2^24, and writes everything
# under $OUT (default ./gpu-check-out). Budget: under 5 minutes.
#
# Needs: Go (the version in go.mod) with the module dependencies available
# (network or a filled module cache), and the cuda.h header for the build:
# ci/cuda-toolchain.sh fetches it, or carry .cuda-toolchain/ from a machine
# that ran it (the link stub is only for linking; at run time the driver's
# libcuda.so.1 is used, so the stubs folder must NOT be on LD_LIBRARY_PATH).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
summary=$OUT/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
fail=0
step() { # name timeout command...
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout "$limit" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  say "$name: rc=$rc ($(( $(date +%s) - t0 )) s)"
  return $rc
}

command -v nvidia-smi >/dev/null && nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
# gorgonia.org/cu's init exits the process without the driver library:
# say so once instead of failing every step.
# grep -c, not grep -q: -q exits at the first match and, under pipefail, the
# writer's SIGPIPE (141) would turn a found library into "not found".
if [ "$(ldconfig -p 2>/dev/null | grep -c 'libcuda\.so\.1')" = 0 ] && [ "$(ls ${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH//:/ }} 2>/dev/null | grep -c '^libcuda\.so\.1$')" = 0 ]; then
  say "gpu-check: no NVIDIA driver here (libcuda.so.1 not found): run this script on a machine with an NVIDIA GPU"
  exit 2
fi
env_line=$(ci/cuda-toolchain.sh --env) || { say "gpu-check: no CUDA toolchain (see above)"; exit 2; }
eval "$env_line"

bin=$OUT/tlcheck-cuda
step build 240 go build -tags cuda -o "$bin" ./cmd/tlcheck || { say "gpu-check: build failed"; exit 2; }
step cuda-tests 120 go test -tags cuda -count=1 -v -run 'GPU|PTX|Refine|Planted|Tree|Elementwise|BadInput' ./cuda || fail=1
rm -rf "$OUT/gate-certs"
# Fewer CPU cases than the default gate (100/50): the CPU stages are not
# what this machine is for, and the whole script must stay under 5 minutes.
step gate 150 "$bin" gate --device cuda --out "$OUT/gate-certs" --json --cases 20 --graphs 10 --cert-cases 20 || fail=1
# The planted-fault self-test must exit exactly 1.
step gate-planted 150 "$bin" gate --device cuda --plant-cuda-bug matmul --out "$OUT/gate-planted-certs" --cases 5 --cert-cases 2 --graphs 2
rc=$?
if [ $rc -eq 1 ]; then say "gate-planted: exits 1 as required"; else say "gate-planted: exit $rc, want 1"; fail=1; fi
rm -rf "$OUT/gate-planted-certs"
step bench 150 go test -tags cuda -count=1 -run '^$' -bench 'GPU' -benchtime 5x ./cuda || fail=1

# Ratios against the H200's published figures: 67 TFLOP/s float32 (SXM,
# non-tensor) and 4.8 TB/s HBM3e.
awk '/GFLOP\/s/ { for (i = 1; i <= NF; i++) if ($(i+1) == "GFLOP/s") printf "%s %s GFLOP/s = %.4f of 67000\n", $1, $i, $i/67000 }
     /GB\/s/    { for (i = 1; i <= NF; i++) if ($(i+1) == "GB/s")    printf "%s %s GB/s = %.4f of 4800\n", $1, $i, $i/4800 }' \
  "$OUT/bench.txt" | tee -a "$summary"
say "gpu-check: $([ $fail -eq 0 ] && echo holds || echo FAILS); results in $OUT"
exit $fail
