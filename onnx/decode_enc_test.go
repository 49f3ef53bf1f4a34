package onnx

// A small protobuf encoder for tests: ONNX messages built in Go with
// protowire.Append*, so that the reader's tests need no file from outside
// the repository. pb values are message bodies; the helpers below append
// one field each and return the extended message.

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

type pb []byte

func (m pb) varint(num protowire.Number, v uint64) pb {
	b := protowire.AppendTag(m, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func (m pb) int(num protowire.Number, v int64) pb { return m.varint(num, uint64(v)) }

func (m pb) bytes(num protowire.Number, v []byte) pb {
	b := protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func (m pb) str(num protowire.Number, s string) pb { return m.bytes(num, []byte(s)) }

func (m pb) msg(num protowire.Number, v pb) pb { return m.bytes(num, v) }

func (m pb) fixed32(num protowire.Number, v uint32) pb {
	b := protowire.AppendTag(m, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

func (m pb) fixed64(num protowire.Number, v uint64) pb {
	b := protowire.AppendTag(m, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// packedInts appends a packed repeated varint field.
func (m pb) packedInts(num protowire.Number, vs ...int64) pb {
	var body []byte
	for _, v := range vs {
		body = protowire.AppendVarint(body, uint64(v))
	}
	return m.bytes(num, body)
}

// packedFloats appends a packed repeated float field.
func (m pb) packedFloats(num protowire.Number, vs ...float32) pb {
	var body []byte
	for _, v := range vs {
		body = protowire.AppendFixed32(body, math.Float32bits(v))
	}
	return m.bytes(num, body)
}

// packedDoubles appends a packed repeated double field.
func (m pb) packedDoubles(num protowire.Number, vs ...float64) pb {
	var body []byte
	for _, v := range vs {
		body = protowire.AppendFixed64(body, math.Float64bits(v))
	}
	return m.bytes(num, body)
}

// TensorProto builders.

// tensorDims starts a TensorProto with a name, dims and data type.
func tensorDims(name string, dt DataType, dims ...int64) pb {
	var m pb
	if len(dims) > 0 {
		m = m.packedInts(1, dims...)
	}
	m = m.int(2, int64(dt))
	if name != "" {
		m = m.str(8, name)
	}
	return m
}

// floatTensor is a FLOAT tensor with float_data.
func floatTensor(name string, dims []int64, vs ...float32) pb {
	return tensorDims(name, Float, dims...).packedFloats(4, vs...)
}

// rawFloatTensor is a FLOAT tensor with raw_data.
func rawFloatTensor(name string, dims []int64, vs ...float32) pb {
	raw := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return tensorDims(name, Float, dims...).bytes(9, raw)
}

// int64Tensor is an INT64 tensor with int64_data.
func int64Tensor(name string, dims []int64, vs ...int64) pb {
	return tensorDims(name, Int64, dims...).packedInts(7, vs...)
}

// ValueInfoProto: name, tensor elem type, shape (a dim < 0 is unknown;
// params name symbolic dims by position).
func valueInfo(name string, dt DataType, dims ...int64) pb {
	var shape pb
	for _, d := range dims {
		var dim pb
		if d >= 0 {
			dim = dim.int(1, d)
		}
		shape = shape.msg(1, dim)
	}
	tt := pb(nil).int(1, int64(dt)).msg(2, shape)
	return pb(nil).str(1, name).msg(2, pb(nil).msg(1, tt))
}

// symValueInfo is a FLOAT value whose first dim is the symbol sym.
func symValueInfo(name, sym string, dims ...int64) pb {
	shape := pb(nil).msg(1, pb(nil).str(2, sym))
	for _, d := range dims {
		shape = shape.msg(1, pb(nil).int(1, d))
	}
	tt := pb(nil).int(1, int64(Float)).msg(2, shape)
	return pb(nil).str(1, name).msg(2, pb(nil).msg(1, tt))
}

// NodeProto.
func node(name, op string, ins, outs []string, attrs ...pb) pb {
	var m pb
	for _, s := range ins {
		m = m.str(1, s)
	}
	for _, s := range outs {
		m = m.str(2, s)
	}
	if name != "" {
		m = m.str(3, name)
	}
	m = m.str(4, op)
	for _, a := range attrs {
		m = m.msg(5, a)
	}
	return m
}

// AttributeProto builders.
func attrInts(name string, vs ...int64) pb {
	return pb(nil).str(1, name).int(20, int64(AttrInts)).packedInts(8, vs...)
}
func attrInt(name string, v int64) pb { return pb(nil).str(1, name).int(20, int64(AttrInt)).int(3, v) }
func attrFloat(name string, v float32) pb {
	return pb(nil).str(1, name).int(20, int64(AttrFloat)).fixed32(2, math.Float32bits(v))
}
func attrString(name, v string) pb {
	return pb(nil).str(1, name).int(20, int64(AttrString)).str(4, v)
}
func attrTensor(name string, t pb) pb {
	return pb(nil).str(1, name).int(20, int64(AttrTensor)).msg(5, t)
}

// graphB collects the parts of a GraphProto.
type graphB struct {
	name                 string
	nodes, inits         []pb
	inputs, outputs, vis []pb
}

func (g graphB) enc() pb {
	var m pb
	for _, n := range g.nodes {
		m = m.msg(1, n)
	}
	if g.name != "" {
		m = m.str(2, g.name)
	}
	for _, t := range g.inits {
		m = m.msg(5, t)
	}
	for _, v := range g.inputs {
		m = m.msg(11, v)
	}
	for _, v := range g.outputs {
		m = m.msg(12, v)
	}
	for _, v := range g.vis {
		m = m.msg(13, v)
	}
	return m
}

// model wraps a graph into a ModelProto (IR version 8, default opset).
func model(opset int64, g pb) pb {
	return pb(nil).int(1, 8).str(2, "tlcheck-test").msg(7, g).msg(8, pb(nil).str(1, "").int(2, opset))
}

// convModel is x[1,2,5,5] → Conv(W[3,2,3,3], B[3], pads 1) → Relu → y: a
// small model exercising initializers (float_data and raw_data), INTS
// attributes, value infos and symbolic dims.
func convModel() pb {
	w := make([]float32, 3*2*3*3)
	for i := range w {
		w[i] = float32(i%7) / 8
	}
	g := graphB{
		name: "conv",
		nodes: []pb{
			node("conv1", "Conv", []string{"x", "W", "B"}, []string{"c"}, attrInts("pads", 1, 1, 1, 1), attrInts("kernel_shape", 3, 3)),
			node("", "Relu", []string{"c"}, []string{"y"}),
		},
		inits:   []pb{rawFloatTensor("W", []int64{3, 2, 3, 3}, w...), floatTensor("B", []int64{3}, 0.5, -1, 0.25)},
		inputs:  []pb{symValueInfo("x", "N", 2, 5, 5)},
		outputs: []pb{valueInfo("y", Float, 1, 3, 5, 5)},
		vis:     []pb{valueInfo("c", Float, 1, 3, -1, 5)},
	}
	return model(13, g.enc())
}
