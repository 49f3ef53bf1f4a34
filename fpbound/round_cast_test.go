package fpbound

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// half16 returns the binary16 midpoints 1 + (2k+1)·2^-11 (ties of the
// cast), k drawn at random.
func half16(r *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = (1 + float64(2*r.IntN(1000)+1)*0x1p-11) * math.Ldexp(1, r.IntN(8)-4)
	}
	return out
}

// castGraph is y = round_T(x ⊙ c): a product rounded in binary32, then the
// cast.
func castGraph(n int, c spec.Rat, op string) *builder {
	b := newBuilder(spec.Shape{n})
	w := b.konst(filled(spec.Shape{n}, c))
	m := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{n}, 0, w)
	b.node(irsem.Kind{Op: irsem.Op(op)}, spec.Shape{n}, m)
	return b
}

// TestCastBoundSound: the binary32 evaluation of round_f16(x·3/7) at
// inputs whose exact product lies within an ulp of a binary16 tie (so the
// binary32 product may fall on the other side of the tie and convert one
// binary16 ulp away) is within the bound of the exact round_f16(x·3/7),
// computed over big.Rat here. The planted bound that keeps only the
// operand's own error (a cast charged nothing, as if R were 1-Lipschitz)
// is caught: some evaluation exceeds it. The same for the first-order
// bound (cast37): it holds every evaluation, and the operand's own
// first-order bound (the cast the identity charged nothing) is exceeded.
func TestCastBoundSound(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 7))
	const n = 400
	c := spec.NewRat(3, 7)
	ms := half16(r, n)
	xs := make([]spec.Rat, n)
	xf := make([]float32, n)
	for i, m := range ms {
		// x = fl32(m·7/3), so x·3/7 is within a binary32 ulp of the tie m.
		xf[i] = float32(m * 7 / 3)
		xs[i], _ = spec.RatFromFloat64(float64(xf[i]))
	}
	in := ratTensor(spec.Shape{n}, xs...)
	b := castGraph(n, c, "round_f16")
	ens, err := Bounds(b.g, b.p, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The operand's own bound: the same graph without the cast.
	bare := castGraph(n, c, "round_f16")
	bare.g.Nodes = bare.g.Nodes[:3]
	bare.g.OutputID = 2
	opnd, err := Bounds(bare.g, bare.p, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The first-order bound (cast37: the cast the identity plus δ(x),
	// charged twice a rounding), and its planted fault: the operand's
	// first-order bound alone (the cast the identity, charged nothing).
	sh, err := SharpBounds(b.g, b.p, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	shBare, err := SharpBounds(bare.g, bare.p, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c32 := float32(3.0 / 7)
	jumps, planted, plantedFO := 0, 0, 0
	for i := range xs {
		exact, ok := spec.FormatBinary16.RoundRat(new(big.Rat).Mul(xs[i].Big(), big.NewRat(3, 7)))
		if !ok {
			t.Fatal("overflow")
		}
		got := spec.FormatBinary16.RoundFloat64(float64(xf[i] * c32)) // binary32 product, then the cast
		d, _ := new(big.Rat).Abs(new(big.Rat).Sub(new(big.Rat).SetFloat64(got), exact)).Float64()
		if math.IsInf(ens[i].Bound, 1) {
			t.Fatalf("element %d: no bound (%s)", i, ens[i].Reason)
		}
		if !ens[i].Exact.Contains(exact) {
			t.Fatalf("element %d: exact %s outside %v", i, exact.FloatString(20), ens[i].Exact)
		}
		if d > ens[i].Bound {
			t.Fatalf("element %d: |ŷ − y| = %g > bound %g", i, d, ens[i].Bound)
		}
		if d != 0 {
			jumps++
		}
		if d > opnd[i].Bound {
			planted++
		}
		if math.IsInf(sh[i].FirstOrder, 1) || d > sh[i].FirstOrder {
			t.Fatalf("element %d: |ŷ − y| = %g, first-order bound %g (%s)", i, d, sh[i].FirstOrder, sh[i].FirstOrderReason)
		}
		if d > shBare[i].FirstOrder {
			plantedFO++
		}
	}
	if plantedFO == 0 {
		t.Fatal("the planted first-order bound (the cast charged nothing) was never exceeded: it is not caught")
	}
	t.Logf("first-order: the cast charged nothing is exceeded on %d of %d elements", plantedFO, n)
	t.Logf("%d of %d evaluations converted to another binary16 value than the exact one", jumps, n)
	if jumps == 0 {
		t.Fatal("no evaluation crossed a tie: the test exercises nothing")
	}
	if planted == 0 {
		t.Fatal("the planted bound (the operand's error alone) was never exceeded: it is not caught")
	}
}

// TestCastOfInputExact: a cast of recorded inputs (E = 0) has bound 0 in
// the cast's own format and in binary32 (the value converted is the exact
// one), so the conversion with ties to even holds and one with ties away
// from zero fails at the ties; the first-order bound exists (every box is
// a point). In a binary16 evaluation M1 holds the input as fl16(x): the
// bound is one binary16 ulp, and the box straddles the tie.
func TestCastOfInputExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 22))
	xsF := half16(r, 64)
	xs := make([]spec.Rat, len(xsF))
	for i, x := range xsF {
		xs[i], _ = spec.RatFromFloat64(x)
	}
	in := ratTensor(spec.Shape{len(xs)}, xs...)
	b := newBuilder(spec.Shape{len(xs)})
	b.node(irsem.Kind{Op: "round_f16"}, spec.Shape{len(xs)}, 0)
	for _, f := range []struct {
		name  string
		sharp func(*irsem.Graph, *irsem.Payload, irsem.RatTensor, Options) ([]Sharp, error)
	}{{"binary16", SharpBounds16}, {"binary32", SharpBounds}} {
		sh, err := f.sharp(b.g, b.p, in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range xsF {
			even := spec.FormatBinary16.RoundFloat64(x)
			// Ties away from zero: x is a tie, so the other neighbour.
			away := even + (x-even)*2
			if f.name == "binary16" {
				// M1 holds the float32 input as fl16(x) in a binary16
				// evaluation: the cast is then within one binary16 ulp
				// (both neighbours of the tie), and ties away holds too.
				if b := sh[i].Bound; b > 2*math.Abs(x-even)*(1+0x1p-40) {
					t.Errorf("%s element %d: bound %g above one ulp %g", f.name, i, b, 2*math.Abs(x-even))
				}
			} else if sh[i].Bound != 0 {
				t.Errorf("%s element %d: bound %g, want 0 (the input is exact)", f.name, i, sh[i].Bound)
			}
			if f.name == "binary32" && math.IsInf(sh[i].FirstOrder, 1) {
				t.Errorf("%s element %d: no first-order bound (%s)", f.name, i, sh[i].FirstOrderReason)
			}
			if v := JudgeFloat64(even, sh[i].Enclosure).Verdict; v != Holds {
				t.Errorf("%s element %d: round to even %v is %v, want holds", f.name, i, even, v)
			}
			if v := JudgeFloat64(away, sh[i].Enclosure).Verdict; f.name == "binary32" && v != Fails {
				t.Errorf("%s element %d: planted ties-away %v (exact %v, bound %g) is %v, want fails", f.name, i, away, sh[i].Exact, sh[i].Bound, v)
			}
		}
	}
}

// TestCastFormatsAndDiscontinuity: a bfloat16 cast inside a binary16
// evaluation (formats that nest neither way) has no bound; a computed
// operand whose box straddles a tie voided the first-order bound, naming
// the discontinuity, before cast37 (castIdentity off), while the classic
// bound decides; with the identity treatment the first-order bound is
// finite and holds the evaluation; an operand past Ω has no bound.
func TestCastFormatsAndDiscontinuity(t *testing.T) {
	one := filled(spec.Shape{1}, spec.NewRat(5, 4))
	b := newBuilder(spec.Shape{1})
	b.node(irsem.Kind{Op: "round_bf16"}, spec.Shape{1}, 0)
	en, err := Bounds16(b.g, b.p, one, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(en[0].Bound, 1) {
		t.Errorf("round_bf16 in binary16: bound %g, want +∞", en[0].Bound)
	}
	// x·3/7 at the tie 1 + 2^-11 (x = fl32 of it times 7/3).
	m := 1 + 0x1p-11
	x, _ := spec.RatFromFloat64(float64(float32(m * 7 / 3)))
	g := castGraph(1, spec.NewRat(3, 7), "round_f16")
	castIdentity = false
	sh, err := SharpBounds(g.g, g.p, ratTensor(spec.Shape{1}, x), Options{})
	castIdentity = true
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(sh[0].FirstOrder, 1) || !strings.Contains(sh[0].FirstOrderReason, "discontinuity") {
		t.Errorf("straddling box without the identity treatment: first-order %g (%q), want +∞ naming the discontinuity", sh[0].FirstOrder, sh[0].FirstOrderReason)
	}
	if math.IsInf(sh[0].Classic, 1) {
		t.Errorf("straddling box: no classic bound (%s)", sh[0].Reason)
	}
	// With it (cast37) the first-order bound is finite, and the binary32
	// evaluation is within it (TestCastBoundSound checks 400 such ties).
	sh, err = SharpBounds(g.g, g.p, ratTensor(spec.Shape{1}, x), Options{})
	if err != nil {
		t.Fatal(err)
	}
	exact, _ := spec.FormatBinary16.RoundRat(new(big.Rat).Mul(x.Big(), big.NewRat(3, 7)))
	xf, _ := x.Big().Float32()
	got := spec.FormatBinary16.RoundFloat64(float64(xf * float32(3.0/7)))
	if d, _ := new(big.Rat).Abs(new(big.Rat).Sub(new(big.Rat).SetFloat64(got), exact)).Float64(); math.IsInf(sh[0].FirstOrder, 1) || d > sh[0].FirstOrder {
		t.Errorf("straddling box: first-order %g (%q), binary32 evaluation %g from the exact value", sh[0].FirstOrder, sh[0].FirstOrderReason, d)
	}
	big := filled(spec.Shape{1}, spec.NewRat(70000, 1))
	g2 := castGraph(1, spec.NewRat(1, 1), "round_f16")
	en2, err := Bounds(g2.g, g2.p, big, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(en2[0].Bound, 1) {
		t.Errorf("cast past Ω: bound %g, want +∞", en2[0].Bound)
	}
}

// TestTruncBound: y = trunc_int(x·3/7) (INT8's range) in binary32. At
// inputs whose exact product lies within a binary32 ulp of an integer the
// computed product may truncate to the integer below: every element whose
// binary32 evaluation truncates elsewhere than the exact value must have no
// bound (+∞, inconclusive), and every element with a finite bound must
// have bound 0 and the exact value. Inputs far from an integer get bound
// 0. The planted bound that keeps the operand's own error (the cast
// charged nothing) is caught: some evaluation exceeds it.
func TestTruncBound(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 5))
	const n = 300
	lo, hi := spec.IntTypeRange(8, true)
	f := spec.IntFormat(lo, hi)
	xs := make([]spec.Rat, n)
	xf := make([]float32, n)
	for i := range xs {
		k := float64(r.IntN(200) - 100)
		if i%2 == 1 {
			k += 0.5 // far from an integer
		}
		xf[i] = float32(k * 7 / 3)
		xs[i], _ = spec.RatFromFloat64(float64(xf[i]))
	}
	in := ratTensor(spec.Shape{n}, xs...)
	build := func(cast bool) *builder {
		b := newBuilder(spec.Shape{n})
		w := b.konst(filled(spec.Shape{n}, spec.NewRat(3, 7)))
		m := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{n}, 0, w)
		if cast {
			b.node(irsem.Kind{Op: "trunc_int", Lo: spec.RatFromBig(lo), Hi: spec.RatFromBig(hi)}, spec.Shape{n}, m)
		}
		return b
	}
	b := build(true)
	ens, err := Bounds(b.g, b.p, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bare := build(false)
	opnd, err := Bounds(bare.g, bare.p, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c32 := float32(3.0 / 7)
	crossed, planted, decided := 0, 0, 0
	for i := range xs {
		exact, ok := f.RoundRat(new(big.Rat).Mul(xs[i].Big(), big.NewRat(3, 7)))
		if !ok {
			t.Fatal("out of range")
		}
		got := math.Trunc(float64(xf[i] * c32)) // the binary32 product, then C's truncation
		d, _ := new(big.Rat).Abs(new(big.Rat).Sub(new(big.Rat).SetFloat64(got), exact)).Float64()
		if !ens[i].Exact.Contains(exact) {
			t.Fatalf("element %d: exact %s outside %v", i, exact.FloatString(3), ens[i].Exact)
		}
		if !math.IsInf(ens[i].Bound, 1) {
			decided++
			if ens[i].Bound != 0 || d != 0 {
				t.Fatalf("element %d: bound %g, |ŷ − y| = %g: a finite bound must be 0 and exact", i, ens[i].Bound, d)
			}
		}
		if d != 0 {
			crossed++
		}
		if d > opnd[i].Bound {
			planted++
		}
	}
	t.Logf("%d of %d evaluations truncated to another integer; %d elements bounded (0)", crossed, n, decided)
	if crossed == 0 || decided < n/2 {
		t.Fatalf("crossed %d, decided %d: the test exercises too little", crossed, decided)
	}
	if planted == 0 {
		t.Fatal("the planted bound (the operand's error alone) was never exceeded: it is not caught")
	}
}
