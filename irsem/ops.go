package irsem

import (
	"fmt"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/spec"
)

// Op is an operation tag, spelled exactly as in torchlean.ir.v1.
type Op string

// The operation tags of the canonical IR (§4 of the semantics reference).
const (
	OpInput             Op = "input"
	OpConst             Op = "const"
	OpRandUniform       Op = "rand_uniform"
	OpBernoulliMask     Op = "bernoulli_mask"
	OpAdd               Op = "add"
	OpSub               Op = "sub"
	OpMulElem           Op = "mul_elem"
	OpMaxElem           Op = "max_elem"
	OpMinElem           Op = "min_elem"
	OpAbs               Op = "abs"
	OpSqrt              Op = "sqrt"
	OpInv               Op = "inv"
	OpRelu              Op = "relu"
	OpTanh              Op = "tanh"
	OpSigmoid           Op = "sigmoid"
	OpExp               Op = "exp"
	OpLog               Op = "log"
	OpSin               Op = "sin"
	OpCos               Op = "cos"
	OpSoftplus          Op = "softplus"
	OpSafeLog           Op = "safe_log"
	OpMatmul            Op = "matmul"
	OpLinear            Op = "linear"
	OpReduceSum         Op = "reduce_sum"
	OpReduceMean        Op = "reduce_mean"
	OpSum               Op = "sum"
	OpSoftmax           Op = "softmax"
	OpHardMaskedSoftmax Op = "hard_masked_softmax"
	OpLayerNorm         Op = "layernorm"
	OpBatchNormEval     Op = "batch_norm_eval"
	OpPermute           Op = "permute"
	OpTranspose         Op = "transpose"
	OpBroadcastTo       Op = "broadcast_to"
	OpReshape           Op = "reshape"
	OpFlatten           Op = "flatten"
	OpConcat            Op = "concat"
	OpConv              Op = "conv"
	OpMaxPool           Op = "max_pool"
	OpAvgPool           Op = "avg_pool"
	OpConvTranspose     Op = "conv_transpose" // tlcheck.ir.v1 superset
	OpMaxPoolND         Op = "max_pool_nd"    // tlcheck.ir.v1 superset
	OpAvgPoolND         Op = "avg_pool_nd"    // tlcheck.ir.v1 superset
	OpDetach            Op = "detach"
	OpMSELoss           Op = "mse_loss"
)

// The tlcheck.ir.v1 superset tags of spec's other primitives: the IR
// forms of existing registry primitives that torchlean.ir.v1 lacks, and
// the primitives added for imported models.
const (
	OpDiv          Op = "div"
	OpScale        Op = "scale"
	OpNeg          Op = "neg"
	OpSquare       Op = "square"
	OpClamp        Op = "clamp"
	OpGelu         Op = "gelu"
	OpLogSoftmax   Op = "log_softmax"
	OpSlice        Op = "slice"
	OpSign         Op = "sign"
	OpShrink       Op = "shrink"
	OpPad          Op = "pad"
	OpGather       Op = "gather"
	OpLRN          Op = "lrn"
	OpInstanceNorm Op = "instance_norm"
)

// Wire attribute field names: Go names for the declared attributes
// (spec.AttrSpecs, which states each one's type, limit and meaning; a
// test holds these constants to it) that the graph checks name in their
// errors. The codec needs none of them: it reads and writes every
// attribute by its declaration (attrs.go). Each tag reads exactly the
// attributes its TagInfo.Attrs lists, and the canonical encoding writes
// them in that order.
const (
	AttrValueShape  = "value_shape"  // const: the constant's shape (equals the node's shape)
	AttrAxis        = "axis"         // reduce_sum, reduce_mean, softmax, layernorm, concat
	AttrAxis1       = "axis1"        // transpose: first axis
	AttrAxis2       = "axis2"        // transpose: second axis
	AttrPerm        = "perm"         // permute: output axis i is input axis perm[i]
	AttrFromShape   = "from_shape"   // broadcast_to: the parent's shape
	AttrToShape     = "to_shape"     // broadcast_to: the target shape
	AttrInShape     = "in_shape"     // reshape, flatten: the parent's shape
	AttrOutShape    = "out_shape"    // reshape: the target shape
	AttrMask        = "mask"         // hard_masked_softmax: {"shape":[…],"allowed":[true,…]}
	AttrChannelAxis = "channel_axis" // batch_norm_eval: the channel axis
	AttrChannels    = "channels"     // batch_norm_eval: its extent
	AttrKernel      = "kernel"       // window tags: window extent per spatial axis
	AttrStride      = "stride"       // window tags: step per spatial axis
	AttrPadding     = "padding"      // conv, max_pool, avg_pool: symmetric padding per spatial axis
	AttrDilation    = "dilation"     // conv, conv_transpose, max_pool_nd, avg_pool_nd: kernel element spacing per spatial axis
	AttrGroups      = "groups"       // conv, conv_transpose: channel groups
	AttrInChannels  = "in_channels"  // conv, conv_transpose: input channels (extent of the channel axis)
	AttrOutChannels = "out_channels" // conv, conv_transpose: output channels

	AttrPads          = "pads"           // conv_transpose, max_pool_nd, avg_pool_nd: 2 per spatial axis, every begin then every end (ONNX order)
	AttrOutputPadding = "output_padding" // conv_transpose: extra output extent at the end of each spatial axis
)

// Payload parameter names: the fields of one payload entry.
const (
	ParamValue = "value" // const: the constant tensor
	ParamW     = "W"     // linear: weight [out,in]; conv: weight [out_channels, in_channels/groups, kernel…]
	ParamB     = "b"     // linear: bias [out] (required); conv: bias [out_channels] (optional)
	ParamGamma = "gamma" // layernorm: scale (normalized suffix shape); batch_norm_eval: scale [channels]
	ParamBeta  = "beta"  // layernorm, batch_norm_eval: shift, shaped like gamma
	ParamMean  = "mean"  // batch_norm_eval: running mean [channels]
	ParamVar   = "var"   // batch_norm_eval: running variance [channels]
	ParamEps   = "eps"   // layernorm, batch_norm_eval: ε, an exact rational (default 1/100000)
)

// TagInfo describes one IR tag: its arity, its static attributes, its
// payload parameters and the spec registry primitive that gives its
// semantics. It is derived from that primitive's entry (spec.OpInfo, the
// one description of a primitive, and its IR form spec.IRForm); irsem
// states only the graph input itself.
type TagInfo struct {
	// Op is the tag.
	Op Op
	// MinArity and MaxArity bound the parent count; MaxArity is -1 when
	// unbounded (concat).
	MinArity, MaxArity int
	// Prim names the spec registry primitive that gives the tag's
	// semantics, or is "" when irsem implements the forward rule itself
	// (generically over spec.Scalar, with fixed left folds).
	Prim string
	// Attrs lists the wire attribute fields, in canonical order.
	Attrs []string
	// Params lists the payload parameters the tag accepts, and Required
	// the subset that must be present. A tag with no Params takes no
	// payload entry.
	Params, Required []string
	// Superset marks a tag of tlcheck.ir.v1 that torchlean.ir.v1 lacks
	// (spec.IRForm.Superset): a graph using one is written as a
	// tlcheck.ir.v1 document, and a torchlean.ir.v1 document may not use
	// it.
	Superset bool
	// Exact reports exact rational semantics: over spec.Rat a tag that is
	// not Exact is rejected by name. Exact tags may still fail on
	// particular data (sqrt of a non-square, division by zero).
	Exact bool
	// Doc is a one-line description.
	Doc string
}

// native lists the tags whose meaning irsem gives itself: only the graph
// input (every forward-only tag of earlier versions — conv, the pools,
// batch_norm_eval, hard_masked_softmax, bernoulli_mask — is now a registry
// primitive with JVP and VJP rules). Every other tag is the IR form
// (spec.OpInfo.IR) of a registry primitive, which is the one place its
// arity, attributes, payload parameters and exactness are stated.
var native = []TagInfo{
	{Op: OpInput, Exact: true, Doc: "the graph input (exactly one per graph, at input_id)"},
}

// opTable is the tag table derived from the registry at one
// spec.Generation.
type opTable struct {
	gen   uint64
	list  []TagInfo
	index map[Op]*TagInfo
}

var tableCache atomic.Pointer[opTable]

// table returns the tag table: input, then the IR form of every registry
// primitive that has one, in registry order, then irsem's own other tags
// (none today). It is rebuilt when spec.RegisterElementwise adds a primitive. A
// registry tag that collides with one of irsem's own is left out (the
// registry rejects collisions among its own tags; a test checks the
// built-in ones against irsem's).
func table() *opTable {
	g := spec.Generation()
	if t := tableCache.Load(); t != nil && t.gen == g {
		return t
	}
	t := &opTable{gen: g, index: map[Op]*TagInfo{}}
	nat := map[Op]bool{}
	for _, o := range native {
		nat[o.Op] = true
	}
	t.list = append(t.list, native[0].clone())
	for _, p := range spec.Infos() {
		if p.IR == nil || nat[Op(p.IR.Tag)] {
			continue
		}
		ir := p.IR
		t.list = append(t.list, TagInfo{
			Op: Op(ir.Tag), MinArity: ir.MinArity, MaxArity: ir.MaxArity, Prim: p.Name,
			Attrs:  append([]string(nil), ir.Attrs...),
			Params: append([]string(nil), ir.Params...), Required: append([]string(nil), ir.Required...),
			Exact: p.Exact, Doc: ir.Doc, Superset: ir.Superset,
		})
	}
	for _, o := range native[1:] {
		t.list = append(t.list, o.clone())
	}
	for i := range t.list {
		t.index[t.list[i].Op] = &t.list[i]
	}
	tableCache.Store(t)
	return t
}

// lookup returns the description of tag op.
func lookup(op Op) (*TagInfo, bool) {
	o, ok := table().index[op]
	return o, ok
}

// clone returns a copy of the description that shares no slices.
func (o *TagInfo) clone() TagInfo {
	c := *o
	c.Attrs = append([]string(nil), o.Attrs...)
	c.Params = append([]string(nil), o.Params...)
	c.Required = append([]string(nil), o.Required...)
	return c
}

// LookupTag returns the description of tag op, and false for an unknown
// tag. (spec.Info describes a primitive by its registry name.)
func LookupTag(op Op) (TagInfo, bool) {
	o, ok := lookup(op)
	if !ok {
		return TagInfo{}, false
	}
	return o.clone(), true
}

// Ops lists every tag of the canonical IR: input, then the registry's tags
// in registry order.
func Ops() []TagInfo {
	t := table()
	out := make([]TagInfo, len(t.list))
	for i := range t.list {
		out[i] = t.list[i].clone()
	}
	return out
}

// arityMsg explains a parent count outside the tag's arity.
func (o *TagInfo) arityMsg(n int) string {
	switch {
	case o.MaxArity < 0:
		return fmt.Sprintf("%s takes at least %d parents, got %d", o.Op, o.MinArity, n)
	case o.MinArity == o.MaxArity:
		return fmt.Sprintf("%s takes %d parents, got %d", o.Op, o.MinArity, n)
	default:
		return fmt.Sprintf("%s takes %d to %d parents, got %d", o.Op, o.MinArity, o.MaxArity, n)
	}
}

func (o *TagInfo) hasAttr(name string) bool  { return contains(o.Attrs, name) }
func (o *TagInfo) hasParam(name string) bool { return contains(o.Params, name) }

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// HardMask is hard_masked_softmax's static mask: row-major, true where the
// entry takes part in the softmax. Its Shape must equal the node's shape.
type HardMask struct {
	Shape   spec.Shape
	Allowed []bool
}

func cloneInts(xs []int) []int {
	if xs == nil {
		return nil
	}
	return append([]int{}, xs...)
}

// Clone returns a deep copy of the kind.
func (k Kind) Clone() Kind {
	c := k
	c.Window = k.Window.Clone()
	slots, _ := attrSlots()
	for i := range slots {
		slots[i].cloneValue(&c)
	}
	return c
}

func cloneShape(s spec.Shape) spec.Shape {
	if s == nil {
		return nil
	}
	return s.Clone()
}

// intsEqual compares two int slices, nil equal to empty.
func intsEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Equal reports whether two kinds are the same operation with the same
// attributes (a nil slice equals an empty one).
func (k Kind) Equal(o Kind) bool {
	if k.Op != o.Op || (k.Window == nil) != (o.Window == nil) {
		return false
	}
	slots, _ := attrSlots()
	for i := range slots {
		if !slots[i].equal(&k, &o) {
			return false
		}
	}
	return true
}

// strayAttr returns the wire name of the first attribute (in declaration
// order) that k sets although its tag does not read it, or "". A window
// on a tag that reads no window field is reported by the first window
// field's name.
func (k Kind) strayAttr(o *TagInfo) string {
	firstWindow := ""
	readsWindow := false
	slots, _ := attrSlots()
	for i := range slots {
		s := &slots[i]
		if s.window {
			if firstWindow == "" {
				firstWindow = s.Name
			}
			readsWindow = readsWindow || o.hasAttr(s.Name)
		}
		if s.set(&k) && !o.hasAttr(s.Name) {
			return s.Name
		}
	}
	if k.Window != nil && !readsWindow {
		return firstWindow
	}
	return ""
}
