package obligations

import (
	"errors"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// The global obligations hold on the reference rules over many seeded
// graphs (the rapid harnesses in rapidtests/ draw and shrink the same
// generators).
func TestGlobalObligationsHold(t *testing.T) {
	const seeds = 300
	exact := casegen.GraphOptions{Exact: true, MaxNodes: 12}
	small := casegen.GraphOptions{Exact: true, MaxNodes: 8, MaxElements: 4, MaxRank: 2, MaxExtent: 2, Inputs: 2}
	poly := casegen.GraphOptions{Polynomial: true, ScalarOutput: true, MaxNodes: 8, MaxElements: 4, MaxRank: 2, Inputs: 2}
	for seed := uint64(0); seed < seeds; seed++ {
		src := casegen.NewRandSource(seed)
		tc, err := casegen.GenTyped(src, exact)
		if err != nil {
			t.Fatal(err)
		}
		dx := casegen.GenInputs(src, tc.Recipe.Ctx, "dx")
		sd := casegen.GenTensor(src, tc.Recipe.Shapes[tc.Recipe.Result], casegen.Any, "seed")
		init := casegen.GenInputs(src, tc.Recipe.Shapes, "init")
		if err := CheckGraphComposition(nil, tc, dx, sd, init); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := CheckSweeps(nil, tc, sd); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := CheckTypedCrossPath[spec.Rat](nil, tc, sd); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := CheckTypedCrossPath[spec.F32](nil, tc, sd); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		zp := exact
		zp.ZeroPreserving = true
		tz, _ := casegen.GenTyped(src, zp)
		if err := CheckSingularSweep(tz, src.Intn(100, "anchor")); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		ts, _ := casegen.GenTyped(src, small)
		if _, err := CheckPathSum(nil, ts, casegen.GenTensor(src, ts.Recipe.Shapes[ts.Recipe.Result], casegen.Any, "seed"), nil); err != nil && !errors.Is(err, ErrTooManyPaths) {
			t.Fatalf("seed %d: %v", seed, err)
		}
		tp, _ := casegen.GenTyped(src, poly)
		v, w := casegen.GenInputs(src, tp.Recipe.Ctx, "v"), casegen.GenInputs(src, tp.Recipe.Ctx, "w")
		if err := CheckHessian(nil, tp, v, w); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		gc, _ := casegen.GenGraph(src, exact)
		if err := CheckIntervalSoundness(gc); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// A sign flip in mul's VJP is caught by graph composition and localized
// to a mul node.
func TestGraphCompositionCatchesSignFlip(t *testing.T) {
	reg := spec.New[spec.Rat]()
	p, _ := reg.Lookup("mul")
	bad, orig := *p, p.VJP
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		gs, err := orig(a, xs, y, dy)
		if err == nil {
			gs[0] = spec.NegT(gs[0])
		}
		return gs, err
	}
	reg.Override(&bad)
	for seed := uint64(0); seed < 200; seed++ {
		src := casegen.NewRandSource(seed)
		tc, _ := casegen.GenTyped(src, casegen.GraphOptions{Exact: true, MaxNodes: 6, Ops: []string{"add", "mul"}})
		dx := casegen.GenInputs(src, tc.Recipe.Ctx, "dx")
		sd := casegen.GenTensor(src, tc.Recipe.Shapes[tc.Recipe.Result], casegen.Any, "seed")
		err := CheckGraphComposition(reg, tc, dx, sd, nil)
		var f *counterexample.Failure
		if errors.As(err, &f) {
			if f.Op != "mul" || f.Element < 0 {
				t.Fatalf("failure not localized to a mul element: %v", err)
			}
			if !strings.Contains(err.Error(), "graph-composition fails at node") {
				t.Fatalf("message: %v", err)
			}
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the sign flip was never caught")
}

// Cross-path agreement on generated IR graphs: every path and scalar of
// DiffIR agrees, and the comparisons that apply actually ran.
func TestIRCrossPathHolds(t *testing.T) {
	for _, o := range []casegen.GraphOptions{{Exact: true, MaxNodes: 12}, {ZeroPreserving: true, MaxNodes: 12}} {
		for seed := uint64(0); seed < 200; seed++ {
			gc, err := casegen.GraphSeed(seed, o)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := CheckIRCrossPath(gc, nil)
			if err != nil {
				t.Fatalf("seed %d: %v\nskipped: %v", seed, err, rep)
			}
			if o.Exact {
				kinds := map[string]bool{}
				for _, c := range rep.Checks {
					kinds[c.Scalar+"/"+c.What+"/"+c.B] = true
				}
				for _, k := range []string{"rat/forward/forward-graph", "rat/forward/typed-graph", "rat/forward/tape", "rat/gradient/typed-graph",
					"rat/context-gradient/backprop-ctx", "binary32~f32/forward/f32", "interval/containment/interval", "f32/gradient/typed-graph"} {
					if !kinds[k] {
						t.Fatalf("seed %d: comparison %s did not run; skipped %v", seed, k, rep.Skipped)
					}
				}
			}
		}
	}
}
