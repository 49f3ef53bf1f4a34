package spec

import (
	"fmt"
)

// Pooling rules (max_pool, max_pool_nd, avg_pool, avg_pool_nd); the
// semantics are stated in ops_window.go.

// poolTies is the tie convention of the max pools, stated once.
const poolTies = "ties within a window: the maximum's cotangent is split equally among the t positions attaining it (1/t each, exact over Rat) and the JVP is the average of their tangents; overlapping windows accumulate; the order is decided with Compare (undecidable: an error, except over intervals, where the rule returns the hull of every outcome the real order could give)"

// avgDivisors returns D(o) for every output position of an average pool:
// Πkernel positions inside the padded input when countPad, else the real
// positions (see the file comment of ops_window.go).
func avgDivisors(g *winGeom, countPad bool, idx *relIndex) []int {
	S := g.smallSize()
	div := make([]int, S)
	if !countPad {
		for o := 0; o < S; o++ {
			div[o] = idx.start[o+1] - idx.start[o]
		}
		return div
	}
	// Per axis: the number of j with −pb ≤ o·s − pb + j·d < n + pe.
	per := make([][]int, g.r)
	for d := 0; d < g.r; d++ {
		per[d] = make([]int, g.small[d])
		hiEdge := g.big[d] + g.pe[d]
		for o := range per[d] {
			c := 0
			for j := 0; j < g.k[d]; j++ {
				if p := o*g.s[d] - g.pb[d] + j*g.d[d]; p >= -g.pb[d] && p < hiEdge {
					c++
				}
			}
			per[d][o] = c
		}
	}
	oi := make([]int, g.r)
	for o := 0; o < S; o++ {
		n := 1
		for d := 0; d < g.r; d++ {
			n *= per[d][oi[d]]
		}
		div[o] = n
		for d := g.r - 1; d >= 0; d-- {
			oi[d]++
			if oi[d] < g.small[d] {
				break
			}
			oi[d] = 0
		}
	}
	return div
}

// avgFwd averages x over every window: the real elements summed by a left
// fold from 0, divided by D(o).
func avgFwd[T Scalar[T]](g *winGeom, x Tensor[T], countPad bool) (Tensor[T], error) {
	y := zerosOf[T](g.out)
	idx := g.index(keySmall)
	div := avgDivisors(g, countPad, idx)
	S, B := g.smallSize(), g.bigSize()
	var z T
	for l := 0; l < g.lead; l++ {
		for o := 0; o < S; o++ {
			var acc T
			for p := idx.start[o]; p < idx.start[o+1]; p++ {
				acc = acc.Add(x.Data[l*B+idx.b[p]])
			}
			q, err := acc.Div(z.FromInt(int64(div[o])))
			if err != nil {
				return Tensor[T]{}, fmt.Errorf("output %d: %w", l*S+o, err)
			}
			y.Data[l*S+o] = q
		}
	}
	return y, nil
}

// avgBack is the average pool's VJP: dx[i] = Σ_{(o, j) reading i}
// dy[o]/D(o), a left fold from 0 in row-major order of j.
func avgBack[T Scalar[T]](g *winGeom, xShape Shape, dy Tensor[T], countPad bool) (Tensor[T], error) {
	dx := zerosOf[T](xShape)
	div := avgDivisors(g, countPad, g.index(keySmall))
	idx := g.index(keyBig)
	S, B := g.smallSize(), g.bigSize()
	var z T
	for l := 0; l < g.lead; l++ {
		for i := 0; i < B; i++ {
			var acc T
			for p := idx.start[i]; p < idx.start[i+1]; p++ {
				o := idx.b[p]
				q, err := dy.Data[l*S+o].Div(z.FromInt(int64(div[o])))
				if err != nil {
					return Tensor[T]{}, fmt.Errorf("cotangent %d: %w", l*S+o, err)
				}
				acc = acc.Add(q)
			}
			dx.Data[l*B+i] = acc
		}
	}
	return dx, nil
}

// maxFwd is the max pool's forward rule: MaxOf over the window's real
// elements in row-major order — the left fold of Max from the first one,
// except for scalars with tangents, whose k-way ties follow the 1/t
// convention (see MaxOf).
func maxFwd[T Scalar[T]](g *winGeom, x Tensor[T]) (Tensor[T], error) {
	y := zerosOf[T](g.out)
	idx := g.index(keySmall)
	S, B := g.smallSize(), g.bigSize()
	var win []T
	for l := 0; l < g.lead; l++ {
		for o := 0; o < S; o++ {
			lo, hi := idx.start[o], idx.start[o+1]
			if lo == hi {
				return Tensor[T]{}, fmt.Errorf("output %d: empty pooling window", l*S+o)
			}
			win = win[:0]
			for p := lo; p < hi; p++ {
				win = append(win, x.Data[l*B+idx.b[p]])
			}
			y.Data[l*S+o] = MaxOf(win)
		}
	}
	return y, nil
}

// maxTies calls f(o, P, hull) for every output position with the flat
// input indices P of the window's real elements attaining the maximum, in
// row-major order, deciding every comparison with Compare (hull false).
//
// When some order in a window cannot be decided and T is an Encloser (an
// interval scalar), f gets hull true and P the candidates: the elements
// that no element of the window is decidedly greater than. The real
// window then attains its maximum exactly on some non-empty subset of P
// (a real maximiser is decidedly below nothing, and decided comparisons
// are the real ones), so the tie rule's real outcome is enclosed by the
// join over P of what it gives for each subset; f must return that
// enclosure. Over any other scalar an undecidable order is an error.
func maxTies[T Scalar[T]](g *winGeom, x Tensor[T], f func(o int, p []int, hull bool) error) error {
	idx := g.index(keySmall)
	S, B := g.smallSize(), g.bigSize()
	_, canHull := any(Zero[T]()).(Encloser[T])
	var ties []int
	for l := 0; l < g.lead; l++ {
		for o := 0; o < S; o++ {
			lo, hi := idx.start[o], idx.start[o+1]
			if lo == hi {
				return fmt.Errorf("output %d: empty pooling window", l*S+o)
			}
			ties = append(ties[:0], l*B+idx.b[lo])
			m := x.Data[ties[0]]
			undecided := false
			for p := lo + 1; p < hi; p++ {
				i := l*B + idx.b[p]
				c, ok := x.Data[i].Compare(m)
				if !ok {
					if !canHull {
						return fmt.Errorf("output %d: the order of input elements %d and %d in its window cannot be decided (%v vs %v), so the max-pool tie rule does not apply", l*S+o, i, ties[0], x.Data[i], m)
					}
					undecided = true
					break
				}
				switch {
				case c > 0:
					m = x.Data[i]
					ties = append(ties[:0], i)
				case c == 0:
					ties = append(ties, i)
				}
			}
			if undecided {
				ties = ties[:0]
				for p := lo; p < hi; p++ {
					i := l*B + idx.b[p]
					below := false
					for q := lo; q < hi && !below; q++ {
						c, ok := x.Data[l*B+idx.b[q]].Compare(x.Data[i])
						below = ok && c > 0
					}
					if !below {
						ties = append(ties, i)
					}
				}
			}
			if err := f(l*S+o, ties, undecided); err != nil {
				return err
			}
		}
	}
	return nil
}

func poolPrim[T Scalar[T]](kind winKind) *Prim[T] {
	info := &OpInfo{Name: kind.name(), MinArity: 1, MaxArity: 1, Attrs: []string{"Window"}, Exact: true,
		ZeroPreserving: true, Contraction: poolContraction,
		Shape: func(a *Attrs, in []Shape) (Shape, error) {
			g, err := planWin(kind, a, in)
			if err != nil {
				return nil, err
			}
			return g.out, nil
		}}
	switch kind {
	case winMaxPool:
		info.Doc = "max over each window of the trailing spatial axes (Window: Kernel, Stride, Pads < kernel); padding ignored; ties split equally"
		info.IR = &IRForm{Tag: "max_pool", Attrs: []string{"kernel", "stride", "padding"},
			Doc: "max over each window of the trailing spatial axes; padding positions are ignored; ties split the cotangent equally"}
	case winMaxPoolND:
		info.Doc = "ONNX MaxPool over the trailing spatial axes (Window: Kernel, Stride, Pads, Dilation, CeilMode); padding ignored; ties split equally"
		info.IR = &IRForm{Tag: "max_pool_nd", Superset: true, Attrs: []string{"kernel", "stride", "pads", "dilation", "ceil_mode"},
			Doc: "ONNX MaxPool: pads begin/end (ignored positions), dilation, ceil_mode; ties split the cotangent equally"}
	case winAvgPool:
		info.Doc = "window sum (left fold from 0, zero padding) divided by the kernel size (Window: Kernel, Stride, Pads < kernel)"
		info.IR = &IRForm{Tag: "avg_pool", Attrs: []string{"kernel", "stride", "padding"},
			Doc: "window sum (left fold from 0, zero padding) divided by the kernel size"}
	case winAvgPoolND:
		info.Doc = "ONNX AveragePool over the trailing spatial axes (Window: Kernel, Stride, Pads, Dilation, CeilMode, CountIncludePad)"
		info.IR = &IRForm{Tag: "avg_pool_nd", Superset: true, Attrs: []string{"kernel", "stride", "pads", "dilation", "ceil_mode", "count_include_pad"},
			Doc: "ONNX AveragePool: pads begin/end, dilation, ceil_mode, count_include_pad (counts padding inside the padded input, never ceil_mode's extra positions)"}
	}
	plan := func(a *Attrs, x Tensor[T]) (*winGeom, error) { return planWin(kind, a, []Shape{x.Shape}) }
	countPad := func(a *Attrs) bool { return kind == winAvgPool || a.Window.CountIncludePad }
	p := &Prim[T]{OpInfo: info}
	if !kind.isMax() {
		info.Linear, info.Smooth, info.Polynomial, info.Accumulates = true, true, true, true
		p.Forward = func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			g, err := plan(a, xs[0])
			if err != nil {
				return Tensor[T]{}, err
			}
			return avgFwd(g, xs[0], countPad(a))
		}
		p.JVP = func(a *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			g, err := plan(a, xs[0])
			if err != nil {
				return Tensor[T]{}, err
			}
			return avgFwd(g, dxs[0], countPad(a))
		}
		p.VJP = func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			g, err := plan(a, xs[0])
			if err != nil {
				return nil, err
			}
			dx, err := avgBack(g, xs[0].Shape, dy, countPad(a))
			return []Tensor[T]{dx}, err
		}
		return p
	}
	info.Ties, info.HullsUndecided = poolTies, true
	p.Forward = func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
		g, err := plan(a, xs[0])
		if err != nil {
			return Tensor[T]{}, err
		}
		return maxFwd(g, xs[0])
	}
	p.JVP = func(a *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
		if err := checkTangents(info.Name, xs, dxs); err != nil {
			return Tensor[T]{}, err
		}
		g, err := plan(a, xs[0])
		if err != nil {
			return Tensor[T]{}, err
		}
		t := zerosOf[T](g.out)
		dx := dxs[0].Data
		err = maxTies(g, xs[0], func(o int, ps []int, hull bool) error {
			if hull {
				// The average of the tangents of any non-empty subset of
				// the candidates lies in the hull of their tangents.
				h := dx[ps[0]]
				for _, i := range ps[1:] {
					h = any(h).(Encloser[T]).Join(dx[i])
				}
				t.Data[o] = h
				return nil
			}
			if len(ps) == 1 {
				t.Data[o] = dx[ps[0]]
				return nil
			}
			var acc T
			for _, i := range ps {
				acc = acc.Add(dx[i])
			}
			q, err := acc.Div(acc.FromInt(int64(len(ps))))
			if err != nil {
				return fmt.Errorf("output %d: %w", o, err)
			}
			t.Data[o] = q
			return nil
		})
		return t, err
	}
	p.VJP = func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
		if err := checkCotangent(info.Name, y, dy); err != nil {
			return nil, err
		}
		g, err := plan(a, xs[0])
		if err != nil {
			return nil, err
		}
		dx := zerosOf[T](xs[0].Shape)
		err = maxTies(g, xs[0], func(o int, ps []int, hull bool) error {
			share := dy.Data[o]
			if hull {
				// A candidate receives dy/t when it is one of the t real
				// maximisers and 0 otherwise: both lie in hull(0, dy).
				var z T
				share = any(share).(Encloser[T]).Join(z)
			} else if len(ps) > 1 {
				q, err := share.Div(share.FromInt(int64(len(ps))))
				if err != nil {
					return fmt.Errorf("cotangent %d: %w", o, err)
				}
				share = q
			}
			for _, i := range ps {
				dx.Data[i] = dx.Data[i].Add(share)
			}
			return nil
		})
		return []Tensor[T]{dx}, err
	}
	return p
}
