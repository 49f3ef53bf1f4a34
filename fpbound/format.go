package fpbound

import (
	"math"
	"math/big"
)

// format is the constraint of ErrOf's parameter: binary32 or binary64,
// the two IEEE 754 binary formats the bound is proved for (it is an
// unexported method set rather than a union only so that the package's
// tests can plant a format with a wrong constant). Its methods give the constants
// of the format that the proof (doc.go) uses, as float64 upper bounds
// where the constant itself is not a float64; nothing else in the
// arithmetic of ErrOf depends on the format. With p the precision (24 for
// binary32, 53 for binary64) and emin the least normal exponent (−126,
// −1022):
//
//	u          unit roundoff 2^-p                          2^-24         2^-53
//	eta        underflow of one rounding, ½·2^(emin−p+1)   2^-150        2^-1075 (charged as 2^-1074)
//	sub        the least positive subnormal 2^(emin−p+1)   2^-149        2^-1074
//	ulpFactor  ulp(y) ≤ ulpFactor·|y| for normal y, 2^(1−p) 2^-23        2^-52
//	Ω          round to nearest overflows iff |r| ≥ Ω      2^128−2^103   2^1024−2^970
//	maxFinite  the largest finite value (2−2^(1−p))·2^emax  2^128−2^104   2^1024−2^971
//	maxTerms   the largest k with k·u ≤ 1/2, 2^(p−1)       2^23          2^52
//	maxInt     every integer of magnitude ≤ 2^p is held    2^24          2^53
//
// The types are zero-size: ErrOf[binary32] and ErrOf[binary64] have the
// same fields and differ only in these constants.
type format interface {
	// consts returns the format's constants.
	consts() *consts
	// holds reports whether the finite float64 f is a value of the
	// format.
	holds(f float64) bool
	// nearest returns r rounded to the nearest value of the format, as a
	// float64 (±∞ when r rounds to an overflow).
	nearest(r *big.Rat) float64
	// kind is the Kind of ErrOf over the format.
	kind() string
	// sumFmt tags the additions of a pending sum made now (ErrOf.sumFmt):
	// sumAny but in a mixed evaluation (format_mixed.go).
	sumFmt() uint8
}

// consts holds a format's constants (see format), as float64 upper bounds
// where the constant is not a float64.
type consts struct {
	// u is the unit roundoff 2^-p.
	u float64
	// eta bounds |η| of one rounding: a float64 ≥ 2^(emin−p).
	eta float64
	// sub is the least positive subnormal 2^(emin−p+1) = 2·η: one ulp in
	// the subnormal range.
	sub float64
	// ulpFactor is 2^(1−p).
	ulpFactor float64
	// omega is the least element of float64 ∪ {+∞} that is ≥ Ω, so that
	// m < omega ⟺ m < Ω for every float64 m: binary32's Ω = 2^128 −
	// 2^103 is a float64; binary64's Ω = 2^1024 − 2^970 lies above
	// MaxFloat64 = 2^1024 − 2^971, so there omega is +∞ (every finite
	// float64 is < Ω).
	omega float64
	// maxFinite is the largest finite value of the format, (2 −
	// 2^(1−p))·2^emax: every finite value the format holds is at most
	// this in magnitude. It is a float64 in every format (binary64's is
	// MaxFloat64), and maxFinite < Ω.
	maxFinite float64
	// maxTerms is 2^(p−1), the largest k with k·u ≤ 1/2.
	maxTerms int64
	// maxInt is 2^p: every integer of magnitude ≤ maxInt is a value of the
	// format.
	maxInt int64
}

// fits reports m < Ω for a float64 m ≥ 0 (false for +∞ and NaN): an
// operation whose exact result has magnitude at most m does not overflow.
func (c *consts) fits(m float64) bool { return m < c.omega }

var (
	consts32 = consts{u: 0x1p-24, eta: 0x1p-150, sub: 0x1p-149, ulpFactor: 0x1p-23,
		omega: omega32, maxFinite: math.MaxFloat32, maxTerms: 1 << 23, maxInt: 1 << 24}
	consts64 = consts{u: 0x1p-53, eta: 0x1p-1074, sub: 0x1p-1074, ulpFactor: 0x1p-52,
		omega: math.Inf(1), maxFinite: math.MaxFloat64, maxTerms: 1 << 52, maxInt: 1 << 53}
)

// binary32 is IEEE 754 binary32 (float32): p = 24, emin = −126.
type binary32 struct{}

// binary64 is IEEE 754 binary64 (float64): p = 53, emin = −1022. Its
// underflow term 2^-1075 is below the least positive float64 and is
// charged as 2^-1074; its Ω = 2^1024 − 2^970 lies above MaxFloat64.
type binary64 struct{}

func (binary32) consts() *consts { return &consts32 }
func (binary32) holds(f float64) bool {
	return float64(float32(f)) == f
}
func (binary32) nearest(r *big.Rat) float64 { f, _ := r.Float32(); return float64(f) }
func (binary32) kind() string               { return "fpbound" }
func (binary32) sumFmt() uint8              { return sumAny }

// binary64's constants, holds and nearest are binary32's while a node
// that rounds to binary32 is bounded in a mixed evaluation (narrowNow,
// format_mixed.go).
func (binary64) consts() *consts {
	if narrowNow.Load() {
		return &consts32
	}
	return &consts64
}
func (binary64) holds(f float64) bool {
	if narrowNow.Load() {
		return binary32{}.holds(f)
	}
	return !math.IsInf(f, 0) && !math.IsNaN(f)
}
func (binary64) nearest(r *big.Rat) float64 {
	if narrowNow.Load() {
		return binary32{}.nearest(r)
	}
	f, _ := r.Float64()
	return f
}
func (binary64) kind() string { return "fpbound64" }
func (binary64) sumFmt() uint8 {
	switch {
	case !mixedOn.Load():
		return sumAny
	case narrowNow.Load():
		return sumNarrow
	}
	return sumWide
}

// constsOf returns F's constants.
func constsOf[F format]() *consts { var f F; return f.consts() }

// omega32 is binary32's Ω = 2^128 − 2^103: round to nearest gives ±∞
// exactly from |x| ≥ Ω on. It is a float64 exactly (25 significant bits).
const omega32 = 0x1p128 - 0x1p103
