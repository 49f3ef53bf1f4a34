#!/usr/bin/env bash
# CI stage of issue 25 (obligations): the planted-bug tests that the
# default gate's check stage must catch at seed 0 and seeds 1–20, the
# k-way tie certify/verify test, the interval grad on a flat region, the
# no-silent-pass test, and the spec tie / reduce_mean tests.
# Takes about 1–2 minutes on 2 cores (mostly compiling the test binaries).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
go test ./obligations -count=1 -run 'TestConsistentFaultsCaught|TestClarkeCatchesWrongConvention|TestFastPathFaultsCaught|TestPlainIsGeneric|TestNoSilentPass|TestGradIntervalFlatRegionMaxPool|TestRegopsDecidedExactly|TestReferenceRegistryHolds'
go test ./certificates/verify -count=1 -run 'TestKWayMaxPoolTieVerifies'
go test ./refine -count=1 -run 'TestDeclaredOrder'
go test ./spec -count=1 -run 'TestMaxPoolDualKWayTie|TestMaxOfFoldUnchanged|TestMaxPoolIntervalUndecidedHull|TestReduceMeanEmptyAxisEmptyOutput|TestWindowErrors'
echo "stage-obligations: ok in $(( $(date +%s) - start ))s"
