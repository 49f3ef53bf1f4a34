package onnx

import (
	"strings"
	"testing"
)

// TestImportGatherElements: GatherElements with constant indices on a float
// input (a gather node) and on an integer constant (folded), against the
// operator's formula worked by hand.
func TestImportGatherElements(t *testing.T) {
	x := floatsTensor(dims(2, 3), 1, 2, 3, 4, 5, 6)
	cases := []struct {
		name string
		m    *Model
		want []float64
	}{
		// out[i][j] = x[i][idx[i][j]], a negative index normalised.
		{"axis 1", newMG(13).in("x", 2, 3).initI("i", dims(2, 2), 2, 0, -2, 1).
			op("GatherElements", ins("x", "i"), ins("y"), aI("axis", 1)).out("y").model(), []float64{3, 1, 5, 5}},
		// out[i][j] = x[idx[i][j]][j], indices narrower than the data.
		{"axis 0", newMG(13).in("x", 2, 3).initI("i", dims(1, 2), 1, 0).
			op("GatherElements", ins("x", "i"), ins("y")).out("y").model(), []float64{4, 2}},
		// BERT's token types: a gather on two integer constants, folded, then cast.
		{"integer constant", newMG(13).in("x", 2, 3).initI("d", dims(1, 3), 7, 8, 9).initI("i", dims(1, 3), 2, 2, 0).
			op("GatherElements", ins("d", "i"), ins("g"), aI("axis", 1)).op("Cast", ins("g"), ins("c"), aI("to", 1)).
			op("Add", ins("x", "c"), ins("y")).out("y").model(), []float64{10, 11, 10, 13, 14, 13}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, outs := evalF64(t, tc.m, Options{}, x)
			if !nearF64(outs[0].Data, tc.want) {
				t.Errorf("got %v, want %v", outs[0].Data, tc.want)
			}
		})
	}
	bad := newMG(13).in("x", 2, 3).initI("i", dims(2), 0, 1).op("GatherElements", ins("x", "i"), ins("y")).out("y").model()
	if _, err := Import(bad, Options{}); err == nil || !strings.Contains(err.Error(), "rank 1, the data's is 2") {
		t.Errorf("indices of another rank: %v, want a refusal naming the ranks", err)
	}
}
