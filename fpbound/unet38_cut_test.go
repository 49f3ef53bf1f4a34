package fpbound

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// siluPoolNet builds input [1, 2, h, h] → add a constant → tanh → SiLU
// (mul_elem(t, sigmoid(t)): two erroneous parents, both diagonal) →
// max_pool 2×2 → conv 1×1 2→2 (random weights), the zoo UNet's block
// pattern. With h = 32 the SiLU node has 2048 elements, past the dense
// sweep (o² > maxDense): its sweep is parentsCut's. It returns the graph,
// payload, input and the SiLU node's id.
func siluPoolNet(seed uint64, h int) (*irsem.Graph, *irsem.Payload, irsem.RatTensor, int) {
	r := newRand(seed)
	sh := spec.Shape{1, 2, h, h}
	b := newBuilder(sh)
	x := b.node(irsem.Kind{Op: irsem.OpAdd}, sh, 0, b.konst(randTensor(r, sh, 0.3)))
	x = b.node(irsem.Kind{Op: irsem.OpTanh}, sh, x)
	s := b.node(irsem.Kind{Op: irsem.OpSigmoid}, sh, x)
	silu := b.node(irsem.Kind{Op: irsem.OpMulElem}, sh, x, s)
	pw := spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{0, 0}}
	x = b.node(irsem.Kind{Op: irsem.OpMaxPool, Window: &pw}, spec.Shape{1, 2, h / 2, h / 2}, silu)
	cw := spec.Window{Kernel: []int{1, 1}, Stride: []int{1, 1}, Padding: []int{0, 0}, Dilation: []int{1, 1}, Groups: 1, InChannels: 2, OutChannels: 2}
	id := b.node(irsem.Kind{Op: irsem.OpConv, Window: &cw}, spec.Shape{1, 2, h / 2, h / 2}, x)
	wt, bias := randTensor(r, spec.Shape{2, 2, 1, 1}, 0.7), randTensor(r, spec.Shape{2}, 0.1)
	b.p.Entries[id] = &irsem.Params{W: &wt, B: &bias}
	return b.g, b.p, randTensor(r, sh, 1.5), silu
}

// TestParentsCut: a SiLU node past the dense sweep gets parentsCut's
// bound F (the cut at both erroneous parents, row by row) instead of the
// interval sweep. F is checked where it is computed: on the same graph cut
// at the SiLU node (its output; the output is swept by the interval sweep
// through every node, as before unet38), every float32 evaluator of the
// tests (f32, binary32, five summation orders with and without FMA) is
// within F of the exact value on every element, F is at least that
// interval sweep's bound and within 2× of it (the cut loses only the
// cancellation between x's two paths, |σ + x·σ′| ≤ |σ| + |x|·|σ′|), and a
// planted relative error just outside F fails. On the whole graph every
// output element has a finite first-order bound that every evaluator
// holds, and a planted 10⁻³ relative error FAILS; the smallest caught is
// logged.
func TestParentsCut(t *testing.T) {
	for _, seed := range []uint64{1} { // seed 2: the same checks, 2× the time
		g, p, x, silu := siluPoolNet(seed, 24)
		ran := map[int]bool{}
		parentsCutSeen = func(j int) { ran[j] = true }
		var fo []float64
		nodeSeen = func(j int, nodes []foNode, _, _ int64) {
			if j == silu {
				fo = append([]float64(nil), nodes[j].fo...)
			}
		}
		sh, err := SharpBounds(g, p, x, Options{})
		parentsCutSeen, nodeSeen = nil, nil
		if err != nil {
			t.Fatal(err)
		}
		if !ran[silu] || len(ran) != 1 || len(fo) != 24*24*2 {
			t.Fatalf("seed %d: parentsCut ran at %v, want node %d alone", seed, ran, silu)
		}
		// The graph cut at the SiLU node (same ids: the builder appends).
		gs := &irsem.Graph{InputID: g.InputID, Nodes: g.Nodes[:silu+1], OutputID: silu}
		ps := &irsem.Payload{Entries: map[int]*irsem.Params{}}
		for id, e := range p.Entries {
			if id <= silu {
				ps.Entries[id] = e
			}
		}
		shs, err := SharpBounds(gs, ps, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, ivs := exactOf(gs, ps, x)
		evs := evaluations(t, gs, ps, x)
		maxR := 0.0
		for i, f := range fo {
			if math.IsInf(f, 1) || math.IsInf(shs[i].FirstOrder, 1) {
				t.Fatalf("seed %d element %d: F %g, the interval sweep's %g", seed, i, f, shs[i].FirstOrder)
			}
			for _, ev := range evs {
				if d := max(0, ivs[i].Lo-float64(ev.out[i]), float64(ev.out[i])-ivs[i].Hi); !(d <= f) {
					t.Fatalf("seed %d SiLU element %d, %s: |v̂ − x| ≥ %g > F %g", seed, i, ev.name, d, f)
				}
			}
			if b := shs[i].FirstOrder; !(f >= b*(1-1e-9) && f <= 2*b) {
				t.Fatalf("seed %d SiLU element %d: F %g with parentsCut, %g with the interval sweep", seed, i, f, b)
			}
			maxR = max(maxR, f/shs[i].FirstOrder)
		}
		// Just outside F: the float32 above the exact enclosure's Hi + F
		// (with F for the bound) fails.
		big := 0
		for i := range fo {
			if fo[i] > fo[big] {
				big = i
			}
		}
		enc := shs[big].Enclosure
		enc.Bound = fo[big]
		out := float32(enc.Exact.Hi + fo[big])
		for float64(out) <= enc.Exact.Hi+fo[big] {
			out = math.Nextafter32(out, float32(math.Inf(1)))
		}
		if v := Judge(out, enc).Verdict; v != Fails {
			t.Fatalf("seed %d SiLU element %d: %g just past exact + F %g: %v", seed, big, out, fo[big], v)
		}
		// The whole graph.
		_, ivs = exactOf(g, p, x)
		evs = evaluations(t, g, p, x)
		maxB := 0.0
		for i, s := range sh {
			if math.IsInf(s.FirstOrder, 1) {
				t.Fatalf("seed %d element %d: no first-order bound: %s", seed, i, s.FirstOrderReason)
			}
			maxB = max(maxB, s.FirstOrder)
			evaluationsWithin(t, seed, i, s.Bound, ivs[i], evs)
		}
		smallest := smallestPlanted(t, sh, evs[0].out)
		t.Logf("seed %d: SiLU F largest %.3g, at most %.3g× the interval sweep's; output's largest first-order bound %.3g; smallest planted relative error caught %g", seed, fo[big], maxR, maxB, smallest)
	}
}
