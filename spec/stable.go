package spec

import (
	"fmt"
	"math/big"
)

// This file holds the numerically stable scalar forms of softplus and
// safe_log shared by the registry rules and the IR evaluators. The
// formulas and the arguments for them are in the package documentation
// (section "Numerics of softplus and safe_log").

// spTail is the threshold below which log(softplus(x)) is computed as
// x − e^x/2 (see the package documentation): for x ≤ −40, e^x < 2^-57.
const spTail = -40

// sigmoidScalar is 1/(1+e^-x) for x ≥ 0 and e^x/(1+e^x) for x < 0: the
// exponential never overflows, and over floats each branch has a
// relative error of a few ulps. An undecided sign (an Interval straddling
// 0, a NaN) takes the first form, which is an identity for every real x.
func sigmoidScalar[T Scalar[T]](x T) (T, error) {
	one := x.FromInt(1)
	if c, decided := x.Compare(x.FromInt(0)); decided && c < 0 {
		e, err := x.Exp()
		if err != nil {
			return e, err
		}
		return e.Div(one.Add(e))
	}
	e, err := x.Neg().Exp()
	if err != nil {
		return e, err
	}
	return one.Div(one.Add(e))
}

// softplusScalar is softplus(x) = log(1+e^x) in a form that neither
// overflows nor loses the digits of e^x for x ≪ 0 (where log(1+e^x)
// rounds to 0; softplus(−37) over F64 is 8.53e-17, not 0):
//
//	x ≥ 0 decided:  x + log1p(e^−x)
//	x < 0 decided:  log1p(e^x)
//	undecided:      relu(x) + log1p(e^−|x|)
//
// Each is an identity for every real x, so each is sound over Interval;
// where x's sign is decided the first two give the same floats as the
// third (relu and |x| are then x or 0, −x) but are analytic, so that the
// chain rule over Dual yields σ(x) everywhere — the branch-free form's
// kinks would give relu′(0) + (d/dx)log1p(e^−|x|) = 0 + 0 at x = 0, not
// σ(0) = 1/2. The undecided form is reached only by enclosures straddling
// 0, where no single derivative is claimed.
func softplusScalar[T Scalar[T]](x T) (T, error) {
	c, decided := x.Compare(x.FromInt(0))
	var e T
	var err error
	switch {
	case decided && c >= 0:
		e, err = x.Neg().Exp()
	case decided:
		e, err = x.Exp()
	default:
		e, err = x.Abs().Neg().Exp()
	}
	if err != nil {
		return e, err
	}
	l, err := e.Log1p()
	if err != nil {
		return l, err
	}
	switch {
	case decided && c >= 0:
		return x.Add(l), nil
	case decided:
		return l, nil
	}
	return x.Relu().Add(l), nil
}

// inTail reports that x ≤ spTail is decided, and returns t = e^x then.
func inTail[T Scalar[T]](x T) (t T, tail bool, err error) {
	if c, decided := x.Compare(x.FromInt(spTail)); !decided || c > 0 {
		return t, false, nil
	}
	t, err = x.Exp()
	return t, err == nil, err
}

// logSoftplusTail is log(softplus(x)) for x ≤ −40 given t = e^x: x − t/2.
func logSoftplusTail[T Scalar[T]](x, t T) T {
	return x.Sub(t.Mul(x.FromRat(big.NewRat(1, 2))))
}

// safeLogDomain is the error of safe_log where softplus(x)+ε is not
// (decidedly) positive.
func safeLogDomain[T Scalar[T]](x, eps T) error {
	return &DomainError{Op: "safe_log", Scalar: x.Kind(), Reason: fmt.Sprintf(
		"softplus(x)+ε is not > 0 at x = %s with ε = %s (an ε ≤ 0 needs x > log(e^−ε − 1))", x, eps)}
}

// SafeLogScalar is safe_log(x) = log(softplus(x) + ε), the forward rule
// of the registry's safe_log (with ε its Eps attribute converted by
// FromRat) and of the IR's safe_log with a const ε parent. It is computed
// in the stable forms of the package documentation: directly as
// log(softplus(x) + ε) unless x ≤ −40 is decided, and there from
// a = log(softplus(x)) = x − e^x/2 by log(e^a + ε) = max(a, b) +
// log1p(e^(min(a,b) − max(a,b))) with b = log ε for ε > 0, by a for
// ε = 0, and by a + log1p(−e^(b−a)) with b = log(−ε) for ε < 0.
//
// When ε ≤ 0 is possible (ε decidedly ≤ 0, or an Interval ε straddling
// 0) and softplus(x)+ε > 0 is not decided, it returns a *DomainError
// naming x and ε: over floats that includes a NaN x, and x = −∞ when
// ε < 0. With ε > 0 or ε = 0 the argument is positive for every real x
// and there is no domain error (over floats, safe_log(−∞) with ε = 0 is
// the limit −∞, and a NaN x gives NaN).
func SafeLogScalar[T Scalar[T]](x, eps T) (T, error) {
	var zero T
	sign, decided := eps.Compare(zero)
	t, tail, err := inTail(x)
	if err != nil {
		return x, err
	}
	switch {
	case tail && decided && sign == 0:
		return logSoftplusTail(x, t), nil
	case tail && decided && sign > 0:
		a := logSoftplusTail(x, t)
		b, err := eps.Log()
		if err != nil {
			return x, err
		}
		m, lo := a.Max(b), a.Min(b)
		e, err := lo.Sub(m).Exp()
		if err != nil {
			return x, err
		}
		l, err := e.Log1p()
		if err != nil {
			return x, err
		}
		return m.Add(l), nil
	case tail && decided && sign < 0:
		a := logSoftplusTail(x, t)
		b, err := eps.Neg().Log()
		if err != nil {
			return x, err
		}
		if c, ok := a.Compare(b); !ok || c <= 0 {
			return x, safeLogDomain(x, eps)
		}
		e, err := b.Sub(a).Exp()
		if err != nil {
			return x, err
		}
		l, err := e.Neg().Log1p()
		if err != nil {
			return x, err
		}
		return a.Add(l), nil
	}
	sp, err := softplusScalar(x)
	if err != nil {
		return x, err
	}
	s := sp.Add(eps)
	if !decided || sign < 0 {
		if c, ok := s.Compare(zero); !ok || c <= 0 {
			return x, safeLogDomain(x, eps)
		}
	}
	return s.Log()
}

// safeLogDeriv is d/dx safe_log(x) = σ(x)/(softplus(x) + ε), in the
// stable forms of the package documentation: directly unless x ≤ −40 is
// decided, and there as D0·s with D0 = σ(x)/softplus(x) = 1 − e^x/2 and
// s = softplus(x)/(softplus(x)+ε) = σ(a − log ε) for ε > 0, 1 for ε = 0
// and 1/(1 − e^(log(−ε) − a)) for ε < 0, a = log(softplus(x)). Where the
// forward rule has a domain error, so has the derivative.
func safeLogDeriv[T Scalar[T]](x, eps T) (T, error) {
	var zero T
	one := x.FromInt(1)
	sign, decided := eps.Compare(zero)
	t, tail, err := inTail(x)
	if err != nil {
		return x, err
	}
	if tail && decided {
		d0 := one.Sub(t.Mul(x.FromRat(big.NewRat(1, 2))))
		if sign == 0 {
			return d0, nil
		}
		a := logSoftplusTail(x, t)
		b, err := eps.Abs().Log()
		if err != nil {
			return x, err
		}
		if sign > 0 {
			s, err := sigmoidScalar(a.Sub(b))
			if err != nil {
				return x, err
			}
			return d0.Mul(s), nil
		}
		if c, ok := a.Compare(b); !ok || c <= 0 {
			return x, safeLogDomain(x, eps)
		}
		e, err := b.Sub(a).Exp()
		if err != nil {
			return x, err
		}
		return d0.Div(one.Sub(e))
	}
	sp, err := softplusScalar(x)
	if err != nil {
		return x, err
	}
	s := sp.Add(eps)
	if !decided || sign < 0 {
		if c, ok := s.Compare(zero); !ok || c <= 0 {
			return x, safeLogDomain(x, eps)
		}
	}
	sg, err := sigmoidScalar(x)
	if err != nil {
		return x, err
	}
	return sg.Div(s)
}
