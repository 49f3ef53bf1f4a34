package obligations

import "github.com/tlcheck/tlcheck/spec"

// Suite says what a check run covers: the local obligations of some
// primitives and the graph-level ones, on numbered cases.
type Suite struct {
	// Ops are the primitives whose local obligations run.
	Ops []string
	// Cases is the number of local cases per primitive: cases 0 … Cases−1
	// (ignored when Only ≥ 0).
	Cases int
	// Graphs is the number of graph cases per graph-level obligation; 0
	// skips them (then Only runs no graph case either).
	Graphs int
	// GraphObs are the graph-level obligations run (nil: all of
	// GlobalObligations).
	GraphObs []Obligation
	// Seed is the run seed every case seed derives from.
	Seed uint64
	// Only, when ≥ 0, runs case Only alone (of every primitive, and of
	// every graph obligation when Graphs > 0) instead of the first Cases
	// and Graphs.
	Only int
}

// graphObs returns the graph-level obligations s runs.
func (s Suite) graphObs() []Obligation {
	if s.GraphObs == nil {
		return GlobalObligations()
	}
	return s.GraphObs
}

// Steps is the number of progress steps of s: one per local case and one
// per graph case.
func (s Suite) Steps() int {
	local, graph := s.Cases, s.Graphs
	if s.Only >= 0 {
		local, graph = 1, min(s.Graphs, 1)
	}
	return len(s.Ops)*local + len(s.graphObs())*graph
}

// CheckSuite runs s: CheckOpsCases over s.Ops, then CheckGlobalCases over
// the graph-level obligations, and returns the results grouped by
// primitive in the order of s.Ops, the graph-level group (Op "graphs")
// last. Cases run in parallel; the results come in a fixed order, so
// they are the same for any GOMAXPROCS. progress, if not nil, is called
// once per case, never concurrently.
func (r Registries) CheckSuite(s Suite, progress func()) ([][]*Result, error) {
	local, graph := Indices(s.Cases), Indices(s.Graphs)
	if s.Only >= 0 {
		local, graph = []int{s.Only}, []int{s.Only}
		if s.Graphs == 0 {
			graph = nil
		}
	}
	all := make([][]*Result, 0, len(s.Ops)+1)
	if len(s.Ops) > 0 {
		res, err := r.CheckOpsCases(s.Ops, local, s.Seed, progress)
		if err != nil {
			return nil, err
		}
		all = append(all, res...)
	}
	if len(graph) > 0 {
		all = append(all, CheckGlobalCases(r.Rat, s.graphObs(), graph, s.Seed, progress))
	}
	return all, nil
}

// PlantFault returns registries in which op's VJP has its first
// contribution negated (over Rat, Interval and F64): the self-test that
// shows a check run can fail.
func PlantFault(op string) Registries {
	r := DefaultRegistries()
	r.Rat, r.Interval, r.F64 = spec.New[spec.Rat](), spec.New[spec.Interval](), spec.New[spec.F64]()
	FlipVJP(r.Rat, op)
	FlipVJP(r.Interval, op)
	FlipVJP(r.F64, op)
	return r
}

// FlipVJP overrides op's VJP in reg with one whose first contribution is
// negated (nothing when reg lacks op): a planted fault.
func FlipVJP[T spec.Scalar[T]](reg *spec.Registry[T], op string) {
	p, err := reg.Lookup(op)
	if err != nil {
		return
	}
	bad, orig := *p, p.VJP
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[T], y, dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
		gs, err := orig(a, xs, y, dy)
		if err == nil && len(gs) > 0 {
			gs[0] = spec.NegT(gs[0])
		}
		return gs, err
	}
	reg.Override(&bad)
}
