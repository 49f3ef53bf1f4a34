package onnx

import (
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Max, Min, ReduceMax and ReduceMin of an integer computed from float data
// (value.truncInt: a QuantizeLinear's code, a Cast of a Round, a
// DynamicQuantizeLinear's code or zero point; issue 22, branch quant38).
//
// Each output element is one of the input elements (or a constant integer
// operand of Max/Min): the IR's max_elem/min_elem, and max_pool_nd over
// the reduced axes (ReduceMin as −max(−x)). None rounds, so the output is
// again a computed integer, judged exactly (bound 0 where every selected
// input is decided; fpbound/quant.go, "Selections of computed integers").
// Max/Min takes every input either a computed integer or a constant of
// an integer type, all of one element type (ONNX's type constraint); a
// computed integer beside a float input, or beside an integer not known at
// import, is refused naming the node.

// selectIntNary imports Max/Min when an input is a computed integer;
// done is false when none is (the float path).
func (c *nctx) selectIntNary(op irsem.Op) (done bool, err error) {
	if op != irsem.OpMaxElem && op != irsem.OpMinElem {
		return false, nil
	}
	vs := make([]*value, len(c.n.Inputs))
	any := false
	for i := range c.n.Inputs {
		if vs[i], err = c.in(i); err != nil {
			return true, err
		}
		any = any || vs[i].truncInt
	}
	if !any {
		return false, nil
	}
	ids := make([]int, len(vs))
	shapes := make([]spec.Shape, len(vs))
	for i, v := range vs {
		if v.dt != vs[0].dt {
			return true, c.errf(c.inField(i), "element type %s, input 0's is %s", v.dt, vs[0].dt)
		}
		if v.truncInt {
			if ids[i], err = c.b.ir(v); err != nil {
				return true, c.wrap(c.inField(i), err)
			}
		} else if ids[i], err = c.qValueIRAt(i, v); err != nil {
			return true, err
		}
		shapes[i] = v.shape
	}
	s, err := broadcastShapes(shapes...)
	if err != nil {
		return true, c.errf("input", "%v", err)
	}
	acc := c.b.broadcast(ids[0], shapes[0], s)
	for i := 1; i < len(ids); i++ {
		acc = c.b.binary(op, acc, c.b.broadcast(ids[i], shapes[i], s), s)
	}
	c.out(0, acc, s, vs[0].dt)
	if w := c.b.vals[c.n.Outputs[0]]; c.n.Outputs[0] != "" && w != nil {
		w.truncInt = true
	}
	return true, nil
}

// qValueIRAt is the const node of input i, an integer known at import
// (a constant operand of Max/Min beside a computed integer).
func (c *nctx) qValueIRAt(i int, v *value) (int, error) {
	if _, _, isInt := anyIntBits(v.dt); !isInt {
		return 0, c.errf(c.inField(i), "element type %s beside an integer computed from float data", v.dt)
	}
	return c.constIntIR(i, v, "an integer not known at import beside an integer computed from float data is not modelled")
}

// reduceIn is input 0 of a reduction of kind and its IR node: a computed
// integer for ReduceMax/ReduceMin (the output is one again: keepInt), else
// a float (c.float).
func (c *nctx) reduceIn(kind string) (*value, int, error) {
	v, err := c.in(0)
	if err != nil {
		return nil, 0, err
	}
	if !v.truncInt || kind != "max" && kind != "min" {
		return c.float(0)
	}
	id, err := c.b.ir(v)
	if err != nil {
		return nil, 0, c.wrap(c.inField(0), err)
	}
	return v, id, nil
}

// constIntIR emits input i's constant integer value v as a const node of
// the IR (exact rationals); refusal is the error's text when v is not
// known at import, and an element that is not a number is refused naming
// its index.
func (c *nctx) constIntIR(i int, v *value, refusal string) (int, error) {
	xs, ok := c.castOperand(v)
	if !ok {
		return 0, c.errf(c.inField(i), "%s", refusal)
	}
	t := irsem.RatTensor{Shape: v.shape.Clone(), Data: make([]spec.Rat, len(xs))}
	for j, x := range xs {
		if x.r == nil || x.undef {
			return 0, c.errf(c.inField(i), "element %d is not a number", j)
		}
		t.Data[j] = spec.RatFromBig(x.r)
	}
	return c.b.emitP(irsem.Kind{Op: irsem.OpConst}, v.shape.Clone(), &irsem.Params{Value: &t}), nil
}
