package spec

import (
	"math"
	"math/big"
	"testing"
)

// TestRatExactFloat64: ExactFloat64 answers exactly the rationals that are
// zero or a normal float64, with that float, checked against big.Rat's
// exact comparison; it declines non-dyadics, long mantissas and
// subnormals.
func TestRatExactFloat64(t *testing.T) {
	for _, tc := range []struct {
		r    *big.Rat
		want float64
		ok   bool
	}{
		{big.NewRat(0, 1), 0, true},
		{big.NewRat(3, 4), 0.75, true},
		{big.NewRat(-5, 1<<40), -5 * math.Ldexp(1, -40), true},
		{new(big.Rat).SetFloat64(float64(float32(0.1))), float64(float32(0.1)), true},
		{new(big.Rat).SetFloat64(math.MaxFloat64), math.MaxFloat64, true},
		{new(big.Rat).SetFloat64(0x1p-1022), 0x1p-1022, true},
		{new(big.Rat).SetFloat64(0x1p-1074), 0, false}, // subnormal
		{big.NewRat(1, 3), 0, false},
		{new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 1024)), 0, false},
		{new(big.Rat).SetFrac(big.NewInt(1<<53+1), big.NewInt(1)), 0, false},
	} {
		got, ok := RatFromBig(tc.r).ExactFloat64()
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: (%g, %v), want (%g, %v)", tc.r, got, ok, tc.want, tc.ok)
		}
		if ok && new(big.Rat).SetFloat64(got).Cmp(tc.r) != 0 {
			t.Errorf("%s: %g is not its value", tc.r, got)
		}
	}
}
