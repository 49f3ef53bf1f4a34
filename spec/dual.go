package spec

import "math/big"

// Dual is a dual number Re + Du·ε with ε² = 0 over any scalar T. Duals
// nest (Dual[Dual[Rat]]) for higher derivatives. Non-smooth choices
// (Abs, Max, Min, Sign, Step, comparisons) decide on the primal Re; a tie
// in Max or Min gives the average of the two tangents, which matches the
// 0.5/0.5 tie convention of the max/min VJP, and Abs'(0) = 0.
type Dual[T Scalar[T]] struct {
	Re, Du T
}

// MakeDual returns re + du·ε.
func MakeDual[T Scalar[T]](re, du T) Dual[T] { return Dual[T]{Re: re, Du: du} }

// Add is (a+b, a'+b').
func (x Dual[T]) Add(y Dual[T]) Dual[T] { return Dual[T]{x.Re.Add(y.Re), x.Du.Add(y.Du)} }

// Sub is (a-b, a'-b').
func (x Dual[T]) Sub(y Dual[T]) Dual[T] { return Dual[T]{x.Re.Sub(y.Re), x.Du.Sub(y.Du)} }

// Mul is (ab, a'b + ab').
func (x Dual[T]) Mul(y Dual[T]) Dual[T] {
	return Dual[T]{x.Re.Mul(y.Re), x.Du.Mul(y.Re).Add(x.Re.Mul(y.Du))}
}

// Neg is (-a, -a').
func (x Dual[T]) Neg() Dual[T] { return Dual[T]{x.Re.Neg(), x.Du.Neg()} }

// Div is (a/b, (a' - (a/b)·b')/b).
func (x Dual[T]) Div(y Dual[T]) (Dual[T], error) {
	q, err := x.Re.Div(y.Re)
	if err != nil {
		return Dual[T]{}, err
	}
	d, err := x.Du.Sub(q.Mul(y.Du)).Div(y.Re)
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{q, d}, nil
}

// Abs is (|a|, sign(a)·a'), so Abs'(0) = 0.
func (x Dual[T]) Abs() Dual[T] { return Dual[T]{x.Re.Abs(), x.Re.Sign().Mul(x.Du)} }

func (x Dual[T]) choose(y Dual[T], wantGreater bool) Dual[T] {
	c, ok := x.Re.Compare(y.Re)
	if ok && c != 0 {
		if (c > 0) == wantGreater {
			return x
		}
		return y
	}
	var re T
	if wantGreater {
		re = x.Re.Max(y.Re)
	} else {
		re = x.Re.Min(y.Re)
	}
	var z T
	half := z.FromRat(big.NewRat(1, 2))
	return Dual[T]{re, x.Du.Add(y.Du).Mul(half)}
}

// Max picks the operand with the larger primal; ties average tangents.
func (x Dual[T]) Max(y Dual[T]) Dual[T] { return x.choose(y, true) }

// Min picks the operand with the smaller primal; ties average tangents.
func (x Dual[T]) Min(y Dual[T]) Dual[T] { return x.choose(y, false) }

// Sign is the primal's sign with a zero tangent.
func (x Dual[T]) Sign() Dual[T] { var z T; return Dual[T]{x.Re.Sign(), z} }

// Step is the primal's step with a zero tangent.
func (x Dual[T]) Step() Dual[T] { var z T; return Dual[T]{x.Re.Step(), z} }

// Sqrt is (√a, a'/(2√a)) for a > 0 and a zero tangent otherwise, matching
// the sqrt VJP convention.
func (x Dual[T]) Sqrt() (Dual[T], error) {
	s, err := x.Re.Sqrt()
	if err != nil {
		return Dual[T]{}, err
	}
	var z T
	if c, ok := x.Re.Compare(z); !ok || c <= 0 {
		return Dual[T]{s, z}, nil
	}
	d, err := x.Du.Div(s.Add(s))
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{s, d}, nil
}

// Exp is (e^a, e^a·a').
func (x Dual[T]) Exp() (Dual[T], error) {
	e, err := x.Re.Exp()
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{e, e.Mul(x.Du)}, nil
}

// Log is (ln a, a'/a).
func (x Dual[T]) Log() (Dual[T], error) {
	l, err := x.Re.Log()
	if err != nil {
		return Dual[T]{}, err
	}
	d, err := x.Du.Div(x.Re)
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{l, d}, nil
}

// Log1p is (ln(1+a), a'/(1+a)).
func (x Dual[T]) Log1p() (Dual[T], error) {
	l, err := x.Re.Log1p()
	if err != nil {
		return Dual[T]{}, err
	}
	d, err := x.Du.Div(x.Re.FromInt(1).Add(x.Re))
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{l, d}, nil
}

// Tanh is (t, (1-t²)·a').
func (x Dual[T]) Tanh() (Dual[T], error) {
	t, err := x.Re.Tanh()
	if err != nil {
		return Dual[T]{}, err
	}
	one := t.FromInt(1)
	return Dual[T]{t, one.Sub(t.Mul(t)).Mul(x.Du)}, nil
}

// Sin is (sin a, cos a·a').
func (x Dual[T]) Sin() (Dual[T], error) {
	s, err := x.Re.Sin()
	if err != nil {
		return Dual[T]{}, err
	}
	c, err := x.Re.Cos()
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{s, c.Mul(x.Du)}, nil
}

// Cos is (cos a, -sin a·a').
func (x Dual[T]) Cos() (Dual[T], error) {
	s, err := x.Re.Sin()
	if err != nil {
		return Dual[T]{}, err
	}
	c, err := x.Re.Cos()
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{c, s.Neg().Mul(x.Du)}, nil
}

// Compare orders the primals.
func (x Dual[T]) Compare(y Dual[T]) (int, bool) { return x.Re.Compare(y.Re) }

// IsZero reports that both parts are zero.
func (x Dual[T]) IsZero() bool { return x.Re.IsZero() && x.Du.IsZero() }

// Same compares both parts.
func (x Dual[T]) Same(y Dual[T]) bool { return x.Re.Same(y.Re) && x.Du.Same(y.Du) }

// FromInt returns n + 0ε.
func (Dual[T]) FromInt(n int64) Dual[T] { var z T; return Dual[T]{z.FromInt(n), z} }

// FromRat returns r + 0ε.
func (Dual[T]) FromRat(r *big.Rat) Dual[T] { var z T; return Dual[T]{z.FromRat(r), z} }

// Float64 approximates the primal.
func (x Dual[T]) Float64() float64 { return x.Re.Float64() }

// String prints "re+duε".
func (x Dual[T]) String() string { return x.Re.String() + "+" + x.Du.String() + "ε" }

// Kind is "dual(" + the inner kind + ")".
func (Dual[T]) Kind() string { var z T; return "dual(" + z.Kind() + ")" }

// Relu is (relu(re), Step(re)·du): relu'(0) = 0, as the relu VJP says.
func (x Dual[T]) Relu() Dual[T] { return Dual[T]{x.Re.Relu(), x.Re.Step().Mul(x.Du)} }

// Clamp is (clamp(re), du·Step(re−lo)·Step(hi−re)): the derivative is 1
// only strictly inside (lo, hi), as the clamp VJP says.
func (x Dual[T]) Clamp(lo, hi Dual[T]) Dual[T] {
	re := x.Re.Clamp(lo.Re, hi.Re)
	inside := x.Re.Sub(lo.Re).Step().Mul(hi.Re.Sub(x.Re).Step())
	// Outside the interval the value follows the active bound.
	du := inside.Mul(x.Du)
	if c, ok := x.Re.Compare(lo.Re); ok && c <= 0 {
		du = du.Add(lo.Du)
	} else if c, ok := x.Re.Compare(hi.Re); ok && c >= 0 {
		du = du.Add(hi.Du)
	}
	return Dual[T]{re, du}
}
