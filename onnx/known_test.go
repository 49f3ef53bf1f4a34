package onnx

import (
	"math"
	"strings"
	"testing"
)

// TestKnownThroughExactOps: comparisons of values computed from recorded
// inputs by ops that never round are decided on Options.Values; each
// expectation is worked out by hand in the comment beside it.
func TestKnownThroughExactOps(t *testing.T) {
	x3 := floatsTensor(dims(3), -1, 1, 3)
	cases := []struct {
		name string
		m    *Model
		ins  map[string]*Tensor
		want string
	}{
		// Clip's decomposition with lo = 0, hi = 2: tmp = Where(x < 0, 0, x) = [0 1 3];
		// y = Where(2 < tmp, 2, tmp) = [0 1 2].
		{"Clip expanded", newMG(13).in("x", 3).in("lo").in("hi").
			op("Less", ins("x", "lo"), ins("c1")).op("Where", ins("c1", "lo", "x"), ins("tmp")).
			op("Less", ins("hi", "tmp"), ins("c2")).op("Where", ins("c2", "hi", "tmp"), ins("y")).out("y").model(),
			map[string]*Tensor{"x": x3, "lo": floatsTensor(dims(), 0), "hi": floatsTensor(dims(), 2)}, "[0 1 2]"},
		// Shrink's: nl = Neg(1/2); x < −1/2 at [T F F]; y = Where(that, x + 1/2, x) = [−1/2 1 3].
		{"Neg of a constant", newMG(13).in("x", 3).op("Constant", nil, ins("l"), aT("value", ftensor("", dims(), 0.5))).
			op("Neg", ins("l"), ins("nl")).op("Less", ins("x", "nl"), ins("c")).op("Add", ins("x", "l"), ins("xa")).
			op("Where", ins("c", "xa", "x"), ins("y")).out("y").model(),
			map[string]*Tensor{"x": x3}, "[-1/2 1 3]"},
		// Abs(x) = [1 1 3]; Equal(·, 1) = [T T F]; y = Where(that, x, 0) = [−1 1 0].
		{"Abs of an input", newMG(13).in("x", 3).op("Constant", nil, ins("one"), aT("value", ftensor("", dims(), 1))).
			op("Constant", nil, ins("z"), aT("value", ftensor("", dims(), 0))).
			op("Abs", ins("x"), ins("a")).op("Equal", ins("a", "one"), ins("c")).op("Where", ins("c", "x", "z"), ins("y")).out("y").model(),
			map[string]*Tensor{"x": x3}, "[-1 1 0]"},
		// The Attention guard on an input mask: rows [0 −1 2] and [5 1 0] reshaped from [6], max [2 5];
		// Equal(·, 2) = [T F]; y = Where(that, v, Neg v) with v = [3 4]: [3 −4].
		{"ReduceMax of a reshaped input mask", newMG(18).in("v", 2).in("m", 6).initI("s", dims(2), 2, 3).initI("ax", dims(1), 1).
			op("Constant", nil, ins("two"), aT("value", ftensor("", dims(), 2))).
			op("Identity", ins("m"), ins("mi")).op("Reshape", ins("mi", "s"), ins("m2")).op("ReduceMax", ins("m2", "ax"), ins("rm"), aI("keepdims", 0)).
			op("Equal", ins("rm", "two"), ins("c")).op("Neg", ins("v"), ins("nv")).op("Where", ins("c", "v", "nv"), ins("y")).out("y").model(),
			map[string]*Tensor{"v": floatsTensor(dims(2), 3, 4), "m": floatsTensor(dims(6), 0, -1, 2, 5, 1, 0)}, "[3 -4]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var in []*Tensor
			for _, vi := range tc.m.Graph.Inputs {
				in = append(in, tc.ins[vi.Name])
			}
			_, outs := evalRat(t, tc.m, Options{Values: tc.ins}, in...)
			if got := ratStrings(outs[0].Data); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestKnownStopsAtRounding: an op that rounds ends the chain (an Add
// whose sum is no float32, Exp), so a comparison of its result stays
// refused as data-dependent even on recorded inputs (the rounding decides
// the comparison); without Options.Values nothing is known either. The
// comparison is LessOrEqual: Where(Less(a, b), X, Y) on computed floats is
// imported exactly (import_datacmp.go), so it would not show the refusal.
func TestKnownStopsAtRounding(t *testing.T) {
	x3 := floatsTensor(dims(3), -1, 1, 3)
	cmp := func(b *mg) *Model {
		return b.op("Constant", nil, ins("one"), aT("value", ftensor("", dims(), 1))).
			op("LessOrEqual", ins("a", "one"), ins("c")).op("Where", ins("c", "x", "x"), ins("y")).out("y").model()
	}
	cases := []struct {
		name string
		m    *Model
		vals map[string]*Tensor
	}{
		// x + 2⁻³⁰ is no float32 for x = ±1, 3: it rounds.
		{"Add that rounds", cmp(newMG(13).in("x", 3).op("Constant", nil, ins("t"), aT("value", ftensor("", dims(), float32(math.Ldexp(1, -30))))).
			op("Add", ins("x", "t"), ins("a"))), map[string]*Tensor{"x": x3}},
		{"Exp", cmp(newMG(13).in("x", 3).op("Exp", ins("x"), ins("a"))), map[string]*Tensor{"x": x3}},
		{"Neg of an input not recorded", cmp(newMG(13).in("x", 3).op("Neg", ins("x"), ins("a"))), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(tc.m, Options{Values: tc.vals})
			if err == nil || !strings.Contains(err.Error(), "data-dependent") {
				t.Fatalf("err = %v, want a data-dependent refusal", err)
			}
		})
	}
}

// TestKnownMaskedReduceMax: an input mask plus a constant causal −∞ mask
// (Add is exact here: the finite part of the causal mask is 0) is known;
// its row maximum holds −∞ and is known with no IR node: Equal decides on
// it, and a use as float data is refused. By hand: mask rows [1 −2] and
// [−3 4] plus causal [[0 −∞] [0 0]] = [[1 −∞] [−3 4]], maxima [1 4];
// Equal(·, 4) = [F T]; y = Where(that, v, Neg v) with v = [3 5]: [−3 5].
func TestKnownMaskedReduceMax(t *testing.T) {
	causal := kNinf(dims(2, 2), []float32{0, 0, 0, 0}, 1)
	base := func() *mg {
		return newMG(18).in("v", 2).in("m", 2, 2).initI("ax", dims(1), -1).
			op("Constant", nil, ins("c"), causal).op("Constant", nil, ins("four"), aT("value", ftensor("", dims(), 4))).
			op("Add", ins("m", "c"), ins("b")).op("ReduceMax", ins("b", "ax"), ins("rm"), aI("keepdims", 0))
	}
	vals := map[string]*Tensor{"v": floatsTensor(dims(2), 3, 5), "m": floatsTensor(dims(2, 2), 1, -2, -3, 4)}
	m := base().op("Equal", ins("rm", "four"), ins("e")).op("Neg", ins("v"), ins("nv")).op("Where", ins("e", "v", "nv"), ins("y")).out("y").model()
	_, outs := evalRat(t, m, Options{Values: vals}, vals["v"], vals["m"])
	if got := ratStrings(outs[0].Data); got != "[-3 5]" {
		t.Fatalf("got %s, want [-3 5]", got)
	}
	used := base().op("Add", ins("v", "rm"), ins("y")).out("y").model()
	if _, err := Import(used, Options{Values: vals}); err == nil || !strings.Contains(err.Error(), "not computed by the IR") {
		t.Fatalf("a known-only maximum used as data: err = %v, want a refusal", err)
	}
	if _, err := Import(m, Options{}); err == nil {
		t.Fatal("without recorded inputs the maximum of a value holding −∞ imported")
	}
}
