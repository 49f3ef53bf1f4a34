#!/usr/bin/env bash
# ci/stage-engines.sh: the Python engines stage of CI (issue 23, docs/engines.md).
#
# Creates a virtual environment, installs the pinned lock file requirements.lock (pip's
# cache in $PIP_CACHE_DIR, default ~/.cache/pip, so a second run downloads
# nothing), runs pytest over engines/python, then
#   tlcheck adapters run --engine torch,onnxruntime --random 300
#   tlcheck adapters run --engine jax --random 50        (JAX_RANDOM; see below)
# whose exit 1 (standing findings, adapters/FINDINGS.md) is expected, as for the Go
# adapters; exit 2 (an engine that does not start, bad usage) fails the stage.
#
# Time on the 2-core machine (measured under heavy load from other jobs, so an upper bound):
# install ~4 min cold (torch's CUDA wheels are a PyPI dependency of the torch wheel, about
# 3 GB), seconds warm; pytest ~3-4 min (export_grads ~30 s CPU, 1-3 min wall: seven torch modules
# and a JAX MLP (eager and jit) exported, nine compare-grad holds and twenty-one one-ulp edits; the pinned
# findings ~1 min);
# torch + onnxruntime with 300 random cases ~1 min; jax with 50 ~5 min.
# It prints its wall time at the end. Needs python3 (3.11) and go.
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

# JAX compiles every graph (jit) and every primitive at every shape (eager): on the 2-core
# machine its 300 random cases alone took over 25 minutes, so JAX gets the fixed cases and
# --random ${JAX_RANDOM:-50}; PyTorch and ONNX Runtime get --random 300.
runs=("--engine torch,onnxruntime --random 300" "--engine jax --random ${JAX_RANDOM:-50}")
for args in "${runs[@]}"; do
  set +e
  # shellcheck disable=SC2086
  TLCHECK_PYTHON="$venv/bin/python" TLCHECK_ENGINES_DIR="$root/engines/python" \
    "$out/tlcheck-adapters" run $args > "$out/table.txt" 2> "$out/stderr.txt"
  code=$?
  set -e
  grep -E '^(torch|jax|onnxruntime) \(' "$out/table.txt" || true
  if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then
    echo "engines: tlcheck adapters run $args exited $code:" >&2
    cat "$out/stderr.txt" >&2
    exit 1
  fi
  echo "engines: tlcheck adapters run $args exited $code ($( [ "$code" -eq 1 ] && echo 'standing findings, adapters/FINDINGS.md' || echo 'no finding'))"
done
echo "engines: stage took $(( $(date +%s) - start )) s"
