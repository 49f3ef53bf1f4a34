package harness

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestSelfHolds: tlcheck's own rules in binary64 satisfy every
// obligation on every case (none fails; the only non-holds are the zero
// rows of graphs with a primitive the registry does not call
// zero-preserving).
func TestSelfHolds(t *testing.T) {
	rows, skipped := Run(newSelf(), Cases(), Options{})
	if len(skipped) != 0 {
		t.Errorf("skipped %v", skipped)
	}
	obls := map[string]int{}
	for _, r := range rows {
		obls[r.Obligation]++
		if r.Verdict == Holds {
			continue
		}
		if r.Obligation == OblZero && r.Verdict == Inconclusive {
			continue
		}
		t.Errorf("%s %s %s: %s %s", r.Case, r.Machine, r.Obligation, r.Verdict, r.Detail)
	}
	n := len(Cases())
	// Every case has forward, a gradient row, an adjoint (or mass) row and
	// a zero row; relu, abs and clamp have a subgradient row.
	if obls[OblForward] != n || obls[OblVJP]+obls[OblPathSum] != n || obls[OblAdjoint]+obls[OblMass] != n || obls[OblZero] != n || obls[OblSubgrad] != 3 {
		t.Errorf("rows per obligation %v for %d cases", obls, n)
	}
}

func find(rows []Row, kase, obl string) []Row {
	var out []Row
	for _, r := range rows {
		if r.Case == kase && r.Obligation == obl {
			out = append(out, r)
		}
	}
	return out
}

func one(t *testing.T, rows []Row, kase, obl string) Row {
	t.Helper()
	rs := find(rows, kase, obl)
	if len(rs) != 1 {
		t.Fatalf("%s/%s: %d rows", kase, obl, len(rs))
	}
	return rs[0]
}

func caseNamed(t *testing.T, name string) Case {
	for _, c := range Cases() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %s", name)
	return Case{}
}

// TestPlantedFaults: each obligation catches the fault it is for.
func TestPlantedFaults(t *testing.T) {
	ulps := func(v float64, k int) float64 {
		return math.Float64frombits(math.Float64bits(v) + uint64(k))
	}
	tests := []struct {
		name    string
		kase    string
		perturb func(m string, g []Tensor64)
		machs   []string
		fails   []string // obligations that must fail
		holds   []string // obligations that must still hold
	}{
		// A gradient 2^31 binary64 ulps off (≈ 2^-21 relative) exceeds the
		// binary32-model bound of a product by a small dyadic.
		{"mul off by 2^31 ulps", "mul", func(_ string, g []Tensor64) { g[0].Data[0] = ulps(g[0].Data[0], 1<<31) },
			nil, []string{OblVJP, OblAdjoint}, []string{OblForward}},
		{"sign flipped in a DAG", "dag_mlp", func(_ string, g []Tensor64) { g[1].Data[2] = -g[1].Data[2] },
			nil, []string{OblPathSum, OblAdjoint}, []string{OblForward}},
		{"NaN gradient", "tanh", func(_ string, g []Tensor64) { g[0].Data[3] = math.NaN() },
			nil, []string{OblVJP, OblAdjoint}, nil},
		// Max at a tie: both tied arguments get the full cotangent, mass 2c.
		{"max tie mass doubled", "max_tie", func(_ string, g []Tensor64) {
			// elements 1 and 5 tie; the rules give c/2 to each side
			g[0].Data[1], g[1].Data[1] = 2*g[0].Data[1], 2*g[1].Data[1]
		}, nil, []string{OblMass}, nil},
		// A gradient that is nonzero for a zero cotangent.
		{"zero cotangent leaks", "square", func(_ string, g []Tensor64) {
			if g[0].Data[1] == 0 {
				g[0].Data[1] = 1.0 / 1024
			}
		}, nil, []string{OblZero}, nil},
		{"second machine off", "matmul", func(m string, g []Tensor64) {
			if m == "lisp" {
				g[0].Data[0] = -g[0].Data[0] - 1
			}
		}, []string{"tape", "lisp"}, []string{OblMachines}, nil},
		// A difference within the bound (a tie split otherwise) must not
		// hide a later one outside it.
		{"second machine off after a tie", "max_tie", func(m string, g []Tensor64) {
			if m == "lisp" {
				g[0].Data[1], g[1].Data[1] = g[0].Data[1]+g[1].Data[1], 0 // element 1 ties
				g[0].Data[3] = -g[0].Data[3] - 1
			}
		}, []string{"tape", "lisp"}, []string{OblMachines}, nil},
		{"relu′(0) = 2 is no subgradient", "relu", func(_ string, g []Tensor64) {
			g[0].Data[2] = 2 * (2.0 / 4) // element 2 is the kink, c = 1/2
		}, nil, []string{OblSubgrad, OblVJP}, []string{OblAdjoint}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newSelf()
			e.perturb = tc.perturb
			if tc.machs != nil {
				e.machines = tc.machs
			}
			rows, _ := Run(e, []Case{caseNamed(t, tc.kase)}, Options{})
			for _, obl := range tc.fails {
				found := false
				for _, r := range find(rows, tc.kase, obl) {
					found = found || r.Verdict == Fails
				}
				if !found {
					t.Errorf("%s not failed: %v", obl, find(rows, tc.kase, obl))
				}
			}
			for _, obl := range tc.holds {
				for _, r := range find(rows, tc.kase, obl) {
					if r.Verdict != Holds {
						t.Errorf("%s: %s %s", obl, r.Verdict, r.Detail)
					}
				}
			}
		})
	}
}

// TestConvention: an engine whose relu′(0) is 1 fails the vjp obligation
// without a declared convention, and is held to the convention, with a
// "convention" verdict, when it declares x + relu(−x).
func TestConvention(t *testing.T) {
	c := caseNamed(t, "relu")
	perturb := func(_ string, g []Tensor64) { g[0].Data[2] = 2.0 / 4 } // relu′(0)·c = 1·(1/2)
	e := newSelf()
	e.perturb = perturb
	rows, _ := Run(e, []Case{c}, Options{})
	if r := one(t, rows, "relu", OblVJP); r.Verdict != Fails {
		t.Errorf("undeclared: %v", r)
	}
	if r := one(t, rows, "relu", OblSubgrad); r.Verdict != Holds {
		t.Errorf("1 ∈ [0, 1]: %v", r)
	}
	e.convs = []Convention{ReluGE("test")}
	rows, _ = Run(e, []Case{c}, Options{})
	if r := one(t, rows, "relu", OblVJP); r.Verdict != ByConvention || !strings.Contains(r.Detail, "relu′(0) = 1") {
		t.Errorf("declared: %v", r)
	}
	// Held to it: relu′(0) = 1/2 is a valid subgradient but neither
	// tlcheck's nor the declared convention.
	e.perturb = func(_ string, g []Tensor64) { g[0].Data[2] = 1.0 / 4 }
	rows, _ = Run(e, []Case{c}, Options{})
	if r := one(t, rows, "relu", OblVJP); r.Verdict != Fails || !strings.Contains(r.Detail, "under the engine's convention") {
		t.Errorf("engine off its declared convention: %v", r)
	}
}

// TestMaxPoolFirst: MaxPoolFirst's graph has max_pool's value on the
// pooling cases (evaluated in binary64, exact on these dyadics), and its
// registry gradient at max_pool_tie's tie (window 0 = {1, 1, 1/4, 0},
// c = 3/4, by hand) gives 3/4 to element 0 and 0 to element 1; an engine
// with that rule fails tlcheck's even split and is reported as
// "convention" when it declares MaxPoolFirst.
func TestMaxPoolFirst(t *testing.T) {
	conv := []Convention{MaxPoolFirst("test")}
	for _, name := range []string{"max_pool_tie", "max_pool_wide", "max_pool_overlap"} {
		var c Case
		for _, k := range append(Cases(), CasesExtraGorgonia()...) {
			if k.Name == name {
				c = k
			}
		}
		shapes, err := c.Graph.ValueShapes(c.Xs)
		if err != nil {
			t.Fatal(err)
		}
		eg := c.Graph.ExpandAt(conv, shapes)
		if len(eg.Nodes) < 4 {
			t.Fatalf("%s: not expanded: %v", name, eg)
		}
		xs := []Tensor64{Float64s(c.Xs[0])}
		y0, _, err := newSelf().Run("tape", c.Graph, xs, Float64s(c.Cot))
		if err != nil {
			t.Fatal(err)
		}
		y1, g1, err := newSelf().Run("tape", eg, xs, Float64s(c.Cot))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(y0) != fmt.Sprint(y1) {
			t.Errorf("%s: max_pool %v, expansion %v", name, y0, y1)
		}
		if name == "max_pool_tie" && (g1[0].Data[0] != 0.75 || g1[0].Data[1] != 0) {
			t.Errorf("first-wins gradient %v", g1[0].Data)
		}
	}
	first := func(_ string, g []Tensor64) { g[0].Data[0], g[0].Data[1] = 0.75, 0 }
	e := newSelf()
	e.perturb = first
	rows, _ := Run(e, []Case{caseNamed(t, "max_pool_tie")}, Options{})
	if r := one(t, rows, "max_pool_tie", OblVJP); r.Verdict != Fails {
		t.Errorf("undeclared: %v", r)
	}
	e.convs = conv
	rows, _ = Run(e, []Case{caseNamed(t, "max_pool_tie")}, Options{})
	if r := one(t, rows, "max_pool_tie", OblVJP); r.Verdict != ByConvention {
		t.Errorf("declared: %v", r)
	}
	if r := one(t, rows, "max_pool_tie", OblMass); r.Verdict != Holds {
		t.Errorf("mass: %v", r)
	}
	// Padded windows are left to max_pool itself.
	pad := &spec.Attrs{Window: &spec.Window{Kernel: []int{2, 2}, Stride: []int{1, 1}, Pads: []int{1, 1, 1, 1}}}
	if _, err := maxPoolFirst(pad, []spec.Shape{{1, 1, 2, 2}}); err == nil {
		t.Error("padded window expanded")
	}
}

// TestSuspect: the product of two small dyadics is exact in binary64, so
// a gradient one ulp off lies outside the binary64 bound and inside the
// binary32 one: suspect, not a finding; 2^20 ulps is still suspect, 2^31
// fails (TestPlantedFaults).
func TestSuspect(t *testing.T) {
	for _, k := range []uint64{1, 1 << 20} {
		e := newSelf()
		e.perturb = func(_ string, g []Tensor64) { g[0].Data[0] = math.Float64frombits(math.Float64bits(g[0].Data[0]) + k) }
		rows, _ := Run(e, []Case{caseNamed(t, "mul")}, Options{})
		for _, obl := range []string{OblVJP, OblAdjoint} {
			if r := one(t, rows, "mul", obl); r.Verdict != Suspect || r.Finding() {
				t.Errorf("%d ulps, %s: %s %s", k, obl, r.Verdict, r.Detail)
			}
		}
	}
}
