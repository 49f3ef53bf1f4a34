package spec

import (
	"fmt"
	"math/big"
)

// Lanes describes the 1-D fibres of a tensor along one axis: Outer·Inner
// lanes of N elements with stride Inner. Element j of lane m is at
// Base(m) + j·Inner, and m is also the lane's index in the tensor reduced
// along the axis. Every reduction along an axis (the registry's rules,
// range traces) walks its lanes this way.
type Lanes struct{ Outer, N, Inner int }

// LanesOf returns the lanes of shape s along axis (already normalised).
func LanesOf(s Shape, axis int) Lanes {
	l := Lanes{Outer: 1, N: s[axis], Inner: 1}
	for i := 0; i < axis; i++ {
		l.Outer *= s[i]
	}
	for i := axis + 1; i < len(s); i++ {
		l.Inner *= s[i]
	}
	return l
}

// Base returns the flat index of element 0 of lane number m.
func (l Lanes) Base(m int) int { return (m/l.Inner)*l.N*l.Inner + m%l.Inner }

// Count is the number of lanes.
func (l Lanes) Count() int { return l.Outer * l.Inner }

func dropAxis(s Shape, axis int) Shape {
	out := make(Shape, 0, len(s)-1)
	out = append(out, s[:axis]...)
	return append(out, s[axis+1:]...)
}

func shapeReduceAxis(a *Attrs, in []Shape) (Shape, error) {
	ax, err := normAxis(a.Axis, len(in[0]))
	if err != nil {
		return nil, err
	}
	return dropAxis(in[0], ax), nil
}

// shapeMeanAxis is shapeReduceAxis for reduce_mean, which also rejects
// an empty axis whose output has elements: each of them would be the
// mean of no elements, which has no value. PyTorch returns NaN there, but
// an exact semantics has no NaN, and returning 0 (or any number) would be
// a value the mean does not have; so every scalar, and every path, fails
// alike, before evaluating anything, with an error naming the axis. An
// empty axis whose output has no elements (shape [0, 0] reduced along
// either axis, or [2, 0, 0] along axis 1) asks for no mean at all: the
// result is the empty tensor, as in PyTorch.
func shapeMeanAxis(a *Attrs, in []Shape) (Shape, error) {
	out, err := shapeReduceAxis(a, in)
	if err != nil {
		return nil, err
	}
	ax, _ := normAxis(a.Axis, len(in[0]))
	if in[0][ax] == 0 && out.Size() > 0 {
		return nil, fmt.Errorf("reduce_mean over axis %d of shape %v: the axis is empty, and the mean of no elements has no value", a.Axis, in[0])
	}
	return out, nil
}

// reduceLanes sums each lane as a left fold from zero, optionally
// multiplying by scale afterwards (always 1/n); a DenseReduce scalar
// (Interval) runs its own kernel instead (reduceDense).
func reduceLanes[T Scalar[T]](x Tensor[T], axis int, scale *T) Tensor[T] {
	if y, ok := reduceDense(x, axis, scale != nil); ok { // scale is 1/n
		return y
	}
	l := LanesOf(x.Shape, axis)
	out := zerosOf[T](dropAxis(x.Shape, axis))
	for m := 0; m < l.Count(); m++ {
		b := l.Base(m)
		var acc T
		for j := 0; j < l.N; j++ {
			acc = acc.Add(x.Data[b+j*l.Inner])
		}
		if scale != nil {
			acc = acc.Mul(*scale)
		}
		out.Data[m] = acc
	}
	return out
}

// spreadLanes broadcasts a reduced tensor back along axis of shape s,
// optionally multiplying by scale (always 1/n); a DenseReduce scalar runs
// its own kernel instead (spreadDense).
func spreadLanes[T Scalar[T]](d Tensor[T], s Shape, axis int, scale *T) Tensor[T] {
	if y, ok := spreadDense(d, s, axis, scale != nil); ok { // scale is 1/n
		return y
	}
	l := LanesOf(s, axis)
	out := zerosOf[T](s)
	for m := 0; m < l.Count(); m++ {
		b := l.Base(m)
		v := d.Data[m]
		if scale != nil {
			v = v.Mul(*scale)
		}
		for j := 0; j < l.N; j++ {
			out.Data[b+j*l.Inner] = v
		}
	}
	return out
}

// linearPrim builds a primitive whose forward is linear: the JVP is the
// forward applied to the tangents (for single-parent primitives).
func linearUnaryPrim[T Scalar[T]](info *OpInfo,
	fwd func(a *Attrs, x Tensor[T]) (Tensor[T], error),
	adj func(a *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error)) *Prim[T] {
	info.MinArity, info.MaxArity = 1, 1
	return jointlyLinearPrim(info,
		func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) { return fwd(a, xs[0]) },
		func(a *Attrs, xs []Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			g, err := adj(a, xs[0], dy)
			if err != nil {
				return nil, err
			}
			return []Tensor[T]{g}, nil
		})
}

// jointlyLinearPrim builds a primitive that is linear in all its arguments
// together, y = L(x₁, …, x_n): its JVP is the forward rule applied to the
// tangents, L(dx₁, …, dx_n), and its VJP is adj, the transpose Lᵀ(δ)
// (one cotangent per argument). It marks info Linear and Smooth.
func jointlyLinearPrim[T Scalar[T]](info *OpInfo,
	fwd func(a *Attrs, xs []Tensor[T]) (Tensor[T], error),
	adj func(a *Attrs, xs []Tensor[T], dy Tensor[T]) ([]Tensor[T], error)) *Prim[T] {
	info.Linear, info.Smooth = true, true
	return &Prim[T]{
		OpInfo:  info,
		Forward: fwd,
		JVP: func(a *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			return fwd(a, dxs)
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			return adj(a, xs, dy)
		},
	}
}

func reducePrims[T Scalar[T]]() []*Prim[T] {
	// meanAxis normalises the axis and returns 1/n as a T; an empty axis
	// is the error of shapeMeanAxis (repeated here for callers of Forward,
	// JVP and VJP that skip the shape rule).
	meanAxis := func(a *Attrs, s Shape) (int, *T, error) {
		if _, err := shapeMeanAxis(a, []Shape{s}); err != nil {
			return 0, nil, err
		}
		ax, _ := normAxis(a.Axis, s.Rank())
		var inv T // an empty axis has an empty output: no lane, 1/n unused
		if s[ax] > 0 {
			inv = rc[T](big.NewRat(1, int64(s[ax])))
		}
		return ax, &inv, nil
	}
	return []*Prim[T]{
		linearUnaryPrim[T](&OpInfo{Name: "sum", Accumulates: true, ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "sum", Doc: "Σ of every element to a scalar, left fold from 0"}, Gen: GenHint{Graph: 6}, Providers: []string{ProviderFastCPU}, Exact: true, Shape: shapeScalar, Doc: "Σ of every element to a scalar (left fold from 0)"},
			func(_ *Attrs, x Tensor[T]) (Tensor[T], error) {
				if y, ok := sumAllDense(x); ok {
					return Scalar0(y), nil
				}
				return Scalar0(SumAll(x)), nil
			},
			func(_ *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error) { return Full(x.Shape, dy.Data[0]) }),
		linearUnaryPrim[T](&OpInfo{Name: "reduce_sum", Accumulates: true, ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "reduce_sum", Attrs: []string{"axis"}, Doc: "Σ along axis (removed), left fold from 0"}, Gen: GenHint{Graph: 13}, Providers: []string{ProviderFastCPU}, Attrs: []string{"Axis"}, Exact: true, Shape: shapeReduceAxis, Doc: "Σ along an axis (removed)"},
			func(a *Attrs, x Tensor[T]) (Tensor[T], error) {
				ax, err := normAxis(a.Axis, x.Shape.Rank())
				if err != nil {
					return Tensor[T]{}, err
				}
				return reduceLanes(x, ax, nil), nil
			},
			func(a *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error) {
				ax, err := normAxis(a.Axis, x.Shape.Rank())
				if err != nil {
					return Tensor[T]{}, err
				}
				return spreadLanes(dy, x.Shape, ax, nil), nil
			}),
		linearUnaryPrim[T](&OpInfo{Name: "reduce_mean", Accumulates: true, ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "reduce_mean", Attrs: []string{"axis"}, Doc: "mean along axis (removed)"}, Gen: GenHint{Graph: 14}, Attrs: []string{"Axis"}, Exact: true, Shape: shapeMeanAxis, Doc: "mean along an axis (removed): Σ/n, left fold then ×1/n; an empty axis (n = 0) is a shape error unless the output is empty too (then the empty tensor)"},
			func(a *Attrs, x Tensor[T]) (Tensor[T], error) {
				ax, inv, err := meanAxis(a, x.Shape)
				if err != nil {
					return Tensor[T]{}, err
				}
				return reduceLanes(x, ax, inv), nil
			},
			func(a *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error) {
				ax, inv, err := meanAxis(a, x.Shape)
				if err != nil {
					return Tensor[T]{}, err
				}
				return spreadLanes(dy, x.Shape, ax, inv), nil
			}),
		msePrim[T](),
	}
}

// msePrim is mse_loss(ŷ, y) = Σ(ŷ−y)²/N with N the element count (1 when
// empty); VJP dŷ = (ŷ−y)·(2/N)·δ, dy = −dŷ.
func msePrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "mse_loss", Accumulates: true, ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "mse_loss"}, Gen: GenHint{Degree: DegreeDouble, Graph: 25}, MinArity: 2, MaxArity: 2, Exact: true, Smooth: true,
		Doc: "Σ(ŷ−y)²/N, N the element count (1 if empty)",
		Shape: func(_ *Attrs, in []Shape) (Shape, error) {
			if err := sameShape("", in); err != nil {
				return nil, err
			}
			return Shape{}, nil
		}}
	invN := func(x Tensor[T]) T {
		n := len(x.Data)
		if n == 0 {
			n = 1
		}
		return rc[T](big.NewRat(1, int64(n)))
	}
	return &Prim[T]{
		OpInfo: info,
		Forward: func(_ *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			var acc T
			for i := range xs[0].Data {
				d := xs[0].Data[i].Sub(xs[1].Data[i])
				acc = acc.Add(d.Mul(d))
			}
			n := len(xs[0].Data)
			if n == 0 {
				n = 1
			}
			q, err := acc.Div(acc.FromInt(int64(n)))
			return Scalar0(q), err
		},
		JVP: func(_ *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			var acc T
			for i := range xs[0].Data {
				d := xs[0].Data[i].Sub(xs[1].Data[i])
				acc = acc.Add(d.Mul(dxs[0].Data[i].Sub(dxs[1].Data[i])))
			}
			return Scalar0(acc.FromInt(2).Mul(invN(xs[0])).Mul(acc)), nil
		},
		VJP: func(_ *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			var z T
			k := z.FromInt(2).Mul(invN(xs[0])).Mul(dy.Data[0])
			ga := zerosOf[T](xs[0].Shape)
			gb := zerosOf[T](xs[1].Shape)
			for i := range ga.Data {
				g := xs[0].Data[i].Sub(xs[1].Data[i]).Mul(k)
				ga.Data[i], gb.Data[i] = g, g.Neg()
			}
			return []Tensor[T]{ga, gb}, nil
		},
	}
}

var _ = fmt.Sprintf
