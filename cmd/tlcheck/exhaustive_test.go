package main

import (
	"os"
	"testing"
)

// exhaustive reports whether TLCHECK_EXHAUSTIVE is set (non-empty), the
// repository's one switch for the slow parts of the test suite that the
// default go test ./... leaves out or samples; .ci/run sets it for the
// tests that read it, so CI's coverage is unchanged.
func exhaustive() bool { return os.Getenv("TLCHECK_EXHAUSTIVE") != "" }

// skipUnlessExhaustive skips t unless TLCHECK_EXHAUSTIVE is set: for the
// tests that a CI stage runs with the flag anyway (why names it), so the
// default go test ./... does not pay for them twice.
func skipUnlessExhaustive(t *testing.T, why string) {
	t.Helper()
	if !exhaustive() {
		t.Skip("checked with TLCHECK_EXHAUSTIVE=1: " + why)
	}
}

// everyKth returns xs with TLCHECK_EXHAUSTIVE set, otherwise every k-th
// element of xs, the first included: the default go test ./... samples a
// suite whose every case CI's exhaustive run checks.
func everyKth[T any](xs []T, k int) []T {
	if exhaustive() {
		return xs
	}
	var out []T
	for i := 0; i < len(xs); i += k {
		out = append(out, xs[i])
	}
	return out
}
