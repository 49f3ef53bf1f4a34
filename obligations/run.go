package obligations

import (
	"errors"
	"fmt"
	"sort"

	"github.com/tlcheck/tlcheck/spec"
)

// Result summarises one obligation of one primitive over many cases.
type Result struct {
	Op         string
	Obligation Obligation
	Cases      int            // instances decided (inconclusive ones excluded)
	Oracles    map[Oracle]int // how many cases each oracle decided, and how many were OracleInconclusive
	Worst      float64        // the largest measure seen (see Outcome)
	Failure    error          // the first failure (a *Failure) or error, nil when the law held on every case
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
// primitive owes adjointness, linearity and zero preservation; primitives
// without exact rational semantics also owe the derivative obligation
// (their JVP rule against the derivative of their forward rule).
func ObligationsFor(info *spec.OpInfo) []Obligation {
	obs := []Obligation{Adjointness, JVPLinearity, VJPLinearity, ZeroPreservation}
	if !info.Exact && !info.NoGrad {
		obs = append(obs, Derivative)
	}
	return obs
}

// caseSeed derives the seed of case i of op from the run seed, so that a
// case can be replayed alone.
func caseSeed(seed uint64, op string, i int) uint64 {
	h := seed
	for _, c := range op {
		h = spec.SplitMix64(h ^ uint64(c))
	}
	return spec.SplitMix64(h + uint64(i))
}

// CheckOp runs every obligation of op on cases generated instances.
// Generation is deterministic in seed. progress, if not nil, is called
// once per case.
func (r Registries) CheckOp(op string, cases int, seed uint64, progress func()) ([]*Result, error) {
	info, err := spec.Info(op)
	if err != nil {
		return nil, err
	}
	obs := ObligationsFor(info)
	res := make(map[Obligation]*Result, len(obs))
	out := make([]*Result, len(obs))
	for i, ob := range obs {
		res[ob] = &Result{Op: op, Obligation: ob, Oracles: map[Oracle]int{}}
		out[i] = res[ob]
	}
	record := func(ob Obligation, o Outcome, err error) {
		rr := res[ob]
		if err != nil {
			if rr.Failure == nil {
				rr.Failure = err
			}
			return
		}
		rr.Oracles[o.Oracle]++
		if o.Oracle == OracleInconclusive {
			return // reported in Oracles, not a decided case
		}
		rr.Cases++
		if o.Measure > rr.Worst {
			rr.Worst = o.Measure
		}
	}
	for i := 0; i < cases; i++ {
		src := NewRandSource(caseSeed(seed, op, i))
		inst, err := Generate(src, op)
		if err != nil {
			return nil, err
		}
		shape, err := OutShape(inst)
		if err != nil {
			return nil, fmt.Errorf("%s case %d: generator produced an ill-shaped instance: %w", op, i, err)
		}
		dxs, d := Tangents(src, inst, shape)
		o, err := r.CheckAdjointness(inst, dxs, d)
		record(Adjointness, o, annotate(err, seed, i))
		v, dv := Tangents(src, inst, shape)
		a, b := GenRat(src, Any, "a"), GenRat(src, Any, "b")
		o1, o2, err := r.CheckLinearity(inst, a, b, dxs, v, d, dv)
		var f *Failure
		switch {
		case err == nil:
			record(JVPLinearity, o1, nil)
			record(VJPLinearity, o2, nil)
		case errors.As(err, &f) && f.Obligation == VJPLinearity:
			record(JVPLinearity, o1, nil)
			record(VJPLinearity, o2, annotate(err, seed, i))
		default:
			record(JVPLinearity, o1, annotate(err, seed, i))
			record(VJPLinearity, o2, annotate(err, seed, i))
		}
		o, err = r.CheckZeroPreservation(inst)
		record(ZeroPreservation, o, annotate(err, seed, i))
		if _, ok := res[Derivative]; ok {
			o, err = r.CheckDerivative(inst, dxs)
			record(Derivative, o, annotate(err, seed, i))
		}
		if progress != nil {
			progress()
		}
	}
	return out, nil
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
