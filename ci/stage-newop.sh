#!/usr/bin/env bash
# CI stage "newop" (issue 29 point 5): is a new primitive one entry?
#
# spec/ops_testop.go adds testop (y = x³, a RegisterElementwise entry with
# an IR tag and a random-graph place) behind the build tag tlcheck_testop.
# This stage builds the tree with the tag and runs, against it, the
# coverage tests of every package that keeps a per-op table or demands
# an entry per op, then the command line on testop: check --ops, certify
# and verify (the op's certificate and a model using it), eval, diff,
# grad, view, plan on the checked and the fast CPU profile, and lean emit.
#
# A test that fails under the tag is one that REQUIRES an edit beyond the
# entry; the stage prints the list and fails when it differs from
# EXPECTED below (a new table that demands an edit, or one that no longer
# does): docs/adding-an-op.md's counts are derived from this list, so
# change both together. The command-line steps must all succeed.
# About 46 s on 2 cores with a warm build cache; compiling the tagged test
# binaries cold adds minutes.
# Run from the repository root; exits non-zero on a failure.
set -euo pipefail
start=$(date +%s)
tags=tlcheck_testop
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The tests that fail with testop and no other edit: package.Test, and
# the file an op author edits to satisfy it.
EXPECTED="
spec.TestRegistryCoversSampleCases spec/registry_test.go
irsem.TestCorpusCoversEveryTag irsem/corpus_test.go
ranges.TestSoundness ranges/superset_test.go
internal/docs.TestReadmePrimitiveCount README.md
leanbridge/emit.TestEmitComposition lean/Tlcheck/Spec.lean
leanbridge/emit.TestEmitReadsBack lean/Tlcheck/Spec.lean
cmd/tlcheck.TestOutputDigests cmd/tlcheck/testdata/digests.txt
"

# The coverage tests: every test that ranges over the registry (or over
# the IR tags, the range rules, Lean's covered list) and demands an entry,
# found by grep for spec.Infos(), Names() and Ops() in the tests, plus the
# README count, the committed rapid fail files and the output digests.
# fpbound, onnx, view and fastcpu keep no per-op table (their full test
# suites pass with testop); the command line below exercises them.
pkgs="spec irsem backend refine ranges certificates leanbridge leanbridge/emit internal/docs obligations rapidtests typedgraph check"
tests="TestRegistryCoversSampleCases|TestFactInvariants|TestPartialFlag|TestRequiresGrad|TestRulesNeverPanic|TestCaseSeedSeparatesLabels"
tests="$tests|TestCorpusCoversEveryTag|TestTorchLeanTagsStayTorchLean|TestTagTableFollowsRegistry|TestRegistryRules|TestEverySupersetTagRoundTrips"
tests="$tests|TestReferenceCatalog|TestProvidersRegistry|TestTablesFollowRegistry|TestOpsFollowRegistry"
tests="$tests|TestSoundness|TestRegistryElementwiseEnclosesBinary32|TestFullDefaults|TestTheoremsExist"
tests="$tests|TestEmitReadsBack|TestEmitComposition|TestCoveredIsPrim|TestLeanSpecModel|TestTaylorCatchesPlantedRules"
tests="$tests|TestReadmePrimitiveCount|TestGeneratorsCoverRegistry|TestGraphTableFollowsRegistry|TestWideReachesEveryPrimitive"
tests="$tests|TestReferenceRegistryHolds|TestGeneratedInstancesAreWellShaped"
tests="$tests|TestLocalIntervalEnclosure|TestLocalAdjointness|TestLocalLinearity|TestZeroPreservation|TestCommittedFailFiles"
tests="$tests|TestNoPanicsFromHostileUse|TestNoLeak"
# shellcheck disable=SC2086 # pkgs is a list
go test -short -count=1 -tags "$tags" -run "^($tests)\$" -v $(printf './%s/ ' $pkgs) >"$tmp/test.log" 2>&1 || true
# The output digests skip themselves under -short: run them in full.
go test -count=1 -tags "$tags" -run '^(TestJUnitOnePerObligation|TestOutputDigests)$' -v ./cmd/tlcheck/ >>"$tmp/test.log" 2>&1 || true
if grep -q -E '\[(build|setup) failed\]' "$tmp/test.log" || ! grep -q -E '^(ok|FAIL)[[:space:]]+github' "$tmp/test.log"; then
  echo "stage-newop: a test package did not build:" >&2
  tail -n 30 "$tmp/test.log" >&2
  exit 1
fi
# Each package's output ends with "ok PKG" or "FAIL PKG"; its failed
# top-level tests come before that line.
awk '/^--- FAIL: Test/ { f[n++] = $3 }
     /^(ok|FAIL)[ \t]+github.com\/tlcheck\/tlcheck\// {
       p = $2; sub("github.com/tlcheck/tlcheck/", "", p)
       for (i = 0; i < n; i++) print p "." f[i]
       n = 0 }' "$tmp/test.log" >"$tmp/failed"

# The command line on testop.
bin="$tmp/tlcheck"
go build -tags "$tags" -o "$bin" ./cmd/tlcheck
cat >"$tmp/g.ir.json" <<'EOF'
{"format":"tlcheck.ir.v1","input_id":0,"output_id":3,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"testop","parents":[0],"shape":[2]},
  {"id":2,"kind":"mul_elem","parents":[1,0],"shape":[2]},
  {"id":3,"kind":"sum","parents":[2],"shape":[]}
]}
EOF
echo '{"shape":[2],"values":["3","-3/2"]}' >"$tmp/in.json"
g=(--graph "$tmp/g.ir.json" --input "$tmp/in.json")
cli() { # cli WANT COMMAND...: run tlcheck, require WANT in its stdout
  local want=$1 out
  shift
  if ! out=$("$bin" "$@" 2>&1) || ! grep -q -F -- "$want" <<<"$out"; then
    echo "stage-newop: tlcheck $* did not print \"$want\":" >&2
    echo "$out" | tail -n 20 >&2
    exit 1
  fi
  echo "  tlcheck $1 …: ok"
}
echo "command line on testop:"
cli 'all 21 obligations hold on 1 primitive' check --ops testop
cli 'wrote 5 certificate files' certify --ops testop,square --cases 3 --out "$tmp/c"
cli 'every claim re-derived' verify "$tmp/c"
cli 'skipped adjointness/testop.json (no Lean semantics for testop yet)' lean emit --certs "$tmp/c" --out "$tmp/lean"
cli '= 86.0625 (= 1377/16)' eval "${g[@]}" # Σ x·x³ at (3, −3/2) = 81 + 81/16
cli 'all paths agree' diff "${g[@]}"
cli 'grad input = [108, -13.5 (= -27/2)]' grad "${g[@]}" # 4x³
cli 'for the model' certify "${g[@]}" --out "$tmp/cg"
cli 'every claim re-derived' verify "${g[@]}" "$tmp/cg"
cli 'verdict: accepted' plan --graph "$tmp/g.ir.json"
cli 'node 1 (testop): testop -> reference.testop' plan --graph "$tmp/g.ir.json" --profile fast_cpu
"$bin" view "${g[@]}" --format dot --out "$tmp/v.dot" && grep -q testop "$tmp/v.dot" || {
  echo "stage-newop: view does not draw testop" >&2
  exit 1
}
echo "  tlcheck view …: ok"

got=$(sort -u "$tmp/failed")
want=$(echo "$EXPECTED" | awk 'NF { print $1 }' | sort -u)
echo "tests that require an edit beyond the entry (package.Test):"
echo "${got:-  (none)}" | sed 's/^/  /'
if [ "$got" != "$want" ]; then
  echo "stage-newop: the list differs from EXPECTED (update it and docs/adding-an-op.md together):" >&2
  diff <(echo "$want") <(echo "$got") >&2 || true
  exit 1
fi
echo "stage-newop: ok in $(($(date +%s) - start)) s"
