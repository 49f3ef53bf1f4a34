package backend_test

import (
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/spec"
)

// TestTablesFollowRegistry: the accumulating set, the reduction policies
// of the built-in catalogs and the fast_cpu op list are the registry's
// facts, and every op the registry assigns to fast_cpu has a capsule and
// a kernel. The kernel is run on all-ones inputs, whose exact results
// (k for a k-term matmul, in+1 for linear, the element or axis count for
// the sums) are computed here by hand.
func TestTablesFollowRegistry(t *testing.T) {
	var fast []string
	for _, info := range spec.Infos() {
		op := info.Name
		if got := backend.Accumulates(op); got != info.Accumulates {
			t.Errorf("Accumulates(%s) = %v, registry says %v", op, got, info.Accumulates)
		}
		ref, err := backend.ReferenceCapsule(op)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]backend.Reduction{false: backend.ReductionNA, true: backend.ReductionFixedLeft}[info.Accumulates]; ref.Reduction != want {
			t.Errorf("%s: reference reduction %s, want %s", op, ref.Reduction, want)
		}
		cu, _ := backend.CUDACapsule(op)
		if want := map[bool]backend.Reduction{false: backend.ReductionNA, true: backend.ReductionImplementationDefined}[info.Accumulates]; cu.Reduction != want {
			t.Errorf("%s: cuda reduction %s, want %s", op, cu.Reduction, want)
		}
		_, ferr := backend.FastCPUCapsule(op)
		if info.HasProvider(spec.ProviderFastCPU) {
			fast = append(fast, op)
			if ferr != nil {
				t.Errorf("%s: the registry assigns it to fast_cpu, but: %v", op, ferr)
			}
		} else if ferr == nil {
			t.Errorf("%s: fast_cpu has a capsule the registry does not assign to it", op)
		}
	}
	if backend.Accumulates("no_such_op") {
		t.Errorf("an unknown op accumulates")
	}
	if got := backend.FastCPUOps(); !slices.Equal(got, fast) || len(got) == 0 {
		t.Errorf("FastCPUOps = %v, registry says %v", got, fast)
	}
	if n := len(backend.FastCPUCapsules()); n != len(fast) {
		t.Errorf("%d fast capsules for %d ops", n, len(fast))
	}
	ones := func(s spec.Shape) spec.Tensor[spec.F32] {
		x, _ := spec.Zeros[spec.F32](s)
		for i := range x.Data {
			x.Data[i] = 1
		}
		return x
	}
	inputs := map[string]struct {
		attrs *spec.Attrs
		xs    []spec.Shape
		want  float32
	}{
		"matmul":     {nil, []spec.Shape{{2, 3}, {3, 2}}, 3},
		"linear":     {nil, []spec.Shape{{2, 4}, {3, 4}, {3}}, 5},
		"sum":        {nil, []spec.Shape{{2, 3}}, 6},
		"reduce_sum": {&spec.Attrs{Axis: 1}, []spec.Shape{{2, 7}}, 7},
	}
	p := backend.NewFastCPUProvider()
	for _, op := range fast {
		in, ok := inputs[op]
		if !ok {
			t.Errorf("%s: no hand-computed case in this test; add one", op)
			continue
		}
		xs := make([]spec.Tensor[spec.F32], len(in.xs))
		for i, s := range in.xs {
			xs[i] = ones(s)
		}
		y, err := p.Execute(op, in.attrs, xs)
		if err != nil {
			t.Errorf("%s: %v", op, err)
			continue
		}
		for i, v := range y.Data {
			if float32(v) != in.want {
				t.Errorf("%s: element %d = %v, want %v", op, i, v, in.want)
			}
		}
		if _, err := p.Execute(op, in.attrs, xs[:len(xs)-1]); err == nil {
			t.Errorf("%s: a missing parent is accepted", op)
		}
	}
	if _, err := p.Execute("add", nil, []spec.Tensor[spec.F32]{ones(spec.Shape{1}), ones(spec.Shape{1})}); err == nil {
		t.Errorf("fast_cpu executes add, which the registry does not assign to it")
	}
}
