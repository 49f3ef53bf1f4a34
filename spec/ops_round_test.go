package spec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"
)

// The rounding primitives against independent implementations: binary32
// against Go's own float64 → float32 conversion (IEEE round to nearest
// even) and math.Float32frombits; binary16 and bfloat16 against the
// format's every value, decoded here from its bit patterns, with the
// nearest found by search (ties to the even bit pattern). A planted
// rounding that takes ties away from zero must be caught by the same
// comparison.

// table16 is every finite non-negative value of a 16-bit format, in
// increasing order, with its bit pattern.
type table16 struct {
	vals []float64
	bits []uint16
	max  float64 // the largest finite value
}

// decodeBinary16 decodes an IEEE 754 binary16 bit pattern (sign 1,
// exponent 5, fraction 10 bits) without the code under test.
func decodeBinary16(b uint16) float64 {
	e, f := int(b>>10&0x1f), float64(b&0x3ff)
	var v float64
	switch e {
	case 0x1f:
		if f != 0 {
			return math.NaN()
		}
		v = math.Inf(1)
	case 0:
		v = f * math.Ldexp(1, -24)
	default:
		v = (1 + f/1024) * math.Ldexp(1, e-15)
	}
	if b&0x8000 != 0 {
		v = -v
	}
	return v
}

// decodeBFloat16 is the upper half of a binary32 bit pattern.
func decodeBFloat16(b uint16) float64 {
	return float64(math.Float32frombits(uint32(b) << 16))
}

func makeTable(decode func(uint16) float64) table16 {
	var t table16
	for b := uint32(0); b < 0x8000; b++ {
		v := decode(uint16(b))
		if math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		t.vals = append(t.vals, v)
		t.bits = append(t.bits, uint16(b))
	}
	t.max = t.vals[len(t.vals)-1]
	return t
}

// nearest is the reference rounding of a non-negative r to the table:
// the nearest value, the one with the even bit pattern at a tie; past the
// largest value, the midpoint between it and the next power of two
// (where the next value would be) is the overflow threshold, and a tie
// there goes to the even pattern, which is overflow (the largest value's
// pattern is odd). ok is false on overflow.
func (t table16) nearest(r *big.Rat) (*big.Rat, bool) {
	rf, _ := r.Float64()
	i := sort.SearchFloat64s(t.vals, rf)
	if i >= len(t.vals) {
		i = len(t.vals) - 1
	}
	best, bestBits := -1, uint16(0)
	var bestD *big.Rat
	for j := max(i-2, 0); j <= min(i+2, len(t.vals)-1); j++ {
		d := new(big.Rat).Sub(r, new(big.Rat).SetFloat64(t.vals[j]))
		d.Abs(d)
		if best < 0 || d.Cmp(bestD) < 0 || d.Cmp(bestD) == 0 && t.bits[j]&1 == 0 {
			best, bestD, bestBits = j, d, t.bits[j]
		}
	}
	_ = bestBits
	// Overflow: the next value above the largest would be 2^(emax+1);
	// r at or past the midpoint rounds there (ties to the even 2^(emax+1)).
	top := new(big.Rat).SetFloat64(t.max)
	ulp := new(big.Rat).SetFloat64(math.Pow(2, math.Ceil(math.Log2(t.max))))
	ulp.Sub(ulp, top)
	mid := new(big.Rat).Add(top, new(big.Rat).Quo(ulp, big.NewRat(2, 1)))
	if r.Cmp(mid) >= 0 {
		return nil, false
	}
	return new(big.Rat).SetFloat64(t.vals[best]), true
}

// roundSigned applies a non-negative reference rounding with odd symmetry.
func roundSigned(ref func(*big.Rat) (*big.Rat, bool), r *big.Rat) (*big.Rat, bool) {
	a := new(big.Rat).Abs(r)
	y, ok := ref(a)
	if ok && r.Sign() < 0 {
		y.Neg(y)
	}
	return y, ok
}

// probes returns the test points of a table: every value, every midpoint
// of adjacent values (a tie), the midpoints ± a small fraction of the gap,
// and the region past the largest value; both signs.
func probes(t table16, rng *rand.Rand) []*big.Rat {
	var ps []*big.Rat
	add := func(r *big.Rat) { ps = append(ps, r, new(big.Rat).Neg(r)) }
	for i := range t.vals {
		v := new(big.Rat).SetFloat64(t.vals[i])
		add(v)
		if i+1 < len(t.vals) && (i%7 == 0 || i < 2100 || i > len(t.vals)-2100) {
			w := new(big.Rat).SetFloat64(t.vals[i+1])
			mid := new(big.Rat).Quo(new(big.Rat).Add(v, w), big.NewRat(2, 1))
			gap := new(big.Rat).Sub(w, v)
			eps := new(big.Rat).Mul(gap, big.NewRat(1, int64(3+rng.IntN(1000))))
			add(mid)
			add(new(big.Rat).Add(mid, eps))
			add(new(big.Rat).Sub(mid, eps))
		}
	}
	top := new(big.Rat).SetFloat64(t.max)
	for _, f := range []int64{1, 3, 7, 8, 9, 15, 16, 17, 1000} {
		// top + f/16 of the gap to the next power of two.
		p2 := new(big.Rat).SetFloat64(math.Pow(2, math.Ceil(math.Log2(t.max))))
		gap := new(big.Rat).Sub(p2, top)
		add(new(big.Rat).Add(top, new(big.Rat).Mul(gap, big.NewRat(f, 16))))
	}
	return ps
}

// mismatches compares a rounding with the reference at the probes and
// returns how many differ (value or overflow).
func mismatches(round, ref func(*big.Rat) (*big.Rat, bool), ps []*big.Rat) (int, *big.Rat) {
	n := 0
	var first *big.Rat
	for _, p := range ps {
		y, ok := round(p)
		z, zok := ref(p)
		if ok != zok || ok && y.Cmp(z) != 0 {
			if first == nil {
				first = p
			}
			n++
		}
	}
	return n, first
}

// tiesAway is a planted fault: the rounding of RoundRat with ties away
// from zero instead of to even.
func tiesAway(f FloatFormat) func(*big.Rat) (*big.Rat, bool) {
	return func(r *big.Rat) (*big.Rat, bool) {
		if r.Sign() == 0 {
			return new(big.Rat), true
		}
		a := new(big.Rat).Abs(r)
		e := a.Num().BitLen() - a.Denom().BitLen()
		if a.Cmp(pow2Rat(e)) < 0 {
			e--
		}
		k := max(e, f.Emin) - f.P + 1
		x := new(big.Rat).Mul(a, pow2Rat(-k))
		n, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
		if new(big.Int).Lsh(m, 1).Cmp(x.Denom()) >= 0 {
			n.Add(n, big.NewInt(1))
		}
		y := new(big.Rat).Mul(new(big.Rat).SetInt(n), pow2Rat(k))
		if y.Cmp(pow2Rat(f.Emax+1)) >= 0 {
			return nil, false
		}
		if r.Sign() < 0 {
			y.Neg(y)
		}
		return y, true
	}
}

func TestRound16AgainstEveryValue(t *testing.T) {
	if raceEnabled {
		// Sequential arithmetic over all 2^16 values of each format: about
		// two thirds of spec's time under ThreadSanitizer, with no
		// concurrency of its own to race; the plain go test ./... runs it.
		t.Skip("exhaustive sequential check, run by the plain go test ./...; skipped under -race")
	}
	for _, tc := range []struct {
		f      FloatFormat
		decode func(uint16) float64
		omega  float64 // the overflow threshold, from the format's definition
	}{
		{FormatBinary16, decodeBinary16, 65520},
		{FormatBFloat16, decodeBFloat16, math.Ldexp(1, 128) - math.Ldexp(1, 119)},
	} {
		if tc.f.Name != FormatBinary16.Name && !exhaustive() {
			continue // bfloat16's 2^16 values: TLCHECK_EXHAUSTIVE=1 (ci/exhaustive.sh); binary16 runs by default
		}
		t.Run(tc.f.Name, func(t *testing.T) {
			tab := makeTable(tc.decode)
			ref := func(r *big.Rat) (*big.Rat, bool) { return roundSigned(tab.nearest, r) }
			ps := probes(tab, rand.New(rand.NewPCG(5, 9)))
			if n, first := mismatches(tc.f.RoundRat, ref, ps); n != 0 {
				t.Fatalf("%d of %d probes differ from the reference; first at %s", n, len(ps), first.FloatString(40))
			}
			// The planted fault (ties away from zero) differs at ties.
			if n, _ := mismatches(tiesAway(tc.f), ref, ps); n == 0 {
				t.Fatal("a rounding with ties away from zero was not caught")
			}
			// Ω: overflow exactly from it on.
			om := new(big.Rat).SetFloat64(tc.omega)
			if _, ok := tc.f.RoundRat(om); ok {
				t.Errorf("Ω = %g does not overflow", tc.omega)
			}
			below := new(big.Rat).Sub(om, pow2Rat(-200))
			if y, ok := tc.f.RoundRat(below); !ok || y.Cmp(new(big.Rat).SetFloat64(tab.max)) != 0 {
				t.Errorf("just below Ω: got %v, %v, want the largest finite value %g", y, ok, tab.max)
			}
			// Subnormals: the least one, half of it (a tie to the even 0)
			// and just above half (rounds up to the least one).
			least := tab.vals[1]
			if y, _ := tc.f.RoundRat(new(big.Rat).SetFloat64(least / 2)); y.Sign() != 0 {
				t.Errorf("half the least subnormal rounds to %v, want 0 (tie to even)", y)
			}
			if y, _ := tc.f.RoundRat(new(big.Rat).SetFloat64(least * 0.75)); y.Cmp(new(big.Rat).SetFloat64(least)) != 0 {
				t.Errorf("3/4 of the least subnormal rounds to %v, want %g", y, least)
			}
		})
	}
}

func TestRoundBinary32AgainstGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	var xs []float64
	maxF32 := float64(math.Float32frombits(0x7f7fffff))
	for i := 0; i < 20000; i++ {
		// A float32 value and its neighbour, and points between them: the
		// midpoint (a tie, exact in float64) and near it.
		b := rng.Uint32() &^ (0xff << 23)
		b |= uint32(rng.IntN(255)) << 23 // finite, subnormals included
		v := float64(math.Float32frombits(b))
		w := float64(math.Float32frombits(b + 1))
		if math.IsInf(w, 0) {
			continue
		}
		mid := v + (w-v)/2
		xs = append(xs, v, mid, math.Nextafter(mid, math.Inf(1)), math.Nextafter(mid, math.Inf(-1)))
	}
	xs = append(xs, maxF32, maxF32+math.Ldexp(1, 103), math.Nextafter(maxF32+math.Ldexp(1, 103), 0),
		math.Ldexp(1, -150), math.Nextafter(math.Ldexp(1, -150), 1), math.Ldexp(3, -151), 1e300)
	bad, away := 0, 0
	for _, x := range xs {
		for _, s := range []float64{1, -1} {
			x := s * x
			want := float64(float32(x)) // Go converts with IEEE round to nearest even, ±Inf on overflow
			got := FormatBinary32.RoundFloat64(x)
			if got != want || math.Signbit(got) != math.Signbit(want) {
				if bad < 5 {
					t.Errorf("round_f32(%v) = %v, Go's float32 gives %v", x, got, want)
				}
				bad++
			}
			y, ok := tiesAway(FormatBinary32)(new(big.Rat).SetFloat64(x))
			if yf := math.Inf(int(s)); ok {
				yf, _ = y.Float64()
				if yf != want {
					away++
				}
			} else if yf != want {
				away++
			}
		}
	}
	if bad != 0 {
		t.Fatalf("%d of %d points differ from Go's conversion", bad, 2*len(xs))
	}
	if away == 0 {
		t.Fatal("a rounding with ties away from zero was not caught")
	}
}

// TestRoundScalars: every scalar's RoundTo agrees with the exact rounding
// (Interval encloses it; Dual has a zero tangent), and overflow is a
// DomainError over Rat and Interval and ±∞ over the floats.
func TestRoundScalars(t *testing.T) {
	cases := []struct {
		x    float64
		f    FloatFormat
		want float64
	}{
		{1 + 0x1p-11, FormatBinary16, 1},            // a tie: to the even 1
		{1 + 3*0x1p-11, FormatBinary16, 1 + 0x1p-9}, // a tie: to the even 1 + 2^-9
		{0x1p-25, FormatBinary16, 0},                // half the least subnormal: to 0
		{0x1.8p-25, FormatBinary16, 0x1p-24},        // above half: the least subnormal
		{65519, FormatBinary16, 65504},              // below Ω
		{1 + 0x1p-8, FormatBFloat16, 1},             // a tie
		{-(1 + 3*0x1p-8), FormatBFloat16, -(1 + 0x1p-6)},
		{1 + 0x1p-24, FormatBinary32, 1},
		{0.1, FormatBinary32, float64(float32(0.1))},
	}
	for _, c := range cases {
		r, _ := RatFromFloat64(c.x)
		y, err := r.RoundTo(c.f)
		if err != nil || y.Float64() != c.want {
			t.Errorf("Rat round %s(%v) = %v, %v; want %v", c.f.Name, c.x, y, err, c.want)
		}
		if g, _ := F64(c.x).RoundTo(c.f); float64(g) != c.want {
			t.Errorf("F64 round %s(%v) = %v; want %v", c.f.Name, c.x, g, c.want)
		}
		if c.x == float64(float32(c.x)) {
			if g, _ := F32(c.x).RoundTo(c.f); float64(g) != c.want {
				t.Errorf("F32 round %s(%v) = %v; want %v", c.f.Name, c.x, g, c.want)
			}
			if g, _ := Binary32(math.Float32bits(float32(c.x))).RoundTo(c.f); g.Float64() != c.want {
				t.Errorf("Binary32 round %s(%v) = %v; want %v", c.f.Name, c.x, g, c.want)
			}
		}
		iv, err := Interval{Lo: c.x, Hi: c.x}.RoundTo(c.f)
		if err != nil || iv.Lo > c.want || iv.Hi < c.want {
			t.Errorf("Interval round %s(%v) = %v, %v; want it to contain %v", c.f.Name, c.x, iv, err, c.want)
		}
		d, err := Dual[Rat]{r, NewRat(3, 1)}.RoundTo(c.f)
		if err != nil || d.Re.Float64() != c.want || !d.Du.IsZero() {
			t.Errorf("Dual round %s(%v) = %v, %v; want (%v, 0)", c.f.Name, c.x, d, err, c.want)
		}
	}
	r, _ := RatFromFloat64(65520)
	if _, err := r.RoundTo(FormatBinary16); err == nil {
		t.Error("Rat round_f16(65520) did not overflow")
	}
	if _, err := (Interval{Lo: 1, Hi: 70000}).RoundTo(FormatBinary16); err == nil {
		t.Error("Interval round_f16([1, 70000]) did not refuse")
	}
	if g, _ := F32(70000).RoundTo(FormatBinary16); !math.IsInf(float64(g), 1) {
		t.Errorf("F32 round_f16(70000) = %v, want +Inf", g)
	}
	if g, _ := F64(-0x1p-30).RoundTo(FormatBinary16); g != 0 || !math.Signbit(float64(g)) {
		t.Errorf("F64 round_f16(−2^-30) = %v, want −0", g)
	}
	if g, _ := F64(math.NaN()).RoundTo(FormatBinary16); !math.IsNaN(float64(g)) {
		t.Errorf("F64 round_f16(NaN) = %v, want NaN", g)
	}
}

// TestIsFloatCast: exactly the three binary-format casts are float casts,
// each a registered primitive; trunc_int and every other registry op are not.
func TestIsFloatCast(t *testing.T) {
	want := map[string]bool{"round_f16": true, "round_bf16": true, "round_f32": true}
	for name := range want {
		if _, err := Info(name); err != nil {
			t.Errorf("%s is not registered: %v", name, err)
		}
	}
	for _, info := range Infos() {
		if got := IsFloatCast(info.Name); got != want[info.Name] {
			t.Errorf("IsFloatCast(%q) = %v, want %v", info.Name, got, want[info.Name])
		}
	}
}
