#!/bin/sh
# ci/stage-perf.sh — the performance issue's checks that the default
# `go test ./...` leaves out (issue 24):
#   * enclose's containment sweep over every ONNX backend test model in
#     ../shared/onnx, including the few whose exact evaluation is slow
#     (TLCHECK_EXHAUSTIVE=1; about 10 s of CPU);
#   * the pytest of tools/perf (the ImageNet size tables the limits
#     defaults are derived from; under 1 s);
#   * one short run of the interval/f64/rat gradient benchmark, so that it
#     keeps compiling and running (a few seconds; its figures are not
#     judged here: the machine is shared).
# Expected wall time on the 2-core CI machine: under a minute after the
# build. Exits non-zero on the first failure.
set -eu
start=$(date +%s)
cd "$(dirname "$0")/.."
TLCHECK_EXHAUSTIVE=1 go test -count=1 -run 'TestBackendModelsEnclosed' ./enclose
"${TLCHECK_PYTHON:-python3}" -m pytest -q -p no:cacheprovider tools/perf
go test -count=1 -run '^$' -bench 'GradDeepMLP' -benchtime=3x ./irgrad
echo "stage-perf: ok in $(( $(date +%s) - start )) s"
