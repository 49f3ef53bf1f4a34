package obligations

import (
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/internal/par"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// globalResultOpTag is the Op of CheckGlobal's results.
const globalResultOpTag = "graphs"

// Generator options of the global obligations outside the rapid harness
// (the same as rapidtests uses).
var (
	globalExact = casegen.GraphOptions{Exact: true}
	globalPath  = casegen.GraphOptions{Exact: true, MaxNodes: 10, MaxElements: 4, MaxRank: 2, MaxExtent: 2, Inputs: 2}
	globalPoly  = casegen.GraphOptions{Polynomial: true, ScalarOutput: true, MaxNodes: 12, MaxElements: 6, MaxRank: 2, Inputs: 2}
	globalFloat = casegen.GraphOptions{ZeroPreserving: true}
)

// GlobalObligations lists the graph-level obligations CheckGlobal decides:
// the first stream's, then the all-primitives stream's (WideObligations).
func GlobalObligations() []Obligation {
	return append([]Obligation{GraphComposition, PathSum, SweepAgreement, SweepSingular, CrossPath, IntervalSoundness, HessianSymmetry},
		WideObligations()...)
}

// CheckGlobal decides every graph-level obligation on n random graphs
// each (generation deterministic in seed), with the rules of reg (nil:
// the reference registry). Each result's Op is "graphs"; its Failure is
// a *CaseError naming the case and wrapping the counterexample. progress,
// if not nil, is called once per graph case, never concurrently.
func CheckGlobal(reg *spec.Registry[spec.Rat], n int, seed uint64, progress func()) []*Result {
	return CheckGlobalCases(reg, GlobalObligations(), Indices(n), seed, progress)
}

// CheckGlobalCases decides the graph-level obligations obs on the graph
// cases listed in idx: case i of obligation ob is drawn from
// spec.CaseSeed(seed, ob, i) whatever else runs, so a one-element idx
// replays that case alone. The (obligation, case) pairs run on a pool of
// par.Workers() goroutines and are merged in the order of obs and idx, so
// the results are those of a sequential run for any GOMAXPROCS.
func CheckGlobalCases(reg *spec.Registry[spec.Rat], obs []Obligation, idx []int, seed uint64, progress func()) []*Result {
	type caseOut struct {
		decided bool
		err     error
	}
	n := len(idx)
	outs := par.Map(len(obs)*n, 0, func(k int) caseOut {
		d, err := checkGlobalCase(reg, obs[k/n], caseSeed(seed, string(obs[k/n]), idx[k%n]), idx[k%n])
		return caseOut{d, err}
	}, progress)
	var out []*Result
	for j, ob := range obs {
		r := &Result{Op: globalResultOpTag, Obligation: ob, Oracles: map[Oracle]int{}}
		for k, i := range idx {
			c := outs[j*n+k]
			if c.err != nil {
				if r.Failure == nil {
					r.Failure = &CaseError{Seed: seed, Case: i, Err: c.err}
				}
				continue
			}
			if c.decided {
				r.Cases++
				r.Oracles[globalOracle(ob)]++
			}
		}
		out = append(out, r)
	}
	return out
}

// checkGlobalCase decides case i (seeded by cs); decided is false when the case was
// legitimately skipped (too many paths to enumerate).
func checkGlobalCase(reg *spec.Registry[spec.Rat], ob Obligation, cs uint64, i int) (bool, error) {
	src := casegen.NewRandSource(cs)
	if handled, decided, err := checkWideCase(reg, ob, src, i); handled {
		return decided, err
	}
	switch ob {
	case GraphComposition, PathSum, SweepAgreement, HessianSymmetry:
		o := globalExact
		switch ob {
		case PathSum:
			o = globalPath
		case HessianSymmetry:
			o = globalPoly
		}
		tc, err := casegen.GenTyped(src, o)
		if err != nil {
			return false, fmt.Errorf("generator: %w", err)
		}
		seedT := casegen.GenTensor(src, tc.Recipe.Shapes[tc.Recipe.Result], casegen.Any, "seed")
		switch ob {
		case GraphComposition:
			dx := casegen.GenInputs(src, tc.Recipe.Ctx, "dx")
			init := make([]spec.Tensor[spec.Rat], tc.Recipe.Len())
			for i := range init {
				init[i] = casegen.GenTensor(src, tc.Recipe.Shapes[i], casegen.Any, fmt.Sprintf("init%d", i))
			}
			return true, CheckGraphComposition(reg, tc, dx, seedT, init)
		case PathSum:
			_, err := CheckPathSum(reg, tc, seedT, nil)
			if errors.Is(err, ErrTooManyPaths) {
				return false, nil
			}
			return true, err
		case SweepAgreement:
			return true, CheckSweeps(reg, tc, seedT)
		default:
			v, w := casegen.GenInputs(src, tc.Recipe.Ctx, "v"), casegen.GenInputs(src, tc.Recipe.Ctx, "w")
			return true, CheckHessian(reg, tc, v, w)
		}
	case SweepSingular:
		o := globalExact
		o.ZeroPreserving = true
		tc, err := casegen.GenTyped(src, o)
		if err != nil {
			return false, fmt.Errorf("generator: %w", err)
		}
		return true, CheckSingularSweep(tc, src.Intn(64, "anchor"))
	case CrossPath:
		o := globalExact
		if src.Intn(2, "float") == 1 {
			o = globalFloat
		}
		gc, err := casegen.GenGraph(src, o)
		if err != nil {
			return false, fmt.Errorf("generator: %w", err)
		}
		rep, err := CheckIRCrossPath(gc, nil)
		if err != nil {
			return true, err
		}
		return true, rep.Err()
	case IntervalSoundness:
		gc, err := casegen.GenGraph(src, globalExact)
		if err != nil {
			return false, fmt.Errorf("generator: %w", err)
		}
		if err := CheckIntervalSoundness(gc); err != nil {
			return true, err
		}
		// Then per node on a box of every sign pattern around the input
		// (drawn after the graph, so the graph is that of the point check).
		if err := CheckIntervalBoxOver(DefaultIntervalAlgebra(nil), gc, casegen.GenGraphBox(src, gc)); err != nil {
			return true, err
		}
		// And on a graph of zero-preserving primitives (exp, tanh,
		// softmax, …), where the box is judged against the point's own
		// enclosure.
		fc, err := casegen.GenGraph(src, globalFloat)
		if err != nil {
			return false, fmt.Errorf("generator: %w", err)
		}
		return true, CheckIntervalBoxOver(DefaultIntervalAlgebra(nil), fc, casegen.GenGraphBox(src, fc))
	}
	return false, fmt.Errorf("unknown global obligation %q", ob)
}

// globalOracle names how a global obligation is decided.
func globalOracle(ob Obligation) Oracle {
	switch ob {
	case SweepSingular:
		return "f32"
	case WideCrossPath:
		return "rat|f64+f32+ir"
	case RewriteAgreement:
		return "rat|interval|bits"
	case CrossPath:
		return "rat+f32+f64+binary32"
	case IntervalSoundness, WideIntervalSoundness:
		return OracleInterval
	}
	return OracleRat
}
