package fpbound

import (
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestAdjFromSmallFrac: the fast conversion of a dyadic fraction is
// exactly spec.Interval's FromRat of it (derived independently through
// big.Rat), and declines what it does not cover.
func TestAdjFromSmallFrac(t *testing.T) {
	for _, c := range []struct {
		p, q int64
		ok   bool
	}{
		{0, 1, true}, {1, 1, true}, {-3, 4, true}, {12345677, 1 << 40, true},
		{-(1<<53 - 1), 1 << 62, true}, {1 << 53, 1, false}, {1, 3, false}, {5, 0, false},
	} {
		got, ok := adj{}.FromSmallFrac(c.p, c.q)
		if ok != c.ok {
			t.Errorf("%d/%d: ok %v, want %v", c.p, c.q, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		want := adj{}.FromRat(big.NewRat(c.p, c.q))
		if got.iv != want.iv || got.id != 0 {
			t.Errorf("%d/%d: %v, want %v", c.p, c.q, got.iv, want.iv)
		}
	}
}

// TestAdjZeroShortcuts: Add and Mul with an exact-zero operand (their
// shortcut) return spec.Interval's result bit for bit, on a table of
// operands with signed zeros, infinities and points.
func TestAdjZeroShortcuts(t *testing.T) {
	inf := math.Inf(1)
	vals := []spec.Interval{
		{Lo: 0, Hi: 0}, {Lo: math.Copysign(0, -1), Hi: 0}, {Lo: math.Copysign(0, -1), Hi: 2},
		{Lo: -3, Hi: math.Copysign(0, -1)}, {Lo: 1.5, Hi: 1.5}, {Lo: -inf, Hi: inf}, {Lo: -inf, Hi: -1},
		{Lo: 0.1, Hi: 0.30000000000000004}, {Lo: -math.MaxFloat64, Hi: math.MaxFloat64},
	}
	same := func(a, b spec.Interval) bool {
		return math.Float64bits(a.Lo) == math.Float64bits(b.Lo) && math.Float64bits(a.Hi) == math.Float64bits(b.Hi)
	}
	for _, x := range vals {
		for _, y := range vals {
			a, b := adj{iv: x}, adj{iv: y}
			if got, want := a.Add(b).iv, x.Add(y); !same(got, want) {
				t.Errorf("%v + %v: %v, spec.Interval %v", x, y, got, want)
			}
			if got, want := a.Mul(b).iv, x.Mul(y); !same(got, want) {
				t.Errorf("%v · %v: %v, spec.Interval %v", x, y, got, want)
			}
		}
	}
}
