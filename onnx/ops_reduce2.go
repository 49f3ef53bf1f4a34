package onnx

import (
	"math"
	"sort"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The reductions beyond ReduceSum and ReduceMean, by decomposition into
// registry primitives (x over the reduced axes; every formula is the
// operator specification's):
//
//	ReduceMax        max over the axes: max_pool_nd with a window of the whole (last) axis
//	ReduceMin        −max(−x)
//	ReduceProd       a left fold of mul_elem over the slices of each axis
//	ReduceL1         Σ|x|            reduce_sum of abs
//	ReduceL2         √(Σ x·x)        sqrt of reduce_sum of mul_elem(x, x)
//	ReduceSumSquare  Σ x·x
//	ReduceLogSum     log Σ x
//	ReduceLogSumExp  log Σ eˣ        (the real function: no max-shift is
//	                                  needed in exact arithmetic)
//	GlobalMaxPool    ReduceMax over the spatial axes, keepdims
//
// The axes are an attribute before opset 18 and a constant input from it
// (as for ReduceMean); keepdims and noop_with_empty_axes as there. A
// reduction over an empty axis is the operation's identity (emptyReduce).
func reduce2Ops() map[string]opImporter {
	return map[string]opImporter{
		"ReduceMax": reduce2Op("max"), "ReduceMin": reduce2Op("min"), "ReduceProd": reduce2Op("prod"),
		"ReduceL1": reduce2Op("l1"), "ReduceL2": reduce2Op("l2"), "ReduceSumSquare": reduce2Op("sumsq"),
		"ReduceLogSum": reduce2Op("logsum"), "ReduceLogSumExp": reduce2Op("logsumexp"),
		"GlobalMaxPool": importGlobalMaxPool,
	}
}

// maxProdFold bounds the extent of an axis that ReduceProd folds slice by
// slice (two IR nodes per element of the axis).
const maxProdFold = 1024

// reduceAxes reads the axes (attribute before opset axesInput, constant
// input 1 from it), keepdims and noop_with_empty_axes of a reduction over
// a value of rank r: the distinct normalised axes, highest first; nil
// with noop true when the op is the identity.
func (c *nctx) reduceAxes(r int, axesInput int64) (axes []int, keep, noop bool, err error) {
	if keep, err = c.attrBool("keepdims", true); err != nil {
		return nil, false, false, err
	}
	if c.b.opset >= axesInput {
		if noop, err = c.attrBool("noop_with_empty_axes", false); err != nil {
			return nil, false, false, err
		}
	}
	raw, ok, err := c.intsArg("axes", axesInput, 1)
	if err != nil {
		return nil, false, false, err
	}
	if !ok || len(raw) == 0 {
		if noop {
			return nil, keep, true, nil
		}
		raw = make([]int64, r)
		for i := range raw {
			raw[i] = int64(i)
		}
	}
	set := map[int]bool{}
	for _, a := range raw {
		ax, err := normAxis(a, r)
		if err != nil {
			return nil, false, false, c.errf(attrField("axes"), "%v", err)
		}
		if set[ax] {
			return nil, false, false, c.errf(attrField("axes"), "axis %d given twice", ax)
		}
		set[ax] = true
		axes = append(axes, ax)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(axes)))
	return axes, keep, false, nil
}

// maxAxis is the maximum over axis ax of x (shape s): the axis moved
// last, max_pool_nd with a window of its whole extent, the axis dropped.
func (b *imp) maxAxis(x int, s spec.Shape, ax int) (int, spec.Shape, error) {
	r := len(s)
	perm := make([]int, 0, r)
	for i := 0; i < r; i++ {
		if i != ax {
			perm = append(perm, i)
		}
	}
	perm = append(perm, ax)
	p, ps := b.permute(x, s, perm)
	n := s[ax]
	outer := ps[:r-1].Clone()
	flat := b.reshape(p, ps, spec.Shape{prod(outer), n})
	if err := available(irsem.OpMaxPoolND, "winops"); err != nil {
		return 0, nil, err
	}
	win := &spec.Window{Kernel: []int{n}, Stride: []int{1}, Pads: []int{0, 0}, Dilation: []int{1}}
	m := b.emit(irsem.Kind{Op: irsem.OpMaxPoolND, Window: win}, spec.Shape{prod(outer), 1}, flat)
	return b.reshape(m, spec.Shape{prod(outer), 1}, outer), outer, nil
}

// prodAxis is the product over axis ax: a left fold of mul_elem over its
// slices (1 for an empty axis is refused by the caller).
func (b *imp) prodAxis(x int, s spec.Shape, ax int) (int, spec.Shape, error) {
	out := append(s[:ax:ax].Clone(), s[ax+1:]...)
	one := s.Clone()
	one[ax] = 1
	acc := -1
	for k := 0; k < s[ax]; k++ {
		sl, err := b.slice(x, s, ax, k, k+1)
		if err != nil {
			return 0, nil, err
		}
		sl = b.reshape(sl, one, out)
		if acc < 0 {
			acc = sl
		} else {
			acc = b.binary(irsem.OpMulElem, acc, sl, out)
		}
	}
	return acc, out, nil
}

func reduce2Op(kind string) opImporter {
	return func(c *nctx) error {
		if err := c.oneOutput(1, 2); err != nil {
			return err
		}
		if v, err := c.in(0); err == nil {
			if axes, keep, noop, err := c.reduceAxes(len(v.shape), 18); err == nil && !noop && emptyAxis(v.shape, axes) && kind != "l1" && kind != "l2" && kind != "sumsq" {
				return c.emptyReduce(v, kind, reducedShape(v.shape, axes, keep))
			}
		}
		if kind == "max" || kind == "min" {
			v, err := c.in(0)
			if err != nil {
				return err
			}
			if done, err := c.foldReduceMaxMin(v, kind == "max"); done {
				return err
			}
		}
		v, x, err := c.reduceIn(kind)
		if err != nil {
			return err
		}
		axes, keep, noop, err := c.reduceAxes(len(v.shape), 18)
		if err != nil {
			return err
		}
		s := v.shape.Clone()
		if noop {
			// No reduction, "but other operations will be performed"
			// (the operator text: ReduceSumSquare acts as a square): |x|
			// for L1 and L2 (√(x·x)), x·x, log x, and log eˣ = x.
			switch kind {
			case "l1":
				x = c.b.unary(irsem.OpAbs, x, s)
			case "l2":
				x = c.b.unary(irsem.OpAbs, x, s)
			case "sumsq":
				x = c.b.binary(irsem.OpMulElem, x, x, s)
			case "logsum":
				x = c.b.unary(irsem.OpLog, x, s)
			}
			c.out(0, x, s, v.dt)
			c.keepInt(v)
			return nil
		}
		switch kind {
		case "min":
			x = c.b.neg(x, s)
		case "l1":
			x = c.b.unary(irsem.OpAbs, x, s)
		case "l2", "sumsq":
			x = c.b.binary(irsem.OpMulElem, x, x, s)
		case "logsumexp":
			x = c.b.unary(irsem.OpExp, x, s)
		}
		if kind == "prod" && emptyAxis(s, axes) {
			// The product over an empty set is 1 (the operator text's
			// identity), whatever the data: a constant of the output shape.
			c.outValue(0, onesConst(reducedShape(s, axes, keep), v.dt))
			return nil
		}
		for _, ax := range axes {
			if s[ax] == 0 && (kind == "max" || kind == "min" || kind == "prod") {
				return c.errf(attrField("axes"), "reduction over the empty axis %d", ax)
			}
			switch kind {
			case "max", "min":
				x, s, err = c.b.maxAxis(x, s, ax)
			case "prod":
				if s[ax] > maxProdFold {
					return c.errf(attrField("axes"), "axis %d has extent %d; ReduceProd folds at most %d", ax, s[ax], maxProdFold)
				}
				x, s, err = c.b.prodAxis(x, s, ax)
			default:
				ns := append(s[:ax:ax].Clone(), s[ax+1:]...)
				x = c.b.emit(irsem.Kind{Op: irsem.OpReduceSum, Axis: ax}, ns, x)
				s = ns
			}
			if err != nil {
				return c.wrap("", err)
			}
		}
		switch kind {
		case "min":
			x = c.b.neg(x, s)
		case "l2":
			x = c.b.unary(irsem.OpSqrt, x, s)
		case "logsum", "logsumexp":
			x = c.b.unary(irsem.OpLog, x, s)
		}
		if keep {
			ks := v.shape.Clone()
			for _, ax := range axes {
				ks[ax] = 1
			}
			x = c.b.reshape(x, s, ks)
			s = ks
		}
		c.out(0, x, s, v.dt)
		c.keepInt(v) // ReduceMax/ReduceMin of a computed integer (reduceIn)
		return nil
	}
}

// importGlobalMaxPool: the maximum over the spatial axes of [N, C,
// spatial…], kept as extent-1 axes.
func importGlobalMaxPool(c *nctx) error {
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	s := v.shape
	if len(s) < 3 {
		return c.errf(c.inField(0), "shape %v, expected [N, C, spatial…]", s)
	}
	if prod(s[2:]) == 0 {
		return c.errf(c.inField(0), "shape %v has no spatial element", s)
	}
	flat := spec.Shape{s[0], s[1], prod(s[2:])}
	id, ms, err := c.b.maxAxis(c.b.reshape(x, s, flat), flat, 2)
	if err != nil {
		return c.wrap("", err)
	}
	out := s.Clone()
	for i := 2; i < len(out); i++ {
		out[i] = 1
	}
	c.out(0, c.b.reshape(id, ms, out), out, v.dt)
	return nil
}

// emptyReduce binds output 0 of a reduction over an empty axis of v to
// ONNX's identity of the operation, a constant of shape os whatever the
// data (the operator text: the reduction of an empty set is the
// identity): 1 for prod, 0 for the sums (l1, l2, sumsq), −∞ for max,
// logsum and logsumexp (log 0), +∞ for min; of BOOL, max is false and min
// true (Or and And of nothing). The infinities are no reals: the value
// carries them as nonreal, which only a graph output may hold (judged by
// the special, Imported.Analyze). Integer max and min (the type's
// extremes) are refused, naming the axis.
func (c *nctx) emptyReduce(v *value, kind string, os spec.Shape) error {
	n := os.Size()
	if v.dt == Bool && (kind == "max" || kind == "min") {
		xs := make([]int64, n)
		if kind == "min" {
			for i := range xs {
				xs[i] = 1
			}
		}
		c.outValue(0, &value{shape: os.Clone(), dt: Bool, id: -1, isK: true, init: -1, ints: xs})
		return nil
	}
	if !v.dt.IsFloat() {
		return c.errf(c.inField(0), "element type %s: the reduction over an empty axis is the type's extreme, not imported", v.dt)
	}
	var id float64
	switch kind {
	case "prod":
		c.outValue(0, onesConst(os, v.dt))
		return nil
	case "max", "logsum", "logsumexp":
		id = math.Inf(-1)
	case "min":
		id = math.Inf(1)
	default:
		return c.errf("", "internal error: reduction %q over an empty axis", kind)
	}
	w := &value{shape: os.Clone(), dt: v.dt, id: -1, isK: true, init: -1, rats: make([]spec.Rat, n)}
	w.nonreal = map[int]float64{}
	for i := range w.rats {
		w.rats[i] = spec.NewRat(0, 1)
		w.nonreal[i] = id
	}
	c.outValue(0, w)
	return nil
}

// emptyAxis reports that one of the axes of shape s has extent 0.
func emptyAxis(s spec.Shape, axes []int) bool {
	for _, ax := range axes {
		if s[ax] == 0 {
			return true
		}
	}
	return false
}

// reducedShape is s reduced over axes: each dropped, or kept as extent 1.
func reducedShape(s spec.Shape, axes []int, keep bool) spec.Shape {
	drop := map[int]bool{}
	for _, ax := range axes {
		drop[ax] = true
	}
	var out spec.Shape
	for i, d := range s {
		switch {
		case !drop[i]:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	if out == nil {
		out = spec.Shape{}
	}
	return out
}

// onesConst is a float constant of 1s of shape s and type dt.
func onesConst(s spec.Shape, dt DataType) *value {
	rs := make([]spec.Rat, s.Size())
	for i := range rs {
		rs[i] = spec.NewRat(1, 1)
	}
	return &value{shape: s.Clone(), dt: dt, id: -1, isK: true, init: -1, rats: rs}
}
