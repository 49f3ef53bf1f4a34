package nn

import (
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// Optimizer updates parameters in place from their gradients.
type Optimizer[T spec.Scalar[T]] interface {
	// Step applies one update; params and grads correspond one to one.
	Step(params, grads []spec.Tensor[T]) error
}

func checkPairs[T any](params, grads []spec.Tensor[T]) error {
	if len(params) != len(grads) {
		return fmt.Errorf("optimizer: %d parameters but %d gradients", len(params), len(grads))
	}
	for i := range params {
		if !params[i].Shape.Equal(grads[i].Shape) {
			return fmt.Errorf("optimizer: parameter %d has shape %v, gradient %v", i, params[i].Shape, grads[i].Shape)
		}
	}
	return nil
}

// SGD is p ← p − lr·g, one rounding per operation.
type SGD[T spec.Scalar[T]] struct {
	LR T
}

// Step applies one SGD update in place.
func (o *SGD[T]) Step(params, grads []spec.Tensor[T]) error {
	if err := checkPairs(params, grads); err != nil {
		return err
	}
	for i, p := range params {
		for k := range p.Data {
			p.Data[k] = p.Data[k].Sub(o.LR.Mul(grads[i].Data[k]))
		}
	}
	return nil
}

// Adam is TorchLean's Adam with every elementwise step rounded in T:
// m = m·β1 + g·(1−β1); v = v·β2 + (g·g)·(1−β2) with (1−β) computed in T;
// t += 1; β^t by repeated multiplication in T; c1 = 1/(1−β1^t),
// c2 = 1/(1−β2^t); m̂ = m·c1, v̂ = v·c2; p = p − (lr/(sqrt(v̂)+ε))·m̂.
type Adam[T spec.Scalar[T]] struct {
	LR, Beta1, Beta2, Eps T
	m, v                  []spec.Tensor[T]
	pow1, pow2            T
	t                     int
}

// NewAdam returns Adam with the given hyper-parameters, each rounded once
// into T.
func NewAdam[T spec.Scalar[T]](lr, beta1, beta2, eps *big.Rat) *Adam[T] {
	var z T
	return &Adam[T]{LR: z.FromRat(lr), Beta1: z.FromRat(beta1), Beta2: z.FromRat(beta2), Eps: z.FromRat(eps), pow1: z.FromInt(1), pow2: z.FromInt(1)}
}

// DefaultAdam is the quickstart's Adam: lr 0.03, β1 0.9, β2 0.999, ε 1e-8.
func DefaultAdam[T spec.Scalar[T]]() *Adam[T] {
	return NewAdam[T](big.NewRat(3, 100), big.NewRat(9, 10), big.NewRat(999, 1000), big.NewRat(1, 100000000))
}

// Steps is the number of updates applied so far.
func (o *Adam[T]) Steps() int { return o.t }

// Step applies one Adam update in place.
func (o *Adam[T]) Step(params, grads []spec.Tensor[T]) error {
	if err := checkPairs(params, grads); err != nil {
		return err
	}
	if o.m == nil {
		for _, p := range params {
			o.m = append(o.m, spec.ZerosLike(p))
			o.v = append(o.v, spec.ZerosLike(p))
		}
	}
	if len(o.m) != len(params) {
		return fmt.Errorf("adam: initialised for %d parameters, got %d", len(o.m), len(params))
	}
	one := o.LR.FromInt(1)
	omb1, omb2 := one.Sub(o.Beta1), one.Sub(o.Beta2)
	o.t++
	o.pow1, o.pow2 = o.pow1.Mul(o.Beta1), o.pow2.Mul(o.Beta2)
	c1, err := one.Div(one.Sub(o.pow1))
	if err != nil {
		return err
	}
	c2, err := one.Div(one.Sub(o.pow2))
	if err != nil {
		return err
	}
	for i, p := range params {
		m, v, g := o.m[i].Data, o.v[i].Data, grads[i].Data
		for k := range p.Data {
			m[k] = m[k].Mul(o.Beta1).Add(g[k].Mul(omb1))
			v[k] = v[k].Mul(o.Beta2).Add(g[k].Mul(g[k]).Mul(omb2))
			mh := m[k].Mul(c1)
			vh := v[k].Mul(c2)
			sq, err := vh.Sqrt()
			if err != nil {
				return fmt.Errorf("adam: parameter %d element %d: %w", i, k, err)
			}
			r, err := o.LR.Div(sq.Add(o.Eps))
			if err != nil {
				return fmt.Errorf("adam: parameter %d element %d: %w", i, k, err)
			}
			p.Data[k] = p.Data[k].Sub(r.Mul(mh))
		}
	}
	return nil
}
