package fpbound

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// tiedPoolNet builds input [1, 2, h, h] → tanh → tanh → max_pool 2×2 →
// conv 1×1 2→2 (random binary32 weights), on an input whose 2×2 windows
// hold two equal elements in every other window, so that the tanh boxes
// of those two overlap and the window's order cannot be decided on the
// boxes. With h = 32 the tanh nodes have 2048 elements, past the dense
// sweep (o² > maxDense): the second tanh's sweep is elementwiseCut's.
func tiedPoolNet(seed uint64, h int) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	r := newRand(seed)
	sh := spec.Shape{1, 2, h, h}
	b := newBuilder(sh)
	x := b.node(irsem.Kind{Op: irsem.OpTanh}, sh, 0)
	x = b.node(irsem.Kind{Op: irsem.OpTanh}, sh, x)
	pw := spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{0, 0}}
	x = b.node(irsem.Kind{Op: irsem.OpMaxPool, Window: &pw}, spec.Shape{1, 2, h / 2, h / 2}, x)
	cw := spec.Window{Kernel: []int{1, 1}, Stride: []int{1, 1}, Padding: []int{0, 0}, Dilation: []int{1, 1}, Groups: 1, InChannels: 2, OutChannels: 2}
	id := b.node(irsem.Kind{Op: irsem.OpConv, Window: &cw}, spec.Shape{1, 2, h / 2, h / 2}, x)
	wt, bias := randTensor(r, spec.Shape{2, 2, 1, 1}, 0.7), randTensor(r, spec.Shape{2}, 0.1)
	b.p.Entries[id] = &irsem.Params{W: &wt, B: &bias}
	in := randTensor(r, sh, 1)
	for c := 0; c < 2; c++ {
		for i := 0; i < h; i += 2 {
			for j := 0; j < h; j += 4 { // every other window: a tie
				at := (c*h+i)*h + j
				in.Data[at+1] = in.Data[at]
			}
		}
	}
	return b.g, b.p, in
}

// TestMaxPoolTiesOnBoxes: a max_pool whose windows' orders cannot be
// decided on the boxes (exact ties) has a finite first-order bound on every
// element (before unet36 the interval VJP rule refused the window and the
// bound was +∞ everywhere: "the max-pool tie rule does not apply"); every
// float32 evaluation of the tests is within it; a planted 10⁻³ relative
// error FAILS (without HullsUndecided the bound is +∞); and elementwiseCut's bound for the second tanh equals the
// interval sweep's it replaces within 10⁻⁹ relative (the cut loses
// nothing on a diagonal Jacobian).
func TestMaxPoolTiesOnBoxes(t *testing.T) {
	for seed := uint64(1); seed <= 1; seed++ { // seed 2: the same figures (unet36), 2× the time
		g, p, x := tiedPoolNet(seed, 24)
		noHullsUndecided = true
		old, err := SharpBounds(g, p, x, Options{})
		noHullsUndecided = false
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsInf(old[0].FirstOrder, 1) {
			t.Fatalf("seed %d: without HullsUndecided the first-order bound is finite (%g): the test does not reproduce the pattern", seed, old[0].FirstOrder)
		}
		sh, err := SharpBounds(g, p, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, ivs := exactOf(g, p, x)
		evs := evaluations(t, g, p, x)
		for i, s := range sh {
			if math.IsInf(s.FirstOrder, 1) {
				t.Fatalf("seed %d element %d: no first-order bound: %s", seed, i, s.FirstOrderReason)
			}
			evaluationsWithin(t, seed, i, s.Bound, ivs[i], evs)
		}
		smallest := smallestPlanted(t, sh, evs[0].out)
		noElementwiseCut = true
		sh2, err := SharpBounds(g, p, x, Options{})
		noElementwiseCut = false
		if err != nil {
			t.Fatal(err)
		}
		maxB := 0.0
		for i := range sh {
			maxB = max(maxB, sh[i].FirstOrder)
			if a, b := sh[i].FirstOrder, sh2[i].FirstOrder; !(math.Abs(a-b) <= 1e-9*b) {
				t.Fatalf("seed %d element %d: first-order bound %g with elementwiseCut, %g with the interval sweep", seed, i, a, b)
			}
		}
		t.Logf("seed %d: largest first-order bound %.3g; smallest planted relative error caught %g", seed, maxB, smallest)
	}
}

// TestMaxPoolHullsUndecided: the registry states HullsUndecided for the
// max pools alone among the primitives that are not Smooth (the others'
// interval rules refuse or void an undecided order), and adj is the
// Encloser the max-pool rules need to take the hull.
func TestMaxPoolHullsUndecided(t *testing.T) {
	reg := spec.Default[adj]()
	for _, name := range reg.Names() {
		pr, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		want := name == "max_pool" || name == "max_pool_nd"
		if pr.HullsUndecided != want {
			t.Errorf("%s: HullsUndecided %v", name, pr.HullsUndecided)
		}
		if pr.HullsUndecided && pr.Smooth {
			t.Errorf("%s: HullsUndecided and Smooth", name)
		}
	}
	if _, ok := any(adj{}).(spec.Encloser[adj]); !ok {
		t.Fatal("adj is not a spec.Encloser")
	}
}
