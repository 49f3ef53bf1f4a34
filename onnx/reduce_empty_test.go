package onnx

import (
	"math"
	"strings"
	"testing"
)

// TestReduceEmptySet: ONNX's reductions over an empty axis give the
// operation's identity. ReduceProd is 1 (a constant of the output shape,
// every element "1" — the empty product, derived here as the neutral
// element of multiplication, not read from the importer), ReduceSum and
// ReduceSumSquare 0 (ReduceMax and ReduceMin, whose identities ∓∞ are
// not rationals, are specials: TestNonrealOutputs). A planted product that folded the (absent) elements from 0 would give 0.
func TestReduceEmptySet(t *testing.T) {
	for _, tc := range []struct {
		op       string
		keep     int64
		identity string
		shape    string
	}{
		{"ReduceProd", 1, "1", "[2,1,3]"},
		{"ReduceProd", 0, "1", "[2,3]"},
		{"ReduceSum", 1, "0", "[2,1,3]"},
		{"ReduceSumSquare", 0, "0", "[2,3]"},
	} {
		m := newMG(18).in("x", 2, 0, 3).op(tc.op, ins("x", "axes"), ins("y"), aI("keepdims", tc.keep))
		m.g.Initializers = append(m.g.Initializers, itensor("axes", []int64{1}, 1))
		m.out("y")
		_, outs := evalRat(t, m.model(), Options{}, ftensor("x", []int64{2, 0, 3}))
		want := "[" + strings.TrimSpace(strings.Repeat(tc.identity+" ", 6)) + "]"
		if got := ratStrings(outs[0].Data); got != want {
			t.Errorf("%s keepdims=%d: got %s, want %s", tc.op, tc.keep, got, want)
		}
		if got := outs[0].Shape.String(); got != tc.shape {
			t.Errorf("%s keepdims=%d: shape %v, want %s", tc.op, tc.keep, outs[0].Shape, tc.shape)
		}
	}
}

// TestInitializerSpecials: a NaN or +∞ element of a float initializer
// has no rational value and is refused with one line naming the
// initializer and the element's index (−∞ is the additive-mask case,
// tested with the masks); never a panic, never a silent value.
func TestInitializerSpecials(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []float32
		elem string
	}{
		{"NaN", []float32{1, 2, float32(math.NaN())}, "element 2"},
		{"+Inf", []float32{1, float32(math.Inf(1)), 3}, "element 1"},
	} {
		m := newMG(18).in("x", 3).init("w", []int64{3}, tc.vals...).op("Mul", ins("x", "w"), ins("y")).out("y").model()
		_, err := Import(m, Options{})
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), `"w"`) || !strings.Contains(err.Error(), tc.elem) {
			t.Errorf("%s in an initializer: %v, want one line naming \"w\" and %s", tc.name, err, tc.elem)
		}
	}
}
