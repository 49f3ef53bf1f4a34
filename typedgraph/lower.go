package typedgraph

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

// Lower is checked lowering onto a fresh tape: it records one parameter
// leaf per context input (named after the input, requiresGrad = true),
// holding inputs[i], and then lowers every node with LowerTo. It returns
// the tape and the tape id of every graph entry.
func (g *Graph[T]) Lower(inputs []spec.Tensor[T]) (*tape.Tape[T], []int, error) {
	if len(inputs) != len(g.names) {
		return nil, nil, fmt.Errorf("lower: graph context has %d inputs, got %d values", len(g.names), len(inputs))
	}
	t := tape.New[T](g.reg)
	ctx := make([]int, len(inputs))
	for i, v := range inputs {
		if err := checkTensor(v, g.shapes[i], i, "input"); err != nil {
			return nil, nil, fmt.Errorf("lower: %w", err)
		}
		id, err := t.Param(g.names[i], v)
		if err != nil {
			return nil, nil, fmt.Errorf("lower: context input %d: %w", i, err)
		}
		ctx[i] = id
	}
	ids, err := g.LowerTo(t, ctx)
	if err != nil {
		return nil, nil, err
	}
	return t, ids, nil
}

// LowerTo appends g's nodes to the tape t, reading context input i from
// the existing tape node ctxIDs[i], and returns the tape id of every graph
// entry (context inputs first). For each node, in order, it gathers the
// values the node reads, runs the node's validate (the reads must have the
// shapes the node was built against), runs its forward, checks the
// declared output shape, and appends the value with tape.Append. The
// appended node's parents are the tape ids of the entries it reads (in
// argument order, duplicates included) and its backward emits exactly one
// contribution per read — the registry VJP at the recorded values, zero for
// a stop-gradient or constant primitive. A node that reads nothing is
// appended with requiresGrad = true, so that it keeps the cotangent it
// receives, as BackpropAllCtx reports it.
func (g *Graph[T]) LowerTo(t *tape.Tape[T], ctxIDs []int) ([]int, error) {
	if t == nil {
		return nil, fmt.Errorf("lower: nil tape")
	}
	if len(ctxIDs) != len(g.names) {
		return nil, fmt.Errorf("lower: graph context has %d inputs, got %d tape ids", len(g.names), len(ctxIDs))
	}
	ids := make([]int, len(g.shapes))
	vals := make([]spec.Tensor[T], len(g.shapes))
	for i, tid := range ctxIDs {
		v, err := t.Value(tid)
		if err != nil {
			return nil, fmt.Errorf("lower: context input %d: %w", i, err)
		}
		if err := checkTensor(v, g.shapes[i], i, "input"); err != nil {
			return nil, fmt.Errorf("lower: %w", err)
		}
		ids[i], vals[i] = tid, v
	}
	for _, n := range g.nodes {
		xs := make([]spec.Tensor[T], len(n.inputs))
		parents := make([]int, len(n.inputs))
		for j, r := range n.inputs {
			xs[j], parents[j] = vals[r], ids[r]
		}
		if err := n.validateArgs(xs); err != nil {
			return nil, fmt.Errorf("lower: %w", err)
		}
		y, err := n.forward(xs)
		if err != nil {
			return nil, fmt.Errorf("lower: %w", err)
		}
		tid, err := t.Append(n.name, parents, y, true, lowerBackward(n, xs, y, parents))
		if err != nil {
			return nil, spec.AtNode(n.id, n.op, err)
		}
		ids[n.id], vals[n.id] = tid, y
	}
	return ids, nil
}

// lowerBackward is the backward of a lowered node: one contribution per
// read, from the registry VJP at the recorded values.
func lowerBackward[T spec.Scalar[T]](n *Node[T], xs []spec.Tensor[T], y spec.Tensor[T], parents []int) tape.Backward[T] {
	return func(ct spec.Tensor[T]) ([]tape.Contribution[T], error) {
		gs, err := n.vjp(xs, y, ct)
		if err != nil {
			return nil, err
		}
		cs := make([]tape.Contribution[T], len(gs))
		for j, gj := range gs {
			cs[j] = tape.Contribution[T]{Parent: parents[j], Grad: gj}
		}
		return cs, nil
	}
}
