// Package irsem is the canonical IR of tlcheck: TorchLean's NN.IR.Graph,
// its torchlean.ir.v1 wire format and tlcheck's superset of it,
// tlcheck.ir.v1 (more tags, the same grammar; see Graph.Format and
// EncodeTorchLean), its semantics over any scalar, and its lowering to a
// forward-only graph (IRExec.ForwardGraph).
//
// A Graph is data: each Node has an id (its index), parent ids (all
// smaller, so the graph is acyclic and evaluation is one pass), a Kind (an
// Op tag with its static attributes) and a declared output shape.
// Parameters live apart, in a Payload keyed by node id, as exact
// rationals. The graph has no scalar type: DenoteAll interprets one *Graph
// over spec.Rat, spec.F32, spec.F64, spec.Binary32, spec.Interval or any
// other spec.Scalar without rewriting it, converting payload values with
// T.FromRat.
//
// Every tag takes its meaning from the spec primitive registry wherever
// the registry has the primitive (TagInfo.Prim names it: mul_elem is mul,
// max_elem max, layernorm layer_norm, linear linear with W and b from the
// payload, batch_norm_eval batch_norm_eval with its statistics from the
// payload, bernoulli_mask keep_mask, conv with W and b from the payload,
// …). Every tag has a registry primitive, so every tag has JVP and VJP
// rules.
//
// One name per op, and why five tags differ (issue 29 point 3, decided):
// the IR tags mul_elem, max_elem, min_elem, layernorm and bernoulli_mask
// are TorchLean's own spelling in its torchlean.ir.v1 format, which
// EncodeGraph writes whenever every tag is TorchLean's and which TorchLean
// itself reads. Renaming them would make those files unreadable by
// TorchLean, so the tags stay, declared once, in the registry entry's
// IRForm, and every other name a user sees (check, certificates, the
// command line, the tlcheck.ir.v1 tags that are ours) is the registry's.
// TagInfo.Prim is the one mapping between the two.
//
// Decoding is strict (unknown, duplicate and missing fields, trailing data
// and malformed numbers are errors; numbers are read exactly, never through
// float64; sizes are bounded), and every error is an *Error whose one-line
// text names the node, its tag and the field:
//
//	node 2 (relu): field "parents": parent 5 is not < id 2 (…)
//	node 4 (linear): payload entry missing "W"
//	node 3 (exp): exp has no exact rational semantics; …
//
// FORMAT.md documents the graph, payload and tensor documents.
//
// The tag table is derived, not stated here: every registry primitive
// with an IR form (spec.OpInfo.IR) is a tag with that form's arity,
// attributes and payload parameters and the primitive's exactness, so a
// primitive added to the registry (or with spec.RegisterElementwise)
// decodes, checks and denotes with no edit to this package; irsem itself
// states only the input. As of this writing the
// tags, their arity, attributes, payload parameters and registry
// primitives are (Ops lists them at run time):
//
//	tag                  arity  attributes                                  payload              registry
//	input                0      —                                           —                    —
//	const                0      value_shape                                 value                const
//	rand_uniform         0      seed                                        —                    rand_uniform
//	bernoulli_mask       1      seed (parent: scalar keep probability)      —                    keep_mask
//	add sub              2      —                                           —                    add sub
//	mul_elem             2      —                                           —                    mul
//	max_elem min_elem    2      —                                           —                    max min
//	abs sqrt inv relu    1      —                                           —                    same name
//	tanh sigmoid exp log 1      —                                           —                    same name
//	sin cos softplus     1      —                                           —                    same name
//	safe_log             2      — (second parent: scalar ε)                 —                    safe_log (const ε); else softplus, +ε, log
//	matmul               2      —                                           —                    matmul
//	linear               1      —                                           W, b                 linear
//	reduce_sum           1      axis                                        —                    reduce_sum
//	reduce_mean          1      axis                                        —                    reduce_mean
//	sum                  1      —                                           —                    sum
//	softmax              1      axis                                        —                    softmax
//	hard_masked_softmax  1      mask                                        —                    hard_masked_softmax
//	layernorm            1      axis (first normalized axis)                gamma, beta, eps     layer_norm on [outer, inner]
//	batch_norm_eval      1      channel_axis, channels                      mean, var, gamma, beta, eps  batch_norm_eval
//	permute              1      perm                                        —                    permute
//	transpose            1      axis1, axis2                                —                    transpose
//	broadcast_to         1      from_shape, to_shape                        —                    broadcast_to
//	reshape              1      in_shape, out_shape                         —                    reshape
//	flatten              1      in_shape                                    —                    flatten (axis 0)
//	concat               2..∞   axis                                        —                    concat
//	conv                 1      kernel, stride, padding, dilation, groups,  W, b (optional)      conv
//	                            in_channels, out_channels
//	max_pool avg_pool    1      kernel, stride, padding                     —                    same name
//	conv_transpose       1      kernel, stride, pads, dilation,             W, b (optional)      conv_transpose (superset)
//	                            output_padding, groups, in_channels,
//	                            out_channels
//	max_pool_nd          1      kernel, stride, pads, dilation, ceil_mode   —                    max_pool_nd (superset)
//	avg_pool_nd          1      kernel, stride, pads, dilation, ceil_mode,  —                    avg_pool_nd (superset)
//	                            count_include_pad
//	detach               1      —                                           —                    detach
//	mse_loss             2      —                                           —                    mse_loss
//
// and the tlcheck.ir.v1 superset tags of spec's other primitives:
//
//	div                  2      —                                           —                    div
//	scale                1      c                                           —                    scale
//	neg square gelu sign 1      —                                           —                    same name
//	clamp                1      lo, hi                                      —                    clamp
//	log_softmax          1      axis                                        —                    log_softmax
//	slice                1      axis, start, end                            —                    slice
//	shrink               1      lambd, bias                                 —                    shrink
//	pad                  1      widths, mode, value                         —                    pad
//	gather               1      axis, indices_shape, indices                —                    gather
//	lrn                  1      size, alpha, beta, bias                     —                    lrn
//	instance_norm        1      channels                                    gamma, beta, eps     instance_norm
package irsem
