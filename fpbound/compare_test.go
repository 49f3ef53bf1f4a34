package fpbound

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// randBinary32 returns a random binary32 value ~ N(0, scale²) as an exact
// rational.
func randBinary32(r *rand.Rand, scale float64) spec.Rat {
	v, _ := spec.RatFromFloat64(float64(float32(r.NormFloat64() * scale)))
	return v
}

func randTensor(r *rand.Rand, shape spec.Shape, scale float64) irsem.RatTensor {
	t := irsem.RatTensor{Shape: shape, Data: make([]spec.Rat, shape.Size())}
	for i := range t.Data {
		t.Data[i] = randBinary32(r, scale)
	}
	return t
}

// mlp builds in → width (×layers) → out with act after every hidden
// linear layer, random binary32 weights (scale 1/√fan-in) and biases, and
// a random binary32 input.
func mlp(seed uint64, in, width, layers, out int, act irsem.Op) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	r := rand.New(rand.NewPCG(seed, 99))
	b := newBuilder(spec.Shape{in})
	x, fan := 0, in
	for l := 0; l < layers; l++ {
		x = b.linear(x, randTensor(r, spec.Shape{width, fan}, 1/math.Sqrt(float64(fan))), randTensor(r, spec.Shape{width}, 0.1))
		x = b.node(irsem.Kind{Op: act}, spec.Shape{width}, x)
		fan = width
	}
	b.linear(x, randTensor(r, spec.Shape{out, fan}, 1/math.Sqrt(float64(fan))), randTensor(r, spec.Shape{out}, 0.1))
	return b.g, b.p, randTensor(r, spec.Shape{in}, 1)
}

func f32Out(t testing.TB, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) []float32 {
	t.Helper()
	v, err := irsem.Denote(g, p, irsem.ConvertTensor[spec.F32](x))
	if err != nil {
		t.Fatal(err)
	}
	o := make([]float32, len(v.Data))
	for i, f := range v.Data {
		o[i] = float32(f)
	}
	return o
}

// TestComparePlantedFaults: a runtime's own float32 outputs hold; an
// output moved to exact ± 2·Bound fails at its index; a weight perturbed
// by a relative 10⁻³ fails; a NaN fails.
func TestComparePlantedFaults(t *testing.T) {
	g, p, x := mlp(1, 16, 64, 3, 10, irsem.OpTanh)
	rec := f32Out(t, g, p, x)
	res, err := Compare(g, p, x, rec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Holds != len(rec) || res.FirstFail != -1 {
		t.Fatalf("the f32 evaluation itself: %d of %d hold, first fail %d", res.Holds, len(rec), res.FirstFail)
	}
	if !(res.MaxErr.Hi <= res.MaxBound) {
		t.Errorf("MaxErr %v above MaxBound %g", res.MaxErr, res.MaxBound)
	}
	for _, pol := range []policy{polReverse, polPairwise, polRandom} {
		treePolicy, treeFMA = pol, true
		v, err := irsem.Denote(g, p, irsem.ConvertTensor[tree](x))
		treePolicy, treeFMA = polLeft, false
		if err != nil {
			t.Fatal(err)
		}
		o := make([]float32, len(v.Data))
		for i, f := range v.Data {
			o[i] = float32(f.val())
		}
		if r, _ := Compare(g, p, x, o, Options{}); r.Holds != len(o) {
			t.Errorf("policy %d with FMA: %d of %d hold", pol, r.Holds, len(o))
		}
	}

	for _, sign := range []float64{1, -1} {
		moved := append([]float32(nil), rec...)
		el := res.Elements[3]
		moved[3] = float32(el.Exact.Float64() + sign*2*el.Bound)
		r, err := Compare(g, p, x, moved, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.FirstFail != 3 || r.Fails != 1 || r.Elements[3].Verdict != Fails {
			t.Errorf("moved by %+g·Bound: first fail %d, %d fails, verdict %v", 2*sign, r.FirstFail, r.Fails, r.Elements[3].Verdict)
		}
		if !(r.MaxErr.Lo > r.Elements[3].Bound) {
			t.Errorf("MaxErr %v does not exceed the moved element's bound %g", r.MaxErr, r.Elements[3].Bound)
		}
	}

	nan := append([]float32(nil), rec...)
	nan[7] = float32(math.NaN())
	if r, _ := Compare(g, p, x, nan, Options{}); r.FirstFail != 7 || r.Elements[7].Verdict != Fails {
		t.Errorf("a NaN output: first fail %d", r.FirstFail)
	}

	// A weight of the first layer off by a relative 1e-3, in a one-layer
	// network (in a deep one the bound, a worst case over every order, is
	// too wide for one weight's 1e-3: see TestTightness).
	g, p, x = mlp(3, 16, 10, 0, 10, irsem.OpTanh)
	w := p.Entries[1].W
	bad := *w
	bad.Data = append([]spec.Rat(nil), w.Data...)
	f := bad.Data[5].Float64() * (1 + 1e-3)
	bad.Data[5], _ = spec.RatFromFloat64(float64(float32(f)))
	pb := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	for id, e := range p.Entries {
		pb.Entries[id] = e
	}
	pb.Entries[1] = &irsem.Params{W: &bad, B: p.Entries[1].B}
	r, err := Compare(g, p, x, f32Out(t, g, pb, x), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Fails == 0 {
		t.Errorf("a weight off by 1e-3: no element fails (max err %v, max bound %g)", r.MaxErr, r.MaxBound)
	}

}

// TestJudge decides single elements by hand.
func TestJudge(t *testing.T) {
	one := spec.Interval{Lo: 1, Hi: 1}
	wide := spec.Interval{Lo: 1, Hi: 2}
	whole := spec.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
	cases := []struct {
		rec   float32
		en    Enclosure
		want  Verdict
		dlo   float64
		dhi   float64
		label string
	}{
		{1.25, Enclosure{Exact: one, Bound: 0.5}, Holds, 0.25, 0.25, "inside"},
		{1.5, Enclosure{Exact: one, Bound: 0.5}, Holds, 0.5, 0.5, "on the bound"},
		{math.Nextafter32(1.5, 2), Enclosure{Exact: one, Bound: 0.5}, Fails, 0.5 + 0x1p-23, 0.5 + 0x1p-23, "just outside"},
		{0.25, Enclosure{Exact: one, Bound: 0.5}, Fails, 0.75, 0.75, "outside below"},
		{2.25, Enclosure{Exact: wide, Bound: 0.5}, Inconclusive, 0.25, 1.25, "straddles"},
		{1.5, Enclosure{Exact: wide, Bound: 0.5}, Holds, 0, 0.5, "inside a wide enclosure"},
		{float32(math.NaN()), Enclosure{Exact: one, Bound: 0.5}, Fails, math.MaxFloat64, math.Inf(1), "NaN"},
		{float32(math.Inf(1)), Enclosure{Exact: one, Bound: 0.5}, Fails, math.MaxFloat64, math.Inf(1), "+Inf"},
		{float32(math.NaN()), Enclosure{Exact: one, Bound: math.Inf(1)}, Inconclusive, math.MaxFloat64, math.Inf(1), "NaN, no bound"},
		{100, Enclosure{Exact: one, Bound: math.Inf(1)}, Inconclusive, 99, 99, "no bound"},
		{100, Enclosure{Exact: whole, Bound: 1}, Inconclusive, 0, math.Inf(1), "unbounded exact"},
	}
	for _, c := range cases {
		el := Judge(c.rec, c.en)
		if el.Verdict != c.want {
			t.Errorf("%s: verdict %v, want %v", c.label, el.Verdict, c.want)
		}
		if !(el.Dist.Lo <= c.dlo && el.Dist.Lo >= c.dlo*(1-1e-6)) || !(el.Dist.Hi >= c.dhi && el.Dist.Hi <= c.dhi*(1+1e-6)) {
			t.Errorf("%s: dist %v, want ⊇ [%g, %g] tightly", c.label, el.Dist, c.dlo, c.dhi)
		}
	}
}

// TestBadInput: malformed input is an error naming what is wrong.
func TestBadInput(t *testing.T) {
	g, p, x := mlp(2, 4, 8, 1, 3, irsem.OpRelu)
	cases := []struct {
		label string
		run   func() error
		want  string
	}{
		{"nil graph", func() error { _, err := Bounds(nil, p, x, Options{}); return err }, "nil graph"},
		{"input shape", func() error {
			_, err := Bounds(g, p, irsem.RatTensor{Shape: spec.Shape{5}, Data: make([]spec.Rat, 5)}, Options{})
			return err
		}, "shape mismatch"},
		{"ulps", func() error { _, err := Bounds(g, p, x, Options{ULPs: -1}); return err }, "ULPs"},
		{"recorded length", func() error { _, err := Compare(g, p, x, make([]float32, 2), Options{}); return err }, "2 recorded values"},
		{"missing payload", func() error { _, err := Bounds(g, nil, x, Options{}); return err }, "payload"},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.label, err, c.want)
		}
	}
}

// TestUndecidedBranch: sigmoid's registry rule branches on the sign of its
// argument; an argument whose error bound straddles 0 (x − x + tiny) must
// make the output Inconclusive, never a verdict.
func TestUndecidedBranch(t *testing.T) {
	b := newBuilder(spec.Shape{})
	c := b.konst(ratTensor(spec.Shape{}, spec.NewRat(1, 3)))
	d := b.node(irsem.Kind{Op: irsem.OpSub}, spec.Shape{}, c, 0) // 1/3 − x, held with error
	b.node(irsem.Kind{Op: irsem.OpSigmoid}, spec.Shape{}, d)
	x := ratTensor(spec.Shape{}, spec.NewRat(11184811, 1<<25)) // fl32(1/3): 1/3 − x = 1/(3·2^25) exactly
	en, err := Bounds(b.g, b.p, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(en[0].Bound, 1) || !strings.Contains(en[0].Reason, "branch") {
		t.Errorf("undecided sigmoid branch: bound %g, reason %q", en[0].Bound, en[0].Reason)
	}
	// Far from 0 the branch is decided and the bound finite.
	en, err = Bounds(b.g, b.p, ratTensor(spec.Shape{}, spec.NewRat(3, 1)), Options{})
	if err != nil || math.IsInf(en[0].Bound, 1) {
		t.Errorf("decided sigmoid: bound %v, err %v", en, err)
	}
}

type randSrc = *rand.Rand

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 3)) }

// TestDeterministic: the same graph and input give bit-identical bounds,
// whatever GOMAXPROCS is.
func TestDeterministic(t *testing.T) {
	g, p, x := cnn(2, 8, 3)
	a, err := Bounds(g, p, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	b, err := Bounds(g, p, x, Options{})
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !a[i].Exact.Same(b[i].Exact) || math.Float64bits(a[i].Bound) != math.Float64bits(b[i].Bound) {
			t.Fatalf("element %d: %v ± %g, then %v ± %g", i, a[i].Exact, a[i].Bound, b[i].Exact, b[i].Bound)
		}
	}
}

// TestSummarize aggregates a hand-made run of elements.
func TestSummarize(t *testing.T) {
	one := spec.Interval{Lo: 1, Hi: 1}
	els := []Element{
		Judge(1.25, Enclosure{Exact: one, Bound: 0.5}),                         // holds, dist 0.25
		Judge(3, Enclosure{Exact: one, Bound: 0.5}),                            // fails, dist 2
		Judge(1, Enclosure{Exact: one, Bound: math.Inf(1)}),                    // inconclusive, dist 0
		Judge(-1, Enclosure{Exact: one, Bound: 1}),                             // fails, dist 2
		Judge(1.5, Enclosure{Exact: spec.Interval{Lo: 1, Hi: 2}, Bound: 0.75}), // holds, dist [0, 0.5]
	}
	s := Summarize(els)
	if s.Holds != 2 || s.Fails != 2 || s.Inconclusive != 1 || s.FirstFail != 1 {
		t.Errorf("counts %d/%d/%d, first fail %d; want 2/2/1, 1", s.Holds, s.Fails, s.Inconclusive, s.FirstFail)
	}
	if s.MaxErr.Lo != 2 || s.MaxErr.Hi != 2 || !math.IsInf(s.MaxBound, 1) {
		t.Errorf("MaxErr %v, MaxBound %g; want [2, 2], +Inf", s.MaxErr, s.MaxBound)
	}
	if e := Summarize(nil); e.FirstFail != -1 || e.Holds+e.Fails+e.Inconclusive != 0 {
		t.Errorf("empty summary %+v", e)
	}
}
