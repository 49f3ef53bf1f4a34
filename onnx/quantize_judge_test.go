package onnx

import (
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// refQuant is an independent QuantizeLinear of one float32 point t in
// FLOAT precision: the division by Go's float32 arithmetic (IEEE 754,
// correctly rounded), then round half to even by big.Int floor division,
// + zp, clamp to the type's range. ok is false for NaN.
func refQuant(t, s float32, zp int64, bits int, signed bool) (int64, bool) {
	q := t / s
	if q != q {
		return 0, false
	}
	lo, hi := int64(0), int64(1)<<bits-1
	if signed {
		lo, hi = -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
	}
	if math.IsInf(float64(q), 0) {
		if q > 0 {
			return hi, true
		}
		return lo, true
	}
	r := new(big.Rat).SetFloat64(float64(q))
	twice := new(big.Rat).Add(new(big.Rat).Mul(r, big.NewRat(2, 1)), big.NewRat(1, 1)) // 2q + 1
	fl := new(big.Int).Div(twice.Num(), twice.Denom())                                 // ⌊2q + 1⌋
	n := new(big.Int).Rsh(fl, 1)                                                       // ⌊q + 1/2⌋
	if twice.IsInt() && fl.Bit(0) == 0 && n.Bit(0) == 1 {                              // 2q + 1 an even integer: q is a tie, go to even
		n.Sub(n, big.NewInt(1))
	}
	y := n.Int64() + zp
	return min(max(y, lo), hi), true
}

func qrat(x float32) *big.Rat { return new(big.Rat).SetFloat64(float64(x)) }

// TestQuantizeEnclosure: the decision over an enclosure (quantize_judge.go)
// against refQuant at the enclosure's points. A decided row's expected
// value is refQuant of its endpoints (which the row asserts are one
// value); an undecided row has two points of the enclosure quantizing
// differently, or an undefined input.
func TestQuantizeEnclosure(t *testing.T) {
	f32, f16 := spec.FormatBinary32, spec.FormatBinary16
	inf := float32(math.Inf(1))
	rows := []struct {
		name    string
		lo, hi  float32
		s       float32
		zp      int64
		bits    int
		signed  bool
		fText   spec.FloatFormat
		decided bool
	}{
		{"inside one code", 1.2299, 1.2301, 0.01, 0, 8, true, f32, true},
		{"a .5 tie inside the enclosure", 0.25 - 1e-6, 0.25 + 1e-6, 0.5, 0, 8, true, f32, false},
		{"a tie at a point: even (0.5 → 0)", 0.25, 0.25, 0.5, 0, 8, true, f32, true},
		{"a tie at a point: even (1.5 → 2)", 0.75, 0.75, 0.5, 0, 8, true, f32, true},
		{"an enclosure one side of the tie", 0.25 + 1e-6, 0.25 + 2e-6, 0.5, 0, 8, true, f32, true},
		{"saturated above (UINT8)", 1000, 2000, 1, 0, 8, false, f32, true},
		{"saturated below, to −∞ (UINT8)", -inf, -5, 1, 0, 8, false, f32, true},
		{"straddles 127.5 but saturates both sides (INT8)", 127.4, 127.6, 1, 0, 8, true, f32, true},
		{"zero point 128 (UINT8)", -0.01, 0.01, 1, 128, 8, false, f32, true},
		{"negative scale", 1.0, 1.1, -0.5, 0, 8, true, f32, true},
		{"negative scale straddling −2.5", 1.2, 1.3, -0.5, 0, 8, true, f32, false},
		{"INT16 wide enclosure", -3, 3, 0.001, 0, 16, true, f32, false},
		{"FLOAT16 division: 2049 → 2048 in the text, 2049 in the reference", 2049, 2049, 1, 0, 16, true, f16, false},
		{"zero scale", 1, 2, 0, 0, 8, true, f32, false},
		{"NaN", float32(math.NaN()), 1, 1, 0, 8, true, f32, false},
		{"empty (lo > hi)", 2, 1, 1, 0, 8, true, f32, false},
	}
	for _, r := range rows {
		zp := big.NewRat(r.zp, 1)
		k, ok := QuantizeEnclosure(float64(r.lo), float64(r.hi), qrat(r.s), zp, r.fText, f32, r.bits, r.signed)
		if ok != r.decided {
			t.Errorf("%s: decided %v, want %v", r.name, ok, r.decided)
			continue
		}
		if !ok {
			continue
		}
		a, oka := refQuant(r.lo, r.s, r.zp, r.bits, r.signed)
		b, okb := refQuant(r.hi, r.s, r.zp, r.bits, r.signed)
		if !oka || !okb || a != b {
			t.Fatalf("%s: bad row, the endpoints quantize to %d and %d", r.name, a, b)
		}
		if k != a {
			t.Errorf("%s: %d, want %d", r.name, k, a)
		}
	}
}

// TestQuantizeEnclosureSound: on random float32 enclosures of a few ulps
// to a few codes wide, around values near ties and near the saturation
// points, a decided value is refQuant of every float32 in the enclosure
// (the theorem's claim, over the points a FLOAT runtime can hold), and an
// enclosure whose endpoints refQuant to one value is decided (the
// decision loses nothing when both precisions are FLOAT).
func TestQuantizeEnclosureSound(t *testing.T) {
	rng := rand.New(rand.NewSource(35))
	f32 := spec.FormatBinary32
	decided, undecided := 0, 0
	for range 2000 {
		s := float32(math.Ldexp(1+rng.Float64(), -rng.Intn(12)))
		if rng.Intn(4) == 0 {
			s = -s
		}
		zp := int64(rng.Intn(256))
		// centre: a tie (n + 1/2)·s, a code n·s, or near saturation.
		n := float64(rng.Intn(600) - 300)
		c := float32((n + 0.5*float64(rng.Intn(2))) * float64(s))
		lo := c
		for range rng.Intn(40) {
			lo = math.Nextafter32(lo, float32(math.Inf(-1)))
		}
		hi := c
		for range rng.Intn(40) {
			hi = math.Nextafter32(hi, float32(math.Inf(1)))
		}
		k, ok := QuantizeEnclosure(float64(lo), float64(hi), qrat(s), big.NewRat(zp, 1), f32, f32, 8, false)
		a, _ := refQuant(lo, s, zp, 8, false)
		b, _ := refQuant(hi, s, zp, 8, false)
		if ok != (a == b) {
			t.Fatalf("[%g, %g]/%g + %d: decided %v, endpoints %d %d", lo, hi, s, zp, ok, a, b)
		}
		if !ok {
			undecided++
			continue
		}
		decided++
		for x := lo; x <= hi; x = math.Nextafter32(x, float32(math.Inf(1))) {
			if y, _ := refQuant(x, s, zp, 8, false); y != k {
				t.Fatalf("[%g, %g]/%g + %d decided %d, but %g quantizes to %d", lo, hi, s, zp, k, x, y)
			}
		}
	}
	if decided == 0 || undecided == 0 {
		t.Fatalf("sweep not exercising both outcomes: %d decided, %d undecided", decided, undecided)
	}
}
