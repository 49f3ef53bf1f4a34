package spec

import "fmt"

// bce_with_logits(x, y), binary cross-entropy on logits with mean
// reduction (PyTorch's F.binary_cross_entropy_with_logits(x, y), no
// weights): over the N elements of x and of the target y (equal shapes,
// N ≥ 1, a scalar output)
//
//	L = (1/N)·Σ_i ℓ(x_i, y_i),   ℓ(x, y) = max(x, 0) − x·y + log1p(e^(−|x|)),
//
// PyTorch's numerically stable form: e^(−|x|) ≤ 1 never overflows, and
// log1p keeps its digits when it is tiny. ℓ equals softplus(x) − x·y =
// −(y·ln σ(x) + (1 − y)·ln(1 − σ(x))) for every real x, so
//
//	∂L/∂x_i = (σ(x_i) − y_i)/N,   ∂L/∂y_i = −x_i/N,
//
// with σ the registry's sign-split sigmoid. The JVP is
// Σ_i ((σ(x_i) − y_i)·dx_i − x_i·dy_i)/N (a left fold, then one division
// by N) and the VJP gives x_i the cotangent (σ(x_i) − y_i)·(δ/N) and y_i
// −x_i·(δ/N). ℓ is smooth although its form has kinks at x = 0 (max and
// |·|) that cancel; the rule takes max(x, 0), whose tie splits the
// tangent ½/½, rather than relu (relu′(0) = 0), so that forward mode
// through the rule gives σ(0) − y = ½ − y at x = 0, the derivative the
// JVP declares (|x|′(0) = 0 multiplies log1p′ there, which is all the
// cancellation needs). The target is any real (PyTorch does not check
// y ∈ [0, 1]); the gradient with respect to it is PyTorch's.
//
// The mean of no elements has no value, so an empty input is refused by
// the shape rule (as reduce_mean refuses it). The primitive is not exact
// (exp and log1p over Rat are DomainErrors), accumulates (a sum over the
// elements), and is zero-preserving (the partials are bounded by
// max(1 + |y|, |x|)/N).
func bcePrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "bce_with_logits", MinArity: 2, MaxArity: 2, Accumulates: true, ZeroPreserving: true, Smooth: true,
		IR:  &IRForm{Tag: "bce_with_logits", Superset: true, Doc: "mean binary cross-entropy on logits x against targets y (torch.nn.functional.binary_cross_entropy_with_logits)"},
		Doc: "(1/N)Σ max(x,0) − x·y + log1p(e^−|x|); ∂/∂x = (σ(x) − y)/N, ∂/∂y = −x/N; N ≥ 1",
		Shape: func(_ *Attrs, in []Shape) (Shape, error) {
			if err := sameShape("", in); err != nil {
				return nil, err
			}
			if in[0].Size() == 0 {
				return nil, fmt.Errorf("input of shape %v has no elements, and the mean of no losses has no value", in[0])
			}
			return Shape{}, nil
		}}
	n := func(x Tensor[T]) T { var z T; return z.FromInt(int64(len(x.Data))) }
	return &Prim[T]{
		OpInfo: info,
		Forward: func(_ *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			var acc T
			for i, x := range xs[0].Data {
				e, err := x.Abs().Neg().Exp()
				if err != nil {
					return Tensor[T]{}, err
				}
				l, err := e.Log1p()
				if err != nil {
					return Tensor[T]{}, err
				}
				acc = acc.Add(x.Max(x.FromInt(0)).Sub(x.Mul(xs[1].Data[i])).Add(l))
			}
			q, err := acc.Div(n(xs[0]))
			return Scalar0(q), err
		},
		JVP: func(_ *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			var acc T
			for i, x := range xs[0].Data {
				s, err := sigmoidScalar(x)
				if err != nil {
					return Tensor[T]{}, err
				}
				acc = acc.Add(s.Sub(xs[1].Data[i]).Mul(dxs[0].Data[i]).Sub(x.Mul(dxs[1].Data[i])))
			}
			q, err := acc.Div(n(xs[0]))
			return Scalar0(q), err
		},
		VJP: func(_ *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			k, err := dy.Data[0].Div(n(xs[0]))
			if err != nil {
				return nil, err
			}
			gx, gy := zerosOf[T](xs[0].Shape), zerosOf[T](xs[1].Shape)
			for i, x := range xs[0].Data {
				s, err := sigmoidScalar(x)
				if err != nil {
					return nil, err
				}
				gx.Data[i] = s.Sub(xs[1].Data[i]).Mul(k)
				gy.Data[i] = x.Neg().Mul(k)
			}
			return []Tensor[T]{gx, gy}, nil
		},
	}
}
