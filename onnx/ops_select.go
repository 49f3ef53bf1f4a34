package onnx

import (
	"sort"

	"github.com/tlcheck/tlcheck/spec"
)

// TopK and Hardmax: selections by the order of the data.
//
// Both are piecewise constant in the order of their input: TopK's indices
// and Hardmax's output change only where two elements tie, so their
// derivative is zero wherever it exists (TopK's values are a selection of
// the input, with derivative 1 at the chosen elements). The order is
// decided at import when the input is known exactly there: a constant
// (folded), or a float graph input whose recorded value Options.Values
// gives (an input is exact in every evaluation, so its order is the
// runtime's too). Of a value computed from the inputs the order is
// data-dependent — the runtime's rounding could reorder two close
// elements — and the node is refused, naming it and the input.
//
//   - TopK [1, 10, 11]: K from the attribute k (opset 1) or input 1 (a
//     constant or bound int64 tensor of one element, 0 ≤ K ≤ the axis'
//     extent); axis (default −1), largest (1), sorted (1). The K largest
//     (smallest) elements along the axis in descending (ascending) order;
//     of equal elements the lower index comes first (ONNX: "If two
//     elements are equal, the one with the lower index appears first").
//     sorted = 0 leaves the order to the runtime, so the output is not a
//     function of the input, and is refused. Values is the gather of the
//     input at those indices (folded for a constant; an IR gather of the
//     graph input otherwise); Indices is an INT64 constant.
//   - Hardmax [1, 11, 13]: opset 13, the one-hot of the first maximum
//     along axis (default −1); opsets 1 and 11, of the first maximum of
//     the input coerced to 2-D [∏ shape[:axis], ∏ shape[axis:]] (axis
//     default 1). The result is a float constant of zeros and ones.

// selectOps lists the op types of this file.
func selectOps() map[string]opImporter {
	return map[string]opImporter{"TopK": importTopK, "Hardmax": importHardmax}
}

func init() {
	for k, v := range selectOps() {
		importers[k] = v
	}
}

// orderIn returns input i decided at import (a constant, or a graph input
// with its recorded value; see decidedIn) as float elements.
func (c *nctx) orderIn(i int) (*value, []xnum, error) {
	v, err := c.in(i)
	if err != nil {
		return nil, nil, err
	}
	if v.dt == Bool {
		return nil, nil, c.errf(c.inField(i), "element type %s, %s needs a number tensor", v.dt.String(), c.n.OpType)
	}
	d, err := c.decidedIn(i)
	if err != nil {
		return nil, nil, err
	}
	return v, elems(d, d.shape), nil
}

func importTopK(c *nctx) error {
	hi := 2
	if c.b.opset < 10 {
		hi = 1
	}
	if err := c.arity(1, hi); err != nil {
		return err
	}
	if len(c.n.Outputs) == 0 || c.n.Outputs[0] == "" {
		return c.errf("output 0", "missing")
	}
	axis, err := c.attrInt("axis", -1)
	if err != nil {
		return err
	}
	largest, sorted := true, true
	if c.b.opset >= 11 {
		if largest, err = c.attrBool("largest", true); err != nil {
			return err
		}
		if sorted, err = c.attrBool("sorted", true); err != nil {
			return err
		}
	}
	if !sorted {
		return c.errf(attrField("sorted"), "0 leaves the order of the outputs to the runtime (not a function of the input)")
	}
	var k int64
	if c.b.opset < 10 {
		a, err := c.attr("k", AttrInt)
		if err != nil {
			return err
		}
		if a == nil {
			return c.errf(attrField("k"), "missing")
		}
		k = a.I
	} else {
		kv, err := c.constInts(1)
		if err != nil {
			return err
		}
		if len(kv.ints) != 1 {
			return c.errf(c.inField(1), "K must have one element, got %d", len(kv.ints))
		}
		k = kv.ints[0]
	}
	v, xs, err := c.orderIn(0)
	if err != nil {
		return err
	}
	ax, err := normAxis(axis, len(v.shape))
	if err != nil {
		return c.errf(attrField("axis"), "%v", err)
	}
	n := v.shape[ax]
	if k < 0 || k > int64(n) {
		return c.errf("K", "%d is outside [0, %d] (the extent of axis %d)", k, n, ax)
	}
	outer, inner := prod(v.shape[:ax]), prod(v.shape[ax+1:])
	os := v.shape.Clone()
	os[ax] = int(k)
	idx := make([]int64, os.Size()) // the indices along the axis
	flat := make([]int, os.Size())  // the row-major positions in the input
	order := make([]int, n)
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			at := func(j int) xnum { return xs[(o*n+j)*inner+in] }
			for j := range order {
				order[j] = j
			}
			sort.SliceStable(order, func(p, q int) bool {
				cm := at(order[p]).cmp(at(order[q]))
				if largest {
					return cm > 0
				}
				return cm < 0
			})
			for j := 0; j < int(k); j++ {
				p := (o*int(k)+j)*inner + in
				idx[p] = int64(order[j])
				flat[p] = (o*n+order[j])*inner + in
			}
		}
	}
	if v.isK {
		vals := make([]xnum, len(flat))
		for p, f := range flat {
			vals[p] = xs[f]
		}
		out, err := c.fromXnums(os, v.dt, vals)
		if err != nil {
			return err
		}
		c.outValue(0, out)
	} else {
		id, err := c.b.ir(v)
		if err != nil {
			return c.wrap(c.inField(0), err)
		}
		id = c.b.reshape(id, v.shape, spec.Shape{v.shape.Size()})
		g, s, err := c.b.gather(id, spec.Shape{v.shape.Size()}, 0, flat, os)
		if err != nil {
			return c.wrap("", err)
		}
		c.out(0, g, s, v.dt)
	}
	if len(c.n.Outputs) > 1 {
		c.outValue(1, intConst(os, idx))
	}
	return nil
}

func importHardmax(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	def := int64(1)
	if c.b.opset >= 13 {
		def = -1
	}
	axis, err := c.attrInt("axis", def)
	if err != nil {
		return err
	}
	v, xs, err := c.orderIn(0)
	if err != nil {
		return err
	}
	ax, err := normAxis(axis, len(v.shape))
	if err != nil {
		return c.errf(attrField("axis"), "%v", err)
	}
	// The rows: one axis (opset 13) or the coerced 2-D trailing block.
	outer, n, inner := prod(v.shape[:ax]), v.shape[ax], prod(v.shape[ax+1:])
	if c.b.opset < 13 {
		n, inner = prod(v.shape[ax:]), 1
	}
	out := make([]xnum, len(xs))
	one := spec.NewRat(1, 1)
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			if n == 0 {
				continue
			}
			best := 0
			for j := 1; j < n; j++ {
				if xs[(o*n+j)*inner+in].cmp(xs[(o*n+best)*inner+in]) > 0 {
					best = j
				}
			}
			out[(o*n+best)*inner+in] = xnum{r: one}
		}
	}
	res, err := c.fromXnums(v.shape, v.dt, out)
	if err != nil {
		return err
	}
	c.outValue(0, res)
	return nil
}
