package irsem

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// This file says, as data, how each IR node is computed with the spec
// registry's primitives: the mapping from a tag and its attributes to a
// short sequence of primitive applications, their attributes and the
// payload tensors they read. DenoteAll keeps its own evaluator; the
// Applications below are for the consumers that must run a node through
// something other than irsem — the typed-graph and tape lowering of
// package irgrad (which needs registry primitives to obtain JVP and VJP
// rules) and the kernel plans of package backend (which need a backend op
// per kernel). Keeping the mapping here, next to the tag table, means the
// two consumers cannot drift apart, and irsem stays free of both.

// ArgSource says where one argument of a Step comes from.
type ArgSource int

// The argument sources.
const (
	// ArgParent is the value of the node's parent at position Index (an
	// index into Node.Parents, so a duplicated parent is read twice).
	ArgParent ArgSource = iota
	// ArgStep is the result of the node's own earlier step Index.
	ArgStep
	// ArgParam is the node's payload parameter Param (ParamW, ParamB,
	// ParamGamma, ParamBeta), read at Shape: when Shape differs from the
	// payload tensor's own shape, the argument is that tensor's row-major
	// data viewed at Shape (same elements, a reshape).
	ArgParam
	// ArgConst is the fixed tensor Value, of shape Shape: a default that
	// the tag's semantics supplies when the payload omits a parameter
	// (layernorm's γ = 1 and β = 0). Param names the parameter it stands
	// for.
	ArgConst
)

// String names the source.
func (s ArgSource) String() string {
	switch s {
	case ArgParent:
		return "parent"
	case ArgStep:
		return "step"
	case ArgParam:
		return "param"
	case ArgConst:
		return "const"
	}
	return fmt.Sprintf("ArgSource(%d)", int(s))
}

// Arg is one argument of a Step.
type Arg struct {
	// Source says where the argument comes from.
	Source ArgSource
	// Index is the parent position (ArgParent) or the step (ArgStep).
	Index int
	// Param is the payload parameter name (ArgParam, ArgConst).
	Param string
	// Shape is the shape the step reads the argument at.
	Shape spec.Shape
	// Value is the payload tensor, in its own shape (ArgParam; nil in
	// the applications of PlanApplications), or the constant (ArgConst).
	// It is shared with the payload: treat it as read-only. It is nil for
	// a W that the payload holds as an IEEE plane: Plane is set then.
	Value *RatTensor
	// Plane is the payload's W when held as an IEEE plane (Params.
	// WeightPlane; ArgParam only), nil otherwise. Read a parameter through
	// Present and Rats, or ArgValue, which handle both storages.
	Plane *Plane
}

// Present reports whether the argument carries a value (Value or Plane).
func (a Arg) Present() bool { return a.Value != nil || a.Plane != nil }

// Rats is the argument's exact tensor, in its own shape: Value, or a
// fresh tensor derived from Plane (32 bytes an element, for the caller
// to drop when done); nil when the argument has no value.
func (a Arg) Rats() *RatTensor {
	if a.Value != nil || a.Plane == nil {
		return a.Value
	}
	t := a.Plane.Rats()
	return &t
}

// Step is one application of a registry primitive.
type Step struct {
	// Prim names the spec registry primitive.
	Prim string
	// Attrs are its attributes (a fresh value per Step).
	Attrs *spec.Attrs
	// Args are its arguments, in the primitive's parent order.
	Args []Arg
	// Shape is the step's output shape.
	Shape spec.Shape
}

// Application is how one node's value is computed from its parents' values
// with registry primitives: a sequence of Steps whose last result is the
// node's value (every step's output is checked against its Shape, the last
// one's is the node's declared shape).
//
//   - input and const nodes are Sources and have no steps: an input's
//     value comes from the caller, a const's is Value (the payload's
//     "value").
//   - conv and conv_transpose are the registry's primitive of the same
//     name applied to (x, W[, b]) with W and b from the payload; every
//     other tag is one registry primitive (no tag is IROnly any more).
//   - batch_norm_eval is the registry's batch_norm_eval(x, μ, σ², γ, β)
//     along channel_axis with ε from the payload, γ and β always passed
//     (the defaults 1 and 0 as ArgConst); instance_norm is
//     instance_norm(x, γ, β) with ε from the payload.
//   - linear is linear(x, W, b) with W and b from the payload.
//   - conv and conv_transpose are the primitive over (x, W) or (x, W, b),
//     W and b from the payload, b only when the payload has it (the
//     optional bias; PlanApplications, which has no payload, gives (x, W)).
//   - layernorm(axis) is reshape(x) to [outer, inner] (inner the size of
//     the normalized suffix), layer_norm(·, γ, β) along axis 1 with ε
//     from the payload, reshape back — the reshapes are omitted when the
//     input already has the shape [outer, inner]. γ and β are always
//     passed: the payload's tensors viewed at [inner], or the defaults
//     γ = 1, β = 0 as ArgConst, which gives the same values as the
//     primitive's own defaults.
//   - safe_log(x, ε) whose ε parent is a const node is the registry's
//     safe_log with Eps the const's value. With any other ε parent it is
//     composed: softplus(x), broadcast_to(ε) (omitted for a scalar x),
//     add, log — the same operations in the same order as DenoteAll,
//     whose raw log likewise rejects softplus(x)+ε ≤ 0 (only a
//     non-positive ε can produce it). The composed form is the plain
//     log(softplus(x)+ε), not the registry's stable form, so that the
//     derivative also flows to ε.
//   - every other tag is one step of its TagInfo.Prim over its parents with
//     the attributes its Kind carries.
type Application struct {
	// Node is the node's id and Op its tag.
	Node int
	Op   Op
	// Source marks input and const nodes.
	Source bool
	// IROnly marks tags without a registry primitive.
	IROnly bool
	// Steps computes the node (empty for sources and IROnly tags).
	Steps []Step
	// Value is a const node's payload value (nil in the applications of
	// PlanApplications). It is shared with the payload: read-only.
	Value *RatTensor
}

// Prims lists the registry primitives of the application's steps, in
// order.
func (a *Application) Prims() []string {
	ps := make([]string, len(a.Steps))
	for i := range a.Steps {
		ps[i] = a.Steps[i].Prim
	}
	return ps
}

// Applications returns the Application of every node of g with the
// payload p, indexed by node id. It checks g (Graph.Check) and p against g
// (CheckPayload, so a nil p is the empty payload, as in DenoteAll). Every
// error is an *Error naming the node.
func Applications(g *Graph, p *Payload) ([]Application, error) {
	if g == nil {
		return nil, docErrf("", "nil graph")
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	if err := CheckPayload(g, p); err != nil {
		return nil, err
	}
	return applications(g, p, true)
}

// PlanApplications returns the Application of every node of g without a
// payload: the primitives, the arguments' sources and shapes, and the
// attributes the graph determines are those of Applications, but
// parameter arguments carry no Value (layernorm's γ and β are ArgParam
// even where a payload would omit them), const nodes no Value, and the ε
// of layer_norm is the default. The primitives of each node do not depend
// on the payload, so this is what a kernel plan needs. It checks g with
// Graph.Check.
func PlanApplications(g *Graph) ([]Application, error) {
	if g == nil {
		return nil, docErrf("", "nil graph")
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	return applications(g, nil, false)
}

func applications(g *Graph, p *Payload, full bool) ([]Application, error) {
	apps := make([]Application, len(g.Nodes))
	for i := range g.Nodes {
		a, err := nodeApplication(g, p, i, full)
		if err != nil {
			return nil, err
		}
		apps[i] = a
	}
	return apps, nil
}

func parentArg(j int, s spec.Shape) Arg { return Arg{Source: ArgParent, Index: j, Shape: s.Clone()} }

func stepArg(j int, s spec.Shape) Arg { return Arg{Source: ArgStep, Index: j, Shape: s.Clone()} }

// paramArg reads the payload parameter name of entry e at shape s (no
// Value when e is nil or lacks it).
func paramArg(e *Params, name string, s spec.Shape) Arg {
	a := Arg{Source: ArgParam, Param: name, Shape: s.Clone()}
	if e != nil {
		a.Value = e.param(name)
		if name == ParamW {
			a.Plane = e.WeightPlane()
		}
	}
	return a
}

// param returns the tensor parameter called name, or nil.
func (e *Params) param(name string) *RatTensor {
	switch name {
	case ParamValue:
		return e.Value
	case ParamW:
		return e.W
	case ParamB:
		return e.B
	case ParamGamma:
		return e.Gamma
	case ParamBeta:
		return e.Beta
	case ParamMean:
		return e.Mean
	case ParamVar:
		return e.Var
	}
	return nil
}

// filled returns the constant tensor of shape s with every element v.
func filled(s spec.Shape, v int64) *RatTensor {
	t := RatTensor{Shape: s.Clone(), Data: make([]spec.Rat, s.Size())}
	r := spec.NewRat(v, 1)
	for i := range t.Data {
		t.Data[i] = r
	}
	return &t
}

func nodeApplication(g *Graph, p *Payload, id int, full bool) (Application, error) {
	n := &g.Nodes[id]
	op := n.Kind.Op
	info, _ := lookup(op)
	a := Application{Node: id, Op: op}
	var e *Params
	if full {
		e = p.Entry(id)
	}
	in := make([]spec.Shape, len(n.Parents))
	for j, q := range n.Parents {
		in[j] = g.Nodes[q].Shape
	}
	switch op {
	case OpInput:
		a.Source = true
		return a, nil
	case OpConst:
		a.Source = true
		if full {
			if e == nil || e.Value == nil {
				return a, nodeErrf(id, op, "", "missing const payload for node %d", id)
			}
			a.Value = e.Value
		}
		return a, nil
	case OpLinear:
		x := in[0]
		out, inner := n.Shape[len(n.Shape)-1], x[len(x)-1]
		a.Steps = []Step{{Prim: info.Prim, Attrs: &spec.Attrs{},
			Args:  []Arg{parentArg(0, x), paramArg(e, ParamW, spec.Shape{out, inner}), paramArg(e, ParamB, spec.Shape{out})},
			Shape: n.Shape.Clone()}}
		if full && (!a.Steps[0].Args[1].Present() || !a.Steps[0].Args[2].Present()) {
			return a, nodeErrf(id, op, "", "missing linear payload for node %d", id)
		}
		return a, nil
	case OpConv, OpConvTranspose:
		// conv(x, W[, b]) with W and b from the payload; b only when the
		// payload has one (a plan application, without payload, has it
		// iff the tag could: never assumed, so plans pass x and W).
		ws, bs := paramShapes(op, n.Kind.Window)
		args := []Arg{parentArg(0, in[0]), paramArg(e, ParamW, ws)}
		if full && e != nil && e.B != nil {
			args = append(args, paramArg(e, ParamB, bs))
		}
		a.Steps = []Step{{Prim: info.Prim, Attrs: primAttrs(n).Clone(), Args: args, Shape: n.Shape.Clone()}}
		if full && !args[1].Present() {
			return a, nodeErrf(id, op, "", "missing %s payload for node %d", op, id)
		}
		return a, nil
	case OpLayerNorm:
		return layerNormApplication(a, n, e, full), nil
	case OpBatchNormEval, OpInstanceNorm:
		return normApplication(a, n, e, in, full), nil
	case OpSafeLog:
		return safeLogApplication(g, p, a, n, in, full), nil
	}
	if info.Prim == "" {
		a.IROnly = true
		return a, nil
	}
	args := make([]Arg, len(n.Parents))
	for j := range n.Parents {
		args[j] = parentArg(j, in[j])
	}
	a.Steps = []Step{{Prim: info.Prim, Attrs: primAttrs(n).Clone(), Args: args, Shape: n.Shape.Clone()}}
	return a, nil
}

// layerNormApplication: reshape to [outer, inner], layer_norm along axis
// 1 with γ and β always passed, reshape back.
func layerNormApplication(a Application, n *Node, e *Params, full bool) Application {
	s := n.Shape
	outer, inner := prod(s[:n.Kind.Axis]), prod(s[n.Kind.Axis:])
	view := spec.Shape{outer, inner}
	x := parentArg(0, s)
	if !s.Equal(view) {
		a.Steps = append(a.Steps, Step{Prim: "reshape", Attrs: &spec.Attrs{Shape: view.Clone()}, Args: []Arg{x}, Shape: view.Clone()})
		x = stepArg(0, view)
	}
	eps := spec.DefaultNormEps()
	if e != nil && e.Eps != nil {
		eps = e.Eps.Big()
	}
	pv := spec.Shape{inner}
	gamma, beta := paramArg(e, ParamGamma, pv), paramArg(e, ParamBeta, pv)
	if full && gamma.Value == nil {
		gamma = Arg{Source: ArgConst, Param: ParamGamma, Shape: pv.Clone(), Value: filled(pv, 1)}
	}
	if full && beta.Value == nil {
		beta = Arg{Source: ArgConst, Param: ParamBeta, Shape: pv.Clone(), Value: filled(pv, 0)}
	}
	a.Steps = append(a.Steps, Step{Prim: "layer_norm", Attrs: &spec.Attrs{Axis: 1, Eps: eps}, Args: []Arg{x, gamma, beta}, Shape: view.Clone()})
	if !s.Equal(view) {
		a.Steps = append(a.Steps, Step{Prim: "reshape", Attrs: &spec.Attrs{Shape: s.Clone()}, Args: []Arg{stepArg(len(a.Steps)-1, view)}, Shape: s.Clone()})
	}
	return a
}

// safeLogApplication: the registry's safe_log when ε is a const node,
// else softplus, broadcast ε, add, log.
func safeLogApplication(g *Graph, p *Payload, a Application, n *Node, in []spec.Shape, full bool) Application {
	s := n.Shape
	if q := n.Parents[1]; g.Nodes[q].Kind.Op == OpConst {
		attrs := &spec.Attrs{}
		if full {
			if c := p.Entry(q); c != nil && c.Value != nil && len(c.Value.Data) == 1 {
				attrs.Eps = c.Value.Data[0].Big()
			}
		}
		a.Steps = []Step{{Prim: "safe_log", Attrs: attrs, Args: []Arg{parentArg(0, s)}, Shape: s.Clone()}}
		return a
	}
	a.Steps = append(a.Steps, Step{Prim: "softplus", Attrs: &spec.Attrs{}, Args: []Arg{parentArg(0, s)}, Shape: s.Clone()})
	eps := parentArg(1, in[1])
	if !in[1].Equal(s) {
		a.Steps = append(a.Steps, Step{Prim: "broadcast_to", Attrs: &spec.Attrs{Shape: s.Clone()}, Args: []Arg{eps}, Shape: s.Clone()})
		eps = stepArg(1, s)
	}
	a.Steps = append(a.Steps,
		Step{Prim: "add", Attrs: &spec.Attrs{}, Args: []Arg{stepArg(0, s), eps}, Shape: s.Clone()},
		Step{Prim: "log", Attrs: &spec.Attrs{}, Args: []Arg{stepArg(len(a.Steps), s)}, Shape: s.Clone()})
	return a
}

// ArgValue returns the value of argument arg of step k of a, given the
// node's parents' values and the results of the earlier steps, converted
// to T (ArgParam and ArgConst with FromRat, then viewed at arg.Shape).
// The result may share storage with parents and steps.
func ArgValue[T spec.Scalar[T]](a *Application, k int, arg Arg, parents, steps []spec.Tensor[T]) (spec.Tensor[T], error) {
	switch arg.Source {
	case ArgParent:
		if arg.Index < 0 || arg.Index >= len(parents) {
			return spec.Tensor[T]{}, nodeErrf(a.Node, a.Op, "", "step %d reads parent position %d of %d", k, arg.Index, len(parents))
		}
		return parents[arg.Index], nil
	case ArgStep:
		if arg.Index < 0 || arg.Index >= k || arg.Index >= len(steps) {
			return spec.Tensor[T]{}, nodeErrf(a.Node, a.Op, "", "step %d reads step %d", k, arg.Index)
		}
		return steps[arg.Index], nil
	case ArgParam, ArgConst:
		if !arg.Present() {
			return spec.Tensor[T]{}, nodeErrf(a.Node, a.Op, "", "step %d: no value for parameter %q (plan applications carry no payload)", k, arg.Param)
		}
		var v spec.Tensor[T]
		if arg.Value != nil {
			v = ConvertTensor[T](*arg.Value)
		} else {
			v = ConvertPlane[T](arg.Plane)
		}
		if len(v.Data) != arg.Shape.Size() {
			return spec.Tensor[T]{}, nodeErrf(a.Node, a.Op, "", "step %d: parameter %q has %d values, read at %v", k, arg.Param, len(v.Data), arg.Shape)
		}
		v.Shape = arg.Shape.Clone()
		return v, nil
	}
	return spec.Tensor[T]{}, nodeErrf(a.Node, a.Op, "", "step %d: unknown argument source %v", k, arg.Source)
}

// RunApplication computes a node's value from its parents' values (in
// parent order) by running exec on each step with the step's argument
// values (see ArgValue), and checks each step's result against its
// Shape. A const returns its Value converted to T; an input or an IROnly
// tag is an error, as is an application without values (from
// PlanApplications). exec is, for instance, a registry primitive's Apply
// or a backend binding's Execute. Errors are *Error values naming the
// node.
func RunApplication[T spec.Scalar[T]](a *Application, parents []spec.Tensor[T],
	exec func(k int, s *Step, xs []spec.Tensor[T]) (spec.Tensor[T], error)) (spec.Tensor[T], error) {
	return runApplication(nil, a, parents, exec)
}

// RunApplicationPlanes is RunApplication where exec runs the rules of reg
// (Prim.Apply): a linear, conv or conv_transpose step over a scalar with a
// plane kernel (spec.DensePlane) reads its payload weights as a float64
// plane (weightPlane) and is computed by spec.LinearPlane or
// spec.ConvPlane without exec, when reg is T's reference registry and the
// plane rule applies; otherwise exec runs on the converted weights, as in
// RunApplication. The values are the same (spec.DensePlane's contract);
// only the per-weight T (fpbound's 72-byte ErrOf) is never built. exec
// must not do more than run reg's rule for those three primitives.
func RunApplicationPlanes[T spec.Scalar[T]](reg *spec.Registry[T], a *Application, parents []spec.Tensor[T],
	exec func(k int, s *Step, xs []spec.Tensor[T]) (spec.Tensor[T], error)) (spec.Tensor[T], error) {
	return runApplication(reg, a, parents, exec)
}

// planeStep computes step k of a by spec.LinearPlane or spec.ConvPlane
// when its primitive is linear, conv or conv_transpose and its weight
// argument (position 1) is a payload parameter that weightPlane turns
// into a plane for reg; ok is false (and nothing is computed) otherwise
// or when the plane rule declines. An error is ArgValue's, for an
// argument the step would read anyway.
func planeStep[T spec.Scalar[T]](reg *spec.Registry[T], a *Application, k int, parents, steps []spec.Tensor[T]) (spec.Tensor[T], bool, error) {
	s := &a.Steps[k]
	if (s.Prim != "linear" && s.Prim != "conv" && s.Prim != "conv_transpose") || len(s.Args) < 2 || len(s.Args) > 3 {
		return spec.Tensor[T]{}, false, nil
	}
	wa := s.Args[1]
	if wa.Source != ArgParam || !wa.Present() {
		return spec.Tensor[T]{}, false, nil
	}
	if (wa.Value != nil && len(wa.Value.Data) != wa.Shape.Size()) || (wa.Value == nil && wa.Plane.Len() != wa.Shape.Size()) {
		return spec.Tensor[T]{}, false, nil
	}
	wp, ok := weightPlaneOf(reg, wa.Value, wa.Plane)
	if !ok {
		return spec.Tensor[T]{}, false, nil
	}
	x, err := ArgValue(a, k, s.Args[0], parents, steps)
	if err != nil {
		return spec.Tensor[T]{}, false, err
	}
	var b *spec.Tensor[T]
	if len(s.Args) == 3 {
		bv, err := ArgValue(a, k, s.Args[2], parents, steps)
		if err != nil {
			return spec.Tensor[T]{}, false, err
		}
		b = &bv
	}
	if s.Prim == "linear" {
		if b == nil {
			return spec.Tensor[T]{}, false, nil
		}
		y, ok := LinearPlaneOf(x, wa.Shape, wp, wa.Plane, *b)
		return y, ok, nil
	}
	y, ok := ConvPlaneOf(s.Attrs, x, wa.Shape, wp, wa.Plane, b, s.Prim == "conv_transpose")
	return y, ok, nil
}

// runApplication is RunApplication, and with reg not nil
// RunApplicationPlanes.
func runApplication[T spec.Scalar[T]](reg *spec.Registry[T], a *Application, parents []spec.Tensor[T],
	exec func(k int, s *Step, xs []spec.Tensor[T]) (spec.Tensor[T], error)) (spec.Tensor[T], error) {
	switch {
	case a.Op == OpInput:
		return spec.Tensor[T]{}, nodeErrf(a.Node, a.Op, "", "an input has no application; its value comes from the caller")
	case a.Source:
		if a.Value == nil {
			return spec.Tensor[T]{}, nodeErrf(a.Node, a.Op, "", "no const value (plan applications carry no payload)")
		}
		return ConvertTensor[T](*a.Value), nil
	case a.IROnly || len(a.Steps) == 0:
		return spec.Tensor[T]{}, nodeErrf(a.Node, a.Op, "", "%s has no registry primitive (irsem evaluates it itself)", a.Op)
	}
	steps := make([]spec.Tensor[T], 0, len(a.Steps))
	xs := make([]spec.Tensor[T], 0, 3)
	for k := range a.Steps {
		s := &a.Steps[k]
		if reg != nil {
			y, ok, err := planeStep(reg, a, k, parents, steps)
			if err != nil {
				return spec.Tensor[T]{}, err
			}
			if ok {
				if !y.Shape.Equal(s.Shape) || len(y.Data) != s.Shape.Size() {
					return spec.Tensor[T]{}, nodeErrf(a.Node, a.Op, "", "step %d (%s): shape mismatch: expected %v, got %v (%d values)", k, s.Prim, s.Shape, y.Shape, len(y.Data))
				}
				steps = append(steps, y)
				continue
			}
		}
		xs = xs[:0]
		for _, arg := range s.Args {
			v, err := ArgValue(a, k, arg, parents, steps)
			if err != nil {
				return spec.Tensor[T]{}, err
			}
			xs = append(xs, v)
		}
		y, err := exec(k, s, xs)
		if err != nil {
			return spec.Tensor[T]{}, wrapNode(a.Node, a.Op, "", err)
		}
		if !y.Shape.Equal(s.Shape) || len(y.Data) != s.Shape.Size() {
			return spec.Tensor[T]{}, nodeErrf(a.Node, a.Op, "", "step %d (%s): shape mismatch: expected %v, got %v (%d values)", k, s.Prim, s.Shape, y.Shape, len(y.Data))
		}
		steps = append(steps, y)
	}
	return steps[len(steps)-1], nil
}
