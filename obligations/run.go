package obligations

import (
	"errors"
	"fmt"
	"sort"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/internal/par"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// Result summarises one obligation of one primitive over many cases.
type Result struct {
	Op         string
	Obligation Obligation
	Cases      int            // instances decided (inconclusive ones excluded)
	Oracles    map[Oracle]int // how many cases each oracle decided, and how many were OracleInconclusive
	Worst      float64        // the largest measure seen (see Outcome)
	Failure    error          // the first failure (a *counterexample.Failure) or error, nil when the law held on every case
}

// OracleSummary prints the oracles used, e.g. "rat" or "rat+interval".
func (r *Result) OracleSummary() string {
	if len(r.Oracles) == 0 {
		return "-"
	}
	names := make([]string, 0, len(r.Oracles))
	for o := range r.Oracles {
		names = append(names, string(o))
	}
	sort.Strings(names)
	s := names[0]
	for _, n := range names[1:] {
		s += "+" + n
	}
	return s
}

// Holds reports whether the obligation held on every case and at least
// one case was decided (an obligation checked on no case does not hold).
func (r *Result) Holds() bool { return r.Failure == nil && r.Cases > 0 }

// ObligationsFor lists the obligations checked for a primitive: every
// primitive owes adjointness, linearity and zero preservation; every
// primitive with a derivative (not NoGrad) owes the derivative obligation
// (its JVP rule against the derivative of its forward rule: exactly over
// Dual[Rat] plus Clarke-set membership for exact primitives,
// CheckDerivativeExact, and by the interval oracle otherwise,
// CheckDerivative), since the other laws relate the JVP rule to the VJP
// rule and cannot see the same wrong derivative in both; every
// primitive owes interval enclosure (its forward rule over spec.Interval
// encloses its value at every point of an input box of every sign
// pattern, see CheckEnclosureOver); and every primitive owes the
// fast-path obligation (its F64 and F32 rules, scalar-specialised kernels
// included, bit-identical to the generic rule over the same scalar, see
// CheckFastPath).
func ObligationsFor(info *spec.OpInfo) []Obligation {
	obs := []Obligation{Adjointness, JVPLinearity, VJPLinearity, ZeroPreservation}
	if !info.NoGrad {
		obs = append(obs, Derivative)
	}
	return append(obs, FastPath, IntervalEnclosure)
}

// caseSeed derives the seed of case i of the case family label (a
// primitive's name, or a graph obligation's) from the run seed with
// spec.CaseSeed, so that a case depends on (seed, label, i) alone and can
// be replayed alone.
func caseSeed(seed uint64, label string, i int) uint64 { return spec.CaseSeed(seed, label, i) }

// Indices returns [0, 1, …, n−1]: the case list of a run of n cases.
func Indices(n int) []int {
	idx := make([]int, max(n, 0))
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// CheckOp runs every obligation of op on cases generated instances
// (cases 0 … cases−1). Generation is deterministic in seed. progress, if
// not nil, is called once per case (never concurrently).
func (r Registries) CheckOp(op string, cases int, seed uint64, progress func()) ([]*Result, error) {
	return r.CheckOpCases(op, Indices(cases), seed, progress)
}

// caseOutcome is what one case decided: per obligation (in ObligationsFor
// order) an outcome or an error.
type caseOutcome struct {
	o   []Outcome
	err []error
}

// CheckOpCases runs every obligation of op on the cases listed in idx:
// case i is drawn from spec.CaseSeed(seed, op, i) whatever else runs, so
// CheckOpCases(op, []int{i}, seed, nil) replays case i of a larger run
// alone. It is CheckOpsCases for one primitive.
func (r Registries) CheckOpCases(op string, idx []int, seed uint64, progress func()) ([]*Result, error) {
	res, err := r.CheckOpsCases([]string{op}, idx, seed, progress)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// CheckOpsCases runs every obligation of every primitive of ops on the
// cases listed in idx and returns, per primitive, one Result per
// obligation of ObligationsFor. The (primitive, case) pairs run on one
// pool of par.Workers() goroutines; their outcomes are merged in the
// order of ops and idx, so the results (counts, worst measure, the first
// failure) and the error (that of the first pair in that order whose case
// cannot be generated) are those of running the pairs one after another,
// for any GOMAXPROCS. progress, if not nil, is called once per pair,
// never concurrently.
func (r Registries) CheckOpsCases(ops []string, idx []int, seed uint64, progress func()) ([][]*Result, error) {
	type opPlan struct {
		obs []Obligation
		pos map[Obligation]int
	}
	plans := make([]opPlan, len(ops))
	out := make([][]*Result, len(ops))
	for j, op := range ops {
		info, err := spec.Info(op)
		if err != nil {
			return nil, err
		}
		obs := ObligationsFor(info)
		plans[j] = opPlan{obs: obs, pos: make(map[Obligation]int, len(obs))}
		out[j] = make([]*Result, len(obs))
		for k, ob := range obs {
			plans[j].pos[ob] = k
			out[j][k] = &Result{Op: op, Obligation: ob, Oracles: map[Oracle]int{}}
		}
	}
	n := len(idx)
	outcomes, err := par.MapErr(len(ops)*n, 0, func(k int) (caseOutcome, error) {
		j := k / n
		return r.checkOpCase(ops[j], plans[j].obs, plans[j].pos, seed, idx[k%n])
	}, progress)
	if err != nil {
		return nil, err
	}
	for k, co := range outcomes {
		for m, rr := range out[k/n] {
			if co.err[m] != nil {
				if rr.Failure == nil {
					rr.Failure = co.err[m]
				}
				continue
			}
			rr.Oracles[co.o[m].Oracle]++
			if co.o[m].Oracle == OracleInconclusive {
				continue // reported in Oracles, not a decided case
			}
			rr.Cases++
			if co.o[m].Measure > rr.Worst {
				rr.Worst = co.o[m].Measure
			}
		}
	}
	return out, nil
}

// checkOpCase decides every obligation of op on case i. The error return
// is for a case that cannot be generated at all.
func (r Registries) checkOpCase(op string, obs []Obligation, pos map[Obligation]int, seed uint64, i int) (caseOutcome, error) {
	co := caseOutcome{o: make([]Outcome, len(obs)), err: make([]error, len(obs))}
	record := func(ob Obligation, o Outcome, err error) {
		co.o[pos[ob]], co.err[pos[ob]] = o, annotate(err, seed, i)
	}
	src := casegen.NewRandSource(caseSeed(seed, op, i))
	inst, err := casegen.Generate(src, op)
	if err != nil {
		return co, err
	}
	shape, err := casegen.OutShape(inst)
	if err != nil {
		return co, fmt.Errorf("%s case %d: generator produced an ill-shaped instance: %w", op, i, err)
	}
	dxs, d := casegen.Tangents(src, inst, shape)
	o, err := r.CheckAdjointness(inst, dxs, d)
	record(Adjointness, o, err)
	v, dv := casegen.Tangents(src, inst, shape)
	a, b := casegen.GenRat(src, casegen.Any, "a"), casegen.GenRat(src, casegen.Any, "b")
	o1, o2, err := r.CheckLinearity(inst, a, b, dxs, v, d, dv)
	var f *counterexample.Failure
	switch {
	case err == nil:
		record(JVPLinearity, o1, nil)
		record(VJPLinearity, o2, nil)
	case errors.As(err, &f) && f.Law == string(VJPLinearity):
		record(JVPLinearity, o1, nil)
		record(VJPLinearity, o2, err)
	default:
		record(JVPLinearity, o1, err)
		record(VJPLinearity, o2, err)
	}
	o, err = r.CheckZeroPreservation(inst)
	record(ZeroPreservation, o, err)
	if _, ok := pos[Derivative]; ok {
		o, err = r.DerivativeFor(inst, dxs)
		record(Derivative, o, err)
	}
	o, err = r.CheckFastPath(inst, dxs, d)
	record(FastPath, o, err)
	// The box is drawn last, so the draws of the other obligations (and the
	// certificates that share their cases) do not depend on it.
	o, err = r.CheckEnclosure(inst, casegen.GenBox(src, inst))
	record(IntervalEnclosure, o, err)
	return co, nil
}

// CaseError wraps a failure with the case that produced it.
type CaseError struct {
	Seed uint64
	Case int
	Err  error
}

func (e *CaseError) Error() string { return fmt.Sprintf("case %d: %v", e.Case, e.Err) }
func (e *CaseError) Unwrap() error { return e.Err }

func annotate(err error, seed uint64, i int) error {
	if err == nil {
		return nil
	}
	return &CaseError{Seed: seed, Case: i, Err: err}
}
