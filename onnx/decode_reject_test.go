package onnx

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tlcheck/tlcheck/limits"
)

// reluGraph is x[2] → Relu (node "r") → y, with extra nodes, initializers
// and attributes spliced in by the cases below.
func reluGraph() graphB {
	return graphB{
		nodes:   []pb{node("r", "Relu", []string{"x"}, []string{"y"})},
		inputs:  []pb{valueInfo("x", Float, 2)},
		outputs: []pb{valueInfo("y", Float, 2)},
	}
}

// withInit is reluGraph with one more initializer (unused by any node).
func withInit(t pb) pb {
	g := reluGraph()
	g.inits = append(g.inits, t)
	return model(13, g.enc())
}

// withAttr is reluGraph whose node carries one more attribute.
func withAttr(a pb) pb {
	g := reluGraph()
	g.nodes = []pb{node("r", "Relu", []string{"x"}, []string{"y"}, a)}
	return model(13, g.enc())
}

// withNodes is reluGraph with its nodes replaced.
func withNodes(ns ...pb) pb {
	g := reluGraph()
	g.nodes = ns
	return model(13, g.enc())
}

// withValue is reluGraph with one more value_info.
func withValue(v pb) pb {
	g := reluGraph()
	g.vis = append(g.vis, v)
	return model(13, g.enc())
}

// raw appends a tag with any wire type and then the given bytes verbatim.
func raw(m pb, num protowire.Number, typ protowire.Type, tail ...byte) pb {
	return append(protowire.AppendTag(m, num, typ), tail...)
}

// TestRejectModels: every rejection path of Decode, each with the one-line
// error that names where (node, attribute, tensor, field) it is.
func TestRejectModels(t *testing.T) {
	good := convModel()
	overlong := raw(nil, 1, protowire.VarintType, bytes.Repeat([]byte{0xff}, 10)...)
	overlong = append(overlong, 0x01)
	typeOnly := func(vi pb) pb { return vi }
	seqType := pb(nil).str(1, "s").msg(2, pb(nil).msg(4, pb(nil)))
	dims17 := make([]int64, 17)
	for i := range dims17 {
		dims17[i] = 1
	}
	cases := []struct {
		name string
		data pb
		want []string // substrings of the error, in order
	}{
		// Wire level.
		{"empty input", nil, []string{"model: field graph (7): missing"}},
		{"truncated model", good[:len(good)-7], []string{"truncated"}},
		{"truncated in a node's attribute", good[:60], []string{"truncated"}},
		{"length prefix beyond the buffer", raw(nil, 7, protowire.BytesType, 0xe8, 0x07, 1, 2, 3), []string{"model: byte 0: field graph (7): truncated"}},
		{"varint overflow", overlong, []string{"field ir_version (1)", "overflow"}},
		{"known field, wrong wire type", pb(nil).str(1, "8"), []string{"field ir_version (1): wire type length-delimited, want varint"}},
		{"end group without a start", raw(nil, 3, protowire.EndGroupType), []string{"end of a group that was not started"}},
		{"field number 0", append(pb(nil), 0x00, 0x01), []string{"field tag", "invalid field number"}},
		{"unknown wire type", append(pb(nil), 0x0e), []string{"unknown wire type 6"}},
		{"unterminated group", raw(nil, 99, protowire.StartGroupType, 0x08, 0x01), []string{"field 99", "truncated"}},
		{"graph twice", pb(nil).msg(7, reluGraph().enc()).msg(7, reluGraph().enc()), []string{"field graph (7): appears twice"}},
		{"opset twice", pb(nil).msg(7, reluGraph().enc()).msg(8, pb(nil).int(2, 9)).msg(8, pb(nil).str(1, "ai.onnx").int(2, 13)),
			[]string{"field opset_import (8): #1: domain \"ai.onnx\" imported twice"}},
		// Graph structure.
		{"forward reference", withNodes(node("a", "Relu", []string{"b"}, []string{"y"}), node("bb", "Relu", []string{"x"}, []string{"b"})),
			[]string{`node "a" (Relu): input #0 "b" is not a graph input, an initializer or an output of an earlier node`}},
		{"cycle", withNodes(node("a", "Add", []string{"x", "c"}, []string{"b"}), node("", "Relu", []string{"b"}, []string{"c"}), node("", "Relu", []string{"c"}, []string{"y"})),
			[]string{`node "a" (Add): input #1 "c"`, "topological order"}},
		{"self loop", withNodes(node("", "Add", []string{"x", "y"}, []string{"y"})), []string{`node #0 (Add): input #1 "y"`}},
		{"output produced twice", withNodes(node("a", "Relu", []string{"x"}, []string{"y"}), node("b", "Neg", []string{"x"}, []string{"y"})),
			[]string{`node "b" (Neg): output #0 "y" is already defined (by node "a" (Relu))`}},
		{"output shadows an input", withNodes(node("a", "Relu", []string{"x"}, []string{"x"}), node("b", "Relu", []string{"x"}, []string{"y"})),
			[]string{`node "a" (Relu): output #0 "x" is already defined (by graph input)`}},
		{"graph output not produced", withNodes(node("a", "Relu", []string{"x"}, []string{"z"})), []string{`graph: output #0 "y" is not produced`}},
		{"graph input twice", model(13, graphB{nodes: reluGraph().nodes, inputs: []pb{valueInfo("x", Float, 2), valueInfo("x", Float, 2)}, outputs: reluGraph().outputs}.enc()),
			[]string{`graph: input #1 "x" is listed twice`}},
		{"initializer twice", model(13, graphB{nodes: reluGraph().nodes, inputs: reluGraph().inputs, outputs: reluGraph().outputs,
			inits: []pb{floatTensor("w", []int64{1}, 1), floatTensor("w", []int64{1}, 2)}}.enc()), []string{`graph: initializer "w" appears twice`}},
		{"unnamed initializer", withInit(floatTensor("", []int64{1}, 1)), []string{"initializer #0: field name (8): missing"}},
		// Names that are not UTF-8 (import would write them as JSON with
		// U+FFFD: two names could become one).
		{"node input not UTF-8", withNodes(node("r", "Relu", []string{"x\xff"}, []string{"y"})), []string{`field input (1): not UTF-8 ("x\xff")`}},
		{"node output not UTF-8", withNodes(node("r", "Relu", []string{"x"}, []string{"y\xfe"})), []string{`field output (2): not UTF-8`}},
		{"op_type not UTF-8", withNodes(node("r", "Re\xfflu", []string{"x"}, []string{"y"})), []string{`field op_type (4): not UTF-8`}},
		{"initializer name not UTF-8", withInit(floatTensor("w\xff", []int64{1}, 1)), []string{`field name (8): not UTF-8`}},
		{"value name not UTF-8", withValue(pb(nil).str(1, "v\xff")), []string{`field name (1): not UTF-8`}},
		{"node without op_type", withNodes(pb(nil).str(1, "x").str(2, "y").str(3, "n")), []string{`node "n": field op_type (4): missing`}},
		{"sparse initializer", model(13, reluGraph().enc().msg(15, pb(nil))), []string{"graph: byte", "field sparse_initializer (15): sparse initializers are not supported"}},
		{"no graph", pb(nil).int(1, 8), []string{"model: field graph (7): missing"}},
		// Attributes.
		{"attribute twice", withNodes(node("r", "Relu", []string{"x"}, []string{"y"}, attrInt("k", 1), attrInt("k", 2))),
			[]string{`node "r" (Relu): attribute "k": given twice`}},
		{"attribute type and field disagree", withAttr(pb(nil).str(1, "pads").int(20, int64(AttrInts)).fixed32(2, 0)),
			[]string{`node "r" (Relu): attribute "pads": field f (2) is set, but the attribute's type is INTS`}},
		{"attribute without type or value", withAttr(pb(nil).str(1, "k")), []string{`attribute "k": field type (20): missing, and no value field is set`}},
		{"attribute of an unknown type", withAttr(pb(nil).str(1, "k").int(20, 99)), []string{`attribute "k": field type (20): 99 is not an AttributeProto.AttributeType`}},
		{"attribute without a name", withAttr(attrInt("", 3)), []string{`node "r" (Relu): attribute #0: field name (1): missing`}},
		{"attribute referring to a function's", withAttr(pb(nil).str(1, "k").int(20, 2).str(21, "p")), []string{`attribute "k": byte`, "field ref_attr_name (21): a reference"}},
		{"attribute f as varint", withAttr(pb(nil).str(1, "alpha").int(20, 1).int(2, 3)), []string{`attribute "alpha": byte`, "field f (2): wire type varint, want fixed32"}},
		{"attribute floats misaligned", withAttr(pb(nil).str(1, "s").int(20, 6).bytes(7, []byte{1, 2, 3})), []string{`field floats (7): packed length 3 is not a multiple of 4`}},
		{"attribute ints truncated", withAttr(pb(nil).str(1, "s").int(20, 7).bytes(8, []byte{0x80})), []string{`attribute "s"`, `field ints (8): packed varints: truncated`}},
		{"tensor attribute twice", withAttr(attrTensor("value", floatTensor("", nil, 1)).msg(5, floatTensor("", nil, 2))), []string{`attribute "value": byte`, "field t (5): appears twice"}},
		{"graph attribute as varint", withAttr(pb(nil).str(1, "body").int(20, 5).int(6, 1)), []string{`attribute "body": byte`, "field g (6): wire type varint, want length-delimited"}},
		{"functions as varint", model(13, reluGraph().enc()).int(25, 1), []string{"model: byte", "field functions (25): wire type varint"}},
		{"tensor attribute without a tensor", withAttr(pb(nil).str(1, "value").int(20, 4)), []string{`attribute "value": field t (5): missing`}},
		{"tensor attribute with a bad tensor", withAttr(attrTensor("value", floatTensor("", []int64{3}, 1, 2))),
			[]string{`node "r" (Relu): attribute "value": tensor: field float_data (4): 2 elements, but dims [3] have 3`}},
		// Values.
		{"sequence-typed value", withValue(typeOnly(seqType)), []string{`value_info "s": byte`, "field type (2)", "field sequence_type (4): only tensor types are supported"}},
		{"negative dim_value", withValue(valueInfo("v", Float, 2).msg(2, pb(nil))), []string{`value_info "v": byte`, "field type (2): appears twice"}},
		{"value with a negative extent", withValue(pb(nil).str(1, "v").msg(2, pb(nil).msg(1, pb(nil).int(1, 1).msg(2, pb(nil).msg(1, pb(nil).int(1, -3)))))),
			[]string{`value_info "v"`, "#0: byte", "field dim_value (1): negative extent -3"}},
		{"value of rank 17", withValue(valueInfo("v", Float, dims17...)), []string{`value_info "v"`, "field dim (1): more than 16 dims"}},
		// Initializers (TensorProto).
		{"huge dims, tiny data", withInit(rawFloatTensor("w", []int64{1 << 40}, 1)), []string{`initializer "w": field dims (1)`, "over the axis limit"}},
		{"huge element count, tiny data", withInit(rawFloatTensor("w", []int64{1 << 20, 1 << 20}, 1)), []string{`initializer "w": field dims (1)`, "over the elements limit"}},
		{"float_data count ≠ dims", withInit(floatTensor("w", []int64{3}, 1, 2)), []string{`initializer "w": field float_data (4): 2 elements, but dims [3] have 3`}},
		{"raw_data length ≠ dims", withInit(tensorDims("w", Float, 2).bytes(9, make([]byte, 7))), []string{`initializer "w": field raw_data (9): 7 bytes, but dims [2] × 4 bytes (FLOAT) make 8`}},
		{"no data for two elements", withInit(tensorDims("w", Float, 2)), []string{`initializer "w": field float_data (4): 0 elements, but dims [2] have 2`}},
		{"raw_data and float_data", withInit(floatTensor("w", []int64{1}, 1).bytes(9, make([]byte, 4))), []string{`initializer "w": both raw_data (9) and float_data (4) are set`}},
		{"typed field of another type", withInit(tensorDims("w", Float, 1).packedInts(7, 1)), []string{`initializer "w": field int64_data (7) is set, but the data type is FLOAT`}},
		{"external data", withInit(tensorDims("w", Float, 1).int(14, 1)), []string{`initializer "w": field data_location (14): external data is not supported`}},
		{"external data entries", withInit(tensorDims("w", Float, 1).msg(13, pb(nil).str(1, "location").str(2, "w.bin"))), []string{`initializer "w"`, "external data is not supported"}},
		{"bad data location", withInit(floatTensor("w", []int64{1}, 1).int(14, 7)), []string{`7 is not a TensorProto.DataLocation`}},
		{"string", withInit(tensorDims("w", String, 1).packedInts(5, 1)), []string{`initializer "w": field data_type (2): data type STRING is not supported`}},
		{"uint64 in int32_data", withInit(tensorDims("w", Uint64, 1).packedInts(5, 1)), []string{`initializer "w": field int32_data (5) is set, but the data type is UINT64`}},
		{"float16 bits beyond 16", withInit(tensorDims("w", Float16, 1).packedInts(5, 0x13c00)), []string{`initializer "w"`, "element 0: 80896 is not 16 bits"}},
		{"string tensor", withInit(tensorDims("w", String, 1).str(6, "a")), []string{"data type STRING is not supported"}},
		{"unknown data type", withInit(tensorDims("w", 77, 1)), []string{"data type DataType(77) is not supported"}},
		{"undefined data type", withInit(pb(nil).str(8, "w").packedInts(1, 1)), []string{`initializer "w": field data_type (2): missing or UNDEFINED`}},
		{"negative dim", withInit(floatTensor("w", []int64{2, -1}, 1)), []string{`initializer "w": field dims (1): [2 -1]: dim 1 is negative`}},
		{"rank 17", withInit(tensorDims("w", Float, dims17...)), []string{`initializer "w": byte`, "field dims (1): more than 16 dims"}},
		{"rank 17 unpacked", withInit(func() pb {
			m := pb(nil).str(8, "w").int(2, 1)
			for range 17 {
				m = m.int(1, 1)
			}
			return m
		}()), []string{"more than 16 dims"}},
		{"float_data misaligned", withInit(tensorDims("w", Float, 1).bytes(4, []byte{0, 0, 128, 63, 0})), []string{"field float_data (4): packed length 5 is not a multiple of 4"}},
		{"double_data as varint", withInit(tensorDims("w", Double, 1).int(10, 1)), []string{"field double_data (10): wire type varint, want packed or fixed64"}},
		{"int64_data truncated", withInit(tensorDims("w", Int64, 1).bytes(7, []byte{0x81})), []string{"field int64_data (7): packed varints: truncated"}},
		{"uint8 out of range", withInit(tensorDims("w", Uint8, 2).packedInts(5, 1, 300)), []string{`initializer "w": byte`, "field int32_data (5): element 1: 300 is out of the range of UINT8"}},
		{"bool out of range", withInit(tensorDims("w", Bool, 2).bytes(9, []byte{1, 2})), []string{`initializer "w": field raw_data (9): element 1: byte 2 is not a BOOL`}},
		{"segment", withInit(floatTensor("w", []int64{1}, 1).msg(3, pb(nil).int(1, 0))), []string{"field segment (3): segmented tensors are not supported"}},
		{"name as varint", withInit(tensorDims("", Float, 1).int(8, 5)), []string{"field name (8): wire type varint, want length-delimited"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(c.data)
			if err == nil {
				t.Fatalf("decoded %+v", m)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "onnx: ") || strings.Contains(msg, "\n") || len(msg) > 400 {
				t.Errorf("not one short onnx line: %q", msg)
			}
			rest := msg
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error %q lacks %q", msg, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestRejectTensorFiles: DecodeTensor refuses the same tensors, naming the
// tensor.
func TestRejectTensorFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		data pb
		want string
	}{
		{"huge dims", rawFloatTensor("input_0", []int64{1 << 25, 1 << 25, 4}, 1), `onnx: tensor "input_0": field dims (1): shape [33554432,33554432,4] has more than 134217728 elements`},
		{"truncated", floatTensor("t", []int64{4}, 1, 2, 3, 4)[:10], `onnx: tensor "t": byte 8: field float_data (4): truncated`},
		{"unnamed", floatTensor("", []int64{2}, 1), `onnx: tensor: field float_data (4): 1 elements, but dims [2] have 2`},
		{"empty", nil, `onnx: tensor: field data_type (2): missing or UNDEFINED`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeTensor(c.data)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("%v, want prefix %q", err, c.want)
			}
		})
	}
}

// TestLimits: each limit the reader enforces refuses an input one past it,
// and the error names the limit and how to raise it.
func TestLimits(t *testing.T) {
	twoNodes := withNodes(node("a", "Relu", []string{"x"}, []string{"h"}), node("b", "Relu", []string{"h"}, []string{"y"}))
	cases := []struct {
		name  string
		lim   limits.Limits
		data  pb
		model bool
		want  string
	}{
		{"onnx-bytes", limits.Limits{ONNXBytes: 40}, convModel(), true, "the model has"},
		{"onnx-bytes tensor", limits.Limits{ONNXBytes: 10}, floatTensor("t", []int64{4}, 1, 2, 3, 4), false, "the tensor file has"},
		{"nodes", limits.Limits{Nodes: 1}, twoNodes, true, "the graph has more than 1 nodes"},
		{"parents", limits.Limits{Parents: 2}, withNodes(node("s", "Sum", []string{"x", "x", "x"}, []string{"y"})), true, `node "s" (Sum): byte`},
		{"parents, attributes", limits.Limits{Parents: 1}, withNodes(node("s", "Relu", []string{"x"}, []string{"y"}, attrInt("a", 1), attrInt("b", 1))), true, "more than 1 attributes"},
		{"onnx-names", limits.Limits{ONNXNames: 4}, twoNodes, true, "more than 4 names"},
		{"onnx-elements", limits.Limits{ONNXElements: 5}, withInit(floatTensor("w", []int64{2, 3}, 1, 2, 3, 4, 5, 6)), true, "more than 5 numbers"},
		{"onnx-elements, attributes", limits.Limits{ONNXElements: 3}, withAttr(attrInts("pads", 1, 2, 3, 4)), true, "more than 3 numbers"},
		{"parents, opsets", limits.Limits{Parents: 1}, model(13, reluGraph().enc()).msg(8, pb(nil).str(1, "x").int(2, 1)), true, "more than 1 opset imports"},
		{"onnx-elements, value dims", limits.Limits{ONNXElements: 5}, model(13, reluGraph().enc()), true, "more than 5 numbers"},
		{"onnx-names, initializers", limits.Limits{ONNXNames: 6}, model(13, graphB{nodes: reluGraph().nodes, inputs: reluGraph().inputs, outputs: reluGraph().outputs,
			inits: []pb{floatTensor("a", nil, 1), floatTensor("b", nil, 1), floatTensor("c", nil, 1), floatTensor("d", nil, 1)}}.enc()), true, "more than 6 names"},
		{"elements", limits.Limits{Elements: 5}, floatTensor("t", []int64{2, 3}, 1, 2, 3, 4, 5, 6), false, "has more than 5 elements"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer limits.Set(c.lim)()
			var err error
			if c.model {
				_, err = Decode(c.data)
			} else {
				_, err = DecodeTensor(c.data)
			}
			if err == nil || !limits.IsLimit(err) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--max-") {
				t.Fatalf("%v, want a limit error with %q", err, c.want)
			}
		})
		// The same input decodes at the default limits (the limit, not the
		// input, refused it).
		var err error
		if c.model {
			_, err = Decode(c.data)
		} else {
			_, err = DecodeTensor(c.data)
		}
		if err != nil {
			t.Errorf("%s: at the defaults: %v", c.name, err)
		}
	}
}

// TestAccepted: what protobuf and ONNX allow decodes — unknown fields of
// every wire type (groups included), an initializer also listed as a graph
// input, an omitted optional input, an IR-version-1 attribute without a
// type, a non-default domain, an unknown dim.
func TestAccepted(t *testing.T) {
	g := reluGraph()
	g.nodes = []pb{
		node("c", "Clip", []string{"x", "", "hi"}, []string{"h", ""}, pb(nil).str(1, "old").fixed32(2, math.Float32bits(0.5))),
		node("r", "Relu", []string{"h"}, []string{"y"}, attrString("mode", "x"), attrFloat("alpha", -2), attrTensor("t", int64Tensor("", []int64{2}, 4, 5))),
	}
	g.inits = []pb{floatTensor("hi", nil, 6)}
	g.inputs = append(g.inputs, valueInfo("hi", Float))
	g.vis = []pb{valueInfo("h", Float, -1, 2)}
	body := g.enc()
	body = protowire.AppendTag(body, 99, protowire.StartGroupType)
	body = pb(body).int(1, 5).str(2, "in a group")
	body = protowire.AppendTag(body, 99, protowire.EndGroupType)
	body = pb(body).fixed64(98, 7).fixed32(97, 7).int(96, 7).str(95, "unknown")
	data := model(13, body).msg(8, pb(nil).str(1, "com.example").int(2, 2)).str(99, "more unknown")
	m, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	n := m.Graph.Nodes[0]
	if a := n.Attr("old"); a == nil || a.Type != AttrFloat || a.F != 0.5 {
		t.Errorf("untyped attribute %+v", a)
	}
	if len(n.Inputs) != 3 || n.Inputs[1] != "" || len(n.Outputs) != 2 || n.Outputs[1] != "" {
		t.Errorf("optional values %q %q", n.Inputs, n.Outputs)
	}
	r := m.Graph.Nodes[1]
	if a := r.Attr("mode"); a == nil || string(a.S) != "x" || a.Type != AttrString {
		t.Errorf("mode %+v", a)
	}
	if a := r.Attr("alpha"); a == nil || a.F != -2 {
		t.Errorf("alpha %+v", a)
	}
	if a := r.Attr("t"); a == nil || a.T == nil || a.T.DataType != Int64 || a.T.Int64[1] != 5 {
		t.Errorf("t %+v", a)
	}
	if v, ok := m.Opset("com.example"); !ok || v != 2 {
		t.Errorf("com.example opset %d %v", v, ok)
	}
	if d := m.Graph.ValueInfo[0].Shape[0]; d.Known() || d.Value != -1 {
		t.Errorf("unknown dim %+v", d)
	}
	if x := m.Graph.Inputs[1]; x.Name != "hi" || !x.HasShape || len(x.Shape) != 0 {
		t.Errorf("scalar input %+v", x)
	}
}

// TestWhere: a node's name and op type are rendered on one short line
// whatever they hold.
func TestWhere(t *testing.T) {
	for _, c := range []struct {
		n    Node
		want string
	}{
		{Node{Index: 3, OpType: "Conv"}, "node #3 (Conv)"},
		{Node{Name: "c1", OpType: "Conv"}, `node "c1" (Conv)`},
		{Node{Name: "g", OpType: "Gradient", Domain: "ai.onnx.preview.training"}, `node "g" (ai.onnx.preview.training.Gradient)`},
		{Node{Name: "g", OpType: "Relu", Domain: "ai.onnx"}, `node "g" (Relu)`},
		{Node{Name: "a\nb", OpType: "Co\nnv"}, `node "a\nb" ("Co\nnv")`},
		{Node{Name: strings.Repeat("n", 100), OpType: "X"}, `node "` + strings.Repeat("n", 64) + `"… (100 bytes) (X)`},
	} {
		if got := c.n.Where(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// TestReadFiles: ReadModel and ReadTensor name the path in every error and
// read what Decode and DecodeTensor read.
func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	mp := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(mp, convModel(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadModel(mp)
	if err != nil || len(m.Graph.Nodes) != 2 {
		t.Fatalf("%v %v", m, err)
	}
	bad := filepath.Join(dir, "bad.onnx")
	if err := os.WriteFile(bad, withNodes(node("a", "Relu", []string{"q"}, []string{"y"})), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadModel(bad); err == nil || !strings.HasPrefix(err.Error(), "onnx: "+bad+`: node "a" (Relu): input #0 "q"`) {
		t.Errorf("%v", err)
	}
	if _, err := ReadModel(filepath.Join(dir, "missing.onnx")); err == nil || !strings.HasPrefix(err.Error(), "onnx: "+filepath.Join(dir, "missing.onnx")+": open: ") {
		t.Errorf("%v", err)
	}
	if _, err := ReadModel(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("%v", err)
	}
	tp := filepath.Join(dir, "input_0.pb")
	if err := os.WriteFile(tp, floatTensor("x", []int64{2}, 1, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	if x, err := ReadTensor(tp); err != nil || x.Float32[1] != 2 {
		t.Errorf("%v %v", x, err)
	}
	func() {
		defer limits.Set(limits.Limits{ONNXBytes: 8})()
		if _, err := ReadTensor(tp); err == nil || !limits.IsLimit(err) || !strings.HasPrefix(err.Error(), "onnx: "+tp+": the tensor file has") {
			t.Errorf("%v", err)
		}
	}()
}

// TestTruncatedNamesWhere: a model cut at any byte is refused — except at
// a boundary between the model's own fields after the graph, which leaves
// a shorter valid ModelProto (protobuf has no end marker): here only the
// cut before opset_import — and where the cut falls inside a node, the
// error names the node (Conv or Relu) and a field.
func TestTruncatedNamesWhere(t *testing.T) {
	full := convModel()
	opsetAt := len(full) - len(pb(nil).msg(8, pb(nil).str(1, "").int(2, 13)))
	named := 0
	for k := 0; k < len(full); k++ {
		m, err := Decode(full[:k])
		if k == opsetAt {
			if err != nil || len(m.Opsets) != 0 {
				t.Errorf("cut before opset_import: %v %v", m, err)
			}
			continue
		}
		if err == nil {
			t.Fatalf("cut at %d decoded", k)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "onnx: ") {
			t.Fatalf("cut at %d: %q", k, msg)
		}
		if strings.Contains(msg, `node "conv1" (Conv): `) || strings.Contains(msg, `node #1 (Relu): `) {
			named++
		}
	}
	// The node messages span bytes 18–90 or so of the 448: most cuts in
	// them must name the node.
	if named < 40 {
		t.Errorf("only %d of %d cuts name a node", named, len(full))
	}
}

// TestNesting: the reader's recursion depth is bounded. A GRAPH attribute
// (an If's branch) is decoded as a subgraph, nested at most maxGraphDepth
// deep: graphs nested 2 000 deep are refused with one line, not a stack
// overflow; GRAPHS and sparse-tensor attributes are kept as typed
// attributes without a value and never descended into; unknown groups
// nested past protowire's recursion limit are an error.
func TestNesting(t *testing.T) {
	deep := pb(nil).str(4, "Relu")
	for range 2000 {
		inner := pb(nil).str(1, "then_branch").int(20, int64(AttrGraph)).msg(6, pb(nil).msg(1, deep))
		deep = pb(nil).str(4, "If").msg(5, inner)
	}
	branch := pb(nil).str(1, "then_branch").int(20, int64(AttrGraph)).msg(6, pb(nil).msg(1, deep))
	_, err := Decode(withNodes(node("if", "If", []string{"x"}, []string{"y"}, branch)))
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "nested more than") {
		t.Fatalf("graphs nested 2000 deep: %v", err)
	}
	shallow := pb(nil).str(1, "then_branch").int(20, int64(AttrGraph)).msg(6, pb(nil).msg(1, pb(nil).str(4, "Relu")))
	others := pb(nil).str(1, "subs").int(20, int64(AttrGraphs)).msg(11, pb(nil)).msg(11, pb(nil))
	sparse := pb(nil).str(1, "sp").int(20, int64(AttrSparseTensor)).msg(22, pb(nil).msg(1, pb(nil)))
	m, err := Decode(withNodes(node("if", "If", []string{"x"}, []string{"y"}, shallow, others, sparse)))
	if err != nil {
		t.Fatal(err)
	}
	n := m.Graph.Nodes[0]
	if a := n.Attr("then_branch"); a == nil || a.G == nil || len(a.G.Nodes) != 1 || a.G.Nodes[0].OpType != "Relu" {
		t.Errorf("then_branch: %+v", a)
	}
	for name, typ := range map[string]AttrType{"subs": AttrGraphs, "sp": AttrSparseTensor} {
		a := n.Attr(name)
		if a == nil || a.Type != typ || a.T != nil || a.S != nil || a.Ints != nil || a.G != nil {
			t.Errorf("%s: %+v", name, a)
		}
	}

	var groups pb
	for range 20000 {
		groups = protowire.AppendTag(groups, 50, protowire.StartGroupType)
	}
	for range 20000 {
		groups = protowire.AppendTag(groups, 50, protowire.EndGroupType)
	}
	_, err = Decode(append(model(13, reluGraph().enc()), groups...))
	if err == nil || !strings.Contains(err.Error(), "field 50") {
		t.Errorf("groups nested 20000 deep: %v", err)
	}
	// Nested 100 deep they are skipped.
	groups = groups[:0]
	for range 100 {
		groups = protowire.AppendTag(groups, 50, protowire.StartGroupType)
	}
	for range 100 {
		groups = protowire.AppendTag(groups, 50, protowire.EndGroupType)
	}
	if _, err := Decode(append(model(13, reluGraph().enc()), groups...)); err != nil {
		t.Errorf("groups nested 100 deep: %v", err)
	}
}

// TestHostileAllocation: small inputs that declare large things — dims of
// 2^25 elements with no data, a length prefix of 2^40, a packed field of
// 2^30 declared bytes, a billion-element zero-extent shape — are refused
// having allocated little (measured as the bytes allocated while decoding,
// runtime.MemStats.TotalAlloc, which does not depend on the collector).
func TestHostileAllocation(t *testing.T) {
	cases := []struct {
		name string
		data pb
	}{
		{"2^25 elements declared, 4 bytes given", withInit(rawFloatTensor("w", []int64{1 << 25}, 1))},
		{"2^25 elements declared, no data", withInit(tensorDims("w", Int64, 1<<12, 1<<13))},
		{"zero extent beside a huge one", withInit(tensorDims("w", Float, 0, 1<<40))},
		{"length prefix 2^40", raw(nil, 7, protowire.BytesType, protowire.AppendVarint(nil, 1<<40)...)},
		{"packed ints of 2^30 declared bytes", withAttr(raw(pb(nil).str(1, "k").int(20, 7), 8, protowire.BytesType, protowire.AppendVarint(nil, 1<<30)...))},
		{"2^25 elements of a tensor file", rawFloatTensor("x", []int64{1 << 12, 1 << 13}, 1, 2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err1 := Decode(c.data)
			_, err2 := DecodeTensor(c.data)
			runtime.ReadMemStats(&after)
			if err1 == nil && err2 == nil {
				t.Fatal("decoded")
			}
			if used := after.TotalAlloc - before.TotalAlloc; used > 1<<20 {
				t.Errorf("allocated %d bytes for a %d-byte input (%v)", used, len(c.data), err1)
			}
		})
	}
}

// TestWrongWireType: every known field the reader decodes, given with a
// wrong wire type, is an error naming the field.
func TestWrongWireType(t *testing.T) {
	asVarint := func(num protowire.Number) pb { return pb(nil).int(num, 1) }
	asBytes := func(num protowire.Number) pb { return pb(nil).str(num, "z") }
	vi := func(extra pb) pb { return withValue(append(pb(nil).str(1, "v"), extra...)) }
	tt := func(extra pb) pb { return vi(pb(nil).msg(2, pb(nil).msg(1, extra))) }
	shape := func(extra pb) pb { return tt(pb(nil).int(1, 1).msg(2, extra)) }
	tensor := func(extra pb) pb { return withInit(append(floatTensor("w", []int64{1}, 1), extra...)) }
	cases := []struct {
		data  pb
		field string
	}{
		{append(model(13, reluGraph().enc()), asVarint(2)...), "producer_name (2)"},
		{pb(nil).msg(7, reluGraph().enc()).msg(8, asVarint(1)), "domain (1)"},
		{pb(nil).msg(7, reluGraph().enc()).msg(8, asBytes(2)), "version (2)"},
		{model(13, append(reluGraph().enc(), asVarint(2)...)), "name (2)"},
		{model(13, append(reluGraph().enc(), asVarint(1)...)), "node (1)"},
		{model(13, append(reluGraph().enc(), asVarint(5)...)), "initializer (5)"},
		{model(13, append(reluGraph().enc(), asVarint(11)...)), "input (11)"},
		{withNodes(append(node("r", "Relu", []string{"x"}, []string{"y"}), asVarint(1)...)), "input (1)"},
		{withNodes(append(node("r", "Relu", []string{"x"}, []string{"y"}), asVarint(3)...)), "name (3)"},
		{withNodes(append(node("r", "Relu", []string{"x"}, []string{"y"}), asVarint(5)...)), "attribute (5)"},
		{withAttr(pb(nil).str(1, "k").int(20, 2).str(3, "z")), "i (3)"},
		{withAttr(pb(nil).str(1, "k").int(20, 3).int(4, 1)), "s (4)"},
		{withAttr(pb(nil).str(1, "k").int(20, 4).int(5, 1)), "t (5)"},
		{withAttr(pb(nil).str(1, "k").int(20, 8).int(9, 1)), "strings (9)"},
		{withAttr(pb(nil).str(1, "k").str(20, "INT")), "type (20)"},
		{vi(asVarint(1)), "name (1)"},
		{vi(asVarint(2)), "type (2)"},
		{vi(pb(nil).msg(2, asVarint(1))), "tensor_type (1)"},
		{tt(asBytes(1)), "elem_type (1)"},
		{tt(asVarint(2)), "shape (2)"},
		{shape(asVarint(1)), "dim (1)"},
		{shape(pb(nil).msg(1, asBytes(1))), "dim_value (1)"},
		{shape(pb(nil).msg(1, asVarint(2))), "dim_param (2)"},
		{tensor(pb(nil).fixed32(1, 1)), "dims (1)"},
		{tensor(asBytes(2)), "data_type (2)"},
		{tensor(asBytes(14)), "data_location (14)"},
		{tensor(asVarint(13)), "external_data (13)"},
		{tensor(asVarint(6)), "string_data (6)"},
		{tensor(asVarint(9)), "raw_data (9)"},
	}
	for _, c := range cases {
		_, err := Decode(c.data)
		if err == nil || !strings.Contains(err.Error(), "field "+c.field+": wire type") {
			t.Errorf("%s: %v", c.field, err)
		}
	}
	// Names a graph value must have.
	for _, c := range []struct {
		g    graphB
		want string
	}{
		{graphB{nodes: reluGraph().nodes, inputs: []pb{valueInfo("x", Float, 2), pb(nil)}, outputs: reluGraph().outputs}, "graph: input #1: field name (1): missing"},
		{graphB{nodes: reluGraph().nodes, inputs: reluGraph().inputs, outputs: []pb{pb(nil)}}, "graph: output #0: field name (1): missing"},
	} {
		if _, err := Decode(model(13, c.g.enc())); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}
