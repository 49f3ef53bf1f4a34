package onnx

import (
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The −∞ additive attention mask.
//
// PyTorch's nn.Transformer.generate_square_subsequent_mask, and the causal
// masks of exported decoders, add −∞ to the attention scores that a query
// may not see and take a softmax over the last axis: exp(−∞) = 0, so those
// entries get probability exactly 0 and the others are the softmax over
// the allowed ones. The canonical IR has no −∞, but it has that operator:
// hard_masked_softmax (the softmax of every last-axis row over its allowed
// entries, blocked entries exactly 0). So the importer carries −∞ through
// the graph as a mask beside a finite value:
//
//   - a float constant (initializer, Constant, ConstantOfShape value,
//     folded Where) may hold −∞; its finite part is 0 there (value.ninf);
//     +∞ and NaN in a constant are refused naming the element;
//   - Add(x, m) of a value and a masked value is the masked value with
//     finite part x + m_finite and mask broadcast (x + (−∞) = −∞ for every
//     finite x; −∞ + −∞ = −∞), and Where with a masked branch is masked
//     where it selects that branch;
//   - Softmax over the last axis of a masked value is hard_masked_softmax
//     of the finite part with allowed = not masked; on the allowed entries
//     this equals ONNX's softmax of the value with −∞ entries, on the
//     masked ones both are 0. One difference, at a row that is masked
//     entirely: ONNX's softmax is 0/0 = NaN there, hard_masked_softmax gives
//     0; such a row is refused at import, naming it;
//   - every other use of a value holding −∞ is refused at import, naming
//     the value and the element (imp.ir).

// tensorRatsNinf is t.Rats, except that −∞ elements of a float tensor are
// allowed: 0 in the rationals, marked in ninf (nil when there are none).
func tensorRatsNinf(t *Tensor) ([]spec.Rat, []bool, error) {
	// The −∞ elements are found on the decoded plane itself: no widened
	// copy (8 bytes per element, a transient gigabyte for AlexNet's
	// weights) is made to look for them.
	n, negInf := 0, func(int) bool { return false }
	switch {
	case t.DataType != Double && t.Float32 != nil:
		n, negInf = len(t.Float32), func(i int) bool { return math.IsInf(float64(t.Float32[i]), -1) }
	case t.DataType == Double && t.Float64 != nil:
		n, negInf = len(t.Float64), func(i int) bool { return math.IsInf(t.Float64[i], -1) }
	}
	var ninf []bool
	for i := 0; i < n; i++ {
		if negInf(i) {
			if ninf == nil {
				ninf = make([]bool, n)
			}
			ninf[i] = true
		}
	}
	if ninf == nil {
		rs, err := t.Rats()
		return rs, nil, err
	}
	// A copy without the −∞ elements, read by the one reader.
	u := *t
	if t.DataType != Double {
		u.Float32 = append([]float32(nil), t.Float32...)
		for i := range ninf {
			if ninf[i] {
				u.Float32[i] = 0
			}
		}
	} else {
		u.Float64 = append([]float64(nil), t.Float64...)
		for i := range ninf {
			if ninf[i] {
				u.Float64[i] = 0
			}
		}
	}
	rs, err := u.Rats()
	return rs, ninf, err
}

// firstTrue is the index of the first true element, −1 when none.
func firstTrue(m []bool) int {
	for i, x := range m {
		if x {
			return i
		}
	}
	return -1
}

// outMasked binds output i to IR node id holding the finite part of a
// value that is −∞ where ninf says (an ordinary value when ninf has no
// true element).
func (c *nctx) outMasked(i int, id int, shape spec.Shape, dt DataType, ninf []bool) {
	c.out(i, id, shape, dt)
	if firstTrue(ninf) < 0 || i >= len(c.n.Outputs) || c.n.Outputs[i] == "" {
		return
	}
	c.b.vals[c.n.Outputs[i]].ninf = append([]bool(nil), ninf...)
}

// maskedAdd imports Add when an operand holds −∞; done is false when
// neither does.
func (c *nctx) maskedAdd() (done bool, err error) {
	a, err := c.in(0)
	if err != nil {
		return true, err
	}
	bv, err := c.in(1)
	if err != nil {
		return true, err
	}
	if firstTrue(a.ninf) < 0 && firstTrue(bv.ninf) < 0 {
		return false, nil
	}
	if !a.dt.IsFloat() || !bv.dt.IsFloat() {
		return true, c.errf("input", "Add of %s and %s", a.dt, bv.dt)
	}
	s, err := broadcastShapes(a.shape, bv.shape)
	if err != nil {
		return true, c.errf("input", "%v", err)
	}
	if _, err := s.Check(0); err != nil {
		return true, c.errf("input", "%v", err)
	}
	if folded, err := c.foldMaskedAdd(a, bv, s); folded || err != nil {
		return true, err
	}
	ninf := make([]bool, s.Size())
	var ids [2]int
	for k, v := range []*value{a, bv} {
		id, err := c.b.irFinite(v)
		if err != nil {
			return true, c.wrap(c.inField(k), err)
		}
		ids[k] = c.b.broadcast(id, v.shape, s)
		if v.ninf != nil {
			for i, m := range bcast(v.ninf, v.shape, s) {
				ninf[i] = ninf[i] || m
			}
		}
	}
	id := c.b.binary(irsem.OpAdd, ids[0], ids[1], s)
	c.outMasked(0, id, s, a.dt, ninf)
	return true, nil
}

// maskedSoftmax imports Softmax over axis ax of a masked value as
// hard_masked_softmax; the axis must be the last one and no row may be
// masked entirely.
func (c *nctx) maskedSoftmax(v *value, ax int) error {
	s := v.shape
	if ax != len(s)-1 {
		return c.errf(attrField("axis"), "a softmax of a value holding −∞ (an attention mask) is supported over the last axis only, not axis %d", ax)
	}
	n := s[len(s)-1]
	allowed := make([]bool, len(v.ninf))
	for i, m := range v.ninf {
		allowed[i] = !m
	}
	for r := 0; n > 0 && r < len(allowed)/n; r++ {
		if firstTrue(allowed[r*n:(r+1)*n]) < 0 {
			return c.errf(c.inField(0), "row %d of the last axis is −∞ everywhere: ONNX's softmax is NaN there", r)
		}
	}
	x, err := c.b.irFinite(v)
	if err != nil {
		return c.wrap(c.inField(0), err)
	}
	if err := available(irsem.OpHardMaskedSoftmax, "main"); err != nil {
		return c.wrap("", err)
	}
	k := irsem.Kind{Op: irsem.OpHardMaskedSoftmax, Mask: &irsem.HardMask{Shape: s.Clone(), Allowed: allowed}}
	id := c.b.emit(k, s, x)
	c.out(0, id, s, v.dt)
	return nil
}

// foldMaskedAdd folds Add(a, b) when both are constants that are no
// initializer (a causal mask added to a zero bias, as the Attention
// decompositions build it) and every finite sum is exactly representable
// in the element type (float32 or float64): then every IEEE evaluation
// gives that sum (an exact result is never rounded), and −∞ + x = −∞ for
// every finite x or −∞. Otherwise folded is false and the Add is an IR
// node as before: a sum that rounds must stay in the IR, whose rounding
// bound charges it.
func (c *nctx) foldMaskedAdd(a, b *value, s spec.Shape) (folded bool, err error) {
	if !a.isK || !b.isK || a.init >= 0 || b.init >= 0 || a.dt != b.dt || (a.dt != Float && a.dt != Double) {
		return false, nil
	}
	xa, xb := elems(a, s), elems(b, s)
	out := make([]xnum, len(xa))
	for i := range xa {
		if xa[i].ninf || xb[i].ninf {
			out[i] = xnum{ninf: true}
			continue
		}
		r := xa[i].r.Add(xb[i].r)
		if !representable(r.Big(), a.dt) {
			return false, nil
		}
		out[i] = xnum{r: r}
	}
	v, err := c.fromXnums(s, a.dt, out)
	if err != nil {
		return true, err
	}
	c.outValue(0, v)
	return true, nil
}

// representable reports whether r is a finite value of dt exactly (FLOAT,
// DOUBLE, FLOAT16: 11 significand bits, exponents −14…15, subnormals
// down to 2⁻²⁴; BFLOAT16: a binary32 whose low 16 bits are 0); false for
// any other type.
func representable(r *big.Rat, dt DataType) bool {
	switch dt {
	case Double:
		f, exact := r.Float64()
		return exact && !math.IsInf(f, 0)
	case Float, Float16, BFloat16:
	default:
		return false
	}
	f, exact := r.Float32()
	if !exact || math.IsInf(float64(f), 0) {
		return false
	}
	switch dt {
	case BFloat16:
		return math.Float32bits(f)&0xFFFF == 0
	case Float16:
		if f == 0 {
			return true
		}
		if math.Abs(float64(f)) > 65504 {
			return false
		}
		_, e := math.Frexp(float64(f)) // |f| = m·2^e, m ∈ [1/2, 1)
		k := e - 11                    // the unit of the last of 11 significand bits
		if k < -24 {
			k = -24 // subnormals: multiples of 2⁻²⁴
		}
		scaled := math.Ldexp(float64(f), -k)
		return scaled == math.Trunc(scaled)
	}
	return true
}
