package spec

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
)

// Rat is an exact rational with value semantics: operations never mutate
// an operand's storage, so Rats can be copied and shared freely. The zero
// value is 0.
//
// # Representation
//
// A Rat holds one of three canonical forms, chosen by its value alone (so
// two Rats are equal exactly when their forms are equal):
//
//   - a small dyadic m·2^e with m an odd int64 (so |m| ≤ 2^63 − 1) and
//     e an int, or m = 0, e = 0 for zero (the zero value);
//   - a big dyadic b·2^e with b an odd big.Int of magnitude ≥ 2^63;
//   - any other rational p/q (q > 0 not a power of two) as a *big.Rat in
//     lowest terms.
//
// Every binary32 and binary64 value is a dyadic, and +, −, × of dyadics
// are dyadic: m₁2^e₁ + m₂2^e₂ = (m₁·2^(e₁−e) + m₂·2^(e₂−e))·2^e with
// e = min(e₁, e₂), and m₁2^e₁ · m₂2^e₂ = (m₁m₂)·2^(e₁+e₂). Such results
// need no GCD: the form is restored by dropping the trailing zero bits of
// the mantissa into the exponent (a product of odd mantissas is odd, so a
// product needs not even that). Only division and operations with a
// non-dyadic operand go through big.Rat, whose result is brought back to
// the dyadic forms when its denominator is a power of two. Observable
// results (String, Compare, Same, BitLen, Big, Float64) are those of the
// reduced fraction p/q, exactly as when every value was a big.Rat.
type Rat struct {
	m int64    // small dyadic mantissa (odd), or 0 for zero
	e int      // binary exponent of a dyadic
	b *big.Int // big dyadic mantissa (odd, ≥ 2^63 in magnitude); never mutated once stored
	r *big.Rat // non-dyadic value in lowest terms; never mutated once stored
}

var ratZero = new(big.Rat)

// dySmall returns m·2^e in canonical form (any m, MinInt64 included).
func dySmall(m int64, e int) Rat {
	if m == 0 {
		return Rat{}
	}
	tz := bits.TrailingZeros64(uint64(m))
	return Rat{m: m >> tz, e: e + tz}
}

// dyBig returns z·2^e in canonical form; z is owned by the result (it is
// shifted in place and may be stored).
func dyBig(z *big.Int, e int) Rat {
	if z.Sign() == 0 {
		return Rat{}
	}
	if tz := z.TrailingZeroBits(); tz > 0 {
		z.Rsh(z, tz)
		e += int(tz)
	}
	if z.IsInt64() {
		return Rat{m: z.Int64(), e: e}
	}
	return Rat{b: z, e: e}
}

// isPow2 reports whether the positive d is a power of two.
func isPow2(d *big.Int) bool { return d.TrailingZeroBits() == uint(d.BitLen()-1) }

// fromBigRat returns the value of r in canonical form; r is owned by the
// result (it may be stored, or its numerator taken).
func fromBigRat(r *big.Rat) Rat {
	if r.Sign() == 0 {
		return Rat{}
	}
	if r.IsInt() {
		return dyBig(r.Num(), 0)
	}
	if d := r.Denom(); isPow2(d) {
		return dyBig(r.Num(), -(d.BitLen() - 1))
	}
	return Rat{r: r}
}

// dyadic reports whether x is a dyadic form (zero included).
func (x Rat) dyadic() bool { return x.r == nil }

// mant returns the dyadic mantissa of x as a big.Int: x.b itself (read
// only) or a fresh one.
func (x Rat) mant() *big.Int {
	if x.b != nil {
		return x.b
	}
	return new(big.Int).SetInt64(x.m)
}

// v returns the value as a big.Rat: x.r itself (read only), the shared
// zero, or a fresh one for a dyadic.
func (x Rat) v() *big.Rat {
	switch {
	case x.r != nil:
		return x.r
	case x.b == nil && x.m == 0:
		return ratZero
	}
	n := x.mant()
	if x.e >= 0 {
		if x.b != nil {
			n = new(big.Int).Lsh(n, uint(x.e))
		} else {
			n.Lsh(n, uint(x.e))
		}
		return new(big.Rat).SetInt(n)
	}
	// n/2^−e is already in lowest terms (n is odd): set the parts through
	// Num and Denom, which big.Rat documents as references once the
	// denominator is initialised, instead of SetFrac's GCD.
	z := new(big.Rat).SetFrac64(1, 2)
	z.Num().Set(n)
	z.Denom().Lsh(z.Denom().SetInt64(1), uint(-x.e))
	return z
}

// NewRat returns num/den; it panics only on a zero denominator, which is a
// programming error (use ParseRat for user input).
func NewRat(num, den int64) Rat { return fromBigRat(big.NewRat(num, den)) }

// RatFromBig copies b into a Rat.
func RatFromBig(b *big.Rat) Rat { return fromBigRat(new(big.Rat).Set(b)) }

// RatFromFloat64 returns the exact value of a finite float64: the dyadic
// f = frac·2^exp with frac·2^53 an integer.
func RatFromFloat64(f float64) (Rat, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Rat{}, fmt.Errorf("%v is not a finite number", f)
	}
	if f == 0 {
		return Rat{}, nil
	}
	frac, exp := math.Frexp(f) // |frac| in [1/2, 1): frac·2^53 is an exact integer
	return dySmall(int64(frac*(1<<53)), exp-53), nil
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
	return fromBigRat(r), nil
}

// Big returns a fresh copy of the value as a big.Rat.
func (x Rat) Big() *big.Rat {
	if x.r != nil || (x.b == nil && x.m == 0) {
		return new(big.Rat).Set(x.v())
	}
	return x.v() // fresh for a dyadic
}

// signum is the sign of x: −1, 0 or 1.
func (x Rat) signum() int {
	switch {
	case x.r != nil:
		return x.r.Sign()
	case x.b != nil:
		return x.b.Sign()
	case x.m > 0:
		return 1
	case x.m < 0:
		return -1
	}
	return 0
}

// Add returns x+y exactly.
func (x Rat) Add(y Rat) Rat {
	if x.r == nil && y.r == nil {
		if x.b == nil && x.m == 0 {
			return y
		}
		if y.b == nil && y.m == 0 {
			return x
		}
		if x.b == nil && y.b == nil {
			if z, ok := addSmall(x.m, x.e, y.m, y.e); ok {
				return z
			}
		}
		return addDyadic(x, y)
	}
	return fromBigRat(new(big.Rat).Add(x.v(), y.v()))
}

// addSmall is m₁2^e₁ + m₂2^e₂ in int64 arithmetic, or ok = false when an
// aligned mantissa or the sum does not fit.
func addSmall(m1 int64, e1 int, m2 int64, e2 int) (Rat, bool) {
	if e1 > e2 {
		m1, e1, m2, e2 = m2, e2, m1, e1
	}
	d := e2 - e1 // m2 is shifted left by d
	if d >= 63 {
		return Rat{}, false
	}
	s2 := m2 << uint(d)
	if s2>>uint(d) != m2 {
		return Rat{}, false
	}
	s := m1 + s2
	if (m1 > 0 && s2 > 0 && s < 0) || (m1 < 0 && s2 < 0 && s >= 0) {
		return Rat{}, false
	}
	return dySmall(s, e1), true
}

// addDyadic is the sum of two non-zero dyadics over big.Int.
func addDyadic(x, y Rat) Rat {
	if x.e > y.e {
		x, y = y, x
	}
	z := new(big.Int).Lsh(y.mant(), uint(y.e-x.e))
	if x.b != nil {
		z.Add(z, x.b)
	} else {
		z.Add(z, big.NewInt(x.m))
	}
	return dyBig(z, x.e)
}

// Sub returns x-y exactly.
func (x Rat) Sub(y Rat) Rat { return x.Add(y.Neg()) }

// Mul returns x*y exactly.
func (x Rat) Mul(y Rat) Rat {
	if x.r == nil && y.r == nil {
		if (x.b == nil && x.m == 0) || (y.b == nil && y.m == 0) {
			return Rat{}
		}
		if x.b == nil && y.b == nil {
			hi, lo := bits.Mul64(absU(x.m), absU(y.m))
			if hi == 0 && lo < 1<<63 {
				p := int64(lo)
				if (x.m < 0) != (y.m < 0) {
					p = -p
				}
				return Rat{m: p, e: x.e + y.e} // odd · odd is odd
			}
		}
		return dyBig(new(big.Int).Mul(x.mant(), y.mant()), x.e+y.e)
	}
	if x.IsZero() || y.IsZero() {
		return Rat{}
	}
	return fromBigRat(new(big.Rat).Mul(x.v(), y.v()))
}

// absU is |m| for an m ≠ MinInt64.
func absU(m int64) uint64 {
	if m < 0 {
		return uint64(-m)
	}
	return uint64(m)
}

// Neg returns -x.
func (x Rat) Neg() Rat {
	switch {
	case x.r != nil:
		return Rat{r: new(big.Rat).Neg(x.r)}
	case x.b != nil:
		return Rat{b: new(big.Int).Neg(x.b), e: x.e}
	}
	return Rat{m: -x.m, e: x.e}
}

// Div returns x/y, or a DomainError when y is zero.
func (x Rat) Div(y Rat) (Rat, error) {
	if y.IsZero() {
		return Rat{}, &DomainError{Op: "div", Scalar: "rat", Reason: "division by zero"}
	}
	if x.r == nil && y.r == nil && y.b == nil && (y.m == 1 || y.m == -1) {
		// x / ±2^e: a shift of the exponent.
		z := x
		if y.m < 0 {
			z = x.Neg()
		}
		if !z.IsZero() {
			z.e -= y.e
		}
		return z, nil
	}
	return fromBigRat(new(big.Rat).Quo(x.v(), y.v())), nil
}

// Abs returns |x|.
func (x Rat) Abs() Rat {
	if x.signum() >= 0 {
		return x
	}
	return x.Neg()
}

// cmp orders x and y: −1, 0 or 1.
func (x Rat) cmp(y Rat) int {
	if x.r != nil || y.r != nil {
		return x.v().Cmp(y.v())
	}
	sx, sy := x.signum(), y.signum()
	if sx != sy {
		if sx < sy {
			return -1
		}
		return 1
	}
	if sx == 0 {
		return 0
	}
	// Same sign, both non-zero: compare the magnitudes by the position of
	// the leading bit, then by the aligned mantissas.
	tx, ty := x.topBit(), y.topBit()
	c := 0
	switch {
	case tx < ty:
		c = -1
	case tx > ty:
		c = 1
	case x.b == nil && y.b == nil:
		// Equal leading positions: the shift is < 63 bits and fits.
		ax, ay := absU(x.m), absU(y.m)
		if x.e > y.e {
			ax <<= uint(x.e - y.e)
		} else {
			ay <<= uint(y.e - x.e)
		}
		switch {
		case ax < ay:
			c = -1
		case ax > ay:
			c = 1
		}
	default:
		ax, ay := new(big.Int).Abs(x.mant()), new(big.Int).Abs(y.mant())
		if x.e > y.e {
			ax.Lsh(ax, uint(x.e-y.e))
		} else {
			ay.Lsh(ay, uint(y.e-x.e))
		}
		c = ax.Cmp(ay)
	}
	return c * sx
}

// topBit is the bit length of a non-zero dyadic's mantissa plus its
// exponent: 2^(topBit−1) ≤ |x| < 2^topBit.
func (x Rat) topBit() int {
	if x.b != nil {
		return x.b.BitLen() + x.e
	}
	return bits.Len64(absU(x.m)) + x.e
}

// Max returns the larger of x and y.
func (x Rat) Max(y Rat) Rat {
	if x.cmp(y) >= 0 {
		return x
	}
	return y
}

// Min returns the smaller of x and y.
func (x Rat) Min(y Rat) Rat {
	if x.cmp(y) <= 0 {
		return x
	}
	return y
}

// Sign returns -1, 0 or 1.
func (x Rat) Sign() Rat { return x.FromInt(int64(x.signum())) }

// Step returns 1 if x > 0 else 0.
func (x Rat) Step() Rat {
	if x.signum() > 0 {
		return x.FromInt(1)
	}
	return Rat{}
}

// Sqrt returns the exact square root when numerator and denominator are
// perfect squares, and a DomainError otherwise (or for x < 0).
func (x Rat) Sqrt() (Rat, error) {
	if x.signum() < 0 {
		return Rat{}, &DomainError{Op: "sqrt", Scalar: "rat", Reason: "negative argument " + x.String()}
	}
	v := x.v()
	n, d := new(big.Int).Sqrt(v.Num()), new(big.Int).Sqrt(v.Denom())
	if new(big.Int).Mul(n, n).Cmp(v.Num()) != 0 || new(big.Int).Mul(d, d).Cmp(v.Denom()) != 0 {
		return Rat{}, &DomainError{Op: "sqrt", Scalar: "rat", Reason: "no exact rational square root of " + x.String()}
	}
	return fromBigRat(new(big.Rat).SetFrac(n, d)), nil
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
func (x Rat) Compare(y Rat) (int, bool) { return x.cmp(y), true }

// IsZero reports x == 0.
func (x Rat) IsZero() bool { return x.r == nil && x.b == nil && x.m == 0 }

// Same reports x == y exactly.
func (x Rat) Same(y Rat) bool {
	if x.r == nil && y.r == nil && x.b == nil && y.b == nil {
		return x.m == y.m && x.e == y.e // canonical small forms
	}
	return x.cmp(y) == 0
}

// FromInt returns n.
func (Rat) FromInt(n int64) Rat { return dySmall(n, 0) }

// FromRat copies r.
func (Rat) FromRat(r *big.Rat) Rat { return RatFromBig(r) }

// Float64 returns the nearest float64 (ties to even).
func (x Rat) Float64() float64 {
	if x.r == nil && x.b == nil {
		if x.m == 0 {
			return 0
		}
		// |m| < 2^53 and a normal result: m·2^e is exactly a float64.
		if a := absU(x.m); a < 1<<53 {
			if t := bits.Len64(a) + x.e; t >= -1021 && t <= 1024 {
				return math.Ldexp(float64(x.m), x.e)
			}
		}
	}
	f, _ := x.v().Float64()
	return f
}

// ExactFloat64 returns the float64 equal to x and true when x is one
// whose value is a normal float64 or zero (a dyadic m·2^e with |m| < 2^53
// and 2^-1022 ≤ |x| < 2^1024); otherwise 0 and false (x may still be a
// subnormal float64: callers needing it take the exact path). It does not
// allocate.
func (x Rat) ExactFloat64() (float64, bool) {
	if x.r != nil || x.b != nil {
		return 0, false
	}
	if x.m == 0 {
		return 0, true
	}
	if a := absU(x.m); a < 1<<53 {
		if t := bits.Len64(a) + x.e; t >= -1021 && t <= 1024 {
			return math.Ldexp(float64(x.m), x.e), true
		}
	}
	return 0, false
}

// String prints "p/q", or "p" for integers.
func (x Rat) String() string {
	if x.r == nil && x.b == nil {
		if x.m == 0 {
			return "0"
		}
		if x.e >= 0 && bits.Len64(absU(x.m))+x.e <= 62 {
			return strconv.FormatInt(x.m<<uint(x.e), 10)
		}
		if x.e < 0 && -x.e <= 62 {
			return strconv.FormatInt(x.m, 10) + "/" + strconv.FormatInt(1<<uint(-x.e), 10)
		}
	}
	return x.v().RatString()
}

// Kind is "rat".
func (Rat) Kind() string { return "rat" }

// BitLen is the total bit length of numerator and denominator of x = p/q
// in lowest terms (q ≥ 1; 0 is 0/1, of 1 bit), a measure of the cost of
// further arithmetic. For a dyadic m·2^e (m odd) that is len(m) + e + 1
// when e ≥ 0 (p = m·2^e, q = 1) and len(m) + (−e + 1) when e < 0 (p = m,
// q = 2^−e).
func (x Rat) BitLen() int {
	if x.r != nil {
		return x.r.Num().BitLen() + x.r.Denom().BitLen()
	}
	var n int
	switch {
	case x.b != nil:
		n = x.b.BitLen()
	case x.m == 0:
		return 1
	default:
		n = bits.Len64(absU(x.m))
	}
	if x.e >= 0 {
		return n + x.e + 1
	}
	return n - x.e + 1
}

// Relu is max(x, 0).
func (x Rat) Relu() Rat { return x.Max(Rat{}) }

// Clamp is min(max(x, lo), hi).
func (x Rat) Clamp(lo, hi Rat) Rat { return x.Max(lo).Min(hi) }

// SmallFrac returns x = p/q in lowest terms when both fit in an int64 (q >
// 0), without allocating.
func (x Rat) SmallFrac() (p, q int64, ok bool) {
	switch {
	case x.r != nil:
		if !x.r.Num().IsInt64() || !x.r.Denom().IsInt64() {
			return 0, 0, false
		}
		return x.r.Num().Int64(), x.r.Denom().Int64(), true
	case x.b != nil:
		return 0, 0, false // |b| ≥ 2^63
	case x.m == 0:
		return 0, 1, true
	case x.e >= 0:
		if bits.Len64(absU(x.m))+x.e <= 63 || (x.m == -1 && x.e == 63) {
			return x.m << uint(x.e), 1, true // −2^63 fits too
		}
	case -x.e <= 62:
		return x.m, 1 << uint(-x.e), true
	}
	return 0, 0, false
}
