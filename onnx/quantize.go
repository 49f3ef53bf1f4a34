package onnx

import (
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// QuantizeLinear and DequantizeLinear [10, 13, 19, 21, 23, 24, 25, 28].
//
// The operator text (onnx 1.23.2, opset 28):
//
//	QuantizeLinear    y = saturate(round(x / y_scale) + y_zero_point)
//	DequantizeLinear  y = (x − x_zero_point) · x_scale
//
// with the scale and zero point per tensor (a scalar or a one-element
// 1-D tensor), per axis (1-D of length D_axis, opset 13) or blocked
// (rank r, extent ⌈D_axis / block_size⌉ on axis, opset 21); the zero
// point has the scale's shape, its type is y's (absent: 0; Quantize's
// type then output_dtype, else UINT8); Dequantize's y has output_dtype,
// else x_scale's type.
//
// Semantics taken, element by element (every rule decided on exact
// rationals):
//
//   - Quantize's division is rounded: "the type of y_scale determines the
//     precision of the division operation between x and y_scale, unless
//     the precision attribute is specified". So q = fl_P(fl_P(x) /
//     fl_P(s)) with fl_P round to nearest even in P (binary16, bfloat16,
//     binary32 or binary64; an overflow is ±∞), and round(q) is to the
//     nearest integer, ties to even. ONNX's reference
//     (onnx/reference/ops/op_quantize_linear.py) instead divides in numpy's
//     promotion of x's and the scale's types (FLOAT by FLOAT16 in FLOAT;
//     INT32 by FLOAT in DOUBLE). Where the two readings differ on the
//     element's result, the element is undefined (inconclusive); the
//     node tests divide FLOAT by FLOAT, where they agree.
//   - Integer types: y = clamp(round(q) + zp, lo, hi), the ranges of the
//     text's table; q = ±∞ saturates (the text's saturate(±∞)); q = NaN is
//     undefined (no integer; the reference's astype(int32) of NaN is
//     numpy's unspecified value).
//   - Float 8 types: y = the Cast of q with the saturate attribute
//     (spec.MiniFloat, the Cast text's tables). FLOAT4E2M1: saturating
//     always — the text says saturate "has no effect for float4e2m1 …
//     since those types have no non-saturating … encoding", and the
//     reference saturates — so |q| > 6 (and q = ±∞) gives ±6; NaN is
//     undefined (no NaN encoding).
//   - A float zero point that is not 0 is refused: the text adds it
//     ("the quantization formula remains the same"), the reference
//     ignores it for the float 8 types (Quantize), adds it for FLOAT4E2M1,
//     and raises for float 8 (Dequantize); the precision of the text's
//     addition is not stated.
//   - Dequantize: d = x − zp is exact (an integer, or a float 8/float 4
//     value with zp = 0) and P = d·s is computed exactly; "the output type
//     also determines the precision of the multiplication". The text
//     leaves open whether d and s are first converted to that type; the
//     reference multiplies in FLOAT (fl32(d)·s rounded to FLOAT, then cast
//     to the output type). The element is decided when fl_T(P),
//     fl_T(fl32(fl32(d)·s)) and fl_T(fl_T(d)·fl_T(s)) are one value, and
//     undefined otherwise. They are one value whenever d is exact in FLOAT
//     and in T, s is a value of T, and P is exact in FLOAT or T is FLOAT
//     (all three are then fl_T(P)): FLOAT output from every quantized type
//     but INT32 beyond 2^24; FLOAT16/BFLOAT16 output with a scale of that
//     type from the 8-bit, sub-byte and float 8 types (barring underflow
//     below FLOAT's subnormals). NaN and ±∞
//     (float 8 x, a special scale) give the IEEE product's class, the same
//     in every precision.
//
// Decided soundly: Quantize and Dequantize are folded at import, exactly,
// when every operand is known in every evaluation on the recorded inputs
// (a constant, a recorded graph input, or what ops that never round derive
// from them: castOperand, known.go), as minifloat.go folds a cast; a graph
// output of the result is compared exactly (Imported.Exact) and undefined
// elements are inconclusive. A quantized value (integer, float 8, float 4)
// is always such a constant in the importer, so Dequantize of it with a
// known scale is a constant: a QDQ model's weights import. A Quantize of a
// value computed by ops that may round (a QDQ model's activations) is the
// registry's quant_int (quantize_computed.go, branch q36), and one whose
// scale or zero point is computed is a chain of registry primitives
// (quantize_params.go, branch qdyn37); both are judged by fpbound — bound 0
// where the enclosure maps to one code, else inconclusive
// (fpbound/quant.go). QuantizeEnclosure (quantize_judge.go) decides the
// same question for a constant scale; the importer does not call it.

// quantizeOps: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear
// (quantize_dynamic.go).
func quantizeOps() map[string]opImporter {
	return map[string]opImporter{"QuantizeLinear": importQuantize, "DequantizeLinear": importDequantize,
		"DynamicQuantizeLinear": importDynamicQuantize}
}

// formatBinary64 is the division precision DOUBLE (binary64); it is no
// registry rounding primitive, only the fold's arithmetic.
var formatBinary64 = spec.FloatFormat{Name: "binary64", P: 53, Emin: -1022, Emax: 1023}

// qFormat is the rounding of float type dt (DOUBLE included).
func qFormat(dt DataType) (spec.FloatFormat, bool) {
	if dt == Double {
		return formatBinary64, true
	}
	return castFormat(dt)
}

// qnum is one element of the fold: a real r, or a special value f (NaN or
// ±∞, r nil).
type qnum struct {
	r *big.Rat
	f float64
}

// round is x rounded to f: ±∞ on overflow, specials kept.
func (x qnum) round(f spec.FloatFormat) qnum {
	if x.r == nil {
		return x
	}
	y, ok := f.RoundRat(x.r)
	if !ok {
		return qnum{f: math.Copysign(math.Inf(1), float64(x.r.Sign()))}
	}
	return qnum{r: y}
}

// float64v is x as a float64 (a real rounded to nearest; only its sign,
// zeroness and class are read).
func (x qnum) float64v() float64 {
	if x.r == nil {
		return x.f
	}
	f, _ := x.r.Float64()
	if f == 0 && x.r.Sign() != 0 {
		f = math.Copysign(math.SmallestNonzeroFloat64, float64(x.r.Sign()))
	}
	return f
}

// special is the IEEE result of an operation with a special or zero
// divisor, from the float64 result of op on the operands' float64 images
// (which agrees with every precision: it depends only on signs, zeroness
// and classes).
func special(v float64) qnum {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return qnum{f: v}
	}
	return qnum{r: new(big.Rat)} // a finite result here is 0 (x/±∞)
}

// div is fl_f(a / b) with IEEE 754's special cases.
func qdiv(a, b qnum, f spec.FloatFormat) qnum {
	if a.r == nil || b.r == nil || b.r.Sign() == 0 {
		return special(a.float64v() / b.float64v())
	}
	return qnum{r: new(big.Rat).Quo(a.r, b.r)}.round(f)
}

// qmul is fl_f(a · b) with IEEE 754's special cases.
func qmul(a, b qnum, f spec.FloatFormat) qnum {
	if a.r == nil || b.r == nil {
		return special(a.float64v() * b.float64v())
	}
	return qnum{r: new(big.Rat).Mul(a.r, b.r)}.round(f)
}

// same reports whether two fold results are one value.
func (x qnum) same(y qnum) bool {
	switch {
	case x.r != nil && y.r != nil:
		return x.r.Cmp(y.r) == 0
	case x.r == nil && y.r == nil:
		return math.IsNaN(x.f) && math.IsNaN(y.f) || x.f == y.f
	}
	return false
}

// roundHalfEven is the integer nearest r, the even one at a tie.
func roundHalfEven(r *big.Rat) *big.Int {
	n := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean: ⌊r⌋ for a positive denominator
	frac := new(big.Rat).Sub(r, new(big.Rat).SetInt(n))
	switch frac.Cmp(big.NewRat(1, 2)) {
	case 1:
		n.Add(n, big.NewInt(1))
	case 0:
		if n.Bit(0) == 1 {
			n.Add(n, big.NewInt(1))
		}
	}
	return n
}

// qOperand is input i's elements when they are known in every evaluation
// on the recorded inputs (castOperand), false otherwise.
func (c *nctx) qOperand(i int) ([]melem, *value, bool) {
	v, err := c.in(i)
	if err != nil {
		return nil, nil, false
	}
	if v.input && !v.isK && v.known == nil {
		xs, ok := c.rawInput(i)
		if !ok {
			return nil, v, false
		}
		out := make([]melem, len(xs))
		for j, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				out[j] = melem{f: x}
			} else {
				out[j] = melem{r: new(big.Rat).SetFloat64(x)}
			}
		}
		return out, v, true
	}
	xs, ok := c.castOperand(v)
	return xs, v, ok
}

// qnumOf is a known element as a qnum.
func qnumOf(m melem) qnum {
	if m.r == nil {
		return qnum{f: m.f}
	}
	return qnum{r: m.r}
}

// qParamIndex maps each element of x (shape xs) to its element of the
// scale (shape ss): per tensor, per axis or blocked (see above).
func (c *nctx) qParamIndex(xs, ss spec.Shape) ([]int, error) {
	n := xs.Size()
	idx := make([]int, n)
	block := int64(0)
	if c.b.opset >= 21 {
		var err error
		if block, err = c.attrInt("block_size", 0); err != nil {
			return nil, err
		}
		if block < 0 {
			return nil, c.errf(attrField("block_size"), "%d is negative", block)
		}
	}
	axis := int64(1)
	if c.b.opset >= 13 {
		var err error
		if axis, err = c.attrInt("axis", 1); err != nil {
			return nil, err
		}
	}
	r := len(xs)
	if block == 0 && ss.Size() == 1 && len(ss) <= 1 {
		return idx, nil // per tensor
	}
	if c.b.opset < 13 {
		return nil, c.errf(c.inField(1), "shape %v: opset %d takes a scalar scale only", ss, c.b.opset)
	}
	if axis < -int64(r) || axis >= int64(r) {
		return nil, c.errf(attrField("axis"), "%d is outside [%d, %d] for input rank %d", axis, -r, r-1, r)
	}
	if axis < 0 {
		axis += int64(r)
	}
	a := int(axis)
	strides := xs.Strides()
	if block == 0 {
		if len(ss) != 1 || ss[0] != xs[a] {
			return nil, c.errf(c.inField(1), "shape %v: per-axis quantization needs a 1-D scale of extent %d (axis %d of %v)", ss, xs[a], a, xs)
		}
		for i := range idx {
			idx[i] = i / strides[a] % xs[a]
		}
		return idx, nil
	}
	if len(ss) != r {
		return nil, c.errf(c.inField(1), "shape %v: blocked quantization needs a scale of the input's rank %d", ss, r)
	}
	for d := range r {
		want := xs[d]
		if d == a {
			want = int((int64(xs[d]) + block - 1) / block)
		}
		if ss[d] != want {
			return nil, c.errf(c.inField(1), "shape %v: blocked quantization of %v with block_size %d on axis %d needs extent %d on axis %d", ss, xs, block, a, want, d)
		}
	}
	sstr := ss.Strides()
	for i := range idx {
		k := 0
		for d := range r {
			j := i / strides[d] % xs[d]
			if d == a {
				j /= int(block)
			}
			k += j * sstr[d]
		}
		idx[i] = k
	}
	return idx, nil
}

// qZeroPoint is the zero point (input 2) as exact elements, mapped like
// the scale; nil when absent. A float zero point must be 0 (see above).
func (c *nctx) qZeroPoint(scale spec.Shape) ([]*big.Rat, DataType, error) {
	if !c.present(2) {
		return nil, 0, nil
	}
	zs, v, ok := c.qOperand(2)
	if v == nil {
		_, err := c.in(2)
		return nil, 0, err
	}
	if !ok || !v.isK {
		return nil, 0, c.errf(c.inField(2), "the zero point must be a constant or a bound input")
	}
	if v.shape.Size() != scale.Size() || (!v.shape.Equal(scale) && scale.Size() != 1) {
		return nil, 0, c.errf(c.inField(2), "shape %v, the scale's is %v", v.shape, scale)
	}
	out := make([]*big.Rat, len(zs))
	for i, z := range zs {
		if z.r == nil || z.undef {
			return nil, 0, c.errf(c.inField(2), "element %d is not a number", i)
		}
		if v.dt.IsMini() && z.r.Sign() != 0 {
			return nil, 0, c.errf(c.inField(2), "element %d is %s: a non-zero %s zero point is not modelled (the text adds it, ONNX's reference ignores or rejects it)", i, z.r.RatString(), v.dt)
		}
		out[i] = z.r
	}
	return out, v.dt, nil
}

// qScale is the scale (input 1), known; its type.
func (c *nctx) qScale() ([]melem, *value, error) {
	ss, v, ok := c.qOperand(1)
	if v == nil {
		_, err := c.in(1)
		return nil, nil, err
	}
	if !ok {
		return nil, nil, c.errf(c.inField(1), "the scale is not known at import: a scale computed by ops that may round, or an input without a recorded value, is not modelled (only a constant, a recorded input or what ops that never round derive from them is decided)")
	}
	return ss, v, nil
}

// undefMark sets element i of w undefined.
func undefMark(w *value, n, i int) {
	if w.undef == nil {
		w.undef = make([]bool, n)
	}
	w.undef[i] = true
}

// qOutType is Quantize's output type: the zero point's (hasZP, zt), else
// output_dtype (opset 21), else UINT8; both given must agree.
func (c *nctx) qOutType(hasZP bool, zt DataType) (DataType, error) {
	out := Uint8
	if c.b.opset >= 21 {
		od, err := c.attrInt("output_dtype", 0)
		if err != nil {
			return 0, err
		}
		if od != 0 {
			if hasZP && DataType(od) != zt {
				return 0, c.errf(attrField("output_dtype"), "%s, the zero point's type is %s", DataType(od), zt)
			}
			out = DataType(od)
		}
	}
	if hasZP {
		out = zt
	}
	return out, nil
}

// qPrecision is the division's precision: the text's (the scale's type,
// or the precision attribute of opset 23) and the reference's (numpy's
// promotion of x's and the scale's types), see above.
func (c *nctx) qPrecision(xdt, sdt DataType) (fText, fRef spec.FloatFormat, err error) {
	pText, pRef := sdt, promote(xdt, sdt)
	if c.b.opset >= 23 {
		p, err := c.attrInt("precision", 0)
		if err != nil {
			return fText, fRef, err
		}
		if p != 0 {
			pText, pRef = DataType(p), DataType(p)
		}
	}
	fText, ok1 := qFormat(pText)
	fRef, ok2 := qFormat(pRef)
	if !ok1 || !ok2 {
		field := c.inField(1)
		if c.n.Attr("precision") != nil {
			field = attrField("precision")
		}
		return fText, fRef, c.errf(field, "the division's precision %s is not modelled (FLOAT, FLOAT16, BFLOAT16, DOUBLE)", pText)
	}
	return fText, fRef, nil
}

// importQuantize is QuantizeLinear (see above).
func importQuantize(c *nctx) error {
	if err := c.oneOutput(2, 3); err != nil {
		return err
	}
	if c.b.opset < 10 {
		return c.errf("", "QuantizeLinear needs opset 10")
	}
	if c.qParamsComputed() {
		return c.quantizeParams() // quantize_params.go
	}
	scale, sv, err := c.qScale()
	if err != nil {
		return err
	}
	xin, err := c.in(0)
	if err != nil {
		return err
	}
	if !xin.dt.IsFloat() && xin.dt != Int32 {
		return c.errf(c.inField(0), "element type %s: QuantizeLinear takes FLOAT, FLOAT16, BFLOAT16 or INT32", xin.dt)
	}
	if !sv.dt.IsFloat() && sv.dt != Int32 {
		return c.errf(c.inField(1), "element type %s is not modelled as a scale (FLOAT, FLOAT16, BFLOAT16, DOUBLE)", sv.dt)
	}
	idx, err := c.qParamIndex(xin.shape, sv.shape)
	if err != nil {
		return err
	}
	zp, zt, err := c.qZeroPoint(sv.shape)
	if err != nil {
		return err
	}
	out, err := c.qOutType(zp != nil, zt)
	if err != nil {
		return err
	}
	sat := true
	if c.b.opset >= 19 {
		if sat, err = c.attrBool("saturate", true); err != nil {
			return err
		}
	}
	fText, fRef, err := c.qPrecision(xin.dt, sv.dt)
	if err != nil {
		return err
	}
	xs, _, ok := c.qOperand(0)
	if !ok {
		return c.quantizeComputed(xin, sv, scale, zp, out, fText, fRef) // quantize_computed.go
	}
	n := len(xs)
	w := &value{shape: xin.shape.Clone(), dt: out, id: -1, isK: true, init: -1, castExact: true}
	bits, signed, isInt := anyIntBits(out)
	m, isMini := miniFormat(out)
	switch {
	case isInt && bits <= 16:
		w.ints = make([]int64, n)
	case isMini && out != Float8E8M0:
		w.rats = make([]spec.Rat, n)
	default:
		return c.errf(attrField("output_dtype"), "element type %s is not a quantized type QuantizeLinear writes", out)
	}
	for i, x := range xs {
		s := scale[idx[i]]
		if x.undef || s.undef || s.r != nil && s.r.Sign() == 0 {
			// A zero scale: x/±0 is ±∞ or NaN by the zero's sign, which
			// the exact operand does not keep.
			undefMark(w, n, i)
			continue
		}
		quot := func(f spec.FloatFormat) qnum {
			return qdiv(qnumOf(x).round(f), qnumOf(s).round(f), f)
		}
		var z *big.Rat
		if zp != nil {
			z = zp[idx[i]]
		}
		if isInt {
			y1, ok1 := quantInt(quot(fText), z, bits, signed)
			y2, ok2 := quantInt(quot(fRef), z, bits, signed)
			if !ok1 || !ok2 || y1 != y2 {
				undefMark(w, n, i)
				continue
			}
			w.ints[i] = y1
			continue
		}
		y1, y2 := quantMini(quot(fText), m, out, sat), quantMini(quot(fRef), m, out, sat)
		switch {
		case spec.IsUndefined(y1) || spec.IsUndefined(y2) || !(y1 == y2 || math.IsNaN(y1) && math.IsNaN(y2)):
			undefMark(w, n, i)
		case math.IsNaN(y1) || math.IsInf(y1, 0):
			if w.nonreal == nil {
				w.nonreal = map[int]float64{}
			}
			w.nonreal[i] = y1
		default:
			w.rats[i] = spec.RatFromBig(new(big.Rat).SetFloat64(y1))
		}
	}
	c.outValue(0, w)
	return nil
}

// promote is numpy's result type of a division of x's type by the
// scale's (ONNX's reference): the wider float type; INT32 by a float is
// DOUBLE.
func promote(x, s DataType) DataType {
	if x == Int32 || s == Int32 {
		return Double
	}
	rank := map[DataType]int{BFloat16: 1, Float16: 1, Float: 2, Double: 3}
	if x != s && rank[x] == 1 && rank[s] == 1 {
		return Float // float16 with bfloat16
	}
	if rank[x] > rank[s] {
		return x
	}
	return s
}

// quantInt is clamp(round(q) + z, lo, hi) of a bits-bit integer type;
// false for q = NaN (undefined).
func quantInt(q qnum, z *big.Rat, bits int, signed bool) (int64, bool) {
	lo, hi := spec.IntTypeRange(bits, signed)
	if q.r == nil {
		switch {
		case math.IsNaN(q.f):
			return 0, false
		case q.f > 0:
			return hi.Num().Int64(), true
		}
		return lo.Num().Int64(), true
	}
	y := new(big.Rat).SetInt(roundHalfEven(q.r))
	if z != nil {
		y.Add(y, z)
	}
	switch {
	case y.Cmp(lo) < 0:
		y = lo
	case y.Cmp(hi) > 0:
		y = hi
	}
	return y.Num().Int64(), true
}

// quantMini is q cast to the float 8 or float 4 format m (see above): the
// float 8 types by the Cast text with saturate, FLOAT4E2M1 saturating.
func quantMini(q qnum, m spec.MiniFloat, dt DataType, sat bool) float64 {
	if dt == Float4E2M1 {
		mx := new(big.Rat).SetFloat64(m.Max())
		switch {
		case q.r == nil && math.IsNaN(q.f):
			return spec.Undefined
		case q.r == nil:
			return math.Copysign(m.Max(), q.f)
		case new(big.Rat).Abs(q.r).Cmp(mx) > 0:
			return math.Copysign(m.Max(), float64(q.r.Sign()))
		}
		return m.CastRat(q.r, true)
	}
	if q.r == nil {
		return m.CastFloat64(q.f, sat)
	}
	return m.CastRat(q.r, sat)
}

// importDequantize is DequantizeLinear (see above).
func importDequantize(c *nctx) error {
	if err := c.oneOutput(2, 3); err != nil {
		return err
	}
	if c.b.opset < 10 {
		return c.errf("", "DequantizeLinear needs opset 10")
	}
	if c.qParamsComputed() {
		return c.dequantizeParams() // quantize_params.go
	}
	scale, sv, err := c.qScale()
	if err != nil {
		return err
	}
	xv, err := c.in(0)
	if err != nil {
		return err
	}
	xb, _, xInt := anyIntBits(xv.dt)
	_, xMini := miniFormat(xv.dt)
	if !(xInt && xb <= 32 && xv.dt != Uint32) && !xMini {
		return c.errf(c.inField(0), "element type %s: DequantizeLinear takes the quantized types (INT8, UINT8, INT16, UINT16, INT32, INT4, UINT4, INT2, UINT2, float 8, FLOAT4E2M1)", xv.dt)
	}
	idx, err := c.qParamIndex(xv.shape, sv.shape)
	if err != nil {
		return err
	}
	zp, zt, err := c.qZeroPoint(sv.shape)
	if err != nil {
		return err
	}
	if zp != nil && zt != xv.dt {
		return c.errf(c.inField(2), "element type %s, x's is %s", zt, xv.dt)
	}
	out, err := c.dqOutputType(sv.dt)
	if err != nil {
		return err
	}
	fOut, ok := qFormat(out)
	if !ok || out == Double {
		return c.errf(attrField("output_dtype"), "element type %s: DequantizeLinear writes FLOAT, FLOAT16 or BFLOAT16", out)
	}
	xs, ok := c.castOperand(xv)
	if !ok && xv.truncInt {
		return c.dequantizeComputed(xv, sv, scale, zp, out) // quantize_computed.go
	}
	if !ok {
		return c.errf(c.inField(0), "a quantized value computed from the model's inputs is not modelled")
	}
	n := len(xs)
	w := &value{shape: xv.shape.Clone(), dt: out, id: -1, isK: true, init: -1, castExact: true, rats: make([]spec.Rat, n)}
	for i, x := range xs {
		s := scale[idx[i]]
		if x.undef || s.undef {
			undefMark(w, n, i)
			continue
		}
		d := qnumOf(x)
		if zp != nil && d.r != nil {
			d = qnum{r: new(big.Rat).Sub(d.r, zp[idx[i]])}
		}
		sq := qnumOf(s)
		c1 := qmul(d, sq, fOut)
		c2 := qmul(d.round(spec.FormatBinary32), sq.round(spec.FormatBinary32), spec.FormatBinary32).round(fOut)
		c3 := qmul(d.round(fOut), sq.round(fOut), fOut)
		switch {
		case !c1.same(c2) || !c1.same(c3):
			undefMark(w, n, i)
		case c1.r == nil:
			if w.nonreal == nil {
				w.nonreal = map[int]float64{}
			}
			w.nonreal[i] = c1.f
		default:
			w.rats[i] = spec.RatFromBig(c1.r)
		}
	}
	c.outValue(0, w)
	return nil
}

// dqOutputType is DequantizeLinear's output element type: the scale's type
// scaleT, or from opset 23 the output_dtype attribute when it is set
// (0 keeps the scale's type).
func (c *nctx) dqOutputType(scaleT DataType) (DataType, error) {
	if c.b.opset < 23 {
		return scaleT, nil
	}
	od, err := c.attrInt("output_dtype", 0)
	if err != nil {
		return 0, err
	}
	if od != 0 {
		return DataType(od), nil
	}
	return scaleT, nil
}
