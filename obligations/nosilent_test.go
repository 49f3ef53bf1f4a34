package obligations

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/spec"
)

// plantDomain returns registries whose Rat VJP of op raises a domain
// error and whose Interval VJP returns the whole line: the planted abs of
// issue 25 (class 3), which used to "hold" through the interval fallback
// (an infinite enclosure overlaps anything). partial marks the op Partial
// in both registries.
func plantDomain(op string, partial bool) Registries {
	r := DefaultRegistries()
	r.Rat, r.Interval = spec.New[spec.Rat](), spec.New[spec.Interval]()
	p, _ := r.Rat.Lookup(op)
	bad := *p
	info := *p.OpInfo
	info.Partial = partial
	bad.OpInfo = &info
	bad.VJP = func(*spec.Attrs, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		return nil, &spec.DomainError{Op: op, Scalar: "rat", Reason: "planted"}
	}
	r.Rat.Override(&bad)
	pi, _ := r.Interval.Lookup(op)
	badi := *pi
	infoi := *pi.OpInfo
	infoi.Partial = partial
	badi.OpInfo = &infoi
	badi.VJP = func(_ *spec.Attrs, xs []spec.Tensor[spec.Interval], _ spec.Tensor[spec.Interval], _ spec.Tensor[spec.Interval]) ([]spec.Tensor[spec.Interval], error) {
		g := spec.ZerosLike(xs[0])
		for i := range g.Data {
			g.Data[i] = spec.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
		}
		return []spec.Tensor[spec.Interval]{g}, nil
	}
	r.Interval.Override(&badi)
	return r
}

// TestNoSilentPass: an infinite enclosure never decides "holds". On an op
// declared total over the rationals a domain error over Rat is a failure
// of that op (adjointness names it); on a Partial op the case is
// inconclusive and counted, and an obligation decided on no case does not
// hold.
func TestNoSilentPass(t *testing.T) {
	res, err := plantDomain("abs", false).CheckOp("abs", 20, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res {
		if rr.Obligation != Adjointness {
			continue
		}
		var f *counterexample.Failure
		if !errors.As(rr.Failure, &f) || !strings.Contains(f.Error(), "declared total over the rationals") {
			t.Fatalf("total abs with a domain error over Rat: %+v, want a failure naming the declaration", rr)
		}
	}
	res, err = plantDomain("abs", true).CheckOp("abs", 20, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res {
		if rr.Obligation != Adjointness {
			continue
		}
		// A case whose tangent dx is 0 has ⟨dx, vjp⟩ = 0 exactly (0·[−∞, ∞]
		// is 0 in interval arithmetic) and is decided soundly; every other
		// case met an infinite enclosure and is inconclusive.
		if rr.Failure != nil || rr.Oracles[OracleInconclusive] < 15 || rr.Cases+rr.Oracles[OracleInconclusive] != 20 || math.IsInf(rr.Worst, 0) {
			t.Fatalf("partial abs with an infinite interval VJP: %+v, want inconclusive cases and no verdict from an infinite width", rr)
		}
	}
}
