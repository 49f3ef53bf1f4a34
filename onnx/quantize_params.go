package onnx

import (
	"math/big"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// QuantizeLinear and DequantizeLinear whose scale or zero point is computed
// from the model's inputs (DynamicQuantizeLinear's function body, the
// "_expanded" node tests: scale = (max − min)/255, zero point =
// Cast(Round(Clip(−min/scale))); issue 22, branch qdyn37).
//
// QuantizeLinear of a FLOAT x with a FLOAT scale s (FLOAT precision) and
// an integer zero point zp (absent: 0) into an integer type of at most 16
// bits with range [lo, hi] is, over the reals,
//
//	y = clamp(rne(rne(fl32(fl32(x) / fl32(s))) + zp), lo, hi)
//
// emitted as the registry's own primitives, one IR node each: round_f32 of
// x and of s (broadcast to x's shape), div, round_f32, round_int, add of
// zp, round_int again, clamp(lo, hi). Over the reals this is ONNX's
// saturate(rne(x/s) + zp) with the text's binary32 division (the same map
// as quant_int's, spec/ops_quant.go, there with a constant c): rne(t) + zp
// is an integer, so the second round_int is the identity on the exact
// value; it is there for the runtime's value (fpbound/quant.go, "computed
// scale"). Exact over Rat: each node is. Where the exact fl32(x/s)
// overflows, ONNX saturates but round_f32 over Rat is a domain error: no
// exact value, so those elements are never decided (a refusal, not a
// guess); a scale of 0 is a domain error of div, likewise. The result is
// a computed integer (value.truncInt): a graph output judged exactly, or
// read by Cast, Identity, DequantizeLinear.
//
// DequantizeLinear of a computed integer (or a constant) with a computed
// FLOAT scale and an integer zero point into FLOAT is (x − zp)·s: sub
// then mul_elem, each charged its binary32 rounding by fpbound (a runtime
// that subtracts in integers rounds less: the bound covers it).
//
// The scale and zero point are per tensor (one element) or per axis (a
// 1-D tensor along attribute axis, reshaped and broadcast to x's shape)
// or blocked (opset 21's block_size B > 0: element j along the axis reads
// parameter element ⌊j/B⌋, a gather; branch quant38). Refused naming the
// node: other types (x, scale or precision not FLOAT;
// float 8/float 4 outputs; integers wider than 16 bits).

// qParamsComputed reports that the scale (input 1) or the zero point
// (input 2) of the Q/DQ node is not known at import but has an IR node:
// the path of this file.
func (c *nctx) qParamsComputed() bool {
	if _, v, ok := c.qOperand(1); v != nil && !ok && (v.id >= 0 || v.lazy != nil) {
		return true
	}
	if c.present(2) {
		if v, ok := c.b.vals[c.n.Inputs[2]]; ok && v.truncInt {
			return true
		}
	}
	return false
}

// qParamIR is the IR node of the scale or zero point v (input i; a
// computed value, or a constant, integers included), as a tensor of x's
// shape xs: per tensor broadcast, per axis reshaped onto axis a then
// broadcast (a < 0: per tensor only).
func (c *nctx) qParamIR(i int, v *value, xs spec.Shape, a, block int) (int, error) {
	var id int
	var err error
	switch {
	case v.truncInt || v.dt.IsFloat():
		if id, err = c.b.ir(v); err != nil {
			return 0, c.wrap(c.inField(i), err)
		}
	default: // a constant integer zero point
		if id, err = c.constIntIR(i, v, "an integer zero point is modelled when it is a constant or an integer computed from float data only"); err != nil {
			return 0, err
		}
	}
	if block > 0 {
		// Blocked (qAxis checked the shape): a gather along the axis of
		// ⌊j/block⌋ for every j < xs[a], a move of exact values.
		idx := make([]int, xs[a])
		for j := range idx {
			idx[j] = j / block
		}
		g, _, err := c.b.gather(id, v.shape, a, idx, spec.Shape{xs[a]})
		if err != nil {
			return 0, c.wrap(c.inField(i), err)
		}
		return g, nil
	}
	if v.shape.Size() == 1 {
		id = c.b.reshape(id, v.shape, spec.Shape{})
		return c.b.broadcast(id, spec.Shape{}, xs), nil
	}
	if a < 0 || len(v.shape) != 1 || v.shape[0] != xs[a] {
		return 0, c.errf(c.inField(i), "shape %v: a computed scale or zero point is modelled per tensor or per axis (a 1-D tensor of extent %v along the axis) only", v.shape, xs)
	}
	to := make(spec.Shape, len(xs))
	for d := range to {
		to[d] = 1
	}
	to[a] = xs[a]
	id = c.b.reshape(id, v.shape, to)
	return c.b.broadcast(id, to, xs), nil
}

// qAxis is the per-axis axis of a Q/DQ node with a computed scale (−1 for
// a one-element scale) and the block size (0: not blocked). Blocked
// quantization (opset ≥ 21, block_size B > 0; branch quant38) takes a
// scale of x's rank whose extent along the axis is ⌈x[axis]/B⌉ and equals
// x's elsewhere: element j along the axis reads scale element ⌊j/B⌋.
func (c *nctx) qAxis(xs, ss spec.Shape) (axis, block int, err error) {
	if c.b.opset >= 21 {
		b, err := c.attrInt("block_size", 0)
		if err != nil {
			return 0, 0, err
		}
		if b < 0 {
			return 0, 0, c.errf(attrField("block_size"), "%d: negative", b)
		}
		block = int(b)
	}
	if block == 0 && ss.Size() == 1 && len(ss) <= 1 {
		return -1, 0, nil
	}
	if c.b.opset < 13 {
		return 0, 0, c.errf(c.inField(1), "shape %v: opset %d takes a scalar scale only", ss, c.b.opset)
	}
	a, err := c.attrInt("axis", 1)
	if err != nil {
		return 0, 0, err
	}
	r := len(xs)
	if a < -int64(r) || a >= int64(r) {
		return 0, 0, c.errf(attrField("axis"), "%d is outside [%d, %d] for input rank %d", a, -r, r-1, r)
	}
	if a < 0 {
		a += int64(r)
	}
	axis = int(a)
	if block > 0 {
		if len(ss) != r {
			return 0, 0, c.errf(c.inField(1), "shape %v: a blocked scale has x's rank %d", ss, r)
		}
		for d := range ss {
			want := xs[d]
			if d == axis {
				want = (xs[d] + block - 1) / block
			}
			if ss[d] != want {
				return 0, 0, c.errf(c.inField(1), "shape %v: blocked along axis %d by %d, x %v needs extent %d on axis %d", ss, axis, block, xs, want, d)
			}
		}
	}
	return axis, block, nil
}

// quantizeParams imports QuantizeLinear with a computed scale or zero
// point (see above).
func (c *nctx) quantizeParams() error {
	xin, err := c.in(0)
	if err != nil {
		return err
	}
	sv, err := c.in(1)
	if err != nil {
		return err
	}
	if xin.dt != Float || sv.dt != Float {
		return c.errf(c.inField(1), "QuantizeLinear with a computed scale or zero point is modelled for a FLOAT x and a FLOAT scale only (x %s, scale %s)", xin.dt, sv.dt)
	}
	if c.b.opset >= 23 {
		if p, err := c.attrInt("precision", 0); err != nil {
			return err
		} else if p != 0 && DataType(p) != Float {
			return c.errf(attrField("precision"), "%s: QuantizeLinear with a computed scale is modelled with FLOAT precision only", DataType(p))
		}
	}
	var zv *value
	zt := DataType(0)
	if c.present(2) {
		if zv, err = c.in(2); err != nil {
			return err
		}
		zt = zv.dt
		if zv.shape.Size() != sv.shape.Size() {
			return c.errf(c.inField(2), "shape %v, the scale's is %v", zv.shape, sv.shape)
		}
	}
	out, err := c.qOutType(zv != nil, zt)
	if err != nil {
		return err
	}
	bits, signed, isInt := anyIntBits(out)
	if !isInt || bits > 16 {
		return c.errf(attrField("output_dtype"), "QuantizeLinear with a computed scale or zero point into %s is not modelled (only the integer types of at most 16 bits)", out)
	}
	a, block, err := c.qAxis(xin.shape, sv.shape)
	if err != nil {
		return err
	}
	for _, op := range []irsem.Op{"round_int", "round_f32"} {
		if err := available(op, "q36"); err != nil {
			return c.wrap(c.inField(0), err)
		}
	}
	_, x, err := c.float(0)
	if err != nil {
		return err
	}
	s, err := c.qParamIR(1, sv, xin.shape, a, block)
	if err != nil {
		return err
	}
	xs := xin.shape
	f32 := func(id int) int { return c.b.unary("round_f32", id, xs) }
	y := c.b.unary("round_int", f32(c.b.div(f32(x), f32(s), xs)), xs)
	if zv != nil {
		z, err := c.qParamIR(2, zv, xs, a, block)
		if err != nil {
			return err
		}
		y = c.b.unary("round_int", c.b.binary(irsem.OpAdd, y, z, xs), xs)
	}
	lo, hi := spec.IntTypeRange(bits, signed)
	l, h := spec.RatFromBig(lo), spec.RatFromBig(hi)
	y = c.b.clamp(y, xs, &l, &h)
	c.out(0, y, xs, out)
	if w := c.b.vals[c.n.Outputs[0]]; c.n.Outputs[0] != "" && w != nil {
		w.truncInt = true
	}
	return nil
}

// dequantizeParams imports DequantizeLinear with a computed scale or zero
// point (see above).
func (c *nctx) dequantizeParams() error {
	xv, err := c.in(0)
	if err != nil {
		return err
	}
	sv, err := c.in(1)
	if err != nil {
		return err
	}
	if _, _, isInt := anyIntBits(xv.dt); !isInt {
		return c.errf(c.inField(0), "element type %s: DequantizeLinear with a computed scale or zero point is modelled for an integer x only", xv.dt)
	}
	out, err := c.dqOutputType(sv.dt)
	if err != nil {
		return err
	}
	if sv.dt != Float || out != Float {
		return c.errf(c.inField(1), "DequantizeLinear with a computed scale or zero point is modelled with a FLOAT scale into FLOAT only (scale %s, output %s)", sv.dt, out)
	}
	a, block, err := c.qAxis(xv.shape, sv.shape)
	if err != nil {
		return err
	}
	xs := xv.shape
	x, err := c.qValueIR(xv)
	if err != nil {
		return err
	}
	if c.present(2) {
		zv, err := c.in(2)
		if err != nil {
			return err
		}
		if zv.dt != xv.dt {
			return c.errf(c.inField(2), "element type %s, x's is %s", zv.dt, xv.dt)
		}
		z, err := c.qParamIR(2, zv, xs, a, block)
		if err != nil {
			return err
		}
		x = c.b.binary(irsem.OpSub, x, z, xs)
	}
	s, err := c.qParamIR(1, sv, xs, a, block)
	if err != nil {
		return err
	}
	c.out(0, c.b.binary(irsem.OpMulElem, x, s, xs), xs, out)
	return nil
}

// qValueIR is the IR node of DequantizeLinear's integer x: a computed
// integer's own node, or a constant's elements as a const node.
func (c *nctx) qValueIR(v *value) (int, error) {
	if v.truncInt {
		id, err := c.b.ir(v)
		if err != nil {
			return 0, c.wrap(c.inField(0), err)
		}
		return id, nil
	}
	xs, ok := c.castOperand(v)
	if !ok {
		return 0, c.errf(c.inField(0), "a quantized value computed from the model's inputs is not modelled")
	}
	t := irsem.RatTensor{Shape: v.shape.Clone(), Data: make([]spec.Rat, len(xs))}
	for j, x := range xs {
		if x.r == nil || x.undef {
			return 0, c.errf(c.inField(0), "element %d is not a number", j)
		}
		t.Data[j] = spec.RatFromBig(new(big.Rat).Set(x.r))
	}
	return c.b.emitP(irsem.Kind{Op: irsem.OpConst}, v.shape.Clone(), &irsem.Params{Value: &t}), nil
}
