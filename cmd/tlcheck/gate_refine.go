package main

import (
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/report"
	"github.com/tlcheck/tlcheck/refine"
)

// ratF converts an exact ratio for display.
func ratF(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

// stageRefine checks every provider's executable primitives against the
// exact semantics: bit-exact replay for the reference (fixed-left)
// capsules, the proven γ bound for fast_cpu's implementation-defined
// ones.
func stageRefine(c gateConfig) gateStage {
	st := gateStage{Name: "refine"}
	cat, provs := backend.FastCatalog(), c.providers
	if provs == nil {
		provs = backend.FastProviders()
	}
	ops := refine.Ops()
	names := []string{backend.ProviderReference, backend.ProviderFastCPU}
	prog := cli.NewProgress(c.stderr, "gate: refine", len(names)*len(ops))
	defer prog.Done()
	for _, prov := range names {
		for _, op := range ops {
			prog.Step()
			name := prov + "." + op
			item := gateItem{Name: name}
			capsule, ok := cat.Lookup(name)
			if !ok {
				item.Failure = "no capsule " + name
				st.Items = append(st.Items, item)
				continue
			}
			b, err := provs.Bind(capsule)
			if err != nil {
				item.Failure = err.Error()
				st.Items = append(st.Items, item)
				continue
			}
			res, err := refine.Check(b, op, c.certs, c.seed)
			if err != nil {
				item.Failure = err.Error()
				st.Items = append(st.Items, item)
				continue
			}
			r := report.Refinement{Provider: prov, Op: op, Capsule: name, Policy: string(capsule.Reduction), Cases: len(res.Cases), Holds: res.Failures == 0}
			for _, cs := range res.Cases {
				r.Ratios = append(r.Ratios, ratF(cs.Worst.Big()))
			}
			r.Worst = ratF(res.Worst.Big())
			st.Refinements = append(st.Refinements, r)
			item.Holds = res.Failures == 0
			item.Detail = fmt.Sprintf("%d cases, %s, rule %s, worst error/bound %.3g", len(res.Cases), capsule.Reduction, res.Obligation.Rule, r.Worst)
			if res.Failure != nil {
				item.Failure = res.Failure.Error()
			}
			st.Items = append(st.Items, item)
		}
	}
	return st
}
