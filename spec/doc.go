// Package spec is the bottom of tlcheck: shapes, tensors, the scalar
// algebras the whole engine is generic over, and the primitive registry
// that every execution path (tape, typed graph, IR, providers) takes its
// forward, JVP and VJP rules from.
//
// Go cannot index a type by a value, so TorchLean's shape-indexed
// Tensor α s becomes a Tensor[T] that carries its Shape at run time, and
// every consumer checks it. The shape-erased SomeTensor[T] exists for
// heterogeneous collections (parameter packs, model state); recovering a
// Tensor from it requires a successful Cast, the runtime analogue of
// Lean's `value.shape = shape` evidence.
//
// # Shared rules
//
// A few facts every path needs are stated here once, so that no path
// restates them: NodeError, the one error of a node-located failure, with
// one wording ("node 3 (inv): element 0: …") and the node id of the
// user's graph (AtNode locates a kernel's error, Relocate moves a lowered
// graph's internal id to the user's); FirstDiff, the one tensor
// comparison; RequiresGrad, DropTangent and StopTangent, the stop-gradient
// rules; DefaultNormEps, the normalization ε default.
package spec
