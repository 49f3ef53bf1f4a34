package harness

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/spec"
)

// TestSharpConverts: every random case's forward bounds go through the
// first-order bound — its IR graph converts and computes the same
// classic bounds as the case's forward pass (sharpen's identity check) —
// and the first-order bound is the least on some elements of each
// format, strictly below the classic one.
func TestSharpConverts(t *testing.T) {
	firstOrder := map[string]int{}
	for _, c := range RandomCases(1, 300) {
		ref, err := NewReference(c.Graph, c.Xs, c.Cot, c.Tangents)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if ref.Sharp != "" {
			t.Errorf("%s (%s): %s", c.Name, GraphString(c.Graph), ref.Sharp)
			continue
		}
		old, err := classicReference(c.Graph, c.Xs, c.Cot, c.Tangents)
		if err != nil {
			t.Fatal(err)
		}
		for k, b := range ref.Y {
			for _, f := range []struct {
				name     string
				by       string
				new, old fpbound.Enclosure
			}{{"binary64", b.TightBy, b.Tight, old.Y[k].Tight}, {"binary32", b.LooseBy, b.Loose, old.Y[k].Loose}} {
				if f.new.Bound > f.old.Bound {
					t.Errorf("%s y[%d] %s: sharp bound %g above the classic %g", c.Name, k, f.name, f.new.Bound, f.old.Bound)
				}
				if f.by == DecidedFirstOrder {
					if !(f.new.Bound < f.old.Bound) {
						t.Errorf("%s y[%d] %s: named first-order at %g, classic %g", c.Name, k, f.name, f.new.Bound, f.old.Bound)
					}
					firstOrder[f.name]++
				}
			}
		}
	}
	for _, f := range []string{"binary64", "binary32"} {
		if firstOrder[f] == 0 {
			t.Errorf("%s: the first-order bound decides no element of 300 random cases", f)
		}
	}
}

// TestSharpSelfRandom: the registry's own formulas evaluated in binary64
// and in binary32 (the float32 machine) hold within the sharp bounds on
// every random case's forward value — never fails, never suspect (the
// soundness side of the planted-fault test below).
func TestSharpSelfRandom(t *testing.T) {
	for _, seed := range []uint64{1, 7} {
		rows, _ := Run(self32{newSelf(), 1}, RandomCases(seed, 120), Options{})
		n := 0
		for _, r := range rows {
			if r.Obligation != OblForward {
				continue
			}
			n++
			if r.Verdict == Fails || r.Verdict == Suspect {
				t.Errorf("seed %d: %s %s forward: %s %s", seed, r.Machine, r.Case, r.Verdict, r.Detail)
			}
		}
		if n == 0 {
			t.Fatalf("seed %d: no forward row", seed)
		}
	}
}

// TestSharpCatchesPlantedFault: on a random case where the first-order
// bound is far below the classic one, a forward value planted just
// outside the sharp bound — where the classic bound provably cannot say
// fails — is now a finding, on a float64 machine (judged against the
// binary32 bound E32) and on a float32 machine (against F32Slack·E32).
func TestSharpCatchesPlantedFault(t *testing.T) {
	// The first element of the first random case whose binary32
	// first-order bound is below an eighth of a finite classic one (a
	// classic +∞ leaves no planted value "within the classic bound" to
	// set beside the sharp one: the split primitives of norm31 give such
	// cases a finite first-order bound).
	var c Case
	var k int
	var sharp, classic Bound
	for _, rc := range RandomCases(1, 300) {
		ref, err := NewReference(rc.Graph, rc.Xs, rc.Cot, rc.Tangents)
		if err != nil {
			t.Fatal(err)
		}
		old, err := classicReference(rc.Graph, rc.Xs, rc.Cot, rc.Tangents)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range ref.Y {
			if b.LooseBy == DecidedFirstOrder && !math.IsInf(old.Y[i].Loose.Bound, 0) && 8*b.Loose.Bound < old.Y[i].Loose.Bound && len(rc.Graph.Nodes) > 2 && !b.Loose.Exact.Contains(new(big.Rat)) {
				c, k, sharp, classic = rc, i, b, old.Y[i]
				break
			}
		}
		if c.Name != "" {
			break
		}
	}
	if c.Name == "" {
		t.Fatal("no random case with a first-order bound below 1/8 of the classic one")
	}
	t.Logf("%s: %s, y[%d]: binary32 bound %g (first-order), classic %g", c.Name, GraphString(c.Graph), k, sharp.Loose.Bound, classic.Loose.Bound)
	for _, m := range []struct {
		machine string
		slack   float64 // the loose bound's factor on the binary32 bound
		f32     bool
	}{{"tape", 1, false}, {"tape32", F32Slack, true}} {
		// v lies 2·slack·E_sharp above the sharp enclosure's top.
		v := sharp.Loose.Exact.Hi + 2*m.slack*sharp.Loose.Bound
		if m.f32 {
			v = float64(math.Nextafter32(float32(v), float32(math.Inf(1))))
		}
		// Derived here in exact arithmetic: v is farther than the sharp
		// loose bound from every point of the sharp enclosure (so no
		// modelled evaluation gives it), and within the classic loose
		// bound of the classic enclosure's bottom (so the classic bound
		// cannot say fails).
		rv := new(big.Rat).SetFloat64(v)
		dist := func(x float64) *big.Rat { return new(big.Rat).Sub(rv, new(big.Rat).SetFloat64(x)) }
		bound := func(e float64) *big.Rat {
			return new(big.Rat).Mul(new(big.Rat).SetFloat64(m.slack), new(big.Rat).SetFloat64(e))
		}
		if dist(sharp.Loose.Exact.Hi).Cmp(bound(sharp.Loose.Bound)) <= 0 {
			t.Fatalf("%s: planted value %v is within the sharp bound", m.machine, v)
		}
		if dist(classic.Loose.Exact.Lo).Cmp(bound(classic.Loose.Bound)) > 0 {
			t.Fatalf("%s: planted value %v is outside the classic bound: the test would not show the difference", m.machine, v)
		}
		target := GraphString(c.Graph)
		e := newSelf()
		e.perturbY = func(mach string, g Graph, y Tensor64) {
			if mach == m.machine && GraphString(g) == target && k < len(y.Data) {
				y.Data[k] = v
			}
		}
		rows, _ := Run(self32{e, 1}, []Case{c}, Options{})
		found := false
		for _, r := range rows {
			if r.Machine == m.machine && r.Obligation == OblForward {
				found = true
				if r.Verdict != Fails {
					t.Errorf("%s: planted y[%d] = %v: %s %s, want fails", m.machine, k, v, r.Verdict, r.Detail)
				} else if !strings.Contains(r.Detail, "first-order") {
					t.Errorf("%s: the finding does not name the deciding bound: %s", m.machine, r.Detail)
				}
			}
		}
		if !found {
			t.Errorf("%s: no forward row", m.machine)
		}
	}
}

// TestSharpOne: how one element's bounds combine: the least finite bound
// decides, an infinite one claims nothing (its enclosure is not
// intersected), a mismatch of the two classic bounds or disjoint
// enclosures refuse the first-order bound.
func TestSharpOne(t *testing.T) {
	en := func(lo, hi, e float64) fpbound.Enclosure {
		return fpbound.Enclosure{Exact: spec.Interval{Lo: lo, Hi: hi}, Bound: e}
	}
	sh := func(x fpbound.Enclosure, classic, first float64) fpbound.Sharp {
		x.Bound = math.Min(classic, first)
		return fpbound.Sharp{Enclosure: x, Classic: classic, FirstOrder: first}
	}
	inf := math.Inf(1)
	for _, tc := range []struct {
		name   string
		c, f   fpbound.Enclosure
		s      fpbound.Sharp
		ok     bool
		want   fpbound.Enclosure
		wantBy string
	}{
		{"first-order decides", en(0, 2, 4), en(0, 2, 4), sh(en(1, 3, 0), 4, 1), true, en(1, 2, 1), DecidedFirstOrder},
		{"classic decides", en(0, 2, 4), en(0, 2, 4), sh(en(0, 2, 0), 4, 5), true, en(0, 2, 4), DecidedClassic},
		{"a tie is classic", en(0, 2, 4), en(0, 2, 4), sh(en(0, 2, 0), 4, 4), true, en(0, 2, 4), DecidedClassic},
		{"the forward pass's classic is below the tape's", en(0, 2, inf), en(0, 1, 3), sh(en(0, 1, 0), 3, 9), true, en(0, 1, 3), DecidedClassic},
		{"an unbounded tape claims nothing", en(5, 6, inf), en(0, 1, 3), sh(en(0, 1, 0), 3, 2), true, en(0, 1, 2), DecidedFirstOrder},
		{"classic bounds differ", en(0, 2, 4), en(0, 2, 4), sh(en(0, 2, 0), 3, 1), false, fpbound.Enclosure{}, ""},
		{"disjoint enclosures", en(0, 1, 4), en(0, 1, 4), sh(en(2, 3, 0), 4, 1), false, fpbound.Enclosure{}, ""},
		{"nothing finite", en(0, 1, inf), en(0, 1, inf), sh(en(0, 1, 0), inf, inf), true, en(0, 1, inf), DecidedClassic},
	} {
		got, ok := sharpOne(tc.c, tc.f, tc.s)
		if ok != tc.ok {
			t.Errorf("%s: ok = %v", tc.name, ok)
			continue
		}
		if !ok {
			continue
		}
		if got.Exact != tc.want.Exact || got.Bound != tc.want.Bound || got.by != tc.wantBy {
			t.Errorf("%s: got %v ± %g (%s), want %v ± %g (%s)", tc.name, got.Exact, got.Bound, got.by, tc.want.Exact, tc.want.Bound, tc.wantBy)
		}
	}
}

// TestSameIntervalsCatchesWrongGraph: the identity check refuses an IR
// graph that is not the case's formula — arguments swapped, another
// primitive, another attribute, another input — and accepts the case's
// own conversion.
func TestSameIntervalsCatchesWrongGraph(t *testing.T) {
	n := func(op string, a *spec.Attrs, args ...int) Node { return Node{Op: op, Attrs: a, Args: args} }
	x := q(spec.Shape{3}, 1, -2, 3)
	y := q(spec.Shape{3}, 2, 2, -1)
	xs := []spec.Tensor[spec.Rat]{x, y}
	g := Graph{Inputs: 2, Nodes: []Node{n("sin", nil, 0), n("scale", &spec.Attrs{C: big.NewRat(3, 4)}, 2), n("sub", nil, 3, 1)}}
	for _, tc := range []struct {
		name  string
		other Graph
		xs    []spec.Tensor[spec.Rat]
		ok    bool
	}{
		{"itself", g, xs, true},
		{"arguments swapped", Graph{Inputs: 2, Nodes: []Node{g.Nodes[0], g.Nodes[1], n("sub", nil, 1, 3)}}, xs, false},
		{"another primitive", Graph{Inputs: 2, Nodes: []Node{n("cos", nil, 0), g.Nodes[1], g.Nodes[2]}}, xs, false},
		{"another attribute", Graph{Inputs: 2, Nodes: []Node{g.Nodes[0], n("scale", &spec.Attrs{C: big.NewRat(1, 2)}, 2), g.Nodes[2]}}, xs, false},
		{"inputs swapped", g, []spec.Tensor[spec.Rat]{y, x}, false},
	} {
		ig, p, in, err := irGraph(tc.other, tc.xs)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := sameIntervals(g, xs, ig, p, in); (err == nil) != tc.ok {
			t.Errorf("%s: sameIntervals = %v", tc.name, err)
		}
	}
}
