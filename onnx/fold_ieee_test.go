package onnx

import (
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
)

// fl24 rounds x to binary32 (24 significand bits, to nearest, ties to
// even) with math/big, independently of Go's float32 arithmetic.
func fl24(x *big.Float) *big.Float {
	return new(big.Float).SetPrec(24).SetMode(big.ToNearestEven).Set(x)
}

// TestFoldIEEE: the Attention decompositions' scale, Sqrt(Div(1,
// Sqrt(5))) of FLOAT constants (head size 5), folds to the binary32 value of the three
// correctly rounded operations — derived here with math/big at 24 bits,
// not with the code under test — and a graph that then casts it to
// FLOAT16 computes FLOAT16 alone (one format, one bound). The same chain
// rounded once in binary64 (a planted fold in the wrong format) differs
// from it, and so the test would catch such a fold. Not folded: an
// initializer operand, FLOAT16 arithmetic, a zero divisor.
func TestFoldIEEE(t *testing.T) {
	r1 := fl24(new(big.Float).SetPrec(24).Sqrt(big.NewFloat(5)))
	r2 := fl24(new(big.Float).SetPrec(24).SetMode(big.ToNearestEven).Quo(big.NewFloat(1), r1))
	r3 := fl24(new(big.Float).SetPrec(24).SetMode(big.ToNearestEven).Sqrt(r2))
	want, _ := r3.Float64()
	// A planted fold in binary64 rounded once to binary32 gives another
	// value at head size 5 (0.66874033 against 0.6687403), so the chain
	// tells the two apart.
	if wrong := float64(float32(math.Sqrt(1 / math.Sqrt(5)))); wrong == want {
		t.Fatalf("head size 5 does not separate the binary32 chain from the binary64 one")
	}
	scale := func(ops func(*mg) *mg) *Model {
		m := newMG(23).inT("x", Float16, 2).
			op("Constant", nil, ins("d"), aT("value", ftensor("", dims(1), 5))).
			op("Constant", nil, ins("one"), aT("value", ftensor("", dims(1), 1)))
		m = ops(m)
		m.op("Cast", ins("s"), ins("h"), aI("to", int64(Float16))).op("Mul", ins("x", "h"), ins("y"))
		m.g.Outputs = append(m.g.Outputs, &ValueInfo{Name: "y", ElemType: Float16})
		return m.model()
	}
	chain := func(m *mg) *mg {
		return m.op("Sqrt", ins("d"), ins("q")).op("Div", ins("one", "q"), ins("r")).op("Sqrt", ins("r"), ins("s"))
	}
	im, err := Import(scale(chain), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Computed) != 1 || im.Computed[0] != Float16 {
		t.Errorf("Computed = %v, want [FLOAT16] (the FLOAT chain folded)", im.Computed)
	}
	// The folded FLOAT value itself, through a model whose output it is.
	m := newMG(23).op("Constant", nil, ins("d"), aT("value", ftensor("", dims(1), 5))).
		op("Constant", nil, ins("one"), aT("value", ftensor("", dims(1), 1))).in("x", 1)
	chain(m).op("Add", ins("x", "s"), ins("y")).out("y")
	_, outs := evalRat(t, m.model(), Options{}, floatsTensor(dims(1), 0))
	got, _ := outs[0].Data[0].Big().Float64()
	if got != want {
		t.Errorf("folded scale %v, want the binary32 chain %v", got, want)
	}
	if f64 := float64(float32(math.Sqrt(1 / math.Sqrt(5)))); got == f64 {
		t.Errorf("folded scale %v is the binary64 chain's value", got)
	}
	// Not folded: an initializer operand (a payload field), FLOAT16
	// arithmetic, a zero divisor: the IR keeps its node.
	for _, tc := range []struct {
		name string
		m    *Model
		tag  irsem.Op
	}{
		{"initializer operand", newMG(23).in("x", 1).init("w", dims(1), 5).op("Sqrt", ins("w"), ins("s")).op("Add", ins("x", "s"), ins("y")).out("y").model(), irsem.OpSqrt},
		{"FLOAT16 arithmetic", func() *Model {
			m := newMG(23).inT("x", Float16, 1).op("Constant", nil, ins("d"), aT("value", &Tensor{Dims: dims(1), DataType: Float16, Float32: []float32{5}})).
				op("Sqrt", ins("d"), ins("s")).op("Mul", ins("x", "s"), ins("y"))
			m.g.Outputs = append(m.g.Outputs, &ValueInfo{Name: "y", ElemType: Float16})
			return m.model()
		}(), irsem.OpSqrt},
		{"zero divisor", newMG(23).in("x", 1).op("Constant", nil, ins("z"), aT("value", ftensor("", dims(1), 0))).
			op("Constant", nil, ins("one"), aT("value", ftensor("", dims(1), 1))).op("Div", ins("one", "z"), ins("s")).op("Add", ins("x", "s"), ins("y")).out("y").model(), ""},
	} {
		im, err := Import(tc.m, Options{})
		if tc.tag == "" {
			if err == nil && !hasTag(im, irsem.OpConst) {
				t.Errorf("%s: imported without its constant operands", tc.name)
			}
			if err == nil {
				for _, nd := range im.Graph.Nodes {
					if nd.Kind.Op == irsem.OpConst && im.Payload.Entries[nd.ID] != nil && im.Payload.Entries[nd.ID].Value != nil {
						if v := im.Payload.Entries[nd.ID].Value.Data; len(v) == 1 && v[0].String() != "0" && v[0].String() != "1" {
							t.Errorf("%s: a folded constant %v", tc.name, v[0])
						}
					}
				}
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !hasTag(im, tc.tag) {
			t.Errorf("%s: no %s node: folded", tc.name, tc.tag)
		}
	}
}
