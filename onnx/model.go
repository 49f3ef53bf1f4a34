// Package onnx reads ONNX models (ModelProto files, usually model.onnx)
// and serialized TensorProto files (the input_N.pb / output_N.pb of the
// ONNX backend test data), and imports a model into tlcheck's canonical
// IR (the importer files of this package).
//
// # The reader
//
// Decode and ReadModel decode a ModelProto with its GraphProto, NodeProtos,
// AttributeProtos, TensorProtos (initializers and tensor attributes),
// ValueInfoProtos (type → tensor_type → elem_type and shape, each dim a
// dim_value or a dim_param) and OperatorSetIdProtos; DecodeTensor and
// ReadTensor decode one TensorProto. Field numbers are those of the
// ONNX schema onnx.proto (proto2).
//
// The decoder is written directly against the protobuf wire format with
// google.golang.org/protobuf/encoding/protowire, decoding exactly the
// fields tlcheck uses, instead of code generated from onnx.proto. Two
// reasons: there is no generated code to keep in sync with the schema, and
// every allocation is bounded while decoding, which generated code cannot
// promise for a hostile file:
//
//   - a length-delimited field's declared length is checked against the
//     bytes that remain before anything is allocated (protowire.ConsumeBytes
//     returns a sub-slice of the input; nothing is copied);
//   - a tensor's data fields are first counted, then its dims are checked
//     (rank at most spec.MaxRank, no negative extent, the element and axis
//     limits of package limits) and compared with that count, and only then
//     is the element slice allocated, with exactly that length;
//   - the counts of nodes, names, per-node inputs/outputs/attributes and
//     numbers are held to the limits of package limits (nodes, parents,
//     onnx-names, onnx-elements), and the file itself to onnx-bytes.
//
// What decoding allocates. Let F be the input's size (at most onnx-bytes;
// ReadModel refuses a larger file by its size before reading it). Apart
// from the input itself, the reader allocates (1) copies of the strings
// and bytes it keeps — names, op types, string attributes — at most F
// bytes in all, since each is a distinct part of the input, plus
// temporaries of the same size while naming a node or tensor for an
// error; (2) element slices — tensor elements, list-attribute entries,
// tensor dims, value dims — whose entries are counted against
// onnx-elements before they are allocated, at most 8 bytes per counted
// unit (a string entry of a STRINGS attribute and a Dim count 3 units,
// being 24 bytes); (3) one Node per node (at most nodes) and one object of
// a few hundred bytes at most per named thing — attribute, node input or
// output, graph input, output, value info, initializer — at most
// onnx-names of them, also for the name table of the structural checks;
// list growth by append at most doubles (3). So the total is at most
// about 2F + 8·onnx-elements + 2·256·(nodes + onnx-names) bytes, whatever
// the input declares: with the defaults and a 256 MiB file, about 1 GiB,
// and a small file costs little however large the sizes it declares
// (TestHostileAllocation measures this). The element slices and the exact
// values made of float tensors (a spec.Rat per element) are further held
// to onnx-value-bytes together: the slices charged per tensor before they
// are allocated (TestValueBytesBudget), and the exact values where they
// are made — a TensorProto file's floats at decode, a model's by the
// importer where it converts one, which a linear or conv weight held as
// its decoded plane never is (TestValueBytesAtImport): onnx-elements
// alone let a 2^26-float Constant need 2.5 GB as exact values.
//
// Protobuf semantics are kept where they matter: fields may come in any
// order; repeated scalars are accepted packed and unpacked; an unknown
// field is skipped according to its wire type (groups included, their
// nesting bounded by protowire's recursion limit); a scalar given twice
// keeps its last value. A known field with the wrong wire type is an
// error. Three deviations, all refusals of files no ONNX writer produces:
// an embedded message that protobuf would merge from two occurrences (a
// second graph, a second type of a value, a second tensor of an
// attribute) is an error, and so is a
// tensor whose data is given both as raw_data and as a typed field, and a
// string field the reader keeps (a name, an op type, a domain, a dimension
// parameter) that is not UTF-8 — import writes names into JSON, where each
// bad byte would become U+FFFD and two names could become one. (A STRING
// attribute is bytes in ONNX and is not checked.)
//
// The reader never descends into a nested graph: a GRAPH or GRAPHS
// attribute (the bodies of If, Loop, Scan) is kept with its type and no
// value, so the decoder's recursion depth is fixed by the schema (model →
// graph → node → attribute → tensor; value info → type → shape → dim),
// whatever the file.
//
// Structural checks made here: the model has a graph; every node has an
// op_type; every non-empty node input is a graph input, an initializer or
// an output of an earlier node (ONNX requires nodes in topological order,
// so a cycle or a forward reference is an error naming the node and the
// input); no value name is produced twice (graph inputs, initializers and
// node outputs; an initializer may also be listed as a graph input, as
// IR version 3 requires); every graph output is produced; names are
// unique among the attributes of a node and among the opset imports.
// Empty input and output names (omitted optional values) are allowed.
//
// Tensors: FLOAT, DOUBLE, INT64 and INT32 are decoded from raw_data
// (little-endian) or their typed field (float_data, double_data,
// int64_data, int32_data); INT8, UINT8, INT16, UINT16 and BOOL widen into
// Int32 from int32_data or raw_data (values outside the type's range are
// an error naming the element); UINT32 and UINT64 go into Int64 from
// uint64_data or raw_data (UINT32 widened; UINT64 as its 64 bits, so a
// value of 2⁶³ or more reads negative there: Tensor.Rats gives its
// unsigned value and the importer refuses it naming the element); FLOAT16
// and BFLOAT16 widen, exactly, into Float32 from raw_data (2 bytes each)
// or int32_data (the 16 bits of each element). Other data types (STRING,
// complex, 8/4/2-bit types) are refused naming the type, and so is
// external data (data_location = EXTERNAL).
//
// Every error is one line, prefixed "onnx: " (and the file's path for
// ReadModel and ReadTensor), naming where it is — the node's name and op
// type (Node.Where), the attribute, tensor or value, and the protobuf
// field with its number.
package onnx

import (
	"fmt"
	"strings"
)

// DataType is TensorProto.DataType, the element type of a tensor or of a
// tensor-typed value.
type DataType int32

// The TensorProto.DataType values (onnx.proto).
const (
	Undefined  DataType = 0
	Float      DataType = 1
	Uint8      DataType = 2
	Int8       DataType = 3
	Uint16     DataType = 4
	Int16      DataType = 5
	Int32      DataType = 6
	Int64      DataType = 7
	String     DataType = 8
	Bool       DataType = 9
	Float16    DataType = 10
	Double     DataType = 11
	Uint32     DataType = 12
	Uint64     DataType = 13
	Complex64  DataType = 14
	Complex128 DataType = 15
	BFloat16   DataType = 16
	// The float 8, float 4 and sub-byte integer types (spec.MiniFloat,
	// onnx/minifloat.go): read, and cast to and from at import.
	Float8E4M3FN   DataType = 17
	Float8E4M3FNUZ DataType = 18
	Float8E5M2     DataType = 19
	Float8E5M2FNUZ DataType = 20
	Uint4          DataType = 21
	Int4           DataType = 22
	Float4E2M1     DataType = 23
	Float8E8M0     DataType = 24
	Uint2          DataType = 25
	Int2           DataType = 26
)

var dataTypeNames = map[DataType]string{
	0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32", 7: "INT64",
	8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32", 13: "UINT64", 14: "COMPLEX64",
	15: "COMPLEX128", 16: "BFLOAT16", 17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ", 19: "FLOAT8E5M2",
	20: "FLOAT8E5M2FNUZ", 21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1", 24: "FLOAT8E8M0", 25: "UINT2", 26: "INT2",
}

// String is the onnx.proto name of the type ("FLOAT"), or "DataType(n)"
// for a value the schema does not define.
func (t DataType) String() string {
	if s, ok := dataTypeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("DataType(%d)", int32(t))
}

// Supported reports whether the reader decodes tensors of this type.
func (t DataType) Supported() bool {
	switch t {
	case Float, Double, Float16, BFloat16, Int64, Int32, Int16, Uint16, Int8, Uint8, Bool, Uint32, Uint64:
		return true
	}
	return t.IsMini() || t.IsSubByteInt()
}

// Size is the number of bytes of one element in raw_data (0 for a type the
// reader does not decode).
func (t DataType) Size() int {
	switch t {
	case Float, Int32, Uint32:
		return 4
	case Double, Int64, Uint64:
		return 8
	case Int16, Uint16, Float16, BFloat16:
		return 2
	case Int8, Uint8, Bool:
		return 1
	}
	if t.IsMini() || t.IsSubByteInt() {
		return 1 // a byte holds PerByte elements
	}
	return 0
}

// PerByte is the number of elements one byte of raw_data (or one entry of
// int32_data) holds: 2 for the 4-bit types, 4 for the 2-bit types, else 1.
// Packed elements fill a byte from its least significant bits.
func (t DataType) PerByte() int {
	switch t {
	case Uint4, Int4, Float4E2M1:
		return 2
	case Uint2, Int2:
		return 4
	}
	return 1
}

// IsMini reports whether t is one of the float 8 and float 4 types
// (FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0,
// FLOAT4E2M1): held in Tensor.Float32 exactly (NaN and ±∞ as themselves).
func (t DataType) IsMini() bool {
	switch t {
	case Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Float4E2M1:
		return true
	}
	return false
}

// IsSubByteInt reports whether t is INT4, UINT4, INT2 or UINT2 (held in
// Tensor.Int32).
func (t DataType) IsSubByteInt() bool {
	return t == Int4 || t == Uint4 || t == Int2 || t == Uint2
}

// IsFloat reports whether t is FLOAT, DOUBLE, FLOAT16 or BFLOAT16.
func (t DataType) IsFloat() bool {
	return t == Float || t == Double || t == Float16 || t == BFloat16
}

// Is16 reports whether t is FLOAT16 or BFLOAT16 (held widened, exactly,
// in Tensor.Float32).
func (t DataType) Is16() bool { return t == Float16 || t == BFloat16 }

// Model is a decoded ModelProto.
type Model struct {
	IRVersion    int64
	ProducerName string
	Opsets       []OpsetID // opset_import, in file order (domains distinct)
	Graph        *Graph    // never nil in a decoded model
}

// Opset returns the version the model imports for an operator-set domain;
// "" and "ai.onnx" both name the default domain. ok is false when the
// model imports no version of it.
func (m *Model) Opset(domain string) (version int64, ok bool) {
	for _, o := range m.Opsets {
		if sameDomain(o.Domain, domain) {
			return o.Version, true
		}
	}
	return 0, false
}

// sameDomain compares operator-set domains, "" and "ai.onnx" being one.
func sameDomain(a, b string) bool {
	if a == "ai.onnx" {
		a = ""
	}
	if b == "ai.onnx" {
		b = ""
	}
	return a == b
}

// OpsetID is an OperatorSetIdProto: a domain and its version.
type OpsetID struct {
	Domain  string
	Version int64
}

// Graph is a decoded GraphProto. Nodes are in file order, which the
// reader has checked to be a topological order.
type Graph struct {
	Name                       string
	Nodes                      []*Node
	Initializers               []*Tensor // each named, names distinct
	Inputs, Outputs, ValueInfo []*ValueInfo
}

// Node is a decoded NodeProto. Index is its position in Graph.Nodes.
type Node struct {
	Index                int
	Name, OpType, Domain string
	Inputs, Outputs      []string // "" for an omitted optional value
	Attrs                []*Attribute
}

// Attr returns the node's attribute of that name, or nil when it has none.
func (n *Node) Attr(name string) *Attribute {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Where names the node for an error line: `node "conv1" (Conv)`, or
// `node #3 (Conv)` (its index) when it has no name; without the op type
// in parentheses when it has none. Names and op types
// are quoted or cut (limits.Quote) so that the line stays short and one
// line whatever the file holds.
func (n *Node) Where() string {
	op := plainOr(n.OpType)
	if n.Domain != "" && n.Domain != "ai.onnx" {
		op = plainOr(n.Domain) + "." + op
	}
	w := fmt.Sprintf("node #%d", n.Index)
	if n.Name != "" {
		w = "node " + quote(n.Name)
	}
	if n.OpType == "" {
		return w // not read (yet), or missing
	}
	return w + " (" + op + ")"
}

// AttrType is AttributeProto.AttributeType.
type AttrType int32

// The AttributeProto.AttributeType values (onnx.proto).
const (
	AttrUndefined     AttrType = 0
	AttrFloat         AttrType = 1
	AttrInt           AttrType = 2
	AttrString        AttrType = 3
	AttrTensor        AttrType = 4
	AttrGraph         AttrType = 5
	AttrFloats        AttrType = 6
	AttrInts          AttrType = 7
	AttrStrings       AttrType = 8
	AttrTensors       AttrType = 9
	AttrGraphs        AttrType = 10
	AttrSparseTensor  AttrType = 11
	AttrSparseTensors AttrType = 12
	AttrTypeProto     AttrType = 13
	AttrTypeProtos    AttrType = 14
)

var attrTypeNames = map[AttrType]string{
	0: "UNDEFINED", 1: "FLOAT", 2: "INT", 3: "STRING", 4: "TENSOR", 5: "GRAPH", 6: "FLOATS", 7: "INTS",
	8: "STRINGS", 9: "TENSORS", 10: "GRAPHS", 11: "SPARSE_TENSOR", 12: "SPARSE_TENSORS", 13: "TYPE_PROTO",
	14: "TYPE_PROTOS",
}

// String is the onnx.proto name of the type ("INTS").
func (t AttrType) String() string {
	if s, ok := attrTypeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("AttrType(%d)", int32(t))
}

// Attribute is a decoded AttributeProto. The field of its Type holds the
// value (F for FLOAT, I for INT, S for STRING, T for TENSOR, Floats, Ints,
// Strings for the lists); the other value fields are zero. For the types
// whose value the reader does not decode (GRAPH, GRAPHS, TENSORS, sparse
// tensors, type protos) only Name and Type are set: no operator tlcheck
// imports takes one, and the importer refuses the node.
type Attribute struct {
	Name    string
	Type    AttrType
	F       float32
	I       int64
	S       []byte
	T       *Tensor
	G       *Graph // a GRAPH attribute's subgraph (an If branch), checked with the enclosing graph's names
	Floats  []float32
	Ints    []int64
	Strings [][]byte
}

// ValueInfo is a decoded ValueInfoProto of a tensor-typed value. ElemType
// is the tensor_type's elem_type (Undefined when the file gives no type);
// HasShape says whether the type has a shape (a shape with no dims is a
// scalar, rank 0).
type ValueInfo struct {
	Name     string
	ElemType DataType
	HasShape bool
	Shape    []Dim
}

// Dim is one dimension of a value's shape: a known extent Value (≥ 0)
// with Param == "", a symbolic extent Param != "" (Value 0), or, when the
// file gives neither, an unknown extent: Value −1, Param "".
type Dim struct {
	Value int64
	Param string
}

// Known reports whether the extent is a number.
func (d Dim) Known() bool { return d.Param == "" && d.Value >= 0 }

// String is the extent, the symbol, or "?".
func (d Dim) String() string {
	switch {
	case d.Param != "":
		return d.Param
	case d.Value < 0:
		return "?"
	}
	return fmt.Sprint(d.Value)
}

// plainOr renders an identifier-like string (an op type, a domain) as it
// is, and anything else quoted and cut, so that it cannot break a line.
func plainOr(s string) string {
	if s == "" || len(s) > 64 {
		return quote(s)
	}
	for _, r := range s {
		if !(r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return quote(s)
		}
	}
	return s
}

// joinDims renders dims as "[2 3]" for an error line (at most 16 are
// ever held).
func joinDims(d []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range d {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, v)
	}
	b.WriteByte(']')
	return b.String()
}
