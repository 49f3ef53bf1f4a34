package view

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// AddValues records every IR node's forward value at x over T
// (irsem.DenoteAll: exact over spec.Rat, enclosures over spec.Interval),
// printed as valueText prints it: the "= value" line of each box and the
// value column of the page's table. Call it before Fold (a folded box
// shows the value of its run's last node).
func AddValues[T spec.Scalar[T]](m *Model, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[T]) error {
	vals, err := irsem.DenoteAll(g, p, x)
	if err != nil {
		return err
	}
	for i := range m.Nodes {
		if id := m.Nodes[i].ID; id >= 0 && id < len(vals) && m.Nodes[i].Folded == 0 {
			m.Nodes[i].Value = valueText(vals[id])
		}
	}
	return nil
}

// ParamOptions say how AddParams draws the payload's parameters.
type ParamOptions struct {
	// ConstParams makes every const node's value a parameter too (an
	// imported ONNX model's initializers: irgrad.LowerOptions.ConstParams).
	// A const node is already a box; it gets the gradient, not a new box.
	ConstParams bool
	// Grads computes each parameter's gradient (the grads view).
	Grads bool
	// Name names the parameter at (node, field) — an ONNX initializer's
	// name — or returns "" for irgrad's "node<ID>.<field>".
	Name func(node int, field string) string
}

// AddParams draws the parameters a PyTorch user looks for — a linear's W
// and b, a batch norm's γ, β and statistics, an ONNX initializer — as
// boxes of their own, each with one edge into the box of the node that
// reads it, its value and (o.Grads) its gradient: the cotangent of that
// parameter in the reverse pass from the output seeded with ones of its
// shape, along the tape path, with every parameter a leaf
// (irgrad.LowerWith and VJP — what `tlcheck grad` reports for it). A
// parameter read by a folded node is drawn into the fold's box. Call it
// after Fold: a parameter box would otherwise end every chain it feeds.
// Parameter boxes take ids after the largest id drawn, and are placed
// just before their reader in m.Nodes (they have no parents, so the order
// stays topological).
func AddParams[T spec.Scalar[T]](m *Model, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[T], o ParamOptions) error {
	l, err := irgrad.LowerWith[T](nil, g, p, irgrad.LowerOptions{ConstParams: o.ConstParams})
	if err != nil {
		return err
	}
	vals := l.ParamValues()
	var grads []spec.Tensor[T]
	if o.Grads && len(l.Params) > 0 {
		y, err := irsem.Denote(g, p, x)
		if err != nil {
			return err
		}
		seed, err := spec.Full(y.Shape.Clone(), spec.One[T]())
		if err != nil {
			return err
		}
		gr, err := l.VJP(irgrad.PathTape, x, seed)
		if err != nil {
			return err
		}
		grads = gr.Params
	}
	box := func(id int) int { // position of the box that draws IR node id
		for i, n := range m.Nodes {
			if !n.Param && (n.ID == id || n.Folded > 0 && n.ID <= id && id <= n.LastID) {
				return i
			}
		}
		return -1
	}
	next := 0
	for _, n := range m.Nodes {
		next = max(next, n.ID+1, n.LastID+1)
	}
	before := map[int][]Node{} // box position → parameter boxes to insert before it
	for k, prm := range l.Params {
		at := box(prm.Node)
		if at < 0 {
			return fmt.Errorf("view: parameter %s: node %d is not drawn", prm.Name, prm.Node)
		}
		name := prm.Name
		if o.Name != nil {
			if s := o.Name(prm.Node, prm.Field); s != "" {
				name = s
			}
		}
		grad := ""
		if grads != nil {
			grad = valueText(grads[k])
		}
		if prm.Field == irsem.ParamValue && m.Nodes[at].ID == prm.Node && m.Nodes[at].Folded == 0 {
			// A const node is its own parameter box.
			n := &m.Nodes[at]
			n.Param, n.Grad, n.Field = true, grad, prm.Field
			if name != prm.Name {
				n.Name = name
			}
			if n.Value == "" {
				n.Value = valueText(vals[k])
			}
			continue
		}
		pn := Node{ID: next, Op: "param", Shape: prm.Shape.String(), Name: name, Param: true, Field: prm.Field, Reader: prm.Node,
			Value: valueText(vals[k]), Grad: grad, Reached: grad != ""}
		next++
		before[at] = append(before[at], pn)
		m.Edges = append(m.Edges, Edge{From: pn.ID, To: m.Nodes[at].ID, Slot: -1, Param: true, Field: prm.Field})
	}
	m.Params = len(l.Params)
	if len(before) == 0 {
		return nil
	}
	nodes := make([]Node, 0, len(m.Nodes)+len(l.Params))
	for i, n := range m.Nodes {
		nodes = append(nodes, before[i]...)
		nodes = append(nodes, n)
	}
	m.Nodes = nodes
	return nil
}
