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
# cmd/tlcheck), so each package's instrumented test binary is built once
# (go test -c -fuzz=.) and run per target from the package's directory,
# where the binary reads testdata/fuzz and writes a crasher, as go test
# -fuzz does; 9 builds and links instead of 24. .ci/run uses FUZZTIME=250x.
# A crasher is written to the package's testdata/fuzz/TARGET/ by go test
# and fails the stage. Run from the repository root.
set -eu
t=${FUZZTIME:-2000x}
start=$(date +%s)
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT
fuzzrun() { # MODULE_DIR PACKAGE TARGET: build the package's fuzz binary once, run TARGET
	key=$(echo "$1/$2" | tr -c 'A-Za-z0-9\n' '_')
	if [ ! -x "$bins/$key.test" ]; then
		(cd "$1" && go test -c -fuzz=. -o "$bins/$key.test" "$2")
	fi
	if [ "$1" = . ]; then echo "== $2 $3"; else echo "== $1/${2#./} $3"; fi
	(cd "$1/$2" && "$bins/$key.test" -test.run '^$' -test.fuzz "^$3\$" -test.fuzztime "$t" \
		-test.fuzzcachedir "$bins/cache-$key" -test.timeout 10m)
}
fuzz() { fuzzrun . "$1" "$2"; }                   # PACKAGE TARGET
fuzz_adapters() { fuzzrun adapters "$1" "$2"; }   # PACKAGE TARGET, in the adapters module
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
