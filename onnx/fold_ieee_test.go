package onnx

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
)

// scaleModel is the Attention decompositions' scale chain on a FLOAT
// constant d, Sqrt(Div(1, Sqrt(d))), read by tail (which names the chain's
// result "s" and the graph output "y").
func scaleModel(d float32, tail func(*mg) *mg, outType DataType) *Model {
	m := newMG(23).op("Constant", nil, ins("d"), aT("value", ftensor("", dims(1), d))).
		op("Constant", nil, ins("one"), aT("value", ftensor("", dims(1), 1))).
		op("Sqrt", ins("d"), ins("q")).op("Identity", ins("q"), ins("qi")).op("Div", ins("one", "qi"), ins("r")).op("Sqrt", ins("r"), ins("s"))
	m = tail(m)
	m.g.Outputs = append(m.g.Outputs, &ValueInfo{Name: "y", ElemType: outType})
	return m.model()
}

// TestFoldIEEECast: the scale chain cast to FLOAT16 folds to the binary16
// value of √(1/√d) — derived here by rounding the real value to 11
// significand bits by hand (x·2^11 to the nearest integer, ties to even,
// for x in [1/2, 1)), not with the code under test — and the graph then
// computes FLOAT16 alone (one format, one bound). Read as FLOAT data the
// chain stays IR (its sqrt nodes, a FLOAT computation): the fold never
// stands in for an exact value. Not folded either: an initializer operand,
// FLOAT16 arithmetic.
func TestFoldIEEECast(t *testing.T) {
	for _, d := range []float32{5, 8, 64, 100} {
		m := scaleModel(d, func(m *mg) *mg {
			return m.inT("x", Float16, 2).op("Cast", ins("s"), ins("h"), aI("to", int64(Float16))).op("Mul", ins("x", "h"), ins("y"))
		}, Float16)
		im, err := Import(m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(im.Computed) != 1 || im.Computed[0] != Float16 || hasTag(im, irsem.OpSqrt) {
			t.Errorf("d=%v: Computed = %v, sqrt node %v; want [FLOAT16] and the chain folded", d, im.Computed, hasTag(im, irsem.OpSqrt))
		}
		x := math.Sqrt(1 / math.Sqrt(float64(d)))
		want := math.RoundToEven(x*2048) / 2048
		if x < 0.5 {
			want = math.RoundToEven(x*4096) / 4096
		}
		found := false
		for _, nd := range im.Graph.Nodes {
			if p := im.Payload.Entries[nd.ID]; nd.Kind.Op == irsem.OpConst && p != nil && p.Value != nil && len(p.Value.Data) == 1 {
				got, _ := p.Value.Data[0].Big().Float64()
				found = found || got == want
			}
		}
		if !found {
			t.Errorf("d=%v: no constant %v (√(1/√d) = %v in binary16)", d, want, x)
		}
	}
	for _, tc := range []struct {
		name string
		m    *Model
	}{
		{"read as FLOAT data", scaleModel(5, func(m *mg) *mg { return m.in("x", 1).op("Add", ins("x", "s"), ins("y")) }, Float)},
		{"initializer operand", newMG(23).in("x", 1).init("w", dims(1), 5).op("Sqrt", ins("w"), ins("s")).op("Add", ins("x", "s"), ins("y")).out("y").model()},
		{"FLOAT16 arithmetic", func() *Model {
			m := newMG(23).inT("x", Float16, 1).op("Constant", nil, ins("d"), aT("value", &Tensor{Dims: dims(1), DataType: Float16, Float32: []float32{5}})).
				op("Sqrt", ins("d"), ins("s")).op("Mul", ins("x", "s"), ins("y"))
			m.g.Outputs = append(m.g.Outputs, &ValueInfo{Name: "y", ElemType: Float16})
			return m.model()
		}()},
	} {
		im, err := Import(tc.m, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !hasTag(im, irsem.OpSqrt) {
			t.Errorf("%s: no sqrt node: folded", tc.name)
		}
	}
}

// TestEncloseOp: the widened enclosure of the scale chain holds its
// binary32 evaluation (Go's float32 arithmetic, each operation rounded)
// and its binary64 one, rounded to binary32, for every head size 1…512;
// the two differ at some sizes (d = 5), so an enclosure of one alone —
// a planted unwidened interval — would miss the other there.
func TestEncloseOp(t *testing.T) {
	rel, abs := math.Ldexp(1, -22), math.Ldexp(1, -140)
	widen := func(lo, hi float64) (float64, float64) {
		return lo - math.Abs(lo)*rel - abs, hi + math.Abs(hi)*rel + abs
	}
	differ := 0
	for d := 1; d <= 512; d++ {
		lo, hi, _ := encloseOp("Sqrt", float64(d), float64(d), 0, 0)
		lo, hi = widen(lo, hi)
		lo, hi, _ = encloseOp("Div", 1, 1, lo, hi)
		lo, hi = widen(lo, hi)
		lo, hi, _ = encloseOp("Sqrt", lo, hi, 0, 0)
		lo, hi = widen(lo, hi)
		f32 := float64(float32(math.Sqrt(float64(float32(1) / float32(math.Sqrt(float64(d)))))))
		f64 := math.Sqrt(1 / math.Sqrt(float64(d)))
		if f32 != float64(float32(f64)) {
			differ++
		}
		for _, v := range []float64{f32, f64, float64(float32(f64))} {
			if v < lo || v > hi {
				t.Errorf("d=%d: %v outside [%v, %v]", d, v, lo, hi)
			}
		}
	}
	if differ == 0 {
		t.Errorf("no head size separates the binary32 chain from the binary64 one: the test checks nothing")
	}
	if _, _, ok := encloseOp("Div", 1, 1, -1, 1); ok {
		t.Errorf("a divisor enclosure holding 0 was enclosed")
	}
	if _, _, ok := encloseOp("Sqrt", -1, 1, 0, 0); ok {
		t.Errorf("a root of an enclosure reaching below 0 was enclosed")
	}
}
