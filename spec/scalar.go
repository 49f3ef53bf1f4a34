package spec

import (
	"fmt"
	"math/big"
)

// Scalar is the algebra the whole engine is generic over. T is the
// implementing type itself (F32 implements Scalar[F32]), so generic code
// is written as func f[T Scalar[T]](...). The zero value of every
// implementation is its additive zero.
//
// Methods that can fail for some scalar return an error instead of
// approximating: Rat division by zero, Rat exp/log/log1p/tanh/sin/cos, Rat sqrt
// of a non-square. Float scalars never fail on these (they follow IEEE
// 754); Interval returns sound enclosures.
type Scalar[T any] interface {
	// Add, Sub, Mul and Neg are the ring operations, one rounding each for
	// float scalars.
	Add(T) T
	Sub(T) T
	Mul(T) T
	Neg() T
	// Div divides; over Rat a zero divisor is an error.
	Div(T) (T, error)
	// Abs, Max, Min are the non-smooth choices; Dual decides them on the
	// primal (a tie in Max/Min averages the tangents, matching the 0.5/0.5
	// VJP convention); Interval returns the exact hull.
	Abs() T
	Max(T) T
	Min(T) T
	// Relu is max(x, 0) with relu'(0) = 0: for Dual the tangent is
	// Step(re)·du (not the tie average of Max).
	Relu() T
	// Clamp is min(max(x, lo), hi) with derivative 1 only strictly inside
	// (lo, hi): for Dual the tangent is du·Step(x−lo)·Step(hi−x).
	Clamp(lo, hi T) T
	// Sign is -1, 0 or 1 (Interval: the hull of the signs over the range).
	Sign() T
	// Step is 1 where x > 0 and 0 elsewhere: the derivative of relu with
	// relu'(0) = 0 (Interval: [0,1] when the range straddles 0).
	Step() T
	// Sqrt, Exp, Log, Log1p, Tanh, Sin and Cos are the elementary
	// functions. Log1p is ln(1+x), accurate for x near 0 where Log(1+x)
	// loses the digits of x: floats evaluate math.Log1p (NaN for x < −1,
	// −∞ at −1), Interval encloses it (a DomainError when Lo ≤ −1), Rat
	// has no exact value (a DomainError), and Dual's tangent is
	// du/(1+re).
	Sqrt() (T, error)
	Exp() (T, error)
	Log() (T, error)
	Log1p() (T, error)
	Tanh() (T, error)
	Sin() (T, error)
	Cos() (T, error)
	// Compare orders x against y. ok is false when the order cannot be
	// decided (a NaN, or overlapping intervals).
	Compare(y T) (c int, ok bool)
	// IsZero reports an exact zero (Interval: [0,0]; -0 counts as zero).
	IsZero() bool
	// Same reports representational identity: == for Rat, bit equality
	// for float scalars (so NaN payloads and signed zeros count), both
	// endpoints for Interval, both parts for Dual.
	Same(T) bool
	// FromInt and FromRat build constants of the receiver's type; the
	// receiver's value is ignored, so the zero value may be used. FromRat
	// rounds to nearest for float scalars and encloses for Interval.
	FromInt(int64) T
	FromRat(*big.Rat) T
	// Float64 approximates the value (the midpoint for Interval, the
	// primal for Dual) for display and for reported estimates.
	Float64() float64
	// String prints the value: "p/q" for Rat, a shortest decimal for
	// floats.
	String() string
	// Kind names the algebra: "rat", "f32", "f64", "binary32",
	// "interval", "dual(...)".
	Kind() string
}

// DomainError reports an operation a scalar cannot perform exactly or at
// all, such as exp over Rat or division by an exact zero.
type DomainError struct {
	Op     string // the operation, e.g. "exp"
	Scalar string // the scalar kind, e.g. "rat"
	Reason string // why
}

func (e *DomainError) Error() string {
	return fmt.Sprintf("%s over %s: %s", e.Op, e.Scalar, e.Reason)
}

// Zero returns the additive zero of T.
func Zero[T Scalar[T]]() T {
	var z T
	return z
}

// One returns the multiplicative one of T.
func One[T Scalar[T]]() T {
	var z T
	return z.FromInt(1)
}

// Const returns the integer n as a T.
func Const[T Scalar[T]](n int64) T {
	var z T
	return z.FromInt(n)
}

// ConstRat returns the rational num/den as a T (rounded for float
// scalars). den must be non-zero.
func ConstRat[T Scalar[T]](num, den int64) T {
	var z T
	return z.FromRat(big.NewRat(num, den))
}

// KindOf names the scalar algebra T.
func KindOf[T Scalar[T]]() string {
	var z T
	return z.Kind()
}
