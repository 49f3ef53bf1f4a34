package fpbound

import (
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// distTo returns |v − exact| (exact over Rat when rats is set, else the
// midpoint of the interval, with its radius added so the figure is an
// upper bound).
func distTo(v float32, i int, rats []*big.Rat, ivs []spec.Interval) float64 {
	if rats != nil {
		fv := new(big.Rat).SetFloat64(float64(v))
		d, _ := new(big.Rat).Abs(fv.Sub(fv, rats[i])).Float64()
		return d
	}
	return max(math.Abs(float64(v)-ivs[i].Lo), math.Abs(float64(v)-ivs[i].Hi))
}

// TestFirstOrderSound: on ReLU and tanh MLPs and a dot product, every
// evaluator (binary32, and every summation policy — left fold, reverse,
// pairwise, random — with and without FMA) lies within the sharp bound;
// the first-order bound is finite, and from depth 4 on it is tighter than
// the classic one.
func TestFirstOrderSound(t *testing.T) {
	skipUnderRace(t)
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, l := range []int{0, 1, 2, 4} {
			g, p, x := mlp(uint64(10+l), 16, 64, l, 10, act)
			sh, err := SharpBounds(g, p, x, Options{})
			if err != nil {
				t.Fatal(err)
			}
			rats, ivs := exactOf(g, p, x)
			worst := 0.0
			for _, ev := range evaluations(t, g, p, x) {
				for i, s := range sh {
					if math.IsInf(s.FirstOrder, 1) {
						t.Fatalf("%s depth %d element %d: no first-order bound: %s", act, l, i, s.FirstOrderReason)
					}
					if rats != nil && !s.Exact.Contains(rats[i]) {
						t.Fatalf("%s depth %d element %d: exact %v outside %v", act, l, i, rats[i], s.Exact)
					}
					d := distTo(ev.out[i], i, rats, ivs)
					if !(d <= s.FirstOrder) || !(d <= s.Bound) {
						t.Fatalf("%s depth %d element %d, %s: |v̂ − x| = %g > bound %g (first-order %g)", act, l, i, ev.name, d, s.Bound, s.FirstOrder)
					}
					worst = max(worst, d/s.Bound)
				}
			}
			if l >= 4 && (!(sh[0].FirstOrder < sh[0].Classic) || sh[0].Decider() != "first-order" || sh[0].Bound != sh[0].FirstOrder) {
				t.Errorf("%s depth %d: first-order %g not below classic %g (decider %s, bound %g)", act, l, sh[0].FirstOrder, sh[0].Classic, sh[0].Decider(), sh[0].Bound)
			}
			if !(sh[0].Estimate <= sh[0].FirstOrder) {
				t.Errorf("%s depth %d: estimate %g above the bound %g", act, l, sh[0].Estimate, sh[0].FirstOrder)
			}
			t.Logf("%s depth %d: classic %.3g, first-order %.3g, estimate %.3g; worst error/bound %.3g", act, l, sh[0].Classic, sh[0].FirstOrder, sh[0].Estimate, worst)
		}
	}
}

// TestFirstOrderFusedSum: a matmul node whose only consumer adds the bias
// is one sum for the runtime (M2(a)); the evaluators reassociate and fuse
// across the node boundary, and stay within the bound.
func TestFirstOrderFusedSum(t *testing.T) {
	r := newRand(3)
	b := newBuilder(spec.Shape{1, 32})
	x := 0
	for l := 0; l < 3; l++ {
		w := b.konst(randTensor(r, spec.Shape{32, 32}, 1/math.Sqrt(32)))
		m := b.node(irsem.Kind{Op: irsem.OpMatmul}, spec.Shape{1, 32}, x, w)
		x = b.node(irsem.Kind{Op: irsem.OpAdd}, spec.Shape{1, 32}, m, b.konst(randTensor(r, spec.Shape{1, 32}, 0.1)))
		x = b.node(irsem.Kind{Op: irsem.OpTanh}, spec.Shape{1, 32}, x)
	}
	in := randTensor(r, spec.Shape{1, 32}, 1)
	sh, err := SharpBounds(b.g, b.p, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rats, ivs := exactOf(b.g, b.p, in)
	for _, ev := range evaluations(t, b.g, b.p, in) {
		for i, s := range sh {
			if math.IsInf(s.FirstOrder, 1) {
				t.Fatalf("element %d: no first-order bound: %s", i, s.FirstOrderReason)
			}
			if d := distTo(ev.out[i], i, rats, ivs); !(d <= s.FirstOrder) {
				t.Fatalf("element %d, %s: |v̂ − x| = %g > first-order bound %g", i, ev.name, d, s.FirstOrder)
			}
		}
	}
}

// TestFirstOrderPlanted: compare flags one output element moved by a
// relative 10⁻³ (depth 4, where the classic bound cannot), and one moved
// just outside its bound, while the runtime's own f32 output holds.
func TestFirstOrderPlanted(t *testing.T) {
	g, p, x := mlp(7, 16, 64, 4, 10, irsem.OpRelu)
	rec := f32Out(t, g, p, x)
	res, err := Compare(g, p, x, rec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Holds != len(rec) {
		t.Fatalf("own f32 output: %d of %d hold", res.Holds, len(rec))
	}
	rats, _ := exactOf(g, p, x)
	for _, tc := range []struct {
		name string
		move func(x float64, bound float64) float64
	}{
		{"relative 1e-3", func(x, _ float64) float64 { return x * (1 + 1e-3) }},
		{"just outside the bound", func(x, b float64) float64 { return x + 1.01*b + math.Abs(x)*0x1p-23 }},
	} {
		bad := append([]float32(nil), rec...)
		ex, _ := rats[3].Float64()
		bad[3] = float32(tc.move(ex, res.Elements[3].Bound))
		r2, err := Compare(g, p, x, bad, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r2.Elements[3].Verdict != Fails || r2.Fails != 1 {
			t.Errorf("%s: element 3 %v (bound %g, recorded %g, exact %g), %d fail", tc.name, r2.Elements[3].Verdict, r2.Elements[3].Bound, bad[3], ex, r2.Fails)
		}
	}
}

// TestFirstOrderDiscontinuity: a sign node whose input box straddles 0
// voids the mean value argument: no first-order bound, and the classic one
// decides.
func TestFirstOrderDiscontinuity(t *testing.T) {
	b := newBuilder(spec.Shape{2})
	s := b.node(irsem.Kind{Op: irsem.OpSub}, spec.Shape{2}, 0, b.konst(ratTensor(spec.Shape{2}, spec.NewRat(1, 3), spec.NewRat(1, 3))))
	b.node(irsem.Kind{Op: irsem.OpSign}, spec.Shape{2}, s)
	x := ratTensor(spec.Shape{2}, spec.NewRat(1, 3), spec.NewRat(1, 3))
	sh, err := SharpBounds(b.g, b.p, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(sh[0].FirstOrder, 1) || sh[0].FirstOrderReason == "" {
		t.Fatalf("sign near its jump: first-order %g (%q)", sh[0].FirstOrder, sh[0].FirstOrderReason)
	}
	if sh[0].Bound != sh[0].Classic {
		t.Fatalf("bound %g, classic %g", sh[0].Bound, sh[0].Classic)
	}
}

// TestFirstOrderBudget: a tiny sweep budget skips the intermediate sweeps
// and then the output's, leaving sound (larger or classic) bounds with the
// reason; a negative budget is an error.
func TestFirstOrderBudget(t *testing.T) {
	g, p, x := mlp(11, 16, 64, 4, 10, irsem.OpRelu)
	full, err := SharpBounds(g, p, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tiny, err := SharpBounds(g, p, x, Options{SweepWork: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range tiny {
		if !math.IsInf(tiny[i].FirstOrder, 1) || tiny[i].FirstOrderReason == "" || tiny[i].Bound != tiny[i].Classic {
			t.Fatalf("element %d: budget 1 gives first-order %g (%q), bound %g", i, tiny[i].FirstOrder, tiny[i].FirstOrderReason, tiny[i].Bound)
		}
		if !(full[i].Bound <= tiny[i].Bound) {
			t.Fatalf("element %d: full budget %g above budget 1's %g", i, full[i].Bound, tiny[i].Bound)
		}
	}
	if _, err := SharpBounds(g, p, x, Options{SweepWork: -1}); err == nil {
		t.Fatal("negative SweepWork accepted")
	}
}

func BenchmarkSharpMLP4(b *testing.B) {
	g, p, x := mlp(1, 16, 64, 4, 10, irsem.OpTanh)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SharpBounds(g, p, x, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFirstOrderBallBoxes: on the 6-block GPT-2 stack (exp, tanh, √, the
// finfo.min mask), where the float64 interval enclosure of the exact
// output is 0.2–2.5 of its value wide (docs/bounds.md, "Point 2"), the
// first-order boxes are centred on the ball centre: every output's exact
// enclosure is at most two float64 ulps wide and meets the interval
// evaluation's (both contain the exact value), the first-order bound is
// finite, tlcheck's own f32 output holds everywhere, and a planted relative 10⁻³ error in the
// largest element is the only FAILS.
func TestFirstOrderBallBoxes(t *testing.T) {
	skipUnderRace(t)
	n, err := nets.GPT2(306, 4, 8, 2, 6, nets.Default, nets.FinfoMin)
	if err != nil {
		t.Fatal(err)
	}
	g, p, x := n.Graph, n.Payload, n.Input
	ivs, err := irsem.Denote(g, p, irsem.ConvertTensor[spec.Interval](x))
	if err != nil {
		t.Fatal(err)
	}
	rec := f32Out(t, g, p, x)
	res, err := Compare(g, p, x, rec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	big := 0
	for i, el := range res.Elements {
		ex := el.Exact
		if _, ok := intersect(ex, ivs.Data[i]); !ok || ex.Hi > up(up(ex.Lo)) {
			t.Fatalf("element %d: exact enclosure %v (interval evaluation %v)", i, ex, ivs.Data[i])
		}
		if math.IsInf(el.FirstOrder, 1) {
			t.Fatalf("element %d: first-order bound %g for exact %v", i, el.FirstOrder, ex)
		}
		if el.Verdict != Holds {
			t.Fatalf("element %d: own f32 output %g %v (exact %v, bound %g)", i, el.Recorded, el.Verdict, ex, el.Bound)
		}
		if math.Abs(ex.Float64()) > math.Abs(res.Elements[big].Exact.Float64()) {
			big = i
		}
	}
	bad := append([]float32(nil), rec...)
	bad[big] = float32(res.Elements[big].Exact.Float64() * (1 + 1e-3))
	r2, err := Compare(g, p, x, bad, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Elements[big].Verdict != Fails || r2.Fails != 1 {
		t.Fatalf("planted 10⁻³ at element %d: %v, %d fail", big, r2.Elements[big].Verdict, r2.Fails)
	}
}
