package onnx

import "testing"

// TestEinsumDiagonal: a letter repeated within one term reads the
// diagonal (numpy's and ONNX's meaning of a repeated subscript). By hand on
// x = [[1 2] [3 4]]: "ii->i" is [x₀₀ x₁₁] = [1 4]; "ii" (implicit output:
// i occurs twice, so it is summed) is the trace 5; on the batch
// [[[1 2] [3 4]] [[5 6] [7 8]]], "bii->bi" is [1 4 5 8]; "ii,i->" with
// w = [10 100] is 1·10 + 4·100 = 410.
func TestEinsumDiagonal(t *testing.T) {
	x := floatsTensor(dims(2, 2), 1, 2, 3, 4)
	xb := floatsTensor(dims(2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8)
	w := floatsTensor(dims(2), 10, 100)
	for _, tc := range []struct {
		name string
		m    *Model
		in   []*Tensor
		want []string
	}{
		{"ii->i", newMG(12).in("x", 2, 2).op("Einsum", ins("x"), ins("y"), aS("equation", "ii->i")).out("y").model(), []*Tensor{x}, []string{"1", "4"}},
		{"ii trace", newMG(12).in("x", 2, 2).op("Einsum", ins("x"), ins("y"), aS("equation", "ii")).out("y").model(), []*Tensor{x}, []string{"5"}},
		{"bii->bi", newMG(12).in("x", 2, 2, 2).op("Einsum", ins("x"), ins("y"), aS("equation", "bii->bi")).out("y").model(), []*Tensor{xb}, []string{"1", "4", "5", "8"}},
		{"ii,i->", newMG(12).in("x", 2, 2).in("w", 2).op("Einsum", ins("x", "w"), ins("y"), aS("equation", "ii,i->")).out("y").model(), []*Tensor{x, w}, []string{"410"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, outs := evalRat(t, tc.m, Options{}, tc.in...)
			if !sameRats(outs[0].Data, rats(t, tc.want...)) {
				t.Errorf("%s, want %v", ratStrings(outs[0].Data), tc.want)
			}
		})
	}
}
