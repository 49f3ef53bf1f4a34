package onnx

import (
	"strings"
	"testing"
)

// TestResizeRecordedScales: scales given as a graph input are read from
// Options.Values. By hand: nearest, asymmetric, scale 2 on [1 2]: the
// output o reads o/2 rounded half down (round_prefer_floor): 0, 0, 1, 1,
// so [1 1 2 2]. align_corners with a non-integral n·s reads
// o·(n−1)/(n·s−1) with the unfloored n·s (the operator's length_resized):
// scale 5/4 on [1 2] gives ⌊5/2⌋ = 2 outputs at x = 0 and 1/(3/2) = 2/3,
// so [1 5/3] (the floored length would give [1 2]). Without recorded
// scales the input is not constant and is refused.
func TestResizeRecordedScales(t *testing.T) {
	x := floatsTensor(dims(1, 1, 1, 2), 1, 2)
	mk := func(ctm, mode string) *Model {
		return newMG(13).in("x", 1, 1, 1, 2).in("sc", 4).
			op("Resize", ins("x", "", "sc"), ins("y"), aS("mode", mode), aS("coordinate_transformation_mode", ctm)).out("y").model()
	}
	sc := floatsTensor(dims(4), 1, 1, 1, 2)
	_, outs := evalRat(t, mk("asymmetric", "nearest"), Options{Values: map[string]*Tensor{"x": x, "sc": sc}}, x, sc)
	if got := ratStrings(outs[0].Data); got != "[1 1 2 2]" {
		t.Errorf("got %s, want [1 1 2 2]", got)
	}
	sc = floatsTensor(dims(4), 1, 1, 1, 1.25)
	_, outs = evalRat(t, mk("align_corners", "linear"), Options{Values: map[string]*Tensor{"x": x, "sc": sc}}, x, sc)
	if got := ratStrings(outs[0].Data); got != "[1 5/3]" {
		t.Errorf("align_corners n·s = 5/2: got %s, want [1 5/3]", got)
	}
	for _, tc := range []struct {
		name string
		m    *Model
		vals map[string]*Tensor
		want string
	}{
		{"scales not recorded", mk("asymmetric", "nearest"), nil, "scales must be"},
	} {
		if _, err := Import(tc.m, Options{Values: tc.vals}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
