#!/bin/sh
# CI stage "fuzz" (issue 26): every fuzz target of the readers of
# untrusted input, each for FUZZTIME (default 10s), starting from its
# seed corpus (f.Add seeds and the committed testdata/fuzz/TARGET files).
# 19 targets × 10 s plus compiling each package with coverage
# instrumentation (measured: 30 s for onnx, 50 s for cmd/tlcheck, cached
# across the targets of one package): about 8-10 minutes on 2 cores
# (FUZZTIME=3s: about 5).
# A crasher is written to the package's testdata/fuzz/TARGET/ by go test
# and fails the stage. Run from the repository root.
set -eu
t=${FUZZTIME:-10s}
start=$(date +%s)
fuzz() { # PACKAGE TARGET
	echo "== $1 $2"
	go test -run '^$' -fuzz "^$2\$" -fuzztime "$t" "$1"
}
fuzz ./onnx/ FuzzDecode
fuzz ./onnx/ FuzzDecodeTensor
fuzz ./onnx/ FuzzImport
fuzz ./certificates/leanexport/ FuzzParse
fuzz ./certificates/ FuzzVerifyFile
fuzz ./certificates/ FuzzVerifyAdjointness
fuzz ./certificates/ FuzzVerifyComposition
fuzz ./certificates/ FuzzVerifyRefinement
fuzz ./certificates/ FuzzVerifyRange
fuzz ./irsem/ FuzzDecodeGraph
fuzz ./irsem/ FuzzDecodePayload
fuzz ./irsem/ FuzzDecodeTensor
fuzz ./irsem/ FuzzDenote
fuzz ./internal/strictjson/ FuzzDecode
fuzz ./nn/ FuzzReadTLSF32B
fuzz ./nn/ FuzzDecodeStateJSON
fuzz ./nn/ FuzzImportTorchParams
fuzz ./ranges/ FuzzCheck
fuzz ./cmd/tlcheck/ FuzzReadGrads
echo "stage-fuzz: ok in $(( $(date +%s) - start )) s"
