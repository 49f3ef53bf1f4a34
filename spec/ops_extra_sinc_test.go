package spec

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

// sincRef, sincDRef and sincD2Ref are sinc, sinc′ and sinc″ computed
// independently of the rule: the Maclaurin series Σ (−1)^k x^{2k}/(2k+1)!
// and its term-by-term derivatives, 12 terms (the first omitted is below
// 1e-40 for |x| ≤ 1/2), near 0; the textbook quotients of math.Sin and
// math.Cos elsewhere.
func sincSeries(x float64, der int) float64 {
	sum, fact := 0.0, 1.0 // fact = (2k+1)!
	for k := 0; k < 12; k++ {
		if k > 0 {
			fact *= float64(2*k) * float64(2*k+1)
		}
		n := 2 * k
		c := 1.0
		for d := 0; d < der; d++ {
			c *= float64(n - d)
		}
		if c == 0 {
			continue
		}
		sum += math.Pow(-1, float64(k)) * c * math.Pow(x, float64(n-der)) / fact
	}
	return sum
}

func sincRef(x float64) float64 {
	if math.Abs(x) <= 0.5 {
		return sincSeries(x, 0)
	}
	return math.Sin(x) / x
}

func sincDRef(x float64) float64 {
	if math.Abs(x) <= 0.5 {
		return sincSeries(x, 1)
	}
	return (x*math.Cos(x) - math.Sin(x)) / (x * x)
}

func sincD2Ref(x float64) float64 {
	if math.Abs(x) <= 0.5 {
		return sincSeries(x, 2)
	}
	return -sincRef(x) - 2*sincDRef(x)/x
}

// TestSincAgainstReference: the F64 rule and its derivative agree with the
// independent reference within a few ulps away from 0, and exactly at 0.
func TestSincAgainstReference(t *testing.T) {
	for _, x := range []float64{0, 1e-300, -1e-8, 0.25, -0.5, 0.75, 1, -2, math.Pi, 4.4934, 10, -1e3, 1e15} {
		y, err := SincOf(F64(x))
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(float64(y) - sincRef(x)); d > 4e-16*math.Max(1, math.Abs(sincRef(x))) {
			t.Errorf("sinc(%g) = %v, reference %v", x, y, sincRef(x))
		}
		g, err := SincDerivOf(F64(x))
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(float64(g) - sincDRef(x)); d > 1e-15*math.Max(1e-3, math.Abs(sincDRef(x))) && d > 1e-15 {
			t.Errorf("sinc′(%g) = %v, reference %v", x, g, sincDRef(x))
		}
	}
}

// TestSincAtZero: the removable singularity. sinc 0 = 1 and sinc′ 0 = 0
// exactly over Rat (elsewhere Rat has no value: sin is inexact), forward
// mode over Dual at 0 gives the tangent 0, and Dual's SincDeriv gives
// sinc″ 0 = −1/3 (from 1 − x²/6 + …, by hand).
func TestSincAtZero(t *testing.T) {
	if y, err := SincOf(NewRat(0, 1)); err != nil || !y.Same(NewRat(1, 1)) {
		t.Errorf("sinc 0 over Rat = %v, %v; want 1", y, err)
	}
	if g, err := SincDerivOf(NewRat(0, 1)); err != nil || !g.IsZero() {
		t.Errorf("sinc′ 0 over Rat = %v, %v; want 0", g, err)
	}
	var de *DomainError
	if _, err := SincOf(NewRat(1, 2)); !errors.As(err, &de) {
		t.Errorf("sinc(1/2) over Rat: %v, want a DomainError", err)
	}
	y, err := MakeDual(F64(0), F64(1)).Sinc()
	if err != nil || y.Re != 1 || y.Du != 0 {
		t.Errorf("dual sinc at 0 = %v, %v; want (1, 0)", y, err)
	}
	g, err := MakeDual(F64(0), F64(1)).SincDeriv()
	if err != nil || g.Re != 0 || math.Abs(float64(g.Du)+1.0/3) > 1e-16 {
		t.Errorf("dual sinc′ at 0 = %v, %v; want (0, −1/3)", g, err)
	}
	// Away from 0 the dual tangents are the chain rule of sin/x and match
	// the reference derivatives.
	for _, x := range []float64{0.3, -1.7, 6} {
		y, _ := MakeDual(F64(x), F64(1)).Sinc()
		g, _ := MakeDual(F64(x), F64(1)).SincDeriv()
		if math.Abs(float64(y.Du)-sincDRef(x)) > 1e-14 || math.Abs(float64(g.Du)-sincD2Ref(x)) > 1e-14 {
			t.Errorf("dual at %g: sinc′ %v (ref %v), sinc″ %v (ref %v)", x, y.Du, sincDRef(x), g.Du, sincD2Ref(x))
		}
	}
}

// sincEncloses samples every interval of a set (including ones that
// straddle 0, the removable singularity) and reports the first sample
// whose reference value falls outside f's enclosure (a relative slack of
// 4e-16 covers the reference's own rounding).
func sincEncloses(f func(Interval) (Interval, error), ref func(float64) float64) error {
	ivs := [][2]float64{{0, 0}, {-1e-9, 1e-9}, {-1e-3, 2e-3}, {-0.5, 0.25}, {-1, 1}, {-3, 7}, {-40, 40},
		{0.1, 0.2}, {1, 2}, {4, 5}, {-9, -2}, {1e-300, 1}, {-2, 0}, {0, 3.5}}
	for _, b := range ivs {
		e, err := f(Interval{b[0], b[1]})
		if err != nil {
			return fmt.Errorf("[%g, %g]: %v", b[0], b[1], err)
		}
		for i := 0; i <= 400; i++ {
			x := b[0] + (b[1]-b[0])*float64(i)/400
			v := ref(x)
			s := 4e-16 * math.Max(1, math.Abs(v))
			if v < e.Lo-s || v > e.Hi+s {
				return fmt.Errorf("[%g, %g] at %g: %v outside %v", b[0], b[1], x, v, e)
			}
		}
	}
	return nil
}

// TestSincIntervalEnclosure: Interval.Sinc, SincDeriv and SincDeriv2
// contain the reference at every sample, and are tight near 0 (no division
// by an interval reaching 0). The checker catches planted enclosures: the
// Taylor polynomial without its remainder (sinc ≤ 1 − x²/6, which is the
// lower bound), and sinc′ with its sign flipped.
func TestSincIntervalEnclosure(t *testing.T) {
	if err := sincEncloses(Interval.Sinc, sincRef); err != nil {
		t.Errorf("sinc: %v", err)
	}
	if err := sincEncloses(Interval.SincDeriv, sincDRef); err != nil {
		t.Errorf("sinc′: %v", err)
	}
	if err := sincEncloses(Interval.SincDeriv2, sincD2Ref); err != nil {
		t.Errorf("sinc″: %v", err)
	}
	noRemainder := func(x Interval) (Interval, error) {
		b := Point(1).Sub(x.Mul(x).Mul(ivRat(1, 6)))
		return mkInterval(b.Lo, b.Lo), nil
	}
	if sincEncloses(noRemainder, sincRef) == nil {
		t.Error("planted sinc ≤ 1 − x²/6 not caught")
	}
	flipped := func(x Interval) (Interval, error) { d, err := x.SincDeriv(); return d.Neg(), err }
	if sincEncloses(flipped, sincDRef) == nil {
		t.Error("planted sign-flipped sinc′ not caught")
	}
	for _, c := range []struct {
		x          Interval
		f          func(Interval) (Interval, error)
		lo, hi     float64
		name, want string
	}{
		{Interval{-1e-3, 1e-3}, Interval.Sinc, 1 - 1e-6/6 - 1e-12, 1, "sinc", "[1 − 1e-6/6, 1]"},
		{Interval{-1e-3, 1e-3}, Interval.SincDeriv, -1e-3/3 - 1e-10, 1e-3/3 + 1e-10, "sinc′", "±1e-3/3"},
		{Interval{-40, 40}, Interval.Sinc, -0.2174, 1, "sinc", "[−0.2173, 1]"},
	} {
		e, _ := c.f(c.x)
		if e.Lo < c.lo || e.Hi > c.hi {
			t.Errorf("%s over %v = %v, want within %s", c.name, c.x, e, c.want)
		}
	}
}
