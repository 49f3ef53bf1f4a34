package onnx

import (
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
	"math"
)

// elementwiseOps: unary and binary elementwise ops and the activations
// that are compositions of registry primitives.
func elementwiseOps() map[string]opImporter {
	m := map[string]opImporter{
		"Add": binOp(irsem.OpAdd), "Sub": binOp(irsem.OpSub), "Mul": binOp(irsem.OpMulElem), "Div": binOp("div"),
		"Sum": naryOp(irsem.OpAdd), "Max": naryOp(irsem.OpMaxElem), "Min": naryOp(irsem.OpMinElem), "Mean": naryOp("mean"),
		"Relu": unaryOp(irsem.OpRelu), "Sigmoid": unaryOp(irsem.OpSigmoid), "Tanh": unaryOp(irsem.OpTanh),
		"Exp": unaryOp(irsem.OpExp), "Log": unaryOp(irsem.OpLog), "Sqrt": unaryOp(irsem.OpSqrt),
		"Abs": unaryOp(irsem.OpAbs), "Softplus": unaryOp(irsem.OpSoftplus), "Sin": unaryOp(irsem.OpSin),
		"Cos": unaryOp(irsem.OpCos), "Neg": unaryOp("neg"), "Reciprocal": unaryOp(irsem.OpInv),
		"Sign":     unaryOp("sign"),
		"Identity": importIdentity, "Dropout": importDropout,
		"Pow": importPow, "Clip": importClip,
		"LeakyRelu": importLeakyRelu, "PRelu": importPRelu, "Elu": importElu, "Selu": importSelu,
		"Softsign": importSoftsign, "HardSigmoid": importHardSigmoid, "Shrink": importShrink,
	}
	return m
}

// unaryIn reads the one float input of an elementwise op.
func (c *nctx) unaryIn() (*value, int, error) {
	if err := c.arity(1, 1); err != nil {
		return nil, 0, err
	}
	if err := c.legacy("consumed_inputs", 6); err != nil {
		return nil, 0, err
	}
	if err := c.outputs(1, "a second output"); err != nil {
		return nil, 0, err
	}
	return c.float(0)
}

func unaryOp(op irsem.Op) opImporter {
	return func(c *nctx) error {
		if done, err := c.foldIntUnary(op); done || err != nil {
			return err
		}
		v, x, err := c.unaryIn()
		if err != nil {
			return err
		}
		var id int
		switch op {
		case "neg":
			id = c.b.neg(x, v.shape)
		case "sign":
			id, err = c.b.sign(x, v.shape)
			if err != nil {
				return c.wrap("", err)
			}
		default:
			id = c.b.unary(op, x, v.shape)
		}
		c.out(0, id, v.shape, v.dt)
		return nil
	}
}

// sign is sign(x).
func (b *imp) sign(x int, s spec.Shape) (int, error) {
	if err := available(irsem.OpSign, "regops"); err != nil {
		return 0, err
	}
	return b.unary(irsem.OpSign, x, s), nil
}

// broadcast2 brings two float operands to their common shape: numpy
// (multidirectional) broadcasting from opset 7; before it, the legacy
// rule: equal shapes, or with broadcast=1 the second operand's shape a
// contiguous run of the first's, at axis (default: the suffix).
func (c *nctx) broadcast2(a *value, ia int, bv *value, ib int) (int, int, spec.Shape, error) {
	sa, sb := a.shape, bv.shape
	if c.b.opset < 7 {
		bc, err := c.attrBool("broadcast", false)
		if err != nil {
			return 0, 0, nil, err
		}
		axisA, err := c.attr("axis", AttrInt)
		if err != nil {
			return 0, 0, nil, err
		}
		if !bc {
			if !sa.Equal(sb) {
				return 0, 0, nil, c.errf(attrField("broadcast"), "shapes %v and %v differ and broadcast is 0 (opset %d)", sa, sb, c.b.opset)
			}
			return ia, ib, sa.Clone(), nil
		}
		if len(sb) > len(sa) {
			return 0, 0, nil, c.errf(c.inField(1), "shape %v has a higher rank than %v (legacy broadcast)", sb, sa)
		}
		ax := len(sa) - len(sb)
		if axisA != nil {
			if ax, err = normAxis(axisA.I, len(sa)); err != nil {
				return 0, 0, nil, c.errf(attrField("axis"), "%v", err)
			}
			if ax+len(sb) > len(sa) {
				return 0, 0, nil, c.errf(attrField("axis"), "%v does not fit into %v at axis %d", sb, sa, ax)
			}
		}
		full := make(spec.Shape, len(sa)-ax)
		for i := range full {
			full[i] = 1
		}
		copy(full, sb)
		for i, d := range full {
			if d != 1 && d != sa[ax+i] {
				return 0, 0, nil, c.errf(c.inField(1), "shape %v does not broadcast to %v at axis %d", sb, sa, ax)
			}
		}
		ib = c.b.reshape(ib, sb, full)
		return ia, c.b.broadcast(ib, full, sa), sa.Clone(), nil
	}
	s, err := broadcastShapes(sa, sb)
	if err != nil {
		return 0, 0, nil, c.errf("input", "%v", err)
	}
	return c.b.broadcast(ia, sa, s), c.b.broadcast(ib, sb, s), s, nil
}

func binOp(op irsem.Op) opImporter {
	return func(c *nctx) error {
		if err := c.arity(2, 2); err != nil {
			return err
		}
		if err := c.legacy("consumed_inputs", 6); err != nil {
			return err
		}
		if err := c.outputs(1, "a second output"); err != nil {
			return err
		}
		if done, err := c.foldIntBinary(op); done || err != nil {
			return err
		}
		if op == irsem.OpAdd {
			if done, err := c.maskedAdd(); done || err != nil {
				return err
			}
		}
		a, ia, err := c.float(0)
		if err != nil {
			return err
		}
		bv, ib, err := c.float(1)
		if err != nil {
			return err
		}
		ia, ib, s, err := c.broadcast2(a, ia, bv, ib)
		if err != nil {
			return err
		}
		var id int
		if op == "div" {
			id = c.b.div(ia, ib, s)
		} else {
			id = c.b.binary(op, ia, ib, s)
		}
		c.out(0, id, s, a.dt)
		return nil
	}
}

// foldIntBinary computes Add, Sub, Mul and Div of two integer constants
// (shape arithmetic) at import, numpy-broadcast; done is false when an
// operand is not an integer constant. Integer Div truncates toward zero
// (the operator's integer semantics); a zero divisor is an error.
func (c *nctx) foldIntBinary(op irsem.Op) (done bool, err error) {
	a, err := c.in(0)
	if err != nil {
		return true, err
	}
	bv, err := c.in(1)
	if err != nil {
		return true, err
	}
	if !a.isInt() || !bv.isInt() || !a.isK || !bv.isK {
		return false, nil
	}
	s, err := broadcastShapes(a.shape, bv.shape)
	if err != nil {
		return true, c.errf("input", "%v", err)
	}
	n, err := s.Check(0)
	if err != nil {
		return true, c.errf("input", "%v", err)
	}
	at, bt := bcast(a.ints, a.shape, s), bcast(bv.ints, bv.shape, s)
	dt := commonIntType(a, bv)
	out := make([]int64, n)
	for i := range out {
		x, y := at[i], bt[i]
		var r int64
		var ok bool
		switch op {
		case irsem.OpAdd:
			r = x + y
			ok = (r > x) == (y > 0) || y == 0
		case irsem.OpSub:
			r = x - y
			ok = (r < x) == (y > 0) || y == 0
		case "div":
			q, err := foldIntDiv(x, y)
			if err != nil {
				return true, c.errf("input", "element %d: %v", i, err)
			}
			r, ok = q, true
		default:
			r = x * y
			ok = x == 0 || (r/x == y && !(x == -1 && y == math.MinInt64) && !(y == -1 && x == math.MinInt64))
		}
		if !ok {
			return true, c.errf("input", "element %d: integer overflow", i)
		}
		if err := intOfType(dt, r); err != nil {
			return true, c.errf("output 0", "element %d: %v", i, err)
		}
		out[i] = r
	}
	v := intConst(s, out)
	v.dt = dt
	c.outValue(0, v)
	return true, nil
}

// naryOp: Sum, Max, Min (left folds of add, max_elem, min_elem) and Mean
// (the sum's fold times 1/n) over numpy-broadcast inputs.
func naryOp(op irsem.Op) opImporter {
	return func(c *nctx) error {
		if err := c.arity(1, -1); err != nil {
			return err
		}
		if err := c.legacy("consumed_inputs", 6); err != nil {
			return err
		}
		if err := c.outputs(1, "a second output"); err != nil {
			return err
		}
		if done, err := c.foldIntNary(string(op)); done || err != nil {
			return err
		}
		if done, err := c.selectIntNary(op); done || err != nil {
			return err
		}
		vs := make([]*value, len(c.n.Inputs))
		ids := make([]int, len(c.n.Inputs))
		shapes := make([]spec.Shape, len(c.n.Inputs))
		for i := range c.n.Inputs {
			v, id, err := c.float(i)
			if err != nil {
				return err
			}
			vs[i], ids[i], shapes[i] = v, id, v.shape
		}
		s, err := broadcastShapes(shapes...)
		if err != nil {
			return c.errf("input", "%v", err)
		}
		fold := op
		if op == "mean" {
			fold = irsem.OpAdd
		}
		acc := c.b.broadcast(ids[0], shapes[0], s)
		for i := 1; i < len(ids); i++ {
			acc = c.b.binary(fold, acc, c.b.broadcast(ids[i], shapes[i], s), s)
		}
		if op == "mean" {
			acc = c.b.scale(acc, s, spec.NewRat(1, int64(len(ids))))
		}
		c.out(0, acc, s, vs[0].dt)
		return nil
	}
}

func importIdentity(c *nctx) error {
	if err := c.arity(1, 1); err != nil {
		return err
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	c.outValue(0, v)
	return nil
}

// importDropout: inference mode is the identity. The ratio (attribute or
// input) does not matter then; training_mode must be a constant false and
// the mask output must be unused.
func importDropout(c *nctx) error {
	if err := c.arity(1, 3); err != nil {
		return err
	}
	if err := c.legacy("consumed_inputs", 6); err != nil {
		return err
	}
	if err := c.legacy("ratio", 12); err != nil {
		return err
	}
	if c.b.opset < 7 {
		// is_test: the importer models inference whatever the flag says
		// (a Dropout exported for training is the identity at inference).
		if _, err := c.attrBool("is_test", false); err != nil {
			return err
		}
	}
	if c.b.opset >= 12 {
		c.allow("seed") // the random draw of training mode
	}
	if c.b.opset >= 12 && c.present(1) {
		if _, err := c.in(1); err != nil {
			return err
		}
	}
	if c.present(2) {
		t, err := c.constInts(2)
		if err != nil {
			return err
		}
		for _, x := range t.ints {
			if x != 0 {
				return c.errf(c.inField(2), "training_mode is true; only inference is supported")
			}
		}
	}
	if err := c.outputs(1, "the dropout mask"); err != nil {
		return err
	}
	v, _, err := c.float(0)
	if err != nil {
		return err
	}
	c.outValue(0, v)
	return nil
}

// importPow: x^p for a constant exponent whose elements are all equal: an
// integer n as repeated multiplication (exact; 1/x^|n| for n < 0, ones for
// n = 0), 1/2 as sqrt, anything else as exp(p·log x).
func importPow(c *nctx) error {
	if err := c.oneOutput(2, 2); err != nil {
		return err
	}
	v, x, err := c.float(0)
	if err != nil {
		return err
	}
	pv, err := c.in(1)
	if err != nil {
		return err
	}
	if !pv.isK || !pv.uniform() {
		return importPowTensor(c) // import_extra.go
	}
	s, err := broadcastShapes(v.shape, pv.shape)
	if err != nil {
		return c.errf("input", "%v", err)
	}
	var p spec.Rat
	if pv.isInt() {
		if len(pv.ints) == 0 {
			return c.errf(c.inField(1), "empty exponent")
		}
		for _, e := range pv.ints {
			if e != pv.ints[0] {
				return c.errf(c.inField(1), "the exponent's elements differ; only a uniform exponent is supported")
			}
		}
		p = spec.NewRat(pv.ints[0], 1)
	} else {
		if len(pv.exact()) == 0 {
			return c.errf(c.inField(1), "empty exponent")
		}
		for _, e := range pv.exact() {
			if !e.Same(pv.exact()[0]) {
				return c.errf(c.inField(1), "the exponent's elements differ; only a uniform exponent is supported")
			}
		}
		p = pv.exact()[0]
	}
	x = c.b.broadcast(x, v.shape, s)
	var id int
	big := p.Big()
	switch {
	case big.IsInt() && big.Num().IsInt64() && abs64(big.Num().Int64()) <= maxPowInt:
		n := big.Num().Int64()
		if n == 0 {
			id = c.b.constScalar(spec.NewRat(1, 1), s)
			break
		}
		id = x
		for k := int64(1); k < abs64(n); k++ {
			id = c.b.binary(irsem.OpMulElem, id, x, s)
		}
		if n < 0 {
			id = c.b.unary(irsem.OpInv, id, s)
		}
	case p.Same(spec.NewRat(1, 2)):
		id = c.b.unary(irsem.OpSqrt, x, s)
	default:
		id = c.b.unary(irsem.OpExp, c.b.scale(c.b.unary(irsem.OpLog, x, s), s, p), s)
	}
	c.out(0, id, s, v.dt)
	return nil
}

// maxPowInt bounds the integer exponents written as repeated products.
const maxPowInt = 64

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// importClip: min(max(x, lo), hi); the bounds are attributes before opset
// 11 and optional scalar inputs from it (constants, or computed values
// applied as max_elem / min_elem with the broadcast bound).
func importClip(c *nctx) error {
	var lo, hi *spec.Rat
	dyn := [2]int{-1, -1} // inputs of computed bounds
	if c.b.opset < 11 {
		if err := c.arity(1, 1); err != nil {
			return err
		}
		if err := c.legacy("consumed_inputs", 6); err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			dst  **spec.Rat
		}{{"min", &lo}, {"max", &hi}} {
			a, err := c.attr(f.name, AttrFloat)
			if err != nil {
				return err
			}
			if a != nil {
				r, err := c.attrRat(f.name, 0)
				if err != nil {
					return err
				}
				*f.dst = &r
			}
		}
	} else {
		if err := c.arity(1, 3); err != nil {
			return err
		}
		for i, dst := range []**spec.Rat{&lo, &hi} {
			if !c.present(i + 1) {
				continue
			}
			t, err := c.in(i + 1)
			if err != nil {
				return err
			}
			if t.shape.Size() != 1 {
				return c.errf(c.inField(i+1), "shape %v, expected a scalar", t.shape)
			}
			if !t.isK {
				// A computed bound: max_elem / min_elem with it, broadcast.
				dyn[i] = i + 1
				continue
			}
			var r spec.Rat
			if t.isInt() {
				r = spec.NewRat(t.ints[0], 1)
			} else {
				r = t.exact()[0]
			}
			*dst = &r
		}
	}
	if err := c.outputs(1, "a second output"); err != nil {
		return err
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	var x int
	if v.truncInt {
		// An integer computed from float data (branch qdyn37) clipped to
		// constant integer bounds: the IR's clamp selects x, lo or hi, an
		// exact integer; judged exactly (keepInt).
		if dyn[0] >= 0 || dyn[1] >= 0 {
			return c.errf(c.inField(max(dyn[0], dyn[1])), "Clip of an integer computed from float data is modelled with constant bounds only")
		}
		if x, err = c.b.ir(v); err != nil {
			return c.wrap(c.inField(0), err)
		}
	} else if v, x, err = c.float(0); err != nil {
		return err
	}
	y := c.b.clamp(x, v.shape, lo, hi)
	for k, in := range dyn {
		if in < 0 {
			continue
		}
		bv, bid, err := c.float(in)
		if err != nil {
			return err
		}
		bb := c.b.broadcast(c.b.reshape(bid, bv.shape, spec.Shape{}), spec.Shape{}, v.shape)
		op := irsem.OpMaxElem
		if k == 1 {
			op = irsem.OpMinElem
		}
		y = c.b.binary(op, y, bb, v.shape)
	}
	c.out(0, y, v.shape, v.dt)
	c.keepInt(v)
	return nil
}

// importLeakyRelu: relu(x) + α·min(x, 0), α default 0.01.
func importLeakyRelu(c *nctx) error {
	alpha, err := c.attrRat("alpha", 0.01)
	if err != nil {
		return err
	}
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	s := v.shape
	id := c.b.binary(irsem.OpAdd, c.b.unary(irsem.OpRelu, x, s), c.b.scale(c.b.minZero(x, s), s, alpha), s)
	c.out(0, id, s, v.dt)
	return nil
}

// importPRelu: relu(x) + slope⊙min(x, 0), the slope broadcast to x
// (unidirectionally from opset 7; before it a slope of one element is
// shared and a rank-1 slope runs along axis 1, the channels).
func importPRelu(c *nctx) error {
	if err := c.arity(2, 2); err != nil {
		return err
	}
	if err := c.legacy("consumed_inputs", 6); err != nil {
		return err
	}
	if err := c.outputs(1, "a second output"); err != nil {
		return err
	}
	v, x, err := c.float(0)
	if err != nil {
		return err
	}
	sv, sl, err := c.float(1)
	if err != nil {
		return err
	}
	s, ss := v.shape, sv.shape
	if c.b.opset < 7 && len(ss) >= 1 && len(s) >= 2 && !(ss.Size() == 1) {
		if len(ss) != 1 || ss[0] != s[1] {
			return c.errf(c.inField(1), "slope of shape %v for an input of shape %v (opset %d: one slope per channel, axis 1)", ss, s, c.b.opset)
		}
		full := make(spec.Shape, len(s)-1)
		for i := range full {
			full[i] = 1
		}
		full[0] = ss[0]
		sl = c.b.reshape(sl, ss, full)
		ss = full
	}
	if c.b.opset < 7 && ss.Size() == 1 && len(ss) > 0 {
		sl = c.b.reshape(sl, ss, spec.Shape{})
		ss = spec.Shape{}
	}
	if err := spec.BroadcastShape(ss, s); err != nil {
		return c.errf(c.inField(1), "%v", err)
	}
	slope := c.b.broadcast(sl, ss, s)
	id := c.b.binary(irsem.OpAdd, c.b.unary(irsem.OpRelu, x, s), c.b.binary(irsem.OpMulElem, slope, c.b.minZero(x, s), s), s)
	c.out(0, id, s, v.dt)
	return nil
}

// expm1Neg is α·(exp(min(x, 0)) − 1): Elu's negative part.
func (b *imp) expm1Neg(x int, s spec.Shape, alpha spec.Rat) int {
	e := b.unary(irsem.OpExp, b.minZero(x, s), s)
	return b.scale(b.addConst(e, s, spec.NewRat(-1, 1)), s, alpha)
}

// importElu: relu(x) + α·(exp(min(x, 0)) − 1), α default 1.
func importElu(c *nctx) error {
	alpha, err := c.attrRat("alpha", 1)
	if err != nil {
		return err
	}
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	s := v.shape
	c.out(0, c.b.binary(irsem.OpAdd, c.b.unary(irsem.OpRelu, x, s), c.b.expm1Neg(x, s, alpha), s), s, v.dt)
	return nil
}

// importSelu: γ·(relu(x) + α·(exp(min(x, 0)) − 1)) with ONNX's float32
// defaults α = 1.67326319217681884765625, γ = 1.05070102214813232421875.
func importSelu(c *nctx) error {
	alpha, err := c.attrRat("alpha", 1.67326319217681884765625)
	if err != nil {
		return err
	}
	gamma, err := c.attrRat("gamma", 1.05070102214813232421875)
	if err != nil {
		return err
	}
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	s := v.shape
	in := c.b.binary(irsem.OpAdd, c.b.unary(irsem.OpRelu, x, s), c.b.expm1Neg(x, s, alpha), s)
	c.out(0, c.b.scale(in, s, gamma), s, v.dt)
	return nil
}

// importSoftsign: x / (1 + |x|).
func importSoftsign(c *nctx) error {
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	s := v.shape
	den := c.b.addConst(c.b.unary(irsem.OpAbs, x, s), s, spec.NewRat(1, 1))
	c.out(0, c.b.div(x, den, s), s, v.dt)
	return nil
}

// importHardSigmoid: clamp(α·x + β, 0, 1), α = 0.2, β = 0.5 (float32).
func importHardSigmoid(c *nctx) error {
	alpha, err := c.attrRat("alpha", 0.2)
	if err != nil {
		return err
	}
	beta, err := c.attrRat("beta", 0.5)
	if err != nil {
		return err
	}
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	s := v.shape
	zero, one := spec.Rat{}, spec.NewRat(1, 1)
	c.out(0, c.b.clamp(c.b.addConst(c.b.scale(x, s, alpha), s, beta), s, &zero, &one), s, v.dt)
	return nil
}

// importShrink: the registry's shrink (lambd default 0.5, bias 0).
func importShrink(c *nctx) error {
	lambd, err := c.attrRat("lambd", 0.5)
	if err != nil {
		return err
	}
	bias, err := c.attrRat("bias", 0)
	if err != nil {
		return err
	}
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	id, err := c.b.shrink(x, v.shape, lambd, bias)
	if err != nil {
		return c.wrap("", err)
	}
	c.out(0, id, v.shape, v.dt)
	return nil
}

func (b *imp) shrink(x int, s spec.Shape, lambd, bias spec.Rat) (int, error) {
	if err := available(irsem.OpShrink, "regops"); err != nil {
		return 0, err
	}
	return b.emit(irsem.Kind{Op: irsem.OpShrink, Lambd: lambd, Bias: bias}, s, x), nil
}

// foldIntUnary folds Neg, Abs, Sign and Relu of an integer constant (the
// shape arithmetic of expanded function bodies); done is false otherwise.
func (c *nctx) foldIntUnary(op irsem.Op) (done bool, err error) {
	if len(c.n.Inputs) != 1 {
		return false, nil
	}
	v, err := c.in(0)
	if err != nil || !v.isK || !v.isInt() {
		return false, nil
	}
	out := make([]int64, len(v.ints))
	for i, x := range v.ints {
		switch op {
		case "neg":
			out[i] = -x
		case irsem.OpAbs:
			out[i] = abs64(x)
		case "sign":
			switch {
			case x > 0:
				out[i] = 1
			case x < 0:
				out[i] = -1
			}
		case irsem.OpRelu:
			out[i] = max(x, 0)
		default:
			return false, nil
		}
		if x == math.MinInt64 && op != "sign" && op != irsem.OpRelu {
			return true, c.errf(c.inField(0), "element %d: integer overflow", i)
		}
	}
	c.outValue(0, intConst(v.shape, out))
	return true, nil
}
