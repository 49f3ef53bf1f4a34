package harness

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// Engine is an autodiff runtime under test. An adapter maps the registry's
// primitives to the engine's own operations; the harness builds nothing
// itself, so every value it judges is the engine's.
type Engine interface {
	// Name is the engine's short name ("gorgonia"), used in tables and
	// on the command line.
	Name() string
	// Module is the module path and version the adapter was built
	// against ("gorgonia.org/gorgonia v0.9.18").
	Module() string
	// Machines lists the engine's execution machines (at least one);
	// every case runs on each, and they are compared with each other.
	Machines() []string
	// Supports reports whether the adapter maps the primitive with these
	// attributes to the engine (nil when it does), or why not.
	Supports(op string, a *spec.Attrs) error
	// Run builds g in float64 on machine with inputs xs, evaluates it,
	// runs the engine's reverse mode on the scalar loss Σ(y ⊙ cot) and
	// returns y and the gradient of the loss with respect to every
	// input, each of its input's shape, row-major. A panic inside the
	// engine is the adapter's to recover and return as an error.
	Run(machine string, g Graph, xs []Tensor64, cot Tensor64) (y Tensor64, grads []Tensor64, err error)
	// Conventions are the engine's own derivative conventions at kinks
	// and ties, where they differ from the registry's.
	Conventions() []Convention
}

// Formatted is implemented by an engine whose machines compute in
// different formats: Format returns Float64 or Float32 for a machine.
// A float32 machine receives only cases whose values are binary32
// numbers, and is judged against the binary32 bound (package doc,
// "Float32 machines"). An engine that does not implement it computes in
// float64 on every machine.
type Formatted interface {
	Format(machine string) string
}

// JVPEngine is implemented by an engine that also runs forward mode:
// RunJVP builds g on machine with inputs xs and returns y and J·v, the
// engine's JVP along the tangents (one per input, of its shape). The
// harness then judges J·v element by element against the registry's
// JVP (obligation jvp).
type JVPEngine interface {
	RunJVP(machine string, g Graph, xs, tangents []Tensor64) (y, jv Tensor64, err error)
}

// Capable is implemented by an engine some of whose machines run only
// some transforms ("forward", "vjp", "jvp"): a machine without "vjp"
// (ONNX Runtime's) is judged on the forward obligation alone, and Run's
// gradients for it are nil; a machine without "jvp" gets no jvp row.
type Capable interface {
	Can(machine, transform string) bool
}

// can reports whether machine m of e runs transform t: every machine of
// an engine that is not Capable runs forward and vjp, and jvp when it is
// a JVPEngine.
func can(e Engine, m, t string) bool {
	if c, ok := e.(Capable); ok {
		return c.Can(m, t)
	}
	if t == "jvp" {
		_, ok := e.(JVPEngine)
		return ok
	}
	return true
}

// machineFormat is machine m's format (Float64 unless e says otherwise).
func machineFormat(e Engine, m string) string {
	if f, ok := e.(Formatted); ok && f.Format(m) == Float32 {
		return Float32
	}
	return Float64
}

// Convention is an engine's derivative convention for one primitive at
// its kinks or ties, written as an equivalent graph in registry
// primitives whose registry derivative is the engine's: relu with
// relu′(0) = 1 is x + relu(−x). The harness holds the engine to it
// exactly (within the bound); a difference from tlcheck's convention that
// it explains is a note, not a finding.
type Convention struct {
	Op  string
	Doc string
	// Source says where the engine states it: a documentation quote
	// with its place, or "observed" for an undocumented convention found
	// by these cases (its validity as a subgradient is still checked).
	Source string
	// Expand returns the equivalent graph for a node with attributes a;
	// its inputs are the node's arguments.
	Expand func(a *spec.Attrs) Graph
	// ExpandAt, for a convention whose graph depends on the shapes of
	// the node's arguments (max pooling's), is used where Expand is nil:
	// it returns the equivalent graph for a node with attributes a whose
	// arguments have shapes in, or an error where it has none (the node
	// is then left as it is).
	ExpandAt func(a *spec.Attrs, in []spec.Shape) (Graph, error)
}

// ReluGE is the convention relu′(0) = 1 (relu computed as x ≥ 0 ? x : 0
// and differentiated by the same comparison), as the graph x + relu(−x),
// whose registry derivative at 0 is 1 − 0 = 1. source says where the
// engine states it.
func ReluGE(source string) Convention {
	return Convention{Op: "relu", Doc: "relu′(0) = 1", Source: source,
		Expand: func(*spec.Attrs) Graph {
			return Graph{Inputs: 1, Nodes: []Node{{Op: "neg", Args: []int{0}}, {Op: "relu", Args: []int{1}}, {Op: "add", Args: []int{0, 2}}}}
		}}
}

// MaxPoolFirst is the convention that at a tie max pooling gives the
// whole cotangent to the first maximal element of the window in
// row-major order (a scan that replaces the running maximum only on a
// strict >). Its graph, for a pool without padding over [N, C, spatial…]:
// for each window offset o in row-major order, w_o = the input at
// positions o + stride·i (a gather per spatial axis); then m = w_0 and
// m ← m + relu(w_o − m) for the later offsets. The value is the window's
// maximum; the registry derivative of each step is 1 − relu′(w_o − m) for
// m and relu′(w_o − m) for w_o, with relu′(0) = 0: a later element takes
// the cotangent only when strictly larger, so the first maximum keeps it.
// source says where the engine states it.
func MaxPoolFirst(source string) Convention {
	return Convention{Op: "max_pool", Doc: "max_pool′ at a tie: the whole cotangent to the window's first maximum (row-major)", Source: source,
		ExpandAt: maxPoolFirst}
}

func maxPoolFirst(a *spec.Attrs, in []spec.Shape) (Graph, error) {
	if a == nil || a.Window == nil || len(in) != 1 {
		return Graph{}, fmt.Errorf("max_pool: no window")
	}
	w, x := a.Window, in[0]
	r := len(w.Kernel)
	if r == 0 || x.Rank() != r+2 || len(w.Stride) != r {
		return Graph{}, fmt.Errorf("max_pool: window of rank %d on an input of rank %d", r, x.Rank())
	}
	for _, p := range w.Pads {
		if p != 0 {
			return Graph{}, fmt.Errorf("max_pool: padded windows are not expanded")
		}
	}
	out := make([]int, r)
	windows := 1
	for d := 0; d < r; d++ {
		k, s, n := w.Kernel[d], w.Stride[d], x[d+2]
		if k < 1 || s < 1 || n < k {
			return Graph{}, fmt.Errorf("max_pool: kernel %d, stride %d on extent %d", k, s, n)
		}
		out[d] = (n-k)/s + 1
		windows *= k
	}
	g := Graph{Inputs: 1}
	last := -1 // value index of the running maximum
	off := make([]int, r)
	for o := 0; o < windows; o++ {
		// off is the o-th offset in row-major order.
		rem := o
		for d := r - 1; d >= 0; d-- {
			off[d] = rem % w.Kernel[d]
			rem /= w.Kernel[d]
		}
		v := 0
		for d := 0; d < r; d++ {
			idx := make([]int, out[d])
			for i := range idx {
				idx[i] = off[d] + w.Stride[d]*i
			}
			g.Nodes = append(g.Nodes, Node{Op: "gather", Attrs: &spec.Attrs{Axis: d + 2, Indices: idx, IndicesShape: spec.Shape{out[d]}}, Args: []int{v}})
			v = g.Inputs + len(g.Nodes) - 1
		}
		if last < 0 {
			last = v
			continue
		}
		g.Nodes = append(g.Nodes, Node{Op: "sub", Args: []int{v, last}})
		g.Nodes = append(g.Nodes, Node{Op: "relu", Args: []int{g.Inputs + len(g.Nodes) - 1}})
		g.Nodes = append(g.Nodes, Node{Op: "add", Args: []int{last, g.Inputs + len(g.Nodes) - 1}})
		last = g.Inputs + len(g.Nodes) - 1
	}
	return g, nil
}

// ErrUnsupported marks an error of Run that says the adapter cannot
// express this graph at these shapes in the engine (spago's matrices
// have rank 2): the case is skipped with the reason, not a finding.
// Supports sees only primitives and attributes; shapes are Run's to
// refuse.
var ErrUnsupported = errors.New("not expressible in the engine")

// Unsupportedf returns an error wrapping ErrUnsupported.
func Unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// ClampInclusive is the convention clamp′ = 1 on the closed interval
// [lo, hi], the bounds included (PyTorch's clamp backward masks with
// lo ≤ x ≤ hi), as the graph m = x + relu(lo − x) (max(x, lo), whose
// registry derivative at x = lo is 1 − relu′(0) = 1), then m − relu(m −
// hi) (min(m, hi), derivative 1 − relu′(0) = 1 at m = hi). Both are valid
// Clarke subgradients ([0, 1] at each bound). The constants lo, hi enter
// as const nodes of the argument's shape.
func ClampInclusive(source string) Convention {
	return Convention{Op: "clamp", Doc: "clamp′ = 1 on [lo, hi], the bounds included", Source: source,
		ExpandAt: func(a *spec.Attrs, in []spec.Shape) (Graph, error) {
			lo, hi, err := clampConsts(a, in)
			if err != nil {
				return Graph{}, err
			}
			// x0; v1 = lo; v2 = hi; v3 = lo − x; v4 = relu(v3); v5 = x + v4;
			// v6 = v5 − hi; v7 = relu(v6); v8 = v5 − v7.
			return Graph{Inputs: 1, Nodes: []Node{lo, hi,
				{Op: "sub", Args: []int{1, 0}}, {Op: "relu", Args: []int{3}}, {Op: "add", Args: []int{0, 4}},
				{Op: "sub", Args: []int{5, 2}}, {Op: "relu", Args: []int{6}}, {Op: "sub", Args: []int{5, 7}}}}, nil
		}}
}

// ClampHalf is the convention clamp = min(max(x, lo), hi) with the
// registry's max and min, whose derivative at a tie is 1/2 (JAX's
// jnp.clip: lax.max and lax.min split a tie evenly): clamp′ = 1/2 at
// each bound, a valid Clarke subgradient.
func ClampHalf(source string) Convention {
	return Convention{Op: "clamp", Doc: "clamp′ = 1/2 at the bounds (min(max(x, lo), hi) with ties split evenly)", Source: source,
		ExpandAt: func(a *spec.Attrs, in []spec.Shape) (Graph, error) {
			lo, hi, err := clampConsts(a, in)
			if err != nil {
				return Graph{}, err
			}
			return Graph{Inputs: 1, Nodes: []Node{lo, hi, {Op: "max", Args: []int{0, 1}}, {Op: "min", Args: []int{3, 2}}}}, nil
		}}
}

// clampConsts are the const nodes lo and hi of a clamp's argument shape.
func clampConsts(a *spec.Attrs, in []spec.Shape) (lo, hi Node, err error) {
	if a == nil || a.Lo == nil || a.Hi == nil || len(in) != 1 {
		return Node{}, Node{}, fmt.Errorf("clamp: no bounds")
	}
	n := 1
	for _, d := range in[0] {
		n *= d
	}
	fill := func(r *big.Rat) Node {
		vs := make([]*big.Rat, n)
		for i := range vs {
			vs[i] = new(big.Rat).Set(r)
		}
		return Node{Op: "const", Attrs: &spec.Attrs{Shape: in[0].Clone(), Values: vs}}
	}
	return fill(a.Lo), fill(a.Hi), nil
}
