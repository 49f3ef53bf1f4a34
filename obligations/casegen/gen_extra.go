package casegen

import (
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// extraStructural holds the generators of the primitives of spec's
// ops_extra_*.go files (issue 25's missing ops) whose applications need
// more than the hints' equal shapes with the last parent's domain.
var extraStructural = map[string]genFunc{
	"reduce_prod": reduceGen,
	"tile":        tileGen,
	"scatter":     scatterGen,
	// l2_normalize: ε ∈ {0, 1, 5}; regopsFixup makes every lane's norm
	// rational (5 meets the lanes (3t, 4t) at t = 1: the tie).
	"l2_normalize": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 1, 3, "shape")
		eps := []*big.Rat{nil, big.NewRat(1, 1), big.NewRat(5, 1)}[src.Intn(3, "eps")]
		return &spec.Attrs{Axis: axisOf(src, s), Eps: eps}, []spec.Shape{s}, []Domain{Any}
	},
	// renorm: c ∈ {0, 1, 5, 5}; regopsFixup makes every sub-tensor's
	// norm rational (c = 5 meets the sub-tensors (3t, 4t, 0, …) at
	// t = ±1: the tie).
	"renorm": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 1, 3, "shape")
		c := []*big.Rat{new(big.Rat), big.NewRat(1, 1), big.NewRat(5, 1), big.NewRat(5, 1)}[src.Intn(4, "maxnorm")]
		return &spec.Attrs{Axis: axisOf(src, s), Maxnorm: c}, []spec.Shape{s}, []Domain{Any}
	},
	// pow: the base (the first parent) is positive, the exponent any.
	"pow": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 0, 3, "shape")
		return &spec.Attrs{}, []spec.Shape{s, s}, []Domain{Positive, Any}
	},
}

// tileGen draws a parent of rank ≤ 3 and repeats 0–2 per axis (0 empties
// the axis; 1 leaves it; 2 makes each element's cotangent a sum of copies).
func tileGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	s := GenShape(src, 0, 3, "shape")
	out := s.Clone()
	for d := range out {
		out[d] *= src.Intn(3, "repeats")
	}
	return &spec.Attrs{Shape: out}, []spec.Shape{s}, []Domain{Any}
}

// scatterGen draws data of rank 1–3, an axis, an indices shape within the
// data's extents (at most the axis extent along it) and distinct targets
// in every lane: index = (coordinate + shift) mod extent, reversed at
// random, so that no position is written twice (scatter refuses that).
func scatterGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	s := GenShape(src, 1, 3, "shape")
	ax := src.Intn(len(s), "axis")
	is := s.Clone()
	for d := range is {
		is[d] = src.Intn(s[d]+1, "indices_shape")
	}
	n := s[ax]
	shift, rev := src.Intn(n+1, "shift"), src.Intn(2, "reverse") == 1
	st := is.Strides()
	idx := make([]int, is.Size())
	for e := range idx {
		c := (e / st[ax]) % is[ax]
		if rev {
			c = is[ax] - 1 - c
		}
		idx[e] = (c + shift) % n
	}
	a := &spec.Attrs{Axis: ax - len(s)*src.Intn(2, "axis.neg"), IndicesShape: is, Indices: idx}
	return a, []spec.Shape{s, is}, []Domain{Any, Any}
}

// l2Fixup makes every lane of l2_normalize's input have a rational norm:
// a lane of one element keeps it; a longer lane becomes (3t, 4t, 0, …)
// with t its first element (norm 5|t|; t = 0 gives a zero lane, t = ±1 the
// tie with ε = 5).
func l2Fixup(a *spec.Attrs, x spec.Tensor[spec.Rat]) {
	ax, err := spec.NormAxis(a.Axis, x.Shape.Rank())
	if err != nil {
		return
	}
	l := spec.LanesOf(x.Shape, ax)
	for k := 0; k < l.Count(); k++ {
		b := l.Base(k)
		t := x.Data[b]
		if t.IsZero() && (a.Eps == nil || a.Eps.Sign() == 0) {
			t = spec.NewRat(1, 1) // a zero lane with ε = 0 has no value
		}
		for j := 0; j < l.N; j++ {
			x.Data[b+j*l.Inner] = spec.Rat{}
		}
		if l.N == 1 {
			x.Data[b] = t
			continue
		}
		x.Data[b], x.Data[b+l.Inner] = t.Mul(spec.NewRat(3, 1)), t.Mul(spec.NewRat(4, 1))
	}
}

// renormFixup makes every sub-tensor x[…, i, …] of renorm's input have a
// rational norm: a sub-tensor of one element keeps it; a longer one
// becomes (3t, 4t, 0, …) in row-major order with t its first element
// (norm 5|t|; t = ±1 meets the tie with c = 5, t = 0 is a zero
// sub-tensor).
func renormFixup(a *spec.Attrs, x spec.Tensor[spec.Rat]) {
	ax, err := spec.NormAxis(a.Axis, x.Shape.Rank())
	if err != nil {
		return
	}
	l := spec.LanesOf(x.Shape, ax)
	n := l.Outer * l.Inner // the elements of a sub-tensor
	at := func(i, e int) int { return (e/l.Inner*l.N+i)*l.Inner + e%l.Inner }
	for i := 0; i < l.N; i++ {
		t := x.Data[at(i, 0)]
		if n == 1 {
			continue
		}
		for e := 0; e < n; e++ {
			x.Data[at(i, e)] = spec.Rat{}
		}
		x.Data[at(i, 0)], x.Data[at(i, 1)] = t.Mul(spec.NewRat(3, 1)), t.Mul(spec.NewRat(4, 1))
	}
}
