package spec

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// Rat is an exact rational with value semantics: operations never mutate
// a receiver's big.Rat, so Rats can be copied and shared freely. The zero
// value is 0.
type Rat struct {
	r *big.Rat // nil means 0; never mutated once stored
}

var ratZero = new(big.Rat)

func (x Rat) v() *big.Rat {
	if x.r == nil {
		return ratZero
	}
	return x.r
}

// NewRat returns num/den; it panics only on a zero denominator, which is a
// programming error (use ParseRat for user input).
func NewRat(num, den int64) Rat { return Rat{r: big.NewRat(num, den)} }

// RatFromBig copies b into a Rat.
func RatFromBig(b *big.Rat) Rat { return Rat{r: new(big.Rat).Set(b)} }

// RatFromFloat64 returns the exact value of a finite float64.
func RatFromFloat64(f float64) (Rat, error) {
	r := new(big.Rat)
	if r.SetFloat64(f) == nil {
		return Rat{}, fmt.Errorf("%v is not a finite number", f)
	}
	return Rat{r: r}, nil
}

// ratSyntax is the accepted spelling: an optionally signed integer,
// "p/q", or a decimal with an optional exponent. Hex, binary, octal and
// underscores (which big.Rat.SetString would accept) are rejected.
var ratSyntax = regexp.MustCompile(`^[+-]?([0-9]+/[0-9]+|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)$`)

// ParseRat reads "p/q", an integer, or a decimal such as "-1.5e3" exactly.
func ParseRat(s string) (Rat, error) {
	t := strings.TrimSpace(s)
	if t == "" || len(t) > 4096 || !ratSyntax.MatchString(t) {
		return Rat{}, fmt.Errorf("malformed rational %q", s)
	}
	// Guard against huge exponents that would allocate enormous integers.
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		var e int
		if _, err := fmt.Sscan(t[i+1:], &e); err != nil || e > 4096 || e < -4096 {
			return Rat{}, fmt.Errorf("malformed rational %q", s)
		}
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return Rat{}, fmt.Errorf("malformed rational %q", s)
	}
	return Rat{r: r}, nil
}

// Big returns a fresh copy of the value as a big.Rat.
func (x Rat) Big() *big.Rat { return new(big.Rat).Set(x.v()) }

// Add returns x+y exactly.
func (x Rat) Add(y Rat) Rat { return Rat{r: new(big.Rat).Add(x.v(), y.v())} }

// Sub returns x-y exactly.
func (x Rat) Sub(y Rat) Rat { return Rat{r: new(big.Rat).Sub(x.v(), y.v())} }

// Mul returns x*y exactly.
func (x Rat) Mul(y Rat) Rat { return Rat{r: new(big.Rat).Mul(x.v(), y.v())} }

// Neg returns -x.
func (x Rat) Neg() Rat { return Rat{r: new(big.Rat).Neg(x.v())} }

// Div returns x/y, or a DomainError when y is zero.
func (x Rat) Div(y Rat) (Rat, error) {
	if y.v().Sign() == 0 {
		return Rat{}, &DomainError{Op: "div", Scalar: "rat", Reason: "division by zero"}
	}
	return Rat{r: new(big.Rat).Quo(x.v(), y.v())}, nil
}

// Abs returns |x|.
func (x Rat) Abs() Rat {
	if x.v().Sign() >= 0 {
		return x
	}
	return x.Neg()
}

// Max returns the larger of x and y.
func (x Rat) Max(y Rat) Rat {
	if x.v().Cmp(y.v()) >= 0 {
		return x
	}
	return y
}

// Min returns the smaller of x and y.
func (x Rat) Min(y Rat) Rat {
	if x.v().Cmp(y.v()) <= 0 {
		return x
	}
	return y
}

// Sign returns -1, 0 or 1.
func (x Rat) Sign() Rat { return x.FromInt(int64(x.v().Sign())) }

// Step returns 1 if x > 0 else 0.
func (x Rat) Step() Rat {
	if x.v().Sign() > 0 {
		return x.FromInt(1)
	}
	return Rat{}
}

// Sqrt returns the exact square root when numerator and denominator are
// perfect squares, and a DomainError otherwise (or for x < 0).
func (x Rat) Sqrt() (Rat, error) {
	v := x.v()
	if v.Sign() < 0 {
		return Rat{}, &DomainError{Op: "sqrt", Scalar: "rat", Reason: "negative argument " + x.String()}
	}
	n, d := new(big.Int).Sqrt(v.Num()), new(big.Int).Sqrt(v.Denom())
	if new(big.Int).Mul(n, n).Cmp(v.Num()) != 0 || new(big.Int).Mul(d, d).Cmp(v.Denom()) != 0 {
		return Rat{}, &DomainError{Op: "sqrt", Scalar: "rat", Reason: "no exact rational square root of " + x.String()}
	}
	return Rat{r: new(big.Rat).SetFrac(n, d)}, nil
}

func (x Rat) inexact(op string) (Rat, error) {
	return Rat{}, &DomainError{Op: op, Scalar: "rat", Reason: "no exact rational semantics"}
}

// Exp is not exact over the rationals: it always returns a DomainError.
func (x Rat) Exp() (Rat, error) { return x.inexact("exp") }

// Log is not exact over the rationals: it always returns a DomainError.
func (x Rat) Log() (Rat, error) { return x.inexact("log") }

// Log1p is not exact over the rationals: it always returns a DomainError
// (like Log, even at 0, so that the verdict does not depend on the value).
func (x Rat) Log1p() (Rat, error) { return x.inexact("log1p") }

// Tanh is not exact over the rationals: it always returns a DomainError.
func (x Rat) Tanh() (Rat, error) { return x.inexact("tanh") }

// Sin is not exact over the rationals: it always returns a DomainError.
func (x Rat) Sin() (Rat, error) { return x.inexact("sin") }

// Cos is not exact over the rationals: it always returns a DomainError.
func (x Rat) Cos() (Rat, error) { return x.inexact("cos") }

// Compare orders x and y; it is always decided.
func (x Rat) Compare(y Rat) (int, bool) { return x.v().Cmp(y.v()), true }

// IsZero reports x == 0.
func (x Rat) IsZero() bool { return x.v().Sign() == 0 }

// Same reports x == y exactly.
func (x Rat) Same(y Rat) bool { return x.v().Cmp(y.v()) == 0 }

// FromInt returns n.
func (Rat) FromInt(n int64) Rat {
	if n == 0 {
		return Rat{}
	}
	return Rat{r: new(big.Rat).SetInt64(n)}
}

// FromRat copies r.
func (Rat) FromRat(r *big.Rat) Rat { return RatFromBig(r) }

// Float64 returns the nearest float64.
func (x Rat) Float64() float64 {
	f, _ := x.v().Float64()
	return f
}

// String prints "p/q", or "p" for integers.
func (x Rat) String() string { return x.v().RatString() }

// Kind is "rat".
func (Rat) Kind() string { return "rat" }

// BitLen is the total bit length of numerator and denominator, a measure
// of the cost of further arithmetic.
func (x Rat) BitLen() int { return x.v().Num().BitLen() + x.v().Denom().BitLen() }

// Relu is max(x, 0).
func (x Rat) Relu() Rat { return x.Max(Rat{}) }

// Clamp is min(max(x, lo), hi).
func (x Rat) Clamp(lo, hi Rat) Rat { return x.Max(lo).Min(hi) }

// SmallFrac returns x = p/q in lowest terms when both fit in an int64 (q >
// 0), without allocating.
func (x Rat) SmallFrac() (p, q int64, ok bool) {
	v := x.v()
	if !v.Num().IsInt64() || !v.Denom().IsInt64() {
		return 0, 0, false
	}
	return v.Num().Int64(), v.Denom().Int64(), true
}
