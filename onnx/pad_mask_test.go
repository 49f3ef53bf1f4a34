package onnx

import (
	"math"
	"strings"
	"testing"
)

// TestMaskedPad: Pad of a constant −∞ mask with −∞ (the Attention
// function body's padding of a short mask over the keys, axes input -1)
// folded into a masked constant that a Softmax consumes. Expected by hand:
// x = 0 everywhere, so the softmax is uniform over the allowed keys and
// exactly 0 on the masked ones — mask [0, −∞] padded by one −∞ gives
// [1, 0, 0], mask [0, 0] gives [1/2, 1/2, 0]. A pad with 0 instead of −∞
// would give 1/2 or 1/3 at the padded key; the input's own −∞ lost, 1/2.
// Reflect mode of a masked value is refused naming the attribute.
func TestMaskedPad(t *testing.T) {
	ninf := float32(math.Inf(-1))
	build := func(mode string, m ...float32) *Model {
		g := newMG(18).in("x", 1, 3).init("m", dims(1, 2), m...).init("v", dims(), ninf).
			initI("pads", dims(2), 0, 1).initI("axes", dims(1), -1).
			op("Pad", ins("m", "pads", "v", "axes"), ins("mp"), aS("mode", mode)).
			op("Add", ins("x", "mp"), ins("s")).op("Softmax", ins("s"), ins("y"), aI("axis", -1)).out("y")
		return g.model()
	}
	x := floatsTensor(dims(1, 3), 0, 0, 0)
	for _, c := range []struct {
		m    []float32
		want []float64
	}{{[]float32{0, ninf}, []float64{1, 0, 0}}, {[]float32{0, 0}, []float64{0.5, 0.5, 0}}} {
		_, outs := evalF64(t, build("constant", c.m...), Options{}, x)
		if !nearF64(outs[0].Data, c.want) {
			t.Errorf("mask %v: %v, want %v", c.m, outs[0].Data, c.want)
		}
	}
	_, err := Import(build("reflect", 0, ninf), Options{})
	if err == nil || !strings.Contains(err.Error(), `attribute "mode"`) || !strings.Contains(err.Error(), "−∞") {
		t.Errorf("reflect: %v", err)
	}
}
