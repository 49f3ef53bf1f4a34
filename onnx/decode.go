package onnx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// dec holds the limits in force and what one model has used of them.
type dec struct {
	lim      limits.Limits
	total    int   // cap of the input, for byte offsets (scan)
	clip     bool  // probing a truncated input: see truncated
	elements int64 // numbers decoded so far (onnx-elements)
	names    int   // names decoded so far (onnx-names)
	valBytes int64 // bytes of decoded tensor values so far (onnx-value-bytes)
	// exactAtDecode charges a float element's exact value at decode: a
	// TensorProto file's tensor, which is always converted (useValues).
	exactAtDecode bool
	depth         int // subgraphs (GRAPH attributes) open around the one being read
}

// maxGraphDepth bounds the nesting of GRAPH attributes (an If inside a
// branch of an If …): deeper is refused, so that a hostile file cannot
// exhaust the stack.
const maxGraphDepth = 8

func newDec(data []byte) *dec { return &dec{lim: limits.Current(), total: cap(data)} }

// newTensorDec is newDec for a TensorProto file (useValues).
func newTensorDec(data []byte) *dec {
	d := newDec(data)
	d.exactAtDecode = true
	return d
}

// useElements charges n numbers against onnx-elements.
func (d *dec) useElements(n int) error {
	d.elements += int64(n)
	if d.elements > d.lim.ONNXElements {
		return limits.Exceeded("onnx-elements", d.lim.ONNXElements, "the model holds more than %d numbers (tensor elements and list-attribute entries)", d.lim.ONNXElements)
	}
	return nil
}

// exactBytes is what the exact value of one float element takes once
// converted (Tensor.Rats, value.exact): a spec.Rat, whose dyadic form of a
// float32 or float64 needs no further allocation.
const exactBytes = int64(unsafe.Sizeof(spec.Rat{}))

// useValues charges the n elements of a tensor of type dt against
// onnx-value-bytes before they are allocated, each at the size of its
// element slice entry (valueBytes). A TensorProto file's float tensor (a
// runtime input or a recorded output, read only to be converted) is
// charged its exact values too (exactBytes an element), here; a model's
// float tensor is not, since most of a model's floats are never converted
// (a linear, conv or conv_transpose weight is held as its decoded plane,
// mem34): the importer charges exactBytes an element against the same
// limit where it converts one (imp.exactOf, exactBudget), on top of what
// the model's values took decoded (modelValueBytes).
func (d *dec) useValues(n int, dt DataType) error {
	per := valueBytes(dt)
	what := "decoded"
	if d.exactAtDecode && dt.IsFloat() {
		per += exactBytes
		what = "decoded, its exact value included"
	}
	d.valBytes += int64(n) * per
	if d.valBytes > d.lim.ONNXValueBytes {
		return limits.Exceeded("onnx-value-bytes", d.lim.ONNXValueBytes, "the tensor values take more than %d bytes (%d bytes per %s element %s)", d.lim.ONNXValueBytes, per, dt, what)
	}
	return nil
}

// valueBytes is the size of one entry of the element slice Tensor.alloc
// makes for dt.
func valueBytes(dt DataType) int64 {
	switch dt {
	case Float, Float16, BFloat16:
		return 4
	case Double, Int64, Uint32, Uint64:
		return 8
	}
	return 4 // Int32 and the narrow types, widened
}

// useName charges one name against onnx-names.
func (d *dec) useName() error {
	d.names++
	if d.names > d.lim.ONNXNames {
		return limits.Exceeded("onnx-names", int64(d.lim.ONNXNames), "the model has more than %d names", d.lim.ONNXNames)
	}
	return nil
}

// checkSize refuses an input of more than onnx-bytes bytes.
func (d *dec) checkSize(n int64, what string) error {
	if n > d.lim.ONNXBytes {
		return limits.Exceeded("onnx-bytes", d.lim.ONNXBytes, "the %s has %d bytes", what, n)
	}
	return nil
}

// Decode decodes a serialized ModelProto and checks its structure (see
// the package doc). The result shares no memory with data.
func Decode(data []byte) (*Model, error) {
	d := newDec(data)
	if err := d.checkSize(int64(len(data)), "model"); err != nil {
		return nil, &Error{Err: err}
	}
	m, err := d.model(data)
	if err != nil {
		return nil, &Error{Err: truncated(err, data, (*dec).model)}
	}
	return m, nil
}

// truncated improves the error of an input that ends inside a field: the
// outermost message then reports the truncation (its length prefix
// exceeds what remains), so the input is decoded again with the truncated
// fields cut to what remains, which names the innermost place — node,
// attribute, tensor, field — where the input ends.
func truncated[T any](err error, data []byte, decode func(*dec, []byte) (T, error)) error {
	if !errors.Is(err, errTruncated) {
		return err
	}
	p := newDec(data)
	p.clip = true
	_, perr := decode(p, data)
	if perr == nil || !isLocated(perr) || !errors.Is(perr, errTruncated) || perr.Error() == err.Error() {
		return err
	}
	return fmt.Errorf("the input (%d bytes) is truncated: it ends inside %w", len(data), perr)
}

// ReadModel reads and decodes the ModelProto file at path; its errors
// start "onnx: PATH: ". A file of more than onnx-bytes bytes is refused
// before it is read.
func ReadModel(path string) (*Model, error) {
	data, err := newDec(nil).readFile(path, "model")
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	d := newDec(data)
	m, err := d.model(data)
	if err != nil {
		return nil, &Error{Path: path, Err: truncated(err, data, (*dec).model)}
	}
	return m, nil
}

// readFile reads a regular file (package safeio: a FIFO, device or
// directory is refused without being read) of at most onnx-bytes bytes,
// refusing a larger one by its size before reading it, and reading at most
// one byte more than the limit if it grows while read.
func (d *dec) readFile(path, what string) ([]byte, error) {
	f, err := safeio.Open(path) // a FIFO, device or directory is refused unopened
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	data, err := safeio.ReadAll(f, d.lim.ONNXBytes)
	var tl *safeio.TooLargeError
	if errors.As(err, &tl) {
		return nil, d.checkSize(tl.Size, what)
	}
	return data, err
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

var modelFields = fieldNames{1: "ir_version", 2: "producer_name", 7: "graph", 8: "opset_import", 20: "training_info", 25: "functions"}

func (d *dec) model(data []byte) (*Model, error) {
	m := &Model{}
	var graph []byte
	seenGraph := false
	err := d.scan(data, modelFields, func(f *field) error {
		switch f.num {
		case 1:
			v, err := f.varint()
			m.IRVersion = int64(v)
			return err
		case 2:
			b, err := f.text()
			m.ProducerName = b
			return err
		case 7:
			b, err := f.bytes()
			if err != nil {
				return err
			}
			if seenGraph {
				return errors.New("appears twice")
			}
			seenGraph, graph = true, b
			if f.cut {
				_, err := d.graph(b)
				return err
			}
		case 8:
			b, err := f.bytes()
			if err != nil {
				return err
			}
			if len(m.Opsets) >= d.lim.Parents {
				return limits.Exceeded("parents", int64(d.lim.Parents), "more than %d opset imports", d.lim.Parents)
			}
			o, err := d.opset(b)
			if err != nil {
				return at(fmt.Sprintf("opset_import #%d", len(m.Opsets)), err)
			}
			for _, p := range m.Opsets {
				if sameDomain(p.Domain, o.Domain) {
					return fmt.Errorf("#%d: domain %s imported twice", len(m.Opsets), quote(o.Domain))
				}
			}
			m.Opsets = append(m.Opsets, o)
		case 20, 25:
			// Training information and model-local functions: not used
			// by tlcheck; skipped (a node that calls a local function is
			// an unknown op for the importer).
			_, err := f.bytes()
			return err
		}
		return nil
	})
	if err != nil {
		if isLocated(err) {
			return nil, err
		}
		return nil, fmt.Errorf("model: %w", err)
	}
	if !seenGraph {
		return nil, errors.New("model: field graph (7): missing (the model has no graph)")
	}
	g, err := d.graph(graph)
	if err != nil {
		return nil, err
	}
	m.Graph = g
	return m, nil
}

var opsetFields = fieldNames{1: "domain", 2: "version"}

func (d *dec) opset(b []byte) (OpsetID, error) {
	var o OpsetID
	err := d.scan(b, opsetFields, func(f *field) error {
		switch f.num {
		case 1:
			s, err := f.text()
			o.Domain = s
			return err
		case 2:
			v, err := f.varint()
			o.Version = int64(v)
			return err
		}
		return nil
	})
	return o, err
}

var graphFields = fieldNames{1: "node", 2: "name", 5: "initializer", 11: "input", 12: "output", 13: "value_info", 15: "sparse_initializer"}

func (d *dec) graph(b []byte) (*Graph, error) {
	g, err := d.graphBody(b)
	if err != nil {
		return nil, err
	}
	if err := g.check(); err != nil {
		return nil, err
	}
	return g, nil
}

// subgraph reads the GraphProto of a GRAPH attribute (an If branch). Its
// checks are made with the enclosing graph's (Graph.check), where the
// names of the outer scope are known.
func (d *dec) subgraph(b []byte) (*Graph, error) {
	if d.depth >= maxGraphDepth {
		return nil, fmt.Errorf("subgraphs nested more than %d deep", maxGraphDepth)
	}
	d.depth++
	defer func() { d.depth-- }()
	return d.graphBody(b)
}

func (d *dec) graphBody(b []byte) (*Graph, error) {
	g := &Graph{}
	err := d.scan(b, graphFields, func(f *field) error {
		switch f.num {
		case 2:
			s, err := f.text()
			g.Name = s
			return err
		case 1:
			s, err := f.bytes()
			if err != nil {
				return err
			}
			if len(g.Nodes) >= d.lim.Nodes {
				return limits.Exceeded("nodes", int64(d.lim.Nodes), "the graph has more than %d nodes", d.lim.Nodes)
			}
			n, err := d.node(s, len(g.Nodes), f.cut)
			if err != nil {
				return err
			}
			g.Nodes = append(g.Nodes, n)
		case 5:
			s, err := f.bytes()
			if err != nil {
				return err
			}
			if err := d.useName(); err != nil {
				return err
			}
			t, err := d.tensor(s, "initializer", len(g.Initializers), f.cut)
			if err != nil {
				return err
			}
			if t.Name == "" {
				return at(fmt.Sprintf("initializer #%d", len(g.Initializers)), errors.New("field name (8): missing (an initializer must be named)"))
			}
			g.Initializers = append(g.Initializers, t)
		case 11, 12, 13:
			s, err := f.bytes()
			if err != nil {
				return err
			}
			if err := d.useName(); err != nil {
				return err
			}
			list := map[protowire.Number]*[]*ValueInfo{11: &g.Inputs, 12: &g.Outputs, 13: &g.ValueInfo}[f.num]
			v, err := d.valueInfo(s, graphFields[f.num], len(*list), f.cut)
			if err != nil {
				return err
			}
			*list = append(*list, v)
		case 15:
			return errors.New("sparse initializers are not supported")
		}
		return nil
	})
	if err != nil {
		if isLocated(err) {
			return nil, err
		}
		return nil, fmt.Errorf("graph: %w", err)
	}
	return g, nil
}

// check makes the structural checks of the package doc.
func (g *Graph) check() error { return g.checkIn(nil) }

// checkIn checks g with outer, the names the enclosing graphs define
// before the node whose attribute g is (nil for the main graph): a node of
// a subgraph may read them (ONNX's outer-scope rule), and a subgraph's
// GRAPH attributes are checked with g's names added.
func (g *Graph) checkIn(outer map[string]string) error {
	defined := make(map[string]string, len(outer)+len(g.Inputs)+len(g.Initializers)+len(g.Nodes)) // name → what defines it
	for k, v := range outer {
		defined[k] = v
	}
	for i, v := range g.Inputs {
		if v.Name == "" {
			return fmt.Errorf("graph: input #%d: field name (1): missing", i)
		}
		if _, dup := defined[v.Name]; dup {
			return fmt.Errorf("graph: input #%d %s is listed twice", i, quote(v.Name))
		}
		defined[v.Name] = "graph input"
	}
	inits := make(map[string]bool, len(g.Initializers))
	for _, t := range g.Initializers {
		if inits[t.Name] {
			return fmt.Errorf("graph: initializer %s appears twice", quote(t.Name))
		}
		inits[t.Name] = true
		defined[t.Name] = "initializer" // may also be a graph input (IR version 3)
	}
	for _, n := range g.Nodes {
		for j, in := range n.Inputs {
			if in == "" {
				continue
			}
			if _, ok := defined[in]; ok {
				continue
			}
			return fmt.Errorf("%s: input #%d %s is not a graph input, an initializer or an output of an earlier node (nodes must be in topological order; a cycle or a forward reference)", n.Where(), j, quote(in))
		}
		for _, a := range n.Attrs {
			if a.G == nil {
				continue
			}
			if err := a.G.checkIn(defined); err != nil {
				return fmt.Errorf("%s: attribute %s: %w", n.Where(), quote(a.Name), err)
			}
		}
		for j, out := range n.Outputs {
			if out == "" {
				continue
			}
			if what, dup := defined[out]; dup {
				return fmt.Errorf("%s: output #%d %s is already defined (by %s)", n.Where(), j, quote(out), what)
			}
			defined[out] = n.Where()
		}
	}
	for i, v := range g.Outputs {
		if v.Name == "" {
			return fmt.Errorf("graph: output #%d: field name (1): missing", i)
		}
		if _, ok := defined[v.Name]; !ok {
			return fmt.Errorf("graph: output #%d %s is not produced by any node, input or initializer", i, quote(v.Name))
		}
	}
	return nil
}

var nodeFields = fieldNames{1: "input", 2: "output", 3: "name", 4: "op_type", 5: "attribute", 7: "domain"}

func (d *dec) node(b []byte, index int, cut bool) (*Node, error) {
	// The node's name, op type and domain first, so that the error of any
	// field names the node, wherever its name is in the message.
	n := &Node{Index: index}
	pre := &Node{Index: index, Name: peek(b, 3), OpType: peek(b, 4), Domain: peek(b, 7)}
	var attrNames map[string]bool
	err := d.scan(b, nodeFields, func(f *field) error {
		switch f.num {
		case 1, 2:
			s, err := f.text()
			if err != nil {
				return err
			}
			list := &n.Inputs
			if f.num == 2 {
				list = &n.Outputs
			}
			if len(*list) >= d.lim.Parents {
				return limits.Exceeded("parents", int64(d.lim.Parents), "more than %d values", d.lim.Parents)
			}
			if err := d.useName(); err != nil {
				return err
			}
			*list = append(*list, s)
		case 3, 4, 7:
			s, err := f.text()
			if err != nil {
				return err
			}
			*map[protowire.Number]*string{3: &n.Name, 4: &n.OpType, 7: &n.Domain}[f.num] = s
		case 5:
			s, err := f.bytes()
			if err != nil {
				return err
			}
			if len(n.Attrs) >= d.lim.Parents {
				return limits.Exceeded("parents", int64(d.lim.Parents), "more than %d attributes", d.lim.Parents)
			}
			if err := d.useName(); err != nil {
				return err
			}
			a, err := d.attribute(s, len(n.Attrs), f.cut)
			if err != nil {
				return err
			}
			if attrNames == nil {
				attrNames = map[string]bool{}
			}
			if attrNames[a.Name] {
				return at(name("attribute", a.Name, len(n.Attrs)), errors.New("given twice"))
			}
			attrNames[a.Name] = true
			n.Attrs = append(n.Attrs, a)
		}
		return nil
	})
	if err != nil {
		return nil, at(pre.Where(), err)
	}
	if cut {
		return nil, at(n.Where(), cutErr(b))
	}
	if n.OpType == "" {
		return nil, at(n.Where(), fmt.Errorf("field op_type (4): missing"))
	}
	return n, nil
}

var attrFields = fieldNames{
	1: "name", 20: "type", 2: "f", 3: "i", 4: "s", 5: "t", 6: "g", 7: "floats", 8: "ints", 9: "strings",
	10: "tensors", 11: "graphs", 14: "tp", 15: "type_protos", 21: "ref_attr_name", 22: "sparse_tensor", 23: "sparse_tensors",
}

// attrFieldType is the attribute type whose value each value field holds.
var attrFieldType = map[protowire.Number]AttrType{
	2: AttrFloat, 3: AttrInt, 4: AttrString, 5: AttrTensor, 6: AttrGraph, 7: AttrFloats, 8: AttrInts, 9: AttrStrings,
	10: AttrTensors, 11: AttrGraphs, 14: AttrTypeProto, 15: AttrTypeProtos, 22: AttrSparseTensor, 23: AttrSparseTensors,
}

func (d *dec) attribute(b []byte, index int, cut bool) (*Attribute, error) {
	a := &Attribute{}
	where := name("attribute", peek(b, 1), index)
	var seen [24]bool          // value fields present
	var first protowire.Number // the first value field present
	var nf, ni, ns int         // list lengths, counted first
	var typeSet, seenT bool
	// Pass 1: name, type, which value fields are present, list lengths.
	err := d.scan(b, attrFields, func(f *field) error {
		if _, isValue := attrFieldType[f.num]; isValue {
			if first == 0 {
				first = f.num
			}
			seen[f.num] = true
		}
		switch f.num {
		case 1:
			s, err := f.text()
			a.Name = s
			return err
		case 20:
			v, err := f.int32v()
			a.Type, typeSet = AttrType(v), true
			return err
		case 21:
			return errors.New("a reference to a function's attribute is valid only inside a function")
		case 7:
			k, err := f.count(protowire.Fixed32Type, 4)
			nf += k
			return err
		case 8:
			k, err := f.count(protowire.VarintType, 0)
			ni += k
			return err
		case 9:
			_, err := f.bytes()
			ns++
			return err
		case 5, 6, 10, 11, 14, 15, 22, 23:
			_, err := f.bytes() // messages: decoded (t) or kept as a type only
			if f.num == 5 && err == nil {
				if seenT {
					return errors.New("appears twice")
				}
				seenT = true
			}
			return err
		}
		return nil
	})
	if err != nil {
		return nil, at(where, err)
	}
	if cut {
		return nil, at(where, cutErr(b))
	}
	if a.Name == "" {
		return nil, at(where, fmt.Errorf("field name (1): missing"))
	}
	// The type: the type field, or (IR version 1) the one value field set.
	if !typeSet || a.Type == AttrUndefined {
		if first == 0 {
			return nil, at(where, fmt.Errorf("field type (20): missing, and no value field is set"))
		}
		a.Type = attrFieldType[first]
	}
	if _, known := attrTypeNames[a.Type]; !known || a.Type == AttrUndefined {
		return nil, at(where, fmt.Errorf("field type (20): %d is not an AttributeProto.AttributeType", int32(a.Type)))
	}
	for num, set := range seen {
		if set && attrFieldType[protowire.Number(num)] != a.Type {
			return nil, at(where, fmt.Errorf("field %s (%d) is set, but the attribute's type is %s", attrFields[protowire.Number(num)], num, a.Type))
		}
	}
	if err := d.useElements(nf + ni + 3*ns); err != nil { // a [][]byte entry is 24 bytes
		return nil, at(where, err)
	}
	switch a.Type {
	case AttrFloats:
		a.Floats = make([]float32, 0, nf)
	case AttrInts:
		a.Ints = make([]int64, 0, ni)
	case AttrStrings:
		a.Strings = make([][]byte, 0, ns)
	}
	// Pass 2: the value.
	err = d.scan(b, attrFields, func(f *field) error { return d.attrValue(a, f) })
	if err != nil {
		return nil, at(where, err)
	}
	if a.Type == AttrTensor && a.T == nil {
		return nil, at(where, fmt.Errorf("field t (5): missing for a TENSOR attribute"))
	}
	if a.Type == AttrGraph && a.G == nil {
		return nil, at(where, fmt.Errorf("field g (6): missing for a GRAPH attribute"))
	}
	return a, nil
}

// attrValue is the second pass of attribute: it reads the value field f
// into a (the lists were allocated from the first pass's counts).
func (d *dec) attrValue(a *Attribute, f *field) error {
	switch f.num {
	case 2:
		v, err := f.fixed32()
		a.F = v
		return err
	case 3:
		v, err := f.varint()
		a.I = int64(v)
		return err
	case 4:
		s, err := f.bytes()
		a.S = append([]byte{}, s...)
		return err
	case 5:
		s, err := f.bytes()
		if err != nil {
			return err
		}
		t, err := d.tensor(s, "tensor", -1, f.cut)
		if err != nil {
			return err
		}
		a.T = t
	case 7:
		f.eachFixed32(func(v uint32) { a.Floats = append(a.Floats, math.Float32frombits(v)) })
	case 8:
		return f.eachVarint(func(v uint64) error { a.Ints = append(a.Ints, int64(v)); return nil })
	case 9:
		a.Strings = append(a.Strings, append([]byte{}, f.b...))
	case 6:
		s, err := f.bytes()
		if err != nil {
			return err
		}
		g, err := d.subgraph(s)
		if err != nil {
			return err
		}
		a.G = g
	}
	return nil
}

var valueInfoFields = fieldNames{1: "name", 2: "type"}
var typeFields = fieldNames{1: "tensor_type", 4: "sequence_type", 5: "map_type", 7: "opaque_type", 8: "sparse_tensor_type", 9: "optional_type"}
var tensorTypeFields = fieldNames{1: "elem_type", 2: "shape"}
var shapeFields = fieldNames{1: "dim"}
var dimFields = fieldNames{1: "dim_value", 2: "dim_param"}

func (d *dec) valueInfo(b []byte, kind string, index int, cut bool) (*ValueInfo, error) {
	v := &ValueInfo{}
	where := name(kind, peek(b, 1), index)
	seenType := false
	err := d.scan(b, valueInfoFields, func(f *field) error {
		switch f.num {
		case 1:
			s, err := f.text()
			v.Name = s
			return err
		case 2:
			s, err := f.bytes()
			if err != nil {
				return err
			}
			if seenType {
				return errors.New("appears twice")
			}
			seenType = true
			return d.scan(s, typeFields, func(f *field) error {
				if f.num != 1 {
					return fmt.Errorf("only tensor types are supported")
				}
				s, err := f.bytes()
				if err != nil {
					return err
				}
				return d.scan(s, tensorTypeFields, func(f *field) error {
					switch f.num {
					case 1:
						e, err := f.int32v()
						v.ElemType = DataType(e)
						return err
					case 2:
						s, err := f.bytes()
						if err != nil {
							return err
						}
						v.HasShape, v.Shape = true, v.Shape[:0]
						return d.scan(s, shapeFields, func(f *field) error {
							s, err := f.bytes()
							if err != nil {
								return err
							}
							if len(v.Shape) >= spec.MaxRank {
								return fmt.Errorf("more than %d dims", spec.MaxRank)
							}
							if err := d.useElements(3); err != nil { // a Dim is 24 bytes
								return err
							}
							dim := Dim{Value: -1}
							err = d.scan(s, dimFields, func(f *field) error {
								if f.num == 1 {
									x, err := f.varint()
									if err != nil {
										return err
									}
									if int64(x) < 0 {
										return fmt.Errorf("negative extent %d", int64(x))
									}
									dim = Dim{Value: int64(x)}
									return nil
								}
								s, err := f.text()
								if err != nil {
									return err
								}
								dim = Dim{Param: s}
								if len(s) == 0 {
									dim.Value = -1
								}
								return nil
							})
							if err != nil {
								return at(fmt.Sprintf("#%d", len(v.Shape)), err)
							}
							v.Shape = append(v.Shape, dim)
							return nil
						})
					}
					return nil
				})
			})
		}
		return nil
	})
	if err != nil {
		return nil, at(where, err)
	}
	if cut {
		return nil, at(where, cutErr(b))
	}
	return v, nil
}

// name renders `kind "name"`, or `kind #index` when the name is empty
// (just kind when index < 0).
func name(kind, s string, index int) string {
	switch {
	case s != "":
		return kind + " " + quote(s)
	case index >= 0:
		return fmt.Sprintf("%s #%d", kind, index)
	}
	return kind
}

// cutErr is the error of a message that a truncated input cuts off after
// len(b) of its bytes (probing, dec.clip).
func cutErr(b []byte) error {
	return fmt.Errorf("the message is %w after %d bytes", errTruncated, len(b))
}
