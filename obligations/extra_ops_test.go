package obligations

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/spec"
)

// TestPlantedProdQuotientCaught plants the classic product-gradient bug
// in reduce_prod, consistently in its JVP and VJP over Rat: ∂y/∂x_i taken
// as y/x_i, and as 0 where x_i = 0 (the "guard the division" fix, which is
// wrong for a lane with one zero: there the zero's partial is the product
// of the others). Adjointness cannot see a consistent change; the exact
// derivative obligation (forward mode through the forward rule over
// Dual[Rat]) must.
func TestPlantedProdQuotientCaught(t *testing.T) {
	r := DefaultRegistries()
	r.Rat = spec.New[spec.Rat]()
	p, _ := r.Rat.Lookup("reduce_prod")
	bad := *p
	lanes := func(a *spec.Attrs, s spec.Shape) spec.Lanes {
		ax := a.Axis
		if ax < 0 {
			ax += s.Rank()
		}
		return spec.LanesOf(s, ax)
	}
	partials := func(a *spec.Attrs, x, y spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
		l := lanes(a, x.Shape)
		g, _ := spec.Zeros[spec.Rat](x.Shape)
		for m := 0; m < l.Count(); m++ {
			for j := 0; j < l.N; j++ {
				k := l.Base(m) + j*l.Inner
				if !x.Data[k].IsZero() {
					g.Data[k], _ = y.Data[m].Div(x.Data[k])
				}
			}
		}
		return g
	}
	bad.JVP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y spec.Tensor[spec.Rat], dxs []spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
		g := partials(a, xs[0], y)
		out, _ := spec.Zeros[spec.Rat](y.Shape)
		l := lanes(a, xs[0].Shape)
		for m := 0; m < l.Count(); m++ {
			for j := 0; j < l.N; j++ {
				k := l.Base(m) + j*l.Inner
				out.Data[m] = out.Data[m].Add(g.Data[k].Mul(dxs[0].Data[k]))
			}
		}
		return out, nil
	}
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		g := partials(a, xs[0], y)
		l := lanes(a, xs[0].Shape)
		for m := 0; m < l.Count(); m++ {
			for j := 0; j < l.N; j++ {
				k := l.Base(m) + j*l.Inner
				g.Data[k] = g.Data[k].Mul(dy.Data[m])
			}
		}
		return []spec.Tensor[spec.Rat]{g}, nil
	}
	r.Rat.Override(&bad)
	res, err := r.CheckOp("reduce_prod", 60, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	caught := false
	for _, rr := range res {
		var f *counterexample.Failure
		switch {
		case rr.Obligation == Derivative:
			caught = errors.As(rr.Failure, &f) && f.Op == "reduce_prod"
		case rr.Obligation == Adjointness && rr.Failure != nil:
			t.Errorf("adjointness fails, though the plant is consistent: %v", rr.Failure)
		}
	}
	if !caught {
		t.Fatal("the derivative obligation did not catch y/x_i with zero-guarded partials in reduce_prod")
	}
	// The reference rule holds on the same cases.
	res, err = DefaultRegistries().CheckOp("reduce_prod", 60, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res {
		if rr.Failure != nil {
			t.Errorf("reference reduce_prod fails %s: %v", rr.Obligation, rr.Failure)
		}
	}
}
