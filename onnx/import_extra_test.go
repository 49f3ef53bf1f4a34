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

// TestImportScatterElements: ONNX ScatterElements (reduction none) is one
// scatter node whose values are the operator page's examples (worked by
// hand, negative indices and axis included); ScatterND none goes through
// scatter as well.
func TestImportScatterElements(t *testing.T) {
	data := func(vs ...float32) *Tensor { return floatsTensor(dims(3, 3), vs...) }
	cases := []struct {
		name string
		m    *Model
		want []float64
	}{
		// The page's example 1, updates 1…6: axis 0, indices [[1,0,2],[0,2,1]].
		{"axis 0", newMG(13).in("x", 3, 3).initI("i", dims(2, 3), 1, 0, 2, 0, 2, 1).init("u", dims(2, 3), 1, 2, 3, 4, 5, 6).
			op("ScatterElements", ins("x", "i", "u"), ins("y")).out("y").model(), []float64{4, 2, 0, 1, 0, 6, 0, 5, 3}},
		// axis −1 with a negative index: row 0 columns 1 and 2 (−1).
		{"negative axis and index", newMG(16).in("x", 3, 3).initI("i", dims(1, 2), 1, -1).init("u", dims(1, 2), 7, 8).
			op("ScatterElements", ins("x", "i", "u"), ins("y"), aI("axis", -1), aS("reduction", "none")).out("y").model(), []float64{0, 7, 8, 0, 0, 0, 0, 0, 0}},
		// ScatterND none on the same data: rows 2 and 0 replaced.
		{"ScatterND none", newMG(13).in("x", 3, 3).initI("i", dims(2, 1), 2, 0).init("u", dims(2, 3), 1, 2, 3, 4, 5, 6).
			op("ScatterND", ins("x", "i", "u"), ins("y")).out("y").model(), []float64{4, 5, 6, 0, 0, 0, 1, 2, 3}},
	}
	for _, tc := range cases {
		im, outs := evalF64(t, tc.m, Options{}, data(0, 0, 0, 0, 0, 0, 0, 0, 0))
		found := false
		for _, n := range im.Graph.Nodes {
			found = found || n.Kind.Op == opScatter
		}
		if !found {
			t.Errorf("%s: no scatter node in the imported graph", tc.name)
		}
		for i, g := range outs[0].Data {
			if float64(g) != tc.want[i] {
				t.Errorf("%s: element %d is %v, want %v", tc.name, i, g, tc.want[i])
			}
		}
	}
}

// TestImportScatterElementsRefuses: duplicate targets, another reduction
// and an index out of range are refused at import, naming the field.
func TestImportScatterElementsRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		m    *Model
		want string
	}{
		{"duplicate", newMG(13).in("x", 3).initI("i", dims(2), 1, 1).init("u", dims(2), 1, 2).
			op("ScatterElements", ins("x", "i", "u"), ins("y")).out("y").model(), "written by entries 0 and 1"},
		{"reduction add", newMG(16).in("x", 3).initI("i", dims(2), 1, 2).init("u", dims(2), 1, 2).
			op("ScatterElements", ins("x", "i", "u"), ins("y"), aS("reduction", "add")).out("y").model(), `"add" is not supported`},
		{"out of range", newMG(13).in("x", 3).initI("i", dims(1), 3).init("u", dims(1), 1).
			op("ScatterElements", ins("x", "i", "u"), ins("y")).out("y").model(), "outside [-3, 3)"},
	} {
		_, err := Import(c.m, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "ScatterElements") {
			t.Errorf("%s: %v, want an error naming ScatterElements with %q", c.name, err, c.want)
		}
	}
}
