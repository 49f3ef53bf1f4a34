package spec

import (
	"fmt"
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

// AttrSpec declares one attribute of the primitives: its name, the field
// that holds it, its type, its value when absent and what it means. The
// table AttrSpecs is the one declaration of every attribute: an entry's
// OpInfo.Attrs and IRForm.Attrs name attributes declared there (the
// registry refuses to build otherwise), and the encodings derive from it —
// the certificate encoding (package certificates) converts Attrs field by
// field in its order under its names, and the IR codec (package irsem)
// knows an attribute name by it.
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
}

// attrSpecs is the declaration of every attribute: first the fields of
// Attrs in field order (the certificate encoding's order), then the
// fields of Window, then the attributes only the IR spells.
var attrSpecs = []AttrSpec{
	{"axis", "Axis", true, AttrNat, "0", "the axis of reduce_sum, reduce_mean, reduce_prod, softmax, log_softmax, concat, slice, gather; the first normalized axis of layer_norm; batch_norm_eval's channel axis; transpose's first axis"},
	{"axis2", "Axis2", true, AttrNat, "0", "transpose: the second axis"},
	{"shape", "Shape", false, AttrShape, "nil", "reshape, flatten, broadcast_to: the target shape; const, rand_uniform, keep_mask: the value's shape"},
	{"perm", "Perm", true, AttrNats, "nil", "permute: output axis i is input axis perm[i]"},
	{"start", "Start", true, AttrNat, "0", "slice: the first index on axis"},
	{"end", "End", true, AttrNat, "0", "slice: one past the last index on axis"},
	{"c", "C", true, AttrRat, "nil (0)", "scale: the factor"},
	{"lo", "Lo", true, AttrRat, "nil (0)", "clamp: the lower bound"},
	{"hi", "Hi", true, AttrRat, "nil (0)", "clamp: the upper bound"},
	{"eps", "Eps", false, AttrRat, "nil (DefaultNormEps, 1/100000)", "safe_log, layer_norm, batch_norm_eval, instance_norm: ε (the IR gives it as a parent or a payload parameter)"},
	{"p", "P", false, AttrRat, "nil (0)", "bernoulli_mask, dropout: the drop probability"},
	{"seed", "Seed", true, AttrUint64, "0", "rand_uniform, bernoulli_mask, keep_mask, dropout: the splitmix64 stream key of the draw"},
	{"values", "Values", false, AttrRats, "nil", "const: the values, row-major (the IR gives them as the payload's value)"},
	{"window", "Window", false, AttrWindow, "nil", "conv, conv_transpose and the pools: the geometry (the IR spells its fields as attributes of their own)"},
	{"widths", "Widths", true, AttrNats, "nil", "pad: 2·rank naturals, every axis's begin width, then every end width"},
	{"mode", "Mode", true, AttrString, `""`, `pad: "constant", "reflect" or "edge"`},
	{"value", "Value", true, AttrRat, "nil (0)", "pad: the fill value of constant mode"},
	{"indices", "Indices", true, AttrNats, "nil", "gather: the constant indices, row-major over indices_shape, each below the extent of axis"},
	{"indices_shape", "IndicesShape", true, AttrShape, "nil", "gather: the indices' shape"},
	{"size", "Size", true, AttrNat, "0", "lrn: the channel window"},
	{"alpha", "Alpha", true, AttrRat, "nil (0)", "lrn: α in y = x/(bias + α/size·Σx²)^β"},
	{"beta", "Beta", true, AttrRat, "nil (0)", "lrn: β"},
	{"bias", "Bias", true, AttrRat, "nil (0)", "lrn: the bias k; shrink: the bias"},
	{"lambd", "Lambd", true, AttrRat, "nil (0)", "shrink: the threshold λ"},
	{"mask", "Mask", true, AttrBools, "nil", "hard_masked_softmax: true where the entry takes part, row-major over the input (the IR spells it {\"shape\":[…],\"allowed\":[…]})"},

	{"kernel", "Window.Kernel", true, AttrNats, "nil", "window primitives: the window extent per spatial axis"},
	{"stride", "Window.Stride", true, AttrNats, "nil", "window primitives: the step per spatial axis"},
	{"pads", "Window.Pads", true, AttrNats, "all 0", "window primitives: 2 per spatial axis, every begin then every end (ONNX order)"},
	{"dilation", "Window.Dilation", true, AttrNats, "all 1", "conv, conv_transpose, max_pool_nd, avg_pool_nd: the kernel element spacing per spatial axis"},
	{"output_padding", "Window.OutputPadding", true, AttrNats, "all 0", "conv_transpose: extra output extent at the end of each spatial axis"},
	{"groups", "Window.Groups", true, AttrNat, "1", "conv, conv_transpose: the channel groups"},
	{"ceil_mode", "Window.CeilMode", true, AttrBool, "false", "max_pool_nd, avg_pool_nd: round the output extent up"},
	{"count_include_pad", "Window.CountIncludePad", true, AttrBool, "false", "avg_pool_nd: divide by the window positions inside the padded input"},
	{"padding", "Window.Padding", true, AttrNats, "nil", "the IR's conv, max_pool, avg_pool: symmetric padding per spatial axis (Pads = padding ++ padding)"},
	{"in_channels", "Window.InChannels", true, AttrNat, "0", "the IR's conv, conv_transpose: input channels (the extent of the channel axis)"},
	{"out_channels", "Window.OutChannels", true, AttrNat, "0", "the IR's conv, conv_transpose: output channels"},

	{"value_shape", "", true, AttrShape, "", "the IR's const: the constant's shape (Attrs.Shape)"},
	{"axis1", "", true, AttrNat, "", "the IR's transpose: the first axis (Attrs.Axis)"},
	{"from_shape", "", true, AttrShape, "", "the IR's broadcast_to: the parent's shape"},
	{"to_shape", "", true, AttrShape, "", "the IR's broadcast_to: the target shape (Attrs.Shape)"},
	{"in_shape", "", true, AttrShape, "", "the IR's reshape, flatten: the parent's shape"},
	{"out_shape", "", true, AttrShape, "", "the IR's reshape: the target shape (Attrs.Shape)"},
	{"channel_axis", "", true, AttrNat, "", "the IR's batch_norm_eval: the channel axis (Attrs.Axis)"},
	{"channels", "", true, AttrNat, "", "the IR's batch_norm_eval, instance_norm: the channel axis's extent"},
}

// AttrSpecs returns the declaration of every attribute: the fields of
// Attrs in field order (the order of a certificate's attrs object), the
// fields of Window in field order, then the attributes only the IR
// spells.
func AttrSpecs() []AttrSpec { return append([]AttrSpec(nil), attrSpecs...) }

// LookupAttr returns the declaration of the attribute called name.
func LookupAttr(name string) (AttrSpec, bool) {
	for _, a := range attrSpecs {
		if a.Name == name {
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
