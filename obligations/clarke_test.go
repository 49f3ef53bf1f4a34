package obligations

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// TestClarkeCatchesWrongConvention: a convention outside the Clarke set,
// planted consistently in the JVP rule and in the dual forward rule the
// convention part differentiates (relu′(0) = 2), passes the exact
// comparison but fails Clarke membership: at x = 0 the Clarke set of relu
// is [0, 1]·dx, and the box enclosure over x ± 2⁻²⁰ is [0, dx]. The
// reference relu (relu′(0) = 0) holds on the same instance.
func TestClarkeCatchesWrongConvention(t *testing.T) {
	inst := &casegen.Instance{Op: "relu", Attrs: &spec.Attrs{}, Xs: []spec.Tensor[spec.Rat]{{Shape: spec.Shape{3}, Data: []spec.Rat{spec.NewRat(1, 1), {}, spec.NewRat(-1, 1)}}}}
	dxs := []spec.Tensor[spec.Rat]{{Shape: spec.Shape{3}, Data: []spec.Rat{spec.NewRat(1, 1), spec.NewRat(3, 1), spec.NewRat(1, 1)}}}
	if _, err := DefaultRegistries().CheckDerivativeExact(inst, dxs); err != nil {
		t.Fatalf("reference relu: %v", err)
	}
	r := DefaultRegistries()
	r.Rat, r.DualRat = spec.New[spec.Rat](), spec.New[spec.Dual[spec.Rat]]()
	two := spec.NewRat(2, 1)
	p, _ := r.Rat.Lookup("relu")
	bad := *p
	bad.JVP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y spec.Tensor[spec.Rat], d []spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
		j, err := p.JVP(a, xs, y, d)
		for i, x := range xs[0].Data {
			if x.IsZero() {
				j.Data[i] = two.Mul(d[0].Data[i])
			}
		}
		return j, err
	}
	r.Rat.Override(&bad)
	pd, _ := r.DualRat.Lookup("relu")
	badd := *pd
	badd.Forward = func(a *spec.Attrs, xs []spec.Tensor[spec.Dual[spec.Rat]]) (spec.Tensor[spec.Dual[spec.Rat]], error) {
		y, err := pd.Forward(a, xs)
		for i, x := range xs[0].Data {
			if x.Re.IsZero() {
				y.Data[i].Du = two.Mul(x.Du)
			}
		}
		return y, err
	}
	r.DualRat.Override(&badd)
	_, err := r.CheckDerivativeExact(inst, dxs)
	var f *counterexample.Failure
	if err == nil || !strings.Contains(err.Error(), "Clarke") || !asFailure(err, &f) || f.Element != 1 {
		t.Fatalf("relu′(0) = 2 in both the JVP and the dual forward: %v, want a Clarke failure at element 1", err)
	}
}

// asFailure is errors.As for a *counterexample.Failure returned directly.
func asFailure(err error, f **counterexample.Failure) bool {
	x, ok := err.(*counterexample.Failure)
	*f = x
	return ok
}
