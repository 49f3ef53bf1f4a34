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
//	align_corners          o·(n − 1)/(n·s − 1) (0 when n·s = 1; n·s = m when sizes are given)
//	asymmetric             o/s
//
// nearest takes index round(x) by nearest_mode (round_prefer_floor, the
// default, and round_prefer_ceil break ties at ½; floor; ceil), clamped to
// [0, n−1]: a gather. linear takes (1 − r)·v[⌊x⌋] + r·v[⌊x⌋ + 1], r = x −
// ⌊x⌋, indices clamped to [0, n−1] (the operator's edge padding): a matmul
// with the constant [n, m] matrix of those weights, the axis moved last.
// cubic (and linear with antialias or exclude_outside) is the same matmul
// with the weights of the operator's kernel (see kernelWeights): Keys' cubic
// W(d) = (A+2)|d|³ − (A+3)|d|² + 1 for |d| ≤ 1, A|d|³ − 5A|d|² + 8A|d| − 4A
// for 1 < |d| < 2, else 0 (A = cubic_coeff_a, default −0.75, its float32
// value), linear max(0, 1 − |d|). keep_aspect_ratio_policy not_larger
// (not_smaller) resizes every axis of axes by the least (greatest) of the
// ratios sizes/extent, to the extent ⌊s·n + ½⌋ (the operator's rounding).
// tf_crop_and_resize reads x(o) = s₀(n − 1) + o·(s₁ − s₀)(n − 1)/(n·s − 1)
// with the axis's roi [s₀, s₁] (a constant or recorded input); an output
// with x outside [0, n − 1] is extrapolation_value, selected in (see
// cropKeep). Refused: antialias with nearest, computed scales, sizes or
// roi.
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
	outs, scales, err := resizeTargets(c, s, axes, rz.policy)
	if err != nil {
		return err
	}
	roi, err := resizeROI(c, rz, len(s), axes)
	if err != nil {
		return err
	}
	cur := s.Clone()
	for ax := range s {
		n, m, sc := s[ax], outs[ax], scales[ax]
		rz.roi = roi[ax]
		if n == m && sc.Same(spec.NewRat(1, 1)) && rz.roi[0].IsZero() && rz.roi[1].Same(spec.NewRat(1, 1)) {
			continue
		}
		next := cur.Clone()
		next[ax] = m
		keep, err := rz.cropKeep(c, n, m, sc)
		if err != nil {
			return err
		}
		if rz.mode == "nearest" {
			idx, err := rz.nearest(c, n, m, sc)
			if err != nil {
				return err
			}
			if x, _, err = c.b.gather(x, cur, ax, idx, spec.Shape{m}); err != nil {
				return c.wrap("", err)
			}
		} else if rz.mode == "linear" && !rz.antialias && !rz.exclude && keep == nil {
			x = c.b.matmulAxis(x, cur, ax, spec.Shape{n, m}, rz.linear(n, m, sc))
		} else {
			w, err := rz.kernelWeights(c, n, m, sc)
			if err != nil {
				return err
			}
			x = c.b.matmulAxis(x, cur, ax, spec.Shape{n, m}, w)
		}
		if keep != nil && firstFalse(keep) >= 0 {
			if x, err = c.b.selectIR(axisMask(next, ax, keep), next, x, c.b.constScalar(rz.extrap, next)); err != nil {
				return c.wrap("", err)
			}
		}
		cur = next
	}
	c.out(0, x, cur, v.dt)
	return nil
}

// A resize holds Resize's supported attributes: mode, the coordinate
// transformation mode, the nearest mode, cubic_coeff_a, exclude_outside,
// antialias (opset 18) and keep_aspect_ratio_policy (opset 18).
type resize struct {
	mode, ctm, nm, policy string
	a                     spec.Rat
	exclude, antialias    bool
	extrap                spec.Rat    // extrapolation_value (tf_crop_and_resize)
	roi                   [2]spec.Rat // the current axis's roi start and end (tf_crop_and_resize)
}

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
	if rz.extrap, err = c.attrRat("extrapolation_value", 0); err != nil {
		return rz, err
	}
	if rz.a, err = c.attrRat("cubic_coeff_a", -0.75); err != nil {
		return rz, err
	}
	if rz.exclude, err = c.attrBool("exclude_outside", false); err != nil {
		return rz, err
	}
	rz.policy = "stretch"
	if c.b.opset >= 18 {
		if rz.antialias, err = c.attrBool("antialias", false); err != nil {
			return rz, err
		}
		if rz.policy, err = c.attrString("keep_aspect_ratio_policy", "stretch"); err != nil {
			return rz, err
		}
	}
	switch rz.policy {
	case "stretch", "not_larger", "not_smaller":
	default:
		return rz, c.errf(attrField("keep_aspect_ratio_policy"), "%q is not a policy (stretch, not_larger, not_smaller)", rz.policy)
	}
	switch rz.mode {
	case "linear", "cubic":
	case "nearest":
		if rz.antialias {
			return rz, c.errf(attrField("antialias"), "1 is not defined for mode nearest")
		}
	default:
		return rz, c.errf(attrField("mode"), "%q is not supported (nearest, linear, cubic)", rz.mode)
	}
	switch rz.ctm {
	case "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize":
	case "half_pixel_symmetric":
		if c.b.opset < 19 {
			return rz, c.errf(attrField("coordinate_transformation_mode"), "half_pixel_symmetric needs opset 19")
		}
	default:
		return rz, c.errf(attrField("coordinate_transformation_mode"), "%q is not supported", rz.ctm)
	}
	return rz, nil
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
func resizeTargets(c *nctx, s spec.Shape, axes []int, policy string) (spec.Shape, []spec.Rat, error) {
	scales := make([]spec.Rat, len(s))
	outs := s.Clone()
	for i := range scales {
		scales[i] = spec.NewRat(1, 1)
	}
	var err error
	switch {
	case c.present(3):
		err = resizeSizes(c, s, axes, outs, scales, policy)
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

// resizeSizes sets outs and scales of axes from the constant sizes: by
// policy stretch each axis to its size; not_larger (not_smaller) takes the
// least (greatest) ratio s = size/extent over axes for every one of them,
// with extent ⌊s·n + ½⌋ (round half up, the operator's reference).
func resizeSizes(c *nctx, s spec.Shape, axes []int, outs spec.Shape, scales []spec.Rat, policy string) error {
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
	if policy == "stretch" || len(axes) == 0 {
		return nil
	}
	sc := scales[axes[0]]
	for _, ax := range axes[1:] {
		if d := cmpRat(scales[ax], sc); (policy == "not_larger" && d < 0) || (policy == "not_smaller" && d > 0) {
			sc = scales[ax]
		}
	}
	for k, ax := range axes {
		m := floorRat(sc.Mul(spec.NewRat(int64(s[ax]), 1)).Add(spec.NewRat(1, 2))).Big().Num()
		if !m.IsInt64() || m.Int64() < 1 || m.Int64() > int64(spec.DefaultMaxElements) {
			return c.errf(c.inField(3), "entry %d: keep_aspect_ratio_policy %s gives the extent %v", k, policy, m)
		}
		outs[ax], scales[ax] = int(m.Int64()), sc
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
	if len(sv.exact()) != len(axes) {
		return c.errf(c.inField(2), "%d scales for %d axes", len(sv.exact()), len(axes))
	}
	for k, ax := range axes {
		sc := sv.exact()[k]
		if cmpRat(sc, spec.Rat{}) <= 0 {
			return c.errf(c.inField(2), "entry %d is not positive", k)
		}
		m := floorRat(sc.Mul(spec.NewRat(int64(s[ax]), 1))).Big().Num()
		if !m.IsInt64() || m.Int64() < 1 || m.Int64() > int64(spec.DefaultMaxElements) {
			return c.errf(c.inField(2), "entry %d gives an output extent %v", k, m)
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
		// The operator's length_resized is the unfloored n·s (the
		// reference divides by it; with sizes given, s = m/n and it is m).
		l := sc.Mul(spec.NewRat(int64(n), 1))
		if l.Same(spec.NewRat(1, 1)) {
			return spec.Rat{}
		}
		q, _ := ro.Mul(spec.NewRat(int64(n-1), 1)).Div(l.Sub(spec.NewRat(1, 1)))
		return q
	case "asymmetric":
		q, _ := ro.Div(sc)
		return q
	case "tf_crop_and_resize":
		// s₀(n − 1) + o·(s₁ − s₀)(n − 1)/(n·sc − 1), or s₀(n − 1) +
		// (s₁ − s₀)(n − 1)/2 when n·sc = 1 (roi [s₀, s₁] of this axis)
		n1 := spec.NewRat(int64(n-1), 1)
		w := rz.roi[1].Sub(rz.roi[0]).Mul(n1)
		l := sc.Mul(spec.NewRat(int64(n), 1))
		if l.Same(spec.NewRat(1, 1)) {
			return rz.roi[0].Mul(n1).Add(w.Mul(half))
		}
		q, _ := ro.Mul(w).Div(l.Sub(spec.NewRat(1, 1)))
		return rz.roi[0].Mul(n1).Add(q)
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

// resizeROI returns each axis's roi [start, end] for tf_crop_and_resize
// from input 1 (a constant or a recorded graph input: 2·len(axes) values,
// the starts then the ends); [0, 1] on the other axes and other modes.
func resizeROI(c *nctx, rz resize, r int, axes []int) ([][2]spec.Rat, error) {
	roi := make([][2]spec.Rat, r)
	for i := range roi {
		roi[i] = [2]spec.Rat{{}, spec.NewRat(1, 1)}
	}
	if rz.ctm != "tf_crop_and_resize" {
		return roi, nil
	}
	if !c.present(1) {
		return nil, c.errf(c.inField(1), "tf_crop_and_resize needs roi")
	}
	rv, err := c.in(1)
	if err != nil {
		return nil, err
	}
	if !rv.isK && rv.dt.IsFloat() {
		if d, err := c.decidedIn(1); err == nil {
			rv = d
		}
	}
	if !rv.isK || !rv.dt.IsFloat() || len(rv.exact()) != 2*len(axes) {
		return nil, c.errf(c.inField(1), "roi must be a constant float tensor (or a recorded graph input) of %d values", 2*len(axes))
	}
	for k, ax := range axes {
		roi[ax] = [2]spec.Rat{rv.exact()[k], rv.exact()[len(axes)+k]}
	}
	return roi, nil
}

// cropKeep returns, under tf_crop_and_resize, which outputs of an axis of
// extent n resized to m read inside [0, n − 1] (the others take
// extrapolation_value); nil in the other modes. The test is on the exact
// coordinate; a runtime computes it in floating point, so a coordinate
// within 2⁻¹⁶·(|s₀|(n−1) + |x| + 1) of an end, where its rounding could
// decide the other way, is refused — except on an axis of extent 1,
// where every term is a multiple of n − 1 = 0 and exact.
func (rz resize) cropKeep(c *nctx, n, m int, sc spec.Rat) ([]bool, error) {
	if rz.ctm != "tf_crop_and_resize" {
		return nil, nil
	}
	keep := make([]bool, m)
	n1 := spec.NewRat(int64(n-1), 1)
	for o := range keep {
		x := rz.coord(o, n, m, sc)
		keep[o] = cmpRat(x, spec.Rat{}) >= 0 && cmpRat(x, n1) <= 0
		if n == 1 {
			continue
		}
		margin := rz.roi[0].Mul(n1).Abs().Add(x.Abs()).Add(spec.NewRat(1, 1)).Mul(spec.NewRat(1, 1<<16))
		for _, end := range []spec.Rat{{}, n1} {
			if cmpRat(x.Sub(end).Abs(), margin) <= 0 {
				return nil, c.errf(c.inField(1), "output %d reads the coordinate %s, at the crop boundary %s, where a runtime's rounding decides whether it extrapolates", o, x, end)
			}
		}
	}
	return keep, nil
}

// firstFalse is the index of the first false in m, or −1.
func firstFalse(m []bool) int {
	for i, x := range m {
		if !x {
			return i
		}
	}
	return -1
}

// axisMask is the mask over shape s whose element is keep[its index along ax].
func axisMask(s spec.Shape, ax int, keep []bool) []bool {
	inner := 1
	for _, d := range s[ax+1:] {
		inner *= d
	}
	out := make([]bool, s.Size())
	for i := range out {
		out[i] = keep[(i/inner)%s[ax]]
	}
	return out
}

// kernel is the interpolation kernel at distance d: Keys' cubic with
// a = rz.a (mode cubic), else the linear hat max(0, 1 − |d|).
func (rz resize) kernel(d spec.Rat) spec.Rat {
	one := spec.NewRat(1, 1)
	x := d.Abs()
	if rz.mode != "cubic" {
		if cmpRat(x, one) >= 0 {
			return spec.Rat{}
		}
		return one.Sub(x)
	}
	a := rz.a
	x2 := x.Mul(x)
	x3 := x2.Mul(x)
	switch {
	case cmpRat(x, one) <= 0: // (a+2)x³ − (a+3)x² + 1
		return a.Add(spec.NewRat(2, 1)).Mul(x3).Sub(a.Add(spec.NewRat(3, 1)).Mul(x2)).Add(one)
	case cmpRat(x, spec.NewRat(2, 1)) < 0: // a·x³ − 5a·x² + 8a·x − 4a
		return a.Mul(x3).Sub(a.Mul(spec.NewRat(5, 1)).Mul(x2)).Add(a.Mul(spec.NewRat(8, 1)).Mul(x)).Sub(a.Mul(spec.NewRat(4, 1)))
	}
	return spec.Rat{}
}

// kernelWeights returns the [n, m] weight matrix of modes cubic and
// linear (with antialias or exclude_outside) for an axis of extent n
// resized to m at scale sc, following the operator's reference exactly
// over the rationals. For output o at x = x(o), let r = x − ⌊x⌋, or r = 1
// when x is an integer (the reference prefers the left pixel), and f = x −
// r. With the kernel's radius R (2 cubic, 1 linear) and σ = min(sc, 1)
// under antialias (else σ = 1), the taps are i = i₀ … 1 − i₀ with i₀ =
// ⌊−R/σ⌋ + 1, tap i reading input f + i with weight W(σ·(i − r)); under
// antialias the weights are divided by their sum. exclude_outside sets the
// weights of taps outside [0, n−1] to 0 and divides by the new sum (when
// non-zero); the remaining taps are clamped to [0, n−1] (edge padding), a
// clamped tap adding its weight to the edge row.
func (rz resize) kernelWeights(c *nctx, n, m int, sc spec.Rat) ([]spec.Rat, error) {
	one := spec.NewRat(1, 1)
	sigma, radius := one, spec.NewRat(1, 1)
	if rz.mode == "cubic" {
		radius = spec.NewRat(2, 1)
	}
	if rz.antialias && cmpRat(sc, one) < 0 {
		sigma = sc
	}
	q, err := radius.Neg().Div(sigma)
	if err != nil {
		return nil, c.errf("", "%v", err)
	}
	i0 := floorRat(q).Big().Num()
	if !i0.IsInt64() || i0.Int64() < -1024 {
		return nil, c.errf(attrField("antialias"), "at scale %s it needs more than 2048 taps", sc)
	}
	lo := i0.Int64() + 1
	taps := int(2 - 2*lo)
	w := make([]spec.Rat, n*m)
	ws := make([]spec.Rat, taps)
	for o := 0; o < m; o++ {
		xo := rz.coord(o, n, m, sc)
		if rz.ctm == "tf_crop_and_resize" && (cmpRat(xo, spec.Rat{}) < 0 || cmpRat(xo, spec.NewRat(int64(n-1), 1)) > 0) {
			continue // extrapolated: the column is replaced by extrapolation_value
		}
		f := floorRat(xo)
		r := xo.Sub(f)
		if r.IsZero() {
			r, f = one, f.Sub(one)
		}
		fi := f.Big().Num()
		if !fi.IsInt64() || fi.Int64() < -int64(n)-int64(taps) || fi.Int64() > 2*int64(n)+int64(taps) {
			return nil, c.errf("", "output %d reads the input coordinate %s, far outside the %d elements", o, xo, n)
		}
		sum := spec.Rat{}
		for t := range ws {
			ws[t] = rz.kernel(sigma.Mul(spec.NewRat(lo+int64(t), 1).Sub(r)))
			sum = sum.Add(ws[t])
		}
		if rz.antialias {
			if err := normalize(ws, sum); err != nil {
				return nil, c.errf("", "output %d: %v", o, err)
			}
		}
		if rz.exclude {
			sum = spec.Rat{}
			for t := range ws {
				if k := fi.Int64() + lo + int64(t); k < 0 || k >= int64(n) {
					ws[t] = spec.Rat{}
				}
				sum = sum.Add(ws[t])
			}
			if !sum.IsZero() {
				if err := normalize(ws, sum); err != nil {
					return nil, c.errf("", "output %d: %v", o, err)
				}
			}
		}
		for t, wt := range ws {
			k := clampIndex(fi.Int64()+lo+int64(t), n)
			w[k*m+o] = w[k*m+o].Add(wt)
		}
	}
	return w, nil
}

// normalize divides ws by sum in place.
func normalize(ws []spec.Rat, sum spec.Rat) error {
	for t := range ws {
		q, err := ws[t].Div(sum)
		if err != nil {
			return err
		}
		ws[t] = q
	}
	return nil
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
