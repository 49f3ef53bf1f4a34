package spec

import (
	"fmt"
	"math"
	"math/big"
)

// The primitives round_int and quant_int: rounding to an integer, ties to
// even (ONNX Round of a computed value), and QuantizeLinear to an integer
// type of a computed value with a known positive scale (issue 22 points 1
// and 3, branch q36):
//
//	y = round_int(x)                 = rne(x)
//	y = quant_int(x; c, bias, lo, hi) = clamp(rne(fl32(fl32(x) / c)) + bias, lo, hi)
//
// rne is the nearest integer, a tie (an odd multiple of 1/2) to the even
// one (ONNX's Round and QuantizeLinear; NumPy's rint; C's nearbyint in the
// default mode). fl32 is round_f32 with IEEE 754's overflow to ±∞ (the
// ONNX text: "the type of y_scale determines the precision of the
// division", here FLOAT: the importer emits quant_int only for a FLOAT x
// and a FLOAT scale, where the text's and the reference's precisions are
// both binary32); ±∞ saturates to lo or hi (the text's saturate). c > 0
// (the scale), bias (the zero point, an integer; nil: 0), lo ≤ hi
// integers (the integer type's range) are attributes — the one place the
// facts of a QuantizeLinear node live once imported. Both are total over
// the reals and exact over Rat (an integer). Over the float scalars, which
// model a runtime, round_int keeps NaN and ±∞ (ONNX's Round) and
// quant_int maps NaN to NaN (undefined: NaN has no integer value).
//
// Monotonicity. rne, fl32, division by c > 0, + bias and clamp are each
// non-decreasing over the extended reals, so both maps are: over Interval
// they are [Q(lo′), Q(hi′)] of the endpoints exactly, which is what the
// enclosure judgements (fpbound's integer-rounding bound, quant.go there)
// rest on.
//
// Derivative. Both are piecewise constant with a jump at every tie
// (rne's x ∈ ℤ + 1/2; quant_int's jumps are the x where fl32(fl32(x)/c)
// crosses one); the derivative is 0 wherever it exists, and the registry's
// convention at the jumps is 0, as for trunc_int and the float casts: JVP
// and VJP are 0 everywhere. The derivative obligations check the JVP
// against the function at drawn points, which lie off the jumps (a jump
// point has measure zero); at a jump the Clarke set of rne is [0, ∞)·δ —
// not a set of finite numbers — so fpbound's first-order bound treats a
// box that straddles one as voiding it (adj.RoundTo records the
// discontinuity), and the classic bound gives +∞ there: inconclusive,
// never a verdict across a jump.

// QuantGrid makes a FloatFormat an integer rounding (round_int when Scale
// is nil, quant_int otherwise): see above.
type QuantGrid struct {
	Scale  *big.Rat // c > 0; nil: round_int (no division, no fl32)
	Zp     *big.Rat // the zero point, an integer; nil: 0
	Lo, Hi *big.Rat // the clamp range (quant_int: both given)
}

// RoundHalfEven is rne(r): the nearest integer, a tie to the even one.
func RoundHalfEven(r *big.Rat) *big.Int {
	// ⌊r⌋ and the remainder r − ⌊r⌋ ∈ [0, 1) (Go's Div is Euclidean: the
	// remainder of a positive denominator is ≥ 0).
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	switch c := new(big.Int).Lsh(m, 1).Cmp(r.Denom()); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(1))
	}
	return q
}

// QuantFormat is the integer rounding of g as a FloatFormat (the format
// round_int and quant_int pass to RoundOf).
func QuantFormat(g QuantGrid) FloatFormat {
	if g.Scale == nil {
		return FloatFormat{Name: "the integers (ties to even)", Quant: &g}
	}
	zp := "0"
	if g.Zp != nil {
		zp = g.Zp.RatString()
	}
	return FloatFormat{Name: fmt.Sprintf("the quantization grid (scale %s, zero point %s) clamped to [%s, %s]", g.Scale.RatString(), zp, g.Lo.RatString(), g.Hi.RatString()), Quant: &g}
}

// quantRat is the value of the integer rounding of r (see above), given as
// a rational, or ±∞ (inf = ±1) for round_int of an infinite value; it is
// always defined for a finite r.
func (g *QuantGrid) quantRat(r *big.Rat) *big.Rat {
	if g.Scale == nil {
		return new(big.Rat).SetInt(RoundHalfEven(r))
	}
	// fl32(fl32(r)/c); an overflow is ±∞, which saturates.
	t, ok := FormatBinary32.RoundRat(r)
	if ok {
		t, ok = FormatBinary32.RoundRat(new(big.Rat).Quo(t, g.Scale))
	}
	if !ok {
		if r.Sign() < 0 {
			return new(big.Rat).Set(g.Lo)
		}
		return new(big.Rat).Set(g.Hi)
	}
	y := new(big.Rat).SetInt(RoundHalfEven(t))
	if g.Zp != nil {
		y.Add(y, g.Zp)
	}
	return g.clamp(y)
}

func (g *QuantGrid) clamp(y *big.Rat) *big.Rat {
	switch {
	case g.Lo != nil && y.Cmp(g.Lo) < 0:
		return new(big.Rat).Set(g.Lo)
	case g.Hi != nil && y.Cmp(g.Hi) > 0:
		return new(big.Rat).Set(g.Hi)
	}
	return y
}

// quantFloat64 is the integer rounding of a float64 x: NaN stays NaN;
// round_int keeps ±∞, quant_int saturates it to lo or hi. The result is a
// float64 exactly (an integer of a float64 or of a clamp range the
// importer bounds by 2^32); a zero result is +0.
func (g *QuantGrid) quantFloat64(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case math.IsInf(x, 0) && g.Scale == nil:
		return x
	case math.IsInf(x, -1):
		v, _ := g.Lo.Float64()
		return v + 0
	case math.IsInf(x, 1):
		v, _ := g.Hi.Float64()
		return v + 0
	}
	v, _ := g.quantRat(new(big.Rat).SetFloat64(x)).Float64()
	return v + 0
}

// quantAttrs is the grid of quant_int's attributes: c > 0, bias (nil: 0),
// lo ≤ hi all integers but c, lo and hi given.
func quantAttrs(a *Attrs) (FloatFormat, error) {
	if a == nil || a.C == nil || a.Lo == nil || a.Hi == nil {
		return FloatFormat{}, fmt.Errorf("quant_int needs c (the scale), lo and hi")
	}
	if a.C.Sign() <= 0 {
		return FloatFormat{}, fmt.Errorf("quant_int needs a scale c > 0, got c=%s", a.C.RatString())
	}
	if !a.Lo.IsInt() || !a.Hi.IsInt() || a.Lo.Cmp(a.Hi) > 0 || a.Bias != nil && !a.Bias.IsInt() {
		return FloatFormat{}, fmt.Errorf("quant_int needs integers lo ≤ hi and an integer bias (the zero point)")
	}
	return QuantFormat(QuantGrid{Scale: a.C, Zp: a.Bias, Lo: a.Lo, Hi: a.Hi}), nil
}

// quantPrims are round_int and quant_int (see above).
func quantPrims[T Scalar[T]]() []*Prim[T] {
	zero := func(_ *Attrs, x, _ T) (T, error) { return x.FromInt(0), nil }
	rint := QuantFormat(QuantGrid{})
	return []*Prim[T]{
		unaryPrim[T](&OpInfo{Name: "round_int", Exact: true, ZeroPreserving: true,
			Ties: "rne′ := 0 everywhere: the true derivative off the ties (piecewise constant) and 0 at the jumps by convention",
			IR:   &IRForm{Tag: "round_int", Superset: true, Doc: "the nearest integer, ties to even (ONNX Round of a computed value)"},
			Doc:  "rne(x): the nearest integer, ties to even; derivative 0"},
			func(_ *Attrs, x T) (T, error) { return RoundOf(x, rint) },
			zero),
		roundingPrim[T](&OpInfo{Name: "quant_int", Exact: true, ZeroPreserving: true, Attrs: []string{"C", "Bias", "Lo", "Hi"},
			Ties: "Q′ := 0 everywhere: the true derivative off the jumps (piecewise constant) and 0 at the jumps by convention",
			IR:   &IRForm{Tag: "quant_int", Attrs: []string{"c", "bias", "lo", "hi"}, Superset: true, Doc: "clamp(rne(fl32(fl32(x)/c)) + bias, lo, hi): ONNX QuantizeLinear of a computed FLOAT value with a FLOAT scale c > 0 into an integer type's range [lo, hi], zero point bias"},
			Doc:  "clamp(rne(fl32(fl32(x)/c)) + bias, lo, hi), c > 0, ±∞ past fl32 saturating; derivative 0"},
			quantAttrs),
	}
}
