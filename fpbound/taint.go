package fpbound

import (
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// taintedNodes evaluates g over Err node by node, as the classic
// evaluation does, and reports which nodes' classic values rest on an
// undecided comparison (doc.go, "Undecided classic comparisons"): a node
// whose own formula met one, or a descendant of such a node. The caller
// holds evalMu with the ulps set, as for the classic evaluation. A nil
// result with a nil error means the evaluation met no undecided
// comparison.
func taintedNodes[F format](g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, reg *spec.Registry[ErrOf[F]]) ([]bool, error) {
	apps, err := irsem.Applications(g, p)
	if err != nil {
		return nil, err
	}
	x := irsem.ConvertTensor[ErrOf[F]](input)
	vals := make([]spec.Tensor[ErrOf[F]], len(g.Nodes))
	tainted := make([]bool, len(g.Nodes))
	any := false
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Kind.Op == irsem.OpInput {
			vals[i] = x
			continue
		}
		parents := make([]spec.Tensor[ErrOf[F]], len(n.Parents))
		for t, q := range n.Parents {
			parents[t] = vals[q]
			tainted[i] = tainted[i] || tainted[q]
		}
		before := undecided.Load()
		v, err := irsem.RunApplication(&apps[i], parents, func(_ int, s *irsem.Step, xs []spec.Tensor[ErrOf[F]]) (spec.Tensor[ErrOf[F]], error) {
			pr, err := reg.Lookup(s.Prim)
			if err != nil {
				return spec.Tensor[ErrOf[F]]{}, err
			}
			return pr.Apply(s.Attrs, xs)
		})
		if err != nil {
			return nil, err
		}
		if undecided.Load() != before {
			tainted[i] = true
		}
		any = any || tainted[i]
		vals[i] = v
	}
	if !any {
		return nil, nil
	}
	return tainted, nil
}
