package gate

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/par"
	"github.com/tlcheck/tlcheck/internal/report"
	"github.com/tlcheck/tlcheck/refine"
)

// ratF converts an exact ratio for display.
func ratF(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

// refinement completes the item of a refinement check of capsule that
// ran (on names the device in the item's detail, "" for none) and returns
// it with the check's entry in the report.
func refinement(item Item, prov, op string, capsule backend.Capsule, res *refine.Result, on string) (Item, report.Refinement) {
	r := report.Refinement{Provider: prov, Op: op, Capsule: capsule.Name, Policy: string(capsule.Reduction), Cases: len(res.Cases), Holds: res.Failures == 0}
	for _, cs := range res.Cases {
		r.Ratios = append(r.Ratios, ratF(cs.Worst.Big()))
	}
	r.Worst = ratF(res.Worst.Big())
	n, worst := len(res.Cases), jsonout.Number(r.Worst)
	item.Holds = res.Failures == 0
	item.Cases, item.Policy, item.Rule, item.WorstRatio = &n, string(capsule.Reduction), string(res.Obligation.Rule), &worst
	for _, x := range r.Ratios {
		item.Ratios = append(item.Ratios, jsonout.Number(x))
	}
	item.Detail = fmt.Sprintf("%d cases%s, %s, rule %s, worst error/bound %.3g", len(res.Cases), on, capsule.Reduction, res.Obligation.Rule, r.Worst)
	if res.Failure != nil {
		item.Failure = res.Failure.Error()
	}
	return item, r
}

// refineStage checks every provider's executable primitives against the
// exact semantics: bit-exact replay for the reference (fixed-left)
// capsules, the proven γ bound for fast_cpu's implementation-defined
// ones.
func refineStage(c Config) Stage {
	st := Stage{Name: "refine", Timed: true}
	cat, provs := backend.FastCatalog(), c.Providers
	if provs == nil {
		provs = backend.FastProviders()
	}
	ops := refine.Ops()
	names := []string{backend.ProviderReference, backend.ProviderFastCPU}
	prog := cli.NewProgress(c.Stderr, "gate: refine", len(names)*len(ops))
	defer prog.Done()
	type pairOut struct {
		item Item
		ref  *report.Refinement
	}
	// The (provider, op) pairs are independent: they run on a worker pool
	// and are merged in the fixed order of names × ops.
	outs := par.Map(len(names)*len(ops), 0, func(k int) (out pairOut) {
		start := time.Now()
		prov, op := names[k/len(ops)], ops[k%len(ops)]
		name := prov + "." + op
		item := Item{GateItem: jsonout.GateItem{Name: name}}
		defer func() { out.item.Seconds = time.Since(start).Seconds() }()
		capsule, ok := cat.Lookup(name)
		if !ok {
			item.Failure = "no capsule " + name
			return pairOut{item: item}
		}
		b, err := provs.Bind(capsule)
		if err != nil {
			item.Failure = err.Error()
			return pairOut{item: item}
		}
		res, err := refine.Check(b, op, c.CertCases, c.Seed)
		if err != nil {
			item.Failure = err.Error()
			return pairOut{item: item}
		}
		item, r := refinement(item, prov, op, capsule, res, "")
		return pairOut{item: item, ref: &r}
	}, prog.Step)
	for _, o := range outs {
		st.Items = append(st.Items, o.item)
		if o.ref != nil {
			st.Refinements = append(st.Refinements, *o.ref)
		}
	}
	// fast_cpu documents its summation order (8-lane chunks, independent
	// of GOMAXPROCS): refinement admits any order within the bound, so the
	// documented one is checked bit for bit, at GOMAXPROCS as set and 1.
	// Sequential, after the pool: the check changes GOMAXPROCS.
	for _, op := range refine.DeclaredOrderOps() {
		start := time.Now()
		name := backend.ProviderFastCPU + "." + op + "/declared-order"
		item := Item{GateItem: jsonout.GateItem{Name: name}, Detail: "bit-identical to the documented 8-lane chunked order, GOMAXPROCS as set and 1"}
		capsule, ok := cat.Lookup(backend.ProviderFastCPU + "." + op)
		if !ok {
			item.Failure = "no capsule " + backend.ProviderFastCPU + "." + op
		} else if b, err := provs.Bind(capsule); err != nil {
			item.Failure = err.Error()
		} else if err := refine.CheckDeclaredOrder(b, op, c.Seed); err != nil {
			item.Failure = err.Error()
		} else {
			item.Holds = true
		}
		item.Seconds = time.Since(start).Seconds()
		st.Items = append(st.Items, item)
	}
	return st
}

// PlantedProviders returns the fast providers with fast_cpu wrapped so
// that element 0 of every op result has a high mantissa bit flipped (bit
// 20: 2^20 ulps), far beyond any rounding bound: the self-test that shows
// the refine stage can fail. An op outside refine.Ops() is an error.
func PlantedProviders(op string) (*backend.Providers, error) {
	if !slices.Contains(refine.Ops(), op) {
		return nil, fmt.Errorf("%q is not a fast_cpu op (%s)", op, strings.Join(refine.Ops(), ","))
	}
	bad, err := refine.NewFlipBit(backend.NewFastCPUProvider(), op, 0, 20)
	if err != nil {
		return nil, err
	}
	return backend.NewProviders(backend.NewReferenceProvider(nil), bad)
}
