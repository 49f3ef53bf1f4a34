package onnx

import (
	"math/big"

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
// element: a value computed by ops that may round is refused naming the
// node; its function body — ReduceMin/Max, Div, Round, Cast, then
// QuantizeLinear with the computed scale and zero point — imports through
// quantize_params.go, branch qdyn37).
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
		return c.errf(c.inField(0), "DynamicQuantizeLinear of a value computed from the model's inputs by ops that may round is not modelled (only a constant, a recorded input or what ops that never round derive from them is decided, exactly)")
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
