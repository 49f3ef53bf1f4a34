package typedgraph

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// Exec is a compiled evaluation plan for a graph: the nodes' primitives,
// attributes and reads resolved once, one reusable argument slice per node,
// and one preallocated cotangent buffer per entry. It is meant to be
// reused across many evaluations (a training loop records its loss graph
// once and runs Forward and Backward every step). An Exec is not safe for
// concurrent use; the tensors it returns are valid until its next call and
// must not be modified.
//
// The plan is a snapshot: nodes appended to the graph after Compile are not
// part of it.
type Exec[T spec.Scalar[T]] struct {
	nctx    int
	nodes   []*Node[T]
	shapes  []spec.Shape
	result  int
	vals    []spec.Tensor[T]   // one value per entry
	args    [][]spec.Tensor[T] // per node: the values it reads
	targs   [][]spec.Tensor[T] // per node: the tangents it reads
	grads   []spec.Tensor[T]   // per entry: a cotangent buffer owned by the plan
	kern    []*kernel[T]       // per node: its planned kernel, or nil for the registry rule
	vbuf    []spec.Tensor[T]   // per planned node: its value buffer
	scratch [][][]T            // per planned node: one contribution buffer per argument
	reached []bool
	rg      []bool // per entry: requires a gradient in Backward
	ready   bool   // a Forward has succeeded
	made    bool   // built by Compile (the zero Exec is unusable)
}

// Compile returns an evaluation plan for g. The graph must have a result.
func (g *Graph[T]) Compile() (*Exec[T], error) {
	if g.res == 0 {
		return nil, fmt.Errorf("compile: graph has no result (call SetResult)")
	}
	return g.newExec(), nil
}

func (g *Graph[T]) newExec() *Exec[T] {
	n := len(g.shapes)
	e := &Exec[T]{
		nctx:    len(g.names),
		nodes:   g.nodes[:len(g.nodes):len(g.nodes)],
		shapes:  g.shapes[:n:n],
		result:  g.rid(),
		vals:    make([]spec.Tensor[T], n),
		args:    make([][]spec.Tensor[T], len(g.nodes)),
		targs:   make([][]spec.Tensor[T], len(g.nodes)),
		grads:   make([]spec.Tensor[T], n),
		reached: make([]bool, n),
		rg:      make([]bool, n),
		made:    true,
	}
	e.kern = make([]*kernel[T], len(g.nodes))
	e.vbuf = make([]spec.Tensor[T], len(g.nodes))
	e.scratch = make([][][]T, len(g.nodes))
	for k, nd := range g.nodes {
		e.args[k] = make([]spec.Tensor[T], len(nd.inputs))
		e.targs[k] = make([]spec.Tensor[T], len(nd.inputs))
		if kn := kernelFor(nd); kn != nil {
			e.kern[k] = kn
			e.vbuf[k] = spec.Tensor[T]{Shape: nd.shape.Clone(), Data: make([]T, nd.shape.Size())}
			e.scratch[k] = make([][]T, len(nd.inputs))
			for j, s := range nd.inShapes {
				e.scratch[k][j] = make([]T, s.Size())
			}
		}
	}
	for id, s := range g.shapes {
		e.grads[id] = spec.Tensor[T]{Shape: s.Clone(), Data: make([]T, s.Size())}
	}
	e.setMask(nil)
	return e
}

// setMask computes requires-grad per entry from a context mask (nil: every
// context input): a node requires a gradient when one of its reads does and
// its primitive is not NoGrad (spec.RequiresGrad, which tape.Apply asks too).
func (e *Exec[T]) setMask(mask []bool) {
	for i := 0; i < e.nctx; i++ {
		e.rg[i] = mask == nil || mask[i]
	}
	var reads []bool
	for k, n := range e.nodes {
		reads = reads[:0]
		for _, r := range n.inputs {
			reads = append(reads, e.rg[r])
		}
		e.rg[e.nctx+k] = spec.RequiresGrad(n.prim.OpInfo, reads...)
	}
}

// SetRequiresGrad selects the context inputs Backward computes cotangents
// for (one flag per context input; nil selects all). Like an input leaf on
// a tape, an excluded input and every node that depends only on excluded
// inputs is skipped, and its cotangent is reported as zero.
func (e *Exec[T]) SetRequiresGrad(mask []bool) error {
	if !e.made {
		return errNotCompiled
	}
	if mask != nil && len(mask) != e.nctx {
		return fmt.Errorf("requires-grad mask has %d flags for %d context inputs", len(mask), e.nctx)
	}
	e.setMask(mask)
	return nil
}

// Len is the number of entries in the plan.
func (e *Exec[T]) Len() int { return len(e.shapes) }

// Result is the entry id of the plan's result.
func (e *Exec[T]) Result() int { return e.result }

// Forward evaluates every entry on the context values inputs (one per
// context input, each of its declared shape) and returns the result's
// value.
func (e *Exec[T]) Forward(inputs []spec.Tensor[T]) (spec.Tensor[T], error) {
	if err := e.forward(inputs); err != nil {
		return spec.Tensor[T]{}, err
	}
	if e.result < 0 {
		return spec.Tensor[T]{}, fmt.Errorf("graph has no result (call SetResult)")
	}
	return e.vals[e.result], nil
}

// errNotCompiled is returned by the methods of an Exec not made by
// Compile.
var errNotCompiled = fmt.Errorf("exec: not compiled (use Graph.Compile)")

func (e *Exec[T]) forward(inputs []spec.Tensor[T]) error {
	if !e.made {
		return errNotCompiled
	}
	e.ready = false
	if len(inputs) != e.nctx {
		return fmt.Errorf("graph context has %d inputs, got %d values", e.nctx, len(inputs))
	}
	for i, v := range inputs {
		if err := checkTensor(v, e.shapes[i], i, "input"); err != nil {
			return err
		}
		e.vals[i] = v
	}
	for k, n := range e.nodes {
		xs := e.args[k]
		for j, r := range n.inputs {
			xs[j] = e.vals[r]
		}
		if kn := e.kern[k]; kn != nil {
			if err := kn.fwd(e.vbuf[k].Data, xs); err != nil {
				return spec.AtNode(n.id, n.op, err)
			}
			e.vals[e.nctx+k] = e.vbuf[k]
			continue
		}
		y, err := n.forward(xs)
		if err != nil {
			return err
		}
		e.vals[e.nctx+k] = y
	}
	e.ready = true
	return nil
}

// Value returns the value of entry id from the last Forward.
func (e *Exec[T]) Value(id int) (spec.Tensor[T], error) {
	if !e.ready {
		return spec.Tensor[T]{}, fmt.Errorf("no successful Forward yet")
	}
	if id < 0 || id >= len(e.vals) {
		return spec.Tensor[T]{}, &IDError{ID: id, CtxLen: len(e.vals), Node: -1, Op: "value", Arg: 0}
	}
	return e.vals[id], nil
}

// Values returns the value of every entry from the last Forward (the
// slice is the plan's own).
func (e *Exec[T]) Values() ([]spec.Tensor[T], error) {
	if !e.ready {
		return nil, fmt.Errorf("no successful Forward yet")
	}
	return e.vals, nil
}

// Backward is the dense reverse sweep from the result with cotangent seed,
// at the values of the last Forward: entry cotangents start empty, the
// result's is seed, nodes are visited from the last to the first, a node
// that no cotangent reached or that does not require a gradient is skipped,
// and every other node's VJP contributions are accumulated into the entries
// it reads (a contribution to an entry that does not require a gradient is
// dropped). Unreached entries are reported as zeros. This is the tape's
// dense-all sweep of the same program; it returns one cotangent per entry,
// in buffers owned by the plan.
func (e *Exec[T]) Backward(seed spec.Tensor[T]) ([]spec.Tensor[T], error) {
	if err := e.seedCheck(seed); err != nil {
		return nil, err
	}
	clear(e.reached)
	r := e.result
	copy(e.grads[r].Data, seed.Data)
	e.reached[r] = true
	for k := len(e.nodes) - 1; k >= 0; k-- {
		id := e.nctx + k
		if !e.reached[id] || !e.rg[id] {
			continue
		}
		n := e.nodes[k]
		gs, err := e.vjp(k, id)
		if err != nil {
			return nil, err
		}
		for j, p := range n.inputs {
			if !e.rg[p] {
				continue
			}
			if e.reached[p] {
				addInto(e.grads[p].Data, gs[j])
			} else {
				copy(e.grads[p].Data, gs[j])
				e.reached[p] = true
			}
		}
	}
	for id, ok := range e.reached {
		if !ok {
			clear(e.grads[id].Data)
		}
	}
	return e.grads, nil
}

// vjp returns node k's contributions, one per argument, for the cotangent
// in its entry's buffer: from the planned kernel into the plan's scratch
// buffers, or from the registry rule.
func (e *Exec[T]) vjp(k, id int) ([][]T, error) {
	if kn := e.kern[k]; kn != nil {
		if err := kn.vjp(e.scratch[k], e.args[k], e.vals[id].Data, e.grads[id].Data); err != nil {
			n := e.nodes[k]
			return nil, fmt.Errorf("node id=%d (op %s): vjp: %w", n.id, n.op, err)
		}
		return e.scratch[k], nil
	}
	gs, err := e.nodes[k].vjp(e.args[k], e.vals[id], e.grads[id])
	if err != nil {
		return nil, err
	}
	out := e.scratch[k]
	if out == nil {
		out = make([][]T, len(gs))
		e.scratch[k] = out
	}
	for j := range gs {
		out[j] = gs[j].Data
	}
	return out, nil
}

// Reached reports whether the last Backward reached entry id (an unreached
// entry's reported cotangent is a synthetic zero).
func (e *Exec[T]) Reached(id int) bool { return id >= 0 && id < len(e.reached) && e.reached[id] }

func (e *Exec[T]) seedCheck(seed spec.Tensor[T]) error {
	if !e.ready {
		return fmt.Errorf("backward: no successful Forward yet")
	}
	if e.result < 0 {
		return fmt.Errorf("backward: graph has no result (call SetResult)")
	}
	return checkTensor(seed, e.shapes[e.result], e.result, "seed")
}

// BackwardFrom is the every-node reverse sweep (the proof-facing sweep) at
// the values of the last Forward: starting from init (one cotangent per
// entry, each of its entry's shape), it runs every node's VJP from the last
// node to the first, even where only zeros arrived, and adds each
// contribution into the entry it is for, the existing value on the left.
// Every entry takes part regardless of SetRequiresGrad. It returns one
// cotangent per entry, in buffers owned by the plan.
func (e *Exec[T]) BackwardFrom(init []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	if !e.ready {
		return nil, fmt.Errorf("backward-from: no successful Forward yet")
	}
	if len(init) != len(e.shapes) {
		return nil, fmt.Errorf("backward-from: %d initial cotangents for %d entries", len(init), len(e.shapes))
	}
	for id, v := range init {
		if err := checkTensor(v, e.shapes[id], id, "initial cotangent"); err != nil {
			return nil, err
		}
	}
	for id, v := range init {
		copy(e.grads[id].Data, v.Data)
		e.reached[id] = true
	}
	for k := len(e.nodes) - 1; k >= 0; k-- {
		id := e.nctx + k
		n := e.nodes[k]
		gs, err := e.vjp(k, id)
		if err != nil {
			return nil, err
		}
		for j, p := range n.inputs {
			addInto(e.grads[p].Data, gs[j])
		}
	}
	return e.grads, nil
}

// JVP is forward mode at the values of the last Forward: given one tangent
// per context input (each of its input's shape) it returns the tangent of
// every entry, context inputs first, in a fresh slice.
func (e *Exec[T]) JVP(tangents []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	if !e.ready {
		return nil, fmt.Errorf("jvp: no successful Forward yet")
	}
	if len(tangents) != e.nctx {
		return nil, fmt.Errorf("jvp: graph context has %d inputs, got %d tangents", e.nctx, len(tangents))
	}
	for i, v := range tangents {
		if err := checkTensor(v, e.shapes[i], i, "tangent"); err != nil {
			return nil, err
		}
	}
	tans := make([]spec.Tensor[T], len(e.shapes))
	copy(tans, tangents)
	for k, n := range e.nodes {
		dxs := e.targs[k]
		for j, r := range n.inputs {
			dxs[j] = tans[r]
		}
		t, err := n.jvp(e.args[k], e.vals[e.nctx+k], dxs)
		if err != nil {
			return nil, err
		}
		tans[e.nctx+k] = t
	}
	return tans, nil
}

// Eval evaluates every entry of g on the context values inputs and returns
// their values, context inputs first.
func (g *Graph[T]) Eval(inputs []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	e := g.newExec()
	if err := e.forward(inputs); err != nil {
		return nil, err
	}
	return e.vals, nil
}

// EvalResult evaluates g and returns the value of its result.
func (g *Graph[T]) EvalResult(inputs []spec.Tensor[T]) (spec.Tensor[T], error) {
	if g.res == 0 {
		return spec.Tensor[T]{}, fmt.Errorf("graph has no result (call SetResult)")
	}
	vs, err := g.Eval(inputs)
	if err != nil {
		return spec.Tensor[T]{}, err
	}
	return vs[g.rid()], nil
}

// JVPCtx is forward mode over the whole context: given the context values
// and one tangent per context input, it returns the tangent of every entry
// (context inputs first; the result's tangent is at the result id).
func (g *Graph[T]) JVPCtx(inputs, tangents []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	e := g.newExec()
	if err := e.forward(inputs); err != nil {
		return nil, err
	}
	return e.JVP(tangents)
}

// BackpropAllFrom runs the every-node reverse sweep from a full initial
// cotangent array (one per entry) and returns the cotangent of every entry.
func (g *Graph[T]) BackpropAllFrom(inputs, init []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	e := g.newExec()
	if err := e.forward(inputs); err != nil {
		return nil, err
	}
	return e.BackwardFrom(init)
}

// BackpropAllCtx seeds the result with seed and runs the every-node reverse
// sweep: it returns the cotangent of every entry, context inputs first.
func (g *Graph[T]) BackpropAllCtx(inputs []spec.Tensor[T], seed spec.Tensor[T]) ([]spec.Tensor[T], error) {
	r := g.rid()
	if r < 0 {
		return nil, fmt.Errorf("backprop: graph has no result (call SetResult)")
	}
	e := g.newExec()
	if err := e.forward(inputs); err != nil {
		return nil, err
	}
	if err := checkTensor(seed, g.shapes[r], r, "seed"); err != nil {
		return nil, err
	}
	init := make([]spec.Tensor[T], len(g.shapes))
	for id, s := range g.shapes {
		init[id] = spec.Tensor[T]{Shape: s, Data: make([]T, s.Size())}
	}
	init[r] = seed
	return e.BackwardFrom(init)
}

// BackpropCtx seeds the result with seed and returns one cotangent per
// context input (dense: zeros for inputs the result does not depend on).
// It is the context part of BackpropAllCtx.
func (g *Graph[T]) BackpropCtx(inputs []spec.Tensor[T], seed spec.Tensor[T]) ([]spec.Tensor[T], error) {
	all, err := g.BackpropAllCtx(inputs, seed)
	if err != nil {
		return nil, err
	}
	return all[:len(g.names):len(g.names)], nil
}
