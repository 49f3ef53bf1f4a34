package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// KernelFunc is a user's float32 kernel: it computes the forward value of
// a declared semantic primitive (the attributes carry reduce_sum's axis).
type KernelFunc func(a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error)

// KernelOptions tune Kernel.
type KernelOptions struct {
	// Cases and Seed are refine's (default 64 cases, seed 1); the cases
	// cycle through refine.Kinds (normal values, wide binades,
	// subnormals, exact cancellations, signed zeros, NaN/∞, overflow).
	Cases int
	Seed  uint64
	// FixedLeft declares that the kernel sums as a left fold from +0 with
	// one rounding per operation: it is then held bit-exact to the
	// binary32 replay. Otherwise its reduction order is its own, and it
	// is held to refine's order-independent bound
	// |ŝ − s| ≤ γ_g·Σ|terms| + p·2^-149 (refine's package doc derives it
	// for any evaluation tree, any number of accumulators and fused
	// multiply-add).
	FixedLeft bool
	// Shapes fixes the parents' shapes of every case (Axis the
	// reduce_sum axis); nil draws small random shapes.
	Shapes []spec.Shape
	Axis   int
}

// KernelOps lists the semantic primitives Kernel can check a kernel
// against (refine.Ops: the accumulating primitives whose term structure
// the bound needs).
func KernelOps() []string { return refine.Ops() }

// CheckKernel runs the refinement check of package refine on kernel as
// the implementation of the registry primitive op, and returns refine's
// result (Failure set on the first element outside its rule). The error
// is for a check that cannot run: op not in KernelOps, bad options, or a
// kernel that errs or returns the wrong shape.
func CheckKernel(op string, kernel KernelFunc, o KernelOptions) (*refine.Result, error) {
	if kernel == nil {
		return nil, fmt.Errorf("check: Kernel %s: nil kernel", op)
	}
	if !slices.Contains(KernelOps(), op) {
		return nil, fmt.Errorf("check: Kernel: no refinement check for %q (supported: %s)", op, strings.Join(KernelOps(), ", "))
	}
	const provider = "user"
	p, err := backend.NewFuncProvider(provider, backend.DeviceCPU, []string{op},
		func(_ string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
			return kernel(a, xs)
		})
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	red := backend.ReductionImplementationDefined
	if o.FixedLeft {
		red = backend.ReductionFixedLeft
	}
	c := backend.Capsule{
		Name: provider + "." + op, Op: op, Provider: provider, Device: backend.DeviceCPU, Trust: backend.TrustChecked,
		SupportsForward: true, VJP: backend.VJPTape, Reduction: red,
		Shape:       backend.Contract{Op: op, Claim: "shape safety for " + op, Evidence: backend.RuntimeGuard{Name: backend.ShapeGuard}},
		Layout:      backend.Contract{Op: op, Claim: "canonical layout for " + op, Evidence: backend.RuntimeGuard{Name: backend.LayoutGuard}},
		Value:       backend.Contract{Op: op, Claim: "user kernel refines " + op, Evidence: backend.NumericalCertificate{Name: "check.Kernel"}},
		VJPContract: backend.Contract{Op: op, Claim: op + " tape VJP", Evidence: backend.TestSuite{Name: "check.Op"}},
	}
	cases := o.Cases
	if cases == 0 {
		cases = 64
	}
	seed := o.Seed
	if seed == 0 {
		seed = 1
	}
	return refine.CheckOptions(&backend.Binding{Capsule: c, Provider: p}, op,
		refine.Options{Cases: cases, Seed: seed, Shapes: o.Shapes, Axis: o.Axis})
}

// Kernel checks a user's float32 kernel against the declared semantic
// primitive op from the user's go test (CheckKernel), failing t with the
// first element outside its rule (case, input kind, element, the
// kernel's value and the exact one, the bound) or with the error that
// kept the check from running; on success it logs the worst
// error/bound ratio.
func Kernel(t TB, op string, kernel KernelFunc, o KernelOptions) {
	t.Helper()
	res, err := CheckKernel(op, kernel, o)
	switch {
	case err != nil:
		t.Fatalf("%v", err)
	case res.Failure != nil:
		t.Errorf("check: kernel for %s: %d of %d cases fail; first: %v", op, res.Failures, len(res.Cases), res.Failure)
	default:
		t.Logf("check: kernel for %s: %d cases hold (rule %s), worst ratio %.3g", op, len(res.Cases), res.Obligation.Rule, res.WorstFloat)
	}
}
