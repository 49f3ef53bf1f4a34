package onnx

import (
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// Folding correctly rounded arithmetic on constants.
//
// The opset-23 Attention decompositions compute their scale from a shape:
// Sqrt(Div(1, Sqrt(Cast(head_size, FLOAT)))) in FLOAT, then Cast to the
// model's FLOAT16 or BFLOAT16. Left as IR nodes these are FLOAT arithmetic
// in a graph that otherwise computes FLOAT16 — a mix of formats no one
// a-priori bound covers. But their operands are constants, and fpbound's
// model (M2, fpbound/doc.go) is IEEE 754 arithmetic of the node's format
// with round to nearest, ties to even: Add, Sub, Mul, Div and Sqrt of
// given operands then have exactly one result, fl(a op b), in every
// evaluation the theorem covers. So a node of these ops (and Reciprocal,
// fl(1/x), and Neg, exact) whose operands are all constants — no
// initializer (that stays a payload field a gradient is reported for), no
// −∞ mask, no special — and of type FLOAT or DOUBLE is folded to the
// constant fl(a op b), computed here in Go's float32 (float64) arithmetic,
// which is IEEE 754's (each operation rounded to its type: the operands
// are converted explicitly and no expression is fused; Sqrt in float32 is
// math.Sqrt in float64 rounded to float32, which is the correctly rounded
// binary32 root since 53 ≥ 2·24 + 2). A result that is not finite, a
// negative Sqrt argument and a zero divisor are left to the IR (no fold).
// A node with attributes (the legacy broadcast of opset < 7) is not
// folded. FLOAT16 and BFLOAT16 arithmetic is not folded: a runtime may
// compute it in a wider type.

// foldIEEEOps are the ops foldIEEE folds.
var foldIEEEOps = map[string]bool{"Add": true, "Sub": true, "Mul": true, "Div": true, "Sqrt": true, "Reciprocal": true, "Neg": true}

// foldIEEE folds node c.n when the comment above allows; done reports it.
func (c *nctx) foldIEEE() (done bool, err error) {
	n := c.n
	if !foldIEEEOps[n.OpType] || len(n.Attrs) > 0 || len(n.Outputs) != 1 || n.Outputs[0] == "" {
		return false, nil
	}
	binary := n.OpType == "Add" || n.OpType == "Sub" || n.OpType == "Mul" || n.OpType == "Div"
	if (binary && len(n.Inputs) != 2) || (!binary && len(n.Inputs) != 1) {
		return false, nil
	}
	var ops []*value
	for i := range n.Inputs {
		v, ok := c.b.vals[n.Inputs[i]]
		if !ok || !v.isK || v.init >= 0 || (v.dt != Float && v.dt != Double) || v.ninf != nil || v.nonreal != nil || len(v.rats) != v.shape.Size() {
			return false, nil
		}
		if i > 0 && v.dt != ops[0].dt {
			return false, nil
		}
		ops = append(ops, v)
	}
	s := ops[0].shape
	if binary {
		if s, err = broadcastShapes(ops[0].shape, ops[1].shape); err != nil {
			return false, nil
		}
	}
	dt := ops[0].dt
	xs := make([][]xnum, len(ops))
	for i, v := range ops {
		xs[i] = elems(v, s)
	}
	rs := make([]spec.Rat, s.Size())
	for k := range rs {
		a, _ := xs[0][k].r.Big().Float64() // a value of dt: exact
		b := 0.0
		if binary {
			b, _ = xs[1][k].r.Big().Float64()
		}
		r, ok := ieeeOp(n.OpType, a, b, dt == Float)
		if !ok {
			return false, nil
		}
		rs[k] = spec.RatFromBig(new(big.Rat).SetFloat64(r))
	}
	c.outValue(0, &value{shape: s.Clone(), dt: dt, id: -1, isK: true, init: -1, rats: rs})
	return true, nil
}

// ieeeOp is fl(a op b) in binary32 (f32) or binary64, ok false when the
// operation leaves its domain or the result is not finite.
func ieeeOp(op string, a, b float64, f32 bool) (float64, bool) {
	if (op == "Div" && b == 0) || (op == "Reciprocal" && a == 0) || (op == "Sqrt" && a < 0) {
		return 0, false
	}
	var r float64
	if f32 {
		x, y := float32(a), float32(b)
		var z float32
		switch op {
		case "Add":
			z = x + y
		case "Sub":
			z = x - y
		case "Mul":
			z = x * y
		case "Div":
			z = x / y
		case "Reciprocal":
			z = 1 / x
		case "Neg":
			z = -x
		case "Sqrt":
			z = float32(math.Sqrt(float64(x)))
		}
		r = float64(z)
	} else {
		switch op {
		case "Add":
			r = a + b
		case "Sub":
			r = a - b
		case "Mul":
			r = a * b
		case "Div":
			r = a / b
		case "Reciprocal":
			r = 1 / a
		case "Neg":
			r = -a
		case "Sqrt":
			r = math.Sqrt(a)
		}
	}
	return r, !math.IsInf(r, 0) && !math.IsNaN(r)
}
