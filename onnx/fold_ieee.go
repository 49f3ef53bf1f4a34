package onnx

import (
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// Constant arithmetic that a narrowing Cast decides.
//
// The opset-23 Attention decompositions compute their scale from a shape:
// Sqrt(Div(1, Sqrt(Cast(head_size, FLOAT)))) in FLOAT, then Cast to the
// model's FLOAT16 or BFLOAT16. Left as IR nodes these are FLOAT arithmetic
// in a graph that otherwise computes FLOAT16 — a mix of formats no one
// a-priori bound covers. Their operands are constants, so the result is
// known up to rounding: a node of Add, Sub, Mul, Div, Sqrt, Reciprocal or
// Neg of type FLOAT or DOUBLE whose operands are constants (no
// initializer, which stays a payload field a gradient is reported for; no
// −∞ mask; no special) or such results is given an enclosure [lo, hi] of
// every evaluation's value (value.approx): the interval image of the
// operation, computed in float64 and widened by a relative 2^-22 (FLOAT;
// 2^-50 for DOUBLE) plus 2^-140 (2^-1000) — more than one rounding of the
// node's type (2^-24, 2^-53 relative, half a subnormal absolute) plus the
// float64 rounding of the endpoints' arithmetic, so the enclosure holds
// the exact real value, the binary32 one, the binary64 one and any value
// computed with the operands in between.
//
// A narrowing Cast of such a value whose enclosure rounds to one value of
// the target format at both ends is that constant in every evaluation
// (rounding is monotone), and folds (import_cast.go castNarrow). Any other
// reader gets the IR the node would have had: the node's ordinary
// importer, run when the value is first used as IR data (value.lazy; the
// values never materialised are no computed format: imp.finish). A
// division by an enclosure holding 0, a root of one reaching below 0 and
// an enclosure that is not finite are not folded (the ordinary importer
// runs at once). A node with attributes (the legacy broadcast of opset
// < 7) is not folded, and neither is FLOAT16 or BFLOAT16 arithmetic.

// approxK is the enclosure of each element of a folded constant
// arithmetic value (row-major).
type approxK struct{ lo, hi []float64 }

// foldIEEEOps are the ops foldIEEE folds.
var foldIEEEOps = map[string]bool{"Add": true, "Sub": true, "Mul": true, "Div": true, "Sqrt": true, "Reciprocal": true, "Neg": true}

// foldIEEE binds node c.n's output to an enclosed value when the comment
// above allows; done reports it. importer is the node's ordinary
// importer, run lazily.
func (c *nctx) foldIEEE(importer opImporter) (done bool) {
	n := c.n
	if !foldIEEEOps[n.OpType] || len(n.Attrs) > 0 || len(n.Outputs) != 1 || n.Outputs[0] == "" {
		return false
	}
	binary := n.OpType == "Add" || n.OpType == "Sub" || n.OpType == "Mul" || n.OpType == "Div"
	if (binary && len(n.Inputs) != 2) || (!binary && len(n.Inputs) != 1) {
		return false
	}
	var ops []*value
	var encs []approxK
	for i := range n.Inputs {
		v, ok := c.b.vals[n.Inputs[i]]
		if !ok || (v.dt != Float && v.dt != Double) || v.ninf != nil || v.nonreal != nil || (i > 0 && v.dt != ops[0].dt) {
			return false
		}
		switch {
		case v.approx != nil:
			encs = append(encs, *v.approx)
		case v.isK && v.init < 0 && len(v.exact()) == v.shape.Size():
			e := approxK{lo: make([]float64, len(v.exact())), hi: make([]float64, len(v.exact()))}
			for j, r := range v.exact() {
				e.lo[j], _ = r.Big().Float64() // a value of the type: exact
				e.hi[j] = e.lo[j]
			}
			encs = append(encs, e)
		default:
			return false
		}
		ops = append(ops, v)
	}
	s := ops[0].shape
	if binary {
		var err error
		if s, err = broadcastShapes(ops[0].shape, ops[1].shape); err != nil {
			return false
		}
	}
	rel, abs := math.Ldexp(1, -22), math.Ldexp(1, -140)
	if ops[0].dt == Double {
		rel, abs = math.Ldexp(1, -50), math.Ldexp(1, -1000)
	}
	out := approxK{lo: make([]float64, s.Size()), hi: make([]float64, s.Size())}
	for k := range out.lo {
		a0, a1 := encs[0].lo[bIndex(s, ops[0].shape, k)], encs[0].hi[bIndex(s, ops[0].shape, k)]
		var b0, b1 float64
		if binary {
			b0, b1 = encs[1].lo[bIndex(s, ops[1].shape, k)], encs[1].hi[bIndex(s, ops[1].shape, k)]
		}
		lo, hi, ok := encloseOp(n.OpType, a0, a1, b0, b1)
		if !ok {
			return false
		}
		out.lo[k] = lo - math.Abs(lo)*rel - abs
		out.hi[k] = hi + math.Abs(hi)*rel + abs
		if math.IsInf(out.lo[k], 0) || math.IsInf(out.hi[k], 0) {
			return false
		}
	}
	name, where, b := n.Outputs[0], n.Where(), c.b
	v := &value{name: name, shape: s.Clone(), dt: ops[0].dt, id: -1, init: -1, where: where, approx: &out}
	lc := *c
	v.lazy = func() (int, error) {
		// The ordinary import of the node, now: it binds the output to
		// an IR value, which becomes this value's node (once, for this
		// value and its aliases).
		if v.id >= 0 {
			return v.id, nil
		}
		saved := b.where
		b.where = where
		defer func() { b.where = saved }()
		delete(b.vals, name)
		err := importer(&lc)
		w, ok := b.vals[name]
		b.vals[name] = v
		if err != nil {
			return 0, err
		}
		if !ok || w.id < 0 {
			return 0, lc.errf("", "internal error: no IR value for %q", name)
		}
		v.id = w.id
		return w.id, nil
	}
	b.vals[name] = v
	return true
}

// encloseOp is the float64 interval image of op over a ∈ [a0, a1] (and b
// ∈ [b0, b1]), before widening; ok false where foldIEEE does not fold.
func encloseOp(op string, a0, a1, b0, b1 float64) (lo, hi float64, ok bool) {
	switch op {
	case "Neg":
		return -a1, -a0, true
	case "Sqrt":
		if a0 < 0 {
			return 0, 0, false
		}
		return math.Sqrt(a0), math.Sqrt(a1), true
	case "Reciprocal":
		op, b0, b1, a0, a1 = "Div", a0, a1, 1, 1
	}
	if op == "Div" && b0 <= 0 && b1 >= 0 {
		return 0, 0, false
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range [2]float64{a0, a1} {
		for _, y := range [2]float64{b0, b1} {
			var r float64
			switch op {
			case "Add":
				r = x + y
			case "Sub":
				r = x - y
			case "Mul":
				r = x * y
			default: // Div
				r = x / y
			}
			lo, hi = math.Min(lo, r), math.Max(hi, r)
		}
	}
	return lo, hi, !math.IsNaN(lo) && !math.IsNaN(hi)
}

// castApprox folds a narrowing Cast to format f (type dt) of an enclosed
// value v when both ends of every element's enclosure round to one value
// of f; false otherwise.
func (c *nctx) castApprox(v *value, f spec.FloatFormat, dt DataType) bool {
	rs := make([]spec.Rat, len(v.approx.lo))
	for i := range rs {
		lo, hi := f.RoundFloat64(v.approx.lo[i]), f.RoundFloat64(v.approx.hi[i])
		if lo != hi || math.IsInf(lo, 0) || math.IsNaN(lo) {
			return false
		}
		r, err := spec.RatFromFloat64(lo)
		if err != nil {
			return false
		}
		rs[i] = r
	}
	c.outValue(0, &value{shape: v.shape.Clone(), dt: dt, id: -1, isK: true, init: -1, rats: rs})
	return true
}
