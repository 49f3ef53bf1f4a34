package harness

import "github.com/tlcheck/tlcheck/spec"

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
