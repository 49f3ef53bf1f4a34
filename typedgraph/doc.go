// Package typedgraph is tlcheck's shape-typed SSA graph: the runtime
// artifact TorchLean calls Torch.TypedGraph α Γ τ, together with the
// autograd transforms built on it and the tagless-final Ops interface that
// lets one model program run either eagerly or as a recorded graph.
//
// # Graphs
//
// A Graph has a context Γ (a list of input shapes) and appends nodes. The
// entries of a graph are numbered in one sequence: the context inputs
// 0 … len(Γ)−1, then the nodes in the order they were appended. A node reads
// any earlier entries (fan-out and duplicate reads are allowed, and a
// duplicate read is meaningful: mul(x, x) owes two contributions to x),
// names a registry primitive with its attributes, and declares its output
// shape, which is checked against the primitive's shape rule when the node
// is appended. A separate result reference selects the graph's output; it
// may name a context input or any node, so no dummy final node is needed.
//
// Go cannot index a type by a list of shapes, so the shape agreement that
// Lean enforces in the graph's type is enforced here once, at construction:
// after Append succeeds, every read has the shape the primitive accepts.
// Evaluation then only has to check the context values it is given.
//
// # Node payload
//
// Each node carries the executable payload of the chapter — Forward, JVP,
// VJP and Validate over its context (the values of every entry before it) —
// all derived from the primitive registry the graph was built with. VJP
// returns one contribution per context entry: zeros for the entries the
// node does not read, and the sum of the per-slot contributions for an entry
// it reads more than once. No proof field is carried; the local adjointness
// law dot(jvp(x, dx), δ) = Σ dot(dx_i, vjp(x, δ)_i) is checked by the tests
// over exact rationals.
//
// # Execution plan
//
// A graph is recorded once and evaluated many times. Compile turns it into
// an Exec: a plan whose per-node primitive, attribute and input lists are
// resolved once, with a preallocated argument slice per node and a
// preallocated cotangent buffer per entry, so that an evaluation allocates
// no closures, no tape nodes and no contribution lists. For every
// elementwise primitive and for sum, linear, mse_loss (and float32 2-D
// matmul) the plan also preallocates value and contribution buffers and
// runs planned kernels: the elementwise ones call the registry's own
// scalar rule (spec.Prim.Unary, spec.Prim.Binary), the others perform the
// reference rule's scalar operations in the rule's order; other
// primitives run their registry rule, which allocates its result. Gradient accumulation is done
// in place, existing value on the left, exactly as the tape's one
// accumulation function does it, so the results agree bit for bit with the
// corresponding tape sweep over every scalar, floats included (up to which
// NaN a NaN result carries, which Go does not specify).
//
// Exec offers two reverse sweeps:
//
//   - Backward is the sweep the trainer runs: the tape's dense sweep (an
//     unreached entry is skipped, a stop-gradient node sends nothing, context
//     entries can be excluded with SetRequiresGrad), densified with zeros.
//     It equals tape.BackwardAll of the same program recorded eagerly.
//   - BackwardFrom is the proof-facing every-node sweep: every node's VJP
//     runs, even where only zeros arrived. Graph.BackpropAllCtx is this
//     sweep from the seed array, and it equals tape.BackwardFromAll of the
//     checked lowering.
//
// The two agree whenever the zero-preservation condition holds (for example
// over Rat with exact linear VJPs); the every-node sweep may fail or produce
// NaN at singular points where the skipping sweep does not.
//
// The Graph methods Eval, JVPCtx, BackpropCtx, BackpropAllCtx and
// BackpropAllFrom are pure: each call builds its own plan and returns
// tensors no one else holds. An Exec reuses its buffers; what it returns is
// valid until its next call.
//
// # Checked lowering
//
// Lower and LowerTo turn a graph and concrete context values into a
// tape.Tape: each node is validated against its declared input shapes,
// evaluated, checked against its declared output shape and appended with
// tape.Append; its backward emits one (possibly zero) contribution per
// entry it reads, in read order. The graph describes the reusable
// computation; the tape captures the values of one invocation.
//
// # Transforms
//
// Grad, VJP, JVP, JacRev, JacFwd, HVP and Hessian follow the chapter's
// autograd.* transforms: a scalar program is traced into a typed graph,
// lowered with checked lowering and differentiated. HVP and Hessian are
// forward-over-reverse: the graph is rebuilt over spec.Dual[T] (ToDual),
// lowered over duals with input tangents, reversed with seed 1, and the
// tangent parts of the gradient are read. In the dual rebuild a
// stop-gradient primitive drops the tangent of its value (plain dual
// arithmetic would carry it through detach), so that over Rat HVP equals
// forward mode applied to the gradient exactly. Jacobians are laid out with
// the output axes first, then the input axes.
//
// # Programs and interpreters
//
// A model program is written once against Ops (tagless final). Two
// interpreters implement it: Eager, whose reference is a tape.Ref into a
// tape.Session and which appends a node at once for every operation, and
// Builder, whose reference is an SSA Var and which records a graph node and
// computes nothing. A Program is a Go function value over one scalar; since
// the Builder computes nothing, the graph it records does not depend on the
// scalar, and Rebuild re-instantiates a recorded graph's nodes (op names and
// attributes) over any other scalar with that scalar's registry. That is how
// the higher-order transforms obtain the same program over dual numbers.
package typedgraph
