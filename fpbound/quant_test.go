package fpbound

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// quantRef32 is the runtime's code: the binary32 value v, one binary32
// division by s (Go's float32 arithmetic is IEEE's), math.RoundToEven, the
// zero point and the clamp — written independently of spec's quant_int.
func quantRef32(v, s float32, zp, lo, hi float64) float64 {
	return math.Min(hi, math.Max(lo, math.RoundToEven(float64(v/s))+zp))
}

// TestQuantBound: y = Q(x·3/7) in binary32 for Q = quant_int (scale 2⁻³ or
// 0.1f, zero point 3, INT8's range) and Q = round_int, at inputs whose
// exact product lies within a few binary32 ulps of a tie of the grid (so
// the computed product may fall on the other side and give the next code)
// and at inputs far from one. Every element with a finite bound has bound
// 0 and the binary32 evaluation's code equals the exact code (over
// big.Rat: spec's forward of the exact product); every element whose code
// differs is +∞ (inconclusive); inputs far from a tie are decided. The
// planted rule that judges the exact enclosure X alone (E dropped) is
// caught: it would decide some element whose computed code differs.
func TestQuantBound(t *testing.T) {
	lo, hi := spec.IntTypeRange(8, true)
	for _, tc := range []struct {
		name string
		kind irsem.Kind
		s    float32 // the scale; 1 and no clamp for round_int
		zp   float64
	}{
		{"quant_int s=1/8", irsem.Kind{Op: "quant_int", C: spec.NewRat(1, 8), Bias: spec.NewRat(3, 1), Lo: spec.RatFromBig(lo), Hi: spec.RatFromBig(hi)}, 0.125, 3},
		{"quant_int s=0.1f", irsem.Kind{Op: "quant_int", C: spec.RatFromBig(new(big.Rat).SetFloat64(float64(float32(0.1)))), Bias: spec.NewRat(3, 1), Lo: spec.RatFromBig(lo), Hi: spec.RatFromBig(hi)}, float32(0.1), 3},
		{"round_int", irsem.Kind{Op: "round_int"}, 1, 0},
	} {
		r := rand.New(rand.NewPCG(36, 1))
		const n = 300
		xs := make([]spec.Rat, n)
		xf := make([]float32, n)
		for i := range xs {
			k := float64(r.IntN(200)-100) + 0.5 // a tie of the grid (code units)
			if i%3 == 2 {
				k += 0.25 // far from one
			}
			xf[i] = float32(k * float64(tc.s) * 7 / 3)
			if i%3 == 1 {
				xf[i] = math.Nextafter32(xf[i], float32(math.Inf(1)))
			}
			xs[i], _ = spec.RatFromFloat64(float64(xf[i]))
		}
		b := newBuilder(spec.Shape{n})
		w := b.konst(filled(spec.Shape{n}, spec.NewRat(3, 7)))
		m := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{n}, 0, w)
		b.node(tc.kind, spec.Shape{n}, m)
		ens, err := Bounds(b.g, b.p, ratTensor(spec.Shape{n}, xs...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var f spec.FloatFormat
		if tc.kind.Op == "round_int" {
			f = spec.QuantFormat(spec.QuantGrid{})
		} else {
			f = spec.QuantFormat(spec.QuantGrid{Scale: tc.kind.C.Big(), Zp: tc.kind.Bias.Big(), Lo: lo, Hi: hi})
		}
		c32 := float32(3.0 / 7)
		crossed, decided, far, planted := 0, 0, 0, 0
		for i := range xs {
			exact, _ := f.RoundRat(new(big.Rat).Mul(xs[i].Big(), big.NewRat(3, 7)))
			got := math.RoundToEven(float64(xf[i] * c32)) // round_int's runtime
			if tc.kind.Op == "quant_int" {
				got = quantRef32(xf[i]*c32, tc.s, tc.zp, -128, 127)
			}
			same := new(big.Rat).SetFloat64(got).Cmp(exact) == 0
			if !ens[i].Exact.Contains(exact) {
				t.Fatalf("%s element %d: exact %s outside %v", tc.name, i, exact.RatString(), ens[i].Exact)
			}
			if !same {
				crossed++
				// The planted rule that judges the exact enclosure alone
				// (the operand's error E dropped) decides this element —
				// its image is one code — and would be wrong: caught.
				if q, err := ens[i].Exact.RoundTo(f); err == nil && q.Lo == q.Hi {
					planted++
				}
			}
			if math.IsInf(ens[i].Bound, 1) {
				if i%3 == 2 {
					t.Errorf("%s element %d: far from a tie, but undecided", tc.name, i)
				}
				continue
			}
			decided++
			if i%3 == 2 {
				far++
			}
			if ens[i].Bound != 0 || !same {
				t.Fatalf("%s element %d: bound %g, computed %v, exact %s: a finite bound must be 0 and exact", tc.name, i, ens[i].Bound, got, exact.RatString())
			}
		}
		t.Logf("%s: %d of %d evaluations give another code than the exact one; %d decided (bound 0), %d of them far from a tie", tc.name, crossed, n, decided, far)
		if crossed == 0 || planted == 0 {
			t.Errorf("%s: crossed %d, planted rule caught %d times: the test exercises too little", tc.name, crossed, planted)
		}
		if far != n/3 {
			t.Errorf("%s: %d of %d far elements decided", tc.name, far, n/3)
		}
	}
}
