package onnx

import (
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Casts to a narrower float type (Cast, CastLike): FLOAT → FLOAT16 or
// BFLOAT16, DOUBLE → FLOAT, FLOAT16 or BFLOAT16, and FLOAT16 ↔ BFLOAT16.
// ONNX's Cast between float types is IEEE 754's conversion, round to
// nearest, ties to even (its saturate attribute concerns the float8 types
// only), so the result is the registry's exact rounding primitive of the
// target format: round_f16, round_bf16 or round_f32 (spec's rounding
// primitives: the nearest value of the format, ties to even, gradual
// underflow; a value at or past the format's overflow threshold Ω has no
// real result — IEEE gives ±∞ — and is refused as a domain error by the
// exact evaluation). A constant is rounded at import, exactly (an element
// that overflows is refused naming it; a −∞ mask element stays −∞, which
// every conversion keeps); any other value gets an IR node of the
// primitive. The primitive's derivative is 0 (piecewise constant; see the
// primitive's entry), so a gradient through such a cast is 0.

// narrowFormat returns the registry's rounding primitive and format for a
// cast from float type from to float type to that may round: to is not
// wider than from (widens and same type are the identity, handled by
// castTo).
func narrowFormat(from, to DataType) (irsem.Op, spec.FloatFormat, bool) {
	if from == to || widens(from, to) || !from.IsFloat() {
		return "", spec.FloatFormat{}, false
	}
	switch to {
	case Float16:
		return "round_f16", spec.FormatBinary16, true
	case BFloat16:
		return "round_bf16", spec.FormatBFloat16, true
	case Float:
		return "round_f32", spec.FormatBinary32, true
	}
	return "", spec.FloatFormat{}, false
}

// castNarrow casts input 0 (v, a float value) to the narrower float type
// dt (see above); false when the cast is not one of these.
func (c *nctx) castNarrow(v *value, dt DataType) (bool, error) {
	op, f, ok := narrowFormat(v.dt, dt)
	if !ok {
		return false, nil
	}
	if v.approx != nil && c.castApprox(v, f, dt) {
		return true, nil // constant arithmetic that rounds to one value (fold_ieee.go)
	}
	if v.isK {
		rs := make([]spec.Rat, len(v.exact()))
		for i, r := range v.exact() {
			if v.ninf != nil && v.ninf[i] {
				rs[i] = r // −∞ converts to −∞ (rats hold 0 there)
				continue
			}
			y, ok := f.RoundRat(r.Big())
			if !ok {
				return true, c.errf(c.inField(0), "element %d (%s) reaches %s's overflow threshold: the cast gives ±∞, which a constant holds only as a −∞ mask",
					i, r.String(), dt.String())
			}
			rs[i] = spec.RatFromBig(y)
		}
		w := &value{shape: v.shape.Clone(), dt: dt, id: -1, isK: true, init: -1, rats: rs}
		if v.ninf != nil {
			w.ninf = append([]bool(nil), v.ninf...)
		}
		c.outValue(0, w)
		return true, nil
	}
	if err := available(op, "cast22"); err != nil {
		return true, c.wrap(attrField("to"), err)
	}
	_, x, err := c.float(0)
	if err != nil {
		return true, err
	}
	c.out(0, c.b.unary(op, x, v.shape), v.shape, dt)
	return true, nil
}

// Casts of a computed float value to an integer type (Cast, CastLike to
// INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64). ONNX's Cast
// text leaves a float → integer conversion "undefined if OOR" and does not
// name the rounding; every runtime and the reference implementation
// (NumPy's astype) truncate toward zero, as C does. The value is the
// registry's trunc_int with the type's range as its attributes lo, hi
// (spec/ops_trunc.go): exact over Rat, a domain error — one line naming
// the node — where the truncation leaves the range, and derivative 0. A
// constant is folded at import by castTo (the same truncation). The
// result may be a graph output (compare judges it exactly: bound 0 where
// the evaluation's enclosure truncates to one integer, inconclusive where
// it straddles one, fpbound/round_cast.go) or be cast back to a float
// type; any other use is refused naming it (the integer ops of the
// importer fold constants only). A cast to BOOL of a computed value (x ≠
// 0, not monotone) is refused, naming the node.

// intTypeBits is the width and signedness of the integer types a float
// value may be cast to.
func intTypeBits(dt DataType) (bits int, signed, ok bool) {
	switch dt {
	case Int8:
		return 8, true, true
	case Int16:
		return 16, true, true
	case Int32:
		return 32, true, true
	case Int64:
		return 64, true, true
	case Uint8:
		return 8, false, true
	case Uint16:
		return 16, false, true
	case Uint32:
		return 32, false, true
	case Uint64:
		return 64, false, true
	}
	return 0, false, false
}

// castTrunc casts the computed float value v to the integer type dt (a
// cast to BOOL is refused); false when the cast is not one of these.
func (c *nctx) castTrunc(v *value, dt DataType) (bool, error) {
	if dt == Bool && !v.isK && v.dt.IsFloat() {
		return true, c.errf(attrField("to"), "cast of a value computed from the model's inputs from %s to BOOL (x ≠ 0) is not supported", v.dt.String())
	}
	bits, signed, ok := intTypeBits(dt)
	if !ok || v.isK || !v.dt.IsFloat() {
		return false, nil
	}
	if err := available("trunc_int", "cast28"); err != nil {
		return true, c.wrap(attrField("to"), err)
	}
	_, x, err := c.float(0)
	if err != nil {
		return true, err
	}
	lo, hi := spec.IntTypeRange(bits, signed)
	id := c.b.emit(irsem.Kind{Op: "trunc_int", Lo: spec.RatFromBig(lo), Hi: spec.RatFromBig(hi)}, v.shape.Clone(), x)
	c.out(0, id, v.shape, dt)
	if w := c.b.vals[c.n.Outputs[0]]; c.n.Outputs[0] != "" && w != nil {
		w.truncInt = true
	}
	return true, nil
}

// castFromTrunc casts a computed integer (castTrunc's) back to a float
// type: to DOUBLE the identity when every value of the integer type is a
// binary64 value (at most 32 bits), to FLOAT the registry's round_f32
// (IEEE's conversion of an integer, exact up to 2^24); false when v is
// not such a value.
func (c *nctx) castFromTrunc(v *value, dt DataType) (bool, error) {
	if !v.truncInt {
		return false, nil
	}
	bits, _, _ := intTypeBits(v.dt)
	id, err := c.b.ir(v)
	if err != nil {
		return true, c.wrap(c.inField(0), err)
	}
	if tb, tsigned, ok := intTypeBits(dt); ok {
		// Another integer type: the identity when its range holds v's (ONNX
		// wraps an integer out of range: not modelled).
		_, vsigned, _ := intTypeBits(v.dt)
		if (tsigned == vsigned && tb >= bits) || (tsigned && !vsigned && tb > bits) {
			c.out(0, id, v.shape, dt)
			if w := c.b.vals[c.n.Outputs[0]]; c.n.Outputs[0] != "" && w != nil {
				w.truncInt = true
			}
			return true, nil
		}
	}
	switch {
	case dt == Double && bits <= 32:
		c.out(0, id, v.shape, dt)
	case dt == Float:
		c.out(0, c.b.unary("round_f32", id, v.shape), v.shape, dt)
	default:
		return true, c.errf(attrField("to"), "cast of an integer computed from float data (%s) to %s is not supported (only to FLOAT, and to DOUBLE from at most 32 bits)", v.dt, dt)
	}
	return true, nil
}
