package onnx

import (
	"sort"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// reduceOps: reductions and the softmax family.
func reduceOps() map[string]opImporter {
	return map[string]opImporter{
		"ReduceSum": reduceOp(irsem.OpReduceSum, 13), "ReduceMean": reduceOp(irsem.OpReduceMean, 18),
		"Softmax": softmaxOp("softmax"), "LogSoftmax": softmaxOp("log_softmax"), "Softmin": softmaxOp("softmin"),
	}
}

// reduceOp: a chain of one-axis reductions, highest axis first (so the
// lower axes keep their numbers), then a reshape when keepdims = 1. A
// mean over several axes is the mean of means, which equals the mean over
// all their elements (each inner mean has the same count). The axes are
// an attribute before opset axesInput and a constant input from it; no
// axes reduce every axis unless noop_with_empty_axes = 1.
func reduceOp(op irsem.Op, axesInput int64) opImporter {
	return func(c *nctx) error {
		if err := c.oneOutput(1, 2); err != nil {
			return err
		}
		v, x, err := c.float(0)
		if err != nil {
			return err
		}
		keep, err := c.attrBool("keepdims", true)
		if err != nil {
			return err
		}
		noop := false
		if c.b.opset >= axesInput {
			if noop, err = c.attrBool("noop_with_empty_axes", false); err != nil {
				return err
			}
		}
		axes, ok, err := c.intsArg("axes", axesInput, 1)
		if err != nil {
			return err
		}
		r := len(v.shape)
		if !ok || len(axes) == 0 {
			if noop {
				c.outValue(0, v)
				return nil
			}
			axes = make([]int64, r)
			for i := range axes {
				axes[i] = int64(i)
			}
		}
		set := map[int]bool{}
		for _, a := range axes {
			ax, err := normAxis(a, r)
			if err != nil {
				return c.errf(attrField("axes"), "%v", err)
			}
			if set[ax] {
				return c.errf(attrField("axes"), "axis %d given twice", ax)
			}
			set[ax] = true
		}
		list := make([]int, 0, len(set))
		for a := range set {
			list = append(list, a)
		}
		sort.Sort(sort.Reverse(sort.IntSlice(list)))
		s := v.shape.Clone()
		for _, ax := range list {
			if op == irsem.OpReduceMean && s[ax] == 0 {
				return c.errf(attrField("axes"), "the mean over the empty axis %d", ax)
			}
			ns := append(s[:ax:ax].Clone(), s[ax+1:]...)
			x = c.b.emit(irsem.Kind{Op: op, Axis: ax}, ns, x)
			s = ns
		}
		if keep {
			ks := v.shape.Clone()
			for ax := range set {
				ks[ax] = 1
			}
			x = c.b.reshape(x, s, ks)
			s = ks
		}
		c.out(0, x, s, v.dt)
		return nil
	}
}

// softmaxOp: Softmax, LogSoftmax and Softmin (softmax of −x). From opset
// 13 the axis (default −1) is the one axis normalised; before it the input
// is coerced to 2-D at axis (default 1), [prod(dims[:axis]),
// prod(dims[axis:])], normalised along the second axis and reshaped back —
// written as the one-axis form directly when axis is the last axis.
func softmaxOp(kind string) opImporter {
	return func(c *nctx) error {
		if err := c.arity(1, 1); err != nil {
			return err
		}
		if mv, err := c.in(0); err == nil && firstTrue(mv.ninf) >= 0 && kind == "softmax" {
			a, err := c.attrInt("axis", -1)
			if err != nil {
				return err
			}
			if c.b.opset < 13 {
				return c.errf(c.inField(0), "a softmax of a value holding −∞ needs opset ≥ 13")
			}
			ax, err := normAxis(a, len(mv.shape))
			if err != nil {
				return c.errf(attrField("axis"), "%v", err)
			}
			if err := c.outputs(1, "a second output"); err != nil {
				return err
			}
			return c.maskedSoftmax(mv, ax)
		}
		v, x, err := c.unaryIn()
		if err != nil {
			return err
		}
		def := int64(-1)
		if c.b.opset < 13 {
			def = 1
		}
		a, err := c.attrInt("axis", def)
		if err != nil {
			return err
		}
		s := v.shape
		r := len(s)
		if r == 0 {
			return c.errf(c.inField(0), "a scalar input has no axis to normalise")
		}
		ax, err := normAxis(a, r)
		if err != nil {
			return c.errf(attrField("axis"), "%v", err)
		}
		if kind == "softmin" {
			x = c.b.neg(x, s)
		}
		work, ws, wax := x, s, ax
		if c.b.opset < 13 && ax != r-1 {
			ws = spec.Shape{prod(s[:ax]), prod(s[ax:])}
			work = c.b.reshape(x, s, ws)
			wax = 1
		}
		var id int
		if kind == "log_softmax" {
			id = c.b.logSoftmax(work, ws, wax)
		} else {
			id = c.b.emit(irsem.Kind{Op: irsem.OpSoftmax, Axis: wax}, ws, work)
		}
		id = c.b.reshape(id, ws, s)
		c.out(0, id, s, v.dt)
		return nil
	}
}
