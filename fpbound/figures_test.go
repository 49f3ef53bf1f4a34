package fpbound

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// TestFigures is the table of docs/bounds.md: for each generated net and
// depth it asserts soundness — no element of any evaluator (binary32;
// left fold, reverse, pairwise, random and 8 partial accumulators, each
// with and without FMA) farther than the sharp bound from the exact value
// (from the test's own enclosure of it, where the graph is not exact over
// Rat) — and that a relative error of 10⁻³ planted in one output element
// fails, and it logs the median bound/actual (actual = |left-fold f32 −
// exact|, over the test's enclosure's worst point, elements with actual >
// 0) and bound/|exact| (elements with exact ≠ 0). FPBOUND_FIGURES=1 runs
// the deeper nets (minutes on two shared cores), FPBOUND_FIGURES_ONLY=s
// only the nets whose name contains s. Columns of the log: net, median
// bound/actual, median bound/|exact|, the classic bound's median
// bound/|exact|, whether the planted 10⁻³ and (depth ≤ 8) 10⁻⁴ errors
// fail, how many elements × evaluations have an exact enclosure wider
// than the bound (there "actual" is the enclosure's width, not an error),
// and the smallest power of ten of planted relative error that fails.
func TestFigures(t *testing.T) {
	skipUnderRace(t)
	long, only := os.Getenv("FPBOUND_FIGURES") != "", ""
	mlpDepths, convDepths, blocks := []int{0, 1, 2, 4}, []int{1, 2}, []int{1, 2}
	if long {
		mlpDepths, convDepths, blocks = []int{0, 1, 2, 4, 8, 16, 32, 64}, []int{1, 2, 4, 8, 12, 16}, []int{1, 2, 3, 4, 6, 8, 12}
	}
	if f := os.Getenv("FPBOUND_FIGURES_ONLY"); f != "" {
		only = f
	}
	type fig struct {
		net   *nets.Net
		depth int
	}
	var cases []fig
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, init := range []nets.Init{nets.Default, nets.Kaiming} {
			if act == irsem.OpTanh && init == nets.Kaiming {
				continue
			}
			for _, d := range mlpDepths {
				n, err := nets.MLP(uint64(100+d), 64, d, act, init)
				if err != nil {
					t.Fatal(err)
				}
				cases = append(cases, fig{n, d})
			}
		}
	}
	for _, d := range convDepths {
		n, err := nets.ConvStack(uint64(200+d), 16, 4, d, nets.Default)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, fig{n, d})
	}
	for _, mask := range []nets.Mask{nets.HardMask, nets.FinfoMin} {
		for _, bl := range blocks {
			n, err := nets.GPT2(uint64(300+bl), 4, 8, 2, bl, nets.Default, mask)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, fig{n, bl})
		}
	}
	// FPBOUND_FIGURES_ORDERS=sequential,blocked:8 adds, beside each any
	// row, the rows under those summation-order profiles (docs/bounds.md,
	// order38); GPT-2 stacks are left out of those.
	var orders []string
	if f := os.Getenv("FPBOUND_FIGURES_ORDERS"); f != "" {
		orders = strings.Split(f, ",")
	}
	for _, c := range cases {
		if only != "" && !strings.Contains(c.net.Name, only) {
			continue
		}
		t.Run(c.net.Name, func(t *testing.T) {
			figure(t, c.net, c.depth, long, "")
			if strings.Contains(c.net.Name, "GPT") {
				return
			}
			for _, ord := range orders {
				figure(t, c.net, c.depth, long, ord)
			}
		})
	}
}

// figure checks and logs one net; with long set (the deep nets) a planted
// error that is not flagged is logged, not an error: the table reports it.
// A non-empty order runs the bound under the profile ieee+order and
// checks the evaluations that order admits (orderEvals; actual is then
// the first of them, the order without FMA).
func figure(t *testing.T, n *nets.Net, depth int, long bool, order string) {
	g, p, x := n.Graph, n.Payload, n.Input
	o := Options{}
	if order != "" {
		o.Profile = ProfileIEEE + "+" + order
	}
	if long {
		o.SweepWork = 1 << 30 // the deep rows: see docs/bounds.md, Cost
	}
	sh, err := SharpBounds(g, p, x, o)
	if err != nil {
		t.Fatal(err)
	}
	rats, ivs := exactOf(g, p, x)
	if rats == nil {
		ivs = ballTighten(t, g, p, x, ivs)
	}
	evs := evaluations(t, g, p, x)
	if order != "" {
		evs = nil
		for _, ev := range orderEvals(t, g, p, x, order) {
			if ev.admitted {
				evs = append(evs, evaluation{ev.name, ev.out})
			}
		}
	}
	var ratio, rel, relClassic []float64
	wide := 0
	for ei, ev := range evs {
		for i, s := range sh {
			// d ≥ |v̂ − x|; dmin ≤ it (the distance to the test's own
			// enclosure of x where x is not computed exactly).
			d, dmin := distTo(ev.out[i], i, rats, ivs), 0.0
			if ivs != nil {
				dmin = max(0, ivs[i].Lo-float64(ev.out[i]), float64(ev.out[i])-ivs[i].Hi)
			} else {
				dmin = d
			}
			if !(dmin <= s.Bound) || (!math.IsInf(s.FirstOrder, 1) && !(dmin <= s.FirstOrder)) {
				t.Fatalf("element %d, %s: |v̂ − x| ≥ %g > bound %g (first-order %g)", i, ev.name, dmin, s.Bound, s.FirstOrder)
			}
			if d > s.Bound {
				wide++ // the enclosure of x is wider than the bound
			}
			if ei == 0 && d > 0 {
				ratio = append(ratio, s.Bound/d)
			}
		}
	}
	for _, s := range sh {
		mid := math.Abs(s.Exact.Float64())
		if mid == 0 {
			continue // a relu's exact zero: no relative figure
		}
		rel = append(rel, s.Bound/mid)
		relClassic = append(relClassic, s.Classic/mid)
	}
	flagged := planted(t, sh, evs[0].out, 1e-3, !long)
	flagged4 := depth <= 8 && planted(t, sh, evs[0].out, 1e-4, false)
	name := n.Name
	if order != "" {
		name += " [" + order + "]"
	}
	// The smallest power of ten of relative error, planted likewise,
	// that fails (sensitivity; 0: none down to 10⁻⁸).
	least := 0.0
	for k := 1; k <= 8; k++ {
		if !planted(t, sh, evs[0].out, math.Pow(10, float64(-k)), false) {
			break
		}
		least = math.Pow(10, float64(-k))
	}
	t.Log(fmt.Sprintf("| %s | %.3g | %.3g | %.3g | %v | %v | %d | %g |", name, median(ratio), median(rel), median(relClassic), flagged, flagged4, wide, least))
}

// planted plants a relative error rel in the element of largest |exact|
// of the evaluation out and reports whether it, and only it, fails; with
// must set a miss is an error.
func planted(t *testing.T, sh []Sharp, out []float32, rel float64, must bool) bool {
	rec := append([]float32(nil), out...)
	big := 0
	for i, s := range sh {
		if math.Abs(s.Exact.Float64()) > math.Abs(sh[big].Exact.Float64()) {
			big = i
		}
	}
	rec[big] = float32(sh[big].Exact.Float64() * (1 + rel))
	els := make([]Element, len(sh))
	for i, s := range sh {
		els[i] = Judge(rec[i], s.Enclosure)
	}
	sum := Summarize(els)
	flagged := sum.Fails == 1 && els[big].Verdict == Fails
	if !flagged && must {
		t.Errorf("planted %g at element %d: %v, %d fail", rel, big, els[big].Verdict, sum.Fails)
	}
	return flagged
}

// smallestPlanted requires the planted relative error 10⁻³ to be caught
// and returns the smallest power of ten down to 10⁻⁹ that still is (+Inf
// when 10⁻³ is not).
func smallestPlanted(t *testing.T, sh []Sharp, out []float32) float64 {
	planted(t, sh, out, 1e-3, true)
	smallest := math.Inf(1)
	for rel := 1e-3; rel >= 1e-9; rel /= 10 {
		if !planted(t, sh, out, rel, false) {
			break
		}
		smallest = rel
	}
	return smallest
}

// evaluationsWithin fails the test when some float32 evaluation's element
// i lies farther than bound from the exact enclosure iv.
func evaluationsWithin(t *testing.T, seed uint64, i int, bound float64, iv spec.Interval, evs []evaluation) {
	t.Helper()
	for _, ev := range evs {
		if d := max(0, iv.Lo-float64(ev.out[i]), float64(ev.out[i])-iv.Hi); !(d <= bound) {
			t.Fatalf("seed %d element %d, %s: |v̂ − x| ≥ %g > bound %g", seed, i, ev.name, d, bound)
		}
	}
}

// ballTighten intersects the test's interval enclosure of the exact output
// with BallCentre's (tested on its own against 50-digit values,
// ball_test.go), so that on the deep graphs, whose interval enclosure is
// wider than the bound or unbounded, "actual" is an error and the
// soundness check is not vacuous.
func ballTighten(t *testing.T, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor, ivs []spec.Interval) []spec.Interval {
	c, err := BallCentre(g, p, x)
	if err != nil {
		t.Logf("no ball centre: %v", err)
		return ivs
	}
	out := append([]spec.Interval(nil), c.Nodes[g.OutputID]...)
	for i := range out {
		if i < len(ivs) {
			if v, ok := intersect(out[i], ivs[i]); ok {
				out[i] = v
			}
		}
	}
	return out
}
