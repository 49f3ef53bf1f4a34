package onnx

import (
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// importResize: Resize [11] with constant scales or sizes, modes nearest
// and linear, axis by axis (separable, as the operator's reference
// evaluates it). Along an axis of extent n resized to m with scale s
// (given; or m/n when sizes are given, m = ⌊n·s⌋ otherwise), output index
// o reads the input coordinate x(o), computed exactly over the rationals:
//
//	half_pixel (default)   (o + ½)/s − ½
//	pytorch_half_pixel     (o + ½)/s − ½ when m > 1, else 0
//	half_pixel_symmetric   n/2·(1 − m/(s·n)) + (o + ½)/s − ½        [19]
//	align_corners          o·(n − 1)/(m − 1) (0 when m = 1)
//	asymmetric             o/s
//
// nearest takes index round(x) by nearest_mode (round_prefer_floor, the
// default, and round_prefer_ceil break ties at ½; floor; ceil), clamped to
// [0, n−1]: a gather. linear takes (1 − r)·v[⌊x⌋] + r·v[⌊x⌋ + 1], r = x −
// ⌊x⌋, indices clamped to [0, n−1] (the operator's edge padding): a matmul
// with the constant [n, m] matrix of those weights, the axis moved last.
// Refused: cubic, tf_crop_and_resize, antialias, exclude_outside, a
// keep_aspect_ratio_policy other than stretch, computed scales or sizes.
func importResize(c *nctx) error {
	if c.b.opset < 11 {
		return c.errf("op_type", "Resize before opset 11 is not supported")
	}
	if err := c.oneOutput(1, 4); err != nil {
		return err
	}
	rz, err := resizeAttrs(c)
	if err != nil {
		return err
	}
	v, x, err := c.float(0)
	if err != nil {
		return err
	}
	s := v.shape
	axes, err := resizeAxes(c, len(s))
	if err != nil {
		return err
	}
	outs, scales, err := resizeTargets(c, s, axes)
	if err != nil {
		return err
	}
	cur := s.Clone()
	for ax := range s {
		n, m, sc := s[ax], outs[ax], scales[ax]
		if n == m && sc.Same(spec.NewRat(1, 1)) {
			continue
		}
		next := cur.Clone()
		next[ax] = m
		if rz.mode == "nearest" {
			idx, err := rz.nearest(c, n, m, sc)
			if err != nil {
				return err
			}
			if x, _, err = c.b.gather(x, cur, ax, idx, spec.Shape{m}); err != nil {
				return c.wrap("", err)
			}
		} else {
			x = c.b.matmulAxis(x, cur, ax, spec.Shape{n, m}, rz.linear(n, m, sc))
		}
		cur = next
	}
	c.out(0, x, cur, v.dt)
	return nil
}

// A resize holds Resize's supported attributes: mode, the coordinate
// transformation mode and the nearest mode.
type resize struct{ mode, ctm, nm string }

// resizeAttrs reads Resize's attributes, refusing what importResize does
// not support.
func resizeAttrs(c *nctx) (resize, error) {
	var rz resize
	var err error
	if rz.mode, err = c.attrString("mode", "nearest"); err != nil {
		return rz, err
	}
	if rz.ctm, err = c.attrString("coordinate_transformation_mode", "half_pixel"); err != nil {
		return rz, err
	}
	if rz.nm, err = c.attrString("nearest_mode", "round_prefer_floor"); err != nil {
		return rz, err
	}
	c.allow("cubic_coeff_a", "extrapolation_value")
	if ex, err := c.attrBool("exclude_outside", false); err != nil || ex {
		if err != nil {
			return rz, err
		}
		return rz, c.errf(attrField("exclude_outside"), "1 is not supported")
	}
	if c.b.opset >= 18 {
		if err := resizeAttrs18(c); err != nil {
			return rz, err
		}
	}
	switch rz.mode {
	case "nearest", "linear":
	default:
		return rz, c.errf(attrField("mode"), "%q is not supported (nearest, linear)", rz.mode)
	}
	switch rz.ctm {
	case "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric":
	case "half_pixel_symmetric":
		if c.b.opset < 19 {
			return rz, c.errf(attrField("coordinate_transformation_mode"), "half_pixel_symmetric needs opset 19")
		}
	default:
		return rz, c.errf(attrField("coordinate_transformation_mode"), "%q is not supported", rz.ctm)
	}
	return rz, nil
}

// resizeAttrs18 refuses the attributes opset 18 added to Resize:
// antialias and a keep_aspect_ratio_policy other than stretch.
func resizeAttrs18(c *nctx) error {
	if aa, err := c.attrBool("antialias", false); err != nil || aa {
		if err != nil {
			return err
		}
		return c.errf(attrField("antialias"), "1 is not supported")
	}
	if p, err := c.attrString("keep_aspect_ratio_policy", "stretch"); err != nil || p != "stretch" {
		if err != nil {
			return err
		}
		return c.errf(attrField("keep_aspect_ratio_policy"), "%q is not supported (only stretch)", p)
	}
	return nil
}

// resizeAxes returns the axes Resize resizes among r: the axes attribute
// (opset 18) normalised, or all of them.
func resizeAxes(c *nctx, r int) ([]int, error) {
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if c.b.opset < 18 {
		return axes, nil
	}
	a, ok, err := c.attrInts("axes")
	if err != nil || !ok {
		return axes, err
	}
	axes = axes[:0]
	for _, ax := range a {
		n, err := normAxis(ax, r)
		if err != nil {
			return nil, c.errf(attrField("axes"), "%v", err)
		}
		axes = append(axes, n)
	}
	return axes, nil
}

// resizeTargets returns the output shape and the scale of each axis of s
// from the constant sizes (input 3) or scales (input 2) given for axes;
// the other axes keep their extent at scale 1.
func resizeTargets(c *nctx, s spec.Shape, axes []int) (spec.Shape, []spec.Rat, error) {
	scales := make([]spec.Rat, len(s))
	outs := s.Clone()
	for i := range scales {
		scales[i] = spec.NewRat(1, 1)
	}
	var err error
	switch {
	case c.present(3):
		err = resizeSizes(c, s, axes, outs, scales)
	case c.present(2):
		err = resizeScales(c, s, axes, outs, scales)
	default:
		err = c.errf("input", "Resize needs scales or sizes")
	}
	if err != nil {
		return nil, nil, err
	}
	if _, err := outs.Check(0); err != nil {
		return nil, nil, c.errf("", "%v", err)
	}
	return outs, scales, nil
}

// resizeSizes sets outs and scales of axes from the constant sizes.
func resizeSizes(c *nctx, s spec.Shape, axes []int, outs spec.Shape, scales []spec.Rat) error {
	sv, err := c.constInts(3)
	if err != nil {
		return err
	}
	if len(sv.ints) != len(axes) {
		return c.errf(c.inField(3), "%d sizes for %d axes", len(sv.ints), len(axes))
	}
	for k, ax := range axes {
		if sv.ints[k] < 1 || sv.ints[k] > int64(spec.DefaultMaxElements) || s[ax] == 0 {
			return c.errf(c.inField(3), "entry %d is %d for an axis of extent %d", k, sv.ints[k], s[ax])
		}
		outs[ax] = int(sv.ints[k])
		scales[ax] = spec.NewRat(sv.ints[k], int64(s[ax]))
	}
	return nil
}

// resizeScales sets outs and scales of axes from the constant scales (or
// the recorded values of a scales graph input), each output extent ⌊n·s⌋.
func resizeScales(c *nctx, s spec.Shape, axes []int, outs spec.Shape, scales []spec.Rat) error {
	sv, err := c.in(2)
	if err != nil {
		return err
	}
	if !sv.isK && sv.dt.IsFloat() {
		// A recorded graph input (Options.Values) is exact in every
		// evaluation: the graph is then imported for these scales.
		if d, err := c.decidedIn(2); err == nil {
			sv = d
		}
	}
	if !sv.isK || !sv.dt.IsFloat() {
		return c.errf(c.inField(2), "scales must be a constant float tensor (or a recorded graph input)")
	}
	if len(sv.rats) != len(axes) {
		return c.errf(c.inField(2), "%d scales for %d axes", len(sv.rats), len(axes))
	}
	for k, ax := range axes {
		sc := sv.rats[k]
		if cmpRat(sc, spec.Rat{}) <= 0 {
			return c.errf(c.inField(2), "entry %d is not positive", k)
		}
		m := floorRat(sc.Mul(spec.NewRat(int64(s[ax]), 1))).Big().Num()
		if !m.IsInt64() || m.Int64() < 1 || m.Int64() > int64(spec.DefaultMaxElements) {
			return c.errf(c.inField(2), "entry %d gives an output extent %v", k, m)
		}
		if ctm, _ := c.attrString("coordinate_transformation_mode", "half_pixel"); ctm == "align_corners" {
			// The operator reads o·(n − 1)/(n·s − 1) with the
			// unfloored length n·s (the ONNX reference does): the
			// mapping here uses the output extent, the same only when
			// n·s is an integer.
			if p := sc.Mul(spec.NewRat(int64(s[ax]), 1)); cmpRat(floorRat(p), p) != 0 {
				return c.errf(c.inField(2), "entry %d: align_corners with the non-integral output length %d·%s is not supported", k, s[ax], sc)
			}
		}
		outs[ax] = int(m.Int64())
		scales[ax] = sc
	}
	return nil
}

// coord returns the input coordinate x(o) that output index o of an axis
// of extent n resized to m at scale sc reads, by rz's coordinate
// transformation mode (see importResize).
func (rz resize) coord(o, n, m int, sc spec.Rat) spec.Rat {
	half := spec.NewRat(1, 2)
	ro := spec.NewRat(int64(o), 1)
	switch rz.ctm {
	case "align_corners":
		if m == 1 {
			return spec.Rat{}
		}
		q, _ := ro.Mul(spec.NewRat(int64(n-1), 1)).Div(spec.NewRat(int64(m-1), 1))
		return q
	case "asymmetric":
		q, _ := ro.Div(sc)
		return q
	}
	if rz.ctm == "pytorch_half_pixel" && m == 1 {
		return spec.Rat{}
	}
	q, _ := ro.Add(half).Div(sc)
	q = q.Sub(half)
	if rz.ctm == "half_pixel_symmetric" {
		adj, _ := spec.NewRat(int64(m), 1).Div(sc.Mul(spec.NewRat(int64(n), 1)))
		off := spec.NewRat(int64(n), 2).Mul(spec.NewRat(1, 1).Sub(adj))
		q = q.Add(off)
	}
	return q
}

// nearest returns, for each output index of an axis of extent n resized
// to m at scale sc, the input index mode nearest reads: x(o) rounded by
// rz's nearest mode, clamped to [0, n−1].
func (rz resize) nearest(c *nctx, n, m int, sc spec.Rat) ([]int, error) {
	half := spec.NewRat(1, 2)
	idx := make([]int, m)
	for o := range idx {
		xo := rz.coord(o, n, m, sc)
		f := floorRat(xo)
		fi := f.Big().Num().Int64()
		d := cmpRat(xo.Sub(f), half)
		k := fi
		switch rz.nm {
		case "round_prefer_floor":
			if d > 0 {
				k = fi + 1
			}
		case "round_prefer_ceil":
			if d >= 0 {
				k = fi + 1
			}
		case "floor":
		case "ceil":
			if !xo.Sub(f).IsZero() {
				k = fi + 1
			}
		default:
			return nil, c.errf(attrField("nearest_mode"), "%q is not supported", rz.nm)
		}
		idx[o] = clampIndex(k, n)
	}
	return idx, nil
}

// linear returns the [n, m] matrix of mode linear's weights for an axis
// of extent n resized to m at scale sc: column o holds 1 − r at row ⌊x⌋
// and r at row ⌊x⌋ + 1 (rows clamped to [0, n−1]), r = x − ⌊x⌋, x = x(o).
func (rz resize) linear(n, m int, sc spec.Rat) []spec.Rat {
	one := spec.NewRat(1, 1)
	w := make([]spec.Rat, n*m)
	for o := 0; o < m; o++ {
		xo := rz.coord(o, n, m, sc)
		f := floorRat(xo)
		fi := f.Big().Num().Int64()
		rr := xo.Sub(f)
		i0, i1 := clampIndex(fi, n), clampIndex(fi+1, n)
		w[i0*m+o] = w[i0*m+o].Add(one.Sub(rr))
		w[i1*m+o] = w[i1*m+o].Add(rr)
	}
	return w
}

// clampIndex clamps i to [0, n−1].
func clampIndex(i int64, n int) int { return int(min(max(i, 0), int64(n-1))) }

// matmulAxis multiplies axis ax of x (shape s) by the constant matrix w
// of shape ws = [s[ax], m]: the axis moved last, a matmul, moved back.
// It returns the result, whose axis ax has extent m.
func (b *imp) matmulAxis(x int, s spec.Shape, ax int, ws spec.Shape, w []spec.Rat) int {
	r := len(s)
	perm := make([]int, 0, r)
	inv := make([]int, r)
	for i := 0; i < r; i++ {
		if i != ax {
			perm = append(perm, i)
		}
	}
	perm = append(perm, ax)
	for i, p := range perm {
		inv[p] = i
	}
	p, ps := b.permute(x, s, perm)
	ms := ps.Clone()
	ms[r-1] = ws[1]
	mm := b.binary(irsem.OpMatmul, p, b.constTensor(ws, w), ms)
	out, _ := b.permute(mm, ms, inv)
	return out
}
