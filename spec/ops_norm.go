package spec

import (
	"fmt"
)

func shapeAxisSame(a *Attrs, in []Shape) (Shape, error) {
	if _, err := normAxis(a.Axis, len(in[0])); err != nil {
		return nil, err
	}
	return in[0].Clone(), nil
}

// eachLane runs f on every lane of x along axis, passing the lane's
// element indices. A shape without elements has no lane data to visit: when
// the lanes are empty (extent 0 along axis) f runs once, on lane 0 with no
// indices, so that it reports what it would report for every lane, and
// when there are no lanes it does not run; either way nothing is
// allocated, and no loop runs over the extents of an empty tensor (which
// may be large: [0, 2^26] passes Check).
func eachLane(s Shape, axis int, f func(idx []int) error) error {
	l := LanesOf(s, axis)
	if l.Outer == 0 || l.Inner == 0 {
		return nil
	}
	if l.N == 0 {
		if err := f(nil); err != nil {
			return fmt.Errorf("lane %d: %w", 0, err)
		}
		return nil
	}
	idx := make([]int, l.N)
	for m := 0; m < l.Count(); m++ {
		b := l.Base(m)
		for j := range idx {
			idx[j] = b + j*l.Inner
		}
		if err := f(idx); err != nil {
			return fmt.Errorf("lane %d: %w", m, err)
		}
	}
	return nil
}

// laneMax is the maximum of a lane (the first element for a tie).
func laneMax[T Scalar[T]](x []T, idx []int) T {
	m := x[idx[0]]
	for _, i := range idx[1:] {
		m = m.Max(x[i])
	}
	return m
}

func softmaxPrim[T Scalar[T]](logForm bool) *Prim[T] {
	name, doc := "softmax", "max-shifted softmax along Axis; vjp y⊙(δ − Σ δ⊙y)"
	if logForm {
		name, doc = "log_softmax", "stable log-softmax along Axis; vjp δ − exp(y)·Σδ"
	}
	info := &OpInfo{Name: name, MinArity: 1, MaxArity: 1, Attrs: []string{"Axis"}, Smooth: true, Shape: shapeAxisSame, Doc: doc,
		Accumulates: true, ZeroPreserving: true, Gen: GenHint{Graph: 33}}
	if logForm {
		info.Gen.Graph = 34
		info.IR = &IRForm{Tag: "log_softmax", Attrs: []string{"axis"}, Superset: true, Doc: "stable log-softmax along axis"}
	} else {
		info.IR = &IRForm{Tag: "softmax", Attrs: []string{"axis"}, Doc: "max-shifted softmax along axis"}
	}
	axisOf := func(a *Attrs, s Shape) (int, error) { return normAxis(a.Axis, len(s)) }
	return &Prim[T]{
		OpInfo: info,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			x := xs[0]
			ax, err := axisOf(a, x.Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			y := zerosOf[T](x.Shape)
			err = eachLane(x.Shape, ax, func(idx []int) error {
				if len(idx) == 0 {
					return nil
				}
				m := laneMax(x.Data, idx)
				var s T
				es := make([]T, len(idx))
				for j, i := range idx {
					e, err := x.Data[i].Sub(m).Exp()
					if err != nil {
						return fmt.Errorf("element %d: %w", i, err)
					}
					es[j] = e
					s = s.Add(e)
				}
				if logForm {
					ls, err := s.Log()
					if err != nil {
						return err
					}
					for _, i := range idx {
						y.Data[i] = x.Data[i].Sub(m).Sub(ls)
					}
					return nil
				}
				for j, i := range idx {
					q, err := es[j].Div(s)
					if err != nil {
						return err
					}
					y.Data[i] = q
				}
				return nil
			})
			return y, err
		},
		JVP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			ax, err := axisOf(a, y.Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			dx, out := dxs[0], zerosOf[T](y.Shape)
			err = eachLane(y.Shape, ax, func(idx []int) error {
				var s T
				p := make([]T, len(idx))
				for j, i := range idx {
					p[j] = y.Data[i]
					if logForm {
						e, err := y.Data[i].Exp()
						if err != nil {
							return err
						}
						p[j] = e
					}
					s = s.Add(p[j].Mul(dx.Data[i]))
				}
				for j, i := range idx {
					if logForm {
						out.Data[i] = dx.Data[i].Sub(s)
					} else {
						out.Data[i] = p[j].Mul(dx.Data[i].Sub(s))
					}
				}
				return nil
			})
			return out, err
		},
		VJP: func(a *Attrs, _ []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			ax, err := axisOf(a, y.Shape)
			if err != nil {
				return nil, err
			}
			g := zerosOf[T](y.Shape)
			err = eachLane(y.Shape, ax, func(idx []int) error {
				var s T
				for _, i := range idx {
					if logForm {
						s = s.Add(dy.Data[i])
					} else {
						s = s.Add(dy.Data[i].Mul(y.Data[i]))
					}
				}
				for _, i := range idx {
					if logForm {
						e, err := y.Data[i].Exp()
						if err != nil {
							return err
						}
						g.Data[i] = dy.Data[i].Sub(e.Mul(s))
					} else {
						g.Data[i] = y.Data[i].Mul(dy.Data[i].Sub(s))
					}
				}
				return nil
			})
			return []Tensor[T]{g}, err
		},
	}
}

// layerNormShape accepts x and optional γ, β of shape [extent of Axis].
func layerNormShape(a *Attrs, in []Shape) (Shape, error) {
	ax, err := normAxis(a.Axis, len(in[0]))
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(in); i++ {
		if !in[i].Equal(Shape{in[0][ax]}) {
			return nil, fmt.Errorf("parent %d (γ/β) has shape %v, expected [%d]", i, in[i], in[0][ax])
		}
	}
	return in[0].Clone(), nil
}

// lnStats holds the per-lane statistics of a layer norm: x̂ and 1/σ.
type lnStats[T Scalar[T]] struct {
	xhat   Tensor[T]
	invStd []T // per lane
}

func layerNormStats[T Scalar[T]](a *Attrs, x Tensor[T], ax int) (*lnStats[T], error) {
	return laneStats(a, x, ax, false)
}

// laneStats computes x̂ and 1/σ per lane along ax. With absSquares each
// squared deviation is computed as |d|·|d|, which is d·d for every real
// and float d (bit for bit: the product's magnitude does not depend on the
// signs) but is never negative over Interval, where d·d of an interval
// straddling 0 reaches below 0 and would leave σ² + ε without a square
// root (instance_norm uses it).
func laneStats[T Scalar[T]](a *Attrs, x Tensor[T], ax int, absSquares bool) (*lnStats[T], error) {
	st := &lnStats[T]{xhat: zerosOf[T](x.Shape)}
	eps := rc[T](attrRat(a.Eps, DefaultNormEps()))
	err := eachLane(x.Shape, ax, func(idx []int) error {
		if len(idx) == 0 {
			return fmt.Errorf("layer_norm over an empty axis")
		}
		var z T
		n := z.FromInt(int64(len(idx)))
		var s T
		for _, i := range idx {
			s = s.Add(x.Data[i])
		}
		mu, err := s.Div(n)
		if err != nil {
			return err
		}
		var v T
		for _, i := range idx {
			d := x.Data[i].Sub(mu)
			if absSquares {
				d = d.Abs()
			}
			v = v.Add(d.Mul(d))
		}
		if v, err = v.Div(n); err != nil {
			return err
		}
		sd, err := v.Add(eps).Sqrt()
		if err != nil {
			return err
		}
		inv, err := n.FromInt(1).Div(sd)
		if err != nil {
			return err
		}
		st.invStd = append(st.invStd, inv)
		for _, i := range idx {
			st.xhat.Data[i] = x.Data[i].Sub(mu).Mul(inv)
		}
		return nil
	})
	return st, err
}

func layerNormPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "layer_norm", Accumulates: true, Partial: true, IR: &IRForm{Tag: "layernorm", MinArity: 1, MaxArity: 1, Attrs: []string{"axis"}, Params: []string{"gamma", "beta", "eps"}, Doc: "layer norm over the suffix shape[axis:] (F.layer_norm); optional γ=1, β=0, ε=1/100000 from the payload"}, MinArity: 1, MaxArity: 3, Attrs: []string{"Axis", "Eps"}, Exact: true, Smooth: true,
		Shape: layerNormShape, Doc: "(x−μ)/sqrt(σ²+ε)·γ+β along Axis; parents (x[, γ[, β]]), γ=1 and β=0 when absent"}
	gb := func(xs []Tensor[T], j int) (g, b T) {
		g = g.FromInt(1)
		if len(xs) > 1 {
			g = xs[1].Data[j]
		}
		if len(xs) > 2 {
			b = xs[2].Data[j]
		}
		return g, b
	}
	return &Prim[T]{
		OpInfo: info,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			ax, err := normAxis(a.Axis, xs[0].Shape.Rank())
			if err != nil {
				return Tensor[T]{}, err
			}
			st, err := layerNormStats(a, xs[0], ax)
			if err != nil {
				return Tensor[T]{}, err
			}
			y := zerosOf[T](xs[0].Shape)
			err = eachLane(y.Shape, ax, func(idx []int) error {
				for j, i := range idx {
					g, b := gb(xs, j)
					y.Data[i] = st.xhat.Data[i].Mul(g).Add(b)
				}
				return nil
			})
			return y, err
		},
		JVP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			ax, _ := normAxis(a.Axis, xs[0].Shape.Rank())
			st, err := layerNormStats(a, xs[0], ax)
			if err != nil {
				return Tensor[T]{}, err
			}
			out := zerosOf[T](y.Shape)
			lane := 0
			err = eachLane(y.Shape, ax, func(idx []int) error {
				var z T
				n := z.FromInt(int64(len(idx)))
				var s1, s2 T
				for _, i := range idx {
					s1 = s1.Add(dxs[0].Data[i])
					s2 = s2.Add(st.xhat.Data[i].Mul(dxs[0].Data[i]))
				}
				m1, err := s1.Div(n)
				if err != nil {
					return err
				}
				m2, err := s2.Div(n)
				if err != nil {
					return err
				}
				for j, i := range idx {
					g, _ := gb(xs, j)
					dxh := dxs[0].Data[i].Sub(m1).Sub(st.xhat.Data[i].Mul(m2)).Mul(st.invStd[lane])
					v := g.Mul(dxh)
					if len(xs) > 1 {
						v = v.Add(dxs[1].Data[j].Mul(st.xhat.Data[i]))
					}
					if len(xs) > 2 {
						v = v.Add(dxs[2].Data[j])
					}
					out.Data[i] = v
				}
				lane++
				return nil
			})
			return out, err
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			ax, _ := normAxis(a.Axis, xs[0].Shape.Rank())
			st, err := layerNormStats(a, xs[0], ax)
			if err != nil {
				return nil, err
			}
			outs := make([]Tensor[T], len(xs))
			for i := range xs {
				outs[i] = zerosOf[T](xs[i].Shape)
			}
			lane := 0
			err = eachLane(y.Shape, ax, func(idx []int) error {
				var z T
				n := z.FromInt(int64(len(idx)))
				dxh := make([]T, len(idx))
				var s1, s2 T
				for j, i := range idx {
					g, _ := gb(xs, j)
					dxh[j] = dy.Data[i].Mul(g)
					s1 = s1.Add(dxh[j])
					s2 = s2.Add(dxh[j].Mul(st.xhat.Data[i]))
				}
				m1, err := s1.Div(n)
				if err != nil {
					return err
				}
				m2, err := s2.Div(n)
				if err != nil {
					return err
				}
				for j, i := range idx {
					outs[0].Data[i] = dxh[j].Sub(m1).Sub(st.xhat.Data[i].Mul(m2)).Mul(st.invStd[lane])
					if len(xs) > 1 {
						outs[1].Data[j] = outs[1].Data[j].Add(dy.Data[i].Mul(st.xhat.Data[i]))
					}
					if len(xs) > 2 {
						outs[2].Data[j] = outs[2].Data[j].Add(dy.Data[i])
					}
				}
				lane++
				return nil
			})
			return outs, err
		},
	}
}
