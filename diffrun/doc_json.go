package diffrun

import (
	"strings"

	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// Doc is rep as a tlcheck.diff.v1 document, of a graph of nodes nodes read
// from inputs: every comparison, its first disagreement with the first
// line of its message, and the comparisons skipped.
func (rep *DiffReport) Doc(nodes int, inputs []jsonout.Input) jsonout.DiffDoc {
	out := jsonout.DiffDoc{Header: jsonout.NewHeader(jsonout.KindDiff, nil, inputs), GraphSHA256: rep.Hash, Nodes: nodes,
		Agree: rep.OK(), Checks: []jsonout.DiffCheck{}, Skipped: rep.Skipped}
	if out.Skipped == nil {
		out.Skipped = []string{}
	}
	for _, c := range rep.Checks {
		j := jsonout.DiffCheck{Scalar: c.Scalar, What: c.What, A: c.A, B: c.B, Nodes: c.Nodes, Agree: c.Failure == nil}
		if f := c.Failure; f != nil {
			message, _, _ := strings.Cut(f.Error(), "\n")
			j.Failure = &jsonout.DiffFailure{Obligation: f.Law, Node: f.Node, Op: f.Op, Element: f.Element,
				LHS: f.LHS, RHS: f.RHS, Detail: f.Detail, Message: message}
		}
		out.Checks = append(out.Checks, j)
	}
	return out
}
