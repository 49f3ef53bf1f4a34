package fpbound

import (
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// Upward-rounded float64 arithmetic on non-negative bounds. Every helper
// returns a float64 that is ≥ the exact real result of its operation on
// its (exact, float64) operands: the float64 operation rounds to nearest,
// so the exact result lies within half an ulp of the rounded one, and the
// next float64 towards +∞ (math.Nextafter) is ≥ the exact result —
// including when the rounded result is 0 after an underflow (the next
// float is 2^-1074, above anything that rounds to 0) and when it is +∞.
// Operations with an exact zero operand are exact and are not bumped. An
// infinite operand makes every result +∞ (a product 0·∞ included: an
// infinite bound means "no bound", and a zero factor times an unbounded
// error does not bound it either).

// inf is +∞, the bound that claims nothing.
var inf = math.Inf(1)

// up returns the next float64 above v: math.Nextafter(v, +∞), computed
// on the bit pattern (the next float64 above a positive finite v has the
// next larger pattern, MaxFloat64's is +∞'s; below a negative v, the next
// smaller one, −2^-1074's being −0; above ±0 it is 2^-1074; +∞ and NaN are
// their own).
func up(v float64) float64 {
	switch {
	case v > 0:
		if v == inf {
			return v
		}
		return math.Float64frombits(math.Float64bits(v) + 1)
	case v < 0:
		return math.Float64frombits(math.Float64bits(v) - 1)
	case v == 0:
		return 0x1p-1074
	}
	return v
}

// down returns the next float64 below v: math.Nextafter(v, −∞), the
// mirror of up.
func down(v float64) float64 { return -up(-v) }

// addUp bounds a + b from above for a, b ≥ 0.
func addUp(a, b float64) float64 {
	switch {
	case math.IsInf(a, 1) || math.IsInf(b, 1):
		return inf
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return up(a + b)
}

// mulUp bounds a·b from above for a, b ≥ 0.
func mulUp(a, b float64) float64 {
	switch {
	case math.IsInf(a, 1) || math.IsInf(b, 1):
		return inf
	case a == 0 || b == 0:
		return 0
	case a == 1:
		return b
	case b == 1:
		return a
	}
	return up(a * b)
}

// divUp bounds a/b from above for a ≥ 0, b > 0.
func divUp(a, b float64) float64 {
	switch {
	case math.IsInf(a, 1) || !(b > 0):
		return inf
	case a == 0:
		return 0
	case math.IsInf(b, 1):
		return up(0)
	case b == 1:
		return a
	}
	return up(a / b)
}

// subDown bounds a − b from below (any signs, finite b ≥ 0).
func subDown(a, b float64) float64 {
	if b == 0 {
		return a
	}
	if math.IsInf(b, 1) {
		return -inf
	}
	return down(a - b)
}

// addUpSigned bounds a + b from above (any signs, b ≥ 0).
func addUpSigned(a, b float64) float64 {
	if b == 0 {
		return a
	}
	if math.IsInf(b, 1) {
		return inf
	}
	return up(a + b)
}

// mag returns max |v| over the interval x (exact).
func mag(x spec.Interval) float64 { return max(math.Abs(x.Lo), math.Abs(x.Hi)) }

// mig returns min |v| over the interval x (exact): 0 when x contains 0.
func mig(x spec.Interval) float64 {
	switch {
	case x.Lo > 0:
		return x.Lo
	case x.Hi < 0:
		return -x.Hi
	}
	return 0
}

// gamma bounds γ_k = k·u/(1 − k·u) from above, u the unit roundoff of
// the format; +∞ when k > maxTerms = 2^(p−1) (the bounds of doc.go
// need k·u ≤ 1/2). k·u and 1 − k·u are exact in float64 (k·u is k scaled
// by a power of two, and 1 − k·u = (2^p − k)·2^-p with 2^p − k an integer
// of at most p ≤ 53 bits), so only the quotient rounds.
func (c *consts) gamma(k int64) float64 {
	switch {
	case k <= 0:
		return 0
	case k > c.maxTerms:
		return inf
	}
	ku := float64(k) * c.u
	return up(ku / (1 - ku))
}
