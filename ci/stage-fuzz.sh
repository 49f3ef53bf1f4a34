#!/bin/sh
# CI stage "fuzz" (issue 26): every fuzz target of the readers of
# untrusted input, each for FUZZTIME (go test's -fuzztime: a count such as
# the default 2000x, or a duration), starting from its seed corpus (f.Add
# seeds and the committed testdata/fuzz/TARGET files: every target listed
# here has a committed seed corpus). A count is the
# default because a duration can fail a target with "context deadline
# exceeded" when a worker is still busy on one input as the time runs out
# (seen on FuzzDecodeTensor with no crasher). Compiling each package with
# coverage instrumentation dominates (measured: 30 s for onnx, 50 s for
# cmd/tlcheck, cached across the targets of one package): about 3-5
# minutes on 2 cores; .ci/run uses FUZZTIME=500x.
# A crasher is written to the package's testdata/fuzz/TARGET/ by go test
# and fails the stage. Run from the repository root.
set -eu
t=${FUZZTIME:-2000x}
start=$(date +%s)
fuzz() { # PACKAGE TARGET
	echo "== $1 $2"
	go test -run '^$' -fuzz "^$2\$" -fuzztime "$t" "$1"
}
fuzz_adapters() { # PACKAGE TARGET, in the adapters module
	echo "== adapters/$1 $2"
	(cd adapters && go test -run '^$' -fuzz "^$2\$" -fuzztime "$t" "$1")
}
fuzz ./onnx/ FuzzDecode
fuzz ./onnx/ FuzzDecodeTensor
fuzz ./onnx/ FuzzImport
fuzz ./leanbridge/lean4export/ FuzzParse
fuzz ./certificates/verify/ FuzzVerifyFile
fuzz ./certificates/verify/ FuzzVerifyAdjointness
fuzz ./certificates/verify/ FuzzVerifyComposition
fuzz ./certificates/verify/ FuzzVerifyRefinement
fuzz ./certificates/verify/ FuzzVerifyRange
fuzz ./irsem/ FuzzDecodeGraph
fuzz ./irsem/ FuzzDecodePayload
fuzz ./irsem/ FuzzDecodeTensor
fuzz ./irsem/ FuzzDenote
fuzz ./internal/strictjson/ FuzzDecode
fuzz ./nn/ FuzzReadTLSF32B
fuzz ./nn/ FuzzDecodeStateJSON
fuzz ./nn/ FuzzImportTorchParams
fuzz ./ranges/ FuzzCheck
fuzz ./compare/ FuzzReadGrads
# The command line's own surfaces: --onnx loading (eval, view), certify and
# view of a graph, merge of shard directories (cmd/tlcheck/fuzz_test.go).
fuzz ./cmd/tlcheck/ FuzzCLIONNX
fuzz ./cmd/tlcheck/ FuzzCertifyGraph
fuzz ./cmd/tlcheck/ FuzzMerge
# The engine protocol's messages (hello and answers of a child engine).
fuzz_adapters ./harness/ FuzzProtocolHello
fuzz_adapters ./harness/ FuzzProtocolAnswer
echo "stage-fuzz: ok in $(( $(date +%s) - start )) s"
