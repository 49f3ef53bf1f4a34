package spago

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sync"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn/convolution"

	"github.com/tlcheck/tlcheck/adapters/harness"
	"github.com/tlcheck/tlcheck/spec"
)

// Module is the engine module and version this adapter is built against.
const Module = "github.com/nlpodyssey/spago v1.1.0"

// The machines: ag's default execution, where some operators (Add,
// Affine, MulT, ProdScalar, ReLU) run their forward in goroutines, and
// the same graph with ag.SetForceSyncExecution(true). Both run ag's
// concurrent backward (one goroutine per operator).
const (
	MachineAsync = "async"
	MachineSync  = "sync"
)

// runMu serializes Run: ag.SetForceSyncExecution is a package variable
// of ag, so two machines cannot run at once in one process.
var runMu sync.Mutex

type engine struct{}

// New returns the spago engine: registry primitives mapped to spago's ag
// operators over mat.Dense[float64], on the machines "async" and "sync".
func New() harness.Engine { return engine{} }

func (engine) Name() string       { return "spago" }
func (engine) Module() string     { return Module }
func (engine) Machines() []string { return []string{MachineAsync, MachineSync} }

// Conventions: spago's ReLU derivative is `v >= 0.0 ? 1 : 0`
// (mat/gradfn/misc.go, reluDeriv), relu′(0) = 1. abs′(0) = 0 (absDeriv,
// "return 0 // undefined") is tlcheck's own convention, and clamp built
// from ag.Max/ag.Min against constants has derivative 0 at the bounds,
// tlcheck's too. MaxPooling gives a tie to the window's first maximum
// (declared below, firstMaxPool). Max and Min at ties give the cotangent
// to neither argument: a finding, not a convention (FINDINGS.md).
func (engine) Conventions() []harness.Convention {
	return []harness.Convention{
		harness.ReluGE("spago v1.1.0 mat/gradfn/misc.go, reluDeriv: `if v >= 0.0 { return 1.0 }`"),
		{Op: "max_pool", Doc: "max_pool′ at a tie: the whole cotangent to the first maximal element in row-major window order",
			Source: "spago v1.1.0 mat/gradfn/maxpooling.go, MaxPooling.Forward: `if val > maximum` keeps the first maximum as argmax",
			Expand: firstMaxPool},
	}
}

// firstMaxPool is 2-d max pooling of one channel whose derivative at a
// tie gives the whole cotangent to the first maximal element of the
// window in row-major order, in registry primitives: the window's k-th
// element of every window is conv(x, e_k) with the one-hot kernel e_k
// (a const) and the pool's stride, and the running maximum is
// m ← m + relu(e_k − m), whose registry derivative at e_k = m is 1 for m
// and 0 for e_k (relu′(0) = 0): the earlier element keeps the cotangent.
// Its forward is max pooling exactly (every conv sums one product by 1
// and zeros).
func firstMaxPool(a *spec.Attrs) harness.Graph {
	k, st := a.Window.Kernel, a.Window.Stride
	g := harness.Graph{Inputs: 1}
	if len(k) != 2 || len(st) != 2 { // not spago's (Supports refuses it): the node itself
		g.Nodes = []harness.Node{{Op: "max_pool", Attrs: a, Args: []int{0}}}
		return g
	}
	cw := &spec.Window{Kernel: slices.Clone(k), Stride: slices.Clone(st), Pads: make([]int, 2*len(k)), Dilation: []int{1, 1}, Groups: 1}
	add := func(op string, at *spec.Attrs, args ...int) int {
		g.Nodes = append(g.Nodes, harness.Node{Op: op, Attrs: at, Args: args})
		return g.Inputs + len(g.Nodes) - 1
	}
	n := 1
	for _, d := range k {
		n *= d
	}
	m := -1
	for idx := 0; idx < n; idx++ {
		vs := make([]*big.Rat, n)
		for i := range vs {
			vs[i] = new(big.Rat)
		}
		vs[idx].SetInt64(1)
		kern := add("const", &spec.Attrs{Shape: spec.Shape{1, 1, k[0], k[1]}, Values: vs})
		e := add("conv", &spec.Attrs{Window: cw}, 0, kern)
		if m < 0 {
			m = e
			continue
		}
		m = add("add", nil, m, add("relu", nil, add("sub", nil, e, m)))
	}
	return g
}

// Supports reports whether the registry primitive op with attributes a
// maps to spago (shapes are checked by Run: spago's matrices are rank 2).
func (engine) Supports(op string, a *spec.Attrs) error {
	if a == nil {
		a = &spec.Attrs{}
	}
	switch op {
	case "neg", "square", "abs", "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "inv", "sin", "cos", "softplus", "gelu",
		"add", "sub", "mul", "div", "max", "min", "matmul", "linear", "sum", "reduce_sum", "reduce_mean", "mse_loss",
		"reshape", "flatten", "broadcast_to", "slice", "concat", "softmax", "log_softmax":
		return nil
	case "scale":
		if a.C == nil {
			return errors.New("spago: scale without a factor")
		}
		if _, err := exact64(a.C, "scale factor"); err != nil {
			return err
		}
		return nil
	case "clamp":
		if a.Lo == nil || a.Hi == nil {
			return errors.New("spago: clamp needs both bounds (built as Min(Max(x, lo), hi))")
		}
		for _, r := range []*big.Rat{a.Lo, a.Hi} {
			if _, err := exact64(r, "clamp bound"); err != nil {
				return err
			}
		}
		return nil
	case "transpose":
		if !(a.Axis == 0 && a.Axis2 == 1 || a.Axis == 1 && a.Axis2 == 0) {
			return fmt.Errorf("spago has only the matrix transpose T (axes 0 and 1), not axes %d and %d", a.Axis, a.Axis2)
		}
		return nil
	case "layer_norm":
		if a.Eps == nil {
			return errors.New("spago: layer_norm without eps")
		}
		return nil
	case "conv", "max_pool", "avg_pool":
		return supportsWindow(op, a.Window)
	case "permute":
		return errors.New("spago's tensors are matrices (rank ≤ 2): no permute of a rank-3 tensor")
	case "detach":
		return nil // ag.StopGrad
	case "shrink":
		_, err := softShrinkLambda(a)
		return err
	case "gather":
		if len(a.IndicesShape) != 1 || a.Axis < 0 || a.Axis > 1 {
			return errors.New("spago: gather of a vector of indices along axis 0 or 1 only (At, RowView)")
		}
		return nil
	case "sign":
		return errors.New("spago has no sign operator")
	}
	return fmt.Errorf("spago: no mapping for %q", op)
}

// supportsWindow reports whether the windowed op (conv, max_pool,
// avg_pool) with window w maps to spago.
func supportsWindow(op string, w *spec.Window) error {
	switch op {
	case "conv":
		if w == nil || w.Groups > 1 || !allEq(w.Pads, 0) || !allEq(w.Dilation, 1) || len(w.Stride) != 2 {
			return errors.New("spago has only Conv2D on one channel, no padding, no dilation, one group (nn/convolution.Conv2D)")
		}
		return nil
	case "max_pool", "avg_pool":
		if w == nil || len(w.Kernel) != 2 || len(w.Stride) != 2 || !allEq(w.Pads, 0) || !allEq(w.Dilation, 1) || w.CeilMode {
			return fmt.Errorf("spago: %s only 2-d, no padding, no dilation, floor mode", op)
		}
		if op == "max_pool" && !slices.Equal(w.Kernel, w.Stride) {
			return errors.New("spago's MaxPooling has stride = kernel (non-overlapping windows) only")
		}
		return nil
	}
	return fmt.Errorf("spago: no mapping for %q", op)
}

// softShrinkLambda is λ for a shrink that is spago's SoftShrink: ONNX
// Shrink with bias = λ (the registry's defaults: λ = 1/2, bias = 0).
func softShrinkLambda(a *spec.Attrs) (float64, error) {
	l, b := big.NewRat(1, 2), new(big.Rat)
	if a.Lambd != nil {
		l = a.Lambd
	}
	if a.Bias != nil {
		b = a.Bias
	}
	if l.Cmp(b) != 0 {
		return 0, fmt.Errorf("spago's SoftShrink is shrink with bias = λ, not λ = %s, bias = %s", l.RatString(), b.RatString())
	}
	return exact64(l, "shrink λ")
}

func allEq(xs []int, v int) bool {
	for _, x := range xs {
		if x != v {
			return false
		}
	}
	return true
}

func exact64(r *big.Rat, what string) (float64, error) {
	f, ok := r.Float64()
	if !ok {
		return 0, fmt.Errorf("spago: %s %s is not a binary64 number", what, r.RatString())
	}
	return f, nil
}

// val is one value of the graph in spago: t has the matrix dimensions
// dims(shape) of its registry shape.
type val struct {
	t     mat.Tensor
	shape spec.Shape
}

// dims maps a registry shape to spago's matrix dimensions: a scalar is
// 1×1, a vector of n is the column vector n×1, a matrix is itself, and a
// higher rank whose leading dimensions are 1 ([1, 1, H, W]) is H×W.
func dims(s spec.Shape) (int, int, error) {
	switch len(s) {
	case 0:
		return 1, 1, nil
	case 1:
		return s[0], 1, nil
	}
	for _, d := range s[:len(s)-2] {
		if d != 1 {
			return 0, 0, harness.Unsupportedf("spago's tensors are matrices: shape %v has a leading dimension %d ≠ 1", s, d)
		}
	}
	return s[len(s)-2], s[len(s)-1], nil
}

func dense(data []float64, r, c int, grad bool) *mat.Dense[float64] {
	return mat.NewDense[float64](mat.WithShape(r, c), mat.WithBacking(slices.Clone(data)), mat.WithGrad(grad))
}

func scalar(v float64) mat.Tensor { return mat.Scalar(v) }

// Run builds g in spago, seeds the output's gradient with cot (ag's
// documented way to start back-propagation from a non-scalar: "If the
// tensors already has gradients (likely assigned externally via
// node.AccGrads()), those gradients are used"), runs ag.Backward and
// reads every input's accumulated gradient (nil means zero, as ag's
// Tensor.Grad documents).
//
// ag reports an error inside a forward or backward with log.Fatalf and
// runs the backward in goroutines, where a panic cannot be recovered:
// Run therefore checks every shape with the registry's shape rules and
// its own before it builds anything, and checks after each operator
// that the engine's value has the dimensions the adapter expects, so
// that ag never sees operands it would reject; before the backward it
// checks the operands of every ag.Log (build.check).
func (engine) Run(machine string, g harness.Graph, xs []harness.Tensor64, cot harness.Tensor64) (y harness.Tensor64, grads []harness.Tensor64, err error) {
	if machine != MachineAsync && machine != MachineSync {
		return y, nil, fmt.Errorf("spago: unknown machine %q", machine)
	}
	if len(xs) != g.Inputs {
		return y, nil, fmt.Errorf("spago: %d inputs for a graph of %d", len(xs), g.Inputs)
	}
	if err := g.Check(); err != nil {
		return y, nil, err
	}
	runMu.Lock()
	defer runMu.Unlock()
	ag.SetForceSyncExecution(machine == MachineSync)
	defer ag.SetForceSyncExecution(false)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("spago panicked: %v", r)
		}
	}()

	reg := spec.Default[spec.Rat]()
	var b build
	vals := make([]val, 0, g.Inputs+len(g.Nodes))
	leaves := make([]*mat.Dense[float64], len(xs))
	for i, x := range xs {
		s := spec.Shape(x.Shape)
		n, err := s.Check(0)
		if err != nil || n != len(x.Data) {
			return y, nil, fmt.Errorf("spago: input %d: shape %v for %d values", i, x.Shape, len(x.Data))
		}
		if n == 0 {
			return y, nil, fmt.Errorf("spago: input %d is empty", i)
		}
		r, c, err := dims(s)
		if err != nil {
			return y, nil, fmt.Errorf("input %d: %w", i, err)
		}
		leaves[i] = dense(x.Data, r, c, true)
		vals = append(vals, val{t: leaves[i], shape: s.Clone()})
	}
	for j, n := range g.Nodes {
		args := make([]val, len(n.Args))
		shapes := make([]spec.Shape, len(n.Args))
		for k, a := range n.Args {
			args[k] = vals[a]
			shapes[k] = vals[a].shape
		}
		p, _ := reg.Lookup(n.Op) // g.Check found it
		out, err := p.InferShape(n.Attrs, shapes)
		if err != nil {
			return y, nil, fmt.Errorf("node %d (%s): %w", j, n.Op, err)
		}
		if err := engine.Supports(engine{}, n.Op, n.Attrs); err != nil {
			return y, nil, fmt.Errorf("node %d: %w", j, err)
		}
		r, c, err := dims(out)
		if err != nil {
			return y, nil, fmt.Errorf("node %d (%s): %w", j, n.Op, err)
		}
		t, err := apply(n.Op, n.Attrs, args, out, &b)
		if err != nil {
			return y, nil, fmt.Errorf("node %d (%s): %w", j, n.Op, err)
		}
		if got := t.Value().Shape(); got[0] != r || got[1] != c {
			return y, nil, fmt.Errorf("node %d (%s): spago's value is %d×%d, the adapter expects %d×%d for shape %v", j, n.Op, got[0], got[1], r, c, out)
		}
		vals = append(vals, val{t: t, shape: out})
	}
	last := vals[len(vals)-1]
	if !slices.Equal(cot.Shape, []int(last.shape)) {
		return y, nil, fmt.Errorf("spago: cotangent of shape %v for an output of shape %v", cot.Shape, last.shape)
	}
	r, c, _ := dims(last.shape)
	out, ok := last.t.(*ag.Operator)
	if !ok {
		return y, nil, errors.New("spago: the output is not an operator")
	}
	y = harness.Tensor64{Shape: slices.Clone([]int(last.shape)), Data: slices.Clone(mat.Data[float64](out.Value()))}
	if err := b.check(); err != nil {
		return y, nil, err
	}
	out.AccGrad(dense(cot.Data, r, c, false))
	if err := ag.Backward(out); err != nil {
		return y, nil, fmt.Errorf("spago: backward: %w", err)
	}
	for i, l := range leaves {
		gr := l.Grad()
		g := harness.Tensor64{Shape: slices.Clone(xs[i].Shape), Data: make([]float64, len(xs[i].Data))}
		if gr != nil && !isNilTensor(gr) {
			gd := mat.Data[float64](gr)
			if len(gd) != len(g.Data) {
				return y, nil, fmt.Errorf("spago: ∂/∂x%d has %d values for %d elements", i, len(gd), len(g.Data))
			}
			copy(g.Data, gd)
		}
		grads = append(grads, g)
	}
	return y, grads, nil
}

// build collects what Run must check between spago's forward and its
// backward.
type build struct {
	// logs are the operands of every ag.Log: its backward panics, in a
	// goroutine where nothing can recover it, on a negative or NaN
	// element (mat/gradfn/log.go, safeLogDeriv: "ag: invalid log for
	// negative values"), though its forward returns NaN quietly.
	logs []mat.Tensor
}

func (b *build) check() error {
	for _, l := range b.logs {
		for k, v := range mat.Data[float64](l.Value()) {
			if !(v >= 0) {
				return fmt.Errorf("spago: Log of %v (element %d): spago's Log backward would panic in a goroutine and end the process", v, k)
			}
		}
	}
	return nil
}

func isNilTensor(t mat.Tensor) bool {
	d, ok := t.(*mat.Dense[float64])
	return ok && d == nil
}

// colVec is x as a column vector (n×1), through ag.Reshape when it is not
// one already: spago's ReduceSum and ReduceMean return an n×1 gradient
// whatever their operand's dimensions (mat/gradfn/reducesum.go), which the
// operand's producer rejects unless the operand is n×1.
func colVec(x mat.Tensor) mat.Tensor {
	s := x.Value().Shape()
	if s[1] == 1 {
		return x
	}
	return ag.Reshape(x, s[0]*s[1], 1)
}

// onColumns applies f to xs (matrices of one shape) as column vectors
// and returns the result in their shape: spago's Max and Min build their
// gradients WithBacking and no shape, an n×1 column whatever their
// operands' dimensions (mat/gradfn/max.go, min.go: x1v.NewMatrix(
// mat.WithBacking(gxData))), and when an operand is an operator's output
// whose backward checks dimensions (Transpose, Reshape) ag ends the
// process (log.Fatalf "fn: matrices have incompatible dimensions";
// FINDINGS.md, spago finding 9). On columns the gradients have their
// operands' shape; the Reshapes around them move no value.
func onColumns(f func(...mat.Tensor) mat.Tensor, xs ...mat.Tensor) mat.Tensor {
	s := xs[0].Value().Shape()
	if s[1] == 1 {
		return f(xs...)
	}
	cols := make([]mat.Tensor, len(xs))
	for i, x := range xs {
		cols[i] = colVec(x)
	}
	return ag.Reshape(f(cols...), s[0], s[1])
}

// rowsAsCols returns row i of the r×c matrix x as a c×1 column for each i.
func rowsAsCols(x mat.Tensor) []mat.Tensor {
	s := x.Value().Shape()
	out := make([]mat.Tensor, s[0])
	for i := range out {
		out[i] = ag.Reshape(ag.RowView(x, i), s[1], 1)
	}
	return out
}

// perRow applies f (a map from a column vector to a column vector of the
// same length) to every row of a rank-2 value along axis (1: rows; 0:
// columns, through T), or to the whole vector for rank 1.
func perRow(x val, axis int, f func(mat.Tensor) mat.Tensor) (mat.Tensor, error) {
	switch {
	case len(x.shape) == 1 && axis == 0:
		return f(x.t), nil
	case len(x.shape) == 2 && axis == 1:
		return ag.Stack(mapT(rowsAsCols(x.t), f)...), nil
	case len(x.shape) == 2 && axis == 0:
		return ag.T(ag.Stack(mapT(rowsAsCols(ag.T(x.t)), f)...)), nil
	}
	return nil, harness.Unsupportedf("spago: axis %d of a rank-%d tensor is not mapped", axis, len(x.shape))
}

func mapT(xs []mat.Tensor, f func(mat.Tensor) mat.Tensor) []mat.Tensor {
	out := make([]mat.Tensor, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// reduceAxis reduces a rank-2 value along axis with red (ag.ReduceSum or
// ag.ReduceMean, on column vectors), concatenating the results into a
// column vector; rank ≤ 1 reduces everything.
func reduceAxis(x val, axis int, red func(mat.Tensor) mat.Tensor) (mat.Tensor, error) {
	switch {
	case len(x.shape) <= 1:
		return red(colVec(x.t)), nil
	case len(x.shape) == 2 && axis == 1:
		return ag.Concat(mapT(rowsAsCols(x.t), red)...), nil
	case len(x.shape) == 2 && axis == 0:
		cols := make([]mat.Tensor, x.shape[1])
		for j := range cols {
			cols[j] = red(ag.ColView(x.t, j))
		}
		return ag.Concat(cols...), nil
	}
	return nil, harness.Unsupportedf("spago: reduction over axis %d of a rank-%d tensor is not mapped", axis, len(x.shape))
}

func sameShapes(op string, args []val) error {
	for _, a := range args[1:] {
		if !slices.Equal(a.shape, args[0].shape) {
			return fmt.Errorf("spago's %s needs equal shapes (no broadcasting), got %v and %v", op, args[0].shape, a.shape)
		}
	}
	return nil
}

// applyUnary builds the elementwise unary primitive op on x, when op is
// one spago has an operator for (log is recorded in b.logs).
func applyUnary(op string, x mat.Tensor, b *build) (mat.Tensor, bool) {
	switch op {
	case "neg":
		return ag.Neg(x), true
	case "square":
		return ag.Square(x), true
	case "abs":
		return ag.Abs(x), true
	case "relu":
		return ag.ReLU(x), true
	case "sigmoid":
		return ag.Sigmoid(x), true
	case "tanh":
		return ag.Tanh(x), true
	case "exp":
		return ag.Exp(x), true
	case "log":
		b.logs = append(b.logs, x)
		return ag.Log(x), true
	case "sqrt":
		return ag.Sqrt(x), true
	case "inv":
		return ag.Reciprocal(x), true
	case "sin":
		return ag.Sin(x), true
	case "cos":
		return ag.Cos(x), true
	case "gelu":
		return ag.GELU(x), true
	case "softplus":
		// PyTorch's default threshold: x > 20 gives x (a relative error
		// below e⁻²⁰/20, far inside the bound).
		return ag.SoftPlus(x, scalar(1), scalar(20)), true
	}
	return nil, false
}

// applyArith builds the arithmetic primitive op (scale, clamp, max, min,
// add, sub, mul, div, matmul, linear) on args.
func applyArith(op string, a *spec.Attrs, args []val) (mat.Tensor, error) {
	x := args[0]
	switch op {
	case "scale":
		c, err := exact64(a.C, "scale factor")
		if err != nil {
			return nil, err
		}
		return ag.ProdScalar(x.t, scalar(c)), nil
	case "clamp":
		lo, err := exact64(a.Lo, "clamp bound")
		if err != nil {
			return nil, err
		}
		hi, err := exact64(a.Hi, "clamp bound")
		if err != nil {
			return nil, err
		}
		return onColumns(func(a ...mat.Tensor) mat.Tensor {
			return ag.Min(ag.Max(a[0], constLike(a[0], lo)), constLike(a[0], hi))
		}, x.t), nil
	case "max", "min":
		if err := sameShapes(op, args); err != nil {
			return nil, err
		}
		f := map[string]func(a, b mat.Tensor) mat.Tensor{"max": ag.Max, "min": ag.Min}[op]
		return onColumns(func(a ...mat.Tensor) mat.Tensor { return f(a[0], a[1]) }, x.t, args[1].t), nil
	case "add", "sub", "mul", "div":
		if err := sameShapes(op, args); err != nil {
			return nil, err
		}
		f := map[string]func(a, b mat.Tensor) mat.Tensor{"add": ag.Add, "sub": ag.Sub, "mul": ag.Prod, "div": ag.Div}[op]
		return f(x.t, args[1].t), nil
	case "matmul":
		if len(x.shape) != 2 || len(args[1].shape) != 2 {
			return nil, fmt.Errorf("spago's Mul is the matrix product of rank-2 operands, got %v and %v", x.shape, args[1].shape)
		}
		return ag.Mul(x.t, args[1].t), nil
	case "linear":
		w, b := args[1], args[2]
		switch len(x.shape) {
		case 1: // W·x + b: spago's Affine
			return ag.Affine(b.t, w.t, x.t), nil
		case 2: // x·Wᵀ + b on every row: b fanned out by Stack
			bs := make([]mat.Tensor, x.shape[0])
			for i := range bs {
				bs[i] = b.t
			}
			return ag.Add(ag.Mul(x.t, ag.T(w.t)), ag.Stack(bs...)), nil
		}
		return nil, fmt.Errorf("spago: linear on a rank-%d input", len(x.shape))
	}
	return nil, fmt.Errorf("spago: no mapping for %q", op)
}

// applyShape builds the shape primitive op (reshape, flatten, transpose,
// broadcast_to, slice, concat) on args; out is its output shape.
func applyShape(op string, a *spec.Attrs, args []val, out spec.Shape) (mat.Tensor, error) {
	x := args[0]
	switch op {
	case "reshape":
		r, c, err := dims(out)
		if err != nil {
			return nil, err
		}
		return ag.Reshape(x.t, r, c), nil
	case "flatten":
		if len(out) == 1 {
			return ag.T(ag.Flatten(x.t)), nil // Flatten gives the row 1×n
		}
		r, c, err := dims(out)
		if err != nil {
			return nil, err
		}
		return ag.Reshape(x.t, r, c), nil
	case "transpose":
		if len(x.shape) != 2 {
			return nil, fmt.Errorf("spago's T is the transpose of a matrix, got rank %d", len(x.shape))
		}
		return ag.T(x.t), nil
	case "broadcast_to":
		return broadcast(x, out)
	case "slice":
		s := x.mdims()
		switch {
		case len(x.shape) == 1 && a.Axis == 0, len(x.shape) == 2 && a.Axis == 0:
			return ag.Slice(x.t, a.Start, 0, a.End, s[1]), nil
		case len(x.shape) == 2 && a.Axis == 1:
			return ag.Slice(x.t, 0, a.Start, s[0], a.End), nil
		}
		return nil, fmt.Errorf("spago: slice on axis %d of rank %d", a.Axis, len(x.shape))
	case "concat":
		return concat(a.Axis, args)
	}
	return nil, fmt.Errorf("spago: no mapping for %q", op)
}

// constLike is a constant (no gradient) matrix of x's dimensions with
// every element v.
func constLike(x mat.Tensor, v float64) mat.Tensor {
	s := x.Value().Shape()
	return mat.NewDense[float64](mat.WithShape(s[0], s[1]), mat.WithBacking(mat.CreateInitializedSlice(s[0]*s[1], v)))
}

// apply builds one registry primitive from spago's operators; out is the
// registry's output shape.
func apply(op string, a *spec.Attrs, args []val, out spec.Shape, b *build) (mat.Tensor, error) {
	if a == nil {
		a = &spec.Attrs{}
	}
	x := args[0]
	if y, ok := applyUnary(op, x.t, b); ok {
		return y, nil
	}
	switch op {
	case "scale", "clamp", "max", "min", "add", "sub", "mul", "div", "matmul", "linear":
		return applyArith(op, a, args)
	case "sum":
		return ag.ReduceSum(colVec(x.t)), nil
	case "reduce_sum":
		return reduceAxis(x, a.Axis, ag.ReduceSum)
	case "reduce_mean":
		return reduceAxis(x, a.Axis, ag.ReduceMean)
	case "mse_loss":
		// Σ(ŷ−y)²/N. spago's losses.MSE is half of it (0.5·(ŷ−y)²), so
		// it is composed from ag's operators instead.
		if err := sameShapes(op, args); err != nil {
			return nil, err
		}
		return ag.ReduceMean(colVec(ag.Square(ag.Sub(x.t, args[1].t)))), nil
	case "reshape", "flatten", "transpose", "broadcast_to", "slice", "concat":
		return applyShape(op, a, args, out)
	case "softmax":
		return perRow(x, a.Axis, ag.Softmax)
	case "log_softmax":
		return perRow(x, a.Axis, func(v mat.Tensor) mat.Tensor {
			y := ag.LogSoftmax(v) // Log(Softmax(v))
			b.logs = append(b.logs, y.(*ag.Operator).Operands()[0])
			return y
		})
	case "layer_norm":
		return layerNorm(a, args, out)
	case "detach":
		return ag.StopGrad(x.t), nil
	case "shrink":
		l, err := softShrinkLambda(a)
		if err != nil {
			return nil, err
		}
		return ag.SoftShrink(x.t, scalar(l)), nil
	case "gather":
		return gather(a, x)
	case "conv":
		return conv(a, args, out)
	case "max_pool":
		return maxPool(a, x, out)
	case "avg_pool":
		return avgPool(a, x, out)
	}
	return nil, fmt.Errorf("spago: no mapping for %q", op)
}

// mdims is the value's matrix dimensions in spago.
func (v val) mdims() []int { return v.t.Value().Shape() }

func broadcast(x val, out spec.Shape) (mat.Tensor, error) {
	rep := func(v mat.Tensor, n int) []mat.Tensor {
		vs := make([]mat.Tensor, n)
		for i := range vs {
			vs[i] = v
		}
		return vs
	}
	if len(out) == 1 && len(x.shape) <= 1 && x.t.Value().Size() == 1 {
		// one value repeated: a column (spago's vector) of out[0] copies
		return ag.Concat(rep(x.t, out[0])...), nil
	}
	if len(out) != 2 {
		return nil, harness.Unsupportedf("spago: broadcast_to from %v to rank %d (only to a matrix, or one value to a vector)", x.shape, len(out))
	}
	s := x.mdims()
	R, C := out[0], out[1]
	switch {
	case s[0] == R && s[1] == C:
		return ag.Copy(x.t), nil
	case len(x.shape) == 1 && s[0] == C, len(x.shape) == 2 && s[0] == 1 && s[1] == C:
		// a row repeated R times: Stack of R copies of the vector
		return ag.Stack(rep(x.t, R)...), nil
	case len(x.shape) == 2 && s[0] == R && s[1] == 1:
		return ag.T(ag.Stack(rep(x.t, C)...)), nil
	}
	return nil, harness.Unsupportedf("spago: broadcast_to from %v to %v is not mapped", x.shape, out)
}

func concat(axis int, args []val) (mat.Tensor, error) {
	x := args[0]
	switch {
	case len(x.shape) == 1 && axis == 0:
		ts := make([]mat.Tensor, len(args))
		for i, a := range args {
			ts[i] = a.t
		}
		return ag.Concat(ts...), nil
	case len(x.shape) == 2 && (axis == 0 || axis == 1):
		tr := func(t mat.Tensor) mat.Tensor {
			if axis == 1 {
				return ag.T(t)
			}
			return t
		}
		var rows []mat.Tensor
		for _, a := range args[1:] {
			v := tr(a.t)
			for i := 0; i < v.Value().Shape()[0]; i++ {
				rows = append(rows, ag.RowView(v, i))
			}
		}
		return tr(ag.AppendRows(tr(x.t), rows...)), nil
	}
	return nil, fmt.Errorf("spago: concat on axis %d of rank %d", axis, len(x.shape))
}

// layerNorm is spago's nn/normalization/layernorm Model.Forward on each
// row (the suffix from axis): mean = ReduceMean(x), dev = SubScalar(x,
// mean), std = Sqrt(Add(ReduceMean(Square(dev)), eps)), y = DivScalar(dev,
// std) [· γ + β].
func layerNorm(a *spec.Attrs, args []val, out spec.Shape) (mat.Tensor, error) {
	x := args[0]
	eps, _ := a.Eps.Float64() // fl64(ε), as the package doc allows
	epsT := scalar(eps)
	var gamma, beta mat.Tensor
	if len(args) == 3 {
		gamma, beta = colVec(args[1].t), colVec(args[2].t)
	} else if len(args) != 1 {
		return nil, fmt.Errorf("spago: layer_norm with %d operands", len(args))
	}
	norm := func(v mat.Tensor) mat.Tensor {
		mean := ag.ReduceMean(v)
		dev := ag.SubScalar(v, mean)
		std := ag.Sqrt(ag.Add(ag.ReduceMean(ag.Square(dev)), epsT))
		y := ag.DivScalar(dev, std)
		if gamma != nil {
			y = ag.Add(ag.Prod(y, gamma), beta)
		}
		return y
	}
	ax := a.Axis
	if ax < 0 {
		ax += len(x.shape)
	}
	switch {
	case len(x.shape) == 2 && ax == 1:
		return ag.Stack(mapT(rowsAsCols(x.t), norm)...), nil
	case ax == 0 && len(x.shape) <= 2:
		r, c, _ := dims(out)
		return ag.Reshape(norm(colVec(x.t)), r, c), nil
	}
	return nil, fmt.Errorf("spago: layer_norm over axis %d of rank %d", a.Axis, len(x.shape))
}

// gather picks elements (a vector) with ag.At and concatenates them, or
// rows (a matrix, axis 0; columns through T for axis 1) with RowView and
// Stack: a repeated index is a fan-out whose gradients ag must add.
func gather(a *spec.Attrs, x val) (mat.Tensor, error) {
	var parts []mat.Tensor
	switch {
	case len(x.shape) == 1 && a.Axis == 0:
		for _, i := range a.Indices {
			parts = append(parts, ag.At(x.t, i, 0))
		}
		return ag.Concat(parts...), nil
	case len(x.shape) == 2:
		v := x.t
		if a.Axis == 1 {
			v = ag.T(v)
		}
		for _, i := range a.Indices {
			parts = append(parts, ag.RowView(v, i))
		}
		y := ag.Stack(parts...)
		if a.Axis == 1 {
			y = ag.T(y)
		}
		return y, nil
	}
	return nil, fmt.Errorf("spago: gather along axis %d of rank %d", a.Axis, len(x.shape))
}

func one4(s spec.Shape) bool { return len(s) == 4 && s[0] == 1 && s[1] == 1 }

// conv is spago's nn/convolution.Conv2D (Dot of each window Slice with
// the kernel) on one image of one channel.
func conv(a *spec.Attrs, args []val, out spec.Shape) (mat.Tensor, error) {
	if len(args) != 2 || !one4(args[0].shape) || !one4(args[1].shape) {
		return nil, errors.New("spago: conv only of one image [1, 1, H, W] with one kernel [1, 1, kh, kw], no bias")
	}
	st := a.Window.Stride
	r, c, _ := dims(out)
	// Conv2D returns Reshape(Concat(dots), oh, ow).
	y := convolution.Conv2D(args[1].t, args[0].t, st[0], st[1])
	if s := y.Value().Shape(); s[0] != r || s[1] != c {
		return nil, fmt.Errorf("spago: Conv2D gave %v for the registry's %v", s, out)
	}
	return y, nil
}

func maxPool(a *spec.Attrs, x val, out spec.Shape) (mat.Tensor, error) {
	if !one4(x.shape) {
		return nil, errors.New("spago: max_pool only of one image of one channel [1, 1, H, W]")
	}
	k := a.Window.Kernel
	if x.shape[2]%k[0] != 0 || x.shape[3]%k[1] != 0 {
		return nil, fmt.Errorf("spago's MaxPooling needs the kernel %v to divide the image %v", k, x.shape[2:])
	}
	return ag.MaxPooling(x.t, k[0], k[1]), nil
}

// avgPool composes average pooling from spago's Slice and ReduceMean per
// window (spago has no average pooling operator).
func avgPool(a *spec.Attrs, x val, out spec.Shape) (mat.Tensor, error) {
	if !one4(x.shape) {
		return nil, errors.New("spago: avg_pool only of one image of one channel [1, 1, H, W]")
	}
	k, st := a.Window.Kernel, a.Window.Stride
	oh, ow, _ := dims(out)
	var ws []mat.Tensor
	for i := 0; i < oh; i++ {
		for j := 0; j < ow; j++ {
			r0, c0 := i*st[0], j*st[1]
			ws = append(ws, ag.ReduceMean(colVec(ag.Slice(x.t, r0, c0, r0+k[0], c0+k[1]))))
		}
	}
	return ag.Reshape(ag.Concat(ws...), oh, ow), nil
}
