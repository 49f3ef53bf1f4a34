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
	mode, err := c.attrString("mode", "nearest")
	if err != nil {
		return err
	}
	ctm, err := c.attrString("coordinate_transformation_mode", "half_pixel")
	if err != nil {
		return err
	}
	nm, err := c.attrString("nearest_mode", "round_prefer_floor")
	if err != nil {
		return err
	}
	c.allow("cubic_coeff_a", "extrapolation_value")
	if ex, err := c.attrBool("exclude_outside", false); err != nil || ex {
		if err != nil {
			return err
		}
		return c.errf(attrField("exclude_outside"), "1 is not supported")
	}
	if c.b.opset >= 18 {
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
	}
	switch mode {
	case "nearest", "linear":
	default:
		return c.errf(attrField("mode"), "%q is not supported (nearest, linear)", mode)
	}
	switch ctm {
	case "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric":
	case "half_pixel_symmetric":
		if c.b.opset < 19 {
			return c.errf(attrField("coordinate_transformation_mode"), "half_pixel_symmetric needs opset 19")
		}
	default:
		return c.errf(attrField("coordinate_transformation_mode"), "%q is not supported", ctm)
	}
	v, x, err := c.float(0)
	if err != nil {
		return err
	}
	s := v.shape
	r := len(s)
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if c.b.opset >= 18 {
		if a, ok, err := c.attrInts("axes"); err != nil {
			return err
		} else if ok {
			axes = axes[:0]
			for _, ax := range a {
				n, err := normAxis(ax, r)
				if err != nil {
					return c.errf(attrField("axes"), "%v", err)
				}
				axes = append(axes, n)
			}
		}
	}
	scales := make([]spec.Rat, r)
	outs := s.Clone()
	for i := range scales {
		scales[i] = spec.NewRat(1, 1)
	}
	switch {
	case c.present(3):
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
	case c.present(2):
		sv, err := c.in(2)
		if err != nil {
			return err
		}
		if !sv.isK || !sv.dt.IsFloat() {
			return c.errf(c.inField(2), "scales must be a constant float tensor")
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
			outs[ax] = int(m.Int64())
			scales[ax] = sc
		}
	default:
		return c.errf("input", "Resize needs scales or sizes")
	}
	if _, err := outs.Check(0); err != nil {
		return c.errf("", "%v", err)
	}
	cur := s.Clone()
	half := spec.NewRat(1, 2)
	one := spec.NewRat(1, 1)
	for ax := 0; ax < r; ax++ {
		n, m, sc := s[ax], outs[ax], scales[ax]
		if n == m && sc.Same(one) {
			continue
		}
		coord := func(o int) spec.Rat {
			ro := spec.NewRat(int64(o), 1)
			switch ctm {
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
			if ctm == "pytorch_half_pixel" && m == 1 {
				return spec.Rat{}
			}
			q, _ := ro.Add(half).Div(sc)
			q = q.Sub(half)
			if ctm == "half_pixel_symmetric" {
				adj, _ := spec.NewRat(int64(m), 1).Div(sc.Mul(spec.NewRat(int64(n), 1)))
				off := spec.NewRat(int64(n), 2).Mul(one.Sub(adj))
				q = q.Add(off)
			}
			return q
		}
		clampI := func(i int64) int { return int(min(max(i, 0), int64(n-1))) }
		next := cur.Clone()
		next[ax] = m
		if mode == "nearest" {
			idx := make([]int, m)
			for o := range idx {
				xo := coord(o)
				f := floorRat(xo)
				fi := f.Big().Num().Int64()
				d := cmpRat(xo.Sub(f), half)
				var k int64
				switch nm {
				case "round_prefer_floor":
					k = fi
					if d > 0 {
						k = fi + 1
					}
				case "round_prefer_ceil":
					k = fi
					if d >= 0 {
						k = fi + 1
					}
				case "floor":
					k = fi
				case "ceil":
					k = fi
					if !xo.Sub(f).IsZero() {
						k = fi + 1
					}
				default:
					return c.errf(attrField("nearest_mode"), "%q is not supported", nm)
				}
				idx[o] = clampI(k)
			}
			if x, _, err = c.b.gather(x, cur, ax, idx, spec.Shape{m}); err != nil {
				return c.wrap("", err)
			}
			cur = next
			continue
		}
		w := make([]spec.Rat, n*m)
		for o := 0; o < m; o++ {
			xo := coord(o)
			f := floorRat(xo)
			fi := f.Big().Num().Int64()
			rr := xo.Sub(f)
			i0, i1 := clampI(fi), clampI(fi+1)
			w[i0*m+o] = w[i0*m+o].Add(one.Sub(rr))
			w[i1*m+o] = w[i1*m+o].Add(rr)
		}
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
		p, ps := c.b.permute(x, cur, perm)
		ms := ps.Clone()
		ms[r-1] = m
		mm := c.b.binary(irsem.OpMatmul, p, c.b.constTensor(spec.Shape{n, m}, w), ms)
		x, _ = c.b.permute(mm, ms, inv)
		cur = next
	}
	c.out(0, x, cur, v.dt)
	return nil
}
