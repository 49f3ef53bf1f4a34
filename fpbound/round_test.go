package fpbound

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestUpDownAreNextafter: up and down are math.Nextafter towards ±∞, bit
// for bit, on the edges of the float64 range and on random bit patterns;
// pow2 agrees with math.Frexp (a fraction of ±1/2).
func TestUpDownAreNextafter(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 0x1p-1074, -0x1p-1074, 0x1p-1022, -0x1p-1022,
		0x1p-1022 - 0x1p-1074, 1, -1, 1.5, math.MaxFloat64, -math.MaxFloat64, inf, -inf, math.NaN(),
		0x1p-1073, 3 * 0x1p-1074}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		vals = append(vals, math.Float64frombits(r.Uint64()))
	}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	for _, v := range vals {
		if got, want := up(v), math.Nextafter(v, inf); !same(got, want) {
			t.Fatalf("up(%v) = %v, Nextafter %v", v, got, want)
		}
		if got, want := down(v), math.Nextafter(v, -inf); !same(got, want) {
			t.Fatalf("down(%v) = %v, Nextafter %v", v, got, want)
		}
		if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		fr, _ := math.Frexp(v)
		if got, want := Value(spec.Point(v), 0).pow2(), fr == 0.5 || fr == -0.5; got != want {
			t.Fatalf("pow2(%v) = %v, Frexp says %v", v, got, want)
		}
	}
	for k := -1074; k < 1024; k++ {
		if v := math.Ldexp(1, k); !Value(spec.Point(v), 0).pow2() || !Value(spec.Point(-v), 0).pow2() {
			t.Fatalf("±2^%d is not a power of two", k)
		}
		if v := math.Ldexp(3, k-1); k > -1074 && Value(spec.Point(v), 0).pow2() {
			t.Fatalf("3·2^%d is a power of two", k-1)
		}
	}
}
