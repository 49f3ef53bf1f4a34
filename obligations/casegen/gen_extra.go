package casegen

import "github.com/tlcheck/tlcheck/spec"

// extraStructural holds the generators of the primitives of spec's
// ops_extra_*.go files (issue 25's missing ops) whose applications need
// more than the hints' equal shapes with the last parent's domain.
var extraStructural = map[string]genFunc{
	"reduce_prod": reduceGen,
	"tile":        tileGen,
	"scatter":     scatterGen,
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
