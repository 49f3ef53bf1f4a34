package fpbound

import (
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// centre64Nets are ReLU/conv stacks exact over spec.Rat (so the rational
// value is the independent truth) deep enough that the interval centre
// wraps: depth 64.
func centre64Nets(t *testing.T) []*nets.Net {
	t.Helper()
	mlp, err := nets.MLP(3, 6, 64, irsem.OpRelu, nets.Kaiming)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := nets.ConvStack(5, 2, 4, 64, nets.Kaiming)
	if err != nil {
		t.Fatal(err)
	}
	return []*nets.Net{mlp, conv}
}

// centre64Run runs SharpBounds with the rational and ball centres
// disabled (rat-work 1, the ball's work cap 1), so the float64 centre
// (or, off, the interval one) encloses the exact values, and returns
// every node's exact enclosure X at the end of the first-order pass.
func centre64Run(t *testing.T, n *nets.Net, on bool, plant float64) ([]Sharp, [][]spec.Interval) {
	sh, xs, _ := centre64RunF(t, n, on, plant)
	return sh, xs
}

// centre64RunF is centre64Run, with every node's binary32 first-order
// bound F (nil where none was swept).
func centre64RunF(t *testing.T, n *nets.Net, on bool, plant float64) ([]Sharp, [][]spec.Interval, [][]float64) {
	t.Helper()
	cap0 := ballWork
	var xs [][]spec.Interval
	var fs [][]float64
	centre64On, centre64Plant, ballWork = on, plant, 1
	centre64Seen = func(nodes []foNode) {
		xs = make([][]spec.Interval, len(nodes))
		for i := range nodes {
			xs[i] = append([]spec.Interval(nil), nodes[i].x...)
		}
		fs = make([][]float64, len(nodes))
		for i := range nodes {
			fs[i] = append([]float64(nil), nodes[i].fo...)
		}
	}
	restore := limits.Set(limits.Limits{RatWork: 1})
	sh, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
	restore()
	centre64On, centre64Plant, centre64Seen, ballWork = true, 0, nil, cap0
	if err != nil {
		t.Fatalf("%s: %v", n.Name, err)
	}
	return sh, xs, fs
}

// outside counts the elements of every node whose exact rational value
// lies outside its enclosure X.
func outside(all []spec.Tensor[spec.Rat], xs [][]spec.Interval) (bad int, first string) {
	for i := range all {
		for m, v := range all[i].Data {
			x := v.Big()
			lo, hi := new(big.Rat).SetFloat64(xs[i][m].Lo), new(big.Rat).SetFloat64(xs[i][m].Hi)
			if math.IsInf(xs[i][m].Lo, -1) {
				lo = nil
			}
			if math.IsInf(xs[i][m].Hi, 1) {
				hi = nil
			}
			if (lo != nil && lo.Cmp(x) > 0) || (hi != nil && hi.Cmp(x) < 0) {
				if bad == 0 {
					first = x.FloatString(20)
				}
				bad++
			}
		}
	}
	return bad, first
}

// TestCentre64Encloses: past the rational and ball centres, the float64
// centre ŷ₆₄ ± G (doc.go, "The exact enclosure") contains the exact value
// (spec.Rat, computed independently by irsem.DenoteAll) of every element
// of every node, at every depth to 64; its width is a small multiple of
// 2⁻⁵³·max|x| of the node where the interval centre's has grown by
// orders of magnitude; the verdicts equal those with the exact centre
// (every float32 evaluation holds, bound within a few % of the exact
// centre's); and a planted error of the centre — ŷ₆₄ shifted by f·G,
// for f just above 1 — is caught by the containment check.
func TestCentre64Encloses(t *testing.T) {
	for _, n := range centre64Nets(t) {
		all, err := irsem.DenoteAll(n.Graph, n.Payload, irsem.ConvertTensor[spec.Rat](n.Input))
		if err != nil {
			t.Fatal(err)
		}
		sh, xs, fs := centre64RunF(t, n, true, 0)
		if sh[0].Centre != CentreFloat64 {
			t.Fatalf("%s: centre %q, want %q", n.Name, sh[0].Centre, CentreFloat64)
		}
		if bad, first := outside(all, xs); bad != 0 {
			t.Fatalf("%s: %d elements outside the float64 centre (first: exact %s)", n.Name, bad, first)
		}
		// Width: the radius against 2⁻²⁹·F (the binary32 first-order
		// bound with binary64's u in place of binary32's: G's scale),
		// and against 2⁻⁵³·max|x| over the nodes so far; the interval
		// centre's on the same net.
		_, ivs := centre64Run(t, n, false, 0)
		worstF, worst, worstIv, mx := 0.0, 0.0, 0.0, 0.0
		for i := range all {
			for m, v := range all[i].Data {
				f, _ := v.Big().Float64()
				mx = max(mx, math.Abs(f))
				if fs[i] != nil && fs[i][m] > 0 && !math.IsInf(fs[i][m], 1) {
					worstF = max(worstF, (xs[i][m].Hi-xs[i][m].Lo)/2/(0x1p-29*fs[i][m]))
				}
			}
			if mx == 0 {
				continue
			}
			for m := range all[i].Data {
				worst = max(worst, (xs[i][m].Hi-xs[i][m].Lo)/(0x1p-53*mx))
				worstIv = max(worstIv, (ivs[i][m].Hi-ivs[i][m].Lo)/(0x1p-53*mx))
			}
		}
		t.Logf("%s: widest X %.3g × 2⁻⁵³·max|x| (interval centre %.3g); radius ≤ %.3g × 2⁻²⁹·F", n.Name, worst, worstIv, worstF)
		if worst > 1<<16 || worstF > 4 {
			t.Errorf("%s: the float64 centre is %.3g × 2⁻⁵³·max|x|, %.3g × 2⁻²⁹·F wide", n.Name, worst, worstF)
		}
		// Verdicts and bounds against the exact centre's.
		ref, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
		if err != nil {
			t.Fatal(err)
		}
		evs := evaluations(t, n.Graph, n.Payload, n.Input)
		ratio := 1.0
		for i, s := range sh {
			if ref[i].Centre != CentreExact {
				t.Fatalf("%s: reference centre %q", n.Name, ref[i].Centre)
			}
			for _, ev := range evs {
				if v, w := Judge(ev.out[i], s.Enclosure).Verdict, Judge(ev.out[i], ref[i].Enclosure).Verdict; v != w {
					t.Errorf("%s: element %d: %s evaluation %v with the float64 centre, %v with the exact one", n.Name, i, ev.name, v, w)
				}
			}
			if s.Bound != ref[i].Bound {
				if math.IsInf(ref[i].Bound, 1) || math.IsInf(s.Bound, 1) {
					t.Errorf("%s: element %d: bound %g, exact centre's %g", n.Name, i, s.Bound, ref[i].Bound)
				}
				ratio = max(ratio, s.Bound/ref[i].Bound)
			}
		}
		t.Logf("%s: bound ≤ %.4f × the exact centre's", n.Name, ratio)
		if ratio > 1.05 {
			t.Errorf("%s: bound %.4f × the exact centre's", n.Name, ratio)
		}
		// Planted errors of the centre: the smallest shift caught.
		for _, f := range []float64{1.0001, 1.01} {
			_, pl := centre64Run(t, n, true, f)
			if bad, _ := outside(all, pl); bad == 0 {
				t.Errorf("%s: ŷ₆₄ shifted by %g·G: not caught", n.Name, f)
			} else {
				t.Logf("%s: ŷ₆₄ shifted by %g·G: %d elements outside", n.Name, f, bad)
			}
		}
	}
}
