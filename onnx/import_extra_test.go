package onnx

import (
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// TestImportExtraOps: Asinh and Pow with a tensor exponent, imported from
// models built here and evaluated over F64, against Go's math.Asinh and
// math.Pow (independent implementations) on the same float32 inputs.
func TestImportExtraOps(t *testing.T) {
	xs := []float32{0.5, 2, 3.25, 0.125}
	x := func() *Tensor { return floatsTensor(dims(4), xs...) }
	cases := []struct {
		name string
		m    *Model
		want func(v float64, i int) float64
		tag  irsem.Op
	}{
		{"Asinh", newMG(13).in("x", 4).op("Asinh", ins("x"), ins("y")).out("y").model(),
			func(v float64, _ int) float64 { return math.Asinh(v) }, opAsinh},
		{"Asinh of a negative", newMG(9).in("x", 4).op("Neg", ins("x"), ins("n")).op("Asinh", ins("n"), ins("y")).out("y").model(),
			func(v float64, _ int) float64 { return math.Asinh(-v) }, opAsinh},
		// A constant exponent whose elements differ.
		{"Pow varying constant exponent", newMG(13).in("x", 4).init("p", dims(4), 1.5, -2, 0.25, 3).op("Pow", ins("x", "p"), ins("y")).out("y").model(),
			func(v float64, i int) float64 { return math.Pow(v, []float64{1.5, -2, 0.25, 3}[i]) }, opPow},
		// A computed exponent: x^(x + 1/2).
		{"Pow computed exponent", newMG(13).in("x", 4).init("h", dims(), 0.5).op("Add", ins("x", "h"), ins("e")).op("Pow", ins("x", "e"), ins("y")).out("y").model(),
			func(v float64, _ int) float64 { return math.Pow(v, v+0.5) }, opPow},
		// A broadcast exponent row against a [2, 4] base: reshape x.
		{"Pow broadcast exponent", newMG(13).in("x", 4).init("p", dims(2, 1), 2, 0.5).op("Pow", ins("x", "p"), ins("y")).out("y").model(),
			func(v float64, i int) float64 { return math.Pow(v, []float64{2, 0.5}[i/4]) }, opPow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			im, outs := evalF64(t, tc.m, Options{}, x())
			found := false
			for _, n := range im.Graph.Nodes {
				found = found || n.Kind.Op == tc.tag
			}
			if !found {
				t.Errorf("no %s node in the imported graph", tc.tag)
			}
			got := outs[0].Data
			for i, g := range got {
				want := tc.want(float64(xs[i%4]), i)
				if math.Abs(float64(g)-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Errorf("element %d: %v, want %v", i, g, want)
				}
			}
		})
	}
}

// TestImportPowTensorRefusesBase: a base ≤ 0 under a tensor exponent is
// refused when the graph is evaluated, with the element named.
func TestImportPowTensorRefusesBase(t *testing.T) {
	m := newMG(13).in("x", 2).init("p", dims(2), 1.5, 2).op("Pow", ins("x", "p"), ins("y")).out("y").model()
	im, err := Import(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := im.PackInputs([]*Tensor{floatsTensor(dims(2), 4, -1)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = irsem.Denote(im.Graph, im.Payload, irsem.ConvertTensor[spec.F64](in))
	if err == nil || !strings.Contains(err.Error(), "base > 0") || !strings.Contains(err.Error(), "pow") {
		t.Fatalf("Pow(-1, 2) with a tensor exponent: %v, want the base refusal", err)
	}
}

// TestImportTile: ONNX Tile becomes one node of the registry's tile (none
// when every repeat is 1), whose values are numpy.tile's: output (i, j)
// is input (i mod 2, j mod 3), spelled here as a loop of its own.
func TestImportTile(t *testing.T) {
	xs := []float32{1, -2, 0.5, 4, 0.25, -8}
	cases := []struct {
		reps  []int64
		shape spec.Shape
		nodes int // tile nodes expected
	}{
		{[]int64{2, 2}, spec.Shape{4, 6}, 1},
		{[]int64{1, 3}, spec.Shape{2, 9}, 1},
		{[]int64{1, 1}, spec.Shape{2, 3}, 0},
		{[]int64{0, 2}, spec.Shape{0, 6}, 1},
	}
	for _, tc := range cases {
		m := newMG(13).in("x", 2, 3).initI("r", dims(2), tc.reps...).op("Tile", ins("x", "r"), ins("y")).out("y").model()
		im, outs := evalF64(t, m, Options{}, floatsTensor(dims(2, 3), xs...))
		n := 0
		for _, nd := range im.Graph.Nodes {
			if nd.Kind.Op == opTile {
				n++
			}
		}
		if n != tc.nodes {
			t.Errorf("repeats %v: %d tile nodes, want %d", tc.reps, n, tc.nodes)
		}
		y := outs[0]
		if !y.Shape.Equal(tc.shape) {
			t.Fatalf("repeats %v: shape %v, want %v", tc.reps, y.Shape, tc.shape)
		}
		for i := 0; i < tc.shape[0]; i++ {
			for j := 0; j < tc.shape[1]; j++ {
				if want := float64(xs[(i%2)*3+j%3]); float64(y.Data[i*tc.shape[1]+j]) != want {
					t.Errorf("repeats %v: y[%d,%d] = %v, want %v", tc.reps, i, j, y.Data[i*tc.shape[1]+j], want)
				}
			}
		}
	}
}
