package onnx

import (
	"fmt"
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// Casts to and from the float 8, float 4 and sub-byte integer types
// (FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0,
// FLOAT4E2M1, INT4, UINT4, INT2, UINT2).
//
// The graph computes nothing in these types: a value of one is data (a
// graph input, bound at import as integers are, or an initializer) or the
// result of a Cast or CastLike, and only a Cast, a CastLike or a graph
// output reads it. Such a cast is decided at import, exactly, when its
// operand is known in every evaluation on the recorded inputs — a
// constant, a recorded graph input (Options.Values) or a value that ops
// which never round derive from them (known.go): its operand is then
// exact in every evaluation, so its result is the operator's rounding of
// that exact value, and a recorded output is compared with it exactly
// (Imported.Exact). A cast into these types of a value computed by ops
// that may round is refused naming the node (not modelled: no registry
// primitive rounds to these formats yet).
//
// The conversions (spec.MiniFloat for the formulas, from the Cast text of
// opsets 19–28):
//
//   - float → float 8 or FLOAT4E2M1: spec.MiniFloat.CastRat /
//     CastFloat64 (round to nearest even at the format's mantissa width,
//     saturate to ±max or NaN/±∞ per the saturate attribute; FLOAT4E2M1
//     out of range, ±∞ or NaN: undefined);
//   - float → FLOAT8E8M0: spec.CastE8M0 (round_mode, saturate);
//   - float 8 / float 4 → float: the element's value, rounded to the
//     target as any narrowing float cast is (spec.FloatFormat.RoundRat;
//     FLOAT8E8M0's 2^127 overflows FLOAT16: +∞ as the text says, "+/-
//     infinity if OOR"); NaN and ±∞ stay;
//   - float → sub-byte integer: truncation toward zero as trunc_int's;
//     outside the type's range, NaN or ±∞: undefined ("fixed point:
//     undefined if OOR");
//   - integer → integer: the value when the target holds it, else its low
//     bits reinterpreted ("discard higher bits and reinterpret");
//   - sub-byte integer → float: the integer, exact in every float type.
//
// An undefined element is no value: compare judges a recorded value there
// inconclusive, never holds or fails.

// miniFormat is the spec.MiniFloat of a float 8 or float 4 type
// (FLOAT8E8M0 has none: spec.CastE8M0).
func miniFormat(dt DataType) (spec.MiniFloat, bool) {
	switch dt {
	case Float8E4M3FN:
		return spec.FormatE4M3FN, true
	case Float8E4M3FNUZ:
		return spec.FormatE4M3FNUZ, true
	case Float8E5M2:
		return spec.FormatE5M2, true
	case Float8E5M2FNUZ:
		return spec.FormatE5M2FNUZ, true
	case Float4E2M1:
		return spec.FormatE2M1, true
	}
	return spec.MiniFloat{}, false
}

// subByteBits is the width and signedness of a sub-byte integer type.
func subByteBits(dt DataType) (bits int, signed bool) {
	switch dt {
	case Int4:
		return 4, true
	case Uint4:
		return 4, false
	case Int2:
		return 2, true
	case Uint2:
		return 2, false
	}
	return 0, false
}

// anyIntBits is the width and signedness of any integer type (BOOL as 1
// unsigned bit is not one: false).
func anyIntBits(dt DataType) (int, bool, bool) {
	if b, s := subByteBits(dt); b > 0 {
		return b, s, true
	}
	return intTypeBits(dt)
}

// isNarrowType reports whether casts from or to dt are the ones of this
// file.
func isNarrowType(dt DataType) bool { return dt.IsMini() || dt.IsSubByteInt() }

// melem is one element of a cast's operand: exact (r) or a special value
// (NaN or ±∞ in f, r nil).
type melem struct {
	r     *big.Rat
	f     float64
	undef bool // an element ONNX left undefined (value.undef)
}

// miniTensorValue is the constant of a float 8 or float 4 tensor: its
// finite elements exact in rats, NaN and ±∞ in nonreal.
func miniTensorValue(t *Tensor, v *value) error {
	if len(t.Float32) != v.shape.Size() {
		return fmt.Errorf("shape %v needs %d values, the tensor holds %d", v.shape, v.shape.Size(), len(t.Float32))
	}
	v.rats = make([]spec.Rat, len(t.Float32))
	for i, f := range t.Float32 {
		x := float64(f)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			if v.nonreal == nil {
				v.nonreal = map[int]float64{}
			}
			v.nonreal[i] = x
			continue
		}
		r, err := spec.RatFromFloat64(x)
		if err != nil {
			return fmt.Errorf("element %d: %v", i, err)
		}
		v.rats[i] = r
	}
	return nil
}

// castOperand is the operand's elements when they are known in every
// evaluation on the recorded inputs (see above); false otherwise.
func (c *nctx) castOperand(v *value) ([]melem, bool) {
	n := v.shape.Size()
	out := make([]melem, n)
	switch {
	case v.isK && v.ints != nil:
		for i, x := range v.ints {
			out[i] = melem{r: new(big.Rat).SetInt64(x)}
		}
	case v.isK && len(v.exact()) == n:
		for i, r := range v.exact() {
			switch x, ok := v.nonreal[i]; {
			case ok:
				out[i] = melem{f: x}
			case v.ninf != nil && v.ninf[i]:
				out[i] = melem{f: math.Inf(-1)}
			default:
				out[i] = melem{r: r.Big()}
			}
		}
	case v.known != nil && len(v.known.exact()) == n:
		return c.castOperand(v.known)
	case v.input:
		xs, ok := c.rawInput(0)
		if !ok {
			return nil, false
		}
		for i, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				out[i] = melem{f: x}
			} else {
				out[i] = melem{r: new(big.Rat).SetFloat64(x)}
			}
		}
	default:
		return nil, false
	}
	for i, u := range v.undef {
		out[i].undef = u
	}
	return out, true
}

// castMini casts input 0 to dt when the source or the target is one of
// this file's types (false otherwise): the operand must be known (see
// above); the result is a constant, with the elements that ONNX leaves
// undefined marked (value.undef).
func (c *nctx) castMini(dt DataType) (bool, error) {
	if !c.present(0) {
		return false, nil
	}
	v, ok := c.b.vals[c.n.Inputs[0]]
	if !ok || (!isNarrowType(dt) && !isNarrowType(v.dt) && v.undef == nil) {
		return false, nil
	}
	if v.mask01 || v.truncInt || v.grad {
		return true, c.errf(c.inField(0), "cast from %s to %s of a value computed from the model's inputs is not modelled", v.dt, dt)
	}
	sat, err := c.attrBool("saturate", true)
	if err != nil {
		return true, err
	}
	mode := "up"
	if dt == Float8E8M0 || c.n.Attr("round_mode") != nil {
		if mode, err = c.attrString("round_mode", "up"); err != nil {
			return true, err
		}
	}
	xs, ok := c.castOperand(v)
	if !ok {
		return true, c.errf(attrField("to"), "cast from %s to %s of a value computed from the model's inputs by ops that may round is not modelled (only a cast of a recorded input, a constant, or a value that ops which never round derive from them is decided, exactly)", v.dt, dt)
	}
	w := &value{shape: v.shape.Clone(), dt: dt, id: -1, isK: true, init: -1, castExact: true}
	undef := func(i int) {
		if w.undef == nil {
			w.undef = make([]bool, len(xs))
		}
		w.undef[i] = true
	}
	special := func(i int, f float64) {
		if w.nonreal == nil {
			w.nonreal = map[int]float64{}
		}
		w.nonreal[i] = f
	}
	srcInt := v.ints != nil && !v.dt.IsMini()
	switch {
	case dt.IsMini():
		m, _ := miniFormat(dt)
		w.rats = make([]spec.Rat, len(xs))
		for i, x := range xs {
			if x.undef {
				undef(i)
				continue
			}
			var y float64
			switch {
			case dt == Float8E8M0:
				y, err = spec.CastE8M0(x.f, x.r, mode, sat)
				if err != nil {
					return true, c.wrap(attrField("round_mode"), err)
				}
			case x.r == nil:
				y = m.CastFloat64(x.f, sat)
			default:
				y = m.CastRat(x.r, sat)
			}
			switch {
			case spec.IsUndefined(y):
				undef(i)
			case math.IsNaN(y) || math.IsInf(y, 0):
				special(i, y)
			default:
				w.rats[i] = spec.RatFromBig(new(big.Rat).SetFloat64(y))
			}
		}
	case dt.IsFloat():
		w.rats = make([]spec.Rat, len(xs))
		f, narrow := castFormat(dt)
		for i, x := range xs {
			if x.undef {
				undef(i)
				continue
			}
			if x.r == nil {
				special(i, x.f)
				continue
			}
			y := x.r
			if narrow {
				var ok bool
				if y, ok = f.RoundRat(x.r); !ok {
					special(i, math.Copysign(math.Inf(1), float64(x.r.Sign())))
					continue
				}
			}
			w.rats[i] = spec.RatFromBig(y)
		}
	default:
		bits, signed, ok := anyIntBits(dt)
		if !ok {
			return true, c.errf(attrField("to"), "cast from %s to %s is not supported", v.dt, dt)
		}
		lo, hi := spec.IntTypeRange(bits, signed)
		trunc := spec.IntFormat(lo, hi)
		w.ints = make([]int64, len(xs))
		for i, x := range xs {
			if x.r == nil || x.undef {
				undef(i) // NaN or ±∞: no integer value
				continue
			}
			if srcInt {
				w.ints[i] = wrapInt(x.r.Num().Int64(), bits, signed)
				continue
			}
			y, ok := trunc.RoundRat(x.r)
			if !ok {
				undef(i) // "fixed point: undefined if OOR"
				continue
			}
			w.ints[i] = y.Num().Int64()
		}
	}
	c.outValue(0, w)
	return true, nil
}

// castFormat is the rounding of a cast to the float type dt, false for
// DOUBLE (every value of these types is a binary64 value).
func castFormat(dt DataType) (spec.FloatFormat, bool) {
	switch dt {
	case Float16:
		return spec.FormatBinary16, true
	case BFloat16:
		return spec.FormatBFloat16, true
	case Float:
		return spec.FormatBinary32, true
	}
	return spec.FloatFormat{}, false
}

// wrapInt is x's low bits bits reinterpreted as a signed (two's
// complement) or unsigned integer (ONNX's integer → integer cast out of
// range; the identity in range).
func wrapInt(x int64, bits int, signed bool) int64 {
	if bits >= 64 {
		return x
	}
	m := uint64(x) & (1<<bits - 1)
	if signed && m>>(bits-1) == 1 {
		return int64(m) - 1<<bits
	}
	return int64(m)
}

// miniExact is the ExactOutput of a float 8 or float 4 constant v.
func miniExact(name string, index int, v *value) ExactOutput {
	fs := make([]float64, len(v.exact()))
	for i, r := range v.exact() {
		if x, ok := v.nonreal[i]; ok {
			fs[i] = x
			continue
		}
		fs[i], _ = r.Big().Float64() // exact: a value of the format
	}
	return ExactOutput{Name: name, Index: index, Shape: v.shape.Clone(), DataType: v.dt, Floats: fs, Undefined: v.undef}
}
