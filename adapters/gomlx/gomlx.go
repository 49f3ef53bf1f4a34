// Package gomlx adapts GoMLX (github.com/gomlx/gomlx v0.26.0) on its pure-Go
// backend simplego to the harness: each case is built as a GoMLX graph
// function in float64 from the registry tags, the loss Σ(y ⊙ cot) is
// differentiated inside the graph with graph.Gradient (GoMLX's reverse
// mode, rev_autodiff.go), and the graph is compiled and executed on
// simplego (no cgo, no XLA). Every value judged is computed by GoMLX.
//
// Machines: "simplego" (default configuration) and "simplego-dotlarge"
// (the large-matrix DotGeneral kernel forced), compared bit for bit.
//
// Where GoMLX has no single op for a registry primitive, or simplego
// cannot run the op's VJP, the adapter composes GoMLX's own ops, so the
// gradient is still GoMLX's: layer_norm as layers.LayerNormalization
// computes it without its gain and offset variables (mean, x − mean, mean
// of squares, + ε, Sqrt, Div); linear as MatMul(x, Wᵀ) + b; max_pool and
// avg_pool over windows that tile the input as Reshape + ReduceMax /
// ReduceMean over the window axes, slice as Gather (Slice's, MaxPool's
// and MeanPool's VJPs need Pad and SelectAndScatterMax, which simplego
// lacks). conv is refused: its VJP needs Reverse (see gaps).
//
// GoMLX's tie conventions (declared in Conventions, with their source):
// Max(x, y) gives the whole cotangent to x at x = y and Min(x, y) to y
// (minMaxVJP: NonNegativeIndicator(x − y)); hence activations.Relu =
// Max(x, 0) has relu′(0) = 1, and ClipScalar = Min(Max(x, lo), hi) has
// clamp′(lo) = 1, clamp′(hi) = 0; Abs has abs′(0) = 1 (absVJP:
// SignPlusOrMinus). Each is a valid subgradient; the harness checks that.
//
// Findings (FINDINGS.md): sqrtVJP is v·0.5/sqrt(x) with no case for 0, so
// sqrt′(0) = ∞ and a zero cotangent gives NaN there, L2Norm has a NaN
// gradient at a zero row, and L2NormalizeWithEpsilon — differentiable at
// a zero row — too; reduceMaxVJP gives every tied maximum the whole
// cotangent (mass k·c at a k-way tie).
package gomlx

import (
	"fmt"
	"math/big"
	"slices"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	timage "github.com/gomlx/gomlx/pkg/core/tensors/images"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"

	"github.com/tlcheck/tlcheck/adapters/harness"
	"github.com/tlcheck/tlcheck/spec"
)

// The machines: simplego as configured by default (DotGeneral picks its
// kernel by problem size: the small-matrix one for every case here), and
// simplego with its large-matrix DotGeneral kernel forced (config
// "dotgeneral_large": blocked, another summation order), so the two
// kernels of one engine are compared on every product.
const (
	Machine         = "simplego"
	MachineDotLarge = "simplego-dotlarge"
)

var machineConfig = map[string]string{Machine: "", MachineDotLarge: "dotgeneral_large"}

// Version is the GoMLX module version the adapter is built against.
const Version = "v0.26.0"

// engine is the adapter. native (tests only) makes Supports accept the
// primitives whose reverse mode simplego cannot execute and builds slice
// and the pools with GoMLX's Slice, MaxPool and MeanPool instead of
// Gather and the windowed reductions, so that a test can assert the gaps
// are still there.
type engine struct{ native bool }

// New returns the GoMLX engine on the simplego backend.
func New() harness.Engine { return engine{} }

// gaps are the registry primitives GoMLX maps but whose gradient the
// simplego backend of v0.26.0 cannot execute: the VJP GoMLX builds uses a
// backend op that simplego leaves out (backends/simplego/capabilities.go
// has it commented out, and execution answers `sorry, op "…" not
// implemented in SimpleGo yet`). TestSimplegoGaps asserts each is still
// refused, with this op named.
//
// slice and the pools are mapped anyway, through other GoMLX ops whose
// VJPs simplego runs: slice as Gather (gatherSlice), the pools, for
// windows that tile the input (stride = kernel, no padding, no dilation),
// as Reshape and ReduceMax/ReduceMean over the window axes
// (windowReduce), the way one pools on simplego; nativeGaps records
// Slice's, MaxPool's and MeanPool's own gaps.
var gaps = map[string]string{
	"conv": "Reverse", // convGeneralVJP (ops_convolve.go) reverses the kernel's spatial axes
}

// nativeGaps are the GoMLX ops the adapter replaces on simplego, and the
// backend op their VJP lacks.
var nativeGaps = map[string]string{
	"slice":    "Pad",                 // sliceVJP (pkg/core/graph/rev_autodiff.go) pads the cotangent back
	"avg_pool": "Pad",                 // reduceWindowVJP → dilateConvolveToMatchSumPooling (ops_pool.go)
	"max_pool": "SelectAndScatterMax", // reduceWindowVJP → checkedSelectAndScatter (ops_pool.go)
}

func (engine) Name() string       { return "gomlx" }
func (engine) Module() string     { return "github.com/gomlx/gomlx " + Version + " (backends/simplego)" }
func (engine) Machines() []string { return []string{Machine, MachineDotLarge} }

var (
	backendMu sync.Mutex
	backendBy = map[string]backends.Backend{}
)

// theBackend creates each machine's simplego backend once (a backend holds
// no graph state; every case compiles its own graph).
func theBackend(machine string) (b backends.Backend, err error) {
	config, ok := machineConfig[machine]
	if !ok {
		return nil, fmt.Errorf("gomlx: no machine %q", machine)
	}
	backendMu.Lock()
	defer backendMu.Unlock()
	if b := backendBy[machine]; b != nil {
		return b, nil
	}
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("gomlx: creating the simplego backend panicked: %v", r)
		}
	}()
	if b, err = simplego.New(config); err != nil {
		return nil, fmt.Errorf("gomlx: simplego %q: %w", config, err)
	}
	backendBy[machine] = b
	return b, nil
}

// elementwise are the registry's one-argument primitives GoMLX has as
// single graph ops (or activations of the same name).
var elementwise = map[string]func(*graph.Node) *graph.Node{
	"neg":      graph.Neg,
	"square":   graph.Square,
	"abs":      graph.Abs,
	"relu":     activations.Relu,
	"sigmoid":  graph.Sigmoid,
	"tanh":     graph.Tanh,
	"exp":      graph.Exp,
	"log":      graph.Log,
	"sqrt":     graph.Sqrt,
	"inv":      graph.Inverse,
	"sin":      graph.Sin,
	"cos":      graph.Cos,
	"softplus": graph.Softplus,
	// The registry's gelu is the tanh approximation.
	"gelu": activations.GeluApproximate,
}

var binaries = map[string]func(a, b *graph.Node) *graph.Node{
	"add": graph.Add,
	"sub": graph.Sub,
	"mul": graph.Mul,
	"div": graph.Div,
	"max": graph.Max,
	"min": graph.Min,
	// The registry's matmul is the rank-2 product (the cases'), which
	// GoMLX's MatMul is.
	"matmul": graph.MatMul,
}

// float is r as a binary64 number, exactly: a kink's position (clamp's
// bounds) must be where the registry has it.
func float(r *big.Rat) (float64, error) {
	if r == nil {
		return 0, fmt.Errorf("missing rational attribute")
	}
	f, exact := r.Float64()
	if !exact {
		return 0, fmt.Errorf("attribute %s is not a binary64 number", r.RatString())
	}
	return f, nil
}

// constant is r rounded to the nearest binary64 number: a constant of a
// smooth formula (scale's factor, layer_norm's ε), which the harness's
// bound covers as fl64(c) (harness package doc, "The bound").
func constant(r *big.Rat) (float64, error) {
	if r == nil {
		return 0, fmt.Errorf("missing rational attribute")
	}
	f, _ := r.Float64()
	return f, nil
}

func zeros(s []int) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

func ones(s []int) bool {
	for _, v := range s {
		if v != 1 {
			return false
		}
	}
	return true
}

// Supports reports whether op with attributes a is mapped.
func (e engine) Supports(op string, a *spec.Attrs) error {
	if missing, ok := gaps[op]; ok && !e.native {
		return fmt.Errorf("gomlx %s on simplego cannot differentiate %s: its VJP needs the backend op %s, which simplego does not implement", Version, op, missing)
	}
	if _, ok := elementwise[op]; ok {
		return nil
	}
	if _, ok := binaries[op]; ok {
		return nil
	}
	need := func(what string) error {
		if a == nil {
			return fmt.Errorf("gomlx adapter: %s needs attributes (%s)", op, what)
		}
		return nil
	}
	switch op {
	case "linear", "sum", "mse_loss":
		return nil
	case "scale":
		if err := need("C"); err != nil {
			return err
		}
		_, err := constant(a.C)
		return err
	case "clamp":
		if err := need("Lo, Hi"); err != nil {
			return err
		}
		if _, err := float(a.Lo); err != nil {
			return err
		}
		_, err := float(a.Hi)
		return err
	case "reduce_sum", "reduce_mean", "softmax", "log_softmax", "transpose", "slice", "concat", "reshape", "broadcast_to", "permute", "flatten":
		return nil
	case "layer_norm":
		return nil
	case "conv":
		if err := need("Window"); err != nil {
			return err
		}
		w := a.Window
		if w == nil {
			return fmt.Errorf("gomlx adapter: conv without a window")
		}
		if w.Groups > 1 {
			return fmt.Errorf("gomlx has no back-propagation for grouped convolutions (ConvolutionBuilder.ChannelGroupCount: \"back-propagation is not yet supported\")")
		}
		if len(w.OutputPadding) != 0 {
			return fmt.Errorf("gomlx adapter: conv with output padding")
		}
		return nil
	case "max_pool", "avg_pool":
		if err := need("Window"); err != nil {
			return err
		}
		w := a.Window
		if w == nil {
			return fmt.Errorf("gomlx adapter: %s without a window", op)
		}
		if !zeros(w.Pads) {
			return fmt.Errorf("gomlx adapter: %s with padding is not mapped (only unpadded windows, as Reshape + ReduceMax/ReduceMean)", op)
		}
		if len(w.Dilation) != 0 && !ones(w.Dilation) {
			return fmt.Errorf("gomlx adapter: dilated %s is not mapped", op)
		}
		if w.CeilMode {
			return fmt.Errorf("gomlx adapter: ceil-mode %s is not mapped", op)
		}
		if !e.native && !slices.Equal(w.Stride, w.Kernel) {
			return fmt.Errorf("gomlx %s on simplego cannot differentiate %s (its VJP needs the backend op %s); the adapter maps only windows that tile the input (stride = kernel) as ReduceMax/ReduceMean, got kernel %v stride %v", Version, op, nativeGaps[op], w.Kernel, w.Stride)
		}
		return nil
	}
	return fmt.Errorf("gomlx adapter: %s is not mapped", op)
}

// Conventions are GoMLX's derivatives at kinks and ties that differ from
// tlcheck's (see the package doc).
func (engine) Conventions() []harness.Convention {
	return conventions
}

var conventions = []harness.Convention{
	harness.ReluGE("activations.Relu (pkg/ml/layers/activations/activations.go) is Max(x, ZerosLike(x)); minMaxVJP (pkg/core/graph/rev_autodiff.go): \"because NonNegativeIndicator(0) == 1, the gradient of Max(x, y) w.r.t. x, where x == y will be 1.0\""),
	{Op: "abs", Doc: "abs′(0) = 1", Source: "absVJP (pkg/core/graph/rev_autodiff.go): \"d(abs(x))/dx at 0 is actually undefined. This will take 1, so it assumes the positive side\" (Mul(v, SignPlusOrMinus(x)))",
		// |x| = x + 2·relu(−x); at 0 its registry derivative is 1 − 2·0 = 1.
		Expand: func(*spec.Attrs) harness.Graph {
			return harness.Graph{Inputs: 1, Nodes: []harness.Node{
				{Op: "neg", Args: []int{0}}, {Op: "relu", Args: []int{1}}, {Op: "scale", Attrs: &spec.Attrs{C: big.NewRat(2, 1)}, Args: []int{2}}, {Op: "add", Args: []int{0, 3}}}}
		}},
	{Op: "max", Doc: "max tie: the whole cotangent to the first argument", Source: "minMaxVJP (pkg/core/graph/rev_autodiff.go): side0Indicator := NonNegativeIndicator(Sub(x, y)): \"the gradient of Max(x, y) w.r.t. x, where x == y will be 1.0 (as opposed to 0)\"",
		// max(x, y) = x + relu(y − x); at a tie the registry gives x 1 − 0 = 1, y 0.
		Expand: func(*spec.Attrs) harness.Graph {
			return harness.Graph{Inputs: 2, Nodes: []harness.Node{
				{Op: "sub", Args: []int{1, 0}}, {Op: "relu", Args: []int{2}}, {Op: "add", Args: []int{0, 3}}}}
		}},
	{Op: "clamp", Doc: "clamp′(lo) = 1, clamp′(hi) = 0", Source: "ClipScalar (pkg/core/graph/ops_util.go) is MinScalar(MaxScalar(x, min), max), so minMaxVJP's rules: Max gives a tie to x, Min to its second argument, the constant max",
		ExpandAt: clampTies},
	{Op: "min", Doc: "min tie: the whole cotangent to the second argument", Source: "minMaxVJP (pkg/core/graph/rev_autodiff.go): \"If min, swap directions\": x gets 1 − NonNegativeIndicator(x − y), y gets NonNegativeIndicator(x − y), so at x == y the whole cotangent goes to y",
		// min(x, y) = y − relu(y − x); at a tie the registry gives y 1 − 0 = 1, x 0.
		Expand: func(*spec.Attrs) harness.Graph {
			return harness.Graph{Inputs: 2, Nodes: []harness.Node{
				{Op: "sub", Args: []int{1, 0}}, {Op: "relu", Args: []int{2}}, {Op: "sub", Args: []int{1, 3}}}}
		}},
}

// unaryOps are the one-argument primitives build maps beyond elementwise.
var unaryOps = map[string]bool{"scale": true, "clamp": true, "sum": true, "reduce_sum": true, "reduce_mean": true,
	"reshape": true, "flatten": true, "transpose": true, "permute": true, "broadcast_to": true, "slice": true,
	"softmax": true, "log_softmax": true, "layer_norm": true, "max_pool": true, "avg_pool": true}

// clampTies is ClipScalar's tie rule as a registry graph: Min(Max(x, lo),
// hi) with Max giving a tie to x and Min to the constant hi is
// m = x + relu(L − x), y = H − relu(H − m) for constant tensors L and H of
// x's shape (registry relu′(0) = 0: ∂m/∂x = 1 at x = lo, ∂y/∂m = 0 at
// m = hi), so clamp′(lo) = 1, clamp′(hi) = 0.
func clampTies(a *spec.Attrs, in []spec.Shape) (harness.Graph, error) {
	if a == nil || a.Lo == nil || a.Hi == nil || len(in) != 1 {
		return harness.Graph{}, fmt.Errorf("clamp: no bounds")
	}
	n, err := in[0].Check(0)
	if err != nil {
		return harness.Graph{}, err
	}
	fill := func(r *big.Rat) *spec.Attrs {
		vs := make([]*big.Rat, n)
		for i := range vs {
			vs[i] = new(big.Rat).Set(r)
		}
		return &spec.Attrs{Shape: in[0].Clone(), Values: vs}
	}
	return harness.Graph{Inputs: 1, Nodes: []harness.Node{
		{Op: "const", Attrs: fill(a.Lo)}, // 1: L
		{Op: "const", Attrs: fill(a.Hi)}, // 2: H
		{Op: "sub", Args: []int{1, 0}},   // 3: L − x
		{Op: "relu", Args: []int{3}},     // 4
		{Op: "add", Args: []int{0, 4}},   // 5: m = max(x, lo), x winning a tie
		{Op: "sub", Args: []int{2, 5}},   // 6: H − m
		{Op: "relu", Args: []int{6}},     // 7
		{Op: "sub", Args: []int{2, 7}},   // 8: min(m, hi), hi winning a tie
	}}, nil
}

// catch runs f and returns a panic inside it (GoMLX reports shape
// errors by panicking) as an error.
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// buildSafe is build with GoMLX's panics returned as errors.
func (e engine) buildSafe(n harness.Node, vals []*graph.Node) (v *graph.Node, err error) {
	if perr := catch(func() { v, err = e.build(n, vals) }); perr != nil {
		return nil, perr
	}
	return v, err
}

// build returns the GoMLX node for n over the values vals.
func (e engine) build(n harness.Node, vals []*graph.Node) (*graph.Node, error) {
	args := make([]*graph.Node, len(n.Args))
	for k, a := range n.Args {
		if a < 0 || a >= len(vals) {
			return nil, fmt.Errorf("argument %d is not an earlier value", a)
		}
		args[k] = vals[a]
	}
	arity := func(k int) error {
		if len(args) != k {
			return fmt.Errorf("%d arguments, want %d", len(args), k)
		}
		return nil
	}
	a := n.Attrs
	if a == nil {
		a = &spec.Attrs{}
	}
	if f, ok := elementwise[n.Op]; ok {
		if err := arity(1); err != nil {
			return nil, err
		}
		return f(args[0]), nil
	}
	if f, ok := binaries[n.Op]; ok {
		if err := arity(2); err != nil {
			return nil, err
		}
		return f(args[0], args[1]), nil
	}
	if unaryOps[n.Op] {
		if err := arity(1); err != nil {
			return nil, err
		}
	}
	var x *graph.Node
	if len(args) > 0 {
		x = args[0]
	}
	switch n.Op {
	case "scale":
		c, err := constant(a.C)
		if err != nil {
			return nil, err
		}
		return graph.MulScalar(x, c), nil
	case "clamp":
		lo, err := float(a.Lo)
		if err != nil {
			return nil, err
		}
		hi, err := float(a.Hi)
		if err != nil {
			return nil, err
		}
		return graph.ClipScalar(x, lo, hi), nil
	case "sum":
		return graph.ReduceAllSum(x), nil
	case "reduce_sum":
		return graph.ReduceSum(x, a.Axis), nil
	case "reduce_mean":
		return graph.ReduceMean(x, a.Axis), nil
	case "mse_loss":
		if err := arity(2); err != nil {
			return nil, err
		}
		// losses.MeanSquaredError(labels, predictions) = mean((labels − predictions)²).
		return losses.MeanSquaredError([]*graph.Node{args[1]}, []*graph.Node{args[0]}), nil
	case "linear":
		if err := arity(3); err != nil {
			return nil, err
		}
		return linear(x, args[1], args[2])
	case "reshape":
		return graph.Reshape(x, a.Shape...), nil
	case "flatten":
		return flatten(x, a.Axis)
	case "transpose":
		return graph.Transpose(x, a.Axis, a.Axis2), nil
	case "permute":
		return graph.TransposeAllDims(x, a.Perm...), nil
	case "broadcast_to":
		return broadcastTo(x, a.Shape), nil
	case "slice":
		return e.slice(x, a.Axis, a.Start, a.End)
	case "concat":
		return graph.Concatenate(args, a.Axis), nil
	case "softmax":
		return graph.Softmax(x, a.Axis), nil
	case "log_softmax":
		return graph.LogSoftmax(x, a.Axis), nil
	case "layer_norm":
		return layerNorm(x, a.Axis, a.Eps)
	case "conv":
		if err := arity(2); err != nil {
			return nil, err
		}
		return conv(x, args[1], a.Window), nil
	case "max_pool", "avg_pool":
		return e.pool(n.Op, x, a.Window)
	}
	return nil, fmt.Errorf("gomlx adapter: %s is not mapped", n.Op)
}

// linear is x·Wᵀ + b for x of rank ≥ 2 (GoMLX's MatMul), W [out, in]
// and b [out].
func linear(x, w, b *graph.Node) (*graph.Node, error) {
	if x.Rank() < 2 {
		return nil, harness.Unsupportedf("gomlx adapter: linear maps x of rank ≥ 2 only (MatMul), got %v", x.Shape())
	}
	if w.Rank() != 2 || b.Rank() != 1 {
		return nil, fmt.Errorf("linear: W must be [out, in] and b [out], got %v and %v", w.Shape(), b.Shape())
	}
	y := graph.MatMul(x, graph.Transpose(w, 0, 1))
	bs := make([]int, y.Rank())
	for i := range bs {
		bs[i] = 1
	}
	bs[len(bs)-1] = b.Shape().Dimensions[0]
	return graph.Add(y, graph.Reshape(b, bs...)), nil
}

// flatten reshapes x to its axes before axis and the product of the rest.
func flatten(x *graph.Node, axis int) (*graph.Node, error) {
	d := x.Shape().Dimensions
	if axis < 0 || axis > len(d) {
		return nil, fmt.Errorf("flatten: axis %d out of range for rank %d", axis, len(d))
	}
	out := append([]int(nil), d[:axis]...)
	p := 1
	for _, v := range d[axis:] {
		p *= v
	}
	return graph.Reshape(x, append(out, p)...), nil
}

// broadcastTo broadcasts x to shape as numpy does.
func broadcastTo(x *graph.Node, shape []int) *graph.Node {
	// numpy broadcasting aligns trailing axes; GoMLX's BroadcastToDims
	// appends new axes, so a lower rank is first padded with leading 1s.
	if x.Rank() < len(shape) {
		d := make([]int, len(shape)-x.Rank())
		for i := range d {
			d[i] = 1
		}
		x = graph.Reshape(x, append(d, x.Shape().Dimensions...)...)
	}
	return graph.BroadcastToDims(x, shape...)
}

// slice is x[…, start:end, …] on axis: GoMLX's Slice on a native
// backend, gatherSlice otherwise.
func (e engine) slice(x *graph.Node, axis, start, end int) (*graph.Node, error) {
	sa := make([]graph.SliceAxisSpec, x.Rank())
	for i := range sa {
		sa[i] = graph.AxisRange()
	}
	if axis < 0 || axis >= x.Rank() {
		return nil, fmt.Errorf("slice: axis %d out of range for rank %d", axis, x.Rank())
	}
	if !e.native {
		return gatherSlice(x, axis, start, end)
	}
	sa[axis] = graph.AxisRange(start, end)
	return graph.Slice(x, sa...), nil
}

// layerNorm is the registry's layer_norm along axis with ε epsR (the
// registry's default when nil), without gain and offset.
func layerNorm(x *graph.Node, axis int, epsR *big.Rat) (*graph.Node, error) {
	er := epsR
	if er == nil {
		er = spec.DefaultNormEps() // the registry's default
	}
	eps, err := constant(er)
	if err != nil {
		return nil, err
	}
	// layers.LayerNormalization's Done (pkg/ml/layers/layernorm.go)
	// without gain and offset, normalizing along the one axis Axis as
	// the registry's layer_norm does ("(x−μ)/sqrt(σ²+ε)·γ+β along
	// Axis"; GoMLX's normalizingAxes given that axis).
	if axis < -x.Rank() || axis >= x.Rank() {
		return nil, fmt.Errorf("layer_norm: axis %d out of range for rank %d", axis, x.Rank())
	}
	mean := graph.ReduceAndKeep(x, graph.ReduceMean, axis)
	c := graph.Sub(x, mean)
	variance := graph.ReduceAndKeep(graph.Square(c), graph.ReduceMean, axis)
	return graph.Div(c, graph.Sqrt(graph.Add(variance, graph.ConstAs(x, eps)))), nil
}

// conv is the convolution of x [N, C, spatial…] by the kernel with the
// window w's strides, dilations and pads.
func conv(x, kernel *graph.Node, w *spec.Window) *graph.Node {
	sp := x.Rank() - 2
	cb := graph.Convolve(x, kernel).ChannelsAxis(timage.ChannelsFirst)
	if len(w.Stride) > 0 {
		cb = cb.StridePerAxis(w.Stride...)
	}
	if len(w.Dilation) > 0 && !ones(w.Dilation) {
		cb = cb.DilationPerAxis(w.Dilation...)
	}
	if len(w.Pads) == 2*sp && !zeros(w.Pads) {
		p := make([][2]int, sp)
		for i := range p {
			p[i] = [2]int{w.Pads[i], w.Pads[sp+i]}
		}
		cb = cb.PaddingPerDim(p)
	} else {
		cb = cb.NoPadding()
	}
	return cb.Done()
}

// pool is max_pool or avg_pool (op) of x over the window w: GoMLX's
// MaxPool or MeanPool on a native backend, windowReduce otherwise.
func (e engine) pool(op string, x *graph.Node, w *spec.Window) (*graph.Node, error) {
	if w == nil {
		return nil, fmt.Errorf("%s without a window", op)
	}
	if !e.native {
		return windowReduce(x, op, w.Kernel)
	}
	pb := graph.MaxPool(x)
	if op == "avg_pool" {
		pb = graph.MeanPool(x)
	}
	pb = pb.ChannelsAxis(timage.ChannelsFirst).WindowPerAxis(w.Kernel...).NoPadding()
	if len(w.Stride) > 0 {
		pb = pb.StridePerAxis(w.Stride...)
	}
	return pb.Done(), nil
}

// gatherSlice is x[…, start:end, …] on axis as GoMLX's Gather of the
// rows start … end−1 of x with axis moved to the front (TransposeAllDims
// there and back): Gather's VJP is a ScatterSum, which simplego runs,
// where Slice's needs Pad.
func gatherSlice(x *graph.Node, axis, start, end int) (*graph.Node, error) {
	d := x.Shape().Dimensions
	if start < 0 || end > d[axis] || start >= end {
		return nil, fmt.Errorf("slice: [%d, %d) on an axis of %d", start, end, d[axis])
	}
	perm := []int{axis}
	for i := range d {
		if i != axis {
			perm = append(perm, i)
		}
	}
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	idx := make([][]int32, end-start)
	for i := range idx {
		idx[i] = []int32{int32(start + i)}
	}
	xt := x
	if axis != 0 {
		xt = graph.TransposeAllDims(x, perm...)
	}
	y := graph.Gather(xt, graph.Const(x.Graph(), idx), true)
	if axis != 0 {
		y = graph.TransposeAllDims(y, inv...)
	}
	return y, nil
}

// windowReduce pools x [N, C, spatial…] over windows that tile it: x is
// reshaped to [N, C, s₁/k₁, k₁, s₂/k₂, k₂, …] and reduced (ReduceMax for
// max_pool, ReduceMean for avg_pool) over the k axes.
func windowReduce(x *graph.Node, op string, kernel []int) (*graph.Node, error) {
	d := x.Shape().Dimensions
	if len(d) != 2+len(kernel) {
		return nil, fmt.Errorf("%s: input rank %d for a %d-d window", op, len(d), len(kernel))
	}
	dims := append([]int(nil), d[:2]...)
	var axes []int
	for i, k := range kernel {
		if k <= 0 || d[2+i]%k != 0 {
			return nil, fmt.Errorf("%s: window %v does not tile the input %v (the adapter's ReduceMax/ReduceMean mapping needs it to)", op, kernel, d)
		}
		dims = append(dims, d[2+i]/k, k)
		axes = append(axes, len(dims)-1)
	}
	r := graph.Reshape(x, dims...)
	if op == "max_pool" {
		return graph.ReduceMax(r, axes...), nil
	}
	return graph.ReduceMean(r, axes...), nil
}

// Run builds g in GoMLX (float64), differentiates Σ(y ⊙ cot) with
// graph.Gradient and executes both on simplego.
func (e engine) Run(machine string, g harness.Graph, xs []harness.Tensor64, cot harness.Tensor64) (y harness.Tensor64, grads []harness.Tensor64, err error) {
	if len(xs) != g.Inputs {
		return y, nil, fmt.Errorf("gomlx: %d inputs for a graph of %d", len(xs), g.Inputs)
	}
	b, err := theBackend(machine)
	if err != nil {
		return y, nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			y, grads, err = harness.Tensor64{}, nil, fmt.Errorf("gomlx panicked: %v", r)
		}
	}()
	var buildErr error
	fn := func(in []*graph.Node) []*graph.Node {
		vals := append([]*graph.Node(nil), in[:len(xs)]...)
		for j, n := range g.Nodes {
			v, err := e.buildSafe(n, vals)
			if err != nil {
				// A graph function must return nodes: return the inputs
				// and report buildErr instead of executing.
				buildErr = fmt.Errorf("node %d (%s): %w", j, n.Op, err)
				return in
			}
			vals = append(vals, v)
		}
		out := vals[len(vals)-1]
		var gs []*graph.Node
		if err := catch(func() {
			loss := graph.ReduceAllSum(graph.Mul(out, in[len(xs)]))
			gs = graph.Gradient(loss, in[:len(xs)]...)
		}); err != nil {
			buildErr = fmt.Errorf("the loss Σ(y ⊙ cot) and its gradient: %w", err)
			return in
		}
		return append([]*graph.Node{out}, gs...)
	}
	exec, err := graph.NewExec(b, fn)
	if err != nil {
		return y, nil, fmt.Errorf("gomlx: %w", err)
	}
	defer exec.Finalize()
	args := make([]any, 0, len(xs)+1)
	for _, x := range append(append([]harness.Tensor64(nil), xs...), cot) {
		args = append(args, tensors.FromFlatDataAndDimensions(append([]float64(nil), x.Data...), x.Shape...))
	}
	outs, err := exec.Exec(args...)
	if buildErr != nil {
		return y, nil, fmt.Errorf("gomlx: %w", buildErr)
	}
	if err != nil {
		return y, nil, fmt.Errorf("gomlx: %w", err)
	}
	if len(outs) != 1+len(xs) {
		return y, nil, fmt.Errorf("gomlx: %d outputs for %d inputs", len(outs), len(xs))
	}
	conv := func(t *tensors.Tensor) (harness.Tensor64, error) {
		d, err := tensors.CopyFlatData[float64](t)
		if err != nil {
			return harness.Tensor64{}, err
		}
		return harness.Tensor64{Shape: append([]int{}, t.Shape().Dimensions...), Data: d}, nil
	}
	if y, err = conv(outs[0]); err != nil {
		return harness.Tensor64{}, nil, fmt.Errorf("gomlx: y: %w", err)
	}
	for i, t := range outs[1:] {
		gt, err := conv(t)
		if err != nil {
			return harness.Tensor64{}, nil, fmt.Errorf("gomlx: ∂/∂x%d: %w", i, err)
		}
		grads = append(grads, gt)
	}
	for _, t := range outs {
		_ = t.FinalizeAll()
	}
	return y, grads, nil
}
