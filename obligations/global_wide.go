package obligations

import (
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// The graph-level obligations of the all-primitives stream (casegen/graph_wide.go):
// the same laws as the first stream's, decided on wide graphs. Each has
// its own name, so its cases are drawn from spec.CaseSeed(seed, name, i)
// and the first stream's cases (and every certificate naming one) stay
// byte-identical.
const (
	// WideComposition is GraphComposition on wide typed graphs of exact
	// primitives (Partial ones included, at points where they are
	// defined).
	WideComposition Obligation = "graph-composition-all-ops"
	// WidePathSum is PathSum on small wide typed graphs of exact
	// primitives.
	WidePathSum Obligation = "path-sum-all-ops"
	// WideSweepAgreement is SweepAgreement on wide typed graphs of exact
	// primitives.
	WideSweepAgreement Obligation = "sweep-agreement-all-ops"
	// WideCrossPath is CrossPath on wide graphs: the eager tape against
	// the typed graph over Rat (exact primitives) or over F64 and F32
	// (zero-preserving ones), bit for bit, and diffrun.DiffIR on a wide IR graph.
	WideCrossPath Obligation = "cross-path-all-ops"
	// WideIntervalSoundness is IntervalSoundness on wide IR graphs of
	// exact primitives.
	WideIntervalSoundness Obligation = "interval-soundness-all-ops"
	// WideHessianSymmetry is HessianSymmetry on small wide typed graphs
	// of polynomial primitives (conv, conv_transpose, the average pools,
	// pad and gather among them) with a scalar result.
	WideHessianSymmetry Obligation = "hessian-symmetry-all-ops"
)

// WideObligations lists the obligations of the all-primitives stream, in
// the order CheckGlobal runs them (after GlobalObligations' first
// stream).
func WideObligations() []Obligation {
	return []Obligation{WideComposition, WidePathSum, WideSweepAgreement, WideCrossPath, WideIntervalSoundness, WideHessianSymmetry, RewriteAgreement}
}

// Generator options of the wide obligations.
var (
	wideExact = casegen.GraphOptions{Exact: true}
	widePath  = casegen.GraphOptions{Exact: true, MaxNodes: 8, MaxElements: 12, Inputs: 2}
	wideFloat = casegen.GraphOptions{ZeroPreserving: true}
	widePoly  = casegen.GraphOptions{Polynomial: true, ScalarOutput: true, MaxNodes: 8, MaxElements: 12, MaxRank: 3, Inputs: 2}
)

// checkWideCase decides one case of a wide obligation; handled is false
// for an obligation of the first stream.
func checkWideCase(reg *spec.Registry[spec.Rat], ob Obligation, src casegen.Source, i int) (handled, decided bool, err error) {
	lead := func(o casegen.GraphOptions) casegen.GraphOptions { o.Lead = i + 1; return o }
	switch ob {
	case WideComposition, WidePathSum, WideSweepAgreement:
		o := wideExact
		if ob == WidePathSum {
			o = widePath
		}
		tc, err := casegen.GenWideTyped(src, lead(o))
		if err != nil {
			return true, false, fmt.Errorf("wide generator: %w", err)
		}
		seedT := casegen.GenTensor(src, tc.Recipe.Shapes[tc.Recipe.Result], casegen.Any, "seed")
		switch ob {
		case WideComposition:
			dx := casegen.GenInputs(src, tc.Recipe.Ctx, "dx")
			init := make([]spec.Tensor[spec.Rat], tc.Recipe.Len())
			for i := range init {
				init[i] = casegen.GenTensor(src, tc.Recipe.Shapes[i], casegen.Any, fmt.Sprintf("init%d", i))
			}
			return true, true, CheckGraphComposition(reg, tc, dx, seedT, init)
		case WidePathSum:
			_, err := CheckPathSum(reg, tc, seedT, nil)
			if errors.Is(err, ErrTooManyPaths) {
				return true, false, nil
			}
			return true, true, err
		default:
			return true, true, CheckSweeps(reg, tc, seedT)
		}
	case WideCrossPath:
		o := wideExact
		float := src.Intn(2, "float") == 1
		if float {
			o = wideFloat
		}
		tc, err := casegen.GenWideTyped(src, lead(o))
		if err != nil {
			return true, false, fmt.Errorf("wide generator: %w", err)
		}
		seedT := casegen.GenTensor(src, tc.Recipe.Shapes[tc.Recipe.Result], casegen.Any, "seed")
		if float {
			if err := CheckTypedCrossPath(spec.Default[spec.F64](), tc, seedT); err != nil {
				return true, true, err
			}
			if err := CheckTypedCrossPath(spec.Default[spec.F32](), tc, seedT); err != nil {
				return true, true, err
			}
		} else if err := CheckTypedCrossPath(reg, tc, seedT); err != nil {
			return true, true, err
		}
		gc, err := casegen.GenWideGraph(src, lead(o))
		if err != nil {
			return true, false, fmt.Errorf("wide generator: %w", err)
		}
		rep, err := CheckIRCrossPath(gc, nil)
		if err != nil {
			return true, true, err
		}
		return true, true, rep.Err()
	case WideIntervalSoundness:
		gc, err := casegen.GenWideGraph(src, lead(wideExact))
		if err != nil {
			return true, false, fmt.Errorf("wide generator: %w", err)
		}
		if err := CheckIntervalSoundness(gc); err != nil {
			return true, true, err
		}
		return true, true, CheckIntervalBoxOver(DefaultIntervalAlgebra(nil), gc, casegen.GenGraphBox(src, gc))
	case WideHessianSymmetry:
		tc, err := casegen.GenWideTyped(src, lead(widePoly))
		if err != nil {
			return true, false, fmt.Errorf("wide generator: %w", err)
		}
		v, w := casegen.GenInputs(src, tc.Recipe.Ctx, "v"), casegen.GenInputs(src, tc.Recipe.Ctx, "w")
		return true, true, CheckHessian(reg, tc, v, w)
	case RewriteAgreement:
		d, err := checkRewriteCase(src)
		return true, d, err
	}
	return false, false, nil
}
