package main

import (
	"fmt"
	"slices"

	"github.com/tlcheck/tlcheck/onnx"
)

// The training-only Gradient operator (domain ai.onnx.preview.training):
// its outputs are the gradients ∂y/∂x of the graph value named by its
// attribute y w.r.t. each value its attribute xs names, at the graph's
// inputs. tlcheck does not import it as an IR node: it takes the operator
// out of the graph (keeping y as an extra graph output, when it is not
// one already), imports the rest, and computes the gradients exactly
// itself (irgrad over Rat, or Interval enclosures), so that the recorded
// outputs can be checked against them.

// trainingDomain is the Gradient operator's domain.
const trainingDomain = "ai.onnx.preview.training"

// gradientOp is one Gradient node taken out of the graph.
type gradientOp struct {
	where   string   // the node, as onnx.Node.Where names it
	y       string   // the differentiated value
	xs      []string // the values differentiated against (graph inputs)
	outputs []string // one gradient per xs, named as the node's outputs
}

// stripGradients returns m without its Gradient nodes, and the nodes
// taken out. The copy's outputs are m's outputs less the gradients, plus
// each y that is not yet an output (hidden lists those added, which are
// no outputs of the user's model). m itself is not changed.
func stripGradients(m *onnx.Model) (*onnx.Model, []gradientOp, []string, error) {
	var ops []gradientOp
	keep := make([]*onnx.Node, 0, len(m.Graph.Nodes))
	for _, n := range m.Graph.Nodes {
		if n.OpType != "Gradient" || n.Domain != trainingDomain {
			keep = append(keep, n)
			continue
		}
		op := gradientOp{where: n.Where(), outputs: append([]string{}, n.Outputs...)}
		y, xs := n.Attr("y"), n.Attr("xs")
		if y == nil || len(y.S) == 0 {
			return nil, nil, nil, fmt.Errorf("%s: attribute \"y\": missing (the value to differentiate)", op.where)
		}
		if xs == nil || len(xs.Strings) == 0 {
			return nil, nil, nil, fmt.Errorf("%s: attribute \"xs\": missing (the values to differentiate against)", op.where)
		}
		op.y = string(y.S)
		for _, x := range xs.Strings {
			op.xs = append(op.xs, string(x))
		}
		if len(op.xs) != len(op.outputs) {
			return nil, nil, nil, fmt.Errorf("%s: %d outputs for %d values in attribute \"xs\"", op.where, len(op.outputs), len(op.xs))
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return m, nil, nil, nil
	}
	gouts := map[string]bool{}
	for _, op := range ops {
		for _, o := range op.outputs {
			gouts[o] = true
		}
	}
	for _, n := range keep {
		for _, in := range n.Inputs {
			if gouts[in] {
				return nil, nil, nil, fmt.Errorf("%s: input %q is a Gradient output: gradients feeding the model are not supported", n.Where(), in)
			}
		}
	}
	g := *m.Graph
	g.Nodes = keep
	g.Outputs = nil
	names := map[string]bool{}
	for _, o := range m.Graph.Outputs {
		if !gouts[o.Name] {
			g.Outputs = append(g.Outputs, o)
			names[o.Name] = true
		}
	}
	var hidden []string
	for _, op := range ops {
		if names[op.y] {
			continue
		}
		vi := &onnx.ValueInfo{Name: op.y, ElemType: onnx.Float}
		for _, v := range slices.Concat(m.Graph.ValueInfo, m.Graph.Inputs) {
			if v.Name == op.y {
				vi = v
			}
		}
		g.Outputs = append(g.Outputs, vi)
		names[op.y] = true
		hidden = append(hidden, op.y)
	}
	out := *m
	out.Graph = &g
	return &out, ops, hidden, nil
}
