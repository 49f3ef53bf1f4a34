package obligations

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/spec"
)

// newOpPlant is a fault planted in one of issue 25's added primitives
// (tile, scatter, l2_normalize, sinc, renorm) over Rat, and the
// obligation that must catch it.
type newOpPlant struct {
	name string
	op   string
	want Obligation
	// plant returns the faulty primitive, built from the reference one.
	plant func(p spec.Prim[spec.Rat]) *spec.Prim[spec.Rat]
	// plantDual, when set, plants the fault in the dual-interval registry
	// too: the derivative obligation of an op without exact semantics
	// (sinc) runs there.
	plantDual func(p spec.Prim[DualInterval]) *spec.Prim[DualInterval]
}

// negatedDerivative flips the sign of the derivative consistently in the
// JVP and the VJP (sinc′ → −sinc′): adjointness and linearity hold, only
// the derivative obligation can see it.
func negatedDerivative[T spec.Scalar[T]](p spec.Prim[T]) *spec.Prim[T] {
	jvp, vjp := p.JVP, p.VJP
	p.JVP = func(a *spec.Attrs, xs []spec.Tensor[T], y spec.Tensor[T], dxs []spec.Tensor[T]) (spec.Tensor[T], error) {
		j, err := jvp(a, xs, y, dxs)
		if err != nil {
			return j, err
		}
		return spec.Map(j, func(v T) (T, error) { return v.Neg(), nil })
	}
	p.VJP = func(a *spec.Attrs, xs []spec.Tensor[T], y, dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
		g, err := vjp(a, xs, y, dy)
		if err != nil {
			return nil, err
		}
		for i := range g {
			if g[i], err = spec.Map(g[i], func(v T) (T, error) { return v.Neg(), nil }); err != nil {
				return nil, err
			}
		}
		return g, nil
	}
	p.Unary = nil
	return &p
}

// tileLastCopyVJP is the accumulate-or-assign bug of an index map's
// adjoint: each input element takes the cotangent of its last copy only,
// not the sum over its copies (the JVP is left correct).
func tileLastCopyVJP(p spec.Prim[spec.Rat]) *spec.Prim[spec.Rat] {
	p.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		x := xs[0]
		g, _ := spec.Zeros[spec.Rat](x.Shape)
		ost, ist := y.Shape.Strides(), x.Shape.Strides()
		for o := range dy.Data {
			i, rem := 0, o
			for d := range y.Shape {
				c := rem / ost[d]
				rem -= c * ost[d]
				i += (c % x.Shape[d]) * ist[d]
			}
			g.Data[i] = dy.Data[o]
		}
		return []spec.Tensor[spec.Rat]{g}, nil
	}
	return &p
}

// scatterKeepsOverwritten is the VJP bug of an overwrite: the data's
// cotangent passes δ through unchanged, as if the written positions still
// depended on x.
func scatterKeepsOverwritten(p spec.Prim[spec.Rat]) *spec.Prim[spec.Rat] {
	ref := p.VJP
	p.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		g, err := ref(a, xs, y, dy)
		if err != nil {
			return nil, err
		}
		g[0] = spec.Tensor[spec.Rat]{Shape: dy.Shape.Clone(), Data: append([]spec.Rat(nil), dy.Data...)}
		return g, nil
	}
	return &p
}

// l2ConstantNorm is the bug of treating the norm as a constant: dy =
// dx/m in the JVP and g = δ/m in the VJP, consistently (adjointness
// cannot see it; the exact derivative obligation must).
func l2ConstantNorm(p spec.Prim[spec.Rat]) *spec.Prim[spec.Rat] {
	fwd := p.Forward
	scaled := func(a *spec.Attrs, x, d spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
		// d/m = d·(y/x) lane by lane: forward of x, and m = x_j/y_j where y_j ≠ 0.
		y, err := fwd(a, []spec.Tensor[spec.Rat]{x})
		if err != nil {
			return y, err
		}
		ax, _ := spec.NormAxis(a.Axis, x.Shape.Rank())
		l := spec.LanesOf(x.Shape, ax)
		out, _ := spec.Zeros[spec.Rat](x.Shape)
		for k := 0; k < l.Count(); k++ {
			b := l.Base(k)
			inv := spec.Rat{}
			for j := 0; j < l.N; j++ {
				if i := b + j*l.Inner; !x.Data[i].IsZero() {
					inv, _ = y.Data[i].Div(x.Data[i])
				}
			}
			for j := 0; j < l.N; j++ {
				out.Data[b+j*l.Inner] = d.Data[b+j*l.Inner].Mul(inv)
			}
		}
		return out, nil
	}
	p.JVP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], _ spec.Tensor[spec.Rat], dxs []spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
		return scaled(a, xs[0], dxs[0])
	}
	p.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], _, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		g, err := scaled(a, xs[0], dy)
		return []spec.Tensor[spec.Rat]{g}, err
	}
	return &p
}

func newOpPlants() []newOpPlant {
	return []newOpPlant{
		{name: "tile vjp keeps the last copy", op: "tile", want: Adjointness, plant: tileLastCopyVJP},
		{name: "scatter vjp keeps the overwritten cotangent", op: "scatter", want: Adjointness, plant: scatterKeepsOverwritten},
		{name: "l2_normalize treats the norm as a constant", op: "l2_normalize", want: Derivative, plant: l2ConstantNorm},
		{name: "sinc′ sign flipped", op: "sinc", want: Derivative, plant: negatedDerivative[spec.Rat], plantDual: negatedDerivative[DualInterval]},
	}
}

// TestPlantedNewOpsCaught: each planted fault is a FAILS of the named
// obligation on the op, and the reference rules hold on the same cases.
func TestPlantedNewOpsCaught(t *testing.T) {
	for _, c := range newOpPlants() {
		t.Run(c.name, func(t *testing.T) {
			r := DefaultRegistries()
			r.Rat = spec.New[spec.Rat]()
			p, err := r.Rat.Lookup(c.op)
			if err != nil {
				t.Fatal(err)
			}
			r.Rat.Override(c.plant(*p))
			if c.plantDual != nil {
				r.Dual = spec.New[DualInterval]()
				q, err := r.Dual.Lookup(c.op)
				if err != nil {
					t.Fatal(err)
				}
				r.Dual.Override(c.plantDual(*q))
			}
			res, err := r.CheckOp(c.op, 200, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			caught := false
			for _, rr := range res {
				var f *counterexample.Failure
				if rr.Obligation == c.want && errors.As(rr.Failure, &f) && f.Op == c.op {
					caught = true
				}
			}
			if !caught {
				t.Fatalf("%s: the %s obligation did not catch the plant", c.op, c.want)
			}
			res, err = DefaultRegistries().CheckOp(c.op, 200, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, rr := range res {
				if rr.Failure != nil {
					t.Errorf("reference %s fails %s: %v", c.op, rr.Obligation, rr.Failure)
				}
			}
		})
	}
}
