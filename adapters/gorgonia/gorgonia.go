// Package gorgonia is the harness adapter for gorgonia.org/gorgonia
// v0.9.18: it maps the registry's primitives to gorgonia's operations,
// builds each case graph in float64, and runs the engine's own forward
// and reverse mode on the loss Σ(y ⊙ c) on both of its machines:
//
//	tape  G.Grad (symbolic differentiation: gradient nodes added to the
//	      graph) compiled and run by the TapeMachine;
//	lisp  the LispMachine, which runs the forward pass and then its own
//	      automatic differentiation (each op's DoDiff), no G.Grad.
//
// The harness (package harness, its doc) judges every value. Where
// gorgonia has no single op for a primitive the adapter composes it from
// gorgonia's own ops (softplus is gorgonia's Softplus, but linear is
// Mul(x, Wᵀ) + BroadcastAdd(b), mse_loss Mean(Square(a − b)),
// layer_norm, gelu and clamp from elementwise ops): the gradient is
// still the engine's. Each composition is written next to its entry in
// ops and in FINDINGS.md. y is read with G.Read at the point it is
// computed: the tape machine overwrites some outputs in place during the
// backward pass (FINDINGS.md, finding 6).
//
// The conventions declared (Conventions) are gorgonia's relu′(0) = 1
// (Rectify "uses ⩾"), max pooling's tie rule (the window's first
// maximum takes the cotangent) and the tape machine's max/min tie rule
// (the whole cotangent to the first argument, minmaxSymDiff); the
// findings are in FINDINGS.md, each pinned by a regression test.
package gorgonia

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/tlcheck/tlcheck/adapters/harness"
	"github.com/tlcheck/tlcheck/spec"
)

// The machines.
const (
	Tape = "tape"
	Lisp = "lisp"
)

type engine struct{}

// New returns the gorgonia engine.
func New() harness.Engine { return engine{} }

func (engine) Name() string       { return "gorgonia" }
func (engine) Module() string     { return "gorgonia.org/gorgonia v0.9.18" }
func (engine) Machines() []string { return []string{Tape, Lisp} }

// Conventions: relu′(0) = 1; at a max-pooling tie the window's first
// maximum takes the cotangent; on ties of max/min the whole cotangent to
// the first argument.
func (engine) Conventions() []harness.Convention {
	return []harness.Convention{
		harness.ReluGE("gorgonia nn.go, Rectify: \"This function uses ⩾, which is the canonical version\" (x ⊙ (x ⩾ 0), differentiated through the product only)"),
		harness.MaxPoolFirst("gorgonia op_nn.go, maxPoolOp.f64s: the window is scanned row-major and \"if inData[i] > outData[poolIndex]\" (strict) records the index in the mask that the backward pass scatters to"),
		{Op: "max", Doc: "max′ at a tie: the whole cotangent to the first argument",
			Source: "gorgonia op_minmaxBetween.go, minmaxSymDiff: mask := Eq(a, out); gradA = grad ⊙ mask; gradB = grad − gradA",
			// a + relu(b − a): equal to max(a, b); at a = b its registry
			// derivative is 1 − relu′(0) = 1 for a, relu′(0) = 0 for b.
			Expand: func(*spec.Attrs) harness.Graph {
				return harness.Graph{Inputs: 2, Nodes: []harness.Node{{Op: "sub", Args: []int{1, 0}}, {Op: "relu", Args: []int{2}}, {Op: "add", Args: []int{0, 3}}}}
			}},
		{Op: "min", Doc: "min′ at a tie: the whole cotangent to the first argument",
			Source: "gorgonia op_minmaxBetween.go, minmaxSymDiff (shared by MinBetween and MaxBetween)",
			// a − relu(a − b): equal to min(a, b); at a = b its registry
			// derivative is 1 − 0 = 1 for a, 0 for b.
			Expand: func(*spec.Attrs) harness.Graph {
				return harness.Graph{Inputs: 2, Nodes: []harness.Node{{Op: "sub", Args: []int{0, 1}}, {Op: "relu", Args: []int{2}}, {Op: "sub", Args: []int{0, 3}}}}
			}},
	}
}

// builder builds one node in gorgonia from its arguments.
type builder func(g *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error)

// op is one mapped primitive: how to build it, and which attributes the
// mapping accepts (nil: any the registry accepts).
type op struct {
	build builder
	check func(a *spec.Attrs) error
}

func un(f func(*G.Node) (*G.Node, error)) builder {
	return func(_ *G.ExprGraph, _ *spec.Attrs, xs []*G.Node) (*G.Node, error) { return f(xs[0]) }
}

func bin(f func(a, b *G.Node) (*G.Node, error)) builder {
	return func(_ *G.ExprGraph, _ *spec.Attrs, xs []*G.Node) (*G.Node, error) { return f(xs[0], xs[1]) }
}

// ops maps registry primitives to gorgonia.
var ops = map[string]op{
	"neg":      {build: un(G.Neg)},
	"square":   {build: un(G.Square)},
	"abs":      {build: un(G.Abs)},
	"relu":     {build: un(G.Rectify)},
	"sigmoid":  {build: un(G.Sigmoid)},
	"tanh":     {build: un(G.Tanh)},
	"exp":      {build: un(G.Exp)},
	"log":      {build: un(G.Log)},
	"sqrt":     {build: un(G.Sqrt)},
	"inv":      {build: un(G.Inverse)},
	"sin":      {build: un(G.Sin)},
	"cos":      {build: un(G.Cos)},
	"softplus": {build: un(G.Softplus)},
	"add":      {build: bin(G.Add)},
	"sub":      {build: bin(G.Sub)},
	"mul":      {build: bin(G.HadamardProd)},
	"div":      {build: bin(G.HadamardDiv)},
	"max":      {build: bin(G.MaxBetween)},
	"min":      {build: bin(G.MinBetween)},
	"matmul":   {build: bin(G.Mul)},
	"sum":      {build: un(func(x *G.Node) (*G.Node, error) { return G.Sum(x) })},
	// scale: c·x as gorgonia's tensor-by-scalar product with the constant
	// fl64(c) (exact for the cases' dyadic c).
	"scale": {build: func(g *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		c, _ := a.C.Float64()
		return G.HadamardProd(xs[0], G.NewConstant(c))
	}, check: func(a *spec.Attrs) error { return need(a != nil && a.C != nil, "scale needs C") }},
	// clamp: MinBetween(hi, MaxBetween(lo, x)) with lo, hi constant
	// tensors first, so that at a bound the tie rule (the first argument
	// takes the cotangent) gives it to the constant: the engine's own
	// derivative there is then 0, as the registry's.
	"clamp": {build: func(g *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		lo, _ := a.Lo.Float64()
		hi, _ := a.Hi.Float64()
		m, err := G.MaxBetween(filled(g, xs[0].Shape(), lo), xs[0])
		if err != nil {
			return nil, err
		}
		return G.MinBetween(filled(g, xs[0].Shape(), hi), m)
	}, check: func(a *spec.Attrs) error {
		return need(a != nil && a.Lo != nil && a.Hi != nil, "clamp needs Lo and Hi")
	}},
	// reduce_sum, reduce_mean: Sum / Mean along one axis.
	"reduce_sum":  {build: axisOp(G.Sum), check: nonNegAxis},
	"reduce_mean": {build: axisOp(G.Mean), check: nonNegAxis},
	// linear: Mul(x, Wᵀ) + b broadcast over the rows (x rank 2).
	"linear": {build: func(g *G.ExprGraph, _ *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		if xs[0].Dims() != 2 || xs[1].Dims() != 2 || xs[2].Dims() != 1 {
			return nil, harness.Unsupportedf("gorgonia adapter: linear maps x[rows,in], W[out,in], b[out] only")
		}
		wt, err := G.Transpose(xs[1], 1, 0)
		if err != nil {
			return nil, err
		}
		y, err := G.Mul(xs[0], wt)
		if err != nil {
			return nil, err
		}
		return G.BroadcastAdd(y, xs[2], nil, []byte{0})
	}},
	// mse_loss: Mean(Square(a − b)).
	"mse_loss": {build: func(g *G.ExprGraph, _ *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		d, err := G.Sub(xs[0], xs[1])
		if err != nil {
			return nil, err
		}
		s, err := G.Square(d)
		if err != nil {
			return nil, err
		}
		return G.Mean(s)
	}},
	"reshape": {build: func(_ *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		return G.Reshape(xs[0], tensor.Shape(append([]int(nil), a.Shape...)))
	}, check: func(a *spec.Attrs) error {
		return need(a != nil && len(a.Shape) > 0, "gorgonia adapter: reshape to a rank-0 shape is not mapped")
	}},
	// flatten with Axis 0: Reshape to one axis (gorgonia's Ravel).
	"flatten": {build: un(G.Ravel), check: func(a *spec.Attrs) error {
		return need(a == nil || a.Axis == 0, "gorgonia adapter: flatten maps Axis 0 only (Ravel)")
	}},
	"transpose": {build: func(_ *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		perm := make([]int, xs[0].Dims())
		for i := range perm {
			perm[i] = i
		}
		if a.Axis < 0 || a.Axis2 < 0 || a.Axis >= len(perm) || a.Axis2 >= len(perm) {
			return nil, fmt.Errorf("gorgonia adapter: transpose axes %d, %d out of range", a.Axis, a.Axis2)
		}
		perm[a.Axis], perm[a.Axis2] = perm[a.Axis2], perm[a.Axis]
		return G.Transpose(xs[0], perm...)
	}, check: func(a *spec.Attrs) error { return need(a != nil, "transpose needs axes") }},
	"permute": {build: func(_ *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		return G.Transpose(xs[0], a.Perm...)
	}, check: func(a *spec.Attrs) error { return need(a != nil && len(a.Perm) > 0, "permute needs Perm") }},
	// broadcast_to: BroadcastAdd of x (padded to the target's rank by
	// Reshape) and a zero constant of the target shape, repeating x along
	// its axes of size 1.
	"broadcast_to": {build: func(g *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		x, to := xs[0], a.Shape
		s := x.Shape()
		if len(s) > len(to) {
			return nil, fmt.Errorf("gorgonia adapter: broadcast_to from rank %d to %d", len(s), len(to))
		}
		if len(s) < len(to) {
			padded := make(tensor.Shape, len(to))
			for i := range padded {
				padded[i] = 1
			}
			copy(padded[len(to)-len(s):], s)
			var err error
			if x, err = G.Reshape(x, padded); err != nil {
				return nil, err
			}
			s = padded
		}
		var pat []byte
		for i := range to {
			if s[i] == 1 && to[i] != 1 {
				pat = append(pat, byte(i))
			} else if s[i] != to[i] {
				return nil, fmt.Errorf("gorgonia adapter: cannot broadcast %v to %v", s, to)
			}
		}
		if len(pat) == 0 {
			return x, nil
		}
		// The zeros are a leaf of g (Broadcast needs its operands in a
		// graph, which a free constant is not); no gradient is read.
		zeros := G.NewTensor(g, tensor.Float64, len(to), G.WithName("broadcast_zeros"),
			G.WithValue(tensor.New(tensor.WithShape(append([]int(nil), to...)...), tensor.WithBacking(make([]float64, tensor.Shape(to).TotalSize())))))
		return G.BroadcastAdd(x, zeros, pat, nil)
	}, check: func(a *spec.Attrs) error { return need(a != nil && len(a.Shape) > 0, "broadcast_to needs a shape") }},
	// slice: Slice with S(start, end) on the axis, nil on the others.
	"slice": {build: func(_ *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		if a.Axis < 0 || a.Axis >= xs[0].Dims() {
			return nil, fmt.Errorf("gorgonia adapter: slice axis %d out of range", a.Axis)
		}
		sl := make([]tensor.Slice, a.Axis+1)
		sl[a.Axis] = G.S(a.Start, a.End)
		return G.Slice(xs[0], sl...)
	}, check: func(a *spec.Attrs) error {
		if a == nil {
			return fmt.Errorf("slice needs attributes")
		}
		return need(a.End-a.Start > 1, "gorgonia adapter: a slice of width 1 drops the axis in gorgonia; not mapped")
	}},
	"concat": {build: func(_ *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		return G.Concat(a.Axis, xs...)
	}, check: nonNegAxis},
	"softmax":     {build: axisOp1(G.SoftMax), check: nonNegAxis},
	"log_softmax": {build: axisOp1(G.LogSoftMax), check: nonNegAxis},
	// layer_norm (no γ, β): (x − μ)·InverseSqrt(σ² + ε) with μ, σ² means
	// along the last axis, from gorgonia's Mean, BroadcastSub, Square,
	// BroadcastHadamardProd and InverseSqrt.
	"layer_norm": {build: layerNorm, check: func(a *spec.Attrs) error { return need(a != nil && a.Eps != nil, "layer_norm needs Eps") }},
	// gelu (tanh form): x/2 · (1 + tanh(k·(x + a·x³))), k = fl64(√(2/π)),
	// a = fl64(0.044715), with Cube, Tanh and scalar products.
	"gelu":     {build: gelu},
	"conv":     {build: conv, check: checkConv},
	"max_pool": {build: pool(G.MaxPool2D), check: checkPool},
	"avg_pool": {build: pool(G.AveragePool2D), check: checkPool},
}

func need(ok bool, why string) error {
	if ok {
		return nil
	}
	return fmt.Errorf("%s", why)
}

func nonNegAxis(a *spec.Attrs) error {
	return need(a == nil || a.Axis >= 0, "gorgonia adapter: negative axes are not mapped")
}

func axisOp(f func(*G.Node, ...int) (*G.Node, error)) builder {
	return func(_ *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) { return f(xs[0], a.Axis) }
}

func axisOp1(f func(*G.Node, ...int) (*G.Node, error)) builder {
	return func(_ *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		ax := 0
		if a != nil {
			ax = a.Axis
		}
		return f(xs[0], ax)
	}
}

// filled is a float64 constant tensor of shape s with every element v.
func filled(g *G.ExprGraph, s tensor.Shape, v float64) *G.Node {
	n := s.TotalSize()
	d := make([]float64, n)
	for i := range d {
		d[i] = v
	}
	return G.NewConstant(tensor.New(tensor.WithShape(s.Clone()...), tensor.WithBacking(d)))
}

func layerNorm(g *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
	x := xs[0]
	if x.Dims() != 2 || a.Axis != 1 {
		return nil, harness.Unsupportedf("gorgonia adapter: layer_norm maps rank-2 inputs over axis 1 only")
	}
	eps, _ := a.Eps.Float64()
	mu, err := G.Mean(x, 1)
	if err != nil {
		return nil, err
	}
	d, err := G.BroadcastSub(x, mu, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(d)
	if err != nil {
		return nil, err
	}
	v, err := G.Mean(sq, 1)
	if err != nil {
		return nil, err
	}
	ve, err := G.Add(v, G.NewConstant(eps))
	if err != nil {
		return nil, err
	}
	r, err := G.InverseSqrt(ve)
	if err != nil {
		return nil, err
	}
	return G.BroadcastHadamardProd(d, r, nil, []byte{1})
}

func gelu(g *G.ExprGraph, _ *spec.Attrs, xs []*G.Node) (*G.Node, error) {
	x := xs[0]
	c3, err := G.Cube(x)
	if err != nil {
		return nil, err
	}
	ac3, err := G.HadamardProd(c3, G.NewConstant(0.044715))
	if err != nil {
		return nil, err
	}
	u, err := G.Add(x, ac3)
	if err != nil {
		return nil, err
	}
	ku, err := G.HadamardProd(u, G.NewConstant(math.Sqrt(2/math.Pi)))
	if err != nil {
		return nil, err
	}
	t, err := G.Tanh(ku)
	if err != nil {
		return nil, err
	}
	t1, err := G.Add(t, G.NewConstant(1.0))
	if err != nil {
		return nil, err
	}
	hx, err := G.HadamardProd(x, G.NewConstant(0.5))
	if err != nil {
		return nil, err
	}
	return G.HadamardProd(hx, t1)
}

func checkWindow(a *spec.Attrs) error {
	if a == nil || a.Window == nil {
		return fmt.Errorf("needs a window")
	}
	w := a.Window
	if len(w.Kernel) != 2 {
		return fmt.Errorf("gorgonia adapter: %d-d windows are not mapped (2-d only)", len(w.Kernel))
	}
	if len(w.Stride) != 2 {
		return fmt.Errorf("gorgonia adapter: stride of length %d", len(w.Stride))
	}
	if len(w.Pads) != 0 && len(w.Pads) != 4 {
		return fmt.Errorf("gorgonia adapter: pads of length %d", len(w.Pads))
	}
	return nil
}

// pads2 converts the registry's pads (begin h, begin w, end h, end w, as
// ONNX) to gorgonia's symmetric [h, w], refusing asymmetric ones.
func pads2(w *spec.Window) ([]int, error) {
	if len(w.Pads) == 0 {
		return []int{0, 0}, nil
	}
	if w.Pads[0] != w.Pads[2] || w.Pads[1] != w.Pads[3] {
		return nil, fmt.Errorf("gorgonia adapter: asymmetric pads %v are not mapped", w.Pads)
	}
	return []int{w.Pads[0], w.Pads[1]}, nil
}

func checkConv(a *spec.Attrs) error {
	if err := checkWindow(a); err != nil {
		return err
	}
	w := a.Window
	if w.Groups > 1 {
		return fmt.Errorf("gorgonia has no grouped convolution (groups %d)", w.Groups)
	}
	if len(w.Dilation) != 0 && len(w.Dilation) != 2 {
		return fmt.Errorf("gorgonia adapter: dilation of length %d", len(w.Dilation))
	}
	_, err := pads2(w)
	return err
}

func checkPool(a *spec.Attrs) error {
	if err := checkWindow(a); err != nil {
		return err
	}
	if a.Window.CeilMode {
		return fmt.Errorf("gorgonia adapter: ceil-mode pooling is not mapped")
	}
	if len(a.Window.Dilation) != 0 {
		for _, d := range a.Window.Dilation {
			if d != 1 {
				return fmt.Errorf("gorgonia has no dilated pooling")
			}
		}
	}
	_, err := pads2(a.Window)
	return err
}

func conv(_ *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
	w := a.Window
	pad, err := pads2(w)
	if err != nil {
		return nil, err
	}
	dil := []int{1, 1}
	if len(w.Dilation) == 2 {
		dil = w.Dilation
	}
	if xs[1].Dims() != 4 {
		return nil, fmt.Errorf("gorgonia adapter: conv filter of rank %d", xs[1].Dims())
	}
	return G.Conv2d(xs[0], xs[1], tensor.Shape{w.Kernel[0], w.Kernel[1]}, pad, append([]int(nil), w.Stride...), dil)
}

func pool(f func(*G.Node, tensor.Shape, []int, []int) (*G.Node, error)) builder {
	return func(_ *G.ExprGraph, a *spec.Attrs, xs []*G.Node) (*G.Node, error) {
		w := a.Window
		pad, err := pads2(w)
		if err != nil {
			return nil, err
		}
		return f(xs[0], tensor.Shape{w.Kernel[0], w.Kernel[1]}, pad, append([]int(nil), w.Stride...))
	}
}

// Supports reports whether the primitive is mapped, with these
// attributes.
func (engine) Supports(name string, a *spec.Attrs) error {
	o, ok := ops[name]
	if !ok {
		return fmt.Errorf("gorgonia adapter: %s is not mapped (gorgonia v0.9.18 has no such op)", name)
	}
	if o.check != nil {
		return o.check(a)
	}
	return nil
}

// Run builds g on a fresh gorgonia graph, runs machine m and returns y
// and the gradient of Σ(y ⊙ cot) with respect to every input.
func (engine) Run(m string, hg harness.Graph, xs []harness.Tensor64, cot harness.Tensor64) (y harness.Tensor64, grads []harness.Tensor64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia panicked: %v", r)
		}
	}()
	if m != Tape && m != Lisp {
		return y, nil, fmt.Errorf("gorgonia: unknown machine %q", m)
	}
	if err := hg.Check(); err != nil {
		return y, nil, err
	}
	if len(xs) != hg.Inputs {
		return y, nil, fmt.Errorf("gorgonia: %d inputs for a graph of %d", len(xs), hg.Inputs)
	}
	for i, r := range hg.Reached() {
		if !r {
			// G.Grad: "Non Differentiable WRTs"; the lisp machine fails
			// checkRoots. A refusal, not a wrong value (FINDINGS.md).
			return y, nil, harness.Unsupportedf("gorgonia refuses the gradient with respect to input %d, which the output does not depend on", i)
		}
	}
	for j, n := range hg.Nodes {
		if m == Lisp && guardLispBroadcast && n.Op == "broadcast_to" && n.Attrs != nil && len(n.Attrs.Shape) == 1 && n.Attrs.Shape[0] > 1 &&
			size(argShape(hg, xs, n.Args[0])) == 1 {
			// Not run: the lisp machine would panic in its own goroutine,
			// where nothing can recover it (FINDINGS.md, gorgonia finding
			// 9; TestFindingLispBroadcastOneExits runs it in a child
			// process).
			return y, nil, fmt.Errorf("gorgonia: node %d: the lisp machine panics, in a goroutine nothing can recover, differentiating the broadcast of a one-element value to a vector (repeatOp.DoDiff: interface conversion: *gorgonia.F64 is not tensor.Tensor); not run", j)
		}
		if n.Op == "max" || n.Op == "min" || n.Op == "clamp" {
			if len(argShape(hg, xs, n.Args[0])) == 0 {
				// MaxBetween/MinBetween have no scalar kernel: "Cannot
				// perform MaxBetween of *gorgonia.F64 and *gorgonia.F64"
				// (and clamp's bounds do not unify with a scalar).
				return y, nil, harness.Unsupportedf("gorgonia: node %d: MaxBetween/MinBetween of scalars are not implemented in gorgonia v0.9.18", j)
			}
		}
		if n.Op == "matmul" {
			for _, a := range n.Args {
				if r := len(argShape(hg, xs, a)); r > 2 {
					return y, nil, harness.Unsupportedf("gorgonia: node %d: Mul of rank-%d operands is not implemented in gorgonia v0.9.18 (\"Mul not yet implemented\")", j, r)
				}
			}
		}
	}
	g := G.NewGraph()
	vals := make([]*G.Node, 0, hg.Inputs+len(hg.Nodes))
	for i, x := range xs {
		vals = append(vals, leaf(g, fmt.Sprintf("x%d", i), x))
	}
	for j, n := range hg.Nodes {
		o, ok := ops[n.Op]
		if !ok {
			return y, nil, fmt.Errorf("gorgonia: node %d: %s is not mapped", j, n.Op)
		}
		args := make([]*G.Node, len(n.Args))
		for k, a := range n.Args {
			args[k] = vals[a]
		}
		a := n.Attrs
		if a == nil {
			a = &spec.Attrs{}
		}
		v, err := o.build(g, a, args)
		if err != nil {
			return y, nil, fmt.Errorf("gorgonia: node %d (%s): %w", j, n.Op, err)
		}
		vals = append(vals, v)
	}
	out := vals[len(vals)-1]
	// The tape machine computes in place: after RunAll, out.Value() may
	// hold a later op's result (y ⊙ cot). Read copies y when it is
	// computed, as gorgonia documents for reading values out.
	var yv G.Value
	G.Read(out, &yv)
	c := leaf(g, "cot", cot)
	prod, err := G.HadamardProd(out, c)
	if err != nil {
		return y, nil, fmt.Errorf("gorgonia: loss: %w", err)
	}
	loss := prod
	if !prod.IsScalar() {
		if loss, err = G.Sum(prod); err != nil {
			return y, nil, fmt.Errorf("gorgonia: loss: %w", err)
		}
	}
	var vm G.VM
	inputs := vals[:hg.Inputs]
	if m == Tape {
		if _, err := G.Grad(loss, inputs...); err != nil {
			return y, nil, fmt.Errorf("gorgonia: Grad: %w", err)
		}
		vm = G.NewTapeMachine(g)
	} else {
		vm = G.NewLispMachine(g)
	}
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return y, nil, fmt.Errorf("gorgonia: %s machine: %w", m, err)
	}
	if y, err = tensor64(yv); err != nil {
		return y, nil, fmt.Errorf("gorgonia: output: %w", err)
	}
	for i, n := range inputs {
		gv, err := n.Grad()
		if err != nil {
			return y, nil, fmt.Errorf("gorgonia: ∂/∂x%d: %w", i, err)
		}
		t, err := tensor64(gv)
		if err != nil {
			return y, nil, fmt.Errorf("gorgonia: ∂/∂x%d: %w", i, err)
		}
		if len(t.Data) != len(xs[i].Data) {
			return y, nil, fmt.Errorf("gorgonia: ∂/∂x%d has %d elements for an input of %d", i, len(t.Data), len(xs[i].Data))
		}
		t.Shape = append([]int(nil), xs[i].Shape...)
		grads = append(grads, t)
	}
	return y, grads, nil
}

// leaf is an input (or the cotangent) holding a copy of t: a scalar node
// for rank 0, a tensor node otherwise.
func leaf(g *G.ExprGraph, name string, t harness.Tensor64) *G.Node {
	if len(t.Shape) == 0 {
		return G.NewScalar(g, tensor.Float64, G.WithName(name), G.WithValue(t.Data[0]))
	}
	d := append([]float64(nil), t.Data...)
	return G.NewTensor(g, tensor.Float64, len(t.Shape), G.WithName(name), G.WithShape(t.Shape...),
		G.WithValue(tensor.New(tensor.WithShape(append([]int(nil), t.Shape...)...), tensor.WithBacking(d))))
}

// tensor64 copies a gorgonia value (a float64 tensor or scalar) out.
func tensor64(v G.Value) (harness.Tensor64, error) {
	switch v := v.(type) {
	case nil:
		return harness.Tensor64{}, fmt.Errorf("no value")
	case *G.F64:
		return harness.Tensor64{Shape: []int{}, Data: []float64{float64(*v)}}, nil
	case tensor.Tensor:
		switch d := v.Data().(type) {
		case []float64:
			shape := []int(v.Shape().Clone())
			if v.Shape().IsScalar() {
				shape = []int{}
			}
			// A tensor view (a transpose or slice left unmaterialised)
			// is read in its logical order.
			if v.RequiresIterator() {
				out := make([]float64, 0, v.Shape().TotalSize())
				it := v.Iterator()
				for i, err := it.Start(); err == nil; i, err = it.Next() {
					out = append(out, d[i])
				}
				return harness.Tensor64{Shape: shape, Data: out}, nil
			}
			return harness.Tensor64{Shape: shape, Data: append([]float64(nil), d...)}, nil
		case float64:
			return harness.Tensor64{Shape: []int{}, Data: []float64{d}}, nil
		default:
			return harness.Tensor64{}, fmt.Errorf("data of type %T", d)
		}
	default:
		return harness.Tensor64{}, fmt.Errorf("value of type %T", v)
	}
}

// argShape is the shape of value a of hg at inputs xs, from the
// registry's shape rules (nil when it cannot be inferred).
// guardLispBroadcast keeps Run from running the lisp machine on a
// broadcast of one element to a vector, which panics in the machine's
// own goroutine and ends the process; a regression test turns it off in
// a child process to show the panic is still there.
var guardLispBroadcast = true

// size is the number of elements of a tensor of shape s (1 for a
// scalar).
func size(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func argShape(hg harness.Graph, xs []harness.Tensor64, a int) []int {
	shapes, err := hg.ValueShapes(inputShapes(xs))
	if err != nil || a >= len(shapes) {
		return nil
	}
	return []int(shapes[a])
}

// inputShapes are zero tensors of the inputs' shapes (ValueShapes reads
// only shapes).
func inputShapes(xs []harness.Tensor64) []spec.Tensor[spec.Rat] {
	out := make([]spec.Tensor[spec.Rat], len(xs))
	for i, x := range xs {
		out[i], _ = spec.Zeros[spec.Rat](spec.Shape(x.Shape))
	}
	return out
}
