package onnx

import (
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The ONNX mappings of the registry primitives added for issue 25's
// missing ops (spec's ops_extra_*.go):
//
//	Asinh   [9]   the registry's asinh
//	Pow     [7]   with an exponent that is not a uniform constant (a
//	              computed tensor, or a constant whose elements differ):
//	              the registry's pow(x, y) = exp(y·ln x) on the broadcast
//	              operands, defined for a base x > 0 (a base ≤ 0 is
//	              refused when the graph is evaluated, naming the node and
//	              element); a uniform constant exponent keeps importPow's
//	              exact forms (products, inv, sqrt, exp∘scale∘log)
//	Tile    [6]   the registry's tile (importTile, ops_shape.go)
//
// ReduceProd stays the left fold of mul_elem over the slices of each
// reduced axis (ops_reduce2.go): it handles several axes, keepdims and
// noop_with_empty_axes, and its derivative is mul's, exact with zeros,
// so switching to the reduce_prod primitive (one axis) would add nothing
// but a second path. ReduceL2 and LpNormalization are decomposed there as
// well.
func extraOps() map[string]opImporter {
	return map[string]opImporter{
		"Asinh": unaryOp(opAsinh),
	}
}

// The registry's tags of the extra primitives.
const (
	opAsinh irsem.Op = "asinh"
	opPow   irsem.Op = "pow"
	opTile  irsem.Op = "tile"
)

// importPowTensor is Pow with a tensor exponent: pow(x, y) on the
// operands broadcast to their common shape (the registry's pow takes
// equal shapes).
func importPowTensor(c *nctx) error {
	a, ia, err := c.float(0)
	if err != nil {
		return err
	}
	bv, ib, err := c.float(1)
	if err != nil {
		return err
	}
	ia, ib, s, err := c.broadcast2(a, ia, bv, ib)
	if err != nil {
		return err
	}
	c.out(0, c.b.binary(opPow, ia, ib, s), s, a.dt)
	return nil
}

// uniform reports whether a constant's elements are all equal (true for
// no elements, which importPow refuses by name).
func (v *value) uniform() bool {
	for _, e := range v.ints {
		if e != v.ints[0] {
			return false
		}
	}
	for _, e := range v.rats {
		if !e.Same(v.rats[0]) {
			return false
		}
	}
	return true
}

// tile repeats x to the output shape out (each extent a multiple of x's).
func (b *imp) tile(x int, out spec.Shape) (int, error) {
	if err := available(opTile, "newops"); err != nil {
		return 0, err
	}
	return b.emit(irsem.Kind{Op: opTile, OutShape: out.Clone()}, out, x), nil
}
