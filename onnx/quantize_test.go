package onnx

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// qt is a quantization test tensor of any element type: integers in
// Int32 (the decoder's field for the 8/16/32-bit and sub-byte types),
// float 8/float 4 and float values in Float32.
func qt(name string, dt DataType, dims []int64, vs ...float64) *Tensor {
	t := &Tensor{Name: name, Dims: dims, DataType: dt}
	for _, v := range vs {
		if dt.IsFloat() || dt.IsMini() {
			t.Float32 = append(t.Float32, float32(v))
		} else {
			t.Int32 = append(t.Int32, int32(v))
		}
	}
	return t
}

// TestQuantizeDequantize: QuantizeLinear and DequantizeLinear of constants
// and recorded inputs, every output type, per tensor, per axis and
// blocked, saturate on and off, ties to even, zero points at the type's
// extremes, NaN and ±∞. Every expected value is worked by hand from the
// operator text (quantize.go's package comment); the working is in each
// row's comment. x is a recorded graph input (Options.Values, so NaN and
// ±∞ may occur); the scale and zero point are initializers.
func TestQuantizeDequantize(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	U := math.NaN() // marks an undefined element in want
	type row struct {
		name   string
		op     string
		opset  int64
		x      *Tensor
		scale  *Tensor
		zp     *Tensor
		attrs  []*Attribute
		wantDT DataType
		want   []float64 // ints as floats; U = undefined
		wantU  []int     // undefined elements
	}
	rows := []row{
		// x/2 = 0, 1, 1.5, 500, −127, −500, 0.5, 2.5 → RNE 0, 1, 2, 500,
		// −127, −500, 0, 2; +128, clamped to [0, 255].
		{"uint8 per tensor, ties to even", "QuantizeLinear", 10, qt("x", Float, []int64{8}, 0, 2, 3, 1000, -254, -1000, 1, 5),
			qt("s", Float, nil, 2), qt("z", Uint8, nil, 128), nil, Uint8, []float64{128, 129, 130, 255, 1, 0, 128, 130}, nil},
		// zp = −128: −1−128 → −128 (clamp), 0 → −128, 2 → −126, 300 → 127.
		{"int8 zero point −128", "QuantizeLinear", 13, qt("x", Float, []int64{4}, -1, 0, 2, 300),
			qt("s", Float, nil, 1), qt("z", Int8, nil, -128), nil, Int8, []float64{-128, -128, -126, 127}, nil},
		// zp = 255: −3 → 252, 0 → 255, 1 → 255 (clamp); ±∞ saturate; NaN undefined.
		{"uint8 zero point 255, ±∞, NaN", "QuantizeLinear", 13, qt("x", Float, []int64{6}, -3, 0, 1, inf, -inf, nan),
			qt("s", Float, nil, 1), qt("z", Uint8, nil, 255), nil, Uint8, []float64{252, 255, 255, 255, 0, U}, []int{5}},
		// a zero scale (x/±0 depends on the zero's sign): undefined.
		{"zero scale", "QuantizeLinear", 13, qt("x", Float, []int64{2}, 1, 2),
			qt("s", Float, []int64{2}, 0, 1), qt("z", Uint8, []int64{2}, 0, 0), []*Attribute{aI("axis", 0)}, Uint8, []float64{U, 2}, []int{0}},
		// no zero point: UINT8; −0.5 → −0 → 0, 255.5 → 256 → 255.
		{"default uint8", "QuantizeLinear", 10, qt("x", Float, []int64{3}, -0.5, 255.5, 254.5),
			qt("s", Float, nil, 1), nil, nil, Uint8, []float64{0, 255, 254}, nil},
		// per axis 0, INT4: row 0 /1 − 8 = −7, −6, −5; row 1 /4 = 1, −1.5 → −2, 25; +7 = 8 → 7, 5, 32 → 7.
		{"int4 per axis, zp −8 and 7", "QuantizeLinear", 21, qt("x", Float, []int64{2, 3}, 1, 2, 3, 4, -6, 100),
			qt("s", Float, []int64{2}, 1, 4), qt("z", Int4, []int64{2}, -8, 7), []*Attribute{aI("axis", 0)}, Int4, []float64{-7, -6, -5, 7, 5, 7}, nil},
		// INT2 by output_dtype: 0.5 → 0, 1.5 → 2 → 1, −3 → −2, −2.5 → −2.
		{"int2 output_dtype", "QuantizeLinear", 25, qt("x", Float, []int64{4}, 0.5, 1.5, -3, -2.5),
			qt("s", Float, nil, 1), nil, []*Attribute{aI("output_dtype", int64(Int2))}, Int2, []float64{0, 1, -2, -2}, nil},
		// UINT2, zp 3: 2.5 → 2 + 3 → 3, −3.5 → −4 + 3 → 0, −1 + 3 → 2.
		{"uint2 zp 3", "QuantizeLinear", 25, qt("x", Float, []int64{3}, 2.5, -3.5, -1),
			qt("s", Float, nil, 1), qt("z", Uint2, nil, 3), nil, Uint2, []float64{3, 0, 2}, nil},
		// UINT4: 15.5 → 16 → 15, 14.5 → 14.
		{"uint4", "QuantizeLinear", 21, qt("x", Float, []int64{2}, 31, 29),
			qt("s", Float, nil, 2), qt("z", Uint4, nil, 0), nil, Uint4, []float64{15, 14}, nil},
		// blocked, axis 1, block 2, INT16: row 0 /1 +0 = 1, 2; /2 −32768 = 1.5 → 2, 2 → −32766, −32766;
		// row 1 /4 +32767 = 2, 3 → 32767 (clamp); /8 +0 = 2, 5.
		{"int16 blocked, zp extremes", "QuantizeLinear", 21, qt("x", Float, []int64{2, 4}, 1, 2, 3, 4, 8, 12, 16, 40),
			qt("s", Float, []int64{2, 2}, 1, 2, 4, 8), qt("z", Int16, []int64{2, 2}, 0, -32768, 32767, 0),
			[]*Attribute{aI("axis", 1), aI("block_size", 2)}, Int16, []float64{1, 2, -32766, -32766, 32767, 32767, 2, 5}, nil},
		// blocked with a short last block: extent 5, block 2 → 3 scales 1, 10, 100:
		// 10, 20 | 30/10, 40/10 | 500/100 → 10, 20, 3, 4, 5.
		{"uint16 blocked, short last block", "QuantizeLinear", 21, qt("x", Float, []int64{5}, 10, 20, 30, 40, 500),
			qt("s", Float, []int64{3}, 1, 10, 100), qt("z", Uint16, []int64{3}, 0, 0, 65535),
			[]*Attribute{aI("axis", 0), aI("block_size", 2)}, Uint16, []float64{10, 20, 3, 4, 65535}, nil},
		// precision FLOAT16: fl16(2049) = 2048 (tie to even); without it 2049.
		{"precision float16", "QuantizeLinear", 23, qt("x", Float, []int64{2}, 2049, 2051),
			qt("s", Float, nil, 1), qt("z", Int16, nil, 0), []*Attribute{aI("precision", int64(Float16))}, Int16, []float64{2048, 2052}, nil},
		{"precision default float", "QuantizeLinear", 23, qt("x", Float, []int64{2}, 2049, 2051),
			qt("s", Float, nil, 1), qt("z", Int16, nil, 0), nil, Int16, []float64{2049, 2051}, nil},
		// FLOAT16 scale, FLOAT x: the text divides in FLOAT16 (2049 → 2048), the
		// reference in FLOAT (2049): undefined; 2048 agrees.
		{"float16 scale: text and reference differ", "QuantizeLinear", 23, qt("x", Float, []int64{2}, 2049, 2048),
			qt("s", Float16, nil, 1), qt("z", Int16, nil, 0), nil, Int16, []float64{U, 2048}, []int{0}},
		// E4M3FN, x/2: 0.3125 (0x2A); 5e4 and +∞ → 448 (saturate), −5e4 → −448; NaN → NaN;
		// 0.3 /2 = 0.15 → between 0.140625 and 0.15625 (step 2^-6 in [0.125, 0.25)): 0.15 − 0.140625 = 0.009375 > 0.0078125 → 0.15625.
		{"E4M3FN saturate", "QuantizeLinear", 19, qt("x", Float, []int64{6}, 0.625, 1e5, -1e5, nan, inf, 0.30000001192092896),
			qt("s", Float, nil, 2), qt("z", Float8E4M3FN, nil, 0), nil, Float8E4M3FN, []float64{0.3125, 448, -448, nan, 448, 0.15625}, nil},
		// saturate = 0: out of range and ±∞ → NaN (E4M3FN has no ∞).
		{"E4M3FN no saturate", "QuantizeLinear", 19, qt("x", Float, []int64{3}, 0.625, 1e5, -inf),
			qt("s", Float, nil, 2), qt("z", Float8E4M3FN, nil, 0), []*Attribute{aI("saturate", 0)}, Float8E4M3FN, []float64{0.3125, nan, nan}, nil},
		// E5M2: 1e6/2 = 5e5 → 57344 (saturate) / +∞ (no saturate).
		{"E5M2 saturate", "QuantizeLinear", 19, qt("x", Float, []int64{2}, 1e6, -inf),
			qt("s", Float, nil, 2), qt("z", Float8E5M2, nil, 0), nil, Float8E5M2, []float64{57344, -57344}, nil},
		{"E5M2 no saturate", "QuantizeLinear", 19, qt("x", Float, []int64{2}, 1e6, -inf),
			qt("s", Float, nil, 2), qt("z", Float8E5M2, nil, 0), []*Attribute{aI("saturate", 0)}, Float8E5M2, []float64{inf, -inf}, nil},
		// FNUZ: max 240 (E4M3FNUZ), 57344 (E5M2FNUZ); no saturate → NaN.
		{"E4M3FNUZ", "QuantizeLinear", 19, qt("x", Float, []int64{2}, 1000, 3),
			qt("s", Float, nil, 1), qt("z", Float8E4M3FNUZ, nil, 0), nil, Float8E4M3FNUZ, []float64{240, 3}, nil},
		{"E5M2FNUZ no saturate", "QuantizeLinear", 19, qt("x", Float, []int64{2}, 1e6, 3),
			qt("s", Float, nil, 1), qt("z", Float8E5M2FNUZ, nil, 0), []*Attribute{aI("saturate", 0)}, Float8E5M2FNUZ, []float64{nan, 3}, nil},
		// FLOAT4E2M1 (values 0, 0.5, 1, 1.5, 2, 3, 4, 6), x/2: 1.25 → 1 (tie, even
		// mantissa), 2.4 → 2, 4.3 → 4, −15 → −6, 4.5 → 4 (tie), +∞ → 6, NaN undefined.
		{"FLOAT4E2M1 saturating", "QuantizeLinear", 23, qt("x", Float, []int64{7}, 2.5, 4.8, 8.6, -30, 9, inf, nan),
			qt("s", Float, nil, 2), qt("z", Float4E2M1, nil, 0), nil, Float4E2M1, []float64{1, 2, 4, -6, 4, 6, U}, []int{6}},

		// Dequantize: (x − zp)·s.
		{"DQ uint8", "DequantizeLinear", 10, qt("x", Uint8, []int64{4}, 0, 3, 128, 255),
			qt("s", Float, nil, 2), qt("z", Uint8, nil, 128), nil, Float, []float64{-256, -250, 0, 254}, nil},
		// per axis 1: column 0 (x+128)·0.5, column 1 (x−127)·2.
		{"DQ int8 per axis", "DequantizeLinear", 13, qt("x", Int8, []int64{2, 2}, -128, 127, 0, -128),
			qt("s", Float, []int64{2}, 0.5, 2), qt("z", Int8, []int64{2}, -128, 127), nil, Float, []float64{0, 0, 64, -510}, nil},
		// INT32, scale 3: P = 50331651, fl32 → 50331652; the reference's fl32(x)·3 = 50331648: undefined. 3·3 = 9.
		{"DQ int32 beyond 2^24", "DequantizeLinear", 13, qt("x", Int32, []int64{2}, 16777217, 3),
			qt("s", Float, nil, 3), nil, nil, Float, []float64{U, 9}, []int{0}},
		// INT4 → FLOAT16: (7+8)·0.5 = 7.5, 0.
		{"DQ int4 float16", "DequantizeLinear", 21, qt("x", Int4, []int64{2}, 7, -8),
			qt("s", Float16, nil, 0.5), qt("z", Int4, nil, -8), nil, Float16, []float64{7.5, 0}, nil},
		// UINT16 → FLOAT16: 65535 overflows (+∞ in every reading); 2049·3 = 6147 → 6148,
		// but fl16(2049)·3 = 6144: undefined; 2049·1 → 2048 in every reading.
		{"DQ uint16 float16", "DequantizeLinear", 21, qt("x", Uint16, []int64{3}, 65535, 2049, 2049),
			qt("s", Float16, []int64{3}, 1, 3, 1), nil, []*Attribute{aI("axis", 0)}, Float16, []float64{inf, U, 2048}, []int{1}},
		// E4M3FN x: 0.3125·2, 448·2, NaN, −0·2.
		{"DQ E4M3FN", "DequantizeLinear", 19, qt("x", Float8E4M3FN, []int64{4}, 0.3125, 448, nan, 0),
			qt("s", Float, nil, 2), qt("z", Float8E4M3FN, nil, 0), nil, Float, []float64{0.625, 896, nan, 0}, nil},
		// E5M2 x: ∞·2 = ∞, ∞·0 = NaN.
		{"DQ E5M2 infinities", "DequantizeLinear", 19, qt("x", Float8E5M2, []int64{2}, inf, inf),
			qt("s", Float, []int64{2}, 2, 0), nil, []*Attribute{aI("axis", 0)}, Float, []float64{inf, nan}, nil},
		// FLOAT4E2M1 → FLOAT16 by output_dtype.
		{"DQ FLOAT4E2M1 output_dtype", "DequantizeLinear", 23, qt("x", Float4E2M1, []int64{2}, 6, -0.5),
			qt("s", Float, nil, 2), nil, []*Attribute{aI("output_dtype", int64(Float16))}, Float16, []float64{12, -1}, nil},
		// blocked: block 3 over extent 4 → scales 1, 10.
		{"DQ UINT2 blocked", "DequantizeLinear", 21, qt("x", Uint2, []int64{4}, 1, 2, 3, 3),
			qt("s", Float, []int64{2}, 1, 10), qt("z", Uint2, []int64{2}, 0, 3), []*Attribute{aI("axis", 0), aI("block_size", 3)}, Float, []float64{1, 2, 3, 0}, nil},
		{"DQ INT2", "DequantizeLinear", 25, qt("x", Int2, []int64{4}, -2, -1, 0, 1),
			qt("s", Float, nil, 0.25), qt("z", Int2, nil, 1), nil, Float, []float64{-0.75, -0.5, -0.25, 0}, nil},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			g := newMG(r.opset)
			inputs := []string{"x", "s"}
			o := Options{}
			if r.x.DataType == Float {
				g.inT("x", Float, r.x.Dims...)
				o.Values = map[string]*Tensor{"x": r.x}
			} else {
				g.g.Initializers = append(g.g.Initializers, r.x)
			}
			g.g.Initializers = append(g.g.Initializers, r.scale)
			if r.zp != nil {
				r.zp.Name = "z"
				g.g.Initializers = append(g.g.Initializers, r.zp)
				inputs = append(inputs, "z")
			}
			g.op(r.op, inputs, []string{"y"}, r.attrs...)
			g.g.Outputs = append(g.g.Outputs, &ValueInfo{Name: "y", ElemType: r.wantDT})
			im, err := Import(g.model(), o)
			if err != nil {
				t.Fatal(err)
			}
			if len(im.Exact) != 1 {
				t.Fatalf("%d exact outputs, want 1", len(im.Exact))
			}
			e := im.Exact[0]
			if e.DataType != r.wantDT {
				t.Errorf("type %s, want %s", e.DataType, r.wantDT)
			}
			var undef []int
			for i, u := range e.Undefined {
				if u {
					undef = append(undef, i)
				}
			}
			if !slices.Equal(undef, r.wantU) {
				t.Errorf("undefined %v, want %v", undef, r.wantU)
			}
			for i, want := range r.want {
				if slices.Contains(r.wantU, i) {
					continue
				}
				var got float64
				if e.Values != nil {
					got = float64(e.Values[i])
				} else {
					got = e.Floats[i]
				}
				if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
					t.Errorf("element %d = %v, want %v", i, got, want)
				}
			}
		})
	}
}

// TestQuantizeRefusals: malformed or unmodelled Q/DQ nodes are refused
// with one line naming the node and the field, never a panic.
func TestQuantizeRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		g    *mg
		want string
	}{
		{"Q of a computed value, per axis", newMG(13).in("x", 2).op("Relu", ins("x"), []string{"r"}).init("s", []int64{2}, 1, 2).
			op("QuantizeLinear", ins("r", "s"), []string{"y"}, aI("axis", 0)), "per-tensor scale and zero point only"},
		{"Q of a computed value, negative scale", newMG(13).in("x", 2).op("Relu", ins("x"), []string{"r"}).init("s", nil, -1).
			op("QuantizeLinear", ins("r", "s"), []string{"y"}), "a finite scale > 0 only"},
		{"Floor of a computed value", newMG(13).in("x", 2).op("Relu", ins("x"), []string{"r"}).init("s", nil, 1).
			op("Floor", ins("r"), []string{"f"}).op("QuantizeLinear", ins("f", "s"), []string{"y"}), "Floor of it is data-dependent"},
		{"per-axis extent", newMG(13).in("x", 2, 3).init("s", []int64{2}, 1, 2).
			op("QuantizeLinear", ins("x", "s"), []string{"y"}, aI("axis", 1)), "per-axis quantization needs a 1-D scale of extent 3"},
		{"blocked extent", newMG(21).in("x", 5).init("s", []int64{2}, 1, 2).
			op("QuantizeLinear", ins("x", "s"), []string{"y"}, aI("axis", 0), aI("block_size", 2)), "needs extent 3"},
		{"axis out of range", newMG(13).in("x", 2).init("s", []int64{2}, 1, 2).
			op("QuantizeLinear", ins("x", "s"), []string{"y"}, aI("axis", 3)), "outside"},
		{"opset 10 per axis", newMG(10).in("x", 2).init("s", []int64{2}, 1, 2).
			op("QuantizeLinear", ins("x", "s"), []string{"y"}), "takes a scalar scale only"},
		// A computed scale (qdyn37): s = ReduceMax(x)/3 rounds.
		// Blocked with a computed scale is modelled (quant38) when the
		// scale has x's rank and ⌈x[axis]/B⌉ on the axis; a scalar is not.
		{"computed scale, blocked, scalar scale", newMG(21).in("x", 4).init("c", nil, 3).op("ReduceMax", ins("x"), []string{"m"}, aI("keepdims", 0)).
			op("Div", ins("m", "c"), []string{"s"}).op("QuantizeLinear", ins("x", "s"), []string{"y"}, aI("block_size", 2), aI("axis", 0)), "a blocked scale has x's rank 1"},
		{"computed scale, INT32 output", newMG(21).in("x", 4).init("c", nil, 3).op("ReduceMax", ins("x"), []string{"m"}, aI("keepdims", 0)).
			op("Div", ins("m", "c"), []string{"s"}).op("QuantizeLinear", ins("x", "s"), []string{"y"}, aI("output_dtype", int64(Int32))), "at most 16 bits"},
		{"computed scale, per-axis extent", newMG(13).in("x", 2, 3).init("c", nil, 3).op("ReduceMax", ins("x"), []string{"m"}, aI("keepdims", 0), aIs("axes", 1)).
			op("Div", ins("m", "c"), []string{"s"}).op("QuantizeLinear", ins("x", "s"), []string{"y"}, aI("axis", 1)), "per tensor or per axis"},
		{"Neg of a moved computed integer", newMG(13).in("x", 4).init("c", nil, 3).op("ReduceMax", ins("x"), []string{"m"}, aI("keepdims", 0)).
			op("Div", ins("m", "c"), []string{"s"}).op("QuantizeLinear", ins("x", "s"), []string{"q"}).
			op("Transpose", ins("q"), []string{"t"}).op("Neg", ins("t"), []string{"y"}), "(Neg)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.g.g.Outputs = append(c.g.g.Outputs, &ValueInfo{Name: "y", ElemType: Uint8})
			ds := vdims(c.g.g.Inputs[0])
			n := int64(1)
			for _, d := range ds {
				n *= d
			}
			o := Options{Values: map[string]*Tensor{"x": qt("x", Float, ds, []float64{1, 2, 3, 4, 5, 6}[:n]...)}}
			_, err := Import(c.g.model(), o)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want one line with %q", err, c.want)
			}
		})
	}
	// A non-zero float 8 zero point (the text and the reference disagree).
	g := newMG(19).in("x", 1).init("s", nil, 1)
	g.g.Initializers = append(g.g.Initializers, qt("z", Float8E4M3FN, nil, 1))
	g.op("QuantizeLinear", ins("x", "s", "z"), []string{"y"}).g.Outputs = []*ValueInfo{{Name: "y", ElemType: Float8E4M3FN}}
	if _, err := Import(g.model(), Options{Values: map[string]*Tensor{"x": qt("x", Float, []int64{1}, 1)}}); err == nil || !strings.Contains(err.Error(), "non-zero") {
		t.Errorf("non-zero float 8 zero point: %v", err)
	}
}

// vdims is a ValueInfo's extents.
func vdims(v *ValueInfo) []int64 {
	var ds []int64
	for _, d := range v.Shape {
		ds = append(ds, d.Value)
	}
	return ds
}

// TestDynamicQuantizeLinear: the three outputs on recorded inputs whose
// scale is exact (maximum(0, max x) − minimum(0, min x) = 255·2^k), worked
// by hand from the text: range 255 → scale 1, zp 0, y = round(x) (ties to
// even); range 255 around 0 → scale 1, zp = round(127.5) = 128, y =
// round(x) + 128 clamped; min x > 0 → zp 0, range 510 → scale 2. An x of
// zeros (the text divides by 0, the reference takes 1/255) and an x
// holding NaN are refused with one line.
func TestDynamicQuantizeLinear(t *testing.T) {
	for _, c := range []struct {
		name  string
		x     []float64
		y     []int64
		scale float64
		zp    int64
		err   string
	}{
		{"scale 1", []float64{0, 1.5, 2.5, 255, 100.5}, []int64{0, 2, 2, 255, 100}, 1, 0, ""},
		{"zero point 128", []float64{-127.5, 127.5, 0.5, -0.5}, []int64{0, 255, 128, 128}, 1, 128, ""},
		{"min above 0", []float64{510, 255, 253}, []int64{255, 128, 126}, 2, 0, ""},
		{"all zero", []float64{0, 0}, nil, 0, 0, "every element is 0"},
		{"NaN", []float64{1, math.NaN()}, nil, 0, 0, "element 1 is not a finite number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := int64(len(c.x))
			g := newMG(11).in("x", n).op("DynamicQuantizeLinear", ins("x"), []string{"y", "s", "z"})
			g.g.Outputs = []*ValueInfo{{Name: "y", ElemType: Uint8}, {Name: "s", ElemType: Float}, {Name: "z", ElemType: Uint8}}
			im, err := Import(g.model(), Options{Values: map[string]*Tensor{"x": qt("x", Float, []int64{n}, c.x...)}})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(im.Exact) != 3 {
				t.Fatalf("%d exact outputs", len(im.Exact))
			}
			if !slices.Equal(im.Exact[0].Values, c.y) {
				t.Errorf("y = %v, want %v", im.Exact[0].Values, c.y)
			}
			if len(im.Exact[1].Floats) != 1 || im.Exact[1].Floats[0] != c.scale {
				t.Errorf("y_scale = %v, want %v", im.Exact[1].Floats, c.scale)
			}
			if !slices.Equal(im.Exact[2].Values, []int64{c.zp}) {
				t.Errorf("y_zero_point = %v, want %d", im.Exact[2].Values, c.zp)
			}
		})
	}
}
