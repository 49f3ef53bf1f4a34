package fpbound

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
)

// sharpCounting runs SharpBounds with the fallback sweep on or off and
// returns the bounds and the number of dense sweeps that ran.
func sharpCounting(t *testing.T, n *nets.Net, work int64, fallback bool) ([]Sharp, int) {
	t.Helper()
	swept := 0
	noCutFallback = !fallback
	sweepSeen = func(int, []foNode, []float64) { swept++ }
	defer func() { sweepSeen, noCutFallback = nil, false }()
	sh, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{SweepWork: work})
	if err != nil {
		t.Fatal(err)
	}
	return sh, swept
}

// TestCutFallbackSweep: on GPT-2 stacks (2 and 3 blocks, the hard causal
// mask) at a SweepWork that the level-0 sweeps spend before the last
// blocks, the fallback sweep (sweep.go, cutAll) bounds the nodes past the
// budget, so the output's sweep charges their residuals against F instead
// of carrying them as radii. Checked: fallback sweeps ran; every
// element's first-order bound is finite and at most the one without the
// fallback (only sharper), the largest strictly smaller; every float32
// evaluator of the tests (f32, binary32, five summation orders with and
// without FMA) lies within the first-order bound of every element; the
// float32 just above exact + bound FAILS (soundAndSharp); and the
// smallest planted relative error caught in the largest element is
// logged beside the one without the fallback.
func TestCutFallbackSweep(t *testing.T) {
	skipUnderRace(t)
	for _, c := range []struct {
		blocks int
		work   int64
	}{{2, 1 << 16}, {3, 1 << 18}} {
		n, err := nets.GPT2(uint64(300+c.blocks), 4, 8, 2, c.blocks, nets.Default, nets.HardMask)
		if err != nil {
			t.Fatal(err)
		}
		off, sweptOff := sharpCounting(t, n, c.work, false)
		on, sweptOn := sharpCounting(t, n, c.work, true)
		if sweptOn <= sweptOff {
			t.Errorf("%d blocks: %d dense sweeps with the fallback, %d without: no fallback ran", c.blocks, sweptOn, sweptOff)
		}
		worstOn, worstOff := 0.0, 0.0
		for i := range on {
			if math.IsInf(on[i].FirstOrder, 1) || on[i].FirstOrder > off[i].FirstOrder {
				t.Errorf("%d blocks element %d: first-order bound %g with the fallback, %g without", c.blocks, i, on[i].FirstOrder, off[i].FirstOrder)
			}
			worstOn, worstOff = max(worstOn, on[i].FirstOrder), max(worstOff, off[i].FirstOrder)
		}
		if !(worstOn < worstOff) {
			t.Errorf("%d blocks: largest first-order bound %g with the fallback, %g without", c.blocks, worstOn, worstOff)
		}
		g, p, x := n.Graph, n.Payload, n.Input
		rats, ivs := exactOf(g, p, x)
		evs := evaluations(t, g, p, x)
		for _, ev := range evs {
			for i, s := range on {
				if d := distTo(ev.out[i], i, rats, ivs); !(d <= s.FirstOrder) {
					t.Fatalf("%d blocks element %d, %s: |v̂ − x| = %g > first-order bound %g", c.blocks, i, ev.name, d, s.FirstOrder)
				}
			}
		}
		soundAndSharp(t, n.Name, g, p, x, on)
		big := 0
		for i, s := range on {
			if math.Abs(s.Exact.Float64()) > math.Abs(on[big].Exact.Float64()) {
				big = i
			}
		}
		v := evs[0].out[big]
		t.Logf("%d blocks, SweepWork %d: largest first-order bound %.3g → %.3g; smallest planted relative error caught in the largest element %s → %s",
			c.blocks, c.work, worstOff, worstOn, smallestCaught(v, off[big].Enclosure), smallestCaught(v, on[big].Enclosure))
	}
}
