// Package tape is the eager reverse-mode tape: a grow-only array of nodes
// whose ids are array indices, a builder whose every operation appends
// exactly one node (errors are values), gradient accumulation in exactly
// one function, the reverse sweeps of the TorchLean runtime (dense,
// dense-all, from-all, sparse), detach as a node, and sessions whose
// handles carry an owner and a generation. RecordChapter records the
// chapter's example tape, behind `tlcheck tape-example`.
package tape

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// Kind classifies a node.
type Kind int

// Node kinds.
const (
	KindLeaf   Kind = iota // a leaf created with an explicit requiresGrad
	KindParam              // a parameter leaf (requiresGrad = true)
	KindInput              // an input leaf (requiresGrad = false by default)
	KindConst              // a constant: never receives a gradient
	KindOp                 // a primitive application
	KindDetach             // stop-gradient
	KindCustom             // a node appended with its own backward (typed-graph lowering)
)

// Contribution is one cotangent contribution from a node to a parent.
type Contribution[T any] struct {
	Parent int
	Grad   spec.Tensor[T]
}

// Backward maps a node's cotangent to one contribution per parent slot
// (duplicates included), or an error.
type Backward[T any] func(ct spec.Tensor[T]) ([]Contribution[T], error)

// Node is one recorded value.
type Node[T any] struct {
	Name         string // leaf name or primitive name; "" for an unnamed node
	Kind         Kind
	Op           string // the primitive for KindOp, "detach" for KindDetach
	Attrs        *spec.Attrs
	Parents      []int // duplicates allowed and meaningful
	Value        spec.Tensor[T]
	RequiresGrad bool
	Backward     Backward[T] // nil for leaves and stop-gradient nodes
}

// Tape is a grow-only array of nodes over the scalar T.
type Tape[T spec.Scalar[T]] struct {
	nodes []*Node[T]
	reg   *spec.Registry[T]
}

// New returns an empty tape taking its rules from reg (nil means the
// reference registry spec.Default[T]()).
func New[T spec.Scalar[T]](reg *spec.Registry[T]) *Tape[T] {
	if reg == nil {
		reg = spec.Default[T]()
	}
	return &Tape[T]{reg: reg}
}

// Registry is the rule table the tape records with.
func (t *Tape[T]) Registry() *spec.Registry[T] { return t.reg }

// Len is the number of nodes.
func (t *Tape[T]) Len() int { return len(t.nodes) }

// Node returns node id, or an error naming the invalid id.
func (t *Tape[T]) Node(id int) (*Node[T], error) {
	if id < 0 || id >= len(t.nodes) {
		return nil, fmt.Errorf("invalid node id %d (tape has %d nodes)", id, len(t.nodes))
	}
	return t.nodes[id], nil
}

// Value returns the value of node id.
func (t *Tape[T]) Value(id int) (spec.Tensor[T], error) {
	n, err := t.Node(id)
	if err != nil {
		return spec.Tensor[T]{}, err
	}
	return n.Value, nil
}

func (t *Tape[T]) push(n *Node[T]) int {
	t.nodes = append(t.nodes, n)
	return len(t.nodes) - 1
}

func checkValue[T any](v spec.Tensor[T]) error {
	n, err := v.Shape.Check(0)
	if err != nil {
		return err
	}
	if len(v.Data) != n {
		return fmt.Errorf("value of shape %v has %d elements, expected %d", v.Shape, len(v.Data), n)
	}
	return nil
}

// Leaf appends a leaf with an explicit requiresGrad flag.
func (t *Tape[T]) Leaf(name string, v spec.Tensor[T], requiresGrad bool) (int, error) {
	if err := checkValue(v); err != nil {
		return -1, fmt.Errorf("leaf %q: %w", name, err)
	}
	return t.push(&Node[T]{Name: name, Kind: KindLeaf, Value: v, RequiresGrad: requiresGrad}), nil
}

// Param appends a parameter leaf (requiresGrad = true).
func (t *Tape[T]) Param(name string, v spec.Tensor[T]) (int, error) {
	id, err := t.Leaf(name, v, true)
	if err == nil {
		t.nodes[id].Kind = KindParam
	}
	return id, err
}

// Input appends an input leaf (requiresGrad = false).
func (t *Tape[T]) Input(name string, v spec.Tensor[T]) (int, error) {
	id, err := t.Leaf(name, v, false)
	if err == nil {
		t.nodes[id].Kind = KindInput
	}
	return id, err
}

// Const appends a constant; it never receives a gradient.
func (t *Tape[T]) Const(name string, v spec.Tensor[T]) (int, error) {
	id, err := t.Leaf(name, v, false)
	if err == nil {
		t.nodes[id].Kind = KindConst
	}
	return id, err
}

// Apply records the primitive op over the parents: it checks the ids and
// shapes, runs the forward rule from the registry and appends one node
// whose backward is the registry's VJP at the recorded values. The new
// node requires a gradient when any parent does and the primitive is not
// NoGrad (spec.RequiresGrad).
func (t *Tape[T]) Apply(op string, a *spec.Attrs, parents ...int) (int, error) {
	p, err := t.reg.Lookup(op)
	if err != nil {
		return -1, spec.NewNodeError(len(t.nodes), op, "", err)
	}
	xs := make([]spec.Tensor[T], len(parents))
	prg := make([]bool, len(parents))
	for i, id := range parents {
		n, err := t.Node(id)
		if err != nil {
			return -1, spec.NewNodeError(len(t.nodes), op, fmt.Sprintf("parent %d", i), err)
		}
		xs[i] = n.Value
		prg[i] = n.RequiresGrad
	}
	rg := spec.RequiresGrad(p.OpInfo, prg...)
	if a == nil {
		a = &spec.Attrs{}
	}
	y, err := p.Apply(a, xs)
	if err != nil {
		return -1, spec.AtNode(len(t.nodes), op, err)
	}
	ps := append([]int(nil), parents...)
	bw := func(ct spec.Tensor[T]) ([]Contribution[T], error) {
		gs, err := p.VJP(a, xs, y, ct)
		if err != nil {
			return nil, err
		}
		if len(gs) != len(ps) {
			return nil, fmt.Errorf("vjp returned %d contributions for %d parents", len(gs), len(ps))
		}
		out := make([]Contribution[T], len(gs))
		for i, g := range gs {
			out[i] = Contribution[T]{Parent: ps[i], Grad: g}
		}
		return out, nil
	}
	if p.NoGrad {
		bw = nil
	}
	return t.push(&Node[T]{Name: op, Kind: KindOp, Op: op, Attrs: a, Parents: ps, Value: y, RequiresGrad: rg, Backward: bw}), nil
}

// Detach appends a stop-gradient node: the same value (no copy),
// parents = [src] so the forward edge stays visible, requiresGrad = false
// and a backward that returns nothing.
func (t *Tape[T]) Detach(src int) (int, error) {
	n, err := t.Node(src)
	if err != nil {
		return -1, spec.NewNodeError(len(t.nodes), "detach", "parent 0", err)
	}
	return t.push(&Node[T]{Name: "detach", Kind: KindDetach, Op: "detach", Parents: []int{src}, Value: n.Value, RequiresGrad: false}), nil
}

// Append records a node with its own backward (used by typed-graph
// lowering, whose nodes emit one contribution per context entry). The
// parents must exist; requiresGrad is the OR of theirs unless a parent
// list is empty, in which case it is requiresGrad.
func (t *Tape[T]) Append(name string, parents []int, v spec.Tensor[T], requiresGrad bool, bw Backward[T]) (int, error) {
	if err := checkValue(v); err != nil {
		return -1, spec.NewNodeError(len(t.nodes), name, "", err)
	}
	rg := requiresGrad
	if len(parents) > 0 {
		rg = false
		for i, id := range parents {
			n, err := t.Node(id)
			if err != nil {
				return -1, spec.NewNodeError(len(t.nodes), name, fmt.Sprintf("parent %d", i), err)
			}
			rg = rg || n.RequiresGrad
		}
	}
	return t.push(&Node[T]{Name: name, Kind: KindCustom, Op: name, Parents: append([]int(nil), parents...), Value: v, RequiresGrad: rg, Backward: bw}), nil
}
