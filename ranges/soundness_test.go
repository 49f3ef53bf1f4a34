package ranges

import (
	"fmt"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// evalPoint evaluates g at the binary32 point x in three ways and checks
// every node's values against the trace:
//   - binary32 (spec.Binary32): each value must lie in its enclosure;
//   - exact rationals (spec.Rat), when every tag is exact and the
//     evaluation succeeds: each exact value must lie in its enclosure;
//   - float64 intervals at the point (spec.Interval), an enclosure of the
//     exact real value for every tag: when it lies inside the trace's
//     enclosure, so does the real value (for the non-exact tags too);
//     when the two are disjoint, the real value is outside and the test
//     fails; a partial overlap is inconclusive (spec.Interval, which
//     multiplies a value by itself by corners, can be wider than the
//     trace) and is counted in tally[1], every comparison in tally[0].
func evalPoint(t *testing.T, tg testGraph, trace [][]Interval32, x []float32, what string, tally ...*[2]int) {
	t.Helper()
	n := len(x)
	b32 := spec.Tensor[spec.Binary32]{Shape: tg.inShape, Data: make([]spec.Binary32, n)}
	rat := spec.Tensor[spec.Rat]{Shape: tg.inShape, Data: make([]spec.Rat, n)}
	ivl := spec.Tensor[spec.Interval]{Shape: tg.inShape, Data: make([]spec.Interval, n)}
	for i, f := range x {
		b32.Data[i] = spec.Binary32FromFloat32(f)
		r, err := spec.RatFromFloat64(float64(f))
		if err != nil {
			t.Fatal(err)
		}
		rat.Data[i] = r
		ivl.Data[i] = spec.Point(float64(f))
	}
	bv, err := irsem.DenoteAll(tg.g, tg.p, b32)
	if err != nil {
		t.Fatalf("%s %s: binary32: %v", tg.name, what, err)
	}
	for id, es := range trace {
		for j, e := range es {
			v := bv[id].Data[j]
			r, err := spec.RatFromFloat64(v.Float64())
			if err != nil || !e.ContainsRat(r.Big()) {
				t.Fatalf("%s %s: node %d (%s) element %d: binary32 %s outside %s", tg.name, what, id, tg.g.Nodes[id].Kind.Op, j, v, e)
			}
		}
	}
	if exactTags(tg.g) {
		rv, err := irsem.DenoteAll(tg.g, tg.p, rat)
		if err == nil {
			for id, es := range trace {
				for j, e := range es {
					if !e.ContainsRat(rv[id].Data[j].Big()) {
						t.Fatalf("%s %s: node %d (%s) element %d: exact %s outside %s", tg.name, what, id, tg.g.Nodes[id].Kind.Op, j, rv[id].Data[j], e)
					}
				}
			}
		}
	}
	iv, err := irsem.DenoteAll(tg.g, tg.p, ivl)
	if err != nil {
		t.Fatalf("%s %s: interval: %v", tg.name, what, err)
	}
	for id, es := range trace {
		for j, e := range es {
			w := e.Wide()
			v := iv[id].Data[j]
			if len(tally) > 0 {
				tally[0][0]++
			}
			if w.Lo <= v.Lo && v.Hi <= w.Hi {
				continue
			}
			if v.Hi >= w.Lo && v.Lo <= w.Hi && len(tally) > 0 {
				tally[0][1]++
				continue
			}
			{
				t.Fatalf("%s %s: node %d (%s) element %d: real enclosure %s not inside %s", tg.name, what, id, tg.g.Nodes[id].Kind.Op, j, v, e)
			}
		}
	}
}

func exactTags(g *irsem.Graph) bool {
	for i := range g.Nodes {
		if info, ok := irsem.LookupTag(g.Nodes[i].Kind.Op); !ok || !info.Exact {
			return false
		}
	}
	return true
}

// TestSoundness is the soundness property: for many random boxes and
// points in them, the binary32 replay and the exact values lie inside the
// trace, for graphs that together use every supported tag: 60 boxes per
// graph with TLCHECK_EXHAUSTIVE set (CI), 20 by default, 15 under -short.
func TestSoundness(t *testing.T) {
	boxes := 20
	if exhaustive() {
		boxes = 60
	}
	if testing.Short() {
		boxes = 15
	}
	prof := backend.CheckedCPU()
	covered := map[irsem.Op]bool{}
	var tally [2]int
	for _, tg := range testGraphs(t) {
		plan := mustPlan(t, tg.g, prof)
		traced := 0
		for s := 0; s < boxes; s++ {
			seed := uint64(1000*s + 17)
			box := randomBox(tg.inShape, seed)
			trace, err := Trace(tg.g, tg.p, box, plan)
			if err != nil {
				// The elementwise graph can meet a legitimate failure
				// (exp beyond the binary32 range is impossible for these
				// boxes, but the checks stay honest): report it.
				t.Fatalf("%s box %d %v: %v", tg.name, s, box.Data, err)
			}
			traced++
			for k, x := range SamplePoints(box, 12, seed, 16) {
				evalPoint(t, tg, trace, x, fmt.Sprintf("box %d point %d", s, k), &tally)
			}
		}
		for i := range tg.g.Nodes {
			covered[tg.g.Nodes[i].Kind.Op] = true
		}
		if traced == 0 {
			t.Fatalf("%s: no box traced", tg.name)
		}
	}
	t.Logf("%d of %d real-value comparisons inconclusive", tally[1], tally[0])
	if 4*tally[1] > tally[0] {
		t.Errorf("%d of %d real-value comparisons inconclusive", tally[1], tally[0])
	}
	for _, r := range Rules() {
		if !covered[r.Tag] {
			t.Errorf("tag %s (rule %s) is not exercised by the soundness graphs", r.Tag, r.Rule)
		}
	}
}
