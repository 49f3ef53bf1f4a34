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

// constantScale is the bug of treating a normalisation's scale as a
// constant: each group of elements (a lane, a sub-tensor) scales its
// tangent by the forward rule's ratio y_j/x_j at a nonzero x_j (zero's
// default where the group is all zero), in the JVP and the VJP alike
// (adjointness cannot see it; the exact derivative obligation must).
func constantScale(p spec.Prim[spec.Rat], groups func(a *spec.Attrs, s spec.Shape) [][]int, zero func(a *spec.Attrs) spec.Rat) *spec.Prim[spec.Rat] {
	fwd := p.Forward
	scaled := func(a *spec.Attrs, x, d spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
		y, err := fwd(a, []spec.Tensor[spec.Rat]{x})
		if err != nil {
			return y, err
		}
		out, _ := spec.Zeros[spec.Rat](x.Shape)
		for _, g := range groups(a, x.Shape) {
			r := zero(a)
			for _, i := range g {
				if !x.Data[i].IsZero() {
					r, _ = y.Data[i].Div(x.Data[i])
				}
			}
			for _, i := range g {
				out.Data[i] = d.Data[i].Mul(r)
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

// laneGroups lists l2_normalize's lanes along Axis; subTensorGroups
// lists renorm's sub-tensors x[…, i, …] (written out here from their
// definition, not taken from spec).
func laneGroups(a *spec.Attrs, s spec.Shape) [][]int {
	ax, _ := spec.NormAxis(a.Axis, s.Rank())
	l := spec.LanesOf(s, ax)
	var out [][]int
	for k := 0; k < l.Count(); k++ {
		var g []int
		for j := 0; j < l.N; j++ {
			g = append(g, l.Base(k)+j*l.Inner)
		}
		out = append(out, g)
	}
	return out
}

func subTensorGroups(a *spec.Attrs, s spec.Shape) [][]int {
	ax, _ := spec.NormAxis(a.Axis, s.Rank())
	out := make([][]int, s[ax])
	for flat := 0; flat < s.Size(); flat++ {
		i := flat
		for k := s.Rank() - 1; k > ax; k-- {
			i /= s[k]
		}
		out[i%s[ax]] = append(out[i%s[ax]], flat)
	}
	return out
}

// l2ConstantNorm: dy = dx/m (m = y_j/x_j's inverse; 0 on a zero lane).
func l2ConstantNorm(p spec.Prim[spec.Rat]) *spec.Prim[spec.Rat] {
	return constantScale(p, laneGroups, func(*spec.Attrs) spec.Rat { return spec.Rat{} })
}

// renormDropsNorm is the planted fault of docs/ops-extra.md: the norm's
// dependence on x dropped, dy = s·dx with s = min(1, c/ν) (1 on a zero
// sub-tensor with c > 0), in both rules.
func renormDropsNorm(p spec.Prim[spec.Rat]) *spec.Prim[spec.Rat] {
	return constantScale(p, subTensorGroups, func(a *spec.Attrs) spec.Rat {
		if a.Maxnorm != nil && a.Maxnorm.Sign() > 0 {
			return spec.NewRat(1, 1)
		}
		return spec.Rat{}
	})
}

func newOpPlants() []newOpPlant {
	return []newOpPlant{
		{name: "tile vjp keeps the last copy", op: "tile", want: Adjointness, plant: tileLastCopyVJP},
		{name: "scatter vjp keeps the overwritten cotangent", op: "scatter", want: Adjointness, plant: scatterKeepsOverwritten},
		{name: "l2_normalize treats the norm as a constant", op: "l2_normalize", want: Derivative, plant: l2ConstantNorm},
		{name: "renorm drops the norm's dependence on x", op: "renorm", want: Derivative, plant: renormDropsNorm},
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
