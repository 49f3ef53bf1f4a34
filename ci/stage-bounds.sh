#!/usr/bin/env bash
# stage-bounds: the first-order rounding bound (fpbound) and its generator
# (fpbound/nets). Runs the package tests of fpbound — soundness of the sharp
# bound against every summation order (left, reverse, pairwise, random,
# 8 partial accumulators; each with and without FMA) on the generated MLPs
# (depths 0–4) and conv stacks (depths 1–2), planted-error detection, and
# the classic bound's own suite — plus the compare command's tests.
# Takes about 1–2 minutes of wall time on two shared cores (the fpbound
# suite ~30–60 s, the compare tests ~2 min with the build). The deeper
# figures of docs/bounds.md are FPBOUND_FIGURES=1 (≈8 min; not run here).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
go vet ./fpbound/...
test -z "$(gofmt -l fpbound)"
go test -count=1 ./fpbound/...
go test -count=1 -run 'TestCompareCommand|TestONNXAcceptance' ./cmd/tlcheck
echo "stage-bounds: ok in $(( $(date +%s) - start ))s"
