package rapidtests

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// Generator options of the global properties, sized so that the whole
// package runs in well under three minutes on two cores at rapid's default
// 100 cases per test.
var (
	// exactGraphs: exact primitives, 1 to 30 nodes.
	exactGraphs = casegen.GraphOptions{Exact: true}
	// pathGraphs: small exact graphs whose paths can be enumerated one by
	// one: up to 8 nodes of at most 4 elements.
	pathGraphs = casegen.GraphOptions{Exact: true, MaxNodes: 10, MaxElements: 4, MaxRank: 2, MaxExtent: 2, Inputs: 2}
	// polyGraphs: polynomial programs with a scalar result, for Hessians.
	polyGraphs = casegen.GraphOptions{Polynomial: true, ScalarOutput: true, MaxNodes: 12, MaxElements: 6, MaxRank: 2, Inputs: 2}
	// irExact and irFloat: IR graphs of 1 to 30 nodes, exact or
	// zero-preserving (over the float scalars).
	irExact = casegen.GraphOptions{Exact: true}
	irFloat = casegen.GraphOptions{ZeroPreserving: true}
)

// graphSource is the rapid source of the graph generators: it also
// implements casegen.Grouper, so that each generated node is one
// standalone rapid group and the shrinker can delete a node as a whole.
type graphSource struct{ source }

// Intn draws from [0, n) even when n is 1, so that every choice occupies
// the same place in rapid's bitstream whatever the number of candidates:
// deleting a node while shrinking then leaves the draws after it aligned.
func (s graphSource) Intn(n int, label string) int {
	return rapid.IntRange(0, max(n, 1)-1).Draw(s.t, label)
}

// Group runs f as one rapid draw, making its draws one group.
func (s graphSource) Group(label string, f func()) {
	rapid.Custom(func(*rapid.T) struct{} { f(); return struct{}{} }).Draw(s.t, label)
}

func seedFor(src casegen.Source, rc *casegen.Recipe) spec.Tensor[spec.Rat] {
	return casegen.GenTensor(src, rc.Shapes[rc.Result], casegen.Any, "seed")
}

// irReplay prints an IR counterexample as the three documents `tlcheck
// diff` reads and the command that replays it.
func irReplay(gc *casegen.GraphCase) string {
	g, err1 := irsem.EncodeGraph(gc.Graph)
	p, err2 := irsem.EncodePayload(gc.Payload)
	x, err3 := irsem.EncodeTensor(gc.Input)
	if err := errors.Join(err1, err2, err3); err != nil {
		return "replay: " + err.Error()
	}
	return fmt.Sprintf("replay: save the documents below as g.json, p.json and x.json, then run\n"+
		"  tlcheck diff --graph g.json --payload p.json --input x.json\n"+
		"g.json:\n%sp.json:\n%sx.json:\n%s", g, p, x)
}

// compositionProperty draws a typed graph over the given rules, tangents,
// a seed and a full cotangent array, and checks graph composition.
func compositionProperty(reg *spec.Registry[spec.Rat], o casegen.GraphOptions, last **casegen.Recipe) func(*rapid.T) {
	return func(t *rapid.T) {
		src := graphSource{source{t}}
		tc, err := casegen.GenTyped(src, o)
		if err != nil {
			t.Fatal(err)
		}
		dx := casegen.GenInputs(src, tc.Recipe.Ctx, "dx")
		sd := seedFor(src, tc.Recipe)
		// Half the cases also check the every-node sweep from a full
		// cotangent array (drawn from the last entry back); the seed-only
		// law is choice 0, so shrinking prefers it.
		var init []spec.Tensor[spec.Rat]
		if src.Intn(2, "full") == 1 {
			init = make([]spec.Tensor[spec.Rat], tc.Recipe.Len())
			for i := len(init) - 1; i >= 0; i-- {
				init[i] = casegen.GenTensor(src, tc.Recipe.Shapes[i], casegen.Any, fmt.Sprintf("init%d", i))
			}
		}
		if err := obligations.CheckGraphComposition(reg, tc, dx, sd, init); err != nil {
			if last != nil {
				*last = tc.Recipe
			}
			t.Fatalf("%v", err)
		}
	}
}

// TestGraphComposition discharges property 3 (graph composition): on
// random typed graphs over exact primitives (fan-out, shared branches,
// duplicate parent slots, detach, reductions, matmul, linear, kinks),
// dotList(jvpCtx(dx), seed) = dotList(dx, backpropCtx(seed)) exactly over
// Rat, and likewise for the every-node sweep from a full cotangent array.
// A failure names the first node (and element) whose local law breaks.
func TestGraphComposition(t *testing.T) {
	rapid.Check(t, compositionProperty(nil, exactGraphs, nil))
}

// pathSumProperty checks path-sum accumulation with the given rules and
// sweep.
func pathSumProperty(reg *spec.Registry[spec.Rat], sweep obligations.Sweep, last **casegen.Recipe) func(*rapid.T) {
	return func(t *rapid.T) {
		src := graphSource{source{t}}
		tc, err := casegen.GenTyped(src, pathGraphs)
		if err != nil {
			t.Fatal(err)
		}
		n, err := obligations.CheckPathSum(reg, tc, seedFor(src, tc.Recipe), sweep)
		if errors.Is(err, obligations.ErrTooManyPaths) {
			t.Skip("too many paths")
		}
		if err != nil {
			if last != nil {
				*last = tc.Recipe
			}
			t.Fatalf("%v", err)
		}
		t.Logf("%d paths", n)
	}
}

// TestPathSum discharges property 4 (path-sum accumulation): on random
// small DAGs recorded eagerly on a tape, the tape's cotangent of every
// node equals the sum, over every path from the output to it enumerated
// explicitly, of the seed times the product of the local Jacobians
// (read off the JVP rules) along the path — duplicate parent slots are
// separate paths, detach cuts paths — and a node is reached exactly when a
// path ends there.
func TestPathSum(t *testing.T) {
	rapid.Check(t, pathSumProperty(nil, nil, nil))
}

// TestSweepAgreement discharges property 5a: on zero-preserving tapes
// over Rat, the dense sweep that skips unreached nodes (dense-all) equals
// the sweep that runs every node's VJP (from-all), node by node, and the
// typed graph's skipping sweep equals BackpropAllCtx.
func TestSweepAgreement(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		src := graphSource{source{t}}
		o := exactGraphs
		o.ZeroPreserving = true
		tc, err := casegen.GenTyped(src, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := obligations.CheckSweeps(nil, tc, seedFor(src, tc.Recipe)); err != nil {
			t.Fatalf("%v", err)
		}
	})
}

// TestSweepSingularF32 discharges property 5b, the deterministic
// demonstration generalised: for every random zero-preserving graph over
// F32 with a disconnected singular branch inv(a − a) hung off any entry a
// that requires a gradient, the every-node sweep produces NaN at a − a and
// at a (0·∞ from inv's VJP run with a synthetic zero cotangent), the
// skipping sweep produces no NaN anywhere, and the two agree off the
// branch's ancestors.
func TestSweepSingularF32(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		src := graphSource{source{t}}
		o := exactGraphs
		o.ZeroPreserving = true
		tc, err := casegen.GenTyped(src, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := obligations.CheckSingularSweep(tc, src.Intn(64, "anchor")); err != nil {
			t.Fatalf("%v", err)
		}
	})
}

// TestCrossPath discharges property 6 (cross-path agreement). On random
// IR graphs of 1–30 nodes: forward values of ir (DenoteAll), the forward
// graph, irgrad's typed graph and irgrad's eager tape agree node by node
// with == over Rat and bit for bit over F32, F64 and Binary32; gradients
// of the tape and the typed graph agree node by node; the cotangents of
// the input and every payload parameter agree along every differentiation
// path; Binary32 agrees with F32 bit for bit (same reduction orders); and
// the exact values lie in their intervals. On random typed recipes the
// eager tape and the typed graph agree on values and gradients over Rat
// and F32.
func TestCrossPath(t *testing.T) {
	for _, c := range []struct {
		name string
		o    casegen.GraphOptions
	}{{"ir-exact", irExact}, {"ir-float", irFloat}} {
		t.Run(c.name, rapid.MakeCheck(func(t *rapid.T) {
			src := graphSource{source{t}}
			gc, err := casegen.GenGraph(src, c.o)
			if err != nil {
				t.Fatal(err)
			}
			out := gc.Graph.Nodes[gc.Graph.OutputID].Shape
			sd := casegen.GenTensor(src, out, casegen.Any, "seed")
			if _, err := obligations.CheckIRCrossPath(gc, &sd); err != nil {
				t.Fatalf("%v\n%s", err, irReplay(gc))
			}
		}))
	}
	t.Run("typed", rapid.MakeCheck(func(t *rapid.T) {
		src := graphSource{source{t}}
		tc, err := casegen.GenTyped(src, exactGraphs)
		if err != nil {
			t.Fatal(err)
		}
		sd := seedFor(src, tc.Recipe)
		if err := obligations.CheckTypedCrossPath[spec.Rat](nil, tc, sd); err != nil {
			t.Fatalf("%v", err)
		}
		if err := obligations.CheckTypedCrossPath[spec.F32](nil, tc, sd); err != nil {
			t.Fatalf("%v", err)
		}
	}))
}

// TestIntervalSoundness discharges property 7: on random exact IR graphs,
// the exact Rat value of every node lies inside the Interval result of
// the same graph (irsem.DenoteAll over both scalars), element by element.
func TestIntervalSoundness(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gc, err := casegen.GenGraph(graphSource{source{t}}, irExact)
		if err != nil {
			t.Fatal(err)
		}
		if err := obligations.CheckIntervalSoundness(gc); err != nil {
			t.Fatalf("%v\n%s", err, irReplay(gc))
		}
	})
}

// TestHessianSymmetry discharges property 8 (higher order): the
// forward-over-reverse Hessian of a random polynomial program is exactly
// symmetric over Rat, ⟨Hv, w⟩ = ⟨v, Hw⟩, and the Hessian-vector product
// agrees with the assembled Hessian.
func TestHessianSymmetry(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		src := graphSource{source{t}}
		tc, err := casegen.GenTyped(src, polyGraphs)
		if err != nil {
			t.Fatal(err)
		}
		v := casegen.GenInputs(src, tc.Recipe.Ctx, "v")
		w := casegen.GenInputs(src, tc.Recipe.Ctx, "w")
		if err := obligations.CheckHessian(nil, tc, v, w); err != nil {
			t.Fatalf("%v", err)
		}
	})
}

// graphLines counts the entries of the first graph printed in a failure
// message.
func graphLines(out string) int {
	_, g, ok := strings.Cut(out, "graph:\n")
	if !ok {
		return 0
	}
	n := 0
	for _, l := range strings.Split(g, "\n") {
		if !strings.Contains(l, " -> ") {
			break
		}
		n++
	}
	return n
}
