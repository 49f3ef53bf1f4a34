package onnx

import (
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/spec"
)

// TestImportWhereDataComparison: Where(Greater(a, b), X, Y) and
// Where(Less(a, b), X, Y) on computed data import as the exact selection,
// with the Where's derivatives. The model is y = Where(cmp(x, 1), x, −2x)
// at x = (−1, 1, 2, 1/2); the values and ∂Σy/∂x (1 where the condition
// holds, −2 elsewhere; the tie x = 1 takes Y for both strict comparisons)
// are worked by hand. A planted swap of the branches (X and Y exchanged)
// must give other values, so the check is not vacuous.
func TestImportWhereDataComparison(t *testing.T) {
	model := func(cmp string, swap bool) *Model {
		x, y := "x", "m2"
		if swap {
			x, y = y, x
		}
		return newMG(13).in("x", 4).init("one", dims(), 1).init("k", dims(), -2).
			op("Mul", ins("x", "k"), ins("m2")).
			op(cmp, ins("x", "one"), ins("c")).
			op("Where", ins("c", x, y), ins("y")).out("y").model()
	}
	cases := []struct {
		name      string
		m         *Model
		want      []string
		grad      []string
		wantEqual bool
	}{
		{"Greater", model("Greater", false), []string{"2", "-2", "2", "-1"}, []string{"-2", "-2", "1", "-2"}, true},
		{"Less", model("Less", false), []string{"-1", "-2", "-4", "1/2"}, []string{"1", "-2", "-2", "1"}, true},
		{"Greater, branches swapped (planted)", model("Greater", true), []string{"2", "-2", "2", "-1"}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := floatsTensor(dims(4), -1, 1, 2, 0.5)
			im, outs := evalRat(t, tc.m, Options{}, in)
			if got := sameRats(outs[0].Data, rats(t, tc.want...)); got != tc.wantEqual {
				t.Fatalf("values %s, want %s (equal %v)", ratStrings(outs[0].Data), strings.Join(tc.want, " "), tc.wantEqual)
			}
			if tc.grad == nil {
				return
			}
			l, err := irgrad.Lower[spec.Rat](nil, im.Graph, im.Payload)
			if err != nil {
				t.Fatal(err)
			}
			x, err := im.PackInputs([]*Tensor{in})
			if err != nil {
				t.Fatal(err)
			}
			out := im.Graph.Nodes[im.Graph.OutputID].Shape
			seed, _ := spec.Full(out.Clone(), spec.NewRat(1, 1))
			gr, err := l.VJP(irgrad.PathTape, x, seed)
			if err != nil {
				t.Fatal(err)
			}
			if !sameRats(gr.Input.Data, rats(t, tc.grad...)) {
				t.Errorf("∂Σy/∂x = %s, want %s", ratStrings(gr.Input.Data), strings.Join(tc.grad, " "))
			}
		})
	}
}

// TestImportTorchSoftplusThreshold: PyTorch's export of
// Softplus(β = 2, threshold = 1), Where(Greater(β·x, threshold), x,
// Softplus(β·x)/β), evaluates to x where 2x > 1 and log(1 + e^(2x))/2
// elsewhere (math.Log1p and math.Exp: an independent implementation).
func TestImportTorchSoftplusThreshold(t *testing.T) {
	m := newMG(18).in("x", 4).init("beta", dims(), 2).init("thr", dims(), 1).
		op("Mul", ins("x", "beta"), ins("s")).
		op("Softplus", ins("s"), ins("sp")).
		op("Div", ins("sp", "beta"), ins("soft")).
		op("Greater", ins("s", "thr"), ins("c")).
		op("Where", ins("c", "x", "soft"), ins("y")).out("y").model()
	xs := []float32{-1, 0.25, 0.75, 3}
	_, outs := evalF64(t, m, Options{}, floatsTensor(dims(4), xs...))
	for i, g := range outs[0].Data {
		v := float64(xs[i])
		want := v
		if 2*v <= 1 {
			want = math.Log1p(math.Exp(2*v)) / 2
		}
		if math.Abs(float64(g)-want) > 1e-14 {
			t.Errorf("element %d (x = %v): %v, want %v", i, v, g, want)
		}
	}
}

// TestImportDataComparisonRefused: a comparison of computed data that no
// Where consumes as its condition, or a Where on one with integer
// branches, is refused with one line naming the node.
func TestImportDataComparisonRefused(t *testing.T) {
	cases := []struct {
		name string
		m    *Model
		want string
	}{
		{"Not of it", newMG(13).in("x", 2).init("one", dims(), 1).op("Greater", ins("x", "one"), ins("c")).
			op("Not", ins("c"), ins("n")).op("Where", ins("n", "x", "x"), ins("y")).out("y").model(), "data-dependent"},
		{"Equal stays refused", newMG(13).in("x", 2).init("one", dims(), 1).op("Equal", ins("x", "one"), ins("c")).
			op("Where", ins("c", "x", "x"), ins("y")).out("y").model(), "data-dependent"},
		{"Cast of it", newMG(13).in("x", 2).init("one", dims(), 1).op("Greater", ins("x", "one"), ins("c")).
			op("Cast", ins("c"), ins("y"), aI("to", int64(Float))).out("y").model(), "data-dependent"},
		{"integer branches", newMG(13).in("x", 2).init("one", dims(), 1).initI("i", dims(2), 1, 2).op("Greater", ins("x", "one"), ins("c")).
			op("Where", ins("c", "i", "i"), ins("y")).out("y").model(), "float branches"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(tc.m, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Count(err.Error(), "\n") > 0 {
				t.Fatalf("err %v, want one line with %q", err, tc.want)
			}
		})
	}
}
