package onnx

import (
	"math/big"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// DynamicQuantizeLinear [11]: x (FLOAT) → y (UINT8), y_scale (FLOAT),
// y_zero_point (UINT8). The operator text:
//
//	y_scale = (maximum(0, max(x)) − minimum(0, min(x))) / (qmax − qmin)
//	intermediate_zero_point = qmin − min(x) / y_scale
//	y_zero_point = cast(round(saturate(intermediate_zero_point)))
//	y = saturate(round(x / y_scale) + y_zero_point)
//
// with qmin = 0, qmax = 255 and round half to even. The text states no
// precision; its function body (the "_expanded" node tests) and ONNX's
// reference (op_dynamic_quantize_linear.py) compute each step in FLOAT,
// so each arithmetic step here is the exact operation rounded to binary32
// (every step is one IEEE operation on exact operands, so its result is
// the same in every evaluation). The text's min(x) in the zero point and
// the reference's minimum(0, min(x)) agree after saturation (min(x) > 0
// gives a negative intermediate, saturated to 0). Where they disagree —
// x all zero: the text divides by y_scale = 0, the reference takes
// y_scale = 1/255 — the node is refused, as is an x holding NaN or ±∞ (no
// maximum), an empty x, or an x not known at import (the fold needs every
// element: a value computed by ops that may round is imported as the chain
// of dynamicQuantizeComputed below, branch quant38; its function body —
// ReduceMin/Max, Div, Round, Cast, then QuantizeLinear with the computed
// scale and zero point — imports through quantize_params.go, branch
// qdyn37).
func importDynamicQuantize(c *nctx) error {
	if err := c.arity(1, 1); err != nil {
		return err
	}
	if err := c.outputs(3, "a fourth output"); err != nil {
		return err
	}
	xin, err := c.in(0)
	if err != nil {
		return err
	}
	if xin.dt != Float {
		return c.errf(c.inField(0), "element type %s: DynamicQuantizeLinear takes FLOAT", xin.dt)
	}
	xs, _, ok := c.qOperand(0)
	if !ok {
		return c.dynamicQuantizeComputed(xin)
	}
	if len(xs) == 0 {
		return c.errf(c.inField(0), "empty: no maximum")
	}
	f := spec.FormatBinary32
	mx, mn := new(big.Rat), new(big.Rat) // maximum(0, max x), minimum(0, min x)
	for i, x := range xs {
		if x.r == nil || x.undef {
			return c.errf(c.inField(0), "element %d is not a finite number: the scale is not defined", i)
		}
		if x.r.Cmp(mx) > 0 {
			mx.Set(x.r)
		}
		if x.r.Cmp(mn) < 0 {
			mn.Set(x.r)
		}
	}
	if mx.Cmp(mn) == 0 {
		return c.errf(c.inField(0), "every element is 0: the text's y_scale is 0 (division by zero), ONNX's reference takes 1/255; not modelled")
	}
	rng := qnum{r: new(big.Rat).Sub(mx, mn)}.round(f)
	scale := qdiv(rng, qnum{r: big.NewRat(255, 1)}, f)
	if scale.r == nil || scale.r.Sign() == 0 {
		return c.errf(c.inField(0), "the scale is not a positive float32 (overflow or underflow)")
	}
	izp := qdiv(qnum{r: mn}, scale, f)
	if izp.r == nil {
		return c.errf(c.inField(0), "the intermediate zero point overflows")
	}
	zp := new(big.Rat).Neg(izp.r) // qmin − q, exact: 0 − q
	zp = clampRat(zp, 0, 255)
	z := new(big.Rat).SetInt(roundHalfEven(zp))
	ys := make([]int64, len(xs))
	for i, x := range xs {
		y, ok := quantInt(qdiv(qnum{r: x.r}, scale, f), z, 8, false)
		if !ok {
			return c.errf(c.inField(0), "element %d: no quantized value", i)
		}
		ys[i] = y
	}
	c.outValue(0, &value{shape: xin.shape.Clone(), dt: Uint8, id: -1, isK: true, init: -1, ints: ys})
	c.outValue(1, &value{shape: spec.Shape{}, dt: Float, id: -1, isK: true, init: -1, castExact: true, rats: []spec.Rat{spec.RatFromBig(scale.r)}})
	c.outValue(2, &value{shape: spec.Shape{}, dt: Uint8, id: -1, isK: true, init: -1, ints: []int64{z.Num().Int64()}})
	return nil
}

// clampRat is r clamped to [lo, hi].
func clampRat(r *big.Rat, lo, hi int64) *big.Rat {
	switch {
	case r.Cmp(big.NewRat(lo, 1)) < 0:
		return big.NewRat(lo, 1)
	case r.Cmp(big.NewRat(hi, 1)) > 0:
		return big.NewRat(hi, 1)
	}
	return r
}

// dynamicQuantizeComputed imports DynamicQuantizeLinear of an x computed
// from the model's inputs by ops that may round (branch quant38) as a
// chain of existing registry primitives, the operator's text with each
// FLOAT step rounded to binary32 (round_f32) as its function body and
// ONNX's reference compute it:
//
//	M = max(0, max x)            (max_pool_nd over all of x, max_elem with 0)
//	m = min(0, min x)            (−max(−x), min_elem with 0)
//	s = round_f32(round_f32(M − m) · (1/255))        the y_scale output
//	z = round_int(clamp(−round_f32(m / s), 0, 255))  the y_zero_point output
//	y = clamp(round_int(round_int(round_f32(round_f32(x) / s)) + z), 0, 255)
//
// The range step is the text's (maximum(0, max x) − minimum(0, min x)) in
// FLOAT; the division by qmax − qmin = 255 is the exact product with 1/255
// rounded once (the same real number as the binary32 quotient's operand,
// so the same rounding); the zero point is cast(round(saturate(qmin −
// m/s))) with qmin = 0, the order of the reference (saturate, then round;
// clamp then rne equals rne then clamp at integer bounds); y is
// quantize_params.go's chain with the computed s and z. y and z are
// computed integers (value.truncInt, UINT8), s a computed FLOAT. Every
// element of x with no value over the reals is a domain error of that
// node; x all zero makes s = 0 and m / s a domain error of div (the text
// divides by zero; ONNX's reference takes 1/255): no exact value, no
// verdict. fpbound decides y and z only where every value the enclosures
// allow gives one code (fpbound/quant.go, "DynamicQuantizeLinear of a
// computed x").
func (c *nctx) dynamicQuantizeComputed(xin *value) error {
	for _, op := range []irsem.Op{"round_int", "round_f32", irsem.OpMaxPoolND} {
		if err := available(op, "quant38"); err != nil {
			return c.wrap(c.inField(0), err)
		}
	}
	_, x, err := c.float(0)
	if err != nil {
		return err
	}
	xs := xin.shape
	if xs.Size() == 0 {
		return c.errf(c.inField(0), "empty: no maximum")
	}
	flat := spec.Shape{xs.Size()}
	sc := spec.Shape{}
	// The maximum of every element (a scalar): maxAxis of the flattened x.
	hx, _, err := c.b.maxAxis(c.b.reshape(x, xs, flat), flat, 0)
	if err != nil {
		return c.wrap(c.inField(0), err)
	}
	lx, _, err := c.b.maxAxis(c.b.reshape(c.b.neg(x, xs), xs, flat), flat, 0)
	if err != nil {
		return c.wrap(c.inField(0), err)
	}
	zero := spec.Rat{}
	hi255 := spec.NewRat(255, 1)
	f32 := func(id int, s spec.Shape) int { return c.b.unary("round_f32", id, s) }
	mx := c.b.clamp(hx, sc, &zero, nil)
	mn := c.b.clamp(c.b.neg(lx, sc), sc, nil, &zero)
	s := f32(c.b.scale(f32(c.b.binary(irsem.OpSub, mx, mn, sc), sc), sc, spec.NewRat(1, 255)), sc)
	z := c.b.unary("round_int", c.b.clamp(c.b.neg(f32(c.b.div(mn, s, sc), sc), sc), sc, &zero, &hi255), sc)
	sb := c.b.broadcast(s, sc, xs)
	zb := c.b.broadcast(z, sc, xs)
	y := c.b.unary("round_int", f32(c.b.div(f32(x, xs), sb, xs), xs), xs)
	y = c.b.clamp(c.b.unary("round_int", c.b.binary(irsem.OpAdd, y, zb, xs), xs), xs, &zero, &hi255)
	c.out(0, y, xs, Uint8)
	c.out(1, s, sc, Float)
	c.out(2, z, sc, Uint8)
	for _, i := range []int{0, 2} {
		if n := c.n.Outputs[i]; n != "" && c.b.vals[n] != nil {
			c.b.vals[n].truncInt = true
		}
	}
	return nil
}
