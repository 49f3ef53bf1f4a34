package fpbound

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
)

// withSigmoid appends sigmoid to n's output: the pattern of SiLU and of a
// gate after a deep stack, where the classic bound reaches the sign
// split of sigmoid's formula and the first-order boxes do not.
func withSigmoid(t *testing.T, n *nets.Net) *irsem.Graph {
	t.Helper()
	g := *n.Graph
	g.Nodes = append([]irsem.Node(nil), n.Graph.Nodes...)
	out := g.Nodes[g.OutputID]
	id := len(g.Nodes)
	g.Nodes = append(g.Nodes, irsem.Node{ID: id, Parents: []int{g.OutputID}, Kind: irsem.Kind{Op: irsem.OpSigmoid}, Shape: out.Shape.Clone()})
	g.OutputID = id
	return &g
}

// TestUndecidedClassicTaint: an undecided comparison in the classic
// evaluation voids the classic values of its node and its descendants
// only (doc.go, "Undecided classic comparisons"), so the first-order
// bound still decides. On Kaiming ReLU MLPs (width 16) followed by a
// sigmoid, the classic bound straddles sigmoid's sign split at every
// depth below; the first-order bound must be finite on every element,
// hold for every float32 evaluation the tests have (six summation orders,
// with and without FMA, and the bit-level soft-float), and a relative
// 10⁻³ error planted in the largest element must FAIL. Before the change
// every element was +∞ ("a comparison a registry rule branches on could
// not be decided").
func TestUndecidedClassicTaint(t *testing.T) {
	for _, depth := range []int{16, 32} {
		n, err := nets.MLP(5, 16, depth, irsem.OpRelu, nets.Kaiming)
		if err != nil {
			t.Fatal(err)
		}
		g, p, x := withSigmoid(t, n), n.Payload, n.Input
		// The taint is the sigmoid node's alone: every earlier node's
		// classic value is kept.
		tainted, err := func() ([]bool, error) {
			evalMu.Lock()
			defer evalMu.Unlock()
			return taintedNodes[binary32](g, p, x, errRegistryOrDefault[binary32](""))
		}()
		if err != nil {
			t.Fatal(err)
		}
		if tainted == nil || !tainted[g.OutputID] {
			t.Fatalf("depth %d: the classic evaluation met no undecided comparison at the sigmoid: the test does not reproduce the pattern", depth)
		}
		for j := 0; j < g.OutputID; j++ {
			if tainted[j] {
				t.Fatalf("depth %d: node %d (%s) tainted, though no comparison precedes the sigmoid", depth, j, g.Nodes[j].Kind.Op)
			}
		}
		sh, err := SharpBounds(g, p, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, ivs := exactOf(g, p, x)
		ivs = ballTighten(t, g, p, x, ivs)
		evs := evaluations(t, g, p, x)
		for i, s := range sh {
			if !math.IsInf(s.Classic, 1) {
				t.Fatalf("depth %d element %d: classic bound %g: the classic evaluation should be voided here", depth, i, s.Classic)
			}
			if math.IsInf(s.FirstOrder, 1) {
				t.Fatalf("depth %d element %d: no first-order bound: %s", depth, i, s.FirstOrderReason)
			}
			for _, ev := range evs {
				if d := max(0, ivs[i].Lo-float64(ev.out[i]), float64(ev.out[i])-ivs[i].Hi); !(d <= s.Bound) {
					t.Fatalf("depth %d element %d, %s: |v̂ − x| ≥ %g > bound %g", depth, i, ev.name, d, s.Bound)
				}
			}
		}
		planted(t, sh, evs[0].out, 1e-3, true)
		// Sensitivity: the smallest power of ten planted that FAILS.
		smallest := math.Inf(1)
		for rel := 1e-3; rel >= 1e-8; rel /= 10 {
			if !planted(t, sh, evs[0].out, rel, false) {
				break
			}
			smallest = rel
		}
		t.Logf("depth %d: smallest planted relative error caught %g; median bound %g", depth, smallest, sh[0].Bound)
	}
}
