package main

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/spec"
)

// negRules are the rules of a user's primitive y = −x.
func negRules[T spec.Scalar[T]]() check.Rules[T] {
	neg := func(x spec.Tensor[T]) spec.Tensor[T] {
		y := x.Clone()
		for i := range y.Data {
			y.Data[i] = y.Data[i].Neg()
		}
		return y
	}
	return check.Rules[T]{
		Forward: func(xs []spec.Tensor[T]) (spec.Tensor[T], error) { return neg(xs[0]), nil },
		JVP: func(_ []spec.Tensor[T], _ spec.Tensor[T], dxs []spec.Tensor[T]) (spec.Tensor[T], error) {
			return neg(dxs[0]), nil
		},
		VJP: func(_ []spec.Tensor[T], _ spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
			return []spec.Tensor[T]{neg(dy)}, nil
		},
	}
}

// TestVerifyUserPrimitive: tlcheck verify does not pretend on a user's
// primitive's certificate directory (check.Find with CertDir): it exits 2
// (bad input, not an obligation failure) with one line naming the
// primitive and saying to verify with check.Verify, in both output modes;
// check.Verify with the primitive verifies the same directory.
func TestVerifyUserPrimitive(t *testing.T) {
	p := check.Primitive{Name: "myneg", Arity: 1, Exact: true, Doc: "y = -x",
		Rat: negRules[spec.Rat](), Interval: negRules[spec.Interval](), Dual: negRules[check.Dual]()}
	rep, err := check.Find(p, check.Options{Cases: 5, CertDir: t.TempDir()})
	if err != nil || rep.Failure != nil || rep.Certificate == "" {
		t.Fatalf("Find: %v %v", err, rep.Failure)
	}
	for _, args := range [][]string{{"verify", rep.Certificate}, {"verify", "--json", rep.Certificate}} {
		code, stdout, stderr := runCmd(args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tlcheck: verify: ") ||
			!strings.Contains(stderr, "myneg") || !strings.Contains(stderr, "check.Verify") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if _, err := check.Verify(rep.Certificate, p); err != nil {
		t.Errorf("check.Verify: %v", err)
	}
}
