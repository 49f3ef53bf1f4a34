package irsem

import (
	"math/big"

	"github.com/tlcheck/tlcheck/internal/par"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// step computes one node's value from its parents' values (in parent
// order). It never retains xs.
type step[T spec.Scalar[T]] func(xs []spec.Tensor[T]) (spec.Tensor[T], error)

// mode selects how buildStep runs the registry rules.
type mode int

const (
	// modeDenote runs Prim.Apply (arity and shapes checked against the
	// registry) and the raw log rule that rejects x ≤ 0.
	modeDenote mode = iota
	// modeForward runs Prim.Forward on pre-converted parameters, with the
	// scalar's total logarithm for raw log (as IRExec.ForwardGraph).
	modeForward
)

// isRat reports whether T is the exact rational scalar.
func isRat[T spec.Scalar[T]]() bool { return spec.KindOf[T]() == "rat" }

// levelSafe reports whether T is one of spec's own value types (F64, F32,
// Binary32, Interval, Rat), whose rules are pure functions of their
// operands and so may run concurrently (denoteLevels).
func levelSafe[T spec.Scalar[T]]() bool {
	var z T
	switch any(z).(type) {
	case spec.F64, spec.F32, spec.Binary32, spec.Interval, spec.Rat:
		return true
	}
	return false
}

// convertSlice converts the data of an optional exact tensor.
func convertData[T spec.Scalar[T]](t *RatTensor) []T {
	if t == nil {
		return nil
	}
	return ConvertTensor[T](*t).Data
}

// buildStep prepares node n (not an input) for evaluation over T: it looks
// up the registry primitive, converts the node's payload entry e with
// FromRat and builds the registry attributes. g must have passed Check and
// e CheckPayload.
func buildStep[T spec.Scalar[T]](reg *spec.Registry[T], g *Graph, n *Node, e *Params, m mode) (step[T], error) {
	info, _ := lookup(n.Kind.Op)
	op, k := info.Op, &n.Kind
	if isRat[T]() && !info.Exact {
		return nil, nodeErrf(n.ID, op, "", "%s has no exact rational semantics; evaluate it over f32, f64, binary32 or interval", op)
	}
	var run func(a *spec.Attrs, xs []spec.Tensor[T]) (spec.Tensor[T], error)
	if info.Prim != "" {
		prim, err := reg.Lookup(info.Prim)
		if err != nil {
			return nil, wrapNode(n.ID, op, "", err)
		}
		run = prim.Apply
		if m == modeForward {
			run = prim.Forward
		}
	}
	attrs := primAttrs(n)
	if e == nil {
		e = &Params{}
	}
	switch op {
	case OpInput:
		return nil, nodeErrf(n.ID, op, "", "internal error: an input node has no step")
	case OpConst:
		if m == modeForward {
			v := ConvertTensor[T](*e.Value)
			v.Shape = shapeOrScalar(k.ValueShape).Clone()
			return func([]spec.Tensor[T]) (spec.Tensor[T], error) { return v, nil }, nil
		}
		attrs.Values = make([]*big.Rat, len(e.Value.Data))
		for i, r := range e.Value.Data {
			attrs.Values[i] = r.Big()
		}
		return func([]spec.Tensor[T]) (spec.Tensor[T], error) { return run(attrs, nil) }, nil
	case OpLinear:
		b := ConvertTensor[T](*e.B)
		if pl := e.WeightPlane(); pl != nil {
			return planeLinearStep(run, attrs, reg, pl, b), nil
		}
		if wp, ok := weightPlane(reg, e.W); ok {
			return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
				if y, ok := spec.LinearPlane(xs[0], e.W.Shape, wp, b); ok {
					return y, nil
				}
				return run(attrs, []spec.Tensor[T]{xs[0], ConvertTensor[T](*e.W), b})
			}, nil
		}
		w := ConvertTensor[T](*e.W)
		return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
			return run(attrs, []spec.Tensor[T]{xs[0], w, b})
		}, nil
	case OpLog:
		if m == modeForward {
			return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
				return spec.Map(xs[0], func(v T) (T, error) { return v.Log() })
			}, nil
		}
	case OpSafeLog:
		// As Applications says: with a const ε parent the registry's
		// safe_log (its scalar rule, with ε the const converted to T
		// exactly as the registry converts its Eps), otherwise softplus,
		// + ε, and the registry's raw log, which rejects a non-positive
		// sum. Both modes reject alike: every path does the same thing.
		if g.Nodes[n.Parents[1]].Kind.Op == OpConst {
			return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
				eps := xs[1].Data[0]
				return spec.Map(xs[0], func(v T) (T, error) { return spec.SafeLogScalar(v, eps) })
			}, nil
		}
		sp, err := reg.Lookup("softplus")
		if err != nil {
			return nil, wrapNode(n.ID, op, "", err)
		}
		run = sp.Apply
		if m == modeForward {
			run = sp.Forward
		}
		logPrim, err := reg.Lookup("log")
		if err != nil {
			return nil, wrapNode(n.ID, op, "", err)
		}
		none := &spec.Attrs{}
		return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
			sp, err := run(none, xs[:1])
			if err != nil {
				return spec.Tensor[T]{}, err
			}
			eps := xs[1].Data[0]
			sum := spec.MapPure(sp, func(v T) T { return v.Add(eps) })
			return logPrim.Forward(none, []spec.Tensor[T]{sum})
		}, nil
	case OpLayerNorm:
		return layerNormStep(run, attrs, g, n, e), nil
	case OpBatchNormEval, OpInstanceNorm:
		return normStep(run, n, e), nil
	case OpConv, OpConvTranspose:
		var b *spec.Tensor[T]
		if e.B != nil {
			bt := ConvertTensor[T](*e.B)
			b = &bt
		}
		params := func(w spec.Tensor[T]) []spec.Tensor[T] {
			if b == nil {
				return []spec.Tensor[T]{w}
			}
			return []spec.Tensor[T]{w, *b}
		}
		if pl := e.WeightPlane(); pl != nil {
			return planeConvStep(run, attrs, reg, pl, b, params, op == OpConvTranspose), nil
		}
		if wp, ok := weightPlane(reg, e.W); ok {
			return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
				if y, ok := spec.ConvPlane(attrs, xs[0], e.W.Shape, wp, b, op == OpConvTranspose); ok {
					return y, nil
				}
				return run(attrs, append([]spec.Tensor[T]{xs[0]}, params(ConvertTensor[T](*e.W))...))
			}, nil
		}
		ps := params(ConvertTensor[T](*e.W))
		return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
			return run(attrs, append([]spec.Tensor[T]{xs[0]}, ps...))
		}, nil
	}
	if run == nil {
		return nil, nodeErrf(n.ID, op, "", "internal error: no rule for %s", op)
	}
	return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) { return run(attrs, xs) }, nil
}

// weightPlane returns the weights w as a plane of float64 values, each
// exactly the weight's rational (spec.Rat.ExactFloat64), when the scalar T
// has a dense kernel that reads such planes (spec.DensePlane), reg is
// T's reference registry (whose linear and conv rules spec.LinearPlane
// and spec.ConvPlane are) and every weight is such a float; ok is false
// otherwise, and the step converts the weights to T as before. A step
// with a plane holds 8 bytes a weight instead of one T (fpbound's ErrOf:
// 72), and converts the weights only for a call the plane kernel
// declines, for that call alone; its values are the same either way
// (spec.DensePlane's contract).
//
// A payload W held as an IEEE plane (Params.WeightPlane) needs no such
// check (every element is a float64); weightPlaneOf reads it directly.
func weightPlane[T spec.Scalar[T]](reg *spec.Registry[T], w *RatTensor) ([]float64, bool) {
	var z T
	if _, ok := any(z).(spec.DensePlane[T]); !ok || w == nil || reg != spec.Default[T]() {
		return nil, false
	}
	wp := make([]float64, len(w.Data))
	for i, r := range w.Data {
		f, ok := r.ExactFloat64()
		if !ok {
			return nil, false
		}
		wp[i] = f
	}
	return wp, true
}

// planeOK reports whether T's dense kernel reads float64 weight planes
// for reg (see weightPlane).
func planeOK[T spec.Scalar[T]](reg *spec.Registry[T]) bool {
	var z T
	_, ok := any(z).(spec.DensePlane[T])
	return ok && reg == spec.Default[T]()
}

// weightPlaneOf is weightPlane for a weight held as rationals (w) or as
// an IEEE plane (p, w nil). For a plane it widens nothing: it reports ok
// with wp nil when T reads planes (planeOK), and the step then runs
// LinearPlaneOf / ConvPlaneOf on p itself.
func weightPlaneOf[T spec.Scalar[T]](reg *spec.Registry[T], w *RatTensor, p *Plane) ([]float64, bool) {
	if w != nil || p == nil {
		return weightPlane(reg, w)
	}
	return nil, planeOK(reg)
}

// LinearPlaneOf is spec.LinearPlane with the weights, of shape ws, given
// as the float64 plane wp, or (wp nil) as the payload plane p: a binary32
// p is read in place when T is a spec.DensePlane32 (LinearPlane32: the
// same result as LinearPlane on p widened, by DensePlane32's contract,
// so a layer is never widened whole); otherwise p is widened for this
// call (Plane.Float64s: 8 bytes a weight, dropped after the call; a
// binary64 plane is read in place).
func LinearPlaneOf[T spec.Scalar[T]](x spec.Tensor[T], ws spec.Shape, wp []float64, p *Plane, b spec.Tensor[T]) (spec.Tensor[T], bool) {
	if wp == nil {
		if f := p.Float32s(); f != nil && plane32[T]() {
			return spec.LinearPlane32(x, ws, f, b)
		}
		wp = p.Float64s()
	}
	return spec.LinearPlane(x, ws, wp, b)
}

// ConvPlaneOf is LinearPlaneOf for conv and conv_transpose (spec.ConvPlane,
// ConvPlane32).
func ConvPlaneOf[T spec.Scalar[T]](a *spec.Attrs, x spec.Tensor[T], ws spec.Shape, wp []float64, p *Plane, b *spec.Tensor[T], transposed bool) (spec.Tensor[T], bool) {
	if wp == nil {
		if f := p.Float32s(); f != nil && plane32[T]() {
			return spec.ConvPlane32(a, x, ws, f, b, transposed)
		}
		wp = p.Float64s()
	}
	return spec.ConvPlane(a, x, ws, wp, b, transposed)
}

// plane32 reports whether T's dense kernel reads binary32 planes in place
// (spec.DensePlane32).
func plane32[T any]() bool {
	var z T
	_, ok := any(z).(spec.DensePlane32[T])
	return ok
}

// planeLinearStep is linear's step for a W held as an IEEE plane p: when
// T reads planes (planeOK), each call runs LinearPlaneOf on p (a binary32
// p read in place by a DensePlane32 kernel, else widened to float64 for
// the call) and converts the weights for that call only when it declines
// — as the rational path does; for any other T the weights are converted
// to T once, element by element from the plane (ConvertPlane), as
// ConvertTensor converts the rationals. Either way the values are those
// of the rational W the plane denotes.
func planeLinearStep[T spec.Scalar[T]](run func(*spec.Attrs, []spec.Tensor[T]) (spec.Tensor[T], error),
	attrs *spec.Attrs, reg *spec.Registry[T], p *Plane, b spec.Tensor[T]) step[T] {
	if planeOK(reg) {
		return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
			if y, ok := LinearPlaneOf(xs[0], p.Shape(), nil, p, b); ok {
				return y, nil
			}
			return run(attrs, []spec.Tensor[T]{xs[0], ConvertPlane[T](p), b})
		}
	}
	w := ConvertPlane[T](p)
	return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
		return run(attrs, []spec.Tensor[T]{xs[0], w, b})
	}
}

// planeConvStep is planeLinearStep for conv and conv_transpose.
func planeConvStep[T spec.Scalar[T]](run func(*spec.Attrs, []spec.Tensor[T]) (spec.Tensor[T], error),
	attrs *spec.Attrs, reg *spec.Registry[T], p *Plane, b *spec.Tensor[T],
	params func(spec.Tensor[T]) []spec.Tensor[T], transposed bool) step[T] {
	if planeOK(reg) {
		return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
			if y, ok := ConvPlaneOf(attrs, xs[0], p.Shape(), nil, p, b, transposed); ok {
				return y, nil
			}
			return run(attrs, append([]spec.Tensor[T]{xs[0]}, params(ConvertPlane[T](p))...))
		}
	}
	ps := params(ConvertPlane[T](p))
	return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
		return run(attrs, append([]spec.Tensor[T]{xs[0]}, ps...))
	}
}

// layerNormStep evaluates layernorm(axis) as the registry's layer_norm on
// the [outer, inner] view of the input, inner = size(shape[axis:]), with
// γ and β (reshaped to [inner]) and ε from the payload: F.layer_norm with
// normalized_shape = shape[axis:], as TorchLean's 2-D view does.
func layerNormStep[T spec.Scalar[T]](run func(*spec.Attrs, []spec.Tensor[T]) (spec.Tensor[T], error),
	attrs *spec.Attrs, g *Graph, n *Node, e *Params) step[T] {
	xs := g.Nodes[n.Parents[0]].Shape
	outer, inner := prod(xs[:n.Kind.Axis]), prod(xs[n.Kind.Axis:])
	view := spec.Shape{outer, inner}
	attrs.Eps = spec.DefaultNormEps()
	if e.Eps != nil {
		attrs.Eps = e.Eps.Big()
	}
	var params []spec.Tensor[T]
	if e.Gamma != nil || e.Beta != nil {
		gamma := spec.Tensor[T]{Shape: spec.Shape{inner}}
		if e.Gamma != nil {
			gamma.Data = convertData[T](e.Gamma)
		} else {
			one := spec.One[T]()
			gamma.Data = make([]T, inner)
			for i := range gamma.Data {
				gamma.Data[i] = one
			}
		}
		params = append(params, gamma)
	}
	if e.Beta != nil {
		params = append(params, spec.Tensor[T]{Shape: spec.Shape{inner}, Data: convertData[T](e.Beta)})
	}
	out := n.Shape
	return func(in []spec.Tensor[T]) (spec.Tensor[T], error) {
		xs := append([]spec.Tensor[T]{{Shape: view, Data: in[0].Data}}, params...)
		y, err := run(attrs, xs)
		if err != nil {
			return spec.Tensor[T]{}, err
		}
		return spec.Tensor[T]{Shape: out.Clone(), Data: y.Data}, nil
	}
}

// checkInput verifies the input tensor against the input node.
func checkInput[T any](g *Graph, input spec.Tensor[T]) error {
	n := &g.Nodes[g.InputID]
	if len(input.Data) != input.Shape.Size() {
		return nodeErrf(n.ID, OpInput, "", "malformed input tensor: shape %v with %d values", input.Shape, len(input.Data))
	}
	if !input.Shape.Equal(n.Shape) {
		return nodeErrf(n.ID, OpInput, "", "shape mismatch: expected %v, got %v", n.Shape, input.Shape)
	}
	return nil
}

// checkResult verifies a node's value against its declared shape.
func checkResult[T any](n *Node, v spec.Tensor[T]) error {
	if !v.Shape.Equal(n.Shape) || len(v.Data) != n.Shape.Size() {
		return nodeErrf(n.ID, n.Kind.Op, "", "shape mismatch: expected %v, got %v (%d values)", n.Shape, v.Shape, len(v.Data))
	}
	return nil
}

// DenoteAll is the semantics of the canonical IR (TorchLean's
// NN.IR.Semantics.denoteAll) over any scalar T: it checks g (Graph.Check)
// and p against g (CheckPayload), then evaluates the nodes in id order,
// each with the spec registry rule of its tag (mul_elem is mul, max_elem
// max, layernorm layer_norm, linear linear with W and b from the payload,
// …) run through Prim.Apply, or with irsem's own generic rule for the tags
// the registry lacks. Payload values are converted with T.FromRat. Every
// result is checked against the node's declared shape ("node N (tag):
// shape mismatch: expected …, got …"). It returns the value of every node,
// indexed by id.
//
// matmul and every reduction are left folds from 0 (over spec.Interval,
// matmul, linear, conv and conv_transpose are instead the registry's
// dense midpoint-radius enclosures of package enclose: sound enclosures of
// the same exact values, not the fold's endpoints); layernorm defaults to
// γ = 1, β = 0, ε = 1/100000. safe_log with a const ε parent is the
// registry's safe_log (spec.SafeLogScalar, with ε the const converted to
// T); with a computed ε it is softplus, + ε, and the registry's raw log.
// Raw log on a value ≤ 0 and safe_log where softplus(x)+ε ≤ 0 (only a
// non-positive ε can do that) are the only data-dependent failures of the
// semantics, and every path — this one, the forward graph, the tape and
// the typed graph — fails at the same node and element; a scalar can add
// its own (over spec.Rat: division by an exact zero, the square root of a
// non-square).
// Over spec.Rat, tags without exact rational semantics (tanh, sigmoid,
// exp, log, sin, cos, softplus, safe_log, softmax, hard_masked_softmax)
// are rejected by name at their node. Every error is an *Error naming the
// node and its tag.
//
// Values may share storage with input and with each other (detach,
// reshape); treat them as read-only. The graph is never modified, so the
// same *Graph is interpreted over
// spec.Rat, spec.F32, spec.F64, spec.Binary32 or spec.Interval unchanged.
func DenoteAll[T spec.Scalar[T]](g *Graph, p *Payload, input spec.Tensor[T]) ([]spec.Tensor[T], error) {
	return denote(g, p, input, false)
}

// checkRatWork refuses, before anything is evaluated, a graph whose
// declared work (irsem.DeclaredWork summed over the nodes, as Check sums
// it against work) exceeds the rat-work limit: exact rational evaluation
// is where declared work costs most, so it has its own, lower, limit.
// The error names the first node at which the sum passes the limit.
func checkRatWork(g *Graph) error {
	lim := limits.Current().RatWork
	var work int64
	in := make([]spec.Shape, 0, 4)
	for i := range g.Nodes {
		n := &g.Nodes[i]
		in = in[:0]
		for _, p := range n.Parents {
			in = append(in, g.Nodes[p].Shape)
		}
		if work += DeclaredWork(n, in); work > lim || work < 0 {
			return &Error{Node: i, Op: string(n.Kind.Op), Elem: -1, Err: limits.Exceeded("rat-work", lim, "nodes 0…%d declare %d scalar operations, evaluated over exact rationals", i, satAdd(work))}
		}
	}
	return nil
}

// lastUses returns, per node id, the largest id of a node that reads it
// as a parent (−1 when none does).
func lastUses(g *Graph) []int {
	last := make([]int, len(g.Nodes))
	for i := range last {
		last[i] = -1
	}
	for i := range g.Nodes {
		for _, q := range g.Nodes[i].Parents {
			if q >= 0 && q < len(last) {
				last[q] = max(last[q], i)
			}
		}
	}
	return last
}

// denote is DenoteAll; with free, the value of a node other than the
// output is dropped from the table as soon as the last node that reads it
// has been computed (liveness from the graph), so that the garbage
// collector can reclaim it: peak memory is that of the live values, not
// of all of them. The values computed, their order, the checks and every
// error (the rat-bits-total count included) are the same either way.
// With more than one worker (GOMAXPROCS) and a graph with independent
// branches, the nodes run level by level on par's pool (denoteLevels):
// the same values; on any failure the sequential loop below runs and
// reports its error. Only spec's own value types run in parallel
// (levelSafe): another Scalar may carry process-wide state its rules
// update as they run — fpbound's value ids and its sweep's forward/VJP
// flags, a test scalar's shared random source — which a concurrent
// schedule would race on and whose results could then depend on the
// schedule.
func denote[T spec.Scalar[T]](g *Graph, p *Payload, input spec.Tensor[T], free bool) ([]spec.Tensor[T], error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if err := CheckPayload(g, p); err != nil {
		return nil, err
	}
	if err := checkInput(g, input); err != nil {
		return nil, err
	}
	if isRat[T]() {
		if err := checkRatWork(g); err != nil {
			return nil, err
		}
	}
	reg := spec.Default[T]()
	if par.Workers() > 1 && levelSafe[T]() {
		if lv, depth, wide := levels(g); wide {
			if vals, ok := denoteLevels(g, p, input, reg, free, lv, depth); ok {
				return vals, nil
			}
		}
	}
	vals := make([]spec.Tensor[T], len(g.Nodes))
	var last []int
	if free {
		last = lastUses(g)
	}
	// bits counts the rational bits of every value computed so far (a
	// value shared by two nodes counts twice: an upper bound), against
	// limits.RatBitsTotal.
	budget, bits := limits.Current().RatBitsTotal, int64(0)
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Kind.Op == OpInput {
			vals[i] = input
			continue
		}
		v, err := evalNode(g, p, reg, vals, i)
		if err != nil {
			return nil, err
		}
		if bits += spec.RatBitsOf(v); bits > budget {
			return nil, &Error{Node: i, Op: string(n.Kind.Op), Elem: -1, Err: limits.Exceeded("rat-bits-total", budget, "the values of nodes 0…%d hold %d bits", i, bits)}
		}
		vals[i] = v
		if free {
			for _, q := range n.Parents {
				if last[q] == i && q != g.OutputID {
					vals[q] = spec.Tensor[T]{}
				}
			}
		}
	}
	return vals, nil
}

// Denote is DenoteAll's value at the graph's output node. It frees each
// intermediate value once no later node reads it, so its peak memory is
// that of the values live at one time (a chain holds two), not of the
// whole table.
func Denote[T spec.Scalar[T]](g *Graph, p *Payload, input spec.Tensor[T]) (spec.Tensor[T], error) {
	vals, err := denote(g, p, input, true)
	if err != nil {
		return spec.Tensor[T]{}, err
	}
	return vals[g.OutputID], nil
}
