package onnx

import (
	"github.com/tlcheck/tlcheck/irsem"
)

// A data-dependent choice: Where(Greater(a, b), X, Y) and
// Where(Less(a, b), X, Y) with a or b computed from the model's inputs
// (PyTorch's exporter writes Softplus(β, threshold) as
// Where(Greater(β·x, threshold), x, Softplus(β·x)/β)). Every other use of a
// comparison of computed data is still refused (constIn).
//
// The comparison becomes the 0/1 mask m = relu(sign(a − b)) (Less: b − a),
// and the Where the registry formula Y + m·(X − Y). Over exact values
// m = [a > b] (sign is 1, 0, −1 as a − b is positive, zero, negative, and
// relu keeps the 1), so the formula is X where a > b and Y elsewhere: the
// Where's exact value, and its derivatives m·δ to X, (1 − m)·δ to Y and 0
// to a and b (sign's derivative) are the Where's. A runtime that compares
// binary floats decides a > b as sign(a − b) does, since a − b rounds to
// 0 only when a = b; where the modelled evaluations of a − b straddle 0,
// fpbound's Sign bounds the choice soundly (its error covers both
// branches) instead of deciding it, so no verdict rests on a guessed
// branch.

// dataCmp imports a Greater or Less node one of whose inputs is computed
// float data as the mask above (reported handled); any other comparison
// is left to cmpOp's folding.
func (c *nctx) dataCmp(op string) (bool, error) {
	if op != "Greater" && op != "Less" || len(c.n.Inputs) != 2 {
		return false, nil
	}
	var vs [2]*value
	computed := false
	for i := range vs {
		v, err := c.in(i)
		if err != nil || !v.dt.IsFloat() {
			return false, nil
		}
		vs[i] = v
		computed = computed || (!v.isK && !(v.input && c.b.o.Values[v.name] != nil))
	}
	if !computed {
		return false, nil
	}
	if err := c.oneOutput(2, 2); err != nil {
		return true, err
	}
	s, err := broadcastShapes(vs[0].shape, vs[1].shape)
	if err != nil {
		return true, c.errf("input", "%v", err)
	}
	if _, err := s.Check(0); err != nil {
		return true, c.errf("input", "%v", err)
	}
	var ids [2]int
	for i, v := range vs {
		id, err := c.b.ir(v)
		if err != nil {
			return true, c.wrap(c.inField(i), err)
		}
		ids[i] = c.b.broadcast(id, v.shape, s)
	}
	if op == "Less" {
		ids[0], ids[1] = ids[1], ids[0]
	}
	if err := available(irsem.OpSign, "regops"); err != nil {
		return true, c.wrap("", err)
	}
	m := c.b.unary(irsem.OpRelu, c.b.unary(irsem.OpSign, c.b.binary(irsem.OpSub, ids[0], ids[1], s), s), s)
	c.out(0, m, s, Bool)
	if name := c.n.Outputs[0]; name != "" {
		c.b.vals[name].mask01 = true
	}
	return true, nil
}

// whereMask imports Where(cond, X, Y) whose condition is a dataCmp mask m
// as Y + m·(X − Y) over the broadcast shape (reported handled); any other
// Where is left to importWhere.
func (c *nctx) whereMask() (bool, error) {
	if len(c.n.Inputs) != 3 {
		return false, nil
	}
	cv, err := c.in(0)
	if err != nil || !cv.mask01 {
		return false, nil
	}
	if err := c.oneOutput(3, 3); err != nil {
		return true, err
	}
	var vs [2]*value
	for k := range vs {
		if vs[k], err = c.in(k + 1); err != nil {
			return true, err
		}
		if !vs[k].dt.IsFloat() {
			return true, c.errf(c.inField(k+1), "element type %s: a Where on a data-dependent comparison needs float branches", vs[k].dt)
		}
	}
	s, err := broadcastShapes(cv.shape, vs[0].shape, vs[1].shape)
	if err != nil {
		return true, c.errf("input", "%v", err)
	}
	if _, err := s.Check(0); err != nil {
		return true, c.errf("input", "%v", err)
	}
	var ids [2]int
	for k, v := range vs {
		id, err := c.b.ir(v)
		if err != nil {
			return true, c.wrap(c.inField(k+1), err)
		}
		ids[k] = c.b.broadcast(id, v.shape, s)
	}
	m := c.b.broadcast(cv.id, cv.shape, s)
	d := c.b.binary(irsem.OpSub, ids[0], ids[1], s)
	c.out(0, c.b.binary(irsem.OpAdd, ids[1], c.b.binary(irsem.OpMulElem, m, d, s), s), s, vs[0].dt)
	return true, nil
}

// readsMask reports whether input i of the node being imported may be a
// dataCmp mask: a Where's condition, or an Identity (an alias that keeps
// the mark). Every other reader is refused in nctx.in.
func (c *nctx) readsMask(i int) bool {
	return (c.n.OpType == "Where" && i == 0) || c.n.OpType == "Identity"
}
