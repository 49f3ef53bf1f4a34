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
	tainted := make([]bool, len(g.Nodes))
	any := false
	_, err := denoteAllWith(g, p, irsem.ConvertTensor[ErrOf[F]](input), reg, func(i int, run func() error) error {
		for _, q := range g.Nodes[i].Parents {
			tainted[i] = tainted[i] || tainted[q]
		}
		before := undecided.Load()
		if err := run(); err != nil {
			return err
		}
		if undecided.Load() != before {
			tainted[i] = true
		}
		any = any || tainted[i]
		return nil
	})
	if err != nil || !any {
		return nil, err
	}
	return tainted, nil
}
