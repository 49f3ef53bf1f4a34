package check_test

import (
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

// unary builds elementwise rules from f and its derivative d (given x).
// vjpD, when set, is the derivative the VJP uses instead of d.
func unary[T spec.Scalar[T]](f, d, vjpD func(x T) (T, error)) check.Rules[T] {
	if vjpD == nil {
		vjpD = d
	}
	mapT := func(x spec.Tensor[T], g func(k int) (T, error)) (spec.Tensor[T], error) {
		y := x.Clone()
		for k := range y.Data {
			v, err := g(k)
			if err != nil {
				return y, err
			}
			y.Data[k] = v
		}
		return y, nil
	}
	return check.Rules[T]{
		Forward: func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
			return mapT(xs[0], func(k int) (T, error) { return f(xs[0].Data[k]) })
		},
		JVP: func(xs []spec.Tensor[T], _ spec.Tensor[T], dxs []spec.Tensor[T]) (spec.Tensor[T], error) {
			return mapT(xs[0], func(k int) (T, error) {
				g, err := d(xs[0].Data[k])
				return g.Mul(dxs[0].Data[k]), err
			})
		},
		VJP: func(xs []spec.Tensor[T], _ spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
			g, err := mapT(xs[0], func(k int) (T, error) {
				g, err := vjpD(xs[0].Data[k])
				return g.Mul(dy.Data[k]), err
			})
			return []spec.Tensor[T]{g}, err
		},
	}
}

// softplus(x) = log(1 + eˣ), softplus′(x) = 1/(1 + e⁻ˣ); wrong uses eˣ
// in JVP and VJP alike, so only the derivative oracle can tell.
func softplusRules[T spec.Scalar[T]](wrong bool) check.Rules[T] {
	one := spec.One[T]()
	f := func(x T) (T, error) {
		e, err := x.Exp()
		if err != nil {
			return e, err
		}
		return one.Add(e).Log()
	}
	d := func(x T) (T, error) {
		if wrong {
			return x.Exp()
		}
		e, err := x.Neg().Exp()
		if err != nil {
			return e, err
		}
		return one.Div(one.Add(e))
	}
	return unary(f, d, nil)
}

func softplus(wrong bool) check.Primitive {
	return check.Primitive{Name: "softplus_u", Arity: 1, Doc: "log(1+eˣ)",
		Interval: softplusRules[spec.Interval](wrong), Dual: softplusRules[check.Dual](wrong)}
}

// leaky(x) = x for x > 0, x/4 otherwise, with leaky′(0) = 1/4 (the left
// slope). wrongAtKink makes the VJP use slope 1 at x = 0 only.
func leakyRules[T spec.Scalar[T]](wrongAtKink bool) check.Rules[T] {
	q := spec.ConstRat[T](1, 4)
	three := spec.ConstRat[T](3, 4)
	f := func(x T) (T, error) { return x.Relu().Mul(three).Add(x.Mul(q)), nil } // x>0: x; x≤0: x/4
	d := func(x T) (T, error) { return x.Step().Mul(three).Add(q), nil }
	var v func(x T) (T, error)
	if wrongAtKink {
		v = func(x T) (T, error) {
			if x.IsZero() {
				return spec.One[T](), nil
			}
			return d(x)
		}
	}
	return unary(f, d, v)
}

func leaky(wrong bool) check.Primitive {
	return check.Primitive{Name: "leaky_u", Arity: 1, Exact: true, Kinks: []*big.Rat{new(big.Rat)}, Doc: "leaky relu, slope 1/4",
		Rat: leakyRules[spec.Rat](wrong), Interval: leakyRules[spec.Interval](wrong), Dual: leakyRules[check.Dual](wrong)}
}

// TestUnaryOps: an inexact op is decided by the interval and
// dual-interval oracles and its consistent derivative bug is caught by
// the derivative obligation only; a bug at a declared kink is caught by
// adjointness with the default cases, and the shrunk case sits at the
// kink.
func TestUnaryOps(t *testing.T) {
	rep, err := check.Find(softplus(false), check.Options{})
	if err != nil || rep.Failure != nil {
		t.Fatalf("softplus: %v %v", rep.Failure, err)
	}
	if rep.Decided["adjointness"]["interval"] != 100 || rep.Decided["derivative"]["dual-interval"] == 0 {
		t.Errorf("softplus oracles: %v", rep.Decided)
	}
	rep, _ = check.Find(softplus(true), check.Options{})
	if f := rep.Failure; f == nil || obligations.Obligation(f.Law) != obligations.Derivative {
		t.Errorf("wrong softplus derivative: %v", rep.Failure)
	}
	if rep, _ = check.Find(leaky(false), check.Options{}); rep.Failure != nil {
		t.Errorf("leaky: %v", rep.Failure)
	}
	rep, _ = check.Find(leaky(true), check.Options{})
	f := rep.Failure
	if f == nil || obligations.Obligation(f.Law) != obligations.Adjointness {
		t.Fatalf("leaky wrong at kink: %v", f)
	}
	// Shrunk: one element at the kink 0, where ⟨jvp,δ⟩ = dx·δ/4 and
	// ⟨dx,vjp⟩ = dx·δ.
	x := f.Inputs[0]
	if len(x.Data) != 1 || !x.Data[0].IsZero() {
		t.Errorf("shrunk input %v, want one element at the kink 0", x)
	}
}
