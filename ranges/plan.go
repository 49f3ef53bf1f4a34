package ranges

import (
	"fmt"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
)

// KernelPlan is the capsule choice a trace relies on: one entry per node
// of the graph, in id order. It is the part of a GraphKernelPlan that a
// range certificate needs — which capsule executes each node, and so which
// reduction policy it promises.
type KernelPlan struct {
	// Profile names the profile the plan was made under.
	Profile string
	// Kernels has one entry per node, indexed by id.
	Kernels []PlannedKernel
}

// PlannedKernel is one node's entry of a KernelPlan.
type PlannedKernel struct {
	// Node is the node id and Tag its IR tag.
	Node int
	Tag  irsem.Op
	// Op is the registry primitive the tag executes as ("" for the input
	// and for tags irsem implements itself, which no capsule covers).
	Op string
	// Capsule is the selected capsule (the zero Capsule when Op is "").
	Capsule backend.Capsule
}

// Planned reports whether the entry has a capsule.
func (k PlannedKernel) Planned() bool { return k.Op != "" }

// PlanKernels selects, for every node of g, the capsule that profile prof
// chooses for the node's registry primitive (Profile.Select: the first
// admissible capsule in catalog order). The input node and the tags that
// have no registry primitive get no capsule. A node whose primitive has no
// admissible capsule is an error naming the node.
//
// This is the same choice a GraphKernelPlan records; once backend's plan
// builder is available this function is a thin view of it.
func PlanKernels(g *irsem.Graph, prof *backend.Profile) (*KernelPlan, error) {
	if g == nil {
		return nil, fmt.Errorf("ranges: no graph")
	}
	if prof == nil {
		return nil, fmt.Errorf("ranges: no profile")
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	if err := prof.Validate(); err != nil {
		return nil, fmt.Errorf("ranges: profile %q: %w", prof.Name, err)
	}
	plan := &KernelPlan{Profile: prof.Name, Kernels: make([]PlannedKernel, len(g.Nodes))}
	selected := map[string]backend.Capsule{}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		k := PlannedKernel{Node: i, Tag: n.Kind.Op}
		if n.Kind.Op != irsem.OpInput {
			if info, ok := irsem.Info(n.Kind.Op); ok {
				k.Op = info.Prim
			}
		}
		if k.Op != "" {
			c, ok := selected[k.Op]
			if !ok {
				sel, err := prof.Select(k.Op)
				if err != nil {
					return nil, &Error{Node: i, Tag: n.Kind.Op, Elem: -1, Msg: "kernel plan", Err: err}
				}
				c = sel.Capsule
				selected[k.Op] = c
			}
			k.Capsule = c
		}
		plan.Kernels[i] = k
	}
	return plan, nil
}

// check verifies that the plan describes g: one entry per node, each with
// the node's id, tag and registry primitive, and a capsule for that
// primitive.
func (p *KernelPlan) check(g *irsem.Graph) error {
	if p == nil {
		return fmt.Errorf("ranges: no kernel plan")
	}
	if len(p.Kernels) != len(g.Nodes) {
		return fmt.Errorf("ranges: kernel plan has %d entries for %d nodes", len(p.Kernels), len(g.Nodes))
	}
	for i := range g.Nodes {
		n, k := &g.Nodes[i], p.Kernels[i]
		want := ""
		if n.Kind.Op != irsem.OpInput {
			info, _ := irsem.Info(n.Kind.Op)
			want = info.Prim
		}
		switch {
		case k.Node != i || k.Tag != n.Kind.Op:
			return &Error{Node: i, Tag: n.Kind.Op, Elem: -1,
				Msg: fmt.Sprintf("kernel plan entry %d is for node %d (%s)", i, k.Node, k.Tag)}
		case k.Op != want:
			return &Error{Node: i, Tag: n.Kind.Op, Elem: -1,
				Msg: fmt.Sprintf("kernel plan executes it as %q, expected %q", k.Op, want)}
		case want != "" && k.Capsule.Op != want:
			return &Error{Node: i, Tag: n.Kind.Op, Elem: -1,
				Msg: fmt.Sprintf("kernel plan selects capsule %q for op %q, which implements %q", k.Capsule.Name, want, k.Capsule.Op)}
		}
	}
	return nil
}

// Capsules lists the selected capsule name of every node ("" where the
// node has none), in id order: what a certificate records.
func (p *KernelPlan) Capsules() []string {
	out := make([]string, len(p.Kernels))
	for i, k := range p.Kernels {
		if k.Planned() {
			out[i] = k.Capsule.Name
		}
	}
	return out
}
