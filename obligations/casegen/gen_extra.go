package casegen

import "github.com/tlcheck/tlcheck/spec"

// extraStructural holds the generators of the primitives of spec's
// ops_extra_*.go files (issue 25's missing ops) whose applications need
// more than the hints' equal shapes with the last parent's domain.
var extraStructural = map[string]genFunc{
	"reduce_prod": reduceGen,
	"tile":        tileGen,
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
