package onnx

import (
	"math/big"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// QuantizeLinear, DequantizeLinear and Round of a value computed from the
// model's inputs by ops that may round (a QDQ model's activations; issue 22
// points 1 and 3, branch q36).
//
//   - QuantizeLinear of a computed FLOAT x with a known FLOAT scale s > 0
//     and zero point per tensor (one value), into INT8/UINT8, INT16/UINT16
//     or the sub-byte integers, is the registry's quant_int with c = s,
//     bias = zp and the type's range [lo, hi]: clamp(rne(fl32(fl32(x)/s))
//     + zp, lo, hi) — for FLOAT/FLOAT the text's and the reference's
//     division precisions are both binary32, so quant_int's fl32 is both.
//     fpbound judges each element: bound 0 where the hull around the exact
//     x maps to one code (then the computed code is the exact one), else
//     inconclusive (fpbound/quant.go). Per-axis and blocked scales, a
//     negative or zero scale, other x or scale types, float 8/float 4
//     outputs and a precision other than FLOAT are refused naming the node.
//   - The result is a computed integer (value.truncInt, as a Cast to an
//     integer type gives): a graph output (compare judges it exactly) or
//     read by a Cast or by DequantizeLinear.
//   - DequantizeLinear of such a value with a known per-tensor FLOAT scale
//     s and zero point zp into FLOAT is s·(y − zp): the IR's addConst(−zp)
//     then scale(s), each charged a binary32 rounding by fpbound (a runtime
//     that subtracts in integers and multiplies once rounds less: the
//     bound covers it), so a downstream float compute is bounded as usual.
//   - Round of a computed float value is the registry's round_int (rne,
//     exact in every binary format), judged as quant_int is.

// quantizeComputed imports QuantizeLinear of the computed x (see above);
// scale and zp are the known per-element parameters, out the output type.
func (c *nctx) quantizeComputed(xin, sv *value, scale []melem, zp []*big.Rat, out DataType, fText, fRef spec.FloatFormat) error {
	if xin.dt != Float || sv.dt != Float || fText != spec.FormatBinary32 || fRef != spec.FormatBinary32 {
		return c.errf(c.inField(0), "QuantizeLinear of a value computed from the model's inputs is modelled for a FLOAT x, a FLOAT scale and FLOAT precision only (x %s, scale %s)", xin.dt, sv.dt)
	}
	bits, signed, isInt := anyIntBits(out)
	if !isInt || bits > 16 {
		return c.errf(attrField("output_dtype"), "QuantizeLinear of a value computed from the model's inputs into %s is not modelled (only the integer types of at most 16 bits)", out)
	}
	if len(scale) != 1 || zp != nil && len(zp) != 1 {
		return c.errf(c.inField(1), "QuantizeLinear of a value computed from the model's inputs is modelled with a per-tensor scale and zero point only (%d scales)", len(scale))
	}
	s := scale[0]
	if s.undef || qnumOf(s).r == nil || qnumOf(s).r.Sign() <= 0 {
		return c.errf(c.inField(1), "QuantizeLinear of a value computed from the model's inputs is modelled with a finite scale > 0 only")
	}
	if err := available("quant_int", "q36"); err != nil {
		return c.wrap(c.inField(0), err)
	}
	_, x, err := c.float(0)
	if err != nil {
		return err
	}
	lo, hi := spec.IntTypeRange(bits, signed)
	k := irsem.Kind{Op: "quant_int", C: spec.RatFromBig(qnumOf(s).r), Lo: spec.RatFromBig(lo), Hi: spec.RatFromBig(hi)}
	if zp != nil && zp[0].Sign() != 0 {
		k.Bias = spec.RatFromBig(zp[0])
	}
	id := c.b.emit(k, xin.shape.Clone(), x)
	c.out(0, id, xin.shape, out)
	if w := c.b.vals[c.n.Outputs[0]]; c.n.Outputs[0] != "" && w != nil {
		w.truncInt = true
	}
	return nil
}

// dequantizeComputed imports DequantizeLinear of a computed integer xv
// (quantizeComputed's or a Cast's; see above) into out.
func (c *nctx) dequantizeComputed(xv, sv *value, scale []melem, zp []*big.Rat, out DataType) error {
	if sv.dt != Float || out != Float {
		return c.errf(c.inField(1), "DequantizeLinear of a value computed from the model's inputs is modelled with a FLOAT scale into FLOAT only (scale %s, output %s)", sv.dt, out)
	}
	if len(scale) != 1 || zp != nil && len(zp) != 1 {
		return c.errf(c.inField(1), "DequantizeLinear of a value computed from the model's inputs is modelled with a per-tensor scale and zero point only (%d scales)", len(scale))
	}
	s := scale[0]
	if s.undef || qnumOf(s).r == nil {
		return c.errf(c.inField(1), "DequantizeLinear of a value computed from the model's inputs is modelled with a finite scale only")
	}
	id, err := c.b.ir(xv)
	if err != nil {
		return c.wrap(c.inField(0), err)
	}
	if zp != nil {
		id = c.b.addConst(id, xv.shape, spec.RatFromBig(new(big.Rat).Neg(zp[0])))
	}
	c.out(0, c.b.scale(id, xv.shape, spec.RatFromBig(qnumOf(s).r)), xv.shape, out)
	return nil
}

// roundComputed imports Round of the computed float v as round_int.
func (c *nctx) roundComputed(v *value) error {
	if err := available("round_int", "q36"); err != nil {
		return c.wrap(c.inField(0), err)
	}
	_, x, err := c.float(0)
	if err != nil {
		return err
	}
	c.out(0, c.b.unary("round_int", x, v.shape), v.shape, v.dt)
	return nil
}

// recorded reports that v is a float graph input with a recorded value
// (decidedIn folds an exact function of it at import).
func (c *nctx) recorded(v *value) bool {
	if !v.input {
		return false
	}
	t, ok := c.b.o.Values[v.name]
	return ok && t != nil
}
