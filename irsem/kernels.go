package irsem

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// The forward rules of the tags that have no spec registry primitive
// (hard_masked_softmax, batch_norm_eval, bernoulli_mask with a runtime
// keep probability), generic over spec.Scalar.
// Every sum is a left fold from the scalar's zero in the order stated, so
// a float result is determined bit for bit and a Rat result exactly.

func zerosOf[T any](s spec.Shape) spec.Tensor[T] {
	return spec.Tensor[T]{Shape: s.Clone(), Data: make([]T, s.Size())}
}

func prod(xs []int) int {
	n := 1
	for _, x := range xs {
		n *= x
	}
	return n
}

// hardMaskedSoftmax normalizes every last-axis row over its allowed
// entries: m = the max of the allowed entries (a left fold of Max from the
// first); numerator e_j = exp(x_j − m) where allowed and 0 elsewhere; the
// denominator a left fold from 0 over all numerators of the row; y_j =
// e_j/denominator. A row with no allowed entry is all zeros. A rank-0
// input gives 1 when allowed and 0 otherwise.
func hardMaskedSoftmax[T spec.Scalar[T]](x spec.Tensor[T], allowed []bool) (spec.Tensor[T], error) {
	out := zerosOf[T](x.Shape)
	var z T
	if len(x.Shape) == 0 {
		if allowed[0] {
			out.Data[0] = z.FromInt(1)
		}
		return out, nil
	}
	n := x.Shape[len(x.Shape)-1]
	if n == 0 {
		return out, nil
	}
	num := make([]T, n)
	for base := 0; base < len(x.Data); base += n {
		var m T
		found := false
		for j := 0; j < n; j++ {
			if !allowed[base+j] {
				continue
			}
			if !found {
				m, found = x.Data[base+j], true
			} else {
				m = m.Max(x.Data[base+j])
			}
		}
		if !found {
			continue
		}
		var den T
		for j := 0; j < n; j++ {
			num[j] = z
			if allowed[base+j] {
				e, err := x.Data[base+j].Sub(m).Exp()
				if err != nil {
					return spec.Tensor[T]{}, fmt.Errorf("element %d: %w", base+j, err)
				}
				num[j] = e
			}
			den = den.Add(num[j])
		}
		for j := 0; j < n; j++ {
			q, err := num[j].Div(den)
			if err != nil {
				return spec.Tensor[T]{}, fmt.Errorf("element %d: %w", base+j, err)
			}
			out.Data[base+j] = q
		}
	}
	return out, nil
}

// batchNorm holds batch_norm_eval's per-channel constants over T. Gamma
// and Beta are nil when the payload gives none (γ = 1, β = 0).
type batchNorm[T spec.Scalar[T]] struct {
	axis        int
	mean, std   []T
	gamma, beta []T
}

// newBatchNorm computes std_c = sqrt(max(var_c, 0) + ε) once per channel.
func newBatchNorm[T spec.Scalar[T]](axis int, mean, vr, gamma, beta []T, eps T) (*batchNorm[T], error) {
	bn := &batchNorm[T]{axis: axis, mean: mean, gamma: gamma, beta: beta, std: make([]T, len(vr))}
	var z T
	for c, v := range vr {
		s, err := v.Max(z).Add(eps).Sqrt()
		if err != nil {
			return nil, fmt.Errorf("channel %d: sqrt(max(var,0)+eps): %w", c, err)
		}
		bn.std[c] = s
	}
	return bn, nil
}

// apply computes y = ((x − μ_c)/std_c)·γ_c + β_c elementwise.
func (bn *batchNorm[T]) apply(x spec.Tensor[T]) (spec.Tensor[T], error) {
	out := zerosOf[T](x.Shape)
	if len(x.Data) == 0 {
		return out, nil
	}
	c := x.Shape[bn.axis]
	inner := prod(x.Shape[bn.axis+1:])
	var z T
	one := z.FromInt(1)
	for i, v := range x.Data {
		ch := (i / inner) % c
		q, err := v.Sub(bn.mean[ch]).Div(bn.std[ch])
		if err != nil {
			return spec.Tensor[T]{}, fmt.Errorf("element %d: %w", i, err)
		}
		g, b := one, z
		if bn.gamma != nil {
			g = bn.gamma[ch]
		}
		if bn.beta != nil {
			b = bn.beta[ch]
		}
		out.Data[i] = q.Mul(g).Add(b)
	}
	return out, nil
}

// bernoulliMask draws a 0/1 mask of shape s from the keep probability q:
// element i is 1 − step((1−q) − u_i) with u_i = UniformRat(seed, i) as a
// T, i.e. 1 exactly when u_i ≥ 1 − q. Over Rat this is the registry's
// bernoulli_mask with drop probability P = 1 − q.
func bernoulliMask[T spec.Scalar[T]](s spec.Shape, seed uint64, q T) spec.Tensor[T] {
	out := zerosOf[T](s)
	var z T
	one := z.FromInt(1)
	drop := one.Sub(q)
	for i := range out.Data {
		u := FromRat[T](spec.RatFromBig(spec.UniformRat(seed, i)))
		out.Data[i] = one.Sub(drop.Sub(u).Step())
	}
	return out
}
