package onnx

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// shapeOps: ops that move elements. On an integer constant (a shape
// computation) they are folded at import; on float values they become IR
// nodes (a float initializer is never folded, so that its uses stay
// payload fields the gradient commands can name).
func shapeOps() map[string]opImporter {
	return map[string]opImporter{
		"Reshape": importReshape, "Flatten": importFlatten, "Squeeze": importSqueeze, "Unsqueeze": importUnsqueeze,
		"Transpose": importTranspose, "Concat": importConcat, "Split": importSplit, "Slice": importSlice,
		"Gather": importGather, "Expand": importExpand, "Tile": importTile,
		"Constant": importConstant, "ConstantOfShape": importConstantOfShape, "Shape": importShape,
		"Cast": importCast, "CastLike": importCastLike, "Pad": importPad,
	}
}

// intConst makes an integer constant value.
func intConst(shape spec.Shape, xs []int64) *value {
	return &value{shape: shape.Clone(), dt: Int64, id: -1, isK: true, init: -1, ints: xs}
}

// reshapeTo binds output 0 to input v under another shape with the same
// element count: folded for an integer constant, a reshape node otherwise.
func (c *nctx) reshapeTo(v *value, to spec.Shape) error {
	if to.Size() != v.shape.Size() {
		return c.errf("", "cannot reshape %v (%d elements) to %v (%d elements)", v.shape, v.shape.Size(), to, to.Size())
	}
	if _, err := to.Check(0); err != nil {
		return c.errf("", "%v", err)
	}
	if v.truncInt {
		// A computed integer (Cast, QuantizeLinear, Round of float data):
		// the same elements in another shape, judged exactly as before —
		// the IR's reshape moves values and rounds nothing (branch qdyn37).
		id, err := c.b.ir(v)
		if err != nil {
			return c.wrap(c.inField(0), err)
		}
		c.out(0, c.b.reshape(id, v.shape, to), to, v.dt)
		c.keepInt(v)
		return nil
	}
	if v.isInt() {
		if !v.isK {
			return c.errf(c.inField(0), "integer tensor is not a constant")
		}
		c.outValue(0, intConst(to, v.ints))
		return nil
	}
	if v.isK && v.ninf != nil {
		// A constant holding −∞ (a mask) stays a constant.
		c.outValue(0, &value{shape: to.Clone(), dt: v.dt, id: -1, isK: true, init: -1, rats: v.exact(), ninf: v.ninf})
		return nil
	}
	id, err := c.b.ir(v)
	if err != nil {
		return c.wrap(c.inField(0), err)
	}
	c.out(0, c.b.reshape(id, v.shape, to), to, v.dt)
	return nil
}

// intsArg reads an integer list given as attribute name before opset
// since and as constant input i from it; ok is false when absent.
func (c *nctx) intsArg(name string, since int64, i int) ([]int64, bool, error) {
	if c.b.opset < since {
		return c.attrInts(name)
	}
	if c.n.Attr(name) != nil {
		c.seen[name] = true
		return nil, false, c.errf(attrField(name), "at opset %d %s is input %d, not an attribute", c.b.opset, name, i)
	}
	if !c.present(i) {
		return nil, false, nil
	}
	v, err := c.constInts(i)
	if err != nil {
		return nil, false, err
	}
	if len(v.shape) > 1 {
		return nil, false, c.errf(c.inField(i), "shape %v, expected a 1-D tensor", v.shape)
	}
	return v.ints, true, nil
}

func importReshape(c *nctx) error {
	if err := c.outputs(1, "a second output"); err != nil {
		return err
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	if c.b.opset < 5 {
		if err := c.arity(1, 1); err != nil {
			return err
		}
		if err := c.legacy("consumed_inputs", 5); err != nil {
			return err
		}
	} else if err := c.arity(2, 2); err != nil {
		return err
	}
	dims, ok, err := c.intsArg("shape", 5, 1)
	if err != nil {
		return err
	}
	if !ok {
		return c.errf(attrField("shape"), "missing")
	}
	allowZero := false
	if c.b.opset >= 14 {
		if allowZero, err = c.attrBool("allowzero", false); err != nil {
			return err
		}
	}
	if len(dims) > spec.MaxRank {
		return c.errf(c.inField(1), "%d dims, more than the maximum rank %d", len(dims), spec.MaxRank)
	}
	out := make(spec.Shape, len(dims))
	infer := -1
	known := 1
	for i, d := range dims {
		switch {
		case d == -1:
			if infer >= 0 {
				return c.errf(c.inField(1), "more than one -1 in %v", dims)
			}
			infer = i
			continue
		case d == 0 && !allowZero:
			if i >= len(v.shape) {
				return c.errf(c.inField(1), "entry %d is 0 (copy), but the input %v has rank %d", i, v.shape, len(v.shape))
			}
			out[i] = v.shape[i]
		case d < 0 || d > int64(spec.DefaultMaxElements):
			return c.errf(c.inField(1), "entry %d is %d", i, d)
		default:
			out[i] = int(d)
		}
		known *= max(out[i], 1)
		if out[i] == 0 {
			known = 0
		}
	}
	if infer >= 0 {
		if known == 0 || v.shape.Size()%known != 0 {
			return c.errf(c.inField(1), "cannot infer the -1 of %v for %d elements", dims, v.shape.Size())
		}
		out[infer] = v.shape.Size() / known
	}
	return c.reshapeTo(v, out)
}

func importFlatten(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	a, err := c.attrInt("axis", 1)
	if err != nil {
		return err
	}
	r := len(v.shape)
	if a < 0 && c.b.opset >= 11 {
		a += int64(r)
	}
	if a < 0 || a > int64(r) {
		return c.errf(attrField("axis"), "%d out of range for rank %d", a, r)
	}
	return c.reshapeTo(v, spec.Shape{prod(v.shape[:a]), prod(v.shape[a:])})
}

func importSqueeze(c *nctx) error {
	if err := c.oneOutput(1, 2); err != nil {
		return err
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	axes, ok, err := c.intsArg("axes", 13, 1)
	if err != nil {
		return err
	}
	r := len(v.shape)
	drop := make([]bool, r)
	if !ok {
		for i, d := range v.shape {
			drop[i] = d == 1
		}
	}
	for _, a := range axes {
		ax, err := normAxis(a, r)
		if err != nil {
			return c.errf(attrField("axes"), "%v", err)
		}
		if v.shape[ax] != 1 {
			return c.errf(attrField("axes"), "axis %d of %v has extent %d, not 1", ax, v.shape, v.shape[ax])
		}
		drop[ax] = true
	}
	var out spec.Shape
	for i, d := range v.shape {
		if !drop[i] {
			out = append(out, d)
		}
	}
	if out == nil {
		out = spec.Shape{}
	}
	return c.reshapeTo(v, out)
}

func importUnsqueeze(c *nctx) error {
	if err := c.oneOutput(1, 2); err != nil {
		return err
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	axes, ok, err := c.intsArg("axes", 13, 1)
	if err != nil {
		return err
	}
	if !ok {
		return c.errf(attrField("axes"), "missing")
	}
	r := len(v.shape) + len(axes)
	ins := make([]bool, r)
	for _, a := range axes {
		ax, err := normAxis(a, r)
		if err != nil {
			return c.errf(attrField("axes"), "%v", err)
		}
		if ins[ax] {
			return c.errf(attrField("axes"), "axis %d given twice", ax)
		}
		ins[ax] = true
	}
	out := make(spec.Shape, 0, r)
	k := 0
	for i := 0; i < r; i++ {
		if ins[i] {
			out = append(out, 1)
		} else {
			out = append(out, v.shape[k])
			k++
		}
	}
	return c.reshapeTo(v, out)
}

func importTranspose(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	r := len(v.shape)
	p64, ok, err := c.attrInts("perm")
	if err != nil {
		return err
	}
	perm := make([]int, r)
	if !ok {
		for i := range perm {
			perm[i] = r - 1 - i
		}
	} else {
		if len(p64) != r {
			return c.errf(attrField("perm"), "%d entries for rank %d", len(p64), r)
		}
		seen := make([]bool, r)
		for i, p := range p64 {
			if p < 0 || p >= int64(r) || seen[p] {
				return c.errf(attrField("perm"), "%v is not a permutation of 0…%d", p64, r-1)
			}
			seen[p] = true
			perm[i] = int(p)
		}
	}
	if v.isInt() && !v.truncInt {
		out := make(spec.Shape, r)
		for i, p := range perm {
			out[i] = v.shape[p]
		}
		c.outValue(0, intConst(out, permuteData(v.ints, v.shape, perm)))
		return nil
	}
	id, err := c.b.ir(v)
	if err != nil {
		return c.wrap(c.inField(0), err)
	}
	pid, ps := c.b.permute(id, v.shape, perm)
	c.out(0, pid, ps, v.dt)
	c.keepInt(v)
	return nil
}

// permuteData permutes row-major data: output axis i is input axis perm[i].
func permuteData[T any](xs []T, s spec.Shape, perm []int) []T {
	r := len(s)
	out := make(spec.Shape, r)
	for i, p := range perm {
		out[i] = s[p]
	}
	st := s.Strides()
	res := make([]T, len(xs))
	idx := make([]int, r)
	for o := range res {
		src := 0
		for i := range idx {
			src += idx[i] * st[perm[i]]
		}
		res[o] = xs[src]
		for i := r - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < out[i] {
				break
			}
			idx[i] = 0
		}
	}
	return res
}

// takeData picks, along axis, the given indices of row-major data of shape s.
func takeData[T any](xs []T, s spec.Shape, axis int, idx []int) []T {
	outer, inner := prod(s[:axis]), prod(s[axis+1:])
	n := s[axis]
	res := make([]T, 0, outer*len(idx)*inner)
	for o := 0; o < outer; o++ {
		for _, k := range idx {
			base := (o*n + k) * inner
			res = append(res, xs[base:base+inner]...)
		}
	}
	return res
}

func importConcat(c *nctx) error {
	if err := c.oneOutput(1, -1); err != nil {
		return err
	}
	var a int64 = 1
	var err error
	if c.b.opset >= 4 {
		at, err := c.attr("axis", AttrInt)
		if err != nil {
			return err
		}
		if at == nil {
			return c.errf(attrField("axis"), "missing")
		}
		a = at.I
	} else if a, err = c.attrInt("axis", 1); err != nil {
		return err
	}
	vs := make([]*value, len(c.n.Inputs))
	for i := range vs {
		if vs[i], err = c.in(i); err != nil {
			return err
		}
	}
	s0 := vs[0].shape
	ax, err := normAxis(a, len(s0))
	if err != nil {
		return c.errf(attrField("axis"), "%v", err)
	}
	for i, v := range vs {
		if len(v.shape) != len(s0) {
			return c.errf(c.inField(i), "shape %v, input 0 has %v", v.shape, s0)
		}
		for d := range s0 {
			if d != ax && v.shape[d] != s0[d] {
				return c.errf(c.inField(i), "shape %v does not match input 0's %v off axis %d", v.shape, s0, ax)
			}
		}
		if v.isInt() != vs[0].isInt() {
			return c.errf(c.inField(i), "element type %s, input 0 is %s", v.dt.String(), vs[0].dt.String())
		}
	}
	allTrunc := true // every input a computed integer: the IR's concat
	for _, v := range vs {
		allTrunc = allTrunc && v.truncInt
	}
	if vs[0].isInt() && !allTrunc {
		out := s0.Clone()
		out[ax] = 0
		outer := prod(s0[:ax])
		var data []int64
		for o := 0; o < outer; o++ {
			for _, v := range vs {
				if !v.isK {
					return c.errf("input", "integer tensor is not a constant")
				}
				blk := v.shape[ax] * prod(v.shape[ax+1:])
				data = append(data, v.ints[o*blk:(o+1)*blk]...)
			}
		}
		for _, v := range vs {
			out[ax] += v.shape[ax]
		}
		c.outValue(0, intConst(out, data))
		return nil
	}
	ids := make([]int, len(vs))
	shapes := make([]spec.Shape, len(vs))
	for i, v := range vs {
		if ids[i], err = c.b.ir(v); err != nil {
			return c.wrap(c.inField(i), err)
		}
		shapes[i] = v.shape
	}
	id, out := c.b.concat(ids, shapes, ax)
	if _, err := out.Check(0); err != nil {
		return c.errf("", "%v", err)
	}
	c.out(0, id, out, vs[0].dt)
	c.keepInt(vs[0])
	return nil
}

func importSplit(c *nctx) error {
	if err := c.arity(1, 2); err != nil {
		return err
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	x := -1
	if !v.isK || !v.isInt() { // an integer constant is folded (splitInts)
		if v, x, err = c.float(0); err != nil {
			return err
		}
	}
	a, err := c.attrInt("axis", 0)
	if err != nil {
		return err
	}
	ax, err := normAxis(a, len(v.shape))
	if err != nil {
		return c.errf(attrField("axis"), "%v", err)
	}
	n := v.shape[ax]
	k := len(c.n.Outputs)
	parts, ok, err := c.intsArg("split", 13, 1)
	if err != nil {
		return err
	}
	var sizes []int
	if ok {
		if len(parts) != k {
			return c.errf(attrField("split"), "%d sizes for %d outputs", len(parts), k)
		}
		sum := 0
		for i, p := range parts {
			if p < 0 || p > int64(n) {
				return c.errf(attrField("split"), "entry %d is %d", i, p)
			}
			sizes = append(sizes, int(p))
			sum += int(p)
		}
		if sum != n {
			return c.errf(attrField("split"), "sizes %v sum to %d, axis %d has extent %d", parts, sum, ax, n)
		}
	} else {
		if c.b.opset >= 18 {
			no, err := c.attrInt("num_outputs", 0)
			if err != nil {
				return err
			}
			if no != 0 && no != int64(k) {
				return c.errf(attrField("num_outputs"), "%d, the node has %d outputs", no, k)
			}
		}
		if k == 0 {
			return c.errf("output", "no outputs")
		}
		chunk := (n + k - 1) / k
		if c.b.opset < 18 && n%k != 0 {
			return c.errf("input 0", "axis %d of extent %d does not split into %d equal parts", ax, n, k)
		}
		for i := 0; i < k; i++ {
			sizes = append(sizes, max(0, min(chunk, n-i*chunk)))
		}
	}
	if x < 0 {
		splitInts(c, v, ax, sizes)
		return nil
	}
	off := 0
	for i, sz := range sizes {
		id, err := c.b.slice(x, v.shape, ax, off, off+sz)
		if err != nil {
			return c.wrap(fmt.Sprintf("output %d", i), err)
		}
		s := v.shape.Clone()
		s[ax] = sz
		c.out(i, id, s, v.dt)
		off += sz
	}
	return nil
}

// sliceRange is ONNX Slice's index set along one axis of extent n: the
// start and end clamped as the operator specifies, then stepped.
func sliceRange(start, end, step int64, n int) []int {
	dim := int64(n)
	if start < 0 {
		start += dim
	}
	if end < 0 {
		end += dim
	}
	var idx []int
	if step > 0 {
		start = min(max(start, 0), dim)
		end = min(max(end, 0), dim)
		for i := start; i < end; i += step {
			idx = append(idx, int(i))
		}
	} else {
		start = min(max(start, 0), dim-1)
		end = min(max(end, -1), dim-1)
		for i := start; i > end; i += step {
			idx = append(idx, int(i))
		}
	}
	return idx
}

func importSlice(c *nctx) error {
	if err := c.outputs(1, "a second output"); err != nil {
		return err
	}
	var starts, ends, axes, steps []int64
	var hasAxes, hasSteps bool
	if c.b.opset < 10 {
		if err := c.arity(1, 1); err != nil {
			return err
		}
		var ok bool
		var err error
		if starts, ok, err = c.attrInts("starts"); err != nil || !ok {
			if err == nil {
				err = c.errf(attrField("starts"), "missing")
			}
			return err
		}
		if ends, ok, err = c.attrInts("ends"); err != nil || !ok {
			if err == nil {
				err = c.errf(attrField("ends"), "missing")
			}
			return err
		}
		if axes, hasAxes, err = c.attrInts("axes"); err != nil {
			return err
		}
	} else {
		if err := c.arity(3, 5); err != nil {
			return err
		}
		get := func(i int) ([]int64, bool, error) {
			if !c.present(i) {
				return nil, false, nil
			}
			t, err := c.constInts(i)
			if err != nil {
				return nil, false, err
			}
			return t.ints, true, nil
		}
		var err error
		if starts, _, err = get(1); err != nil {
			return err
		}
		if ends, _, err = get(2); err != nil {
			return err
		}
		if axes, hasAxes, err = get(3); err != nil {
			return err
		}
		if steps, hasSteps, err = get(4); err != nil {
			return err
		}
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	r := len(v.shape)
	if len(ends) != len(starts) {
		return c.errf("ends", "%d entries, starts has %d", len(ends), len(starts))
	}
	if !hasAxes {
		axes = make([]int64, len(starts))
		for i := range axes {
			axes[i] = int64(i)
		}
	}
	if !hasSteps {
		steps = make([]int64, len(starts))
		for i := range steps {
			steps[i] = 1
		}
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		return c.errf("axes", "starts, ends, axes and steps differ in length")
	}
	s := v.shape.Clone()
	var id int
	intK := v.isInt() && !v.truncInt // a constant integer: sliced at import
	if !intK {
		if id, err = c.b.ir(v); err != nil {
			return c.wrap(c.inField(0), err)
		}
	}
	ints := v.ints
	seen := make([]bool, r)
	for j := range starts {
		ax, err := normAxis(axes[j], r)
		if err != nil {
			return c.errf("axes", "%v", err)
		}
		if seen[ax] {
			return c.errf("axes", "axis %d given twice", ax)
		}
		seen[ax] = true
		if steps[j] == 0 {
			return c.errf("steps", "entry %d is 0", j)
		}
		idx := sliceRange(starts[j], ends[j], steps[j], s[ax])
		ns := s.Clone()
		ns[ax] = len(idx)
		if intK {
			ints = takeData(ints, s, ax, idx)
			s = ns
			continue
		}
		contiguous := steps[j] == 1 || len(idx) <= 1
		if contiguous && len(idx) > 0 {
			id, err = c.b.slice(id, s, ax, idx[0], idx[0]+len(idx))
		} else if contiguous {
			id, err = c.b.slice(id, s, ax, 0, 0)
		} else {
			id, _, err = c.b.gather(id, s, ax, idx, spec.Shape{len(idx)})
		}
		if err != nil {
			return c.wrap("", err)
		}
		s = ns
	}
	if intK {
		c.outValue(0, intConst(s, ints))
		return nil
	}
	c.out(0, id, s, v.dt)
	c.keepInt(v)
	return nil
}

// gatherOperands reads the operands Gather and GatherElements share: the
// data (input 0), the constant integer indices (input 1) and the axis
// attribute normalised against the data's rank.
func gatherOperands(c *nctx) (v, iv *value, ax int, err error) {
	if err = c.oneOutput(2, 2); err != nil {
		return nil, nil, 0, err
	}
	if v, err = c.in(0); err != nil {
		return nil, nil, 0, err
	}
	if iv, err = c.constInts(1); err != nil {
		return nil, nil, 0, err
	}
	a, err := c.attrInt("axis", 0)
	if err != nil {
		return nil, nil, 0, err
	}
	if ax, err = normAxis(a, len(v.shape)); err != nil {
		return nil, nil, 0, c.errf(attrField("axis"), "%v", err)
	}
	return v, iv, ax, nil
}

// indicesWithin reads the constant indices iv (input 1) along an axis of
// extent n: a negative index counts from the end (k + n), and one outside
// [−n, n) is refused naming its element.
func (c *nctx) indicesWithin(iv *value, n int) ([]int, error) {
	idx := make([]int, len(iv.ints))
	for i, k := range iv.ints {
		if k < 0 {
			k += int64(n)
		}
		if k < 0 || k >= int64(n) {
			return nil, c.errf(c.inField(1), "element %d is %d, outside [-%d, %d)", i, iv.ints[i], n, n)
		}
		idx[i] = int(k)
	}
	return idx, nil
}

func importGather(c *nctx) error {
	v, iv, ax, err := gatherOperands(c)
	if err != nil {
		return err
	}
	idx, err := c.indicesWithin(iv, v.shape[ax])
	if err != nil {
		return err
	}
	out := append(append(v.shape[:ax:ax].Clone(), iv.shape...), v.shape[ax+1:]...)
	if _, err := out.Check(0); err != nil {
		return c.errf("", "%v", err)
	}
	if v.isInt() && !v.truncInt {
		if !v.isK {
			return c.errf(c.inField(0), "integer tensor is not a constant")
		}
		c.outValue(0, intConst(out, takeData(v.ints, v.shape, ax, idx)))
		return nil
	}
	x, err := c.b.ir(v)
	if err != nil {
		return c.wrap(c.inField(0), err)
	}
	id, _, err := c.b.gather(x, v.shape, ax, idx, iv.shape)
	if err != nil {
		return c.wrap("", err)
	}
	c.out(0, id, out, v.dt)
	c.keepInt(v)
	return nil
}

func importExpand(c *nctx) error {
	if err := c.oneOutput(2, 2); err != nil {
		return err
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	sv, err := c.constInts(1)
	if err != nil {
		return err
	}
	to := make(spec.Shape, len(sv.ints))
	for i, d := range sv.ints {
		if d < 0 || d > int64(spec.DefaultMaxElements) {
			return c.errf(c.inField(1), "entry %d is %d", i, d)
		}
		to[i] = int(d)
	}
	s, err := broadcastShapes(v.shape, to)
	if err != nil {
		return c.errf(c.inField(1), "%v", err)
	}
	if _, err := s.Check(0); err != nil {
		return c.errf(c.inField(1), "%v", err)
	}
	if v.isK && (v.isInt() || v.ninf != nil) {
		// Folded: an integer constant, or a float one holding −∞ (a mask).
		w, err := c.fromXnums(s, v.dt, elems(v, s))
		if err != nil {
			return err
		}
		c.outValue(0, w)
		return nil
	}
	_, x, err := c.float(0)
	if err != nil {
		return err
	}
	c.out(0, c.b.broadcast(x, v.shape, s), s, v.dt)
	return nil
}

// importTile: the registry's tile with output extent in_d·repeats_d on
// every axis (x itself when every repeat is 1). tile is an index map, so
// the import is exact and its VJP sums the copies.
func importTile(c *nctx) error {
	if err := c.oneOutput(2, 2); err != nil {
		return err
	}
	v, x, err := c.float(0)
	if err != nil {
		return err
	}
	rv, err := c.constInts(1)
	if err != nil {
		return err
	}
	if len(rv.ints) != len(v.shape) {
		return c.errf(c.inField(1), "%d repeats for rank %d", len(rv.ints), len(v.shape))
	}
	s := v.shape.Clone()
	for ax, r := range rv.ints {
		if r < 0 || r > int64(spec.DefaultMaxElements) {
			return c.errf(c.inField(1), "entry %d is %d", ax, r)
		}
		s[ax] *= int(r)
		if _, err := s.Check(0); err != nil {
			return c.errf(c.inField(1), "%v", err)
		}
	}
	if !s.Equal(v.shape) {
		if x, err = c.b.tile(x, s); err != nil {
			return c.wrap("", err)
		}
	}
	c.out(0, x, s, v.dt)
	return nil
}

// constAttrValue is a Constant node's value attribute as a value.
func (c *nctx) constAttrValue() (*value, error) {
	var found []string
	for _, name := range []string{"value", "value_float", "value_floats", "value_int", "value_ints", "sparse_value", "value_string", "value_strings"} {
		c.seen[name] = true
		if c.n.Attr(name) != nil {
			found = append(found, name)
		}
	}
	if len(found) != 1 {
		return nil, c.errf("attribute", "exactly one value attribute is needed, got %v", found)
	}
	name := found[0]
	a := c.n.Attr(name)
	want := map[string]AttrType{"value": AttrTensor, "value_float": AttrFloat, "value_floats": AttrFloats, "value_int": AttrInt, "value_ints": AttrInts}
	t, ok := want[name]
	if !ok {
		return nil, c.errf(attrField(name), "not supported (only dense numeric constants)")
	}
	if a.Type != t && a.Type != 0 {
		return nil, c.errf(attrField(name), "attribute of type %s, expected %s", attrTypeName(a.Type), attrTypeName(t))
	}
	switch name {
	case "value":
		if a.T == nil {
			return nil, c.errf(attrField(name), "no tensor")
		}
		v, err := tensorValue(a.T, c.b.bud)
		if err != nil {
			return nil, c.errf(attrField(name), "%v", err)
		}
		return v, nil
	case "value_float":
		r, err := ratOf(a.F)
		if err != nil {
			return nil, c.errf(attrField(name), "%v", err)
		}
		return &value{shape: spec.Shape{}, dt: Float, id: -1, isK: true, init: -1, rats: []spec.Rat{r}}, nil
	case "value_floats":
		rs := make([]spec.Rat, len(a.Floats))
		for i, f := range a.Floats {
			r, err := ratOf(f)
			if err != nil {
				return nil, c.errf(attrField(name), "element %d: %v", i, err)
			}
			rs[i] = r
		}
		return &value{shape: spec.Shape{len(rs)}, dt: Float, id: -1, isK: true, init: -1, rats: rs}, nil
	case "value_int":
		return intConst(spec.Shape{}, []int64{a.I}), nil
	default:
		return intConst(spec.Shape{len(a.Ints)}, append([]int64(nil), a.Ints...)), nil
	}
}

func importConstant(c *nctx) error {
	if err := c.oneOutput(0, 0); err != nil {
		return err
	}
	v, err := c.constAttrValue()
	if err != nil {
		return err
	}
	v.where = c.n.Where()
	c.outValue(0, v)
	return nil
}

func importConstantOfShape(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	sv, err := c.constInts(0)
	if err != nil {
		return err
	}
	s := make(spec.Shape, len(sv.ints))
	for i, d := range sv.ints {
		if d < 0 || d > int64(spec.DefaultMaxElements) {
			return c.errf(c.inField(0), "entry %d is %d", i, d)
		}
		s[i] = int(d)
	}
	n, err := s.Check(0)
	if err != nil {
		return c.errf(c.inField(0), "%v", err)
	}
	fill := &value{dt: Float, rats: []spec.Rat{{}}}
	a, err := c.attr("value", AttrTensor)
	if err != nil {
		return err
	}
	if a != nil {
		if a.T == nil {
			return c.errf(attrField("value"), "no tensor")
		}
		if fill, err = tensorValue(a.T, c.b.bud); err != nil {
			return c.errf(attrField("value"), "%v", err)
		}
		if fill.shape.Size() != 1 {
			return c.errf(attrField("value"), "shape %v, expected one element", fill.shape)
		}
	}
	if fill.isInt() {
		xs := make([]int64, n)
		for i := range xs {
			xs[i] = fill.ints[0]
		}
		c.outValue(0, intConst(s, xs))
		return nil
	}
	rs := make([]spec.Rat, n)
	for i := range rs {
		rs[i] = fill.exact()[0]
	}
	var ninf []bool
	if fill.ninf != nil && fill.ninf[0] {
		ninf = make([]bool, n)
		for i := range ninf {
			ninf[i] = true
		}
	}
	c.outValue(0, &value{shape: s, dt: fill.dt, id: -1, isK: true, init: -1, rats: rs, ninf: ninf, where: c.n.Where()})
	return nil
}

func importShape(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	r := int64(len(v.shape))
	start, end := int64(0), r
	if c.b.opset >= 15 {
		if start, err = c.attrInt("start", 0); err != nil {
			return err
		}
		if end, err = c.attrInt("end", r); err != nil {
			return err
		}
	}
	if start < 0 {
		start += r
	}
	if end < 0 {
		end += r
	}
	start, end = min(max(start, 0), r), min(max(end, 0), r)
	var xs []int64
	for i := start; i < end; i++ {
		xs = append(xs, int64(v.shape[i]))
	}
	c.outValue(0, intConst(spec.Shape{len(xs)}, xs))
	return nil
}

// importCast: integer constants are converted at import (to BOOL: non-zero
// is 1), and so are float constants cast to an integer type (truncation
// toward zero); a float value cast to its own type, or float32 to float64,
// is the identity (the same reals). A cast to a narrower float type is the
// registry's rounding primitive of that type (import_cast.go).
func importCast(c *nctx) error {
	if err := c.oneOutput(1, 1); err != nil {
		return err
	}
	to, err := c.attrInt("to", 0)
	if err != nil {
		return err
	}
	if c.b.opset >= 19 {
		if _, err := c.attrInt("saturate", 1); err != nil {
			return err
		}
	}
	return c.castTo(DataType(to))
}

// importCastLike is Cast to the element type of input 1 (opset 15; the
// function bodies of expanded ops use it on constants).
func importCastLike(c *nctx) error {
	if err := c.oneOutput(2, 2); err != nil {
		return err
	}
	if c.b.opset >= 19 {
		if _, err := c.attrInt("saturate", 1); err != nil {
			return err
		}
	}
	t, err := c.in(1)
	if err != nil {
		return err
	}
	return c.castTo(t.dt)
}

// castTo casts input 0 to dt (see importCast).
func (c *nctx) castTo(dt DataType) error {
	if done, err := c.castMini(dt); done || err != nil {
		return err // a float 8, float 4 or sub-byte integer type (minifloat.go)
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	if done, err := c.castFromTrunc(v, dt); done || err != nil {
		return err // an integer computed from float data (import_cast.go)
	}
	switch {
	case v.isInt() && dt == Bool:
		xs := make([]int64, len(v.ints))
		for i, x := range v.ints {
			if x != 0 {
				xs[i] = 1
			}
		}
		c.outValue(0, &value{shape: v.shape.Clone(), dt: Bool, id: -1, isK: true, init: -1, ints: xs})
	case v.isInt() && !dt.IsFloat() && dt != 0:
		w := *v
		w.dt = Int64
		c.outValue(0, &w)
	case v.isK && !v.isInt() && !dt.IsFloat() && dt != 0:
		// A float constant cast to an integer type: truncation toward
		// zero (to BOOL: non-zero is 1); −∞ is refused.
		xs := make([]int64, len(v.exact()))
		for i, r := range v.exact() {
			if v.ninf != nil && v.ninf[i] {
				return c.errf(c.inField(0), "element %d is −∞, which %s does not hold", i, dt)
			}
			t := floorRat(r.Abs())
			if r.Big().Sign() < 0 {
				t = t.Neg()
			}
			b := t.Big().Num()
			if !b.IsInt64() {
				return c.errf(c.inField(0), "element %d is out of the range of %s", i, dt)
			}
			xs[i] = b.Int64()
			if dt == Bool && !r.IsZero() {
				xs[i] = 1
			}
		}
		ot := Int64
		if dt == Bool {
			ot = Bool
		}
		c.outValue(0, &value{shape: v.shape.Clone(), dt: ot, id: -1, isK: true, init: -1, ints: xs})
	case v.isInt() && (dt == Float || dt == Double):
		rs := make([]spec.Rat, len(v.ints))
		for i, x := range v.ints {
			if dt == Float && (x > 1<<24 || x < -(1<<24)) {
				return c.errf(attrField("to"), "element %d (%d) is not exact in float", i, x)
			}
			rs[i] = spec.NewRat(x, 1)
		}
		c.outValue(0, &value{shape: v.shape.Clone(), dt: dt, id: -1, isK: true, init: -1, rats: rs})
	case !v.isInt() && dt == v.dt:
		c.outValue(0, v)
	case !v.isInt() && widens(v.dt, dt):
		// float16/bfloat16 → float32 → float64 are exact: the same real
		// values.
		w := *v
		w.dt = dt
		c.outValue(0, &w)
	default:
		if done, err := c.castTrunc(v, dt); done || err != nil {
			return err // a float → integer cast (import_cast.go)
		}
		if done, err := c.castNarrow(v, dt); done || err != nil {
			return err // a narrowing float cast (import_cast.go)
		}
		return c.errf(attrField("to"), "cast from %s to %s is not supported (it would change values the IR computes exactly)", v.dt.String(), dt.String())
	}
	return nil
}

// widens reports that every value of float type from is a value of to.
func widens(from, to DataType) bool {
	switch from {
	case Float16, BFloat16:
		return to == Float || to == Double
	case Float:
		return to == Double
	}
	return false
}

// importPad: constant, reflect or edge padding; the pads are an attribute
// before opset 11 and a constant input from it (with an optional constant
// value and, from opset 18, axes). Negative pads crop (a slice).
func importPad(c *nctx) error {
	if err := c.outputs(1, "a second output"); err != nil {
		return err
	}
	mode, err := c.attrString("mode", "constant")
	if err != nil {
		return err
	}
	if mode != "constant" && mode != "reflect" && mode != "edge" {
		return c.errf(attrField("mode"), "%q is not supported (constant, reflect, edge)", mode)
	}
	if done, err := c.maskedPad(mode); done || err != nil {
		return err
	}
	v, x, err := c.float(0)
	if err != nil {
		return err
	}
	r := len(v.shape)
	var pads []int64
	var val spec.Rat
	if c.b.opset < 11 {
		pads, val, err = padAttrs(c)
	} else {
		pads, val, err = padInputs(c, r)
	}
	if err != nil {
		return err
	}
	if len(pads) != 2*r {
		return c.errf(attrField("pads"), "%d entries for rank %d (need %d)", len(pads), r, 2*r)
	}
	widths := make([]int, 2*r)
	crop := false
	for i, p := range pads {
		if p > int64(spec.DefaultMaxElements) || p < -int64(spec.DefaultMaxElements) {
			return c.errf(attrField("pads"), "entry %d is %d", i, p)
		}
		widths[i] = int(max(p, 0))
		crop = crop || p < 0
	}
	if err := checkPadWidths(c, mode, v.shape, widths); err != nil {
		return err
	}
	id, s, err := c.b.pad(x, v.shape, widths, mode, val)
	if err != nil {
		return c.wrap("", err)
	}
	if crop {
		if id, s, err = padCrop(c, id, s, pads); err != nil {
			return err
		}
	}
	if _, err := s.Check(0); err != nil {
		return c.errf(attrField("pads"), "%v", err)
	}
	c.out(0, id, s, v.dt)
	return nil
}

// padAttrs reads Pad's pads and value before opset 11, where they are
// attributes (pads named paddings before opset 2).
func padAttrs(c *nctx) ([]int64, spec.Rat, error) {
	if err := c.arity(1, 1); err != nil {
		return nil, spec.Rat{}, err
	}
	name := "pads"
	if c.b.opset < 2 {
		name = "paddings"
	}
	pads, ok, err := c.attrInts(name)
	if err != nil {
		return nil, spec.Rat{}, err
	}
	if !ok {
		return nil, spec.Rat{}, c.errf(attrField(name), "missing")
	}
	val, err := c.attrRat("value", 0)
	return pads, val, err
}

// padInputs reads Pad's pads and value from opset 11, where they are
// constant inputs: pads (1), an optional value (2) and, from opset 18,
// optional axes (3) the pads are for (the others unpadded); pads are
// returned for every axis of rank r.
func padInputs(c *nctx, r int) ([]int64, spec.Rat, error) {
	if err := c.arity(2, 4); err != nil {
		return nil, spec.Rat{}, err
	}
	pv, err := c.constInts(1)
	if err != nil {
		return nil, spec.Rat{}, err
	}
	pads := pv.ints
	val := spec.Rat{}
	if c.present(2) {
		cv, err := c.constFloat(2)
		if err != nil {
			return nil, spec.Rat{}, err
		}
		if len(cv.exact()) != 1 {
			return nil, spec.Rat{}, c.errf(c.inField(2), "shape %v, expected one element", cv.shape)
		}
		val = cv.exact()[0]
	}
	if !c.present(3) {
		return pads, val, nil
	}
	av, err := c.constInts(3)
	if err != nil {
		return nil, spec.Rat{}, err
	}
	if len(pads) != 2*len(av.ints) {
		return nil, spec.Rat{}, c.errf(c.inField(1), "%d pads for %d axes", len(pads), len(av.ints))
	}
	full := make([]int64, 2*r)
	for j, a := range av.ints {
		ax, err := normAxis(a, r)
		if err != nil {
			return nil, spec.Rat{}, c.errf(c.inField(3), "%v", err)
		}
		full[ax], full[r+ax] = pads[j], pads[len(av.ints)+j]
	}
	return full, val, nil
}

// checkPadWidths refuses reflect padding as wide as the axis and edge
// padding of an empty axis (widths: the begins, then the ends).
func checkPadWidths(c *nctx, mode string, s spec.Shape, widths []int) error {
	r := len(s)
	for d := 0; d < r; d++ {
		if mode == "reflect" && (widths[d] >= s[d] || widths[r+d] >= s[d]) {
			return c.errf(attrField("pads"), "reflect padding %d/%d on axis %d of extent %d (must be smaller)", widths[d], widths[r+d], d, s[d])
		}
		if mode == "edge" && s[d] == 0 && widths[d]+widths[r+d] > 0 {
			return c.errf(attrField("pads"), "edge padding of the empty axis %d", d)
		}
	}
	return nil
}

// padCrop slices the padded value id (shape s) by the negative pads.
func padCrop(c *nctx, id int, s spec.Shape, pads []int64) (int, spec.Shape, error) {
	r := len(s)
	for d := 0; d < r; d++ {
		lo, hi := max(-pads[d], 0), max(-pads[r+d], 0)
		if lo+hi > int64(s[d]) {
			return 0, nil, c.errf(attrField("pads"), "cropping %d+%d of axis %d of extent %d", lo, hi, d, s[d])
		}
		if lo == 0 && hi == 0 {
			continue
		}
		var err error
		if id, err = c.b.slice(id, s, d, int(lo), s[d]-int(hi)); err != nil {
			return 0, nil, c.wrap("", err)
		}
		s = s.Clone()
		s[d] -= int(lo + hi)
	}
	return id, s, nil
}

// splitInts folds Split of an integer constant (a shape vector split into
// its extents, as affine_grid's expanded body does): output i is the
// block of sizes[i] entries along axis ax, row-major, of v's type.
func splitInts(c *nctx, v *value, ax int, sizes []int) {
	outer, inner := 1, 1
	for d := 0; d < ax; d++ {
		outer *= v.shape[d]
	}
	for d := ax + 1; d < len(v.shape); d++ {
		inner *= v.shape[d]
	}
	n := v.shape[ax]
	off := 0
	for i, sz := range sizes {
		s := v.shape.Clone()
		s[ax] = sz
		xs := make([]int64, 0, outer*sz*inner)
		for o := 0; o < outer; o++ {
			base := (o*n + off) * inner
			xs = append(xs, v.ints[base:base+sz*inner]...)
		}
		w := intConst(s, xs)
		w.dt = v.dt
		c.outValue(i, w)
		off += sz
	}
}

// keepInt marks output 0 a computed integer (value.truncInt) when v, the
// input whose elements it moves, is one: Reshape, Flatten, Squeeze,
// Unsqueeze, Transpose, Concat, Slice and Gather select or move elements
// and round nothing, so the output is judged exactly as v is (branch
// qdyn37).
func (c *nctx) keepInt(v *value) {
	if !v.truncInt || c.n.Outputs[0] == "" {
		return
	}
	if w := c.b.vals[c.n.Outputs[0]]; w != nil {
		w.truncInt = true
	}
}
