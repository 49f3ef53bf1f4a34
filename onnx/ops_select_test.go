package onnx

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// The expected orders below are worked by hand from the ONNX operator
// text (descending for largest, ascending otherwise; of equal elements
// the lower index first; Hardmax: one-hot of the first maximum).

func TestTopKHardmax(t *testing.T) {
	x := floatsTensor(dims(2, 3), 1, 3, 3, 5, -2, 5)
	vals := map[string]*Tensor{"x": x}
	cases := []struct {
		name  string
		m     *Model
		o     Options
		in    []*Tensor
		vals  [][]string // per float output, exact values
		exact [][]int64  // per exact output
	}{
		{"TopK of a constant, largest, ties by index",
			newMG(11).in("u", 1).init("c", dims(2, 3), 1, 3, 3, 5, -2, 5).initI("k", dims(1), 2).
				op("TopK", ins("c", "k"), ins("v", "i")).op("Add", ins("v", "u"), ins("y")).out("y", "i").model(),
			Options{}, []*Tensor{floatsTensor(dims(1), 0)},
			[][]string{{"3", "3", "5", "5"}}, [][]int64{{1, 2, 0, 2}}},
		{"TopK smallest of a graph input decided on its recorded value",
			newMG(11).in("x", 2, 3).initI("k", dims(1), 2).
				op("TopK", ins("x", "k"), ins("v", "i"), aI("largest", 0)).out("v", "i").model(),
			Options{Values: vals}, []*Tensor{x},
			[][]string{{"1", "3", "-2", "5"}}, [][]int64{{0, 1, 1, 0}}},
		{"TopK along axis 0, opset 1 attribute k",
			newMG(1).in("x", 2, 3).op("TopK", ins("x"), ins("v", "i"), aI("k", 1), aI("axis", 0)).out("v", "i").model(),
			Options{Values: vals}, []*Tensor{x},
			[][]string{{"5", "3", "5"}}, [][]int64{{1, 0, 1}}},
		{"Hardmax opset 13: the first maximum of each row",
			newMG(13).in("x", 2, 3).op("Hardmax", ins("x"), ins("y")).out("y").model(),
			Options{Values: vals}, []*Tensor{x},
			[][]string{{"0", "1", "0", "1", "0", "0"}}, nil},
		{"Hardmax opset 11 coerces to 2-D at axis 0: one maximum in all",
			newMG(11).in("x", 2, 3).op("Hardmax", ins("x"), ins("y"), aI("axis", 0)).out("y").model(),
			Options{Values: vals}, []*Tensor{x},
			[][]string{{"0", "0", "0", "1", "0", "0"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			im, outs := evalRat(t, c.m, c.o, c.in...)
			if len(outs) != len(c.vals) {
				t.Fatalf("%d float outputs, want %d", len(outs), len(c.vals))
			}
			for i, w := range c.vals {
				if !sameRats(outs[i].Data, rats(t, w...)) {
					t.Errorf("output %d = %s, want %v", i, ratStrings(outs[i].Data), w)
				}
			}
			if len(im.Exact) != len(c.exact) {
				t.Fatalf("%d exact outputs, want %d", len(im.Exact), len(c.exact))
			}
			for i, w := range c.exact {
				got := im.Exact[i].Values
				if len(got) != len(w) {
					t.Fatalf("exact output %d = %v, want %v", i, got, w)
				}
				for j := range w {
					if got[j] != w[j] {
						t.Errorf("exact output %d = %v, want %v", i, got, w)
						break
					}
				}
			}
		})
	}
}

// TestSelectRefused: an order that is not decided at import is refused,
// naming the node and the input.
func TestSelectRefused(t *testing.T) {
	vals := map[string]*Tensor{"x": floatsTensor(dims(3), 1, 2, 3)}
	cases := []struct {
		name string
		m    *Model
		o    Options
		want []string
	}{
		{"TopK of a computed value", newMG(11).in("x", 3).initI("k", dims(1), 1).op("Relu", ins("x"), ins("r")).
			op("TopK", ins("r", "k"), ins("v", "i")).out("v").model(), Options{Values: vals}, []string{`node "v" (TopK)`, `input 0 ("r")`, "data-dependent"}},
		{"TopK of an input without its value", newMG(11).in("x", 3).initI("k", dims(1), 1).
			op("TopK", ins("x", "k"), ins("v", "i")).out("v").model(), Options{}, []string{`node "v" (TopK)`, `input 0 ("x")`, "data-dependent"}},
		{"TopK unsorted", newMG(11).in("x", 3).initI("k", dims(1), 1).
			op("TopK", ins("x", "k"), ins("v", "i"), aI("sorted", 0)).out("v").model(), Options{Values: vals}, []string{`node "v" (TopK)`, `attribute "sorted"`}},
		{"TopK K too large", newMG(11).in("x", 3).initI("k", dims(1), 4).
			op("TopK", ins("x", "k"), ins("v", "i")).out("v").model(), Options{Values: vals}, []string{`node "v" (TopK)`, "K", "4"}},
		{"Hardmax of a computed value", newMG(13).in("x", 3).op("Exp", ins("x"), ins("n")).
			op("Hardmax", ins("n"), ins("y")).out("y").model(), Options{Values: vals}, []string{`node "y" (Hardmax)`, `input 0 ("n")`, "data-dependent"}},
		// Exp rounds (Neg would not: a Neg of a recorded input is known, known.go);
		// LessOrEqual (Less would import exactly, import_datacmp.go).
		{"a comparison of a computed value is still refused", newMG(13).in("x", 3).op("Exp", ins("x"), ins("n")).
			op("LessOrEqual", ins("n", "x"), ins("b")).op("Where", ins("b", "x", "n"), ins("y")).out("y").model(), Options{Values: vals}, []string{`(LessOrEqual)`, `input 0 ("n")`, "data-dependent"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Import(c.m, c.o)
			if err == nil {
				t.Fatal("imported, want a refusal")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestValuesDecideComparisons: Less of two graph inputs decided on their
// values selects through Where, and an integer output decided at import is
// an exact output.
func TestValuesDecideComparisons(t *testing.T) {
	a := floatsTensor(dims(3), 1, 5, -2)
	b := floatsTensor(dims(3), 2, 5, -3)
	m := newMG(13).in("a", 3).in("b", 3).op("Less", ins("a", "b"), ins("l")).op("Where", ins("l", "a", "b"), ins("y")).
		op("ArgMax", ins("a"), ins("i")).out("y", "i").model()
	im, outs := evalRat(t, m, Options{Values: map[string]*Tensor{"a": a, "b": b}}, a, b)
	// min(a, b) elementwise: (1, 5, −3); argmax a = 1.
	if !sameRats(outs[0].Data, rats(t, "1", "5", "-3")) {
		t.Errorf("Where(Less(a, b), a, b) = %s, want 1 5 -3", ratStrings(outs[0].Data))
	}
	if len(im.Exact) != 1 || im.Exact[0].Name != "i" || im.Exact[0].Index != 1 || len(im.Exact[0].Values) != 1 || im.Exact[0].Values[0] != 1 || !im.Exact[0].Shape.Equal(spec.Shape{1}) {
		t.Errorf("exact outputs %+v, want i = [1] at index 1", im.Exact)
	}
}
