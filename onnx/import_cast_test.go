package onnx

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// castModel is y = Cast(x, to) with x of type from and y of type to.
func castModel(from, to DataType, n int64) *Model {
	m := newMG(21).inT("x", from, n).op("Cast", ins("x"), ins("y"), aI("to", int64(to)))
	m.g.Outputs = append(m.g.Outputs, vinfo("y", to, n))
	return m.model()
}

// hasTag reports whether the imported graph has a node with tag op.
func hasTag(im *Imported, op irsem.Op) bool {
	for _, nd := range im.Graph.Nodes {
		if nd.Kind.Op == op {
			return true
		}
	}
	return false
}

// TestImportCastNarrow: a narrowing cast of a graph input is the
// registry's rounding primitive, evaluated exactly; the expected values
// are worked by hand from the formats (binary16: 1/3 rounds to 1365/4096,
// 1 + 2^-11 is a tie to the even 1, 2049 a tie to the even 2048, 65519
// rounds down to 65504; bfloat16: 257 is a tie to 256; binary32: the
// double 1/3 rounds to 11184811/2^25).
func TestImportCastNarrow(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to DataType
		op       irsem.Op
		in       []float64
		want     []string
	}{
		{"FLOAT→FLOAT16", Float, Float16, "round_f16", []float64{1.0 / 3, 1 + 0x1p-11, 2049, 65519}, []string{"1365/4096", "1", "2048", "65504"}},
		{"FLOAT→BFLOAT16", Float, BFloat16, "round_bf16", []float64{257, -1.0 / 3}, []string{"256", "-171/512"}},
		{"DOUBLE→FLOAT", Double, Float, "round_f32", []float64{1.0 / 3, 0.5}, []string{"11184811/33554432", "1/2"}},
		{"DOUBLE→FLOAT16", Double, Float16, "round_f16", []float64{1 + 0x1p-11 + 0x1p-40}, []string{"1025/1024"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := &Tensor{Dims: []int64{int64(len(tc.in))}, DataType: tc.from}
			for _, v := range tc.in {
				if tc.from == Float {
					x.Float32 = append(x.Float32, float32(v))
				} else {
					x.Float64 = append(x.Float64, v)
				}
			}
			im, outs := evalRat(t, castModel(tc.from, tc.to, int64(len(tc.in))), Options{}, x)
			if !hasTag(im, tc.op) {
				t.Fatalf("no %s node in the imported graph", tc.op)
			}
			if got, want := ratStrings(outs[0].Data), "["+strings.Join(tc.want, " ")+"]"; got != want {
				t.Errorf("got %s, want %s", got, want)
			}
			if len(im.Computed) != 1 || im.Computed[0] != tc.to {
				t.Errorf("Computed = %v, want [%v]", im.Computed, tc.to)
			}
		})
	}
}

// TestImportCastConstant: a cast of a constant is rounded at import
// (no IR node); an element at the overflow threshold is refused naming it.
func TestImportCastConstant(t *testing.T) {
	m := newMG(21).in("x", 2).init("c", []int64{2}, 1.0/3, 2049).op("Cast", ins("c"), ins("h"), aI("to", int64(Float16))).
		op("Cast", ins("h"), ins("k"), aI("to", int64(Float))).op("Add", ins("x", "k"), ins("y")).out("y").model()
	im, outs := evalRat(t, m, Options{}, floatsTensor([]int64{2}, 0, 0))
	if hasTag(im, "round_f16") {
		t.Error("the constant's cast left an IR node")
	}
	if got := ratStrings(outs[0].Data); got != "[1365/4096 2048]" {
		t.Errorf("got %s, want 1365/4096 2048", got)
	}
	bad := newMG(21).in("x", 1).init("c", []int64{2}, 1, 70000).op("Cast", ins("c"), ins("y"), aI("to", int64(Float16))).out("y").model()
	_, err := Import(bad, Options{})
	if err == nil || !strings.Contains(err.Error(), "element 1") || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("overflowing constant: %v, want a refusal naming element 1", err)
	}
}

// TestImportCastLikeNarrow: CastLike to a FLOAT16 tensor's type is the
// same rounding, a non-smooth primitive whose derivative convention the
// registry states.
func TestImportCastLikeNarrow(t *testing.T) {
	m := newMG(21).in("x", 2).inT("t", Float16, 1).op("CastLike", ins("x", "t"), ins("y"))
	m.g.Outputs = append(m.g.Outputs, vinfo("y", Float16, 2))
	im, err := Import(m.model(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasTag(im, "round_f16") {
		t.Fatal("no round_f16 node")
	}
	info, err := spec.Info("round_f16")
	if err != nil || info.Ties == "" || info.Smooth {
		t.Errorf("round_f16's registry entry: %+v, want a non-smooth op with its derivative convention", info)
	}
}

// TestImportCastToInt: y = Cast(x·3/2, to) for each integer type: a
// trunc_int node with the type's range, evaluated exactly; the expected
// values are derived here from Go's own float-to-int conversion (which
// truncates) of the exact products (all exactly representable). A
// product past the type's range is a one-line error naming the node; a
// planted floor (−3/2·3 → −5 instead of −4) would differ at the negative
// element. The integer is readable by a Cast back to FLOAT and refused,
// naming the consumer, by any other op (a narrowing integer cast, which ONNX wraps, included).
func TestImportCastToInt(t *testing.T) {
	in := []float32{2.5, -3, 0.25, -0.5, 84}
	for _, to := range []DataType{Int8, Int16, Int32, Int64, Uint8, Uint16} {
		t.Run(to.String(), func(t *testing.T) {
			xs := in
			if to == Uint8 || to == Uint16 {
				xs = []float32{2.5, 0.25, -0.5, 84, 1} // −0.75 truncates to 0
			}
			m := newMG(21).in("x", int64(len(xs))).init("c", []int64{1}, 1.5).op("Mul", ins("x", "c"), ins("p")).
				op("Cast", ins("p"), ins("y"), aI("to", int64(to)))
			m.g.Outputs = append(m.g.Outputs, vinfo("y", to, int64(len(xs))))
			im, outs := evalRat(t, m.model(), Options{}, floatsTensor([]int64{int64(len(xs))}, xs...))
			if !hasTag(im, "trunc_int") {
				t.Fatal("no trunc_int node")
			}
			var want []string
			for _, x := range xs {
				want = append(want, spec.NewRat(int64(float64(x)*1.5), 1).String())
			}
			if got := ratStrings(outs[0].Data); got != "["+strings.Join(want, " ")+"]" {
				t.Errorf("got %s, want %v", got, want)
			}
			if len(im.Outputs) != 1 || im.Outputs[0].DataType != to {
				t.Errorf("outputs %+v, want one %v output", im.Outputs, to)
			}
		})
	}
	// Out of INT8's range: 84·3/2 = 126 holds, 90·3/2 = 135 does not.
	m := newMG(21).in("x", 2).init("c", []int64{1}, 1.5).op("Mul", ins("x", "c"), ins("p")).
		op("Cast", ins("p"), ins("y"), aI("to", int64(Int8)))
	m.g.Outputs = append(m.g.Outputs, vinfo("y", Int8, 2))
	im, err := Import(m.model(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := im.PackInputs([]*Tensor{floatsTensor([]int64{2}, 84, 90)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := irsem.Denote(im.Graph, im.Payload, x); err == nil || !strings.Contains(err.Error(), "trunc_int") || strings.Contains(err.Error(), "\n") {
		t.Errorf("135 cast to INT8: %v, want one line naming trunc_int", err)
	}
	// Back to FLOAT, then used: round_f32 of the integer.
	back := newMG(21).in("x", 2).op("Cast", ins("x"), ins("i"), aI("to", int64(Int32))).
		op("Cast", ins("i"), ins("f"), aI("to", int64(Float))).op("Add", ins("f", "x"), ins("y")).out("y").model()
	_, outs := evalRat(t, back, Options{}, floatsTensor([]int64{2}, 2.75, -1.5))
	if got := ratStrings(outs[0].Data); got != "[19/4 -5/2]" {
		t.Errorf("x + float(int(x)) = %s, want [19/4 -5/2]", got)
	}
	// Any other consumer, and a computed BOOL cast, are refused naming them.
	for name, mg := range map[string]*mg{
		"Add of the integer": newMG(21).in("x", 2).op("Cast", ins("x"), ins("i"), aI("to", int64(Int32))).op("Add", ins("i", "i"), ins("y")),
		"BOOL":               newMG(21).in("x", 2).op("Relu", ins("x"), ins("r")).op("Cast", ins("r"), ins("y"), aI("to", int64(Bool))),
		"INT64 to INT8":      newMG(21).in("x", 2).op("Cast", ins("x"), ins("i"), aI("to", int64(Int64))).op("Cast", ins("i"), ins("y"), aI("to", int64(Int8))),
	} {
		mg.g.Outputs = append(mg.g.Outputs, vinfo("y", Int32, 2))
		_, err := Import(mg.model(), Options{})
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), `node "y"`) {
			t.Errorf("%s: %v, want a one-line refusal naming node y", name, err)
		}
	}
}
