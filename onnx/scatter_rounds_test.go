package onnx

import "testing"

// TestScatterNDRepeated: ScatterND with reduction mul, max, min writing a
// position more than once reduces it once per update, in update order
// (the operator's sequential definition). On data [1 2 3 4] with indices
// [1 1 3] and updates [5 −7 6], by hand: mul: 2·5·(−7) = −70 at 1, 4·6 =
// 24 at 3 → [1 −70 3 24]; max: max(2, 5, −7) = 5, max(4, 6) = 6 → [1 5 3
// 6]; min: min(2, 5, −7) = −7, min(4, 6) = 4 → [1 −7 3 4].
func TestScatterNDRepeated(t *testing.T) {
	x := floatsTensor(dims(4), 1, 2, 3, 4)
	u := floatsTensor(dims(3), 5, -7, 6)
	for _, tc := range []struct {
		red  string
		want []string
	}{
		{"mul", []string{"1", "-70", "3", "24"}},
		{"max", []string{"1", "5", "3", "6"}},
		{"min", []string{"1", "-7", "3", "4"}},
	} {
		t.Run(tc.red, func(t *testing.T) {
			m := newMG(18).in("x", 4).in("u", 3).initI("i", dims(3, 1), 1, 1, 3).
				op("ScatterND", ins("x", "i", "u"), ins("y"), aS("reduction", tc.red)).out("y").model()
			_, outs := evalRat(t, m, Options{}, x, u)
			if !sameRats(outs[0].Data, rats(t, tc.want...)) {
				t.Errorf("%s, want %v", ratStrings(outs[0].Data), tc.want)
			}
		})
	}
}
