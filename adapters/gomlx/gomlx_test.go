package gomlx

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/tlcheck/tlcheck/adapters/harness"
	"github.com/tlcheck/tlcheck/spec"
)

// allCases are the shared cases and every adapter's extra ones (those
// added with this adapter among them), the list the table runs.
func allCases() []harness.Case { return harness.AllCases() }

func caseNamed(t *testing.T, name string) harness.Case {
	t.Helper()
	c, ok := harness.CaseNamed(name)
	if !ok {
		t.Fatalf("no case %s", name)
	}
	return c
}

func float64s(c harness.Case) ([]harness.Tensor64, harness.Tensor64) {
	xs := make([]harness.Tensor64, len(c.Xs))
	for i, x := range c.Xs {
		xs[i] = harness.Float64s(x)
	}
	return xs, harness.Float64s(c.Cot)
}

// run runs one case on the default machine and fails the test on an error.
func run(t *testing.T, e harness.Engine, c harness.Case, zeroCot bool) (harness.Tensor64, []harness.Tensor64) {
	t.Helper()
	xs, cot := float64s(c)
	if zeroCot {
		cot.Data = make([]float64, len(cot.Data))
	}
	y, g, err := e.Run(Machine, c.Graph, xs, cot)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	return y, g
}

// knownFindings are the rows (case, obligation) GoMLX fails, on both
// machines; each has its own regression test below.
var knownFindings = map[[2]string]string{
	{"dag_l2norm_zero", harness.OblPathSum}:          "TestFindingL2NormZero",
	{"dag_l2norm_zero", harness.OblZero}:             "TestFindingL2NormZero",
	{"dag_l2normalize_eps_zero", harness.OblPathSum}: "TestFindingL2NormalizeEpsZero",
	{"dag_l2normalize_eps_zero", harness.OblAdjoint}: "TestFindingL2NormalizeEpsZero",
	{"dag_l2normalize_eps_zero", harness.OblZero}:    "TestFindingL2NormalizeEpsZero",
	{"max_pool_tie", harness.OblVJP}:                 "TestFindingReduceMaxTie",
	{"max_pool_tie", harness.OblMass}:                "TestFindingReduceMaxTie",
}

// TestCases runs every shared and extra case on both machines: no finding
// but the known ones, each still reported on both machines; a case is
// skipped only for a conv (whose VJP simplego cannot execute) or a pool
// the adapter cannot map (padded, or windows that overlap), and the
// shared conv case is among them; the rows that differ from tlcheck's tie
// conventions are explained by GoMLX's declared ones (relu′(0) = 1,
// abs′(0) = 1).
func TestCases(t *testing.T) {
	rows, skipped := harness.Run(New(), allCases(), harness.Options{})
	const convWhy = "its VJP needs the backend op Reverse, which simplego does not implement"
	sawConv := false
	for _, s := range skipped {
		parts := strings.SplitN(s, ": ", 3) // case: op: reason
		if len(parts) != 3 {
			t.Errorf("skip %q", s)
			continue
		}
		name, op, reason := parts[0], parts[1], parts[2]
		sawConv = sawConv || name == "conv"
		switch {
		case op == "conv" && strings.Contains(reason, convWhy):
		case (op == "max_pool" || op == "avg_pool") && (strings.Contains(reason, "with padding is not mapped") || strings.Contains(reason, "maps only windows that tile the input")):
		case strings.Contains(reason, "is not mapped") || strings.Contains(reason, "not expressible"):
			// an op (or shape) of another adapter's extra cases that this
			// adapter does not map: skipped with Supports' (or Run's) reason
		default:
			t.Errorf("unexpected skip %s", s)
		}
	}
	if !sawConv {
		t.Errorf("conv not skipped: %v", skipped)
	}
	reported := map[[3]string]bool{}
	convs := map[string]int{}
	for _, r := range rows {
		switch r.Verdict {
		case harness.Fails:
			if _, ok := knownFindings[[2]string{r.Case, r.Obligation}]; !ok {
				t.Errorf("finding: %s %s %s: %s", r.Case, r.Machine, r.Obligation, r.Detail)
			}
			reported[[3]string{r.Case, r.Obligation, r.Machine}] = true
		case harness.ByConvention:
			convs[r.Case+"/"+r.Obligation]++
		case harness.Holds:
		default:
			// Inconclusive is allowed only where the registry itself says a
			// zero cotangent may meet a pole.
			// sqrt at 0 is singular (Case.Singular): not a verdict there.
			if r.Case != "sqrt_zero" || (r.Obligation != harness.OblVJP && r.Obligation != harness.OblZero) {
				t.Errorf("%s %s %s: %s %s", r.Case, r.Machine, r.Obligation, r.Verdict, r.Detail)
			}
		}
	}
	for k, test := range knownFindings {
		for _, m := range New().Machines() {
			if !reported[[3]string{k[0], k[1], m}] {
				t.Errorf("known finding %s/%s (%s) no longer reported on %s", k[0], k[1], test, m)
			}
		}
	}
	// By hand: relu's input has one zero and abs's too (element 2 of vA),
	// and in dag_shared_leaf x⊙w is 0 where w = 0 (element 3): each is a
	// kink where GoMLX's derivative 1 differs from tlcheck's 0; on two
	// machines.
	want := map[string]int{"relu/vjp": 2, "abs/vjp": 2, "dag_shared_leaf/path_sum": 2}
	if fmt.Sprint(convs) != fmt.Sprint(want) {
		t.Errorf("convention rows %v, want %v", convs, want)
	}
}

// TestFindingSqrtZero: GoMLX's sqrtVJP is v·(0.5/sqrt(x)) with no case for
// x = 0, so at sqrt's kink the gradient is c·(+Inf) = ±Inf (the registry:
// sqrt′(0) = 0, a valid subgradient of sqrt(max(x, 0)); +Inf is no real
// number), and for a zero cotangent 0·Inf = NaN where the registry says
// sqrt is zero-preserving: a masked-out element poisons the gradient.
// Case sqrt_zero: x = (0, 1/4, 0, 9/4, 1, 0), c = (3/4, −5/4, 1/2, 2, 1/4, −1).
func TestFindingSqrtZero(t *testing.T) {
	c := caseNamed(t, "sqrt_zero")
	_, g := run(t, New(), c, false)
	// By hand, x = (0, 1/4, 1, 9/4, 0, 4), c = (3/4, −5/4, 1/2, 2, 1/4, −1):
	// c/(2√x) at the positive points: (−5/4)/(2·1/2) = −5/4, (1/2)/2 = 1/4,
	// 2/(2·3/2) = 2/3, (−1)/(2·2) = −1/4; +Inf at the zeros (c > 0 there).
	if got := g[0].Data; !(math.IsInf(got[0], 1) && math.IsInf(got[4], 1) &&
		got[1] == -1.25 && got[2] == 0.25 && math.Abs(got[3]-2.0/3) <= 0x1p-52 && got[5] == -0.25) {
		t.Errorf("gradient %v, want (+Inf, −5/4, 1/4, 2/3, +Inf, −1/4)", got)
	}
	_, g = run(t, New(), c, true)
	for k, v := range g[0].Data {
		if zero := c.Xs[0].Data[k].IsZero(); zero != math.IsNaN(v) || (!zero && v != 0) {
			t.Errorf("zero cotangent: ∂/∂x[%d] = %v, want NaN exactly at the zeros of x, 0 elsewhere", k, v)
		}
	}
	// Not a verdict: sqrt has no derivative and no Clarke subdifferential
	// at 0 (Case.Singular), so the vjp and zero rows are inconclusive on
	// both machines, with GoMLX's +Inf and NaN in the detail.
	rows, _ := harness.Run(New(), []harness.Case{c}, harness.Options{})
	for _, o := range []string{harness.OblVJP, harness.OblZero} {
		n := 0
		for _, r := range rows {
			if r.Obligation == o && r.Verdict == harness.Inconclusive && (strings.Contains(r.Detail, "Inf") || strings.Contains(r.Detail, "NaN")) {
				n++
			}
		}
		if n != len(New().Machines()) {
			t.Errorf("%s inconclusive with GoMLX's value on %d machines: %v", o, n, rows)
		}
	}
}

// TestFindingL2NormZero: GoMLX's L2Norm(x) is Sqrt(ReduceSum(Square(x)))
// (pkg/core/graph/ops_util.go), the graph of case dag_l2norm_zero; at a
// zero row its gradient is 0.5/sqrt(0)·2x = Inf·0 = NaN for every
// cotangent, though 0 is a valid subgradient there (the registry's value:
// sqrt′(0) = 0) and every other row is right.
// Case dag_l2norm_zero: x = [[0, 0, 0], [1/4, −1/2, 1/2]], c = (3/4, −5/4).
func TestFindingL2NormZero(t *testing.T) {
	c := caseNamed(t, "dag_l2norm_zero")
	y, g := run(t, New(), c, false)
	if y.Data[0] != 0 || y.Data[1] != 0.75 {
		t.Errorf("norms %v, want (0, 3/4)", y.Data)
	}
	// By hand: row 1 gets c·x/‖x‖ = (−5/4)·(1/4, −1/2, 1/2)/(3/4) = (−5/12, 5/6, −5/6).
	want := []float64{math.NaN(), math.NaN(), math.NaN(), -5.0 / 12, 5.0 / 6, -5.0 / 6}
	for k, w := range want {
		v := g[0].Data[k]
		if math.IsNaN(w) != math.IsNaN(v) || (!math.IsNaN(w) && math.Abs(v-w) > 4*0x1p-52) {
			t.Errorf("∂/∂x[%d] = %v, want %v", k, v, w)
		}
	}
	_, g = run(t, New(), c, true)
	for k, v := range g[0].Data {
		if (k < 3) != math.IsNaN(v) || (k >= 3 && v != 0) {
			t.Errorf("zero cotangent: ∂/∂x[%d] = %v, want NaN on the zero row, 0 elsewhere", k, v)
		}
	}
	assertFails(t, c, harness.OblPathSum, harness.OblZero)
}

// TestFindingL2NormalizeEpsZero: GoMLX's L2NormalizeWithEpsilon(x, ε) =
// Div(x, L2Norm(x) + ε) (pkg/core/graph/ops_util.go) is differentiable at
// a zero row, with Jacobian I/ε (the ‖x‖ term is o(‖x‖)), yet its
// gradient there is NaN (for a zero cotangent too): L2Norm's sqrtVJP
// gives Inf·0. Both through the
// adapter (case dag_l2normalize_eps_zero: the same GoMLX ops, ε an input)
// and calling GoMLX's function itself.
// x = [[0, 0, 0], [1/4, −1/2, 1/2]], ε = 1/4, c = [[3/4, −5/4, 1/2], [1/4, 1/2, −3/4]].
func TestFindingL2NormalizeEpsZero(t *testing.T) {
	// By hand: row 0, c/ε = (3, −5, 2); row 1 (‖x‖ = 3/4, ‖x‖ + ε = 1,
	// x·c = −9/16): c − x·(x·c)/‖x‖ = c + (3/4)·x = (7/16, 1/8, −3/8).
	exact := []float64{3, -5, 2, 7.0 / 16, 1.0 / 8, -3.0 / 8}
	c := caseNamed(t, "dag_l2normalize_eps_zero")
	_, g := run(t, New(), c, false)
	check := func(what string, got []float64) {
		for k, w := range exact {
			if k < 3 && !math.IsNaN(got[k]) {
				t.Errorf("%s: ∂/∂x[%d] = %v: the NaN is gone (exact %v)", what, k, got[k], w)
			}
			if k >= 3 && math.Abs(got[k]-w) > 4*0x1p-52 {
				t.Errorf("%s: ∂/∂x[%d] = %v, want %v", what, k, got[k], w)
			}
		}
	}
	check("adapter", g[0].Data)
	_, g = run(t, New(), c, true)
	for k, v := range g[0].Data {
		if (k < 3) != math.IsNaN(v) || (k >= 3 && v != 0) {
			t.Errorf("zero cotangent: ∂/∂x[%d] = %v, want NaN on the zero row, 0 elsewhere", k, v)
		}
	}
	assertFails(t, c, harness.OblPathSum, harness.OblAdjoint, harness.OblZero)

	b, err := theBackend(Machine)
	if err != nil {
		t.Fatal(err)
	}
	exec, err := graph.NewExec(b, func(x, cot *graph.Node) *graph.Node {
		y := graph.L2NormalizeWithEpsilon(x, 0.25, -1)
		return graph.Gradient(graph.ReduceAllSum(graph.Mul(y, cot)), x)[0]
	})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	xs, cot := float64s(c)
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions(xs[0].Data, 2, 3), tensors.FromFlatDataAndDimensions(cot.Data, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tensors.CopyFlatData[float64](out[0])
	if err != nil {
		t.Fatal(err)
	}
	check("graph.L2NormalizeWithEpsilon", got)
}

// assertFails asserts the harness reports the case's obligations as
// failing on every machine.
func assertFails(t *testing.T, c harness.Case, obls ...string) {
	t.Helper()
	rows, _ := harness.Run(New(), []harness.Case{c}, harness.Options{})
	for _, obl := range obls {
		n := 0
		for _, r := range rows {
			if r.Obligation == obl && r.Verdict == harness.Fails {
				n++
			}
		}
		if n != len(New().Machines()) {
			t.Errorf("%s/%s: fails on %d machines, want %d", c.Name, obl, n, len(New().Machines()))
		}
	}
}

// TestConventions: each declared convention is what GoMLX computes, exactly
// — the registry's gradient of the convention's graph at the case's
// inputs (exact points: every primitive there is exact) equals the
// engine's, element by element — and at the ties the values derived by
// hand from minMaxVJP and absVJP: max gives c to x, min gives c to y,
// relu′(0) = abs′(0) = 1, clamp (Min(Max(x, lo), hi)) clamp′(lo) = 1 and
// clamp′(hi) = 0 (inside the Clarke interval [0, 1]; the harness's bound
// at clamp's bounds admits tlcheck's 0 too, so only this test tells them
// apart).
func TestConventions(t *testing.T) {
	by := map[string]harness.Convention{}
	for _, cv := range New().Conventions() {
		by[cv.Op] = cv
	}
	tests := []struct {
		kase string
		// tie: element index → wanted gradient per input, as multiples of
		// the cotangent there.
		tie map[int][]float64
	}{
		{"relu", map[int][]float64{2: {1}}},
		{"abs", map[int][]float64{2: {1}}},
		{"max_tie", map[int][]float64{1: {1, 0}, 5: {1, 0}}},
		{"min_tie", map[int][]float64{1: {0, 1}, 5: {0, 1}}},
		{"clamp", map[int][]float64{0: {1}, 1: {0}}},
	}
	for _, tc := range tests {
		t.Run(tc.kase, func(t *testing.T) {
			c := caseNamed(t, tc.kase)
			_, g := run(t, New(), c, false)
			for k, ws := range tc.tie {
				for i, w := range ws {
					if got, want := g[i].Data[k], w*c.Cot.Data[k].Float64(); got != want {
						t.Errorf("∂/∂x%d[%d] = %v, want %v", i, k, got, want)
					}
				}
			}
			cv, ok := by[c.Graph.Nodes[0].Op]
			if !ok {
				t.Fatalf("no convention for %s", c.Graph.Nodes[0].Op)
			}
			shapes, err := c.Graph.ValueShapes(c.Xs)
			if err != nil {
				t.Fatal(err)
			}
			exp := c.Graph.ExpandAt([]harness.Convention{cv}, shapes)
			if len(exp.Nodes) == len(c.Graph.Nodes) {
				t.Fatalf("the convention did not expand: %v", exp)
			}
			ref, err := harness.NewReference(exp, c.Xs, c.Cot, c.Tangents)
			if err != nil {
				t.Fatal(err)
			}
			for i := range ref.Grads {
				for k, en := range ref.Grads[i] {
					if en.Tight.Exact.Lo != en.Tight.Exact.Hi || en.Tight.Exact.Lo != g[i].Data[k] {
						t.Errorf("∂/∂x%d[%d] = %v (engine), convention graph %v", i, k, g[i].Data[k], en)
					}
				}
			}
		})
	}
}

// TestCoverage: at least 20 distinct registry primitives run through
// GoMLX, counted from the rows of the cases that were not skipped.
func TestCoverage(t *testing.T) {
	rows, _ := harness.Run(New(), harness.Cases(), harness.Options{})
	ops := map[string]bool{}
	for _, r := range rows {
		if r.Obligation == harness.OblForward && r.Verdict != harness.Fails {
			for _, op := range r.Ops {
				ops[op] = true
			}
		}
	}
	if len(ops) < 20 {
		t.Errorf("%d distinct ops: %v", len(ops), ops)
	}
	t.Logf("%d distinct ops", len(ops))
}

// faulty wraps the engine and edits the gradients it returns on machine
// only (every machine when only is "").
type faulty struct {
	harness.Engine
	edit func(g []harness.Tensor64)
	only string
}

func (f faulty) Run(m string, g harness.Graph, xs []harness.Tensor64, cot harness.Tensor64) (harness.Tensor64, []harness.Tensor64, error) {
	y, gs, err := f.Engine.Run(m, g, xs, cot)
	if err == nil && (f.only == "" || f.only == m) {
		f.edit(gs)
	}
	return y, gs, err
}

// TestPlantedFault: a gradient perturbed by 2³⁰ binary64 ulps, a flipped
// sign, a doubled tie and a fault on one machine only are each reported as
// failing by the harness on GoMLX's output (the checks are not vacuous on
// this adapter); unperturbed, the same obligations hold.
func TestPlantedFault(t *testing.T) {
	ulps := func(v float64, k uint64) float64 { return math.Float64frombits(math.Float64bits(v) + k) }
	tests := []struct {
		name, kase string
		edit       func(g []harness.Tensor64)
		fails      []string
		only       string // the one machine perturbed ("" = both)
	}{
		{"mul off by 2^30 ulps", "mul", func(g []harness.Tensor64) { g[0].Data[0] = ulps(g[0].Data[0], 1<<30) }, []string{harness.OblVJP, harness.OblAdjoint}, ""},
		// A transcendental's bound is that of binary32 with 4-ulp library
		// functions (harness.ULPs), about 2⁻¹⁸ relative here (3·10⁻⁶): 2³⁰ binary64
		// ulps (2⁻²² relative) are within it, 2³⁶ (2⁻¹⁶) are not.
		{"tanh off by 2^36 ulps", "tanh", func(g []harness.Tensor64) { g[0].Data[3] = ulps(g[0].Data[3], 1<<36) }, []string{harness.OblVJP}, ""},
		{"sign flipped in the MLP", "dag_mlp", func(g []harness.Tensor64) { g[1].Data[2] = -g[1].Data[2] }, []string{harness.OblPathSum, harness.OblAdjoint}, ""},
		{"max tie given to both", "max_tie", func(g []harness.Tensor64) { g[1].Data[1] = g[0].Data[1] }, []string{harness.OblMass}, ""},
		{"softmax gradient scaled", "softmax", func(g []harness.Tensor64) { g[0].Data[4] *= 1 + 0x1p-10 }, []string{harness.OblVJP}, ""},
		{"dotlarge machine off", "matmul", func(g []harness.Tensor64) { g[1].Data[3] = -g[1].Data[3] - 1 }, []string{harness.OblVJP, harness.OblMachines}, MachineDotLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := caseNamed(t, tc.kase)
			// The control: unperturbed, none of these obligations fails.
			want := len(New().Machines())
			if tc.only != "" {
				want = 1 // the perturbed machine's row, and the one machines row
			}
			for i, e := range []harness.Engine{New(), faulty{New(), tc.edit, tc.only}} {
				rows, _ := harness.Run(e, []harness.Case{c}, harness.Options{})
				planted := i == 1
				for _, obl := range tc.fails {
					n := 0
					for _, r := range rows {
						if r.Obligation == obl && r.Verdict == harness.Fails {
							n++
						}
					}
					if planted && n != want {
						t.Errorf("planted: %s fails on %d machines", obl, n)
					}
					if !planted && n != 0 {
						t.Errorf("control: %s fails", obl)
					}
				}
			}
		})
	}
}

// TestFindingReduceMaxTie: GoMLX's reduceMaxVJP (pkg/core/graph/
// rev_autodiff.go) sends the cotangent to every element equal to the
// maximum (NonNegativeIndicator(x − max)), so at a k-way tie the window's
// gradient has mass k·c: no valid subgradient (the Clarke subdifferential
// of a max is the convex hull of the tied unit vectors, weights summing
// to 1). max_pool is ReduceMax over the window axes here (simplego cannot
// run MaxPool's own VJP); global max pooling with ReduceMax is the same.
// Case max_pool_tie: x = [[1, 1, −1/2, 3/4], [1/4, 0, 3/4, −1/4]] (NCHW
// 1×1×2×4), 2×2 windows, stride 2, c = (3/4, −5/4): both windows tie.
func TestFindingReduceMaxTie(t *testing.T) {
	c := caseNamed(t, "max_pool_tie")
	y, g := run(t, New(), c, false)
	if y.Data[0] != 1 || y.Data[1] != 0.75 {
		t.Errorf("pool %v, want (1, 3/4)", y.Data)
	}
	// By hand from reduceMaxVJP: every tied maximum gets the whole c —
	// window 1 (elements 0, 1, 4, 5) ties at 1 in elements 0 and 1,
	// window 2 (elements 2, 3, 6, 7) at 3/4 in elements 3 and 6.
	want := []float64{0.75, 0.75, 0, -1.25, 0, 0, -1.25, 0}
	for k, w := range want {
		if g[0].Data[k] != w {
			t.Errorf("∂/∂x[%d] = %v, want %v", k, g[0].Data[k], w)
		}
	}
	// Mass per window: 2c where every valid subgradient has c.
	if m0, m1 := g[0].Data[0]+g[0].Data[1]+g[0].Data[4]+g[0].Data[5], g[0].Data[2]+g[0].Data[3]+g[0].Data[6]+g[0].Data[7]; m0 != 1.5 || m1 != -2.5 {
		t.Errorf("window masses %v, %v, want 2·(3/4), 2·(−5/4)", m0, m1)
	}
	assertFails(t, c, harness.OblVJP, harness.OblMass)

	// The same through GoMLX's ReduceAllMax directly (global max pooling):
	// max(1, 3, 3, 2) with cotangent 1/2; every valid subgradient has mass
	// 1/2 on the two 3s, GoMLX gives each 1/2 (mass 1).
	b, err := theBackend(Machine)
	if err != nil {
		t.Fatal(err)
	}
	exec, err := graph.NewExec(b, func(x *graph.Node) *graph.Node {
		loss := graph.MulScalar(graph.ReduceAllMax(x), 0.5)
		return graph.Gradient(loss, x)[0]
	})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions([]float64{1, 3, 3, 2}, 4))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tensors.CopyFlatData[float64](out[0]); err != nil || fmt.Sprint(got) != "[0 0.5 0.5 0]" {
		t.Errorf("ReduceAllMax gradient %v (%v), want [0 0.5 0.5 0] (the finding)", got, err)
	}
}

// TestSimplegoGaps: the primitives New refuses, and GoMLX's own MaxPool
// and MeanPool, still fail in simplego with the backend op named in gaps
// and nativeGaps (when GoMLX implements one, this test says so and the
// primitive can be mapped natively).
func TestSimplegoGaps(t *testing.T) {
	tests := []struct {
		kase, op, missing string
		refused           bool // New().Supports refuses it
	}{
		{"slice", "slice", nativeGaps["slice"], false},
		{"conv", "conv", gaps["conv"], true},
		{"max_pool_tie", "max_pool", nativeGaps["max_pool"], false},
		{"avg_pool", "avg_pool", nativeGaps["avg_pool"], false},
	}
	for _, tc := range tests {
		c := caseNamed(t, tc.kase)
		err := New().Supports(tc.op, c.Graph.Nodes[0].Attrs)
		if tc.refused != (err != nil) || (err != nil && !strings.Contains(err.Error(), tc.missing)) {
			t.Errorf("%s: Supports = %v", tc.op, err)
		}
		xs, cot := float64s(c)
		_, _, err = engine{native: true}.Run(Machine, c.Graph, xs, cot)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("op %q not implemented", tc.missing)) {
			t.Errorf("%s: simplego no longer refuses it (%v): map it natively", tc.op, err)
		}
	}
	// Overlapping windows have no ReduceMax mapping: refused, naming why.
	w := &spec.Window{Kernel: []int{2, 2}, Stride: []int{1, 1}, Pads: []int{0, 0, 0, 0}}
	if err := New().Supports("max_pool", &spec.Attrs{Window: w}); err == nil || !strings.Contains(err.Error(), "stride = kernel") {
		t.Errorf("overlapping max_pool: %v", err)
	}
}

// TestBadInput: bad graphs are errors naming the node, never panics.
func TestBadInput(t *testing.T) {
	v := harness.Tensor64{Shape: []int{3}, Data: []float64{1, 2, 3}}
	m := harness.Tensor64{Shape: []int{2, 2}, Data: []float64{1, 2, 3, 4}}
	tests := []struct {
		name    string
		machine string
		g       harness.Graph
		xs      []harness.Tensor64
		cot     harness.Tensor64
		want    string
	}{
		{"unknown op", Machine, harness.Graph{Inputs: 1, Nodes: []harness.Node{{Op: "frobnicate", Args: []int{0}}}}, []harness.Tensor64{v}, v, "node 0 (frobnicate)"},
		{"shape mismatch", Machine, harness.Graph{Inputs: 2, Nodes: []harness.Node{{Op: "matmul", Args: []int{0, 1}}}}, []harness.Tensor64{m, v}, m, "node 0 (matmul): while building op Dot()"},
		{"cotangent shape", Machine, harness.Graph{Inputs: 1, Nodes: []harness.Node{{Op: "neg", Args: []int{0}}}}, []harness.Tensor64{v}, m, "the loss Σ(y ⊙ cot)"},
		{"argument out of range", Machine, harness.Graph{Inputs: 1, Nodes: []harness.Node{{Op: "neg", Args: []int{3}}}}, []harness.Tensor64{v}, v, "node 0 (neg)"},
		{"wrong arity", Machine, harness.Graph{Inputs: 1, Nodes: []harness.Node{{Op: "add", Args: []int{0}}}}, []harness.Tensor64{v}, v, "node 0 (add)"},
		{"scale without C", Machine, harness.Graph{Inputs: 1, Nodes: []harness.Node{{Op: "scale", Args: []int{0}}}}, []harness.Tensor64{v}, v, "node 0 (scale)"},
		{"unknown machine", "tpu", harness.Graph{Inputs: 1, Nodes: []harness.Node{{Op: "neg", Args: []int{0}}}}, []harness.Tensor64{v}, v, `no machine "tpu"`},
		{"slice out of range", Machine, harness.Graph{Inputs: 1, Nodes: []harness.Node{{Op: "slice", Attrs: &spec.Attrs{Axis: 0, Start: 2, End: 5}, Args: []int{0}}}}, []harness.Tensor64{v}, v, "node 0 (slice): slice: [2, 5) on an axis of 3"},
		{"slice axis", Machine, harness.Graph{Inputs: 1, Nodes: []harness.Node{{Op: "slice", Attrs: &spec.Attrs{Axis: 1, Start: 0, End: 1}, Args: []int{0}}}}, []harness.Tensor64{v}, v, "axis 1 out of range for rank 1"},
		{"pool without window", Machine, harness.Graph{Inputs: 1, Nodes: []harness.Node{{Op: "max_pool", Args: []int{0}}}}, []harness.Tensor64{v}, v, "node 0 (max_pool): max_pool without a window"},
		{"pool window not tiling", Machine, harness.Graph{Inputs: 1, Nodes: []harness.Node{{Op: "avg_pool", Attrs: &spec.Attrs{Window: &spec.Window{Kernel: []int{2}, Stride: []int{2}}}, Args: []int{0}}}},
			[]harness.Tensor64{{Shape: []int{1, 1, 3}, Data: []float64{1, 2, 3}}}, v, "does not tile the input"},
		{"input count", Machine, harness.Graph{Inputs: 2, Nodes: []harness.Node{{Op: "add", Args: []int{0, 1}}}}, []harness.Tensor64{v}, v, "1 inputs for a graph of 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := New().Run(tc.machine, tc.g, tc.xs, tc.cot)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to name %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		op string
		a  *spec.Attrs
	}{{"frobnicate", nil}, {"scale", nil}, {"clamp", &spec.Attrs{}}, {"conv", &spec.Attrs{}}} {
		if err := New().Supports(tc.op, tc.a); err == nil {
			t.Errorf("Supports(%s, %v) = nil", tc.op, tc.a)
		}
	}
}

// BenchmarkCases is the whole check of GoMLX: every case on both machines,
// each compiled and run by GoMLX, judged by the harness.
func BenchmarkCases(b *testing.B) {
	cs := allCases()
	b.ReportAllocs()
	for b.Loop() {
		harness.Run(New(), cs, harness.Options{})
	}
}

// BenchmarkRun is one GoMLX compile-and-run of the two-layer perceptron
// case with its gradients (the adapter's cost without the harness).
func BenchmarkRun(b *testing.B) {
	var c harness.Case
	for _, k := range allCases() {
		if k.Name == "dag_mlp" {
			c = k
		}
	}
	xs, cot := float64s(c)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := New().Run(Machine, c.Graph, xs, cot); err != nil {
			b.Fatal(err)
		}
	}
}
