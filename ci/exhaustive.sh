#!/bin/sh
# ci/exhaustive.sh — the tests whose full counts run only with
# TLCHECK_EXHAUSTIVE=1 (issue 24: the default go test ./... stays under
# its CPU budget; CI keeps every case). Each entry is a package and the
# tests in it that read the flag; `grep -rn TLCHECK_EXHAUSTIVE --include
# '*_test.go' .` lists them, and internal/docs' TestExhaustiveGatesRunInCI
# fails when one is missing here. enclose's TestBackendModelsEnclosed runs
# in stage-perf.sh. Exits non-zero on the first failure.
set -eu
cd "$(dirname "$0")/.."
start=$(date +%s)
TLCHECK_EXHAUSTIVE=1 go test -count=1 -run '^(TestEveryNumberEditRejected|TestEveryNumberEditRejectedNewKinds|TestVerifyCostLinear)$' ./certificates/verify
TLCHECK_EXHAUSTIVE=1 go test -count=1 -run '^(TestHelpLimits|TestCompareGradShared)$' ./cmd/tlcheck
TLCHECK_EXHAUSTIVE=1 go test -count=1 -run '^TestWideCatchesFaultsOutsideFirstStream$' ./obligations
TLCHECK_EXHAUSTIVE=1 go test -count=1 -run '^(TestGenGraphWellFormed|TestGenTypedBuilds)$' ./obligations/casegen
TLCHECK_EXHAUSTIVE=1 go test -count=1 -run '^(TestSoundness|TestSoundnessRandomGraphs)$' ./ranges
TLCHECK_EXHAUSTIVE=1 go test -count=1 -run '^(TestBinary32FMA|TestBinary32MatchesHardware|TestBinary32ProofModel|TestIntervalElementarySound|TestIntervalFromRatTight|TestIntervalSoundnessFloats|TestIntervalSoundnessRat|TestIntervalTrigExtremaAdversarial|TestRound16AgainstEveryValue|TestStableIntervalSound)$' ./spec
# fpbound: the dense-path sweep over the backend models whose declared
# work exceeds 2^22 (it had run in no CI stage before this script) and
# the 1500 random graphs of the soundness test; the combined gradient
# bound on 1- and 2-block GPT-2 stacks (T=4, d=16) against the test's own
# float32 gradients; the same on conv stacks of depth 4 and 8 (vjp34); the
# dense sweep's exact sums at depth 16 with every stride (testcpu38); the
# summation-order profiles on every family and depth (order38)
TLCHECK_EXHAUSTIVE=1 go test -count=1 -run '^(TestBackendModelsDense|TestDenseSweepExact|TestSoundRandomGraphs|TestGradCombinedGPT2|TestGradCombinedConv|TestSumOrderSound)$' ./fpbound
# compare-grad judging a depth-4 conv stack's dW with the combined bound (vjp34)
TLCHECK_EXHAUSTIVE=1 go test -count=1 -run '^TestGradsCombinedConvParams$' ./compare
echo "exhaustive: ok in $(( $(date +%s) - start )) s"
