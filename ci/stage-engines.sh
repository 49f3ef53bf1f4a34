#!/usr/bin/env bash
# ci/stage-engines.sh: the Python engines stage of CI (issue 23, docs/engines.md).
#
# Creates a virtual environment, installs the pinned lock file requirements.lock (pip's
# cache in $PIP_CACHE_DIR, default ~/.cache/pip, so a second run downloads
# nothing), runs pytest over engines/python, then
#   tlcheck adapters run --engine torch,jax,onnxruntime --random 300
# whose exit 1 (standing findings, adapters/FINDINGS.md) is expected, as for the Go
# adapters; exit 2 (an engine that does not start, bad usage) fails the stage.
#
# Time on the 2-core CI machine: install ~3-4 min cold (torch's CUDA wheels are a PyPI
# dependency of the torch wheel; about 3 GB), ~40 s warm; pytest ~1 min; the run ~4 min.
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
set +e
TLCHECK_PYTHON="$venv/bin/python" TLCHECK_ENGINES_DIR="$root/engines/python" \
  "$out/tlcheck-adapters" run --engine torch,jax,onnxruntime --random 300 > "$out/table.txt" 2> "$out/stderr.txt"
code=$?
set -e
grep -E '^(torch|jax|onnxruntime) \(' "$out/table.txt" || true
if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then
  echo "engines: tlcheck adapters run exited $code:" >&2
  cat "$out/stderr.txt" >&2
  exit 1
fi
echo "engines: tlcheck adapters run exited $code ($( [ "$code" -eq 1 ] && echo 'standing findings, adapters/FINDINGS.md' || echo 'no finding'))"
echo "engines: stage took $(( $(date +%s) - start )) s"
