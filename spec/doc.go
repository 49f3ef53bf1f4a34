// Package spec is the bottom of tlcheck: shapes, tensors, the scalar
// algebras the whole engine is generic over, and the primitive registry
// that every execution path (tape, typed graph, IR, providers) takes its
// forward, JVP and VJP rules from. The registry is also the one source of
// every other per-op fact (OpInfo: IR form, exactness and partiality,
// smoothness and ties, zero preservation, polynomiality, accumulation,
// generator hints, providers); every other package derives its per-op
// tables from Infos. RegisterElementwise adds a unary elementwise
// primitive whose rules are Expr values, evaluated generically over every
// scalar, so that one entry serves every execution path.
//
// Go cannot index a type by a value, so TorchLean's shape-indexed
// Tensor α s becomes a Tensor[T] that carries its Shape at run time, and
// every consumer checks it. The shape-erased SomeTensor[T] exists for
// heterogeneous collections (parameter packs, model state); recovering a
// Tensor from it requires a successful Cast, the runtime analogue of
// Lean's `value.shape = shape` evidence.
package spec
