package spec

import (
	"fmt"
	"math"
	"strings"
)

// AttrType is the value type of an attribute, as its encodings spell it.
type AttrType string

// The attribute types.
const (
	AttrNat    AttrType = "natural"   // a JSON natural; an int
	AttrUint64 AttrType = "uint64"    // a JSON natural below 2^64 (seed)
	AttrNats   AttrType = "naturals"  // a JSON array of naturals; an []int
	AttrShape  AttrType = "shape"     // a JSON array of extents; a Shape
	AttrRat    AttrType = "rational"  // a JSON string "p/q" or "p"; a *big.Rat (spec.Rat in the IR)
	AttrRats   AttrType = "rationals" // a JSON array of rational strings; a []*big.Rat
	AttrString AttrType = "string"    // a JSON string from a fixed set
	AttrBool   AttrType = "boolean"   // a JSON boolean
	AttrBools  AttrType = "booleans"  // a row-major boolean mask
	AttrWindow AttrType = "window"    // a window geometry (Window): its fields are attributes of their own
)

// AttrLimit bounds an attribute's value where an encoding reads it, before
// any rule sees it: an integer (or every entry of an integer list) lies in
// [0, Max], a list has at most Len entries, a string is one of Values. A
// shape's bounds are its type's (extents at most 2^31−1, rank at most
// MaxRank); a uint64 takes any natural below 2^64.
type AttrLimit struct {
	// Max is the largest integer accepted; 0 means DefaultMaxElements.
	Max int
	// Len is the most entries a list may have; 0 means MaxRank, and
	// LenElements the graph's element limit (limits.Current().GraphElements,
	// capped by the reader's own).
	Len int
	// Values lists the accepted values of a string; nil accepts none.
	Values []string
}

// LenElements is AttrLimit.Len for a list as long as a tensor.
const LenElements = -1

// The limits the declaration uses.
var (
	ranked   = AttrLimit{}                                                // integers ≤ DefaultMaxElements, lists of one entry per axis
	extent   = AttrLimit{Max: math.MaxInt32}                              // an extent, or an index into one
	pairs    = AttrLimit{Len: 2 * MaxRank}                                // two entries per axis
	elements = AttrLimit{Max: math.MaxInt32, Len: LenElements}            // indices into an extent, as many as a tensor's elements
	padModes = AttrLimit{Values: []string{"constant", "reflect", "edge"}} // pad's modes
)

// AttrSpec declares one attribute of the primitives: its name, the field
// that holds it, its type, its value when absent, what it means and the
// bounds an encoding reads it within. The table AttrSpecs is the one
// declaration of every attribute: an entry's OpInfo.Attrs and
// IRForm.Attrs name attributes declared there (the registry refuses to
// build otherwise), and the encodings derive from it — the certificate
// encoding (package certificates) is generated from it and converts Attrs
// field by field in its order under its names, and the IR codec (package
// irsem) reads and writes every IR attribute by its type and limit, with
// no case of its own per attribute.
type AttrSpec struct {
	// Name is the attribute's name in every encoding: the key of a
	// certificate's attrs object (or of its window object) and of an IR
	// node's member.
	Name string
	// Field is the Attrs field that holds it ("Window.Kernel" for a field
	// of the Window), or "" for an attribute that only the IR spells (its
	// value reaches a rule through another field: transpose's axis1 is
	// Attrs.Axis, reshape's out_shape is Attrs.Shape, …).
	Field string
	// IR is true when the name is an attribute of some IR tag.
	IR bool
	// Type is the value's type.
	Type AttrType
	// Default is the value a rule sees when the attribute is absent.
	Default string
	// Doc says what the attribute is, and which primitives read it.
	Doc string
	// Limit bounds the value an encoding reads.
	Limit AttrLimit
}

// attrSpecs is the declaration of every attribute: first the fields of
// Attrs in field order (the certificate encoding's order), then the
// fields of Window, then the attributes only the IR spells.
var attrSpecs = []AttrSpec{
	{"axis", "Axis", true, AttrNat, "0", "the axis of reduce_sum, reduce_mean, reduce_prod, softmax, log_softmax, concat, slice, gather; the first normalized axis of layer_norm; batch_norm_eval's channel axis; transpose's first axis", ranked},
	{"axis2", "Axis2", true, AttrNat, "0", "transpose: the second axis", ranked},
	{"shape", "Shape", false, AttrShape, "nil", "reshape, flatten, broadcast_to: the target shape; const, rand_uniform, keep_mask: the value's shape", ranked},
	{"perm", "Perm", true, AttrNats, "nil", "permute: output axis i is input axis perm[i]", ranked},
	{"start", "Start", true, AttrNat, "0", "slice: the first index on axis", extent},
	{"end", "End", true, AttrNat, "0", "slice: one past the last index on axis", extent},
	{"c", "C", true, AttrRat, "nil (0)", "scale: the factor; quant_int: the scale s > 0", ranked},
	{"lo", "Lo", true, AttrRat, "nil (0)", "clamp: the lower bound; trunc_int, quant_int: the least value of the integer range", ranked},
	{"hi", "Hi", true, AttrRat, "nil (0)", "clamp: the upper bound; trunc_int, quant_int: the greatest value of the integer range", ranked},
	{"eps", "Eps", true, AttrRat, "nil (DefaultNormEps, 1/100000; 0 for l2_normalize)", "safe_log, layer_norm, batch_norm_eval, instance_norm, l2_normalize: ε (the IR gives it as a parent or a payload parameter, except l2_normalize's tag, which spells it as an attribute)", ranked},
	{"p", "P", false, AttrRat, "nil (0)", "bernoulli_mask, dropout: the drop probability", ranked},
	{"seed", "Seed", true, AttrUint64, "0", "rand_uniform, bernoulli_mask, keep_mask, dropout: the splitmix64 stream key of the draw", ranked},
	{"values", "Values", false, AttrRats, "nil", "const: the values, row-major (the IR gives them as the payload's value)", ranked},
	{"window", "Window", false, AttrWindow, "nil", "conv, conv_transpose and the pools: the geometry (the IR spells its fields as attributes of their own)", ranked},
	{"widths", "Widths", true, AttrNats, "nil", "pad: 2·rank naturals, every axis's begin width, then every end width", pairs},
	{"mode", "Mode", true, AttrString, `""`, "pad: how the border is filled (its values: Limit)", padModes},
	{"value", "Value", true, AttrRat, "nil (0)", "pad: the fill value of constant mode", ranked},
	{"indices", "Indices", true, AttrNats, "nil", "gather: the constant indices, row-major over indices_shape, each below the extent of axis", elements},
	{"indices_shape", "IndicesShape", true, AttrShape, "nil", "gather: the indices' shape", ranked},
	{"size", "Size", true, AttrNat, "0", "lrn: the channel window", ranked},
	{"alpha", "Alpha", true, AttrRat, "nil (0)", "lrn: α in y = x/(bias + α/size·Σx²)^β", ranked},
	{"beta", "Beta", true, AttrRat, "nil (0)", "lrn: β", ranked},
	{"bias", "Bias", true, AttrRat, "nil (0)", "lrn: the bias k; shrink: the bias; quant_int: the zero point (an integer)", ranked},
	{"lambd", "Lambd", true, AttrRat, "nil (0)", "shrink: the threshold λ", ranked},
	{"mask", "Mask", true, AttrBools, "nil", "hard_masked_softmax: true where the entry takes part, row-major over the input (the IR spells it {\"shape\":[…],\"allowed\":[…]})", ranked},
	{"maxnorm", "Maxnorm", true, AttrRat, "nil (refused; the IR reads an absent one as 0)", "renorm: the bound c ≥ 0 on the 2-norm of each sub-tensor x[…, i, …] along axis", ranked},

	{"kernel", "Window.Kernel", true, AttrNats, "nil", "window primitives: the window extent per spatial axis", ranked},
	{"stride", "Window.Stride", true, AttrNats, "nil", "window primitives: the step per spatial axis", ranked},
	{"pads", "Window.Pads", true, AttrNats, "all 0", "window primitives: 2 per spatial axis, every begin then every end (ONNX order)", pairs},
	{"dilation", "Window.Dilation", true, AttrNats, "all 1", "conv, conv_transpose, max_pool_nd, avg_pool_nd: the kernel element spacing per spatial axis", ranked},
	{"output_padding", "Window.OutputPadding", true, AttrNats, "all 0", "conv_transpose: extra output extent at the end of each spatial axis", ranked},
	{"groups", "Window.Groups", true, AttrNat, "1", "conv, conv_transpose: the channel groups", ranked},
	{"ceil_mode", "Window.CeilMode", true, AttrBool, "false", "max_pool_nd, avg_pool_nd: round the output extent up", ranked},
	{"count_include_pad", "Window.CountIncludePad", true, AttrBool, "false", "avg_pool_nd: divide by the window positions inside the padded input", ranked},
	{"padding", "Window.Padding", true, AttrNats, "nil", "the IR's conv, max_pool, avg_pool: symmetric padding per spatial axis (Pads = padding ++ padding)", ranked},
	{"in_channels", "Window.InChannels", true, AttrNat, "0", "the IR's conv, conv_transpose: input channels (the extent of the channel axis)", extent},
	{"out_channels", "Window.OutChannels", true, AttrNat, "0", "the IR's conv, conv_transpose: output channels", ranked},

	{"value_shape", "", true, AttrShape, "", "the IR's const: the constant's shape (Attrs.Shape)", ranked},
	{"axis1", "", true, AttrNat, "", "the IR's transpose: the first axis (Attrs.Axis)", ranked},
	{"from_shape", "", true, AttrShape, "", "the IR's broadcast_to: the parent's shape", ranked},
	{"to_shape", "", true, AttrShape, "", "the IR's broadcast_to: the target shape (Attrs.Shape)", ranked},
	{"in_shape", "", true, AttrShape, "", "the IR's reshape, flatten: the parent's shape", ranked},
	{"out_shape", "", true, AttrShape, "", "the IR's reshape and tile: the target shape (Attrs.Shape)", ranked},
	{"channel_axis", "", true, AttrNat, "", "the IR's batch_norm_eval: the channel axis (Attrs.Axis)", ranked},
	{"channels", "", true, AttrNat, "", "the IR's batch_norm_eval, instance_norm: the channel axis's extent", extent},
}

// AttrSpecs returns the declaration of every attribute: the fields of
// Attrs in field order (the order of a certificate's attrs object), the
// fields of Window in field order, then the attributes only the IR
// spells.
func AttrSpecs() []AttrSpec {
	out := append([]AttrSpec(nil), attrSpecs...)
	for i := range out {
		out[i].Limit.Values = append([]string(nil), out[i].Limit.Values...)
	}
	return out
}

// LookupAttr returns the declaration of the attribute called name.
func LookupAttr(name string) (AttrSpec, bool) {
	for _, a := range attrSpecs {
		if a.Name == name {
			a.Limit.Values = append([]string(nil), a.Limit.Values...)
			return a, true
		}
	}
	return AttrSpec{}, false
}

// checkAttrs reports an attribute that an entry names but AttrSpecs does
// not declare: OpInfo.Attrs names fields of Attrs, IRForm.Attrs the IR's
// attribute names.
func checkAttrs(o *OpInfo) error {
	fields := map[string]bool{}
	names := map[string]bool{}
	for _, a := range attrSpecs {
		if a.Field != "" && !strings.Contains(a.Field, ".") {
			fields[a.Field] = true
		}
		if a.IR {
			names[a.Name] = true
		}
	}
	for _, f := range o.Attrs {
		if !fields[f] {
			return fmt.Errorf("spec: %s reads attribute field %q, which AttrSpecs does not declare", o.Name, f)
		}
	}
	if o.IR != nil {
		for _, n := range o.IR.Attrs {
			if !names[n] {
				return fmt.Errorf("spec: %s's IR tag %s has attribute %q, which AttrSpecs does not declare", o.Name, o.IR.Tag, n)
			}
		}
	}
	return nil
}
