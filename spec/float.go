package spec

import (
	"math"
	"math/big"
	"strconv"
)

// F32 is IEEE 754 binary32 arithmetic as the hardware does it, with
// exactly one rounding per operation. Every method converts its result
// explicitly to float32, which the Go specification guarantees prevents
// fusing a multiply and an add.
type F32 float32

// Add returns x+y rounded once.
func (x F32) Add(y F32) F32 { return F32(float32(x) + float32(y)) }

// Sub returns x-y rounded once.
func (x F32) Sub(y F32) F32 { return F32(float32(x) - float32(y)) }

// Mul returns x*y rounded once.
func (x F32) Mul(y F32) F32 { return F32(float32(float32(x) * float32(y))) }

// Neg returns -x.
func (x F32) Neg() F32 { return -x }

// Div returns x/y rounded once (IEEE: never an error).
func (x F32) Div(y F32) (F32, error) { return F32(float32(x) / float32(y)), nil }

// Abs returns |x|.
func (x F32) Abs() F32 { return F32(math.Abs(float64(x))) }

// Max returns the larger of x and y (x when equal, NaN when either is NaN).
func (x F32) Max(y F32) F32 { return fmax(x, y) }

// Min returns the smaller of x and y (x when equal, NaN when either is NaN).
func (x F32) Min(y F32) F32 { return fmin(x, y) }

// Sign returns -1, 0 or 1 (NaN for NaN).
func (x F32) Sign() F32 { return F32(fsign(float64(x))) }

// Step returns 1 if x > 0 else 0.
func (x F32) Step() F32 { return fstep(x) }

// Sqrt returns the correctly rounded square root.
func (x F32) Sqrt() (F32, error) { return F32(float32(math.Sqrt(float64(x)))), nil }

// Exp is computed in float64 and rounded to float32 (not claimed correctly
// rounded; a trusted boundary).
func (x F32) Exp() (F32, error) { return F32(float32(math.Exp(float64(x)))), nil }

// Log is computed in float64 and rounded to float32.
func (x F32) Log() (F32, error) { return F32(float32(math.Log(float64(x)))), nil }

// Log1p is math.Log1p computed in float64 and rounded to float32 (the
// same evaluation as Binary32.Log1p, so the two agree bit for bit).
func (x F32) Log1p() (F32, error) { return F32(float32(math.Log1p(float64(x)))), nil }

// Tanh is computed in float64 and rounded to float32.
func (x F32) Tanh() (F32, error) { return F32(float32(math.Tanh(float64(x)))), nil }

// Sin is computed in float64 and rounded to float32.
func (x F32) Sin() (F32, error) { return F32(float32(math.Sin(float64(x)))), nil }

// Cos is computed in float64 and rounded to float32.
func (x F32) Cos() (F32, error) { return F32(float32(math.Cos(float64(x)))), nil }

// Compare orders x and y; undecided when either is NaN.
func (x F32) Compare(y F32) (int, bool) { return fcmp(float64(x), float64(y)) }

// IsZero reports x == 0 (either sign).
func (x F32) IsZero() bool { return x == 0 }

// Same compares bit patterns.
func (x F32) Same(y F32) bool { return math.Float32bits(float32(x)) == math.Float32bits(float32(y)) }

// FromInt returns n rounded to nearest.
func (F32) FromInt(n int64) F32 { return F32(float32(n)) }

// FromRat returns r rounded to nearest, ties to even.
func (F32) FromRat(r *big.Rat) F32 {
	f, _ := r.Float32()
	return F32(f)
}

// Float64 widens x.
func (x F32) Float64() float64 { return float64(x) }

// String prints the shortest decimal that reads back as x.
func (x F32) String() string { return strconv.FormatFloat(float64(x), 'g', -1, 32) }

// Kind is "f32".
func (F32) Kind() string { return "f32" }

// F64 is IEEE 754 binary64 arithmetic, one rounding per operation.
type F64 float64

// Add returns x+y rounded once.
func (x F64) Add(y F64) F64 { return F64(float64(x) + float64(y)) }

// Sub returns x-y rounded once.
func (x F64) Sub(y F64) F64 { return F64(float64(x) - float64(y)) }

// Mul returns x*y rounded once.
func (x F64) Mul(y F64) F64 { return F64(float64(float64(x) * float64(y))) }

// Neg returns -x.
func (x F64) Neg() F64 { return -x }

// Div returns x/y rounded once.
func (x F64) Div(y F64) (F64, error) { return F64(float64(x) / float64(y)), nil }

// Abs returns |x|.
func (x F64) Abs() F64 { return F64(math.Abs(float64(x))) }

// Max returns the larger of x and y (x when equal, NaN when either is NaN).
func (x F64) Max(y F64) F64 { return fmax(x, y) }

// Min returns the smaller of x and y (x when equal, NaN when either is NaN).
func (x F64) Min(y F64) F64 { return fmin(x, y) }

// Sign returns -1, 0 or 1 (NaN for NaN).
func (x F64) Sign() F64 { return F64(fsign(float64(x))) }

// Step returns 1 if x > 0 else 0.
func (x F64) Step() F64 { return fstep(x) }

// Sqrt returns the correctly rounded square root.
func (x F64) Sqrt() (F64, error) { return F64(math.Sqrt(float64(x))), nil }

// Exp is math.Exp.
func (x F64) Exp() (F64, error) { return F64(math.Exp(float64(x))), nil }

// Log is math.Log, with subnormal arguments scaled into the normal range
// first (math.Log on amd64 is wrong for subnormals, golang/go#56600).
func (x F64) Log() (F64, error) {
	v := float64(x)
	if v > 0 && v < 0x1p-1022 {
		return F64(math.Log(v*0x1p54) - 54*math.Ln2), nil
	}
	return F64(math.Log(v)), nil
}

// Log1p is math.Log1p (pure Go on every platform but s390x; it returns
// x itself for |x| < 2^-54, subnormals included).
func (x F64) Log1p() (F64, error) { return F64(math.Log1p(float64(x))), nil }

// Tanh is math.Tanh.
func (x F64) Tanh() (F64, error) { return F64(math.Tanh(float64(x))), nil }

// Sin is math.Sin.
func (x F64) Sin() (F64, error) { return F64(math.Sin(float64(x))), nil }

// Cos is math.Cos.
func (x F64) Cos() (F64, error) { return F64(math.Cos(float64(x))), nil }

// Compare orders x and y; undecided when either is NaN.
func (x F64) Compare(y F64) (int, bool) { return fcmp(float64(x), float64(y)) }

// IsZero reports x == 0 (either sign).
func (x F64) IsZero() bool { return x == 0 }

// Same compares bit patterns.
func (x F64) Same(y F64) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }

// FromInt returns n rounded to nearest.
func (F64) FromInt(n int64) F64 { return F64(float64(n)) }

// FromRat returns r rounded to nearest, ties to even.
func (F64) FromRat(r *big.Rat) F64 {
	f, _ := r.Float64()
	return F64(f)
}

// Float64 returns x.
func (x F64) Float64() float64 { return float64(x) }

// String prints the shortest decimal that reads back as x.
func (x F64) String() string { return strconv.FormatFloat(float64(x), 'g', -1, 64) }

// Kind is "f64".
func (F64) Kind() string { return "f64" }

func fsign(f float64) float64 {
	switch {
	case f > 0:
		return 1
	case f < 0:
		return -1
	case f == 0:
		return 0
	}
	return math.NaN()
}

func fcmp(a, b float64) (int, bool) {
	switch {
	case a < b:
		return -1, true
	case a > b:
		return 1, true
	case a == b:
		return 0, true
	}
	return 0, false
}

// Relu is max(x, 0).
func (x F32) Relu() F32 { return x.Max(0) }

// Clamp is min(max(x, lo), hi).
func (x F32) Clamp(lo, hi F32) F32 { return x.Max(lo).Min(hi) }

// Relu is max(x, 0).
func (x F64) Relu() F64 { return x.Max(0) }

// Clamp is min(max(x, lo), hi).
func (x F64) Clamp(lo, hi F64) F64 { return x.Max(lo).Min(hi) }

// fmax is Max of F32 and F64: the larger of x and y (x when equal, NaN
// when either is NaN).
func fmax[T F32 | F64](x, y T) T {
	if x != x || y != y {
		return T(math.NaN())
	}
	if y > x {
		return y
	}
	return x
}

// fmin is Min of F32 and F64: the smaller of x and y (x when equal, NaN
// when either is NaN).
func fmin[T F32 | F64](x, y T) T {
	if x != x || y != y {
		return T(math.NaN())
	}
	if y < x {
		return y
	}
	return x
}

// fstep is Step of F32 and F64: 1 if x > 0 else 0.
func fstep[T F32 | F64](x T) T {
	if x > 0 {
		return 1
	}
	return 0
}
