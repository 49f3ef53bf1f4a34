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
//	ScatterElements [11, 16, 18]  with constant indices and reduction
//	              "none": the registry's scatter(data, updates); a position
//	              written twice is refused (the operator leaves it
//	              undefined), and so are the reductions add, mul, max, min
//	ScatterND [11] with reduction "none": scatter along axis 0 of the
//	              flattened data (importScatterND, ops_scatter.go)
//
// ReduceProd stays the left fold of mul_elem over the slices of each
// reduced axis (ops_reduce2.go): it handles several axes, keepdims and
// noop_with_empty_axes, and its derivative is mul's, exact with zeros,
// so switching to the reduce_prod primitive (one axis) would add nothing
// but a second path. ReduceL2 and LpNormalization are decomposed there as
// well.
func extraOps() map[string]opImporter {
	return map[string]opImporter{
		"Asinh":           unaryOp(opAsinh),
		"ScatterElements": importScatterElements,
	}
}

// The registry's tags of the extra primitives.
const (
	opAsinh   irsem.Op = "asinh"
	opPow     irsem.Op = "pow"
	opTile    irsem.Op = "tile"
	opScatter irsem.Op = "scatter"
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
	for _, e := range v.exact() {
		if !e.Same(v.exact()[0]) {
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

// scatterFlat writes the m flat updates u into the n flat data d at the
// distinct positions target: scatter along axis 0.
func (b *imp) scatterFlat(d, u int, n int, target []int) (int, error) {
	if err := available(opScatter, "newops"); err != nil {
		return 0, err
	}
	k := irsem.Kind{Op: opScatter, IndicesShape: spec.Shape{len(target)}, Indices: append([]int(nil), target...)}
	return b.emit(k, spec.Shape{n}, d, u), nil
}

// importScatterElements: ScatterElements with constant indices and
// reduction "none" onto the registry's scatter. Negative indices count
// from the end of axis; duplicate targets are refused by name.
func importScatterElements(c *nctx) error {
	red, err := scatterReduction(c)
	if err != nil {
		return err
	}
	if red != "none" {
		return c.errf(attrField("reduction"), "%q is not supported (reduction none maps onto scatter)", red)
	}
	dv, d, iv, uv, u, err := scatterOperands(c)
	if err != nil {
		return err
	}
	a, err := c.attrInt("axis", 0)
	if err != nil {
		return err
	}
	ax, err := normAxis(a, len(dv.shape))
	if err != nil {
		return c.errf(attrField("axis"), "%v", err)
	}
	if !uv.shape.Equal(iv.shape) {
		return c.errf(c.inField(2), "shape %v, expected the indices' shape %v", uv.shape, iv.shape)
	}
	idx, err := c.indicesWithin(iv, dv.shape[ax])
	if err != nil {
		return err
	}
	sa := &spec.Attrs{Axis: ax, IndicesShape: iv.shape.Clone(), Indices: idx}
	if _, err := spec.ScatterTargets(sa, dv.shape); err != nil {
		return c.errf(c.inField(1), "%v", err)
	}
	if err := available(opScatter, "newops"); err != nil {
		return c.wrap("", err)
	}
	k := irsem.Kind{Op: opScatter, Axis: ax, IndicesShape: sa.IndicesShape, Indices: idx}
	c.out(0, c.b.emit(k, dv.shape, d, u), dv.shape, dv.dt)
	return nil
}
