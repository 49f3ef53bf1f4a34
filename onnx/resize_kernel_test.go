package onnx

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestResizeKernels: Resize's cubic mode, antialias, exclude_outside and
// keep_aspect_ratio_policy, evaluated exactly. The input is [1 2 4 8]; each
// expected value is worked out by hand in the comment beside it from Keys'
// kernel with A = −3/4, W(d) = (A+2)|d|³ − (A+3)|d|² + 1 (|d| ≤ 1),
// A|d|³ − 5A|d|² + 8A|d| − 4A (1 < |d| < 2): W(1/4) = 225/256, W(1/2) =
// 19/32, W(3/4) = 67/256, W(5/4) = −27/256, W(3/2) = −3/32, W(7/4) =
// −9/256 (and checked against the ONNX reference evaluator when written).
func TestResizeKernels(t *testing.T) {
	x := floatsTensor(dims(4), 1, 2, 4, 8)
	rs := func(opset int64, scale float32, attrs ...*Attribute) *Model {
		return newMG(opset).in("x", 4).init("s", dims(1), scale).op("Resize", ins("x", "", "s"), ins("y"), attrs...).out("y").model()
	}
	cases := []struct {
		name  string
		m     *Model
		shape spec.Shape
		want  []string
	}{
		// asymmetric ×2: x(o) = o/2. Even o reads input o/2 alone (W(0) = 1, W(±1) = W(±2) = 0);
		// o = 2k+1: taps k−1..k+2 (clamped) with W(3/2), W(1/2), W(1/2), W(3/2):
		// o=1: −3/32·1 + 19/32·1 + 19/32·2 − 3/32·4 = 21/16; o=3: (−3 + 38 + 76 − 24)/32 = 87/32;
		// o=5: (−6 + 76 + 152 − 24)/32 = 99/16; o=7: (−12 + 152 + 152 − 24)/32 = 67/8.
		{"cubic asymmetric x2", rs(13, 2, aS("mode", "cubic"), aS("coordinate_transformation_mode", "asymmetric")),
			spec.Shape{8}, []string{"1", "21/16", "2", "87/32", "4", "99/16", "8", "67/8"}},
		// exclude_outside: at o=1 tap −1 is dropped: (19/32 + 38/32 − 12/32)/(35/32) = 45/35 = 9/7;
		// at o=5 tap 4: (−6 + 76 + 152)/35 = 222/35; at o=7 taps 4 and 5: (−12 + 152)/16 = 35/4.
		{"cubic exclude_outside", rs(13, 2, aS("mode", "cubic"), aS("coordinate_transformation_mode", "asymmetric"), aI("exclude_outside", 1)),
			spec.Shape{4 * 2}, []string{"1", "9/7", "2", "87/32", "4", "222/35", "8", "35/4"}},
		// linear antialias at 1/2 (half_pixel): x(o) = 2o + 1/2, σ = 1/2, taps −1..2 with hat(σ(i − 1/2))
		// = 1/4, 3/4, 3/4, 1/4, normalised 1/8, 3/8, 3/8, 1/8: o=0 (1+3+6+4)/8 = 7/4; o=1 (2+12+24+8)/8 = 23/4.
		{"linear antialias /2", rs(18, 0.5, aS("mode", "linear"), aI("antialias", 1)),
			spec.Shape{2}, []string{"7/4", "23/4"}},
		// cubic antialias at 1/2, o = 0: taps −3..4 at σ(i − 1/2) = ±7/4, ±5/4, ±3/4, ±1/4 with weights
		// (W(7/4), W(5/4), W(3/4), W(1/4), …)/2 (their sum is 2), inputs clamped 0,0,0,0,1,2,3,3:
		// 1·(−9 − 27 + 67 + 225)/512 + 2·225/512 + 4·67/512 + 8·(−27 − 9)/512 = 686/512 = 343/256.
		{"cubic antialias /2", rs(18, 0.5, aS("mode", "cubic"), aI("antialias", 1)),
			spec.Shape{2}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, outs := evalRat(t, tc.m, Options{}, x)
			if !outs[0].Shape.Equal(tc.shape) {
				t.Fatalf("shape %v, want %v", outs[0].Shape, tc.shape)
			}
			if tc.want != nil && !sameRats(outs[0].Data, rats(t, tc.want...)) {
				t.Errorf("%s, want %v", ratStrings(outs[0].Data), tc.want)
			}
			if tc.want == nil && !outs[0].Data[0].Same(rats(t, "343/256")[0]) {
				t.Errorf("element 0 = %s, want 343/256", outs[0].Data[0])
			}
		})
	}
}

// TestResizeKeepAspect: sizes [3 3] on a [2 4] input. not_larger takes the
// ratio min(3/2, 3/4) = 3/4 for both axes, extents ⌊2·3/4 + ½⌋ = 2 and
// ⌊4·3/4 + ½⌋ = 3; not_smaller takes 3/2: ⌊3 + ½⌋ = 3, ⌊6 + ½⌋ = 6.
// With mode nearest and asymmetric coordinates (x = o/s, rounded half
// down), not_larger reads columns o·4/3 → 0, 1, 3 (4/3 → 1, 8/3 → 3) of
// rows 0 and 1 (1·4/3 → 1).
func TestResizeKeepAspect(t *testing.T) {
	x := floatsTensor(dims(2, 4), 0, 1, 2, 3, 4, 5, 6, 7)
	for _, tc := range []struct {
		policy string
		shape  spec.Shape
		want   []string
	}{
		{"not_larger", spec.Shape{2, 3}, []string{"0", "1", "3", "4", "5", "7"}},
		{"not_smaller", spec.Shape{3, 6}, nil},
		{"stretch", spec.Shape{3, 3}, nil},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			m := newMG(18).in("x", 2, 4).initI("z", dims(2), 3, 3).
				op("Resize", ins("x", "", "", "z"), ins("y"), aS("mode", "nearest"), aS("coordinate_transformation_mode", "asymmetric"), aS("keep_aspect_ratio_policy", tc.policy)).out("y").model()
			_, outs := evalRat(t, m, Options{}, x)
			if !outs[0].Shape.Equal(tc.shape) {
				t.Fatalf("shape %v, want %v", outs[0].Shape, tc.shape)
			}
			if tc.want != nil && !sameRats(outs[0].Data, rats(t, tc.want...)) {
				t.Errorf("%s, want %v", ratStrings(outs[0].Data), tc.want)
			}
		})
	}
}

// TestResizeCrop: tf_crop_and_resize on [1 2 4 8] (n = 4) to 3 outputs
// with roi [1/4, 3/2]: x(o) = (1/4)·3 + o·(5/4)·3/2 = 3/4, 21/8, 9/2. Linear:
// 1 + 3/4·1 = 7/4; 4 + 5/8·4 = 13/2; 9/2 > 3 takes extrapolation_value 10.
// roi [0, 1] puts output 2 at x = 3 = n − 1 exactly, where a runtime's
// rounding of the coordinate decides: refused.
func TestResizeCrop(t *testing.T) {
	x := floatsTensor(dims(4), 1, 2, 4, 8)
	mk := func(lo, hi float32) *Model {
		return newMG(13).in("x", 4).init("roi", dims(2), lo, hi).initI("z", dims(1), 3).
			op("Resize", ins("x", "roi", "", "z"), ins("y"), aS("mode", "linear"), aS("coordinate_transformation_mode", "tf_crop_and_resize"), aF("extrapolation_value", 10)).out("y").model()
	}
	_, outs := evalRat(t, mk(0.25, 1.5), Options{}, x)
	if !sameRats(outs[0].Data, rats(t, "7/4", "13/2", "10")) {
		t.Errorf("%s, want [7/4 13/2 10]", ratStrings(outs[0].Data))
	}
	if _, err := Import(mk(0, 1), Options{}); err == nil || !strings.Contains(err.Error(), "crop boundary") {
		t.Errorf("roi [0 1]: err = %v, want a refusal at the crop boundary", err)
	}
}
