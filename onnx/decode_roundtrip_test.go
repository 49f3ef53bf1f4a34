package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/encoding/protowire"
	"pgregory.net/rapid"
)

// The round-trip properties: a random model or tensor, written field by
// field from onnx.proto with protowire in a random but legal way — fields
// interleaved in any order (repeated fields keep their relative order, as
// protobuf requires), repeated scalars packed, unpacked or split, tensor
// data as raw_data or the typed field, unknown fields of every wire type
// sprinkled in — decodes to exactly what was drawn.

// interleave merges the chunk lists in a random order that keeps the
// order within each list.
func interleave(t *rapid.T, lists ...[]pb) pb {
	var out pb
	for {
		var open []int
		for i, l := range lists {
			if len(l) > 0 {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			return out
		}
		i := open[rapid.IntRange(0, len(open)-1).Draw(t, "next")]
		out = append(out, lists[i][0]...)
		lists[i] = lists[i][1:]
	}
}

// unknown draws unknown fields (numbers 1000+, every wire type).
func unknown(t *rapid.T) []pb {
	var cs []pb
	for i := range rapid.IntRange(0, 2).Draw(t, "unknowns") {
		num := protowire.Number(1000 + i)
		switch rapid.IntRange(0, 4).Draw(t, "unknown type") {
		case 0:
			cs = append(cs, pb(nil).varint(num, rapid.Uint64().Draw(t, "v")))
		case 1:
			cs = append(cs, pb(nil).fixed32(num, rapid.Uint32().Draw(t, "v")))
		case 2:
			cs = append(cs, pb(nil).fixed64(num, rapid.Uint64().Draw(t, "v")))
		case 3:
			cs = append(cs, pb(nil).bytes(num, []byte("unknown")))
		case 4:
			g := protowire.AppendTag(nil, num, protowire.StartGroupType)
			g = pb(g).int(1, 3)
			cs = append(cs, protowire.AppendTag(g, num, protowire.EndGroupType))
		}
	}
	return cs
}

// repeatedVarints encodes vs as occurrences of field num: one packed run,
// unpacked values, or a mix.
func repeatedVarints(t *rapid.T, num protowire.Number, vs []uint64) []pb {
	var cs []pb
	for len(vs) > 0 {
		k := rapid.IntRange(1, len(vs)).Draw(t, "run")
		if rapid.Bool().Draw(t, "packed") {
			var body []byte
			for _, v := range vs[:k] {
				body = protowire.AppendVarint(body, v)
			}
			cs = append(cs, pb(nil).bytes(num, body))
		} else {
			for _, v := range vs[:k] {
				cs = append(cs, pb(nil).varint(num, v))
			}
		}
		vs = vs[k:]
	}
	return cs
}

// repeatedFixed encodes fixed-size values (size 4 or 8) likewise.
func repeatedFixed(t *rapid.T, num protowire.Number, size int, vs []uint64) []pb {
	var cs []pb
	for len(vs) > 0 {
		k := rapid.IntRange(1, len(vs)).Draw(t, "run")
		if rapid.Bool().Draw(t, "packed") {
			var body []byte
			for _, v := range vs[:k] {
				if size == 4 {
					body = protowire.AppendFixed32(body, uint32(v))
				} else {
					body = protowire.AppendFixed64(body, v)
				}
			}
			cs = append(cs, pb(nil).bytes(num, body))
		} else {
			for _, v := range vs[:k] {
				if size == 4 {
					cs = append(cs, pb(nil).fixed32(num, uint32(v)))
				} else {
					cs = append(cs, pb(nil).fixed64(num, v))
				}
			}
		}
		vs = vs[k:]
	}
	return cs
}

// intRanges are the value ranges of the types that widen into Int32.
var intRanges = map[DataType][2]int64{
	Int32: {math.MinInt32, math.MaxInt32}, Int16: {math.MinInt16, math.MaxInt16}, Uint16: {0, math.MaxUint16},
	Int8: {math.MinInt8, math.MaxInt8}, Uint8: {0, math.MaxUint8}, Bool: {0, 1},
}

var roundTripTypes = []DataType{Float, Double, Int64, Int32, Int16, Uint16, Int8, Uint8, Bool}

// drawTensor draws a tensor and one encoding of it.
func drawTensor(t *rapid.T, name string) (*Tensor, pb) {
	dt := rapid.SampledFrom(roundTripTypes).Draw(t, "dtype")
	dims := rapid.SliceOfN(rapid.Int64Range(0, 3), 0, 3).Draw(t, "dims")
	n := 1
	for _, d := range dims {
		n *= int(d)
	}
	want := &Tensor{Name: name, Dims: dims, DataType: dt}
	raw := make([]byte, 0, n*dt.Size())
	var words []uint64 // the typed field's values
	switch dt {
	case Float:
		want.Float32 = make([]float32, n)
		for i := range n {
			u := rapid.Uint32().Draw(t, "f32 bits")
			want.Float32[i] = math.Float32frombits(u)
			raw = binary.LittleEndian.AppendUint32(raw, u)
			words = append(words, uint64(u))
		}
	case Double:
		want.Float64 = make([]float64, n)
		for i := range n {
			u := rapid.Uint64().Draw(t, "f64 bits")
			want.Float64[i] = math.Float64frombits(u)
			raw = binary.LittleEndian.AppendUint64(raw, u)
			words = append(words, u)
		}
	case Int64:
		want.Int64 = make([]int64, n)
		for i := range n {
			v := rapid.Int64().Draw(t, "i64")
			want.Int64[i] = v
			raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
			words = append(words, uint64(v))
		}
	default:
		r := intRanges[dt]
		lo, hi := r[0], r[1]
		want.Int32 = make([]int32, n)
		for i := range n {
			v := rapid.Int64Range(lo, hi).Draw(t, "int")
			want.Int32[i] = int32(v)
			switch dt.Size() {
			case 4:
				raw = binary.LittleEndian.AppendUint32(raw, uint32(v))
			case 2:
				raw = binary.LittleEndian.AppendUint16(raw, uint16(v))
			case 1:
				raw = append(raw, byte(v))
			}
			words = append(words, uint64(v)) // int32 fields are sign-extended varints
		}
	}
	var udims []uint64
	for _, d := range dims {
		udims = append(udims, uint64(d))
	}
	meta := []pb{pb(nil).int(2, int64(dt))}
	if name != "" {
		meta = append(meta, pb(nil).str(8, name))
	}
	var data []pb
	switch {
	case n > 0 && rapid.Bool().Draw(t, "raw"):
		data = []pb{pb(nil).bytes(9, raw)}
	case dt == Float:
		data = repeatedFixed(t, 4, 4, words)
	case dt == Double:
		data = repeatedFixed(t, 10, 8, words)
	case dt == Int64:
		data = repeatedVarints(t, 7, words)
	default:
		data = repeatedVarints(t, 5, words)
	}
	return want, interleave(t, repeatedVarints(t, 1, udims), data, meta, unknown(t))
}

func TestRoundTripTensor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want, enc := drawTensor(t, rapid.SampledFrom([]string{"", "x", "input_0"}).Draw(t, "name"))
		got, err := DecodeTensor(enc)
		if err != nil {
			t.Fatalf("%v\n%x", err, []byte(enc))
		}
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmp.Comparer(sameBits32), cmp.Comparer(sameBits64)); d != "" {
			t.Fatalf("decoded tensor differs (-want +got):\n%s", d)
		}
	})
}

func sameBits32(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
func sameBits64(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// drawAttr draws an attribute of a random decoded type and its encoding.
func drawAttr(t *rapid.T, name string) (*Attribute, pb) {
	a := &Attribute{Name: name}
	val := []pb{}
	f32 := rapid.Float32Range(-1e6, 1e6)
	switch rapid.IntRange(0, 6).Draw(t, "attr kind") {
	case 0:
		a.Type, a.F = AttrFloat, f32.Draw(t, "f")
		val = append(val, pb(nil).fixed32(2, math.Float32bits(a.F)))
	case 1:
		a.Type, a.I = AttrInt, rapid.Int64().Draw(t, "i")
		val = append(val, pb(nil).int(3, a.I))
	case 2:
		a.Type, a.S = AttrString, []byte(rapid.StringN(0, 8, -1).Draw(t, "s"))
		val = append(val, pb(nil).bytes(4, a.S))
	case 3:
		a.Type = AttrFloats
		var words []uint64
		for _, v := range rapid.SliceOfN(f32, 0, 4).Draw(t, "floats") {
			a.Floats = append(a.Floats, v)
			words = append(words, uint64(math.Float32bits(v)))
		}
		val = repeatedFixed(t, 7, 4, words)
	case 4:
		a.Type = AttrInts
		var words []uint64
		for _, v := range rapid.SliceOfN(rapid.Int64(), 0, 4).Draw(t, "ints") {
			a.Ints = append(a.Ints, v)
			words = append(words, uint64(v))
		}
		val = repeatedVarints(t, 8, words)
	case 5:
		a.Type = AttrStrings
		for _, s := range rapid.SliceOfN(rapid.StringN(0, 4, -1), 0, 3).Draw(t, "strings") {
			a.Strings = append(a.Strings, []byte(s))
			val = append(val, pb(nil).str(9, s))
		}
	case 6:
		tn, enc := drawTensor(t, "")
		a.Type, a.T = AttrTensor, tn
		val = append(val, pb(nil).msg(5, enc))
	}
	meta := []pb{pb(nil).str(1, name)}
	if a.Type != AttrTensor || rapid.Bool().Draw(t, "typed") { // IR version 1: the type inferred
		meta = append(meta, pb(nil).int(20, int64(a.Type)))
	}
	return a, interleave(t, meta, val, unknown(t))
}

func TestRoundTripModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := &Model{IRVersion: rapid.Int64Range(3, 10).Draw(t, "ir"), ProducerName: "p", Graph: &Graph{Name: "g"},
			Opsets: []OpsetID{{Domain: "", Version: rapid.Int64Range(1, 22).Draw(t, "opset")}}}
		g := want.Graph
		var gInputs, gInits, gNodes, gOutputs []pb
		var names []string
		for i := range rapid.IntRange(0, 2).Draw(t, "inputs") {
			v := &ValueInfo{Name: fmt.Sprint("x", i), ElemType: Float, HasShape: true, Shape: []Dim{{Param: "N"}, {Value: int64(i + 1)}}}
			g.Inputs = append(g.Inputs, v)
			gInputs = append(gInputs, pb(nil).msg(11, symValueInfo(v.Name, "N", int64(i+1))))
			names = append(names, v.Name)
		}
		for i := range rapid.IntRange(0, 2).Draw(t, "initializers") {
			tn, enc := drawTensor(t, fmt.Sprint("w", i))
			g.Initializers = append(g.Initializers, tn)
			gInits = append(gInits, pb(nil).msg(5, enc))
			names = append(names, tn.Name)
		}
		for i := range rapid.IntRange(0, 3).Draw(t, "nodes") {
			n := &Node{Index: i, Name: rapid.SampledFrom([]string{"", fmt.Sprint("n", i)}).Draw(t, "node name"), OpType: fmt.Sprint("Op", i)}
			var ins, outs, attrs, meta []pb
			for range rapid.IntRange(0, 3).Draw(t, "node inputs") {
				in := ""
				if len(names) > 0 && rapid.IntRange(0, 4).Draw(t, "omitted") > 0 {
					in = rapid.SampledFrom(names).Draw(t, "input")
				}
				n.Inputs = append(n.Inputs, in)
				ins = append(ins, pb(nil).str(1, in))
			}
			for j := range rapid.IntRange(1, 2).Draw(t, "node outputs") {
				out := fmt.Sprintf("v%d_%d", i, j)
				n.Outputs = append(n.Outputs, out)
				outs = append(outs, pb(nil).str(2, out))
			}
			for j := range rapid.IntRange(0, 3).Draw(t, "attrs") {
				a, enc := drawAttr(t, fmt.Sprint("a", j))
				n.Attrs = append(n.Attrs, a)
				attrs = append(attrs, pb(nil).msg(5, enc))
			}
			meta = append(meta, pb(nil).str(4, n.OpType))
			if n.Name != "" {
				meta = append(meta, pb(nil).str(3, n.Name))
			}
			if rapid.Bool().Draw(t, "domain") {
				n.Domain = "ai.onnx"
				meta = append(meta, pb(nil).str(7, n.Domain))
			}
			g.Nodes = append(g.Nodes, n)
			gNodes = append(gNodes, pb(nil).msg(1, interleave(t, ins, outs, attrs, meta, unknown(t))))
			names = append(names, n.Outputs...)
		}
		if len(names) > 0 {
			out := rapid.SampledFrom(names).Draw(t, "output")
			g.Outputs = []*ValueInfo{{Name: out, ElemType: Float, HasShape: true, Shape: []Dim{{Value: -1}}}}
			gOutputs = []pb{pb(nil).msg(12, valueInfo(out, Float, -1))}
		}
		graph := interleave(t, gNodes, gInits, gInputs, gOutputs, []pb{pb(nil).str(2, g.Name)}, unknown(t))
		enc := interleave(t,
			[]pb{pb(nil).int(1, want.IRVersion), pb(nil).str(2, want.ProducerName), pb(nil).msg(7, graph)},
			[]pb{pb(nil).msg(8, pb(nil).int(2, want.Opsets[0].Version))}, unknown(t))
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("%v", err)
		}
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmp.Comparer(sameBits32), cmp.Comparer(sameBits64)); d != "" {
			t.Fatalf("decoded model differs (-want +got):\n%s", d)
		}
	})
}
