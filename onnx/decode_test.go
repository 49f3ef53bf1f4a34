package onnx

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// TestDecodeConvModel decodes the Go-built conv model and checks every
// part of it against what the builder wrote.
func TestDecodeConvModel(t *testing.T) {
	m, err := Decode(convModel())
	if err != nil {
		t.Fatal(err)
	}
	if m.IRVersion != 8 || m.ProducerName != "tlcheck-test" {
		t.Errorf("ir %d producer %q", m.IRVersion, m.ProducerName)
	}
	for _, dom := range []string{"", "ai.onnx"} {
		if v, ok := m.Opset(dom); !ok || v != 13 {
			t.Errorf("Opset(%q) = %d %v", dom, v, ok)
		}
	}
	if _, ok := m.Opset("com.microsoft"); ok {
		t.Error("an opset that is not imported")
	}
	g := m.Graph
	if g.Name != "conv" || len(g.Nodes) != 2 || len(g.Initializers) != 2 || len(g.Inputs) != 1 || len(g.Outputs) != 1 || len(g.ValueInfo) != 1 {
		t.Fatalf("graph %+v", g)
	}
	c := g.Nodes[0]
	if c.Index != 0 || c.Name != "conv1" || c.OpType != "Conv" || !slices.Equal(c.Inputs, []string{"x", "W", "B"}) || !slices.Equal(c.Outputs, []string{"c"}) {
		t.Errorf("conv node %+v", c)
	}
	if a := c.Attr("pads"); a == nil || a.Type != AttrInts || !slices.Equal(a.Ints, []int64{1, 1, 1, 1}) {
		t.Errorf("pads %+v", a)
	}
	if c.Attr("strides") != nil {
		t.Error("an absent attribute")
	}
	if got := c.Where(); got != `node "conv1" (Conv)` {
		t.Errorf("Where %s", got)
	}
	if got := g.Nodes[1].Where(); got != `node #1 (Relu)` {
		t.Errorf("Where %s", got)
	}
	w := g.Initializers[0]
	if w.Name != "W" || w.DataType != Float || !slices.Equal(w.Dims, []int64{3, 2, 3, 3}) || len(w.Float32) != 54 || w.Float64 != nil || w.Int32 != nil || w.Int64 != nil {
		t.Fatalf("W %+v", w)
	}
	for i, v := range w.Float32 {
		if v != float32(i%7)/8 {
			t.Fatalf("W[%d] = %v", i, v)
		}
	}
	b := g.Initializers[1]
	if !slices.Equal(b.Float32, []float32{0.5, -1, 0.25}) {
		t.Errorf("B %v", b.Float32)
	}
	rs, err := b.Rats()
	if err != nil || len(rs) != 3 || !rs[0].Same(spec.NewRat(1, 2)) || !rs[1].Same(spec.NewRat(-1, 1)) || !rs[2].Same(spec.NewRat(1, 4)) {
		t.Errorf("B rats %v %v", rs, err)
	}
	x := g.Inputs[0]
	if x.Name != "x" || x.ElemType != Float || !x.HasShape || !slices.Equal(x.Shape, []Dim{{Param: "N"}, {Value: 2}, {Value: 5}, {Value: 5}}) {
		t.Errorf("x %+v", x)
	}
	if x.Shape[0].Known() || !x.Shape[1].Known() {
		t.Error("Known")
	}
	if vi := g.ValueInfo[0]; !slices.Equal(vi.Shape, []Dim{{Value: 1}, {Value: 3}, {Value: -1}, {Value: 5}}) || vi.Shape[2].Known() || vi.Shape[2].String() != "?" {
		t.Errorf("value info c %+v", vi)
	}
}

// TestTensorEncodings decodes the same values from every encoding protobuf
// and ONNX allow: raw_data, the typed field packed, and unpacked.
func TestTensorEncodings(t *testing.T) {
	f32 := []float32{1.5, -0.125, 3, float32(math.Pi)}
	f64 := []float64{1.5, -0.1, 1e300, math.SmallestNonzeroFloat64}
	i64 := []int64{0, -1, math.MaxInt64, math.MinInt64}
	i32 := []int32{0, -1, math.MaxInt32, math.MinInt32}
	unpackedF32 := tensorDims("t", Float, 2, 2)
	for _, v := range f32 {
		unpackedF32 = unpackedF32.fixed32(4, math.Float32bits(v))
	}
	unpackedF64 := tensorDims("t", Double, 4)
	for _, v := range f64 {
		unpackedF64 = unpackedF64.fixed64(10, math.Float64bits(v))
	}
	unpackedI64 := tensorDims("t", Int64, 4)
	for _, v := range i64 {
		unpackedI64 = unpackedI64.int(7, v)
	}
	// dims unpacked, after the data (protobuf fields come in any order).
	lateDims := pb(nil).str(8, "t").packedFloats(4, f32...).int(2, int64(Float)).int(1, 2).int(1, 2)
	// int32_data split over a packed and an unpacked occurrence.
	var i32packed []int64
	for _, v := range i32[:3] {
		i32packed = append(i32packed, int64(v))
	}
	splitI32 := tensorDims("t", Int32, 4).packedInts(5, i32packed...).int(5, int64(i32[3]))
	rawLE := func(dt DataType, dims []int64, raw ...byte) pb { return tensorDims("t", dt, dims...).bytes(9, raw) }
	rawF64 := make([]byte, 0, 32)
	for _, v := range f64 {
		u := math.Float64bits(v)
		for k := 0; k < 8; k++ {
			rawF64 = append(rawF64, byte(u>>(8*k)))
		}
	}
	cases := []struct {
		name string
		enc  pb
		dt   DataType
		dims []int64
		want any
	}{
		{"float raw", rawFloatTensor("t", []int64{2, 2}, f32...), Float, []int64{2, 2}, f32},
		{"float packed", floatTensor("t", []int64{2, 2}, f32...), Float, []int64{2, 2}, f32},
		{"float unpacked", unpackedF32, Float, []int64{2, 2}, f32},
		{"float dims last, unpacked", lateDims, Float, []int64{2, 2}, f32},
		{"double packed", tensorDims("t", Double, 4).packedDoubles(10, f64...), Double, []int64{4}, f64},
		{"double unpacked", unpackedF64, Double, []int64{4}, f64},
		{"double raw", rawLE(Double, []int64{4}, rawF64...), Double, []int64{4}, f64},
		{"int64 packed", int64Tensor("t", []int64{4}, i64...), Int64, []int64{4}, i64},
		{"int64 unpacked", unpackedI64, Int64, []int64{4}, i64},
		{"int64 raw", rawLE(Int64, []int64{2}, 1, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), Int64, []int64{2}, []int64{1, -2}},
		{"int32 packed+unpacked", splitI32, Int32, []int64{4}, i32},
		{"int32 raw", rawLE(Int32, []int64{2}, 0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0), Int32, []int64{2}, []int32{-1, 7}},
		{"int8 raw", rawLE(Int8, []int64{3}, 0x80, 0x7f, 0xff), Int8, []int64{3}, []int32{-128, 127, -1}},
		{"uint8 raw", rawLE(Uint8, []int64{3}, 0x80, 0x7f, 0xff), Uint8, []int64{3}, []int32{128, 127, 255}},
		{"int16 raw", rawLE(Int16, []int64{2}, 0x00, 0x80, 0x01, 0x00), Int16, []int64{2}, []int32{-32768, 1}},
		{"uint16 raw", rawLE(Uint16, []int64{2}, 0x00, 0x80, 0x01, 0x00), Uint16, []int64{2}, []int32{32768, 1}},
		{"bool raw", rawLE(Bool, []int64{3}, 1, 0, 1), Bool, []int64{3}, []int32{1, 0, 1}},
		{"int8 int32_data", tensorDims("t", Int8, 2).packedInts(5, -128, 127), Int8, []int64{2}, []int32{-128, 127}},
		{"bool int32_data", tensorDims("t", Bool, 2).packedInts(5, 0, 1), Bool, []int64{2}, []int32{0, 1}},
		{"scalar", floatTensor("t", nil, 2.5), Float, []int64{}, []float32{2.5}},
		{"empty", tensorDims("t", Float, 3, 0), Float, []int64{3, 0}, []float32{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tn, err := DecodeTensor(c.enc)
			if err != nil {
				t.Fatal(err)
			}
			if tn.Name != "t" || tn.DataType != c.dt || !slices.Equal(tn.Dims, c.dims) {
				t.Fatalf("%+v", tn)
			}
			var ok bool
			switch w := c.want.(type) {
			case []float32:
				ok = slices.Equal(tn.Float32, w) && tn.Float64 == nil && tn.Int32 == nil && tn.Int64 == nil
			case []float64:
				ok = slices.Equal(tn.Float64, w) && tn.Float32 == nil && tn.Int32 == nil && tn.Int64 == nil
			case []int64:
				ok = slices.Equal(tn.Int64, w) && tn.Float32 == nil && tn.Int32 == nil && tn.Float64 == nil
			case []int32:
				ok = slices.Equal(tn.Int32, w) && tn.Float32 == nil && tn.Float64 == nil && tn.Int64 == nil
			}
			if !ok {
				t.Errorf("%+v, want %v", tn, c.want)
			}
			n, err := tn.NumElements()
			if err != nil || n != tn.Len() {
				t.Errorf("NumElements %d %v, holds %d", n, err, tn.Len())
			}
		})
	}
}

// TestRats: the exact values of float32, float64 and integer elements,
// derived by hand (a float is m·2^e), and the refusal of NaN and ±Inf.
func TestRats(t *testing.T) {
	cases := []struct {
		name string
		t    *Tensor
		want []string
		err  string
	}{
		{"float32", &Tensor{Name: "a", Dims: []int64{3}, DataType: Float, Float32: []float32{0.1, -3, 1 << 30}},
			[]string{"13421773/134217728", "-3", "1073741824"}, ""},
		{"float32 smallest subnormal", &Tensor{Dims: []int64{1}, DataType: Float, Float32: []float32{math.SmallestNonzeroFloat32}},
			[]string{"1/" + pow2(149)}, ""},
		{"float64", &Tensor{Dims: []int64{2}, DataType: Double, Float64: []float64{0.1, -0.5}},
			[]string{"3602879701896397/36028797018963968", "-1/2"}, ""},
		{"int64", &Tensor{Dims: []int64{2}, DataType: Int64, Int64: []int64{math.MinInt64, 7}},
			[]string{"-9223372036854775808", "7"}, ""},
		{"uint8", &Tensor{Dims: []int64{1}, DataType: Uint8, Int32: []int32{255}}, []string{"255"}, ""},
		{"NaN", &Tensor{Name: "w", Dims: []int64{2}, DataType: Float, Float32: []float32{1, float32(math.NaN())}}, nil, `tensor "w": element 1 is NaN`},
		{"+Inf", &Tensor{Dims: []int64{1, 3}, DataType: Double, Float64: []float64{0, 0, math.Inf(1)}}, nil, `tensor: element 2 is +Inf`},
		{"-Inf", &Tensor{Dims: []int64{1}, DataType: Float, Float32: []float32{float32(math.Inf(-1))}}, nil, `element 0 is -Inf`},
		{"short data", &Tensor{Dims: []int64{2}, DataType: Float, Float32: []float32{1}}, nil, `1 elements of data, but dims [2] have 2`},
		{"negative dim", &Tensor{Dims: []int64{-2}, DataType: Float}, nil, `dim 0 is negative`},
		{"float16", &Tensor{Dims: []int64{2}, DataType: Float16, Float32: []float32{1.5, -0x1p-24}}, []string{"3/2", "-1/16777216"}, ""},
		{"float16 NaN", &Tensor{Dims: []int64{1}, DataType: BFloat16, Float32: []float32{float32(math.NaN())}}, nil, `element 0 is NaN`},
		{"uint64", &Tensor{Dims: []int64{2}, DataType: Uint64, Int64: []int64{-1, 3}}, []string{"18446744073709551615", "3"}, ""},
		{"uint32", &Tensor{Dims: []int64{1}, DataType: Uint32, Int64: []int64{math.MaxUint32}}, []string{"4294967295"}, ""},
		{"string", &Tensor{Dims: []int64{1}, DataType: String}, nil, `data type STRING is not supported`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs, err := c.t.Rats()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != len(c.want) {
				t.Fatalf("%v", rs)
			}
			for i, r := range rs {
				w, err := spec.ParseRat(c.want[i])
				if err != nil {
					t.Fatal(err)
				}
				if !r.Same(w) {
					t.Errorf("element %d = %s, want %s", i, r, c.want[i])
				}
			}
		})
	}
}

// pow2 is 2^k in decimal, computed by repeated doubling of a digit string
// (independently of math/big, which Rats uses).
func pow2(k int) string {
	d := []byte{1}
	for ; k > 0; k-- {
		carry := byte(0)
		for i := range d {
			v := d[i]*2 + carry
			d[i], carry = v%10, v/10
		}
		if carry > 0 {
			d = append(d, carry)
		}
	}
	s := make([]byte, len(d))
	for i, v := range d {
		s[len(d)-1-i] = '0' + v
	}
	return string(s)
}

var _ = limits.Quote
