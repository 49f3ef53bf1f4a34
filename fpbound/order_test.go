package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// orderEval is one binary32 evaluation in a summation policy of the test
// tree (tree_test.go), and whether the order profile under test admits it.
type orderEval struct {
	name     string
	out      []float32
	admitted bool
}

// orderEvals runs the tree under the policies a profile's order admits
// (sequential: the left fold; blocked:8: polBlocked8; each with and
// without FMA) and under two it does not (the reverse order and the
// pairwise tree under sequential; the left fold and the reverse order
// under blocked:8).
func orderEvals(t testing.TB, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor, order string) []orderEval {
	t.Helper()
	type pa struct {
		pol policy
		ok  bool
	}
	var pols []pa
	switch order {
	case "sequential":
		pols = []pa{{polLeft, true}, {polReverse, false}, {polPairwise, false}}
	case "blocked:8":
		pols = []pa{{polBlocked8, true}, {polLeft, false}, {polReverse, false}}
	default:
		t.Fatalf("no evaluations for order %q", order)
	}
	var evs []orderEval
	for _, c := range pols {
		for _, fma := range []bool{false, true} {
			treePolicy, treeFMA = c.pol, fma
			r, err := irsem.Denote(g, p, irsem.ConvertTensor[tree](x))
			if err != nil {
				t.Fatal(err)
			}
			o := make([]float32, len(r.Data))
			for i, v := range r.Data {
				o[i] = float32(v.val())
			}
			evs = append(evs, orderEval{fmt.Sprintf("tree(policy %d, fma %v)", c.pol, fma), o, c.ok})
		}
	}
	treePolicy, treeFMA = polLeft, false
	return evs
}

// orderNets are the nets of the order tests: ReLU MLPs (default and
// Kaiming init), a tanh MLP and a conv stack, at the depths given.
func orderNets(t testing.TB, mlp, kaiming, tanh, conv []int) []*nets.Net {
	var out []*nets.Net
	for _, init := range []nets.Init{nets.Default, nets.Kaiming} {
		depths := mlp
		if init == nets.Kaiming {
			depths = kaiming
		}
		for _, d := range depths {
			n, err := nets.MLP(uint64(100+d), 64, d, irsem.OpRelu, init)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
	}
	for _, d := range tanh {
		n, err := nets.MLP(uint64(100+d), 64, d, irsem.OpTanh, nets.Default)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	for _, d := range conv {
		n, err := nets.ConvStack(uint64(200+d), 16, 4, d, nets.Default)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// exceeds reports whether the evaluation's element i is farther than
// bound from the exact value: decided over Rat where the graph is exact,
// else as the distance to the test's enclosure of the exact value.
func exceeds(v float32, i int, rats []*big.Rat, ivs []float64Pair, bound float64) bool {
	if rats != nil {
		d := new(big.Rat).Sub(new(big.Rat).SetFloat64(float64(v)), rats[i])
		return d.Abs(d).Cmp(new(big.Rat).SetFloat64(bound)) > 0
	}
	dmin := max(0, ivs[i].lo-float64(v), float64(v)-ivs[i].hi)
	return dmin > bound
}

type float64Pair struct{ lo, hi float64 }

// TestSumOrderSound: under sequential and blocked:8, on every net of
// orderNets, every element of every evaluation in an admitted order lies
// within the profile's sharp bound (and its classic bound), and the
// profile's bound is at most any's; an evaluation in an order the profile
// does not admit may exceed it (counted and logged); a value planted just
// outside the bound (1.01·bound from the exact value) fails, the only
// element that does. The default run (≈ 2.5 s CPU) takes ReLU default
// depth 1, Kaiming 16, tanh 1 and conv 1, admitted orders only;
// TLCHECK_EXHAUSTIVE (ci/exhaustive.sh) depths 0–16 of each MLP and conv
// 1–8, and counts the non-admitted evaluations outside the bound.
func TestSumOrderSound(t *testing.T) {
	skipUnderRace(t)
	mlp, kaiming, tanh, conv := []int{1}, []int{16}, []int{1}, []int{1}
	long := os.Getenv("TLCHECK_EXHAUSTIVE") != ""
	if long {
		mlp, tanh, conv = []int{0, 1, 2, 4, 8, 16}, []int{1, 2, 4, 8, 16}, []int{1, 2, 4, 8}
		kaiming = mlp
	}
	for _, n := range orderNets(t, mlp, kaiming, tanh, conv) {
		t.Run(n.Name, func(t *testing.T) {
			g, p, x := n.Graph, n.Payload, n.Input
			rats, ivs0 := exactOf(g, p, x)
			var ivs []float64Pair
			if rats == nil {
				for _, v := range ballTighten(t, g, p, x, ivs0) {
					ivs = append(ivs, float64Pair{v.Lo, v.Hi})
				}
			}
			t0 := time.Now()
			anyB, err := SharpBounds(g, p, x, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tAny := time.Since(t0)
			for _, order := range []string{"sequential", "blocked:8"} {
				t0 := time.Now()
				sh, err := SharpBounds(g, p, x, Options{Profile: ProfileIEEE + "+" + order})
				if err != nil {
					t.Fatal(err)
				}
				tOrd := time.Since(t0)
				for i, s := range sh {
					if !(s.Bound <= anyB[i].Bound) {
						t.Fatalf("%s: element %d: bound %g above any's %g", order, i, s.Bound, anyB[i].Bound)
					}
				}
				outside := 0
				for _, ev := range orderEvals(t, g, p, x, order) {
					if !ev.admitted && !long {
						continue
					}
					for i, s := range sh {
						if !exceeds(ev.out[i], i, rats, ivs, s.Bound) && !exceeds(ev.out[i], i, rats, ivs, s.Classic) {
							continue
						}
						if ev.admitted {
							t.Fatalf("%s: element %d: %s = %g outside the bound %g (classic %g)", order, i, ev.name, ev.out[i], s.Bound, s.Classic)
						}
						outside++
					}
				}
				big := plantOutside(t, sh)
				t.Logf("%s: %d elements; non-admitted evaluations outside the bound: %d; planted just outside at element %d fails; %v (any: %v)",
					order, len(sh), outside, big, tOrd.Round(time.Millisecond), tAny.Round(time.Millisecond))
			}
		})
	}
}

// plantOutside plants, in the element of largest |exact| of an output
// equal to the exact values' midpoints, the binary32 value just beyond
// 1.01·bound from the exact enclosure and requires that it, and only it,
// fails; it returns the element.
func plantOutside(t *testing.T, sh []Sharp) int {
	t.Helper()
	big := 0
	for i, s := range sh {
		if math.Abs(s.Exact.Float64()) > math.Abs(sh[big].Exact.Float64()) {
			big = i
		}
	}
	els := make([]Element, len(sh))
	for i, s := range sh {
		v := float32(s.Exact.Float64())
		if i == big {
			v = math.Nextafter32(float32(s.Exact.Hi+1.01*s.Bound), float32(math.Inf(1)))
		}
		els[i] = Judge(v, s.Enclosure)
	}
	sum := Summarize(els)
	if els[big].Verdict != Fails || sum.Fails != 1 {
		t.Fatalf("planted just outside the bound at element %d: %v, %d fail", big, els[big].Verdict, sum.Fails)
	}
	return big
}

// dotGraph is one linear layer y = w·x + 0 with a single output, on the
// input xs (its terms, in the formula's order, are the zero bias and
// then w_k·x_k).
func dotGraph(ws, xs []float64) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	n := len(xs)
	b := newBuilder(spec.Shape{n})
	w := irsem.RatTensor{Shape: spec.Shape{1, n}, Data: make([]spec.Rat, n)}
	x := irsem.RatTensor{Shape: spec.Shape{n}, Data: make([]spec.Rat, n)}
	for k := range xs {
		w.Data[k] = spec.RatFromBig(new(big.Rat).SetFloat64(ws[k]))
		x.Data[k] = spec.RatFromBig(new(big.Rat).SetFloat64(xs[k]))
	}
	bias := irsem.RatTensor{Shape: spec.Shape{1}, Data: []spec.Rat{spec.RatFromBig(new(big.Rat))}}
	b.linear(0, w, bias)
	return b.g, b.p, x
}

// TestSumOrderDots: single dot products of 64 sign-balanced binary32
// terms of mixed magnitudes, 24 seeds: every evaluation in an order the
// profile admits holds (decided over Rat), and the worst error/bound is
// logged. Then two cancelling sums built for it show an order the profile
// does not admit exceeding its bound (while any's bound holds it): under
// sequential, 1 − 1 first and small terms after, summed in reverse (the
// small terms' sum meets −1 and loses its low bits); under blocked:8, 1
// and −1 in one accumulator (terms 0 and 8), summed by the left fold
// (1 + each small term rounds).
func TestSumOrderDots(t *testing.T) {
	skipUnderRace(t)
	worst := map[string]float64{}
	for seed := uint64(1); seed <= 24; seed++ {
		r := newRand(seed)
		ws, xs := make([]float64, 64), make([]float64, 64)
		for k := range xs {
			ws[k] = float64(float32((r.Float64()*2 - 1) * math.Ldexp(1, -r.IntN(6))))
			xs[k] = float64(float32((r.Float64()*2 - 1) * math.Ldexp(1, -r.IntN(10))))
		}
		g, p, x := dotGraph(ws, xs)
		rats, _ := exactOf(g, p, x)
		for _, order := range []string{"sequential", "blocked:8"} {
			sh, err := SharpBounds(g, p, x, Options{Profile: ProfileIEEE + "+" + order})
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range orderEvals(t, g, p, x, order) {
				if !ev.admitted {
					continue
				}
				if exceeds(ev.out[0], 0, rats, nil, sh[0].Bound) {
					t.Fatalf("seed %d, %s: %s = %g outside the bound %g", seed, order, ev.name, ev.out[0], sh[0].Bound)
				}
				d, _ := new(big.Rat).Sub(new(big.Rat).SetFloat64(float64(ev.out[0])), rats[0]).Float64()
				worst[order] = max(worst[order], math.Abs(d)/sh[0].Bound)
			}
		}
	}
	t.Logf("worst error/bound over 24 seeds: %v", worst)
	cases := []struct {
		order, bad string
		pol        policy
		xs         func(k int) float64
	}{
		{"sequential", "reverse", polReverse, func(k int) float64 {
			switch k {
			case 0:
				return 1
			case 1:
				return -1
			}
			return float64(float32((0.7 + 0.01*float64(k)) * 0x1p-20))
		}},
		{"blocked:8", "left fold", polLeft, func(k int) float64 {
			switch k {
			case 0:
				return 1
			case 8:
				return -1
			}
			return float64(float32((0.7 + 0.01*float64(k)) * 0x1p-20))
		}},
	}
	for _, c := range cases {
		ws, xs := make([]float64, 32), make([]float64, 32)
		for k := range xs {
			ws[k], xs[k] = 1, c.xs(k)
		}
		g, p, x := dotGraph(ws, xs)
		rats, _ := exactOf(g, p, x)
		sh, err := SharpBounds(g, p, x, Options{Profile: ProfileIEEE + "+" + c.order})
		if err != nil {
			t.Fatal(err)
		}
		anyB, err := SharpBounds(g, p, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		outside := false
		for _, ev := range orderEvals(t, g, p, x, c.order) {
			if exceeds(ev.out[0], 0, rats, nil, anyB[0].Bound) {
				t.Fatalf("%s: %s outside any's bound %g", c.order, ev.name, anyB[0].Bound)
			}
			out := exceeds(ev.out[0], 0, rats, nil, sh[0].Bound)
			if ev.admitted && out {
				t.Fatalf("%s: admitted %s = %g outside the bound %g", c.order, ev.name, ev.out[0], sh[0].Bound)
			}
			if ev.name == fmt.Sprintf("tree(policy %d, fma false)", c.pol) {
				outside = out
				d, _ := new(big.Rat).Sub(new(big.Rat).SetFloat64(float64(ev.out[0])), rats[0]).Float64()
				t.Logf("%s: the %s evaluation is %g from the exact value; the profile's bound %g, any's %g", c.order, c.bad, math.Abs(d), sh[0].Bound, anyB[0].Bound)
			}
		}
		if !outside {
			t.Errorf("%s: the %s evaluation, which the profile does not admit, stays within its bound", c.order, c.bad)
		}
	}
}

// TestSumOrderNames: a profile name with a summation-order suffix selects
// the listed profile with that order; a bad suffix or base is an error.
func TestSumOrderNames(t *testing.T) {
	cases := []struct {
		name, base, order string
		ok                bool
	}{
		{"", ProfileIEEE, "any", true},
		{"ieee+any", ProfileIEEE, "any", true},
		{"ieee+sequential", ProfileIEEE, "sequential", true},
		{"+sequential", ProfileIEEE, "sequential", true},
		{"pytorch-cpu+blocked:8", "pytorch-cpu", "blocked:8", true},
		{"onnxruntime-cpu+blocked:1024", "onnxruntime-cpu", "blocked:1024", true},
		{"ieee+blocked:1", "", "", false},
		{"ieee+blocked:1025", "", "", false},
		{"ieee+blocked:x", "", "", false},
		{"ieee+pairwise", "", "", false},
		{"cuda+sequential", "", "", false},
		{"ieee+sequential+any", "", "", false},
	}
	for _, c := range cases {
		pr, err := lookupProfile(c.name)
		if (err == nil) != c.ok {
			t.Errorf("%q: error %v, want ok %v", c.name, err, c.ok)
			continue
		}
		if err != nil {
			if ValidProfile(c.name) == nil {
				t.Errorf("%q: ValidProfile accepts it", c.name)
			}
			continue
		}
		if pr.name != c.base || pr.order.String() != c.order {
			t.Errorf("%q: profile %s order %s, want %s %s", c.name, pr.name, pr.order, c.base, c.order)
		}
	}
	if p, _ := lookupProfile("onnxruntime-cpu+sequential"); len(p.fns) == 0 {
		t.Error("the order suffix dropped the profile's library functions")
	}
	if p, _ := lookupProfile("onnxruntime-cpu"); p.order.kind != orderAny {
		t.Error("the listed profile itself changed order")
	}
}
