package onnx

import "github.com/tlcheck/tlcheck/spec"

// Folding ReduceMax and ReduceMin of a constant.
//
// The attention decompositions of opset 23 and later (the _expanded node
// tests, and exporters that inline Attention) guard a row that the mask
// blocks entirely: BiasRowMax = ReduceMax(AttnBias, axis −1), then
// Where(Equal(BiasRowMax, −∞), 0, Softmax(…)). AttnBias is a constant there
// (ConstantOfShape, or a causal Trilu/Where mask holding −∞), so the
// maximum is a constant too, and folding it lets Equal and Where fold as
// well. The fold is exact whatever the runtime: max and min select an
// element, they never round, so every IEEE 754 evaluation of the operator
// gives the element the fold gives (−∞ is below every number and the
// maximum of a row that is −∞ everywhere is −∞, as in IEEE 754). Integer
// and BOOL constants fold the same way (ONNX's ReduceMax/ReduceMin of BOOL
// are Or/And).
//
// An initializer is never folded here (it stays a payload field a
// gradient is reported for), and neither is a reduction over an empty
// axis (ONNX's result there is ±∞ or the type's extreme; the caller
// refuses it).

// foldReduceMaxMin folds ReduceMax (max true) or ReduceMin of input v when
// it is a constant that is no initializer; done is false when it is not.
func (c *nctx) foldReduceMaxMin(v *value, max bool) (done bool, err error) {
	if !v.isK && firstTrue(v.ninf) >= 0 && v.known != nil {
		// A computed value holding −∞ (an input mask plus a causal one):
		// the IR cannot compute its maximum, but it is known.
		return c.knownOnly(v, max)
	}
	if !v.isK || v.init >= 0 {
		return false, nil
	}
	axes, keep, noop, err := c.reduceAxes(len(v.shape), 18)
	if err != nil {
		return true, err
	}
	if noop {
		c.outValue(0, v)
		return true, nil
	}
	red := make([]bool, len(v.shape))
	for _, ax := range axes {
		if v.shape[ax] == 0 {
			return false, nil
		}
		red[ax] = true
	}
	out, acc := reduceMaxMin(v, red, keep, max)
	r, err := c.fromXnums(out, v.dt, acc)
	if err != nil {
		return true, err
	}
	c.outValue(0, r)
	return true, nil
}

// reduceMaxMin is the maximum (max true) or minimum of constant v over the
// axes red marks (each of extent > 0), and its shape (the reduced axes kept
// as extent 1 when keep is set, dropped otherwise).
func reduceMaxMin(v *value, red []bool, keep, max bool) (spec.Shape, []xnum) {
	ks := v.shape.Clone() // the kept shape: every reduced axis extent 1
	out := spec.Shape{}   // the output shape
	for ax := range ks {
		if red[ax] {
			ks[ax] = 1
			if keep {
				out = append(out, 1)
			}
		} else {
			out = append(out, ks[ax])
		}
	}
	xs := elems(v, v.shape)
	acc := make([]xnum, ks.Size())
	seen := make([]bool, len(acc))
	kst := ks.Strides()
	idx := make([]int, len(v.shape))
	for _, x := range xs {
		o := 0
		for d, i := range idx {
			if !red[d] {
				o += i * kst[d]
			}
		}
		if k := x.cmp(acc[o]); !seen[o] || (max && k > 0) || (!max && k < 0) {
			acc[o], seen[o] = x, true
		}
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < v.shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out, acc
}

// knownOnly binds output 0 of ReduceMax or ReduceMin of v, a computed
// value holding −∞ with known elements, to its known result with no IR
// node: comparisons decide on it (decidedIn), and a use as float data is
// refused (value.noIR), since the IR does not compute with −∞.
func (c *nctx) knownOnly(v *value, max bool) (bool, error) {
	axes, keep, noop, err := c.reduceAxes(len(v.shape), 18)
	if err != nil {
		return true, err
	}
	red := make([]bool, len(v.shape))
	for _, ax := range axes {
		if v.shape[ax] == 0 {
			return true, c.errf(attrField("axes"), "reduction over the empty axis %d", ax)
		}
		red[ax] = true
	}
	k := v.known
	if !noop {
		os, xs := reduceMaxMin(v.known, red, keep, max)
		if k, err = c.fromXnums(os, v.dt, xs); err != nil {
			return true, err
		}
	}
	if len(c.n.Outputs) > 0 && c.n.Outputs[0] != "" {
		name := c.n.Outputs[0]
		c.b.vals[name] = &value{name: name, shape: k.shape.Clone(), dt: v.dt, id: -1, init: -1, known: k, where: c.n.Where(),
			noIR: c.n.OpType + " of a value holding −∞ is known at import but not computed by the IR; only comparisons may use it"}
	}
	return true, nil
}
