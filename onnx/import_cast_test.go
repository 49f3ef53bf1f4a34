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
