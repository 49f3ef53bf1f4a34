package enclose

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactLaneSums returns, per lane in y's order, the exact sums of the
// lower and of the upper endpoints (divided by n for the mean), computed
// with big.Rat independently of SumPairs's indexing (by the lane's
// coordinates in an outer × n × inner array).
func exactLaneSums(x []float64, outer, n, inner int, mean bool) (lo, hi []*big.Rat) {
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			l, h := new(big.Rat), new(big.Rat)
			for j := 0; j < n; j++ {
				e := o*n*inner + j*inner + i
				l.Add(l, new(big.Rat).SetFloat64(x[2*e]))
				h.Add(h, new(big.Rat).SetFloat64(x[2*e+1]))
			}
			if mean {
				d := new(big.Rat).SetInt64(int64(n))
				l.Quo(l, d)
				h.Quo(h, d)
			}
			lo, hi = append(lo, l), append(hi, h)
		}
	}
	return lo, hi
}

// sumViolations counts the lanes whose result fails to enclose the exact
// endpoint sums.
func sumViolations(t *testing.T, x []float64, outer, n, inner int, mean, unsound bool) int {
	t.Helper()
	y := make([]float64, 2*outer*inner)
	if !sumPairs(x, outer, n, inner, mean, y, unsound) {
		t.Fatalf("outer=%d n=%d inner=%d: refused finite data", outer, n, inner)
	}
	lo, hi := exactLaneSums(x, outer, n, inner, mean)
	bad := 0
	for m := range lo {
		if y[2*m] > y[2*m+1] {
			t.Fatalf("lane %d: [%v, %v] is empty", m, y[2*m], y[2*m+1])
		}
		if new(big.Rat).SetFloat64(y[2*m]).Cmp(lo[m]) > 0 || new(big.Rat).SetFloat64(y[2*m+1]).Cmp(hi[m]) < 0 {
			bad++
		}
	}
	return bad
}

// TestSumPairsContains: lane sums and means over random intervals of
// widely spread magnitudes (cancellation included), for lanes that are
// contiguous (inner = 1) or strided, enclose the exact big.Rat sums of
// the endpoints; the same lanes with the rounding bound dropped (a planted
// radius error) are caught.
func TestSumPairsContains(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 7))
	planted := 0
	for _, c := range []struct{ outer, n, inner, scale int }{
		{1, 1, 1, 4}, {1, 64, 1, 60}, {3, 200, 1, 80}, {2, 17, 5, 40}, {4, 1000, 3, 100}, {1, 3, 64, 30}, {5, 2, 2, 0},
	} {
		for _, mean := range []bool{false, true} {
			x := randPairs(r, c.outer*c.n*c.inner, 0.5, c.scale)
			if bad := sumViolations(t, x, c.outer, c.n, c.inner, mean, false); bad != 0 {
				t.Errorf("%+v mean=%v: %d lanes not enclosed", c, mean, bad)
			}
			planted += sumViolations(t, x, c.outer, c.n, c.inner, mean, true)
		}
	}
	if planted == 0 {
		t.Error("dropping the rounding bound was never caught: the test is vacuous")
	}
}

// TestSumPairsEdges: exact zero lanes stay [+0, +0]; infinite endpoints,
// an overflowing sum and n = 0 are refused; a subnormal lane is enclosed.
func TestSumPairsEdges(t *testing.T) {
	y := make([]float64, 2)
	if !SumPairs(make([]float64, 8), 1, 4, 1, false, y) || y[0] != 0 || y[1] != 0 || math.Signbit(y[0]) {
		t.Errorf("zero lane: ok/result %v", y)
	}
	for _, x := range [][]float64{
		{math.Inf(-1), 0, 1, 2},
		{math.MaxFloat64, math.MaxFloat64, math.MaxFloat64, math.MaxFloat64},
	} {
		if SumPairs(x, 1, 2, 1, false, y) {
			t.Errorf("%v: not refused (%v)", x, y)
		}
	}
	if SumPairs(nil, 1, 0, 1, false, y) {
		t.Error("n = 0 not refused")
	}
	tiny := math.Float64frombits(3)
	x := []float64{tiny, tiny, -tiny, 2 * tiny, tiny, tiny}
	if bad := sumViolations(t, x, 1, 3, 1, true, false); bad != 0 {
		t.Errorf("subnormal lane not enclosed")
	}
}

// TestDivPairs: each quotient encloses the exact one; n = 1 copies.
func TestDivPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 8))
	x := randPairs(r, 500, 0.3, 200)
	for _, n := range []int{1, 3, 7, 1000} {
		y := make([]float64, len(x))
		if !DivPairs(x, n, y) {
			t.Fatalf("n=%d refused", n)
		}
		d := new(big.Rat).SetInt64(int64(n))
		for e := 0; e < len(x); e += 2 {
			lo := new(big.Rat).Quo(new(big.Rat).SetFloat64(x[e]), d)
			hi := new(big.Rat).Quo(new(big.Rat).SetFloat64(x[e+1]), d)
			if new(big.Rat).SetFloat64(y[e]).Cmp(lo) > 0 || new(big.Rat).SetFloat64(y[e+1]).Cmp(hi) < 0 {
				t.Fatalf("n=%d: [%v, %v]/n gave [%v, %v]", n, x[e], x[e+1], y[e], y[e+1])
			}
			if n == 1 && (y[e] != x[e] || y[e+1] != x[e+1]) {
				t.Fatalf("n=1 changed [%v, %v] to [%v, %v]", x[e], x[e+1], y[e], y[e+1])
			}
		}
	}
	if DivPairs([]float64{math.Inf(1), math.Inf(1)}, 2, make([]float64, 2)) || DivPairs([]float64{1, 1}, 0, make([]float64, 2)) {
		t.Error("infinite endpoint or n = 0 not refused")
	}
}

// TestTameBits: the bit-pattern test agrees with the definition
// x = 0 or 2⁻³⁰⁰ ≤ |x| ≤ 2³⁰⁰ at and around both bounds and at the
// special values.
func TestTameBits(t *testing.T) {
	for _, x := range []float64{0, math.Copysign(0, -1), tameLo, math.Nextafter(tameLo, 0), math.Nextafter(tameLo, 1),
		tameHi, math.Nextafter(tameHi, 0), math.Nextafter(tameHi, math.Inf(1)), 1, math.SmallestNonzeroFloat64,
		math.MaxFloat64, math.Inf(1), math.NaN()} {
		for _, v := range []float64{x, -x} {
			a := math.Abs(v)
			want := a == 0 || (a >= tameLo && a <= tameHi)
			if got := tame(v); got != want {
				t.Errorf("tame(%v) = %v, want %v", v, got, want)
			}
		}
	}
}
