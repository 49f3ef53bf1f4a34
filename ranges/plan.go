package ranges

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// PlanKernels plans g against profile prof with backend.Plan and returns
// the GraphKernelPlan a trace relies on: for every node, its kernels (the
// registry primitives irsem maps it to) and the capsule the profile
// selects for each, hence the reduction policy each promises. It fails
// when nothing could be planned (a malformed graph, an invalid profile);
// a plan with rejected nodes is returned as it is, and a trace fails at
// the first rejected node it reaches.
func PlanKernels(g *irsem.Graph, prof *backend.Profile) (*backend.GraphKernelPlan, error) {
	if g == nil {
		return nil, unplaced("no graph", nil)
	}
	if prof == nil {
		return nil, unplaced("no profile", nil)
	}
	r := backend.Plan(g, prof)
	if r.Err != nil {
		return nil, r.Err
	}
	if r.Plan == nil {
		return nil, unplaced(fmt.Sprintf("profile %q planned nothing", prof.Name), nil)
	}
	return r.Plan, nil
}

// checkPlan verifies that plan describes g: one entry per node with the
// node's id and tag and, for an accepted node, the kernels irsem maps it
// to (irsem.PlanApplications), each with a capsule for its op.
func checkPlan(g *irsem.Graph, plan *backend.GraphKernelPlan, apps []irsem.Application) error {
	if plan == nil {
		return unplaced("no kernel plan", nil)
	}
	if len(plan.Nodes) != len(g.Nodes) {
		return unplaced(fmt.Sprintf("kernel plan has %d entries for %d nodes", len(plan.Nodes), len(g.Nodes)), nil)
	}
	for i := range g.Nodes {
		n, np := &g.Nodes[i], &plan.Nodes[i]
		if np.Node != i || np.Tag != n.Kind.Op {
			return &spec.NodeError{Node: i, Op: string(n.Kind.Op), Elem: -1,
				Msg: fmt.Sprintf("kernel plan entry %d is for node %d (%s)", i, np.Node, np.Tag)}
		}
		if !np.Accepted() {
			continue
		}
		want := apps[i].Prims()
		got := make([]string, len(np.Kernels))
		for k, kn := range np.Kernels {
			got[k] = kn.Op
			if kn.Capsule.Op != kn.Op {
				return &spec.NodeError{Node: i, Op: string(n.Kind.Op), Elem: -1,
					Msg: fmt.Sprintf("kernel plan selects capsule %q for op %q, which implements %q", kn.Capsule.Name, kn.Op, kn.Capsule.Op)}
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return &spec.NodeError{Node: i, Op: string(n.Kind.Op), Elem: -1,
				Msg: fmt.Sprintf("kernel plan runs [%s], the node needs [%s]", strings.Join(got, ","), strings.Join(want, ","))}
		}
	}
	return nil
}

// requireFixedLeft checks that every accumulating kernel of node n
// promises a fixed-left reduction, which the rule's left folds rely on,
// and that the node has one.
func requireFixedLeft(n *irsem.Node, rule string, np *backend.NodePlan) error {
	found := false
	for _, k := range np.Kernels {
		if !backend.Accumulates(k.Op) {
			continue
		}
		if k.Capsule.Reduction != backend.ReductionFixedLeft {
			return &spec.NodeError{Node: n.ID, Op: string(n.Kind.Op), Elem: -1, Rule: rule,
				Msg: fmt.Sprintf("range rule %s requires a fixed-left capsule; selected %s is %s", rule, k.Capsule.Name, k.Capsule.Reduction)}
		}
		found = true
	}
	if !found {
		return &spec.NodeError{Node: n.ID, Op: string(n.Kind.Op), Elem: -1, Rule: rule,
			Msg: fmt.Sprintf("range rule %s requires a fixed-left capsule; the plan selects no reduction kernel", rule)}
	}
	return nil
}

// capsuleNames lists the capsule names of a node's kernels, in order.
func capsuleNames(np *backend.NodePlan) []string {
	out := make([]string, len(np.Kernels))
	for k, kn := range np.Kernels {
		out[k] = kn.Capsule.Name
	}
	return out
}
