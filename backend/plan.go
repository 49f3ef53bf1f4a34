package backend

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Kernel plans: TorchLean's NN.Backend.IR.GraphKernelPlan. A plan maps
// every node of a canonical IR graph, in graph order, to the kernels that
// would compute it — for each, the backend op (a spec registry primitive)
// and the capsule a profile selects for it — and holds no tensors and no
// shapes beyond the graph's. Accepting a plan is a statement about a
// choice, not about a computation: Bind connects each capsule to a runtime
// handler (an unbound capsule is an error), and only a BoundPlan executes.
//
// Which primitives compute a node is irsem's mapping (irsem.Applications;
// PlanApplications needs no payload): most tags are one kernel of their
// registry primitive; linear is one linear kernel reading W and b from the
// payload; layernorm is layer_norm on the [outer, inner] view, with a
// reshape kernel on each side when the input has another shape; safe_log
// is the safe_log kernel when its ε is a const node and softplus,
// broadcast_to, add, log otherwise.
//
// Sources: input and const nodes get no kernel. Their value is data that
// enters the graph from outside it — the caller's input, the payload's
// constant — so there is nothing to select, bind or trust; Execute hands
// the value over (a const converted from its exact rational to float32).
// rand_uniform, which computes its draws, is a kernel like any other.
//
// A node is rejected, with reasons, when its tag has no backend op (the
// tags irsem evaluates itself: conv, max_pool, avg_pool) or when the profile admits no capsule for one of its ops.
// A plan is accepted when no node is rejected.

// PlannedKernel is one kernel of a planned node.
type PlannedKernel struct {
	// Op is the backend op: the registry primitive the kernel runs.
	Op string
	// Capsule is the capsule the profile selected for Op (a plain value;
	// zero when no capsule was admissible).
	Capsule Capsule
}

// NodePlan is the plan of one IR node.
type NodePlan struct {
	// Node is the node id and Tag its IR tag.
	Node int
	Tag  irsem.Op
	// Source marks input and const nodes, which get no kernel.
	Source bool
	// Kernels lists the node's kernels in execution order (only those
	// that were selected when the node is rejected).
	Kernels []PlannedKernel
	// Reasons says why the node is rejected; empty when it is accepted.
	Reasons []string
}

// Accepted reports that the node has no rejection reason.
func (n *NodePlan) Accepted() bool { return len(n.Reasons) == 0 }

// GraphKernelPlan is the planned (node id, IR tag, backend op, capsule)
// list of a graph, in graph order. It holds no tensors.
type GraphKernelPlan struct {
	// Profile names the profile planned against, Policy its policies (as
	// Profile.String prints them).
	Profile, Policy string
	// Nodes holds one entry per IR node, by id.
	Nodes []NodePlan
}

// Accepted reports that no node of the plan is rejected.
func (p *GraphKernelPlan) Accepted() bool {
	if p == nil {
		return false
	}
	for i := range p.Nodes {
		if !p.Nodes[i].Accepted() {
			return false
		}
	}
	return true
}

// Rejected lists the rejected nodes.
func (p *GraphKernelPlan) Rejected() []NodePlan {
	var out []NodePlan
	if p == nil {
		return nil
	}
	for _, n := range p.Nodes {
		if !n.Accepted() {
			out = append(out, n)
		}
	}
	return out
}

// KernelCount is the number of kernels in the plan.
func (p *GraphKernelPlan) KernelCount() int {
	k := 0
	if p != nil {
		for i := range p.Nodes {
			k += len(p.Nodes[i].Kernels)
		}
	}
	return k
}

// Capsules lists the distinct capsules of the plan in order of first use
// (for WriteReport's capsule report).
func (p *GraphKernelPlan) Capsules() []Capsule {
	var out []Capsule
	seen := map[string]bool{}
	if p == nil {
		return nil
	}
	for _, n := range p.Nodes {
		for _, k := range n.Kernels {
			if k.Capsule.Name != "" && !seen[k.Capsule.Name] {
				seen[k.Capsule.Name] = true
				out = append(out, k.Capsule)
			}
		}
	}
	return out
}

// PlanResult is the outcome of Plan: the plan and its verdict, or an error
// that prevented planning at all (a malformed graph, an invalid profile).
type PlanResult struct {
	// Plan is the plan (nil when Err is set).
	Plan *GraphKernelPlan
	// Accepted reports that every node was planned.
	Accepted bool
	// Err is set when nothing could be planned.
	Err error
}

// Rejected lists the rejected nodes of the plan.
func (r *PlanResult) Rejected() []NodePlan {
	if r == nil {
		return nil
	}
	return r.Plan.Rejected()
}

// Plan plans g against profile p: each node's kernels (irsem's mapping of
// its tag to registry primitives) with the capsule p selects for each,
// sources without kernels, and reasons for every node that cannot be
// planned. It never fails outright on a node: an unplannable node is
// rejected and planning goes on, so the report shows every problem. A
// graph that fails irsem's checks, a nil or invalid profile set Err.
func Plan(g *irsem.Graph, p *Profile) *PlanResult {
	if p == nil {
		return &PlanResult{Err: errors.New("backend: plan: nil profile")}
	}
	if err := p.Validate(); err != nil {
		return &PlanResult{Err: fmt.Errorf("backend: plan: %w", err)}
	}
	apps, err := irsem.PlanApplications(g)
	if err != nil {
		return &PlanResult{Err: err}
	}
	plan := &GraphKernelPlan{Profile: p.Name, Policy: p.String(), Nodes: make([]NodePlan, len(apps))}
	for i := range apps {
		a := &apps[i]
		np := NodePlan{Node: a.Node, Tag: a.Op, Source: a.Source}
		switch {
		case a.Source:
		case a.IROnly:
			np.Reasons = append(np.Reasons, fmt.Sprintf("tag %s has no backend op (no registry primitive: irsem evaluates it with its own forward rule)", a.Op))
		default:
			for k, s := range a.Steps {
				sel, err := p.Select(s.Prim)
				if err != nil {
					why := strings.TrimPrefix(err.Error(), "backend: ")
					if len(a.Steps) > 1 {
						why = fmt.Sprintf("kernel %d of %d (%s): %s", k+1, len(a.Steps), s.Prim, why)
					}
					np.Reasons = append(np.Reasons, why)
					continue
				}
				np.Kernels = append(np.Kernels, PlannedKernel{Op: s.Prim, Capsule: sel.Capsule})
			}
		}
		plan.Nodes[i] = np
	}
	return &PlanResult{Plan: plan, Accepted: plan.Accepted()}
}

// kernelLine renders one kernel as "op -> capsule provider=P reduction=R".
func kernelLine(k PlannedKernel) string {
	return fmt.Sprintf("%s -> %s provider=%s reduction=%s", k.Op, k.Capsule.Name, k.Capsule.Provider, k.Capsule.Reduction)
}

// NodeLine renders the node's report line, e.g.
//
//	node 3 (linear): linear -> reference.linear provider=reference reduction=fixed-left
//	node 0 (input): source, no kernel (the caller's input)
//	node 7 (conv): rejected: tag conv has no backend op (…)
//
// A node with several kernels lists them in order, separated by "; ".
func (n *NodePlan) NodeLine() string {
	head := fmt.Sprintf("node %d (%s): ", n.Node, n.Tag)
	switch {
	case !n.Accepted():
		return head + "rejected: " + strings.Join(n.Reasons, "; ")
	case n.Source && n.Tag == irsem.OpInput:
		return head + "source, no kernel (the caller's input)"
	case n.Source:
		return head + "source, no kernel (the payload's value)"
	}
	parts := make([]string, len(n.Kernels))
	for i, k := range n.Kernels {
		parts[i] = kernelLine(k)
	}
	return head + strings.Join(parts, "; ")
}

// Verdict is the plan's verdict line, e.g.
//
//	verdict: accepted: 3 kernels for 4 nodes (1 source) on profile checked_cpu
//	verdict: rejected: 1 of 5 nodes cannot be planned on profile checked_cpu (node 4)
func (p *GraphKernelPlan) Verdict() string {
	if p == nil {
		return "verdict: rejected: no plan"
	}
	if rej := p.Rejected(); len(rej) > 0 {
		ids := make([]string, len(rej))
		for i, n := range rej {
			ids[i] = fmt.Sprintf("node %d", n.Node)
		}
		return fmt.Sprintf("verdict: rejected: %d of %d nodes cannot be planned on profile %s (%s)",
			len(rej), len(p.Nodes), p.Profile, strings.Join(ids, ", "))
	}
	src := 0
	for _, n := range p.Nodes {
		if n.Source {
			src++
		}
	}
	k := p.KernelCount()
	return fmt.Sprintf("verdict: accepted: %d %s for %d %s (%d %s) on profile %s",
		k, plural(k, "kernel", "kernels"), len(p.Nodes), plural(len(p.Nodes), "node", "nodes"), src, plural(src, "source", "sources"), p.Profile)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// WritePlanReport writes the plan report: a header naming the profile
// and its policies, one line per node (NodePlan.NodeLine) in graph order,
// then the verdict line. A result that could not be planned at all is one
// line, "plan: ERROR".
func WritePlanReport(w io.Writer, r *PlanResult) error {
	var b strings.Builder
	switch {
	case r == nil:
		b.WriteString("plan: no result\n")
	case r.Err != nil || r.Plan == nil:
		err := r.Err
		if err == nil {
			err = errors.New("no plan")
		}
		fmt.Fprintf(&b, "plan: %v\n", err)
	default:
		fmt.Fprintf(&b, "kernel plan on profile %s: %d %s\n", r.Plan.Policy, len(r.Plan.Nodes), plural(len(r.Plan.Nodes), "node", "nodes"))
		for i := range r.Plan.Nodes {
			b.WriteString(r.Plan.Nodes[i].NodeLine())
			b.WriteByte('\n')
		}
		b.WriteString(r.Plan.Verdict())
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// BoundPlan is an accepted plan whose every kernel is bound to a runtime
// handler.
type BoundPlan struct {
	// Plan is the plan that was bound.
	Plan *GraphKernelPlan
	// bindings[i][k] executes kernel k of node i.
	bindings [][]*Binding
}

// Bind binds every kernel of an accepted plan through providers (nil:
// DefaultProviders). A rejected plan is an error naming its first
// rejected node; a capsule that cannot be bound (no provider of its name,
// no handler for its op, another device) is an error naming the node,
// its tag and the capsule, wrapping the *MissingProviderError or
// *MissingHandlerError.
func Bind(plan *GraphKernelPlan, providers *Providers) (*BoundPlan, error) {
	if plan == nil {
		return nil, errors.New("backend: bind: nil plan")
	}
	if rej := plan.Rejected(); len(rej) > 0 {
		return nil, fmt.Errorf("backend: bind: the plan is rejected: %s", rej[0].NodeLine())
	}
	if providers == nil {
		providers = DefaultProviders()
	}
	bp := &BoundPlan{Plan: plan, bindings: make([][]*Binding, len(plan.Nodes))}
	for i, n := range plan.Nodes {
		for _, k := range n.Kernels {
			b, err := providers.Bind(k.Capsule)
			if err != nil {
				return nil, fmt.Errorf("backend: bind: node %d (%s): capsule %s is unbound: %w", n.Node, n.Tag, k.Capsule.Name, err)
			}
			bp.bindings[i] = append(bp.bindings[i], b)
		}
	}
	return bp, nil
}

// Execute runs g with payload at input through the bound kernels and
// returns every node's float32 value, indexed by node id. g must be the
// graph the plan was made from: its applications (irsem.Applications,
// which checks g and the payload) must have the plan's tags and kernel
// ops node for node. Each kernel runs through its Binding, with the
// payload's tensors (converted to float32 once per call, correctly
// rounded) as extra arguments and the attributes the IR kind determines;
// a source takes the input or its converted constant. Every node's value
// is checked against its declared shape. Errors name the node.
func (b *BoundPlan) Execute(g *irsem.Graph, payload *irsem.Payload, input spec.Tensor[spec.F32]) ([]spec.Tensor[spec.F32], error) {
	if b == nil || b.Plan == nil {
		return nil, errors.New("backend: execute: unbound plan")
	}
	apps, err := irsem.Applications(g, payload)
	if err != nil {
		return nil, err
	}
	if len(apps) != len(b.Plan.Nodes) {
		return nil, fmt.Errorf("backend: execute: the plan was made for another graph: it has %d nodes, the graph %d", len(b.Plan.Nodes), len(apps))
	}
	for i := range apps {
		n, a := &b.Plan.Nodes[i], &apps[i]
		ops := make([]string, len(n.Kernels))
		for k := range n.Kernels {
			ops[k] = n.Kernels[k].Op
		}
		if n.Tag != a.Op || n.Source != a.Source || strings.Join(ops, ",") != strings.Join(a.Prims(), ",") || len(b.bindings[i]) != len(ops) {
			return nil, &irsem.Error{Node: i, Op: string(a.Op), Elem: -1, Msg: fmt.Sprintf("the plan was made for another graph: planned %s [%s], the graph needs %s [%s]",
				n.Tag, strings.Join(ops, ","), a.Op, strings.Join(a.Prims(), ","))}
		}
	}
	in := &g.Nodes[g.InputID]
	if len(input.Data) != input.Shape.Size() || !input.Shape.Equal(in.Shape) {
		return nil, &irsem.Error{Node: in.ID, Op: string(in.Kind.Op), Elem: -1, Msg: fmt.Sprintf("shape mismatch: expected %v, got %v (%d values)", in.Shape, input.Shape, len(input.Data))}
	}
	vals := make([]spec.Tensor[spec.F32], len(apps))
	var parents []spec.Tensor[spec.F32]
	for i := range apps {
		a, nd := &apps[i], &g.Nodes[i]
		if a.Op == irsem.OpInput {
			vals[i] = input
			continue
		}
		parents = parents[:0]
		for _, q := range nd.Parents {
			parents = append(parents, vals[q])
		}
		bs := b.bindings[i]
		v, err := irsem.RunApplication(a, parents, func(k int, s *irsem.Step, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
			return bs[k].Execute(s.Attrs, xs)
		})
		if err != nil {
			return nil, err
		}
		if !v.Shape.Equal(nd.Shape) || len(v.Data) != nd.Shape.Size() {
			return nil, &irsem.Error{Node: i, Op: string(a.Op), Elem: -1, Msg: fmt.Sprintf("shape mismatch: expected %v, got %v (%d values)", nd.Shape, v.Shape, len(v.Data))}
		}
		vals[i] = v
	}
	return vals, nil
}
