package onnx

import (
	"fmt"
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// Constant folding of the integer and boolean subgraphs that exporters
// emit for masks and positions (GPT-2's and Llama's causal masks: Range,
// Trilu, Equal, Less, Not, Where, CumSum; shape arithmetic: Div, Mod, Max,
// Min), evaluated at import on constants, exactly, by the ONNX operator
// specification. Their results are constants of the imported graph (an
// integer or boolean tensor is never IR data); a float result is a float
// constant like an initializer.
//
// These ops are comparisons, logic, rounding and index computations: as
// functions of a float input they are piecewise constant, so their
// derivative is zero wherever it exists. The importer folds them when
// every input is a constant and refuses them, naming the node and the
// input, when an input is computed from the model's float inputs — that
// result would be data-dependent (a boolean or an index chosen by the
// data), which the IR does not model. Where with a constant condition and
// computed branches is imported as a selection (see importWhere).

// foldOps lists the folded op types.
func foldOps() map[string]opImporter {
	m := map[string]opImporter{
		"Not": importNot, "Where": importWhere, "Range": importRange, "Trilu": importTrilu,
		"IsNaN": importIsNaN, "IsInf": importIsInf, "Size": importSize,
		"Floor": roundOp("floor"), "Ceil": roundOp("ceil"), "Round": roundOp("round"),
		"Mod": importMod, "ArgMax": argOp(true), "ArgMin": argOp(false),
		"NonZero": importNonZero,
	}
	for _, op := range []string{"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor", "BitShift"} {
		m[op] = cmpOp(op)
	}
	delete(m, "BitShift")
	return m
}

// xnum is one element of a folded constant: an exact rational, or −∞
// (a float constant may hold −∞: an additive attention mask).
type xnum struct {
	r    spec.Rat
	ninf bool
}

func (a xnum) cmp(b xnum) int {
	switch {
	case a.ninf && b.ninf:
		return 0
	case a.ninf:
		return -1
	case b.ninf:
		return 1
	}
	return cmpRat(a.r, b.r)
}

// elems returns the elements of constant v broadcast to s.
func elems(v *value, s spec.Shape) []xnum {
	n := v.shape.Size()
	xs := make([]xnum, n)
	for i := range xs {
		if v.isInt() {
			xs[i].r = spec.NewRat(v.ints[i], 1)
		} else {
			xs[i].r = v.exact()[i]
			xs[i].ninf = v.ninf != nil && v.ninf[i]
		}
	}
	return bcast(xs, v.shape, s)
}

// bcast broadcasts row-major data of shape from to shape to (numpy rules;
// from must broadcast to to).
func bcast[T any](xs []T, from, to spec.Shape) []T {
	out := make([]T, to.Size())
	off := len(to) - len(from)
	fst := from.Strides()
	idx := make([]int, len(to))
	for o := range out {
		src := 0
		for i := range from {
			if from[i] != 1 {
				src += idx[off+i] * fst[i]
			}
		}
		out[o] = xs[src]
		for d := len(to) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < to[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// constIn returns input i, which must be a constant: a computed input is
// refused as data-dependent, naming the input.
func (c *nctx) constIn(i int) (*value, error) {
	v, err := c.in(i)
	if err != nil {
		return nil, err
	}
	if !v.isK {
		return nil, c.errf(c.inField(i), "computed from the model's inputs: %s of it is data-dependent (only constants are folded at import)", c.n.OpType)
	}
	return v, nil
}

// decidedIn is constIn that also takes a float graph input whose
// recorded value Options.Values gives (see there): an input is exact in
// every evaluation, so an exact function of it — a comparison, an index,
// a rounding to an integer — is decided at import.
func (c *nctx) decidedIn(i int) (*value, error) {
	v, err := c.in(i)
	if err != nil {
		return nil, err
	}
	if v.known != nil {
		return v.known, nil
	}
	if v.isK || !v.input {
		return c.constIn(i)
	}
	t, ok := c.b.o.Values[v.name]
	if !ok || t == nil {
		return c.constIn(i)
	}
	rs, err := t.Rats()
	if err != nil {
		return nil, c.wrap(c.inField(i), err)
	}
	if len(rs) != v.shape.Size() {
		return nil, c.errf(c.inField(i), "Options.Values has %d elements for shape %v", len(rs), v.shape)
	}
	return &value{name: v.name, shape: v.shape.Clone(), dt: v.dt, id: -1, isK: true, init: -1, rats: rs}, nil
}

// rawInput returns the recorded float64 elements of input i when it is a
// float graph input with a value in Options.Values (NaN and ±∞ kept).
func (c *nctx) rawInput(i int) ([]float64, bool) {
	v, err := c.in(i)
	if err != nil || !v.input || v.isK {
		return nil, false
	}
	t, ok := c.b.o.Values[v.name]
	if !ok || t == nil || t.Len() != v.shape.Size() {
		return nil, false
	}
	out := make([]float64, t.Len())
	for j := range out {
		if t.DataType == Float || t.DataType.Is16() {
			out[j] = float64(t.Float32[j])
		} else if t.DataType == Double {
			out[j] = t.Float64[j]
		} else {
			return nil, false
		}
	}
	return out, true
}

// fromXnums makes a constant of dtype dt from folded elements; an integer
// dtype needs integral elements.
func (c *nctx) fromXnums(s spec.Shape, dt DataType, xs []xnum) (*value, error) {
	if !dt.IsFloat() {
		ints := make([]int64, len(xs))
		for i, x := range xs {
			b := x.r.Big()
			if x.ninf || !b.IsInt() || !b.Num().IsInt64() {
				return nil, c.errf("output 0", "element %d is not an int64", i)
			}
			ints[i] = b.Num().Int64()
			if err := intOfType(dt, ints[i]); err != nil {
				return nil, c.errf("output 0", "element %d: %v", i, err)
			}
		}
		return &value{shape: s.Clone(), dt: dt, id: -1, isK: true, init: -1, ints: ints}, nil
	}
	rs := make([]spec.Rat, len(xs))
	var ninf []bool
	for i, x := range xs {
		rs[i] = x.r
		if x.ninf {
			if ninf == nil {
				ninf = make([]bool, len(xs))
			}
			ninf[i] = true
			rs[i] = spec.Rat{}
		}
	}
	return &value{shape: s.Clone(), dt: dt, id: -1, isK: true, init: -1, rats: rs, ninf: ninf}, nil
}

func boolOf(b bool) xnum {
	if b {
		return xnum{r: spec.NewRat(1, 1)}
	}
	return xnum{}
}

// cmpOp folds the comparisons Equal, Less, LessOrEqual, Greater,
// GreaterOrEqual (−∞ is below every number and equal to itself) and the
// logic ops And, Or, Xor on constants, numpy-broadcast; the result is BOOL.
func cmpOp(op string) opImporter {
	return func(c *nctx) error {
		if ok, err := c.dataCmp(op); ok {
			return err
		}
		if err := c.oneOutput(2, 2); err != nil {
			return err
		}
		a, err := c.decidedIn(0)
		if err != nil {
			return err
		}
		b, err := c.decidedIn(1)
		if err != nil {
			return err
		}
		s, err := broadcastShapes(a.shape, b.shape)
		if err != nil {
			return c.errf("input", "%v", err)
		}
		if _, err := s.Check(0); err != nil {
			return c.errf("input", "%v", err)
		}
		xa, xb := elems(a, s), elems(b, s)
		out := make([]xnum, len(xa))
		for i := range xa {
			k := xa[i].cmp(xb[i])
			ta, tb := !xa[i].r.IsZero() || xa[i].ninf, !xb[i].r.IsZero() || xb[i].ninf
			var r bool
			switch op {
			case "Equal":
				r = k == 0
			case "Less":
				r = k < 0
			case "LessOrEqual":
				r = k <= 0
			case "Greater":
				r = k > 0
			case "GreaterOrEqual":
				r = k >= 0
			case "And":
				r = ta && tb
			case "Or":
				r = ta || tb
			case "Xor":
				r = ta != tb
			}
			out[i] = boolOf(r)
		}
		v, err := c.fromXnums(s, Bool, out)
		if err != nil {
			return err
		}
		c.outValue(0, v)
		return nil
	}
}

// importNot folds logical negation of a constant.
func importNot(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	a, err := c.decidedIn(0)
	if err != nil {
		return err
	}
	xs := elems(a, a.shape)
	for i := range xs {
		xs[i] = boolOf(xs[i].r.IsZero() && !xs[i].ninf)
	}
	v, err := c.fromXnums(a.shape, Bool, xs)
	if err != nil {
		return err
	}
	c.outValue(0, v)
	return nil
}

// importIsNaN folds IsNaN of a constant: no constant the importer holds
// is NaN (a NaN initializer is refused when read), so every element is
// false.
func importIsNaN(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	if raw, ok := c.rawInput(0); ok {
		return c.rawBools(raw, math.IsNaN)
	}
	a, err := c.constIn(0)
	if err != nil {
		return err
	}
	v, err := c.fromXnums(a.shape, Bool, make([]xnum, a.shape.Size()))
	if err != nil {
		return err
	}
	c.outValue(0, v)
	return nil
}

// importIsInf folds IsInf of a constant (detect_negative, detect_positive
// default 1): true at the −∞ elements when detect_negative is set.
func importIsInf(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	neg, err := c.attrBool("detect_negative", true)
	if err != nil {
		return err
	}
	pos, err := c.attrBool("detect_positive", true)
	if err != nil {
		return err
	}
	if raw, ok := c.rawInput(0); ok {
		return c.rawBools(raw, func(x float64) bool { return (neg && math.IsInf(x, -1)) || (pos && math.IsInf(x, 1)) })
	}
	a, err := c.constIn(0)
	if err != nil {
		return err
	}
	xs := elems(a, a.shape)
	for i := range xs {
		xs[i] = boolOf(neg && xs[i].ninf)
	}
	v, err := c.fromXnums(a.shape, Bool, xs)
	if err != nil {
		return err
	}
	c.outValue(0, v)
	return nil
}

// rawBools outputs the BOOL tensor f(x) of the recorded input elements
// raw (input 0's shape).
func (c *nctx) rawBools(raw []float64, f func(float64) bool) error {
	v, err := c.in(0)
	if err != nil {
		return err
	}
	xs := make([]xnum, len(raw))
	for i, x := range raw {
		xs[i] = boolOf(f(x))
	}
	out, err := c.fromXnums(v.shape, Bool, xs)
	if err != nil {
		return err
	}
	c.outValue(0, out)
	return nil
}

// importSize is the element count of the input, an int64 scalar.
func importSize(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	a, err := c.in(0)
	if err != nil {
		return err
	}
	c.outValue(0, intConst(spec.Shape{}, []int64{int64(a.shape.Size())}))
	return nil
}

// floorRat is ⌊r⌋.
func floorRat(r spec.Rat) spec.Rat {
	b := r.Big()
	q := new(big.Int)
	m := new(big.Int)
	q.DivMod(b.Num(), b.Denom(), m) // Euclidean: m ≥ 0 for a positive denominator, so q = ⌊num/den⌋
	return spec.Rat{}.FromRat(new(big.Rat).SetInt(q))
}

// roundRat rounds r as ONNX's Round: to the nearest integer, halves to
// even.
func roundRat(r spec.Rat) spec.Rat {
	f := floorRat(r)
	d := r.Sub(f) // in [0, 1)
	half := spec.NewRat(1, 2)
	switch k := cmpRat(d, half); {
	case k < 0:
		return f
	case k > 0:
		return f.Add(spec.NewRat(1, 1))
	}
	if f.Big().Num().Bit(0) == 0 {
		return f
	}
	return f.Add(spec.NewRat(1, 1))
}

// roundOp folds Floor, Ceil and Round of a float constant (−∞ stays −∞).
// Round of a computed value is the registry's round_int
// (quantize_computed.go); Floor and Ceil of one are piecewise constant
// functions the registry has no primitive for, refused as data-dependent.
func roundOp(kind string) opImporter {
	return func(c *nctx) error {
		if err := c.oneOutput(1, 1); err != nil {
			return err
		}
		if kind == "round" {
			// Round of a computed float value: round_int
			// (quantize_computed.go).
			if v, err := c.in(0); err == nil && !v.isK && v.known == nil && v.dt.IsFloat() && !c.recorded(v) {
				return c.roundComputed(v)
			}
		}
		a, err := c.decidedIn(0)
		if err != nil {
			return err
		}
		xs := elems(a, a.shape)
		for i, x := range xs {
			if x.ninf {
				continue
			}
			switch kind {
			case "floor":
				xs[i].r = floorRat(x.r)
			case "ceil":
				xs[i].r = floorRat(x.r.Neg()).Neg()
			default:
				xs[i].r = roundRat(x.r)
			}
		}
		v, err := c.fromXnums(a.shape, a.dt, xs)
		if err != nil {
			return err
		}
		c.outValue(0, v)
		return nil
	}
}

// importMod folds Mod of constants and recorded float inputs (decidedIn):
// fmod = 0 takes the sign of the divisor, a − b·⌊a/b⌋; fmod = 1 the sign
// of the dividend, a − b·trunc(a/b). With fmod = 1 the remainder of two
// floats is a float of their format (IEEE 754 remainder-like operations
// are exact: |r| < |b| and r is a multiple of the smaller of the
// operands' ulps), so every runtime gives the folded value; with fmod = 0
// on floats (opset 28) a − b·⌊a/b⌋ may round, and an element whose exact
// value is not a FLOAT or DOUBLE is refused. An integer divisor of 0 is an
// error naming the element.
//
// Float special cases (modSpecial): a recorded input may hold NaN or ±∞,
// and a float divisor may be ±0. The operator text (opset 28, both fmod
// values; for fmod = 1 earlier opsets say "like C fmod()", whose C99
// Annex F cases are the same) decides every such element: NaN if either
// operand is NaN, the dividend is ±∞ or the divisor ±0; a finite dividend
// x over a divisor y = ±∞ is x for fmod = 1, and for fmod = 0 is ±0 when
// x = 0, x when x and y have the same sign, y otherwise. A NaN or ±∞
// result is carried as value.nonreal (a graph output only).
func importMod(c *nctx) error {
	if err := c.oneOutput(2, 2); err != nil {
		return err
	}
	fmod, err := c.attrBool("fmod", false)
	if err != nil {
		return err
	}
	a, ra, err := c.modOperand(0)
	if err != nil {
		return err
	}
	b, rb, err := c.modOperand(1)
	if err != nil {
		return err
	}
	if a.dt.IsFloat() && !fmod && c.b.opset < 28 {
		return c.errf(attrField("fmod"), "0 with float inputs (before opset 28 the operator requires fmod = 1 for floats)")
	}
	s, err := broadcastShapes(a.shape, b.shape)
	if err != nil {
		return c.errf("input", "%v", err)
	}
	xa, xb := elems(a, s), elems(b, s)
	out := make([]xnum, len(xa))
	var nonreal map[int]float64
	for i := range xa {
		if xa[i].ninf || xb[i].ninf {
			return c.errf("input", "element %d: Mod of −∞", i)
		}
		if a.dt.IsFloat() {
			fa, fb := modRaw(ra, xa[i], s, a.shape, i), modRaw(rb, xb[i], s, b.shape, i)
			if r, special := modSpecial(fa, fb, fmod); special {
				if finite(r) {
					out[i] = xa[i] // the dividend itself (a finite x over ±∞)
					continue
				}
				if nonreal == nil {
					nonreal = map[int]float64{}
				}
				out[i], nonreal[i] = xnum{r: spec.NewRat(0, 1)}, r
				continue
			}
		}
		if xb[i].r.IsZero() {
			return c.errf(c.inField(1), "element %d is 0 (Mod by zero)", i)
		}
		q, _ := xa[i].r.Div(xb[i].r)
		t := floorRat(q)
		if fmod && q.Big().Sign() < 0 {
			t = floorRat(q.Neg()).Neg()
		}
		out[i] = xnum{r: xa[i].r.Sub(xb[i].r.Mul(t))}
		if a.dt.IsFloat() && !fmod && !representable(out[i].r.Big(), a.dt) {
			return c.errf("output 0", "element %d: the remainder %s is not a %s (the operator rounds it)", i, out[i].r, a.dt)
		}
	}
	v, err := c.fromXnums(s, a.dt, out)
	if err != nil {
		return err
	}
	v.nonreal = nonreal
	c.outValue(0, v)
	return nil
}

// modOperand is decidedIn(i) for Mod, except that a recorded float input
// holding NaN or ±∞ is taken too: its finite elements as rationals (0 at
// the others), with its raw elements (nil when the operand is finite).
func (c *nctx) modOperand(i int) (*value, []float64, error) {
	raw, ok := c.rawInput(i)
	if ok {
		special := false
		for _, x := range raw {
			special = special || !finite(x)
		}
		if special {
			v, _ := c.in(i)
			rs := make([]spec.Rat, len(raw))
			for j, x := range raw {
				rs[j] = spec.NewRat(0, 1)
				if finite(x) {
					rs[j] = spec.RatFromBig(new(big.Rat).SetFloat64(x))
				}
			}
			return &value{name: v.name, shape: v.shape.Clone(), dt: v.dt, id: -1, isK: true, init: -1, rats: rs}, raw, nil
		}
	}
	v, err := c.decidedIn(i)
	return v, nil, err
}

// modRaw is the float64 value of Mod's operand element at index k of the
// broadcast shape s: the raw element when the operand has raw ones (NaN
// and ±∞ kept), else the folded rational (a value of a float type, so
// exact in float64).
func modRaw(raw []float64, x xnum, s, shape spec.Shape, k int) float64 {
	if raw != nil {
		return raw[bIndex(s, shape, k)]
	}
	f, _ := x.r.Big().Float64()
	return f
}

// modSpecial is the operator text's special case of Mod at float
// operands x, y (see importMod), with special false when none applies
// (both finite, y non-zero): then the remainder is the rational fold's.
func modSpecial(x, y float64, fmod bool) (float64, bool) {
	switch {
	case math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || y == 0:
		return math.NaN(), true
	case !math.IsInf(y, 0):
		return 0, false
	case fmod || x == 0 || (x > 0) == (y > 0):
		return x, true
	}
	return y, true
}

// importRange folds Range(start, limit, delta): n = max(⌈(limit −
// start)/delta⌉, 0) elements start + i·delta. A float range must hold
// values its type represents exactly (each is checked), since the
// operator computes them in that type.
func importRange(c *nctx) error {
	if err := c.oneOutput(3, 3); err != nil {
		return err
	}
	if c.b.opset >= 27 {
		if _, err := c.attrInt("stash_type", 1); err != nil { // float16/bfloat16 accumulation; exact here
			return err
		}
	}
	var xs [3]xnum
	var dt DataType
	for i := range xs {
		v, err := c.constIn(i)
		if err != nil {
			return err
		}
		if v.shape.Size() != 1 {
			return c.errf(c.inField(i), "shape %v, expected a scalar", v.shape)
		}
		xs[i] = elems(v, v.shape)[0]
		if xs[i].ninf {
			return c.errf(c.inField(i), "−∞")
		}
		dt = v.dt
	}
	if xs[2].r.IsZero() {
		return c.errf(c.inField(2), "delta is 0")
	}
	q, _ := xs[1].r.Sub(xs[0].r).Div(xs[2].r)
	n := floorRat(q.Neg()).Neg() // ⌈q⌉
	nb := n.Big().Num()
	if nb.Sign() < 0 {
		nb = big.NewInt(0)
	}
	if !nb.IsInt64() || nb.Int64() > int64(limits.Current().Elements) {
		return c.errf("input", "the range has %v elements, beyond the element limit", nb)
	}
	out := make([]xnum, nb.Int64())
	for i := range out {
		out[i] = xnum{r: xs[0].r.Add(xs[2].r.Mul(spec.NewRat(int64(i), 1)))}
		if dt.Is16() {
			return c.errf("output 0", "a %s range is not supported (its rounding is not modelled)", dt)
		}
		if dt == Float || dt == Double {
			f := out[i].r.Float64()
			if dt == Float {
				f = float64(float32(f))
			}
			if r, err := spec.RatFromFloat64(f); err != nil || !r.Same(out[i].r) {
				return c.errf("output 0", "element %d (%v) is not exact in %s", i, out[i].r, dt)
			}
		}
	}
	v, err := c.fromXnums(spec.Shape{len(out)}, dt, out)
	if err != nil {
		return err
	}
	c.outValue(0, v)
	return nil
}

// triluKeep reports whether Trilu keeps element (i, j) of a matrix:
// upper keeps j − i ≥ k, lower keeps j − i ≤ k.
func triluKeep(i, j int, k int64, upper bool) bool {
	d := int64(j) - int64(i)
	if upper {
		return d >= k
	}
	return d <= k
}

// triluMask is the keep mask of Trilu over shape s (rank ≥ 2).
func triluMask(s spec.Shape, k int64, upper bool) []bool {
	r, cc := s[len(s)-2], s[len(s)-1]
	m := make([]bool, s.Size())
	for o := range m {
		i, j := (o/cc)%r, o%cc
		m[o] = triluKeep(i, j, k, upper)
	}
	return m
}

// importTrilu: the upper (upper = 1, default) or lower triangle of the
// last two axes, offset by the constant k (default 0), zero elsewhere.
// Folded on a constant; on a computed float value a selection between the
// value and zeros (importWhere's form).
func importTrilu(c *nctx) error {
	if err := c.oneOutput(1, 2); err != nil {
		return err
	}
	upper, err := c.attrBool("upper", true)
	if err != nil {
		return err
	}
	k := int64(0)
	if c.present(1) {
		kv, err := c.constInts(1)
		if err != nil {
			return err
		}
		if len(kv.ints) != 1 {
			return c.errf(c.inField(1), "shape %v, expected one element", kv.shape)
		}
		k = kv.ints[0]
	}
	a, err := c.in(0)
	if err != nil {
		return err
	}
	if len(a.shape) < 2 {
		return c.errf(c.inField(0), "rank %d, Trilu needs rank ≥ 2", len(a.shape))
	}
	keep := triluMask(a.shape, k, upper)
	if a.isK {
		xs := elems(a, a.shape)
		for i := range xs {
			if !keep[i] {
				xs[i] = xnum{}
			}
		}
		v, err := c.fromXnums(a.shape, a.dt, xs)
		if err != nil {
			return err
		}
		c.outValue(0, v)
		return nil
	}
	if !a.dt.IsFloat() {
		return c.errf(c.inField(0), "integer tensor is not a constant")
	}
	x, err := c.b.ir(a)
	if err != nil {
		return c.wrap(c.inField(0), err)
	}
	zero := c.b.constScalar(spec.Rat{}, a.shape)
	id, err := c.b.selectIR(keep, a.shape, x, zero)
	if err != nil {
		return c.wrap("", err)
	}
	c.out(0, id, a.shape, a.dt)
	return nil
}

// selectIR is the elementwise selection out[i] = keep[i] ? x[i] : y[i] of
// two IR values of shape s: a gather from the concatenation of their
// flattened elements (no arithmetic, so the result is exactly the chosen
// element; the gradient flows to the chosen side only).
func (b *imp) selectIR(keep []bool, s spec.Shape, x, y int) (int, error) {
	n := s.Size()
	allX, allY := true, true
	for _, k := range keep {
		allX = allX && k
		allY = allY && !k
	}
	switch {
	case allX:
		return x, nil
	case allY:
		return y, nil
	}
	fx := b.reshape(x, s, spec.Shape{n})
	fy := b.reshape(y, s, spec.Shape{n})
	cat, cs := b.concat([]int{fx, fy}, []spec.Shape{{n}, {n}}, 0)
	idx := make([]int, n)
	for i, k := range keep {
		idx[i] = i
		if !k {
			idx[i] = n + i
		}
	}
	g, _, err := b.gather(cat, cs, 0, idx, spec.Shape{n})
	if err != nil {
		return 0, err
	}
	return b.reshape(g, spec.Shape{n}, s), nil
}

// importWhere: Where(cond, X, Y) elementwise, numpy-broadcast. The
// condition must be a constant (a data-dependent condition is refused,
// naming it). With constant branches the result is folded; otherwise it
// is a selection (selectIR) between the broadcast branches. A branch
// holding −∞ (an attention mask written as Where(mask, −∞, scores)) makes
// the result a masked value: −∞ at the elements chosen from it, which
// only an Add and a Softmax over the last axis may consume.
func importWhere(c *nctx) error {
	if ok, err := c.whereMask(); ok {
		return err
	}
	if err := c.oneOutput(3, 3); err != nil {
		return err
	}
	cond, err := c.decidedIn(0)
	if err != nil {
		return err
	}
	xv, err := c.in(1)
	if err != nil {
		return err
	}
	yv, err := c.in(2)
	if err != nil {
		return err
	}
	if xv.dt.IsFloat() != yv.dt.IsFloat() {
		return c.errf("input", "branches of element types %s and %s", xv.dt, yv.dt)
	}
	s, err := broadcastShapes(cond.shape, xv.shape, yv.shape)
	if err != nil {
		return c.errf("input", "%v", err)
	}
	if _, err := s.Check(0); err != nil {
		return c.errf("input", "%v", err)
	}
	cs := elems(cond, s)
	keep := make([]bool, len(cs))
	for i, x := range cs {
		keep[i] = !x.r.IsZero() || x.ninf
	}
	if xv.isK && yv.isK {
		xs, ys := elems(xv, s), elems(yv, s)
		for i := range xs {
			if !keep[i] {
				xs[i] = ys[i]
			}
		}
		v, err := c.fromXnums(s, xv.dt, xs)
		if err != nil {
			return err
		}
		c.outValue(0, v)
		return nil
	}
	if !xv.dt.IsFloat() {
		return c.errf("input", "integer branches must be constants")
	}
	var ids [2]int
	var masks [2][]bool
	for k, v := range []*value{xv, yv} {
		id, err := c.b.irFinite(v)
		if err != nil {
			return c.wrap(c.inField(k+1), err)
		}
		ids[k] = c.b.broadcast(id, v.shape, s)
		if v.ninf != nil {
			masks[k] = bcast(v.ninf, v.shape, s)
		}
	}
	id, err := c.b.selectIR(keep, s, ids[0], ids[1])
	if err != nil {
		return c.wrap("", err)
	}
	var ninf []bool
	if masks[0] != nil || masks[1] != nil {
		ninf = make([]bool, len(keep))
		for i, k := range keep {
			m := masks[1]
			if k {
				m = masks[0]
			}
			ninf[i] = m != nil && m[i]
		}
	}
	c.outMasked(0, id, s, xv.dt, ninf)
	return nil
}

// argOp folds ArgMax / ArgMin of a constant (axis, keepdims,
// select_last_index); of a computed value the index is data-dependent
// and refused.
func argOp(isMax bool) opImporter {
	return func(c *nctx) error {
		if err := c.oneOutput(1, 1); err != nil {
			return err
		}
		a, err := c.decidedIn(0)
		if err != nil {
			return err
		}
		axis, err := c.attrInt("axis", 0)
		if err != nil {
			return err
		}
		keep, err := c.attrBool("keepdims", true)
		if err != nil {
			return err
		}
		last, err := c.attrBool("select_last_index", false)
		if err != nil {
			return err
		}
		ax, err := normAxis(axis, len(a.shape))
		if err != nil {
			return c.errf(attrField("axis"), "%v", err)
		}
		if a.shape[ax] == 0 {
			return c.errf(c.inField(0), "axis %d is empty", ax)
		}
		xs := elems(a, a.shape)
		outer, n, inner := prod(a.shape[:ax]), a.shape[ax], prod(a.shape[ax+1:])
		res := make([]int64, outer*inner)
		for o := 0; o < outer; o++ {
			for in := 0; in < inner; in++ {
				best := 0
				for j := 1; j < n; j++ {
					k := xs[(o*n+j)*inner+in].cmp(xs[(o*n+best)*inner+in])
					if !isMax {
						k = -k
					}
					if k > 0 || (k == 0 && last) {
						best = j
					}
				}
				res[o*inner+in] = int64(best)
			}
		}
		s := append(a.shape[:ax:ax].Clone(), a.shape[ax+1:]...)
		if keep {
			s = a.shape.Clone()
			s[ax] = 1
		}
		c.outValue(0, intConst(s, res))
		return nil
	}
}

// importNonZero folds NonZero of a constant: the [rank, count] indices of
// the non-zero elements in row-major order.
func importNonZero(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	a, err := c.decidedIn(0)
	if err != nil {
		return err
	}
	xs := elems(a, a.shape)
	r := len(a.shape)
	var hits []int
	for i, x := range xs {
		if !x.r.IsZero() || x.ninf {
			hits = append(hits, i)
		}
	}
	st := a.shape.Strides()
	out := make([]int64, r*len(hits))
	for k, h := range hits {
		for d := 0; d < r; d++ {
			out[d*len(hits)+k] = int64((h / st[d]) % a.shape[d])
		}
	}
	c.outValue(0, intConst(spec.Shape{r, len(hits)}, out))
	return nil
}

// foldIntDiv is ONNX Div of integers: the quotient truncated toward zero
// (a zero divisor is an error naming the element).
func foldIntDiv(x, y int64) (int64, error) {
	if y == 0 {
		return 0, fmt.Errorf("division by zero")
	}
	if x == math.MinInt64 && y == -1 {
		return 0, fmt.Errorf("integer overflow")
	}
	return x / y, nil
}

// foldIntNary folds Sum, Max, Min of integer constants (shape arithmetic:
// an exporter's clamp of a sequence length); done is false unless every
// input is an integer constant.
func (c *nctx) foldIntNary(op string) (done bool, err error) {
	var vs []*value
	for i := range c.n.Inputs {
		v, err := c.in(i)
		if err != nil {
			return true, err
		}
		if !v.isK || !v.isInt() {
			return false, nil
		}
		vs = append(vs, v)
	}
	if op == "mean" {
		return true, c.errf("input", "Mean of integers is not supported")
	}
	shapes := make([]spec.Shape, len(vs))
	for i, v := range vs {
		shapes[i] = v.shape
	}
	s, err := broadcastShapes(shapes...)
	if err != nil {
		return true, c.errf("input", "%v", err)
	}
	acc := bcast(vs[0].ints, vs[0].shape, s)
	for _, v := range vs[1:] {
		xs := bcast(v.ints, v.shape, s)
		for i, x := range xs {
			switch op {
			case "max_elem":
				acc[i] = max(acc[i], x)
			case "min_elem":
				acc[i] = min(acc[i], x)
			default:
				r := acc[i] + x
				if (r > acc[i]) != (x > 0) && x != 0 {
					return true, c.errf("input", "element %d: integer overflow", i)
				}
				acc[i] = r
			}
		}
	}
	dt := commonIntType(vs...)
	for i, x := range acc {
		if err := intOfType(dt, x); err != nil {
			return true, c.errf("output 0", "element %d: %v", i, err)
		}
	}
	v := intConst(s, acc)
	v.dt = dt
	c.outValue(0, v)
	return true, nil
}

// commonIntType is the element type of an integer fold's result: the
// inputs' type when they share one (the operators' type constraint), else
// INT64 (shape arithmetic across index types).
func commonIntType(vs ...*value) DataType {
	for _, v := range vs[1:] {
		if v.dt != vs[0].dt {
			return Int64
		}
	}
	return vs[0].dt
}

// intOfType checks that the exact integer result x of a fold is a value
// of dt. ONNX defines no wraparound for Add, Sub, Mul, Div, Sum, Max, Min
// or Mod of integers (numpy's reference wraps; the operator text is
// silent), so a result outside the type — an unsigned difference below 0,
// a product beyond the type — is refused naming the element rather than
// wrapped: every value the import folds is the one the operator defines.
func intOfType(dt DataType, x int64) error {
	switch dt {
	case Int64:
		return nil
	case Uint64:
		if x < 0 {
			return fmt.Errorf("%d is out of the range of UINT64 (ONNX does not define integer wraparound)", x)
		}
		return nil
	case Uint32:
		if x < 0 || x > math.MaxUint32 {
			return fmt.Errorf("%d is out of the range of UINT32 (ONNX does not define integer wraparound)", x)
		}
		return nil
	}
	if err := narrowCheck(dt, x); err != nil {
		return fmt.Errorf("%v (ONNX does not define integer wraparound)", err)
	}
	return nil
}
