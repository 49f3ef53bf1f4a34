package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The expected roundings are worked by hand from the formats' definitions
// (binary16: p = 11, emin = −14, largest 65504; bfloat16: p = 8,
// emin = −126, largest (2 − 2^-7)·2^127), not computed by the code under
// test.
func TestNearest16(t *testing.T) {
	pow := func(k int) *big.Rat {
		if k >= 0 {
			return new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(k)))
		}
		return new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(-k)))
	}
	add := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
	sub := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }
	mul := func(k int64, a *big.Rat) *big.Rat { return new(big.Rat).Mul(big.NewRat(k, 1), a) }
	cases := []struct {
		name string
		fm   format
		r    *big.Rat
		want float64
	}{
		{"f16 1", binary16{}, big.NewRat(1, 1), 1},
		{"f16 1+2^-11 ties to even 1", binary16{}, add(pow(0), pow(-11)), 1},
		{"f16 1+3·2^-11 ties to even 1+2^-9", binary16{}, add(pow(0), mul(3, pow(-11))), 1 + 0x1p-9},
		{"f16 1/3 = 1365/4096", binary16{}, big.NewRat(1, 3), 1365.0 / 4096},
		{"f16 -1/3", binary16{}, big.NewRat(-1, 3), -1365.0 / 4096},
		{"f16 65504 is the largest", binary16{}, big.NewRat(65504, 1), 65504},
		{"f16 65519 rounds down", binary16{}, big.NewRat(65519, 1), 65504},
		{"f16 65520 overflows", binary16{}, big.NewRat(65520, 1), math.Inf(1)},
		{"f16 -65520 overflows", binary16{}, big.NewRat(-65520, 1), math.Inf(-1)},
		{"f16 2^-24 least subnormal", binary16{}, pow(-24), 0x1p-24},
		{"f16 2^-25 ties to even 0", binary16{}, pow(-25), 0},
		{"f16 3·2^-25 ties to even 2^-23", binary16{}, mul(3, pow(-25)), 0x1p-23},
		{"f16 2^-14 − 2^-25 rounds up to the least normal", binary16{}, sub(pow(-14), pow(-25)), 0x1p-14},
		{"bf16 1+2^-8 ties to even 1", bfloat16{}, add(pow(0), pow(-8)), 1},
		{"bf16 1/3 = 171/512", bfloat16{}, big.NewRat(1, 3), 171.0 / 512},
		{"bf16 largest", bfloat16{}, sub(pow(128), pow(120)), 0x1p128 - 0x1p120},
		{"bf16 2^128 − 2^119 overflows", bfloat16{}, sub(pow(128), pow(119)), math.Inf(1)},
		{"bf16 2^-133 least subnormal", bfloat16{}, pow(-133), 0x1p-133},
		{"bf16 2^-134 ties to even 0", bfloat16{}, pow(-134), 0},
		{"bf16 257 ties to even 256", bfloat16{}, big.NewRat(257, 1), 256},
	}
	for _, c := range cases {
		if got := c.fm.nearest(c.r); got != c.want {
			t.Errorf("%s: nearest = %g, want %g", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		fm   format
		f    float64
		want bool
	}{
		{binary16{}, 65504, true}, {binary16{}, 65505, false}, {binary16{}, 1 + 0x1p-10, true}, {binary16{}, 1 + 0x1p-11, false},
		{binary16{}, 0x1p-24, true}, {binary16{}, 0x1p-25, false}, {binary16{}, 65536, false},
		{bfloat16{}, 1 + 0x1p-7, true}, {bfloat16{}, 1 + 0x1p-8, false}, {bfloat16{}, 0x1p100, true}, {bfloat16{}, 0x1p-133, true},
	} {
		if got := c.fm.holds(c.f); got != c.want {
			t.Errorf("%T.holds(%g) = %v, want %v", c.fm, c.f, got, c.want)
		}
	}
}

// TestHandDerivedBounds16 is TestHandDerivedBounds64's dot product with
// the 16-bit constants: each product 3/4·3/2 = 9/8 is charged
// u·9/8 + 2η, the sum of n terms γ_{n−1}·Σ.
func TestHandDerivedBounds16(t *testing.T) {
	for _, f := range []struct {
		name   string
		bounds func(*irsem.Graph, *irsem.Payload, irsem.RatTensor, Options) ([]Enclosure, error)
		u, eta float64
	}{{"binary16", Bounds16, 0x1p-11, 0x1p-25}, {"bfloat16", BoundsBF16, 0x1p-8, 0x1p-134}} {
		for _, n := range []int{2, 8, 64} {
			b := newBuilder(spec.Shape{n})
			w := b.konst(filled(spec.Shape{n}, spec.NewRat(3, 2)))
			m := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{n}, 0, w)
			b.node(irsem.Kind{Op: irsem.OpSum}, spec.Shape{}, m)
			en, err := f.bounds(b.g, b.p, filled(spec.Shape{n}, spec.NewRat(3, 4)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			gamma := func(k float64) float64 { return k * f.u / (1 - k*f.u) }
			ei := f.u*9/8 + 2*f.eta
			nf := float64(n)
			near(t, fmt.Sprintf("%s dot of %d", f.name, n), en[0].Bound, nf*ei+gamma(nf-1)*nf*(9.0/8+ei))
		}
	}
}

// binary16BadU plants a fault: binary16 with u = 2^-14, eight times too
// small.
type binary16BadU struct{ binary16 }

var consts16BadU = func() consts { c := consts16; c.u = 0x1p-14; return c }()

func (binary16BadU) consts() *consts { return &consts16BadU }

// TestSound16Dot is the empirical side of the theorem for binary16 and
// bfloat16 on dot products of random values of the format: the left fold,
// each product and partial sum rounded to the format (nearestP), lies
// within the bound of the exact value; the planted u = 2^-14 is caught.
func TestSound16Dot(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 1))
	type fmtCase struct {
		name   string
		round  func(*big.Rat) float64
		bounds func(*irsem.Graph, *irsem.Payload, irsem.RatTensor, Options) ([]Enclosure, error)
	}
	for _, f := range []fmtCase{
		{"binary16", binary16{}.nearest, Bounds16},
		{"bfloat16", bfloat16{}.nearest, BoundsBF16},
	} {
		worst, caught := 0.0, 0
		var rel []float64 // bound/|exact|: the relative planted error caught with certainty
		flips, flipsCaught := 0, 0
		for trial := 0; trial < 200; trial++ {
			n := 2 + r.IntN(30)
			xs, ws := make([]spec.Rat, n), make([]spec.Rat, n)
			xf, wf := make([]float64, n), make([]float64, n)
			for i := range xs {
				xf[i] = f.round(new(big.Rat).SetFloat64(r.NormFloat64() * 4))
				wf[i] = f.round(new(big.Rat).SetFloat64(r.NormFloat64()))
				xs[i], _ = spec.RatFromFloat64(xf[i])
				ws[i], _ = spec.RatFromFloat64(wf[i])
			}
			b := newBuilder(spec.Shape{n})
			w := b.konst(ratTensor(spec.Shape{n}, ws...))
			m := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{n}, 0, w)
			b.node(irsem.Kind{Op: irsem.OpSum}, spec.Shape{}, m)
			x := ratTensor(spec.Shape{n}, xs...)
			en, err := f.bounds(b.g, b.p, x, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The format's evaluation (left fold) and the exact value.
			acc := 0.0
			exact := new(big.Rat)
			for i := range xf {
				p := new(big.Rat).Mul(new(big.Rat).SetFloat64(xf[i]), new(big.Rat).SetFloat64(wf[i]))
				exact.Add(exact, p)
				pr := f.round(p)
				acc = f.round(new(big.Rat).Add(new(big.Rat).SetFloat64(acc), new(big.Rat).SetFloat64(pr)))
			}
			d, _ := new(big.Rat).Abs(new(big.Rat).Sub(new(big.Rat).SetFloat64(acc), exact)).Float64()
			if math.IsInf(en[0].Bound, 1) {
				continue
			}
			if !en[0].Exact.Contains(exact) {
				t.Fatalf("%s trial %d: exact value outside the enclosure %v", f.name, trial, en[0].Exact)
			}
			if d > en[0].Bound {
				t.Fatalf("%s trial %d: |v̂ − x| = %g > bound %g", f.name, trial, d, en[0].Bound)
			}
			if en[0].Bound > 0 {
				worst = max(worst, d/en[0].Bound)
			}
			// Sensitivity: a recorded value v̂·(1+ρ) is caught once
			// |v̂(1+ρ) − x| > bound, certainly once |ρ|·|x| > bound + d;
			// a sign flip −v̂ is caught whenever |x| is above the bound.
			if ex, _ := exact.Float64(); ex != 0 {
				rel = append(rel, (en[0].Bound+d)/math.Abs(ex))
				if math.Abs(ex) > 2*en[0].Bound {
					flips++
					fd, _ := new(big.Rat).Abs(new(big.Rat).Add(new(big.Rat).SetFloat64(acc), exact)).Float64()
					if fd > en[0].Bound {
						flipsCaught++
					}
				}
			}
			if f.name == "binary16" {
				bad, err := bounds[binary16BadU](b.g, b.p, x, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if d > bad[0].Bound {
					caught++
				}
			}
		}
		t.Logf("%s: worst error/bound %.3g", f.name, worst)
		slices.Sort(rel)
		med := rel[len(rel)/2]
		t.Logf("%s: relative planted error caught with certainty: median %.3g, min %.3g (%d dots); sign flips caught %d of %d", f.name, med, rel[0], len(rel), flipsCaught, flips)
		if flipsCaught != flips || flips == 0 {
			t.Errorf("%s: a sign flip was missed (%d of %d caught): the bound is blind", f.name, flipsCaught, flips)
		}
		if med > 0.5 {
			t.Errorf("%s: the median planted relative error caught is %.3g: the bound cannot tell a halved value from rounding", f.name, med)
		}
		if worst == 0 {
			t.Errorf("%s: no evaluation ever rounded: the test exercises nothing", f.name)
		}
		if f.name == "binary16" && caught == 0 {
			t.Errorf("the planted u = 2^-14 is never caught")
		}
	}
}
