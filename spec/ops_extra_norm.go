package spec

import (
	"fmt"
	"math/big"
)

// l2_normalize is F.normalize(x, p=2, dim=Axis, eps=Eps) and ONNX's
// LpNormalization with p = 2 (ε = 0): along each lane x_0, …, x_{n−1},
//
//	s = Σ_j x_j²  (a left fold from 0),  ν = √s,  m = max(ν, ε),  y_j = x_j / m.
//
// With w the max's weight on ν (1 if ν > ε, 0 if ν < ε, ½ at the tie ν = ε,
// the registry's max convention) and p = Σ_j y_j·dx_j,
//
//	dy_j = (dx_j − w·p·y_j) / m,
//
// because dm = w·dν and dν = Σ_j x_j dx_j / ν = p·m/ν, and w ≠ 0 only where
// m = ν. The Jacobian (I − w·y yᵀ)/m is symmetric, so the VJP is the same
// expression in δ. The rule never divides by ν itself: a zero lane with
// ε > 0 has the derivative I/ε (torch and JAX give NaN there). A zero lane
// with ε = 0 divides by m = 0, refused over Rat (the rule is Partial).
// Exact over Rat where every lane's norm is rational (√ of a non-square
// is refused); Accumulates (the sum of squares); not zero-preserving (1/m
// overflows for tiny lanes when ε = 0); not Smooth (the tie ν = ε).

// l2Lanes resolves the axis and ε of an application.
func l2Lanes[T Scalar[T]](a *Attrs, s Shape) (Lanes, T, error) {
	var eps T
	ax, err := normAxis(a.Axis, s.Rank())
	if err != nil {
		return Lanes{}, eps, err
	}
	e := a.Eps
	if e == nil {
		e = new(big.Rat)
	}
	if e.Sign() < 0 {
		return Lanes{}, eps, fmt.Errorf("eps %s is negative", e.RatString())
	}
	return LanesOf(s, ax), rc[T](e), nil
}

// l2Lane returns the divisor m = max(ν, ε) of the lane x[idx[0]], …,
// x[idx[n−1]] (ν its 2-norm, the sum of squares a left fold from 0 in idx
// order) and the max's weight w on ν. renorm shares it, with ε = maxnorm.
func l2Lane[T Scalar[T]](x []T, idx []int, eps T) (m, w T, err error) {
	var s T
	for _, i := range idx {
		// |x|·|x| = x·x over Rat and, bit for bit, over floats; over
		// intervals it encloses the square from 0 up where x straddles 0
		// (x·x would reach below 0 and fail the square root).
		a := x[i].Abs()
		s = s.Add(a.Mul(a))
	}
	nu, err := s.Sqrt()
	if err != nil {
		return m, w, err
	}
	h := rc[T](big.NewRat(1, 2))
	return nu.Max(eps), h.Add(h.Mul(nu.Sub(eps).Sign())), nil
}

// laneIndices lists the flat indices of lane k of l, in order.
func laneIndices(l Lanes, k int, idx []int) []int {
	idx = idx[:0]
	b := l.Base(k)
	for j := 0; j < l.N; j++ {
		idx = append(idx, b+j*l.Inner)
	}
	return idx
}

// l2LaneTangent writes (d − w·(y·d)·y)/m into out at the lane idx, with
// y = x/m and (m, w) from l2Lane.
func l2LaneTangent[T Scalar[T]](x, d, out []T, idx []int, m, w T) error {
	y := make([]T, len(idx))
	var p T
	var err error
	for j, i := range idx {
		if y[j], err = x[i].Div(m); err != nil {
			return err
		}
		p = p.Add(y[j].Mul(d[i]))
	}
	for j, i := range idx {
		if out[i], err = d[i].Sub(w.Mul(p).Mul(y[j])).Div(m); err != nil {
			return err
		}
	}
	return nil
}

// l2Apply computes, lane by lane, y = x/m (name "": the forward rule) or
// the tangent (or cotangent) map d ↦ (d − w·(y·d)·y)/m (name "jvp" or
// "vjp", which prefixes its errors).
func l2Apply[T Scalar[T]](a *Attrs, x, d Tensor[T], name string) (Tensor[T], error) {
	l, eps, err := l2Lanes[T](a, x.Shape)
	if err != nil {
		return Tensor[T]{}, err
	}
	out := zerosOf[T](x.Shape)
	var idx []int
	for k := 0; k < l.Count(); k++ {
		idx = laneIndices(l, k, idx)
		m, w, err := l2Lane(x.Data, idx, eps)
		if err != nil {
			return Tensor[T]{}, err
		}
		if name != "" {
			if err := l2LaneTangent(x.Data, d.Data, out.Data, idx, m, w); err != nil {
				return Tensor[T]{}, fmt.Errorf("%s: lane %d: %w", name, k, err)
			}
			continue
		}
		for _, i := range idx {
			if out.Data[i], err = x.Data[i].Div(m); err != nil {
				return Tensor[T]{}, fmt.Errorf("lane %d: %w", k, err)
			}
		}
	}
	return out, nil
}

func l2NormalizePrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "l2_normalize", MinArity: 1, MaxArity: 1, Attrs: []string{"Axis", "Eps"},
		Exact: true, Partial: true, Accumulates: true,
		IR: &IRForm{Tag: "l2_normalize", Attrs: []string{"axis", "eps"}, Superset: true,
			Doc: "x / max(‖x‖₂, eps) along axis (F.normalize with p = 2)"},
		Ties: "m = max(‖x‖₂, ε): at ‖x‖₂ = ε the max's ½/½", Shape: func(a *Attrs, in []Shape) (Shape, error) {
			if _, err := normAxis(a.Axis, len(in[0])); err != nil {
				return nil, err
			}
			return in[0].Clone(), nil
		},
		Doc: "x / max(‖x‖₂, ε) along Axis (F.normalize; ONNX LpNormalization p=2 with ε = 0); dy = (dx − w(y·dx)y)/m, w the max's weight on ‖x‖₂"}
	return &Prim[T]{OpInfo: info,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			return l2Apply(a, xs[0], Tensor[T]{}, "")
		},
		JVP: func(a *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			return l2Apply(a, xs[0], dxs[0], "jvp")
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			g, err := l2Apply(a, xs[0], dy, "vjp")
			if err != nil {
				return nil, err
			}
			return []Tensor[T]{g}, nil
		},
	}
}
