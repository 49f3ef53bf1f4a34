#!/bin/sh
# CI stage "hostile" (issue 26): the hostile-input table and the tests of
# the defences behind it — special files refused unopened (safeio), the
# memory budgets (onnx-value-bytes, lean-bytes), output directories that
# never lose data (certify --force killed at 13 moments, the gate's
# directory policy), adapters building only tlcheck's own checkout, the
# strict gradients reader; certificates tied to their model files (verify
# --onnx), certify's exact-evaluation budgets, escaped error lines, sorted
# manifest lists, stale temporary directories removed safely. Every hostile case runs tlcheck as a process
# with a 10 s deadline and checks its peak RSS (ru_maxrss) is under 2 GiB.
# About 1-2 minutes on 2 cores (most of it compiling the test binaries).
# Run from the repository root; exits non-zero on a failure.
set -eu
start=$(date +%s)
go test -count=1 ./internal/safeio/
go test -count=1 -run 'ValueBytes' ./onnx/
go test -count=1 -run 'ParseLeanBytes|ParseLimits' ./leanbridge/lean4export/
go test -count=1 -run 'TestEscape|TestQuote' ./limits/
go test -count=1 -run 'TestReportOneLine' ./internal/cli/
go test -count=1 -run 'FuzzReadGrads' ./compare/
go test -count=1 -run 'TestRemoveStale|TestCheckSources' ./certificates/
go test -count=1 -run 'TestOutputDirectory|TestMatchSources|TestManifestListsSorted' ./certificates/verify/
go test -count=1 -run 'Hostile|CertifyKilled|CertifyOutputDirectory|GateOwnsItsDirectory|Adapters|GradsLayout|VerifyTiesModel|CertifyRatBudget|ErrorLinesEscaped|CertCasesLimit' ./cmd/tlcheck/
echo "stage-hostile: ok in $(( $(date +%s) - start )) s"
