#!/usr/bin/env bash
# ci/stage-engines.sh: the Python engines stage of CI (issue 23, docs/engines.md).
#
# Creates a virtual environment, installs the pinned lock file requirements.lock (pip's
# cache in $PIP_CACHE_DIR, default ~/.cache/pip, so a second run downloads
# nothing), runs pytest over engines/python, then
#   tlcheck adapters run --engine torch,onnxruntime --random 300
#   tlcheck adapters run --engine jax --random 300          (JAX_RANDOM)
#   TLCHECK_TORCH_COMPILE=1 tlcheck adapters run --engine torch --case $TORCH_COMPILE_CASES
# whose exit 1 (standing findings, adapters/FINDINGS.md) is expected, as for the Go
# adapters; exit 2 (an engine that does not start, bad usage) fails the stage.
#
# Compilation caches (docs/engines.md, "CI"): JAX's persistent compilation cache in
# $TLCHECK_JAX_CACHE (default ~/.cache/tlcheck-jax-cache) and inductor's FX graph cache in
# $TORCHINDUCTOR_CACHE_DIR (default ~/.cache/tlcheck-inductor-cache), like pip's cache: the
# cases are seeded, so a second run loads the executables instead of compiling them.
#
# Time on the 2-core machine (measured under heavy load from other jobs, load average 13-22,
# so upper bounds): install ~4 min cold (torch's CUDA wheels are a PyPI dependency of the torch
# wheel, about 3 GB), seconds warm; pytest ~4-5 min (export_grads: seven torch modules, a JAX
# MLP (eager and jit) and four tools/models zoo models exported, thirteen compare-grad runs and
# the planted one-ulp edits; the pinned findings ~1 min); torch + onnxruntime with 300 random
# cases ~1 min; jax with 300: 22.5 min wall / 6.3 min CPU with a cold cache (load 15), warm
# 6.7 min; the compile machine on its sample ~70 s cold, ~24 s warm. The whole stage with warm
# caches took 619 s (docs/engines.md "CI").
# It prints each run's wall time and its own at the end. Needs python3 (3.11) and go.
set -euo pipefail
start=$(date +%s)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv=${TLCHECK_ENGINES_VENV:-"$HOME/.cache/tlcheck-engines-venv"}
export PYTHONDONTWRITEBYTECODE=1
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-"$HOME/.cache/pip"}
export PIP_DISABLE_PIP_VERSION_CHECK=1
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet -r requirements.lock
echo "engines: installed requirements.lock in $(( $(date +%s) - start )) s"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -C adapters -o "$out/tlcheck-adapters" ./cmd/tlcheck-adapters
go build -o "$out/tlcheck" ./cmd/tlcheck

(cd engines/python && TLCHECK_REQUIRE_ENGINES=1 TLCHECK_ADAPTERS_BIN="$out/tlcheck-adapters" TLCHECK_BIN="$out/tlcheck" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider tests)

# JAX compiles every graph (jit) and every primitive at every shape (eager), XLA's compile
# being most of its time: the persistent cache makes a second run load them. The compile
# machine (torch.compile, inductor) runs on a sample of fixed cases (TORCH_COMPILE_CASES): a cold
# inductor compile costs 5-11 s per graph and format here, a warm one under 1 s.
export TLCHECK_JAX_CACHE=${TLCHECK_JAX_CACHE:-"$HOME/.cache/tlcheck-jax-cache"}
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-"$HOME/.cache/tlcheck-inductor-cache"}
compile_cases=${TORCH_COMPILE_CASES:-exp,relu,softmax,conv,layer_norm,dag_mlp}
runs=("--engine torch,onnxruntime --random 300" "--engine jax --random ${JAX_RANDOM:-300}"
  "--engine torch --case $compile_cases --timeout 10m")
for args in "${runs[@]}"; do
  set +e
  t0=$(date +%s)
  compile=0
  case "$args" in *--case*) compile=1 ;; esac
  # shellcheck disable=SC2086
  TLCHECK_TORCH_COMPILE=$compile TLCHECK_PYTHON="$venv/bin/python" TLCHECK_ENGINES_DIR="$root/engines/python" \
    "$out/tlcheck-adapters" run $args > "$out/table.txt" 2> "$out/stderr.txt"
  code=$?
  set -e
  echo "engines: tlcheck adapters run $args took $(( $(date +%s) - t0 )) s (TLCHECK_TORCH_COMPILE=$compile)"
  grep -E '^(torch|jax|onnxruntime) \(' "$out/table.txt" || true
  if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then
    echo "engines: tlcheck adapters run $args exited $code:" >&2
    cat "$out/stderr.txt" >&2
    exit 1
  fi
  echo "engines: tlcheck adapters run $args exited $code ($( [ "$code" -eq 1 ] && echo 'standing findings, adapters/FINDINGS.md' || echo 'no finding'))"
done
echo "engines: stage took $(( $(date +%s) - start )) s"
