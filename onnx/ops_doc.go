// # Importing
//
// Import (and ImportFile) maps a model to one canonical-IR graph
// (irsem.Graph) and its payload (irsem.Payload). The result passes
// irsem's Graph.Check and CheckPayload: every declared shape is the one
// the tag infers, and a mismatch — a bug of a mapping, never silently
// accepted — is reported naming the ONNX node the IR node came from
// (Imported.Origin). Graphs using a tag TorchLean lacks (IRForm.Superset)
// are tlcheck.ir.v1 documents; the others stay torchlean.ir.v1.
//
// Values. Every ONNX value has a static shape at import: float graph
// inputs from their ValueInfo (a symbolic or unknown extent from
// Options.Shapes, else an error naming the input and the dimension), and
// every node output by the importer's own inference from the operator
// specification of the model's default-domain opset, compared with the
// graph's value_info and declared outputs where they state extents.
// Integer values are compile-time constants: integer initializers,
// Constant outputs, integer inputs bound at import (Options.Bind, e.g.
// Embedding indices), and what Shape, Reshape, Flatten, Squeeze,
// Unsqueeze, Transpose, Concat, Slice, Gather, ConstantOfShape, Cast and
// Add/Sub/Mul (overflow refused; integer Div refused) compute from them
// (folded at import: PyTorch's Shape → Gather → Unsqueeze → Concat →
// Reshape flatten becomes one reshape). Float initializers are never
// folded, so that each stays a payload field a gradient can be reported
// for: where the mapping is direct they are node parameters (Conv W/B →
// conv W/b; Gemm with transB = 1, α = β = 1 and a [N] bias → linear W/b;
// BatchNormalization scale/B/mean/var → batch_norm_eval gamma/beta/mean/
// var; InstanceNormalization scale/B → instance_norm gamma/beta), and
// otherwise one const node (payload "value") shared by all its uses.
// Imported.Initializers lists every initializer with these uses.
//
// Packing. One float input and one output: the IR input and output are
// those values. Several float inputs: the IR input is the rank-1
// concatenation of their flattened values in graph order, unpacked by
// slice + reshape (no float input: rank 1, extent 0). Several outputs:
// the IR output is the rank-1 concatenation of the flattened outputs.
// IOValue.Offset says where each lies; PackInputs and UnpackOutputs do
// the packing; OptionsFor splits the tensors of input_N.pb files into
// bound integer inputs and float inputs.
//
// Exactness. Float32 (and float64) data and attributes are read as the
// exact rationals they denote (α = 0.01 is the float32 nearest 1/100, not
// 1/100). Over spec.Rat a graph evaluates exactly when all its tags are
// exact and its data keeps them rational (a batch norm's √(σ²+ε) rarely
// is).
//
// The mapping, op by op (opset notes in brackets; "c·x" is the registry's
// scale, "min(x,0)" a min_elem with a const 0):
//
//	Add Sub Mul Div        add sub mul_elem div; numpy broadcasting by broadcast_to of each side [opset < 7: equal
//	                       shapes, or broadcast=1 with the second operand at axis (default: the suffix)]
//	Sum Max Min Mean       left folds of add / max_elem / min_elem over broadcast inputs; Mean: the sum's fold, c·x with c = 1/n
//	Relu Sigmoid Tanh Exp  relu sigmoid tanh exp log sqrt abs softplus sin cos neg inv sign
//	Log Sqrt Abs Softplus  (Sqrt is sqrt(max(x,0)); Log refuses x ≤ 0 at evaluation)
//	Sin Cos Neg Reciprocal
//	Sign
//	Pow                    constant exponent with equal elements: integer n ≤ 64 → n−1 mul_elem (1/xⁿ: inv; n = 0: const 1),
//	                       1/2 → sqrt, other p → exp(p·log x)
//	Clip                   clamp when both bounds are given (lo ≤ hi), else max_elem / min_elem with a const
//	                       [opset < 11: attributes min/max; from 11: optional constant inputs]
//	LeakyRelu              relu(x) + α·min(x,0), α = 0.01
//	PRelu                  relu(x) + slope⊙min(x,0), slope broadcast to x [opset < 7: one slope, or one per channel (axis 1)]
//	Elu                    relu(x) + α·(exp(min(x,0)) − 1)
//	Selu                   γ·(relu(x) + α·(exp(min(x,0)) − 1)), ONNX's float32 α and γ
//	Softsign               x / (|x| + 1)
//	HardSigmoid            clamp(α·x + β, 0, 1)
//	Shrink                 shrink (lambd, bias)
//	Identity               the input itself (no node)
//	Dropout                the input itself: inference. ratio is ignored; training_mode must be a constant 0;
//	                       a used mask output is refused
//	Softmax LogSoftmax     softmax / log_softmax / neg + softmax on one axis [from opset 13: axis, default −1; before:
//	Softmin                coerced to 2-D at axis (default 1): reshape, the op on axis 1, reshape — the op on the last
//	                       axis directly when axis is the last]
//	ReduceSum ReduceMean   one reduce_sum / reduce_mean per axis, highest first, then reshape for keepdims = 1 (a mean of
//	                       means over equal counts is the mean) [axes: attribute before opset 13 (ReduceSum) / 18
//	                       (ReduceMean), constant input from it; noop_with_empty_axes]
//	MatMul                 matmul (numpy batch broadcasting, 1-D promotion)
//	Gemm                   linear (see Values; permute first when transA), else permute, matmul, c·x, add of β·C broadcast
//	Reshape                reshape; 0 copies the input extent unless allowzero = 1 [opset 14], −1 is inferred
//	                       [shape: attribute before opset 5, constant input from it]
//	Flatten                reshape to [∏dims[:axis], ∏dims[axis:]] (axis default 1, negative from opset 11)
//	Squeeze Unsqueeze      reshape [axes: attribute before opset 13, constant input from it; Squeeze without axes: every 1]
//	Transpose              permute (perm default reversed); none for the identity permutation
//	Concat                 concat (one input: itself)
//	Split                  one slice per output [split: attribute before opset 13, input from it; num_outputs from 18;
//	                       without sizes equal parts (before 18 they must divide the extent)]; an integer constant
//	                       is folded (a shape vector into its extents)
//	If                     the taken branch inlined when the condition is decided at import (ops_if.go); a computed
//	                       condition is data-dependent and refused
//	Slice                  per axis: slice when the step is 1, gather of the stepped indices otherwise; starts and ends
//	                       clamped as the operator specifies (negative steps: start to [0, n−1], end to [−1, n−1])
//	                       [opset < 10: attributes starts/ends/axes; from 10: constant inputs with steps]
//	Gather                 gather with constant indices (negatives normalised); on an integer constant folded
//	Expand                 broadcast_to of the bidirectional broadcast of the input shape and the constant shape
//	Tile                   tile (the registry primitive) to extent in·repeats per axis
//	ScatterElements        scatter (reduction none, constant indices, duplicate targets refused; import_extra.go)
//	Constant               a const node on first use as float data (value, value_float(s), value_int(s); the sparse and
//	                       string forms are refused)
//	ConstantOfShape        a constant of the constant shape filled with value (default float 0)
//	Shape                  an integer constant (start, end from opset 15)
//	Cast                   integer constants converted; a float value cast to its own or a wider float type is itself;
//	                       to a narrower float type, the registry's round_f16, round_bf16 or round_f32 (exact
//	                       round to nearest even; a constant is rounded at import; import_cast.go); a computed
//	                       float value to INT8…INT64, UINT8, UINT16: the registry's trunc_int with the type's
//	                       range (truncation toward zero; out of range: a domain error), read only by a Cast or
//	                       as a graph output
//	Pad                    pad (constant, reflect, edge; wrap refused); negative pads crop (slice)
//	                       [pads: attribute before opset 11 (paddings before 2), constant inputs from 11, axes from 18]
//	Conv                   conv (1-D/2-D/3-D, groups, dilations, strides); W and B constant; symmetric pads are conv's
//	                       padding, asymmetric ones a constant-0 pad node before a conv without padding;
//	                       auto_pad NOTSET, VALID, SAME_UPPER, SAME_LOWER
//	ConvTranspose          conv_transpose (W [C, M/group, k…] and B constant; pads begin/end, output_padding, dilations,
//	                       group); output_shape and auto_pad SAME_* derive the pads as the operator specifies
//	MaxPool AveragePool    max_pool / avg_pool where they mean the ONNX op (symmetric pads smaller than the kernel, no
//	                       dilation, no ceil effect; avg_pool with pads only for count_include_pad = 1), max_pool_nd /
//	                       avg_pool_nd otherwise; ceil_mode's last window starts inside the input or the begin padding;
//	                       storage_order must be 0; a used Indices output is refused
//	GlobalAveragePool      reshape [N, C, ∏spatial], reduce_mean on axis 2, reshape [N, C, 1, …]
//	BatchNormalization     batch_norm_eval on axis 1 (inference: is_test = 1 before opset 7, spatial = 1 before 9,
//	                       training_mode = 0 from 14; momentum ignored; used statistics outputs refused)
//	InstanceNormalization  instance_norm
//	LRN                    lrn (size, alpha, beta, bias)
//
// Transformer ops, masks and the newer opsets (opsets 1–28; the argument
// for 22–28 is at maxOpset): Erf, Gelu, LayerNormalization,
// RMSNormalization, GroupNormalization, Attention, RotaryEmbedding,
// HardSwish, CumSum, Einsum, Resize and ScatterND by decomposition
// (ops_transformer.go, ops_einsum.go, ops_resize.go, ops_scatter.go, each
// with its formula); ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp and GlobalMaxPool
// (ops_reduce2.go); comparisons, logic, Where, Range, Trilu, rounding,
// integer Div and Mod, ArgMax/ArgMin, NonZero folded on constants, decided
// on recorded inputs and on values that ops which never round derive from
// them (known.go), and refused as data-dependent on other computed values
// (ops_fold.go), except a Where whose condition is Greater or Less of
// computed floats, imported exactly as Y + relu(sign(a − b))·(X − Y)
// (import_datacmp.go: PyTorch's Softplus with its threshold); ReduceMax/
// ReduceMin of a constant folded (ops_fold_reduce.go); and the −∞ additive
// attention mask carried to hard_masked_softmax (import_mask.go).
//
// QuantizeLinear and DequantizeLinear [10–28] (quantize.go): folded at
// import, exactly, when x, the scale and the zero point are known on the
// recorded inputs (constants, recorded inputs, what ops that never round
// derive from them): Quantize = saturate(round_half_even(fl_P(x / s)) +
// zp) for the integer types, the Cast's rounding (saturate) for float 8,
// saturating for FLOAT4E2M1; Dequantize = (x − zp)·s rounded to the
// output type; per tensor, per axis and blocked; an element where the
// operator text and ONNX's reference differ is undefined (inconclusive).
// A Quantize of a value computed by rounding ops is refused naming the
// node. DynamicQuantizeLinear [11] (quantize_dynamic.go): folded on a
// known x, each step of the text's formulas rounded to FLOAT.
//
// Gradient (domain ai.onnx.preview.training, the training-only operator
// of the ONNX test suite): the forward part of the model is imported and
// the node is recorded in Imported.Gradients (GradientSpec: the output y,
// the inputs xs, the node's outputs and their positions among the graph
// outputs); the IR does not compute its outputs, so they are left out of
// Imported.Outputs, and a caller checks the recorded values against the
// exact gradient of IR output OfOutput (cotangent one on its elements)
// with respect to the inputs WRTInputs. y must be a float graph output
// and every xs entry a float graph input.
//
// Refused, with one line naming the ONNX node (Where()), its op type and
// the attribute, input or output: unknown op types; a domain other than
// the default one (and Gradient's); any attribute the mapping does not
// read (nothing is silently ignored; legacy hints such as
// consumed_inputs are accepted only at the opsets that have them);
// attributes of the wrong type; unsupported attribute values (auto_pad,
// Pad mode, storage_order, training modes); non-constant shapes, axes,
// pads, indices, exponents, weights and normalisation statistics; integer
// tensors used as float data and other element-type mismatches; values
// no node, initializer or input produces; outputs whose meaning the IR
// does not model when they are used (Dropout's mask, MaxPool's Indices,
// BatchNormalization's statistics); graph inputs whose shape differs
// from the one given, unbound integer inputs, and shapes beyond the
// limits of package limits (checked before anything is allocated).
package onnx
