package tape

import (
	"fmt"
	"sort"

	"github.com/tlcheck/tlcheck/spec"
)

// Grads is the result of a reverse sweep: one slot per node, empty for a
// node that no cotangent reached. "Unreached" (Get reports false) and
// "reached with a zero cotangent" are different answers.
type Grads[T spec.Scalar[T]] struct {
	slots   []spec.Tensor[T]
	reached []bool
	shapes  []spec.Shape
	// Order lists, in traversal order, the ids whose backward ran.
	Order []int
}

// Reached reports whether a cotangent reached node id.
func (g *Grads[T]) Reached(id int) bool { return id >= 0 && id < len(g.reached) && g.reached[id] }

// Get returns the cotangent of node id and whether it was reached.
func (g *Grads[T]) Get(id int) (spec.Tensor[T], bool) {
	if !g.Reached(id) {
		return spec.Tensor[T]{}, false
	}
	return g.slots[id], true
}

// ReachedIDs lists the reached node ids in increasing order.
func (g *Grads[T]) ReachedIDs() []int {
	var ids []int
	for id, r := range g.reached {
		if r {
			ids = append(ids, id)
		}
	}
	return ids
}

// Sparse returns a map holding only the reached nodes.
func (g *Grads[T]) Sparse() map[int]spec.Tensor[T] {
	m := make(map[int]spec.Tensor[T])
	for id, r := range g.reached {
		if r {
			m[id] = g.slots[id]
		}
	}
	return m
}

// Dense returns one cotangent per node, with an explicit zero of the
// node's shape for every unreached node (the dense-all result).
func (g *Grads[T]) Dense() []spec.Tensor[T] {
	out := make([]spec.Tensor[T], len(g.slots))
	for id := range g.slots {
		if g.reached[id] {
			out[id] = g.slots[id]
		} else {
			out[id] = spec.Tensor[T]{Shape: g.shapes[id].Clone(), Data: make([]T, g.shapes[id].Size())}
		}
	}
	return out
}

// accumulate is the one place where cotangents are summed: the existing
// value on the left, the incoming contribution on the right, after a
// shape check. An empty slot takes the incoming value as it is.
func accumulate[T spec.Scalar[T]](g *Grads[T], id int, incoming spec.Tensor[T]) error {
	if !g.reached[id] {
		g.slots[id] = incoming
		g.reached[id] = true
		return nil
	}
	if !g.slots[id].Shape.Equal(incoming.Shape) {
		return spec.NewNodeError(id, "", fmt.Sprintf("gradient shape mismatch during accumulation: %v vs %v", g.slots[id].Shape, incoming.Shape), nil)
	}
	sum, err := spec.AddT(g.slots[id], incoming)
	if err != nil {
		return spec.NewNodeError(id, "", "gradient shape mismatch during accumulation", err)
	}
	g.slots[id] = sum
	return nil
}

func (t *Tape[T]) newGrads() *Grads[T] {
	g := &Grads[T]{slots: make([]spec.Tensor[T], len(t.nodes)), reached: make([]bool, len(t.nodes)), shapes: make([]spec.Shape, len(t.nodes))}
	for i, n := range t.nodes {
		g.shapes[i] = n.Value.Shape
	}
	return g
}

// sweep visits ids n-1 … 0. An unreached slot is skipped unless runAll,
// in which case it is filled with a zero first and its backward runs.
// Nodes that do not require a gradient are skipped.
func (t *Tape[T]) sweep(g *Grads[T], runAll bool) error {
	for id := len(t.nodes) - 1; id >= 0; id-- {
		n := t.nodes[id]
		if !g.reached[id] {
			if !runAll {
				continue
			}
			g.slots[id] = spec.Tensor[T]{Shape: n.Value.Shape.Clone(), Data: make([]T, n.Value.Shape.Size())}
			g.reached[id] = true
		}
		if !n.RequiresGrad || n.Backward == nil {
			continue
		}
		g.Order = append(g.Order, id)
		cs, err := n.Backward(g.slots[id])
		if err != nil {
			return spec.NewNodeError(id, n.Name, "vjp", err)
		}
		for _, c := range cs {
			if c.Parent < 0 || c.Parent >= len(t.nodes) {
				return spec.NewNodeError(id, n.Name, fmt.Sprintf("backward: invalid parent id %d", c.Parent), nil)
			}
			p := t.nodes[c.Parent]
			if !p.RequiresGrad {
				continue // silently dropped
			}
			if !c.Grad.Shape.Equal(p.Value.Shape) || len(c.Grad.Data) != len(p.Value.Data) {
				return spec.NewNodeError(id, n.Name, fmt.Sprintf("backward: gradient contribution has wrong shape for parent %d: got %v, expected %v", c.Parent, c.Grad.Shape, p.Value.Shape), nil)
			}
			if err := accumulate(g, c.Parent, c.Grad); err != nil {
				return err
			}
		}
	}
	return nil
}

// Backward is the dense sweep from output out with cotangent seed: slots
// start empty, slot[out] = seed, ids are visited from the last down to 0,
// unreached nodes and nodes without requiresGrad are skipped.
func (t *Tape[T]) Backward(out int, seed spec.Tensor[T]) (*Grads[T], error) {
	n, err := t.Node(out)
	if err != nil {
		return nil, fmt.Errorf("backward: invalid output id: %w", err)
	}
	if !seed.Shape.Equal(n.Value.Shape) || len(seed.Data) != len(n.Value.Data) {
		return nil, spec.NewNodeError(out, n.Name, fmt.Sprintf("backward: seed has shape %v, the node %v", seed.Shape, n.Value.Shape), nil)
	}
	g := t.newGrads()
	g.slots[out], g.reached[out] = seed, true
	if err := t.sweep(g, false); err != nil {
		return nil, err
	}
	return g, nil
}

// BackwardScalar is the dense sweep with the scalar seed 1; the output
// must be a rank-0 tensor.
func (t *Tape[T]) BackwardScalar(out int) (*Grads[T], error) {
	return t.Backward(out, spec.Scalar0(spec.One[T]()))
}

// BackwardAll is the dense-all sweep the trainer runs: the dense sweep,
// then an explicit zero for every unreached node.
func (t *Tape[T]) BackwardAll(out int, seed spec.Tensor[T]) ([]spec.Tensor[T], error) {
	g, err := t.Backward(out, seed)
	if err != nil {
		return nil, err
	}
	return g.Dense(), nil
}

// BackwardFromAll is the proof-facing sweep: starting from a full initial
// cotangent array (one per node, each of its node's shape), it runs the
// backward of every node that requires a gradient, in reverse order, even
// where only zeros arrived.
func (t *Tape[T]) BackwardFromAll(init []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	if len(init) != len(t.nodes) {
		return nil, fmt.Errorf("backward-from-all: %d initial cotangents for %d nodes", len(init), len(t.nodes))
	}
	g := t.newGrads()
	for id, v := range init {
		if !v.Shape.Equal(t.nodes[id].Value.Shape) || len(v.Data) != len(t.nodes[id].Value.Data) {
			return nil, spec.NewNodeError(id, t.nodes[id].Name, fmt.Sprintf("backward-from-all: initial cotangent has shape %v, expected %v", v.Shape, t.nodes[id].Value.Shape), nil)
		}
		g.slots[id], g.reached[id] = v, true
	}
	if err := t.sweep(g, true); err != nil {
		return nil, err
	}
	return g.Dense(), nil
}

// BackwardEvery is the from-all sweep seeded like the dense sweep: seed at
// out and zeros elsewhere (SeedArray), then every node's backward. On a
// zero-preserving tape it equals BackwardAll; at a singular point it need
// not, which is why the trainer skips unreached nodes.
func (t *Tape[T]) BackwardEvery(out int, seed spec.Tensor[T]) ([]spec.Tensor[T], error) {
	init, err := t.SeedArray(out, seed)
	if err != nil {
		return nil, err
	}
	return t.BackwardFromAll(init)
}

// SeedArray returns the initial array of the from-all sweep for output
// out: seed at out, zeros elsewhere.
func (t *Tape[T]) SeedArray(out int, seed spec.Tensor[T]) ([]spec.Tensor[T], error) {
	n, err := t.Node(out)
	if err != nil {
		return nil, err
	}
	if !seed.Shape.Equal(n.Value.Shape) {
		return nil, spec.NewNodeError(out, n.Name, fmt.Sprintf("seed has shape %v, the node %v", seed.Shape, n.Value.Shape), nil)
	}
	init := make([]spec.Tensor[T], len(t.nodes))
	for id, m := range t.nodes {
		init[id] = spec.Tensor[T]{Shape: m.Value.Shape.Clone(), Data: make([]T, len(m.Value.Data))}
	}
	init[out] = seed
	return init, nil
}

// sortedKeys returns a map's keys in increasing order.
func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}
