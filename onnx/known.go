package onnx

import "github.com/tlcheck/tlcheck/spec"

// Values known at import that the IR still computes.
//
// Options.Values decides a comparison (and the other piecewise-constant
// ops of ops_fold.go) whose operand is a recorded float graph input: an
// input is exact in every evaluation. The same holds of a value computed
// from inputs and constants by operations that never round, since every
// IEEE 754 evaluation gives their exact result: Identity, Cast and
// CastLike to the same float type, Reshape, Flatten, Squeeze, Unsqueeze
// (the same elements), Neg and Abs (exact in IEEE 754), Where (a
// selection), and ReduceMax and ReduceMin (a selection). Such a value keeps
// its IR node — a gradient flows through it as before — and carries its
// known elements beside it (value.known), which decidedIn gives to the
// comparisons: the ONNX decompositions of Clip (Less(max, Where(Less(x,
// min), min, x))), Shrink (Less(x, Neg(λ))) and Attention with an input
// mask (Equal(ReduceMax(mask), −∞)) then import on their recorded inputs.
// Any op that may round (Add, Mul, Exp, …) ends the chain: its result is
// never known here — except Add when every finite sum is exactly a value
// of the element type (a −∞ mask added to an input mask): an exact result
// is never rounded, and −∞ + x = −∞.

// knownOps are the ops whose output's known elements are derived from
// their inputs' (see the comment above).
var knownOps = map[string]bool{
	"Identity": true, "Cast": true, "CastLike": true, "Reshape": true, "Flatten": true, "Squeeze": true,
	"Unsqueeze": true, "Neg": true, "Abs": true, "Where": true, "ReduceMax": true, "ReduceMin": true,
	"Add": true,
}

// knownIn is input i's value in every evaluation on the recorded inputs
// (a constant, a recorded graph input, or a known computed value), nil
// when it is not known.
func (c *nctx) knownIn(i int) *value {
	v, err := c.in(i)
	if err != nil {
		return nil
	}
	switch {
	case v.isK:
		return v
	case v.known != nil:
		return v.known
	case v.input:
		k, err := c.decidedIn(i)
		if err != nil {
			return nil
		}
		return k
	}
	return nil
}

// propagateKnown sets the known elements of the first output of the node
// just imported when it is a computed float value, the op is one of
// knownOps and its data inputs are known.
func (c *nctx) propagateKnown() {
	if !knownOps[c.n.OpType] || len(c.n.Outputs) == 0 || c.n.Outputs[0] == "" {
		return
	}
	out := c.b.vals[c.n.Outputs[0]]
	if out == nil || out.isK || !out.dt.IsFloat() || out.known != nil {
		return
	}
	var xs []xnum
	switch c.n.OpType {
	case "Where":
		xs = c.knownWhere(out.shape)
	case "ReduceMax", "ReduceMin":
		xs = c.knownReduce(out.shape)
	case "Add":
		xs = c.knownAdd(out.shape, out.dt)
	default:
		a := c.knownIn(0)
		if a == nil || a.dt != out.dt || a.shape.Size() != out.shape.Size() {
			return
		}
		xs = elems(a, a.shape)
		for i, x := range xs {
			if c.n.OpType != "Neg" && c.n.OpType != "Abs" {
				break
			}
			if x.ninf {
				return // +∞ is no known value here
			}
			if c.n.OpType == "Neg" || cmpRat(x.r, spec.Rat{}) < 0 {
				xs[i].r = x.r.Neg()
			}
		}
	}
	if xs == nil {
		return
	}
	k, err := c.fromXnums(out.shape, out.dt, xs)
	if err != nil {
		return
	}
	out.known = k
}

// knownWhere is Where's known result of shape s, nil when an input is
// not known.
func (c *nctx) knownWhere(s spec.Shape) []xnum {
	cond, a, b := c.knownIn(0), c.knownIn(1), c.knownIn(2)
	if cond == nil || a == nil || b == nil {
		return nil
	}
	cs, xs, ys := elems(cond, s), elems(a, s), elems(b, s)
	for i := range xs {
		if cs[i].r.IsZero() && !cs[i].ninf {
			xs[i] = ys[i]
		}
	}
	return xs
}

// knownReduce is ReduceMax's or ReduceMin's known result of shape s, nil
// when the input is not known.
func (c *nctx) knownReduce(s spec.Shape) []xnum {
	v := c.knownIn(0)
	if v == nil {
		return nil
	}
	axes, keep, noop, err := c.reduceAxes(len(v.shape), 18)
	if err != nil || noop {
		return nil
	}
	red := make([]bool, len(v.shape))
	for _, ax := range axes {
		if v.shape[ax] == 0 {
			return nil
		}
		red[ax] = true
	}
	os, xs := reduceMaxMin(v, red, keep, c.n.OpType == "ReduceMax")
	if !os.Equal(s) {
		return nil
	}
	return xs
}

// knownAdd is Add's known result of shape s when both operands are known
// and every finite sum is exactly a value of dt; nil otherwise.
func (c *nctx) knownAdd(s spec.Shape, dt DataType) []xnum {
	a, b := c.knownIn(0), c.knownIn(1)
	if a == nil || b == nil || !a.dt.IsFloat() || !b.dt.IsFloat() {
		return nil
	}
	if bs, err := broadcastShapes(a.shape, b.shape); err != nil || !bs.Equal(s) {
		return nil
	}
	xa, xb := elems(a, s), elems(b, s)
	for i := range xa {
		if xa[i].ninf || xb[i].ninf {
			xa[i] = xnum{ninf: true}
			continue
		}
		xa[i].r = xa[i].r.Add(xb[i].r)
		if !representable(xa[i].r.Big(), dt) {
			return nil
		}
	}
	return xa
}
