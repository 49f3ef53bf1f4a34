package check_test

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/spec"
)

// leftFold is the kernel a fixed-left capsule promises: Σ from +0, one
// rounding per addition, in index order.
func leftFold(_ *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	var s spec.F32
	for _, v := range xs[0].Data {
		s = s.Add(v)
	}
	return spec.Scalar0(s), nil
}

// TestKernel: a left fold holds bit-exactly when declared fixed-left and
// within the bound otherwise; the pairwise kernel holds the bound but is
// caught when it claims fixed-left (a different order rounds
// differently); the off-by-one kernel is caught under both rules, and
// Kernel reports it through its TB.
func TestKernel(t *testing.T) {
	sh := []spec.Shape{{12}}
	for _, tc := range []struct {
		name      string
		k         check.KernelFunc
		fixedLeft bool
		fails     bool
	}{
		{"left fold, fixed-left", leftFold, true, false},
		{"left fold, bound", leftFold, false, false},
		{"pairwise, bound", pairwiseSum(false), false, false},
		{"pairwise claims fixed-left", pairwiseSum(false), true, true},
		{"off by one, bound", pairwiseSum(true), false, true},
		{"off by one, fixed-left", pairwiseSum(true), true, true},
	} {
		res, err := check.CheckKernel("sum", tc.k, check.KernelOptions{Cases: 32, Seed: 3, Shapes: sh, FixedLeft: tc.fixedLeft})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := res.Failure != nil; got != tc.fails {
			t.Errorf("%s: failure %v, want failing %v", tc.name, res.Failure, tc.fails)
		}
	}
	tb := &captureTB{name: "TestKernelTB"}
	check.Kernel(tb, "sum", pairwiseSum(true), check.KernelOptions{Shapes: sh})
	if !tb.failed || !strings.Contains(tb.log.String(), "exceeds the bound") {
		t.Errorf("Kernel did not fail:\n%s", tb.log.String())
	}
	if _, err := check.CheckKernel("relu", leftFold, check.KernelOptions{}); err == nil || !strings.Contains(err.Error(), "supported") {
		t.Errorf("relu accepted: %v", err)
	}
	if _, err := check.CheckKernel("sum", nil, check.KernelOptions{}); err == nil {
		t.Errorf("nil kernel accepted")
	}
}
