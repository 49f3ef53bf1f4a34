// Package irgrad differentiates imported models: it lowers a canonical IR
// graph (irsem.Graph) and its payload to a shape-typed SSA graph
// (typedgraph.Graph[T]) whose nodes take their forward, JVP and VJP rules
// from the spec registry, and records the same computation directly on an
// eager tape. TorchLean's IR bridge is forward-only (IRExec.ForwardGraph
// has no derivative rules); this package goes beyond it, so that a model
// read from torchlean.ir.v1 can be differentiated with respect to its
// input and to every payload parameter, through the typed graph and
// through the tape, with each local rule backed by the registry's
// adjointness obligation.
//
// # Context
//
// The typed graph's context Γ is the IR input first, then one entry per
// payload parameter tensor, in node-id order and, within a node, in the
// order its tag lists them (linear: W then b; layernorm: gamma then beta).
// Entries are named "input" and "node<ID>.<param>", e.g. "node3.W",
// "node3.b" — so the parameters' gradients come out of the typed graph's
// reverse sweep as context cotangents. Constants (const nodes, and the
// defaults γ = 1, β = 0 that layernorm supplies when its payload omits
// them) are constant nodes of the graph, not context entries, and receive
// no gradient.
//
// # Mapping
//
// Each IR node is mapped by irsem.Applications, the one place that says
// how a tag is computed with registry primitives: mul_elem is mul, linear
// is linear(x, W, b), layernorm is layer_norm on the [outer, inner] view of
// its input with reshape nodes around it (and a reshape of γ and β to
// [inner] when the normalized suffix has several axes), safe_log with a
// const ε parent is the registry's safe_log with that ε and otherwise
// softplus → broadcast ε → add → log, so that the derivative also flows to
// a computed ε; input is context entry 0, const a constant node with the
// payload value, detach the stop-gradient node. The forward values are
// those of irsem.DenoteAll, node by node (exactly over spec.Rat, bit for
// bit over the float scalars).
//
// Tags without a registry primitive have forward rules in irsem only —
// conv, max_pool, avg_pool — so they
// have no JVP or VJP rules and cannot be recorded on a tape or a typed
// graph: lowering a graph that contains one fails at that node with
// ErrNoPrimitive as the cause, an error that says nothing about gradients
// (Lower also serves forward evaluation), and Grad, which lowers in order
// to differentiate, reports
//
//	node N (tag): no derivative rules; gradients of this tag are not supported
//
// Over spec.Rat, tags without exact rational semantics (exp, tanh, …) are
// rejected by name at their node, as DenoteAll rejects them.
//
// # Paths
//
// The same lowered model is differentiated along four paths. Over Rat they
// agree exactly; over floats PathTape and PathTypedGraph agree bit for bit
// (both are the dense sweep that skips unreached nodes and stops at
// stop-gradient nodes), and the other two agree with them whenever the
// zero-preservation condition holds:
//
//   - PathTape: the IR is recorded directly on an eager tape (the typed
//     graph's eager interpreter over a tape.Session, each node through
//     tape.Apply with the registry's VJP, detach as the tape's
//     stop-gradient node) and the tape's dense sweep runs from the output.
//   - PathTypedGraph: the typed graph's own compiled reverse sweep
//     (typedgraph.Exec.Backward, the dense sweep).
//   - PathLoweredTape: the typed graph's checked lowering to a tape, then
//     the tape's dense sweep — the route TorchLean's autograd.grad takes.
//     A lowered node emits one (possibly zero) contribution per entry it
//     reads, stop-gradient and constant nodes included, so a node behind a
//     detach is reached with a synthetic zero cotangent and its VJP runs:
//     at a singular point (inv at 0, say) that yields 0·∞ = NaN over floats
//     where the eager tape, which never reaches the node, reports 0.
//   - PathBackpropCtx: Graph.BackpropCtx, the proof-facing every-node
//     sweep, with the same caveat at singular points.
//
// The command line's grad offers tape and typed-graph.
//
// # Errors
//
// Every error names the node of the IR graph the user wrote, as a
// spec.NodeError ("node 3 (inv): element 0: div over rat: division by
// zero"), whichever path failed. The typed graph and the tape number their
// nodes differently (the parameters come first, linear and layernorm
// decompose into several nodes), so Lowered keeps a map from every
// typed-graph entry and TapeRun one from every tape node to the IR node it
// belongs to, and an error of either is moved to the IR node
// (spec.Relocate) before it is returned; GraphErr and TapeErr do the same
// for a caller that runs the lowered graph or the recorded tape itself.
package irgrad
