package onnx

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Options configure Import.
type Options struct {
	// Bind gives the value of integer-typed graph inputs (Embedding
	// indices, an Expand's shape input), keyed by input name: such an input
	// is a constant of the imported graph, so every Gather has constant
	// indices and every shape is static. An integer input that is not bound
	// is an error naming it. A float input may not be bound.
	Bind map[string]*Tensor
	// Shapes gives the extents of float graph inputs whose ValueInfo has a
	// symbolic (or missing) dimension, keyed by input name, e.g. taken from
	// the tensors the model will be evaluated on. A given shape must agree
	// with every fixed extent of the ValueInfo; a symbolic extent with no
	// shape here is an error naming the input and the dimension.
	Shapes map[string]spec.Shape
	// Values gives the recorded values of float graph inputs, keyed by
	// input name (compare sets it from input_N.pb). They decide exactly
	// the data-dependent ops whose operand is such an input itself — the
	// comparisons and logic ops, Not, IsNaN, IsInf, Floor, Ceil, Round,
	// ArgMax, ArgMin, NonZero, TopK's order and Hardmax's argmax — since
	// an input is exact in every evaluation (no rounding reaches it), so
	// their results are the runtime's too. The imported graph then holds
	// for these values only. A value computed from an input is decided
	// this way only when ops that never round compute it (Identity, Neg,
	// Abs, Where, ReduceMax, …: known.go); after any op that may round it
	// stays refused (its rounding could reorder it).
	Values map[string]*Tensor
}

// IOValue is one float input or one output of an imported model.
type IOValue struct {
	// Name is the ONNX value name.
	Name string
	// Index is the position of the value among the model's runtime inputs
	// (RuntimeInputs: graph inputs that are not initializers, bound ones
	// included) or among the graph's outputs: the N of the backend test
	// suite's input_N.pb / output_N.pb.
	Index int
	// Shape is the value's static shape.
	Shape spec.Shape
	// DataType is its ONNX element type.
	DataType DataType
	// Offset is where its row-major elements start in the packed IR input
	// (several float inputs) or output (several outputs); 0 when the IR
	// input or output is this value alone.
	Offset int
}

// InitRef is one initializer of the model and the IR nodes that read it.
type InitRef struct {
	Name  string
	Shape spec.Shape
	// Uses lists the payload fields holding its value (empty when no node
	// reads it as data, e.g. an integer initializer consumed as a shape).
	// Each holds a copy of the same tensor, so the gradient with respect
	// to the initializer is the sum of the gradients with respect to its
	// uses (a const node shared by several children is one use).
	Uses []ParamUse
}

// ParamUse is one payload field that holds an initializer's value.
type ParamUse struct {
	// Node is the IR node id of the payload entry.
	Node int
	// Field is the payload parameter: irsem.ParamW, ParamB, ParamValue,
	// ParamGamma, ParamBeta, ParamMean, ParamVar.
	Field string
}

// GradientSpec is an ONNX Gradient node (domain ai.onnx.preview.training):
// its outputs are the gradients of the model output Of with respect to
// the float inputs WRT, in order. The importer does not compute them (the
// IR graph is the forward part only); a caller checks the recorded
// outputs against the exact gradient of IR output OfOutput with respect to
// the unpacked inputs WRTInputs (a VJP with a cotangent of ones on that
// output's elements and zeros elsewhere).
type GradientSpec struct {
	// Node is the Gradient node's Where().
	Node string
	// Of is the differentiated value (attribute "y"); OfOutput is its index
	// in Imported.Outputs.
	Of       string
	OfOutput int
	// WRT are the inputs (attribute "xs"); WRTInputs their indices in
	// Imported.Inputs.
	WRT       []string
	WRTInputs []int
	// Outputs are the Gradient node's output names (one per WRT entry) and
	// OutputIndex their positions among the graph outputs (-1 for one that
	// is not a graph output).
	Outputs     []string
	OutputIndex []int
}

// Imported is an ONNX model imported into the canonical IR.
type Imported struct {
	Graph   *irsem.Graph
	Payload *irsem.Payload
	// Inputs are the float graph inputs (not initializers, not bound), in
	// graph order; the IR input is the one input itself, or, when there
	// are several, the rank-1 concatenation of their flattened values in
	// this order (rank 1, extent 0, when there are none).
	Inputs []IOValue
	// Outputs are the graph outputs the IR computes, in graph order (the
	// outputs of a Gradient node are not among them: see Gradients); the
	// IR output is the one output itself or the rank-1 concatenation of
	// the flattened outputs.
	Outputs []IOValue
	// Initializers lists every initializer, in file order.
	Initializers []InitRef
	// Origin gives, per IR node id, the Where() of the ONNX node it was
	// built for ("" for the input, the packing nodes and the const node of
	// an initializer, which belongs to no one node).
	Origin []string
	// Opset is the model's default-domain opset.
	Opset int64
	// Gradients lists the model's Gradient nodes.
	Gradients []GradientSpec
	// Computed lists the float types of the values the graph's nodes
	// compute (FLOAT, FLOAT16, DOUBLE, BFLOAT16, in that order; float
	// constants and graph inputs are data, not computed; a widening Cast
	// is exact). fpbound's theorem is per format, so a DOUBLE output is
	// judged with the binary64 bound when DOUBLE is the one type
	// computed, a FLOAT16 (BFLOAT16) output with the binary16 (bfloat16)
	// bound when that is, a FLOAT output with the binary32 bound when
	// FLOAT is; a graph whose outputs and computed values are FLOAT and
	// DOUBLE together is judged per IR node, each node's roundings in its
	// own format (Types; fpbound's doc, "Mixed binary32 and binary64
	// graphs"); any other mix is refused.
	Computed []DataType
	// Types gives, per IR node id, the float type the node's operations
	// are performed in, from the same dtypes as Computed (nodeTypes):
	// DOUBLE only where every float value the node's ONNX node produces,
	// and every value bound to the node itself, is DOUBLE (the float
	// inputs, for the IR input); FLOAT where FLOAT is the one such type;
	// 0 otherwise (no float value: a packing node, an integer or boolean
	// result; or several types). fpbound's per-node format reads it
	// (compare: binary64 where DOUBLE, binary32 elsewhere).
	Types []DataType
	// Exact are the integer and boolean graph outputs, each a constant
	// of the imported graph (folded, or decided on Options.Values): a
	// caller compares recorded values with them exactly.
	Exact []ExactOutput
	// shapes is the static shape of every value the importer inferred,
	// by ONNX name (for Analyze).
	shapes map[string]spec.Shape
	// dtypes is the element type of every value, by ONNX name.
	dtypes map[string]DataType
	// consts are the float values that nodes fold to constants at
	// import, by ONNX name, each with its elements that are NaN or ±∞ in
	// every evaluation (nil: none; value.nonreal); Analyze takes their
	// statuses from here, not from their inputs'.
	consts map[string]map[int]float64
	// masked are the computed graph outputs that hold −∞ where an
	// additive mask blocks (value.ninf), by ONNX name (irOut).
	masked map[string][]bool
	// maskInputs are the Attention nodes (by Where()) whose attn_mask is
	// a recorded graph input holding −∞, by the input's name: the import
	// treats those elements as blocked (the masked softmax never reads
	// their finite part), so Analyze lets its −∞ elements pass there.
	maskInputs map[string]string
	// flat is the model's node list as imported: an If replaced by the
	// nodes of its taken branch and an Identity per output (importIf).
	flat []*Node
}

// nodes is the node list the specials analysis walks: flat, or the
// graph's nodes for an Imported built without one.
func (im *Imported) nodes(m *Model) []*Node {
	if im.flat != nil {
		return im.flat
	}
	return m.Graph.Nodes
}

// ExactOutput is an integer or boolean graph output whose value the
// import decided: Index is its position among the graph outputs (the N of
// output_N.pb), Values its elements in row-major order (BOOL as 0 and 1).
type ExactOutput struct {
	Name     string
	Index    int
	Shape    spec.Shape
	DataType DataType
	Values   []int64
	// Floats are the values of a float 8 or float 4 output (DataType
	// IsMini; Values is nil then), NaN and ±∞ included: each exactly a
	// float32, compared with the recorded value exactly (NaN with NaN).
	Floats []float64
	// Undefined marks the elements whose cast ONNX leaves undefined (nil
	// when none): no recorded value there is judged (inconclusive).
	Undefined []bool
}

// ImportError is an import failure: one line naming the model file (when
// known), the ONNX node (Where()) and the attribute or input at fault.
type ImportError struct {
	Path  string // the model file, or ""
	Node  string // the ONNX node's Where(), or "" for the graph as a whole
	Field string // `attribute "pads"`, `input 1 ("W")`, `graph input "x"`, … or ""
	Err   error
}

func (e *ImportError) Error() string {
	var b strings.Builder
	b.WriteString("onnx: ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	if e.Node != "" {
		b.WriteString(e.Node)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(strings.ReplaceAll(e.Err.Error(), "\n", " "))
	return b.String()
}

func (e *ImportError) Unwrap() error { return e.Err }

// RuntimeInputs lists the graph inputs that are not initializers, in graph
// order: the values a caller supplies (input_N.pb is the N-th), integer
// ones to Options.Bind, float ones to Imported.PackInputs.
func RuntimeInputs(m *Model) []*ValueInfo {
	if m == nil || m.Graph == nil {
		return nil
	}
	init := map[string]bool{}
	for _, t := range m.Graph.Initializers {
		if t != nil {
			init[t.Name] = true
		}
	}
	var out []*ValueInfo
	for _, v := range m.Graph.Inputs {
		if v != nil && !init[v.Name] {
			out = append(out, v)
		}
	}
	return out
}

// OptionsFor splits the tensors given for a model's runtime inputs (in
// RuntimeInputs order, e.g. input_0.pb, input_1.pb, …) into Options that
// bind the integer ones and fix the shapes of the float ones, and the
// float tensors, in order, for Imported.PackInputs.
func OptionsFor(m *Model, ts []*Tensor) (Options, []*Tensor, error) {
	ins := RuntimeInputs(m)
	if len(ts) != len(ins) {
		return Options{}, nil, &ImportError{Err: fmt.Errorf("the model has %d runtime inputs, %d tensors given", len(ins), len(ts))}
	}
	o := Options{Bind: map[string]*Tensor{}, Shapes: map[string]spec.Shape{}}
	var fl []*Tensor
	for i, v := range ins {
		t := ts[i]
		if t == nil {
			return Options{}, nil, &ImportError{Field: fmt.Sprintf("graph input %q", v.Name), Err: errors.New("no tensor given")}
		}
		if v.ElemType.IsFloat() {
			s, err := dimsShape(t.Dims)
			if err != nil {
				return Options{}, nil, &ImportError{Field: fmt.Sprintf("graph input %q", v.Name), Err: err}
			}
			o.Shapes[v.Name] = s
			fl = append(fl, t)
		} else {
			o.Bind[v.Name] = t
		}
	}
	return o, fl, nil
}

// ImportFile reads the model at path (ReadModel) and imports it; every
// error starts with the path.
func ImportFile(path string, o Options) (*Imported, error) {
	m, err := ReadModel(path)
	if err != nil {
		return nil, err
	}
	im, err := importModel(m, o, path)
	if err != nil {
		return nil, err
	}
	return im, nil
}

// Import maps an ONNX model to the canonical IR and its payload. The
// mapping of each ONNX op (the IR tags it becomes, the opset semantics it
// follows, what it refuses) is documented in the package doc's section
// "Importing". The result passes irsem's Graph.Check and CheckPayload.
func Import(m *Model, o Options) (*Imported, error) { return importModel(m, o, "") }

// PackInputs builds the IR input from one tensor per Imported.Inputs
// entry, by position: their exact values, concatenated when there are
// several. A tensor of the wrong element type or shape is an error naming
// the input.
func (im *Imported) PackInputs(ts []*Tensor) (irsem.RatTensor, error) {
	if len(ts) != len(im.Inputs) {
		return irsem.RatTensor{}, &ImportError{Err: fmt.Errorf("the model has %d float inputs, %d tensors given", len(im.Inputs), len(ts))}
	}
	var data []spec.Rat
	for i, in := range im.Inputs {
		t := ts[i]
		field := fmt.Sprintf("graph input %q", in.Name)
		if t == nil {
			return irsem.RatTensor{}, &ImportError{Field: field, Err: errors.New("no tensor given")}
		}
		if !t.DataType.IsFloat() {
			return irsem.RatTensor{}, &ImportError{Field: field, Err: fmt.Errorf("tensor of element type %s, the input is %s", t.DataType.String(), in.DataType.String())}
		}
		s, err := dimsShape(t.Dims)
		if err != nil {
			return irsem.RatTensor{}, &ImportError{Field: field, Err: err}
		}
		if !s.Equal(in.Shape) {
			return irsem.RatTensor{}, &ImportError{Field: field, Err: fmt.Errorf("tensor of shape %v, the graph's input has shape %v", s, in.Shape)}
		}
		rs, err := t.Rats()
		if err != nil {
			return irsem.RatTensor{}, &ImportError{Field: field, Err: err}
		}
		if len(rs) != s.Size() {
			return irsem.RatTensor{}, &ImportError{Field: field, Err: fmt.Errorf("tensor of shape %v holds %d values", s, len(rs))}
		}
		data = append(data, rs...)
	}
	shape := spec.Shape{len(data)}
	if len(im.Inputs) == 1 {
		shape = im.Inputs[0].Shape.Clone()
	}
	if data == nil {
		data = []spec.Rat{}
	}
	return spec.NewTensor(shape, data)
}

// UnpackOutputs splits an IR output value into one tensor per
// Imported.Outputs entry, each with its ONNX shape.
func UnpackOutputs[T spec.Scalar[T]](im *Imported, out spec.Tensor[T]) ([]spec.Tensor[T], error) {
	if len(im.Outputs) == 1 {
		if !out.Shape.Equal(im.Outputs[0].Shape) {
			return nil, fmt.Errorf("onnx: output %q: value of shape %v, expected %v", im.Outputs[0].Name, out.Shape, im.Outputs[0].Shape)
		}
		return []spec.Tensor[T]{out}, nil
	}
	total := 0
	for _, o := range im.Outputs {
		total += o.Shape.Size()
	}
	if len(out.Shape) != 1 || out.Shape[0] != total || len(out.Data) != total {
		return nil, fmt.Errorf("onnx: packed output of shape %v, expected [%d]", out.Shape, total)
	}
	res := make([]spec.Tensor[T], len(im.Outputs))
	for i, o := range im.Outputs {
		n := o.Shape.Size()
		t, err := spec.NewTensor(o.Shape, append([]T(nil), out.Data[o.Offset:o.Offset+n]...))
		if err != nil {
			return nil, err
		}
		res[i] = t
	}
	return res, nil
}

// dimsShape converts tensor dims to a checked shape.
func dimsShape(dims []int64) (spec.Shape, error) {
	s := make(spec.Shape, len(dims))
	for i, d := range dims {
		if d < 0 || d > int64(spec.DefaultMaxElements) {
			return nil, fmt.Errorf("dimension %d is %d", i, d)
		}
		s[i] = int(d)
	}
	if _, err := s.Check(0); err != nil {
		return nil, err
	}
	return s, nil
}
