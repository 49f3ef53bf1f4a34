package backend

// The plan command's binding check and tlcheck.plan.v1 document.

import (
	"strings"

	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// Bind binds an accepted plan's capsules to providers and reports whether
// runtime handlers exist for it (an accepted plan is a choice); it is nil
// for a rejected plan.
func (res *PlanResult) Bind(providers *Providers) *jsonout.PlanBinding {
	if !res.Accepted {
		return nil
	}
	binding := &jsonout.PlanBinding{Kernels: res.Plan.KernelCount()}
	if _, err := Bind(res.Plan, providers); err != nil {
		binding.Error = strings.TrimPrefix(err.Error(), "backend: bind: ")
	} else {
		binding.OK = true
	}
	return binding
}

// JSON is the plan as a tlcheck.plan.v1 document, with its binding
// (Bind) and the files read. It holds when the
// plan is accepted and its capsules bind.
func (res *PlanResult) JSON(binding *jsonout.PlanBinding, inputs []jsonout.Input) jsonout.PlanDoc {
	d := jsonout.PlanDoc{Header: jsonout.NewHeader(jsonout.KindPlan, nil, inputs), Profile: res.Plan.Profile, Nodes: []jsonout.PlanNode{},
		Accepted: res.Accepted, Verdict: strings.TrimPrefix(res.Plan.Verdict(), "verdict: "), Binding: binding,
		Holds: res.Accepted && binding != nil && binding.OK}
	for _, n := range res.Plan.Nodes {
		pn := jsonout.PlanNode{Node: n.Node, Tag: string(n.Tag), Source: n.Source, Kernels: []jsonout.PlanKernel{}, Reasons: n.Reasons}
		if pn.Reasons == nil {
			pn.Reasons = []string{}
		}
		for _, k := range n.Kernels {
			pn.Kernels = append(pn.Kernels, jsonout.PlanKernel{Op: k.Op, Capsule: k.Capsule.Name, Provider: k.Capsule.Provider, Reduction: string(k.Capsule.Reduction)})
		}
		d.Nodes = append(d.Nodes, pn)
	}
	return d
}
