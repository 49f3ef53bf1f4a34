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
	if v.isK {
		rs := make([]spec.Rat, len(v.rats))
		for i, r := range v.rats {
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
