package fpbound

import (
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// allSums returns the binary32 result of every evaluation tree of the sum
// of vs (every way of repeatedly replacing two of the values by their
// rounded sum), each addition rounded to nearest by Go's float32
// arithmetic; an overflow gives ±Inf.
func allSums(vs []float32) []float32 {
	if len(vs) == 1 {
		return vs
	}
	var out []float32
	for i := range vs {
		for j := i + 1; j < len(vs); j++ {
			rest := []float32{vs[i] + vs[j]}
			for k, v := range vs {
				if k != i && k != j {
					rest = append(rest, v)
				}
			}
			out = append(out, allSums(rest)...)
		}
	}
	return out
}

// TestSumsNearTheTop: a sum with a term at the top of binary32's range —
// the additive mask x + torch.finfo(float32).min — is bounded when no
// evaluation tree can overflow, and unbounded when one can. The
// expectation is derived independently of the algebra: every tree is run
// in float32 (allSums); a sum is bounded exactly when no tree overflows
// (for these cases), and every tree's result is then within the bound of
// the exact sum. The rows with overflow are the planted faults: the
// threshold Ω = 2^128 − 2^103 is exact (MaxFloat32 + 2^103 overflows
// under ties-to-even, MaxFloat32 + 2^103 − 2^79 does not), and a rule
// that looked only at the largest term, or took Ω one binade too high,
// would call them bounded.
func TestSumsNearTheTop(t *testing.T) {
	const mx = math.MaxFloat32
	for _, tc := range []struct {
		name    string
		terms   []float32
		bounded bool
	}{
		{"finfo.min plus a positive score", []float32{-mx, 3.5}, true},
		{"finfo.min plus a negative score", []float32{-mx, -3.5}, true},
		{"masked score minus the row max", []float32{-mx, -3.5, -2.25}, true},
		{"masked score minus a negative row max", []float32{-mx, 1.5, 0.75, -0.5}, true},
		{"top plus 2^103 − 2^79: below Ω", []float32{mx, 0x1p103 - 0x1p79}, true},
		{"top plus 2^101 twice", []float32{mx, 0x1p101, 0x1p101}, true},
		{"top plus 2^103: exactly Ω, overflows", []float32{mx, 0x1p103}, false},
		{"top plus 2^102 twice: one tree reaches Ω", []float32{mx, 0x1p102, 0x1p102}, false},
		{"top twice", []float32{-mx, -mx}, false},
		{"top, then cancelled", []float32{mx, mx, -mx}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v Err
			exact := new(big.Rat)
			for _, x := range tc.terms {
				v = v.Add(Value(spec.Point(float64(x)), 0))
				exact.Add(exact, new(big.Rat).SetFloat64(float64(x)))
			}
			sums := allSums(tc.terms)
			overflow := false
			for _, s := range sums {
				overflow = overflow || math.IsInf(float64(s), 0)
			}
			if overflow == tc.bounded {
				t.Fatalf("the table is wrong: some tree overflows = %v, bounded = %v", overflow, tc.bounded)
			}
			b := v.Bound()
			if math.IsInf(b, 1) == tc.bounded {
				t.Fatalf("bound %g, want bounded = %v", b, tc.bounded)
			}
			if !tc.bounded {
				return
			}
			lim := new(big.Rat).SetFloat64(b)
			for _, s := range sums {
				d := new(big.Rat).SetFloat64(float64(s))
				d.Sub(d, exact)
				if d.Abs(d).Cmp(lim) > 0 {
					t.Fatalf("a tree gives %g, %s from the exact sum, above the bound %g", s, d.FloatString(3), b)
				}
			}
			if x := v.Exact(); !x.Contains(exact) {
				t.Fatalf("exact sum outside %v", x)
			}
		})
	}
}
