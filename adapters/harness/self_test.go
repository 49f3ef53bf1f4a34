package harness

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

// self is an engine made of tlcheck's own rules over float64 (spec.F64):
// the registry's formulas evaluated in binary64, which the bound covers
// by its theorem, so every obligation must hold on it. Tests perturb it
// to plant faults.
type self struct {
	reg      *spec.Registry[spec.F64]
	machines []string
	// perturb, when set, edits machine m's gradients before they are
	// returned.
	perturb func(m string, grads []Tensor64)
	convs   []Convention
}

func newSelf() *self {
	return &self{reg: spec.Default[spec.F64](), machines: []string{"tape"}}
}

func (e *self) Name() string                       { return "self" }
func (e *self) Module() string                     { return "github.com/tlcheck/tlcheck (float64)" }
func (e *self) Machines() []string                 { return e.machines }
func (e *self) Supports(string, *spec.Attrs) error { return nil }
func (e *self) Conventions() []Convention          { return e.convs }

func f64s(t Tensor64) spec.Tensor[spec.F64] {
	d := make([]spec.F64, len(t.Data))
	for i, v := range t.Data {
		d[i] = spec.F64(v)
	}
	return spec.Tensor[spec.F64]{Shape: append(spec.Shape{}, t.Shape...), Data: d}
}

func back(t spec.Tensor[spec.F64]) Tensor64 {
	out := Tensor64{Shape: append([]int{}, t.Shape...), Data: make([]float64, len(t.Data))}
	for i, v := range t.Data {
		out.Data[i] = float64(v)
	}
	return out
}

func (e *self) Run(m string, g Graph, xs []Tensor64, cot Tensor64) (Tensor64, []Tensor64, error) {
	s := tape.NewSession(e.reg)
	var vals []tape.Ref
	for i, x := range xs {
		r, err := s.Param(fmt.Sprintf("x%d", i), f64s(x))
		if err != nil {
			return Tensor64{}, nil, err
		}
		vals = append(vals, r)
	}
	for _, n := range g.Nodes {
		args := make([]tape.Ref, len(n.Args))
		for k, a := range n.Args {
			args[k] = vals[a]
		}
		r, err := s.Apply(n.Op, n.Attrs, args...)
		if err != nil {
			return Tensor64{}, nil, err
		}
		vals = append(vals, r)
	}
	out := vals[len(vals)-1]
	c, _ := s.Input("cot", f64s(cot))
	p, err := s.Apply("mul", nil, out, c)
	if err != nil {
		return Tensor64{}, nil, err
	}
	l, _ := s.Apply("sum", nil, p)
	gs, err := s.Backward(l)
	if err != nil {
		return Tensor64{}, nil, err
	}
	y, _ := s.Value(out)
	var grads []Tensor64
	for i := range xs {
		gr, reached, err := s.Grad(gs, vals[i])
		if err != nil {
			return Tensor64{}, nil, err
		}
		if !reached {
			gr, _ = spec.Zeros[spec.F64](spec.Shape(xs[i].Shape))
		}
		grads = append(grads, back(gr))
	}
	if e.perturb != nil {
		e.perturb(m, grads)
	}
	return back(y), grads, nil
}

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
		{"one ulp is within the bound", "mul", func(_ string, g []Tensor64) { g[0].Data[0] = ulps(g[0].Data[0], 1) },
			nil, nil, []string{OblVJP, OblAdjoint}},
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
