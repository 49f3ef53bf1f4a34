package spec

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// TestRoundInt: round_int over Rat, rows worked by hand (ties to even:
// 1/2 → 0, 3/2 → 2, −5/2 → −2; 7/3 → 2), and over F64 against Go's
// math.RoundToEven (another implementation), NaN and ±∞ kept.
func TestRoundInt(t *testing.T) {
	p, _ := Default[Rat]().Lookup("round_int")
	caught := 0
	for _, c := range []struct{ x, want *big.Rat }{
		{big.NewRat(1, 2), big.NewRat(0, 1)},
		{big.NewRat(3, 2), big.NewRat(2, 1)},
		{big.NewRat(-5, 2), big.NewRat(-2, 1)},
		{big.NewRat(-7, 2), big.NewRat(-4, 1)},
		{big.NewRat(7, 3), big.NewRat(2, 1)},
		{big.NewRat(-7, 3), big.NewRat(-2, 1)},
		{big.NewRat(5, 3), big.NewRat(2, 1)},
		{big.NewRat(0, 1), big.NewRat(0, 1)},
		{big.NewRat(1000001, 2), big.NewRat(500000, 1)},
	} {
		got, err := p.Apply(nil, []Tensor[Rat]{{Shape: Shape{1}, Data: []Rat{RatFromBig(c.x)}}})
		if err != nil || got.Data[0].Big().Cmp(c.want) != 0 {
			t.Errorf("round_int(%s) = %v, %v; want %s", c.x.RatString(), got.Data, err, c.want.RatString())
		}
		// The planted fault, ties away from zero, differs from the row's
		// expected value at the ties with an odd ⌊x⌋.
		if f, _ := c.x.Float64(); new(big.Rat).SetFloat64(math.Round(f)).Cmp(c.want) != 0 {
			caught++
		}
	}
	if caught != 3 { // 1/2, −5/2 and 1000001/2
		t.Errorf("the planted ties-away rounding is caught by %d rows, want 3", caught)
	}
	f := QuantFormat(QuantGrid{})
	for _, x := range []float64{0.5, 1.5, 2.5, -0.5, -2.5, 2.4999999999999996, 1e300, -3.7, 4503599627370497, math.Inf(1), math.Inf(-1), math.NaN()} {
		got, _ := F64(x).RoundTo(f)
		if !same(float64(got), math.RoundToEven(x)) {
			t.Errorf("round_int(%v) = %v, want %v", x, got, math.RoundToEven(x))
		}
	}
}

// quantRef is QuantizeLinear's integer code computed independently of
// the code under test: Go's float32 division (IEEE's correctly rounded
// binary32 quotient), math.RoundToEven, the zero point, then the clamp.
func quantRef(x, s float32, zp, lo, hi float64) float64 {
	q := x / s
	if math.IsNaN(float64(q)) {
		return math.NaN()
	}
	return math.Min(hi, math.Max(lo, math.RoundToEven(float64(q))+zp))
}

// TestQuantInt: quant_int over Rat (x a float32 value, the exact model's
// fl32(x) = x) and over F32 against quantRef on 4000 seeded (x, s, zp):
// scales from 2^-12 to 4, x near the grid's ties and past the range; then
// the attributes refused (c ≤ 0, non-integer lo/hi/bias, lo > hi).
func TestQuantInt(t *testing.T) {
	p, _ := Default[Rat]().Lookup("quant_int")
	pf, _ := Default[F32]().Lookup("quant_int")
	rng := rand.New(rand.NewSource(36))
	for i := 0; i < 4000; i++ {
		s := float32(math.Ldexp(1+rng.Float64(), rng.Intn(14)-12))
		zp := float64(rng.Intn(256))
		lo, hi := 0.0, 255.0
		if i%2 == 1 {
			zp, lo, hi = zp-128, -128, 127
		}
		k := float64(rng.Intn(400) - 200)
		x := float32((k + 0.5) * float64(s)) // near a tie
		if i%3 == 0 {
			x = math.Nextafter32(x, float32(math.Inf(int(rng.Intn(2)*2-1))))
		}
		if i%7 == 0 {
			x = float32(rng.NormFloat64() * 1e3)
		}
		a := &Attrs{C: new(big.Rat).SetFloat64(float64(s)), Bias: big.NewRat(int64(zp), 1), Lo: big.NewRat(int64(lo), 1), Hi: big.NewRat(int64(hi), 1)}
		want := quantRef(x, s, zp, lo, hi)
		got, err := p.Apply(a, []Tensor[Rat]{{Shape: Shape{1}, Data: []Rat{RatFromBig(new(big.Rat).SetFloat64(float64(x)))}}})
		if err != nil || got.Data[0].Big().Cmp(new(big.Rat).SetFloat64(want)) != 0 {
			t.Fatalf("quant_int(%v; s=%v zp=%v) = %v, %v; want %v", x, s, zp, got.Data, err, want)
		}
		gf, err := pf.Apply(a, []Tensor[F32]{{Shape: Shape{1}, Data: []F32{F32(x)}}})
		if err != nil || float64(gf.Data[0]) != want {
			t.Fatalf("quant_int over F32 (%v; s=%v zp=%v) = %v, %v; want %v", x, s, zp, gf.Data, err, want)
		}
	}
	a := &Attrs{C: big.NewRat(1, 10), Lo: big.NewRat(-128, 1), Hi: big.NewRat(127, 1)}
	for _, c := range []struct{ x, want float64 }{{math.Inf(1), 127}, {math.Inf(-1), -128}, {3.4e38, 127}, {-3.4e38, -128}} {
		got, _ := F64(c.x).RoundTo(QuantFormat(QuantGrid{Scale: a.C, Lo: a.Lo, Hi: a.Hi}))
		if float64(got) != c.want {
			t.Errorf("quant_int(%v) = %v, want %v (saturated)", c.x, got, c.want)
		}
	}
	// Over Interval: [Q(lo), Q(hi)] holds Q of every sample point (monotone).
	f := QuantFormat(QuantGrid{Scale: big.NewRat(3, 64), Zp: big.NewRat(5, 1), Lo: big.NewRat(0, 1), Hi: big.NewRat(255, 1)})
	for _, iv := range []Interval{{Lo: -1, Hi: 2}, {Lo: 0.0703125, Hi: 0.0703125}, {Lo: math.Inf(-1), Hi: 0}, {Lo: 11.5, Hi: 13}} {
		r, err := iv.RoundTo(f)
		if err != nil {
			t.Fatalf("%v: %v", iv, err)
		}
		for k := 0; k <= 16; k++ {
			x := iv.Lo + (iv.Hi-iv.Lo)*float64(k)/16
			if math.IsInf(iv.Lo, -1) {
				x = -float64(k) * 0.37
			}
			if y := quantRef(float32(x), 3.0/64, 5, 0, 255); y < r.Lo || y > r.Hi {
				t.Errorf("Q(%v) = %v outside %v's image %v", x, y, iv, r)
			}
		}
	}
	for _, bad := range []*Attrs{nil, {C: big.NewRat(0, 1), Lo: a.Lo, Hi: a.Hi}, {C: big.NewRat(-1, 1), Lo: a.Lo, Hi: a.Hi},
		{C: a.C, Lo: big.NewRat(1, 2), Hi: a.Hi}, {C: a.C, Lo: a.Hi, Hi: a.Lo}, {C: a.C, Bias: big.NewRat(1, 3), Lo: a.Lo, Hi: a.Hi}, {C: a.C, Lo: a.Lo}} {
		if _, err := p.InferShape(bad, []Shape{{2}}); err == nil {
			t.Errorf("quant_int attributes %+v accepted", bad)
		}
	}
}
