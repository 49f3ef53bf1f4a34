package typedgraph

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// Graph is a shape-typed SSA graph over the scalar T: a context Γ of input
// shapes, a list of appended nodes, and an optional result reference. Its
// entries are numbered context first, then nodes. A Graph only grows;
// methods that read it may run concurrently with each other but not with
// Append, AppendConst or SetResult.
type Graph[T spec.Scalar[T]] struct {
	reg    *spec.Registry[T]
	names  []string     // one per context entry
	shapes []spec.Shape // one per entry: the context, then the nodes
	nodes  []*Node[T]
	res    int // the result id plus one; 0 until SetResult (so the zero Graph has none)
}

// Node is one appended primitive application: its entry id, primitive,
// attributes, the entries it reads and its declared output shape, with the
// executable payload (Forward, JVP, VJP, Validate) taken from the graph's
// registry. A Node is immutable once appended.
type Node[T spec.Scalar[T]] struct {
	id       int
	name     string
	op       string
	attrs    *spec.Attrs
	inputs   []int
	inShapes []spec.Shape
	shape    spec.Shape
	prim     *spec.Prim[T]
	// lit holds the value of a node that reads nothing (const,
	// rand_uniform): its forward does not depend on the context, so it is
	// computed once, by the registry rule, when the node is appended. A
	// literal constant whose value has no rational form keeps only lit.
	lit *spec.Tensor[T]
	// rational is false for a literal constant whose Attrs carry no
	// Values; Rebuild then needs a conversion function.
	rational bool
}

// New returns an empty graph over the context shapes ctx, taking its rules
// from reg (nil means spec.Default[T]()). The context inputs are named
// x0, x1, ….
func New[T spec.Scalar[T]](reg *spec.Registry[T], ctx ...spec.Shape) (*Graph[T], error) {
	if reg == nil {
		reg = spec.Default[T]()
	}
	g := &Graph[T]{reg: reg}
	for i, s := range ctx {
		if err := g.addInput(fmt.Sprintf("x%d", i), s); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func (g *Graph[T]) addInput(name string, s spec.Shape) error {
	i := len(g.names)
	if len(g.nodes) > 0 {
		return fmt.Errorf("context input %d (%s): the context must be declared before the first node", i, name)
	}
	if _, err := s.Check(0); err != nil {
		return fmt.Errorf("context input %d (%s): %w", i, name, err)
	}
	g.names = append(g.names, name)
	g.shapes = append(g.shapes, s.Clone())
	return nil
}

// Registry is the rule table the graph's nodes take their payload from.
func (g *Graph[T]) Registry() *spec.Registry[T] {
	if g.reg == nil {
		return spec.Default[T]()
	}
	return g.reg
}

// rid is the result id, or -1 when none is set.
func (g *Graph[T]) rid() int { return g.res - 1 }

// CtxLen is the number of context inputs, len(Γ).
func (g *Graph[T]) CtxLen() int { return len(g.names) }

// Context returns a copy of the context shapes Γ.
func (g *Graph[T]) Context() []spec.Shape {
	out := make([]spec.Shape, len(g.names))
	for i := range out {
		out[i] = g.shapes[i].Clone()
	}
	return out
}

// InputName returns the name of context input i.
func (g *Graph[T]) InputName(i int) (string, error) {
	if i < 0 || i >= len(g.names) {
		return "", &IndexError{Index: i, Len: len(g.names), Where: "context input"}
	}
	return g.names[i], nil
}

// Len is the number of entries: context inputs plus nodes.
func (g *Graph[T]) Len() int { return len(g.shapes) }

// NumNodes is the number of appended nodes.
func (g *Graph[T]) NumNodes() int { return len(g.nodes) }

// Shape returns the declared shape of entry id.
func (g *Graph[T]) Shape(id int) (spec.Shape, error) {
	if id < 0 || id >= len(g.shapes) {
		return nil, &IDError{ID: id, CtxLen: len(g.shapes), Node: -1, Op: "shape", Arg: 0}
	}
	return g.shapes[id].Clone(), nil
}

// Node returns the node at entry id (id ≥ CtxLen).
func (g *Graph[T]) Node(id int) (*Node[T], error) {
	k := id - len(g.names)
	if id < 0 || id >= len(g.shapes) {
		return nil, &IDError{ID: id, CtxLen: len(g.shapes), Node: -1, Op: "node", Arg: 0}
	}
	if k < 0 {
		return nil, fmt.Errorf("entry id=%d is context input %d, not a node", id, id)
	}
	return g.nodes[k], nil
}

// SetResult selects entry id (a context input or a node) as the graph's
// result.
func (g *Graph[T]) SetResult(id int) error {
	if id < 0 || id >= len(g.shapes) {
		return &IDError{ID: id, CtxLen: len(g.shapes), Node: -1, Op: "result", Arg: 0}
	}
	g.res = id + 1
	return nil
}

// Result returns the result reference and whether one was set.
func (g *Graph[T]) Result() (int, bool) { return g.rid(), g.res > 0 }

// ResultShape returns the shape of the result entry.
func (g *Graph[T]) ResultShape() (spec.Shape, error) {
	if g.res == 0 {
		return nil, fmt.Errorf("graph has no result (call SetResult)")
	}
	return g.shapes[g.rid()].Clone(), nil
}

// Append records a node applying the primitive op with attributes a (nil
// means none; the graph keeps its own copy) to the entries inputs, and
// returns the new node's entry id. The declared output shape out is checked
// against the primitive's shape rule: a read of an entry that does not
// exist yet fails with an IDError ("invalid id=N for ctxLen=L"), a
// disagreement with a ShapeError ("shape mismatch at id=N: expected out,
// got inferred").
func (g *Graph[T]) Append(op string, a *spec.Attrs, inputs []int, out spec.Shape) (int, error) {
	return g.append(op, op, a, inputs, out, true)
}

// AppendInferred is Append with the output shape taken from the
// primitive's shape rule.
func (g *Graph[T]) AppendInferred(op string, a *spec.Attrs, inputs []int) (int, error) {
	return g.append(op, op, a, inputs, nil, false)
}

func (g *Graph[T]) append(name, op string, a *spec.Attrs, inputs []int, out spec.Shape, declared bool) (int, error) {
	id := len(g.shapes)
	p, err := g.Registry().Lookup(op)
	if err != nil {
		return -1, spec.NewNodeError(id, op, "", err)
	}
	in := make([]spec.Shape, len(inputs))
	for j, r := range inputs {
		if r < 0 || r >= id {
			return -1, &IDError{ID: r, CtxLen: id, Node: id, Op: op, Arg: j}
		}
		in[j] = g.shapes[r]
	}
	a = a.Clone()
	got, err := p.InferShape(a, in)
	if err != nil {
		return -1, spec.AtNode(id, op, err)
	}
	if declared && !got.Equal(out) {
		return -1, &ShapeError{ID: id, Op: op, Expected: out.Clone(), Got: got}
	}
	n := &Node[T]{id: id, name: name, op: op, attrs: a, inputs: append([]int(nil), inputs...),
		inShapes: make([]spec.Shape, len(in)), shape: got, prim: p, rational: true}
	for j := range in {
		n.inShapes[j] = in[j].Clone()
	}
	if len(inputs) == 0 {
		y, err := n.forward(nil)
		if err != nil {
			return -1, err
		}
		n.lit = &y
	}
	g.shapes = append(g.shapes, got.Clone())
	g.nodes = append(g.nodes, n)
	return id, nil
}

// AppendConst records a constant node named name holding v. When every
// element of v has an exact rational value (Rat, F32, F64, Binary32) the
// node is the registry's const primitive with Attrs{Shape, Values}, so
// Rebuild can re-instantiate it over any scalar; otherwise it is a literal
// that only Rebuild with a conversion function can carry over. A constant
// never receives a gradient through its reads (it has none) and its JVP is
// zero.
func (g *Graph[T]) AppendConst(name string, v spec.Tensor[T]) (int, error) {
	id := len(g.shapes)
	n, err := v.Shape.Check(0)
	if err != nil {
		return -1, spec.NewNodeError(id, "const", fmt.Sprintf("%q", name), err)
	}
	if len(v.Data) != n {
		return -1, spec.NewNodeError(id, "const", fmt.Sprintf("%q: value of shape %v holds %d elements, expected %d", name, v.Shape, len(v.Data), n), nil)
	}
	if vals, ok := ratValues(v); ok {
		return g.append(name, "const", &spec.Attrs{Shape: v.Shape.Clone(), Values: vals}, nil, v.Shape, true)
	}
	p, err := g.Registry().Lookup("const")
	if err != nil {
		return -1, spec.NewNodeError(id, "const", "", err)
	}
	lit := v.Clone()
	node := &Node[T]{id: id, name: name, op: "const", attrs: &spec.Attrs{Shape: v.Shape.Clone()},
		shape: v.Shape.Clone(), prim: p, lit: &lit}
	g.shapes = append(g.shapes, v.Shape.Clone())
	g.nodes = append(g.nodes, node)
	return id, nil
}

// ratValues returns the exact rational value of every element, when the
// scalar has one: Rat through its Big method, IEEE scalars through their
// exact float64 value.
func ratValues[T spec.Scalar[T]](v spec.Tensor[T]) ([]*big.Rat, bool) {
	out := make([]*big.Rat, len(v.Data))
	for i, x := range v.Data {
		if b, ok := any(x).(interface{ Big() *big.Rat }); ok {
			out[i] = b.Big()
			continue
		}
		switch x.Kind() {
		case "f32", "f64", "binary32":
			f := x.Float64()
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, false
			}
			r := new(big.Rat).SetFloat64(f)
			// Round-trip check: the rational must read back as the same
			// scalar (it does for every finite IEEE value).
			if var0 := x.FromRat(r); !var0.Same(x) {
				return nil, false
			}
			out[i] = r
		default:
			return nil, false
		}
	}
	return out, true
}

// String prints the graph as the chapter prints a tape: #[(some "x0",
// #[]), (some "mul", #[0, 0]), …], context inputs first; the result
// reference follows after " -> ".
func (g *Graph[T]) String() string {
	var b strings.Builder
	b.WriteString("#[")
	for i, name := range g.names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(some %q, #[])", name)
	}
	for k, n := range g.nodes {
		if k > 0 || len(g.names) > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(some %q, #[", n.name)
		for j, r := range n.inputs {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d", r)
		}
		b.WriteString("])")
	}
	b.WriteString("]")
	if g.res > 0 {
		fmt.Fprintf(&b, " -> %d", g.rid())
	}
	return b.String()
}

// ID is the node's entry id (CtxLen plus its position among the nodes).
func (n *Node[T]) ID() int { return n.id }

// Op is the primitive the node applies.
func (n *Node[T]) Op() string { return n.op }

// Name is the node's display name: the primitive, or a constant's name.
func (n *Node[T]) Name() string { return n.name }

// Attrs returns a copy of the node's attributes.
func (n *Node[T]) Attrs() *spec.Attrs { return n.attrs.Clone() }

// Inputs returns the entry ids the node reads, in argument order
// (duplicates included).
func (n *Node[T]) Inputs() []int { return append([]int(nil), n.inputs...) }

// Shape returns the node's declared output shape.
func (n *Node[T]) Shape() spec.Shape { return n.shape.Clone() }

// NoGrad reports that the primitive's JVP and VJP are zero by definition
// (const, detach, random draws).
func (n *Node[T]) NoGrad() bool { return n.prim != nil && n.prim.NoGrad }

// usable rejects a Node that was not made by a Graph.
func (n *Node[T]) usable() error {
	if n == nil || n.prim == nil {
		return fmt.Errorf("uninitialised node (obtain nodes from Graph.Node)")
	}
	return nil
}

// Validate checks a context for this node: it must hold exactly one value
// per earlier entry (ID values), and every entry the node reads must have
// the shape the node was built against.
func (n *Node[T]) Validate(ctx []spec.Tensor[T]) error {
	if err := n.usable(); err != nil {
		return err
	}
	for _, r := range n.inputs {
		if r >= len(ctx) {
			return &IndexError{Index: r, Len: len(ctx), Where: fmt.Sprintf("node %d (%s) reads its context", n.id, n.op)}
		}
	}
	if len(ctx) != n.id {
		return spec.NewNodeError(n.id, n.op, fmt.Sprintf("context has %d entries, expected %d", len(ctx), n.id), nil)
	}
	for j, r := range n.inputs {
		if err := checkTensor(ctx[r], n.inShapes[j], r, n.op); err != nil {
			return err
		}
	}
	return nil
}

// args gathers the values the node reads from a validated context.
func (n *Node[T]) args(ctx []spec.Tensor[T]) []spec.Tensor[T] {
	xs := make([]spec.Tensor[T], len(n.inputs))
	for j, r := range n.inputs {
		xs[j] = ctx[r]
	}
	return xs
}

// validateArgs checks gathered argument values against the declared input
// shapes.
func (n *Node[T]) validateArgs(xs []spec.Tensor[T]) error {
	if len(xs) != len(n.inputs) {
		return spec.NewNodeError(n.id, n.op, fmt.Sprintf("%d arguments, expected %d", len(xs), len(n.inputs)), nil)
	}
	for j := range xs {
		if err := checkTensor(xs[j], n.inShapes[j], n.inputs[j], n.op); err != nil {
			return err
		}
	}
	return nil
}

// Forward validates the context and computes the node's value with the
// registry's forward rule.
func (n *Node[T]) Forward(ctx []spec.Tensor[T]) (spec.Tensor[T], error) {
	if err := n.Validate(ctx); err != nil {
		return spec.Tensor[T]{}, err
	}
	return n.forward(n.args(ctx))
}

// JVP maps one tangent per context entry (each of its entry's shape) to
// the tangent of the node's value, with the registry's JVP rule at the
// context values.
func (n *Node[T]) JVP(ctx, dctx []spec.Tensor[T]) (spec.Tensor[T], error) {
	if err := n.Validate(ctx); err != nil {
		return spec.Tensor[T]{}, err
	}
	if len(dctx) != len(ctx) {
		return spec.Tensor[T]{}, spec.NewNodeError(n.id, n.op, fmt.Sprintf("%d tangents for %d context entries", len(dctx), len(ctx)), nil)
	}
	for i := range ctx {
		if err := checkTensor(dctx[i], ctx[i].Shape, i, "tangent"); err != nil {
			return spec.Tensor[T]{}, err
		}
	}
	xs := n.args(ctx)
	y, err := n.forward(xs)
	if err != nil {
		return spec.Tensor[T]{}, err
	}
	return n.jvp(xs, y, n.args(dctx))
}

// VJP maps a cotangent of the node's value to one contribution per context
// entry: zeros of the entry's shape where the node does not read it, and
// the sum of the registry VJP's per-argument contributions (in argument
// order, each added on the right) where it does.
func (n *Node[T]) VJP(ctx []spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
	if err := n.Validate(ctx); err != nil {
		return nil, err
	}
	xs := n.args(ctx)
	y, err := n.forward(xs)
	if err != nil {
		return nil, err
	}
	gs, err := n.vjp(xs, y, dy)
	if err != nil {
		return nil, err
	}
	out := make([]spec.Tensor[T], len(ctx))
	for i := range ctx {
		out[i] = spec.ZerosLike(ctx[i])
	}
	for j, r := range n.inputs {
		addInto(out[r].Data, gs[j].Data)
	}
	return out, nil
}

// forward runs the registry's forward rule on validated arguments and
// checks the declared output shape.
func (n *Node[T]) forward(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
	if n.lit != nil {
		return *n.lit, nil
	}
	y, err := n.prim.Forward(n.attrs, xs)
	if err != nil {
		return spec.Tensor[T]{}, spec.AtNode(n.id, n.op, err)
	}
	if err := checkTensor(y, n.shape, n.id, n.op+" forward"); err != nil {
		return spec.Tensor[T]{}, err
	}
	return y, nil
}

// jvp runs the registry's JVP rule and checks the tangent's shape.
func (n *Node[T]) jvp(xs []spec.Tensor[T], y spec.Tensor[T], dxs []spec.Tensor[T]) (spec.Tensor[T], error) {
	t, err := n.prim.JVP(n.attrs, xs, y, dxs)
	if err != nil {
		return spec.Tensor[T]{}, spec.NewNodeError(n.id, n.op, "jvp", err)
	}
	if err := checkTensor(t, n.shape, n.id, n.op+" jvp"); err != nil {
		return spec.Tensor[T]{}, err
	}
	return t, nil
}

// vjp checks the cotangent, runs the registry's VJP rule and checks one
// contribution per argument slot with that argument's shape.
func (n *Node[T]) vjp(xs []spec.Tensor[T], y spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
	if err := checkTensor(dy, n.shape, n.id, n.op+" cotangent"); err != nil {
		return nil, err
	}
	gs, err := n.prim.VJP(n.attrs, xs, y, dy)
	if err != nil {
		return nil, spec.NewNodeError(n.id, n.op, "vjp", err)
	}
	if len(gs) != len(n.inputs) {
		return nil, spec.NewNodeError(n.id, n.op, fmt.Sprintf("vjp returned %d contributions for %d arguments", len(gs), len(n.inputs)), nil)
	}
	for j := range gs {
		if err := checkTensor(gs[j], n.inShapes[j], n.inputs[j], n.op+" vjp contribution"); err != nil {
			return nil, err
		}
	}
	return gs, nil
}

// addInto adds src to dst elementwise in place, the existing value on the
// left (the order of spec.AddT, the tape's one accumulation function).
func addInto[T spec.Scalar[T]](dst, src []T) {
	for i := range dst {
		dst[i] = dst[i].Add(src[i])
	}
}

// Rebuild re-instantiates g over the scalar S with the registry reg (nil
// means spec.Default[S]()): the same context, the same nodes (op names,
// attributes and reads), the same declared shapes and the same result. The
// nodes' payload is taken from reg, so a constant with rational Values is
// rebuilt exactly by the S registry's const rule. A literal constant with
// no rational form is converted with conv; Rebuild fails on one when conv
// is nil.
func Rebuild[S spec.Scalar[S], T spec.Scalar[T]](g *Graph[T], reg *spec.Registry[S], conv func(T) S) (*Graph[S], error) {
	if g == nil {
		return nil, fmt.Errorf("rebuild: nil graph")
	}
	if reg == nil {
		reg = spec.Default[S]()
	}
	h := &Graph[S]{reg: reg, res: g.res}
	for i, name := range g.names {
		if err := h.addInput(name, g.shapes[i]); err != nil {
			return nil, err
		}
	}
	for _, n := range g.nodes {
		if n.lit != nil && !n.rational {
			if conv == nil {
				return nil, fmt.Errorf("rebuild: node %d (const %q) holds a literal with no rational form; a conversion function is needed", n.id, n.name)
			}
			if _, err := h.AppendConst(n.name, spec.Convert(*n.lit, conv)); err != nil {
				return nil, fmt.Errorf("rebuild: %w", err)
			}
			continue
		}
		if _, err := h.append(n.name, n.op, n.attrs, n.inputs, n.shape, true); err != nil {
			return nil, fmt.Errorf("rebuild: %w", err)
		}
	}
	return h, nil
}

// ToDual rebuilds g over spec.Dual[T] with the reference dual registry;
// see ToDualWith.
func ToDual[T spec.Scalar[T]](g *Graph[T]) (*Graph[spec.Dual[T]], error) {
	return ToDualWith(g, nil)
}

// ToDualWith rebuilds g over spec.Dual[T] with the dual registry reg (nil:
// the reference one) for forward-over-reverse. Literal constants become
// duals with a zero tangent. One rule is added to the registry's dual
// arithmetic: a stop-gradient primitive (NoGrad: detach, bernoulli_mask, …)
// keeps the primal and drops the tangent of its value (spec.StopTangent,
// the one statement of the rule). Over plain dual arithmetic detach is the
// identity and would carry the tangent through, contradicting its zero
// JVP; with the rule, the dual forward of every NoGrad node agrees with
// its JVP, so HVP equals forward mode applied to the gradient.
func ToDualWith[T spec.Scalar[T]](g *Graph[T], reg *spec.Registry[spec.Dual[T]]) (*Graph[spec.Dual[T]], error) {
	h, err := Rebuild(g, reg, func(x T) spec.Dual[T] { return spec.Dual[T]{Re: x} })
	if err != nil {
		return nil, err
	}
	for _, n := range h.nodes {
		if n.lit == nil {
			n.prim = spec.StopTangent(n.prim)
		}
	}
	return h, nil
}
