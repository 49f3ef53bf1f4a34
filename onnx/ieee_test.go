package onnx

import (
	"math"
	"strings"
	"testing"
)

// The expected statuses below are IEEE 754 / C99 Annex F facts written by
// hand (sqrt(−1) = NaN, log(0) = −∞, 1/0 = +∞, −1/0 = −∞, 0/0 = NaN,
// max(−∞, 0) = 0, NaN + x = NaN), not computed by the code under test.

type want struct {
	st Status
	v  float64 // for Known
}

var (
	wReal    = want{st: Real}
	wUnknown = want{st: Unknown}
	wNaN     = want{st: Known, v: math.NaN()}
	wPInf    = want{st: Known, v: math.Inf(1)}
	wNInf    = want{st: Known, v: math.Inf(-1)}
	wZero    = want{st: Known, v: 0}
)

func TestAnalyze(t *testing.T) {
	inf, nanv := float32(math.Inf(1)), float32(math.NaN())
	cases := []struct {
		name     string
		m        *Model
		in       []*Tensor
		want     [][]want // per output; nil: every element Real
		replaced [][]float32
		partial  string // a substring of Specials.Partial ("" when none)
	}{
		{"sqrt of a negative input is NaN, the others keep the IR",
			newMG(13).in("x", 3).op("Sqrt", ins("x"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(3), -1, 4, 0)},
			[][]want{{wNaN, wReal, wReal}}, [][]float32{{1, 4, 0}}, ""},
		{"log of 0 and of a negative",
			newMG(13).in("x", 3).op("Log", ins("x"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(3), 0, -2, 1)},
			[][]want{{wNInf, wNaN, wReal}}, [][]float32{{1, 1, 1}}, ""},
		{"division by wZero: ±∞ and 0/0",
			newMG(13).in("x", 4).in("d", 4).op("Div", ins("x", "d"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(4), 1, -1, 0, 2), floatsTensor(dims(4), 0, 0, 0, 1)},
			[][]want{{wPInf, wNInf, wNaN, wReal}}, [][]float32{{1, 1, 1, 2}, {1, 1, 1, 1}}, ""},
		{"relu of NaN, +∞, −∞ and 1",
			newMG(13).in("x", 4).op("Relu", ins("x"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(4), nanv, inf, -inf, 1)},
			[][]want{{wNaN, wPInf, wZero, wReal}}, [][]float32{{1, 1, 1, 1}}, ""},
		{"NaN travels through Add with a computed value; a replaced element is Unknown elsewhere",
			newMG(13).in("x", 2).op("Sqrt", ins("x"), ins("s")).op("Exp", ins("x"), ins("e")).op("Add", ins("s", "e"), ins("y")).op("Neg", ins("x"), ins("z")).out("y", "z").model(),
			[]*Tensor{floatsTensor(dims(2), -1, 4)},
			[][]want{{wNaN, wReal}, {wUnknown, wReal}}, [][]float32{{1, 4}}, ""},
		{"a special entering a reduction makes it Unknown",
			newMG(13).in("x", 2).op("Sqrt", ins("x"), ins("s")).op("ReduceSum", ins("s"), ins("y"), aI("keepdims", 1)).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), -1, 4)},
			[][]want{{wUnknown}}, [][]float32{{1, 4}}, ""},
		{"exp(−∞) = 0 is exact; times a computed value it is Unknown",
			newMG(13).in("x", 2).op("Exp", ins("x"), ins("e")).op("Tanh", ins("x"), ins("h")).op("Mul", ins("e", "h"), ins("y")).out("e", "y").model(),
			[]*Tensor{floatsTensor(dims(2), -inf, 0.5)},
			[][]want{{wZero, wReal}, {wUnknown, wReal}}, [][]float32{{1, 0.5}}, ""},
		{"sqrt of a computed value: Partial, nothing decided",
			newMG(13).in("x", 2).init("c", dims(1), 1).op("Sub", ins("x", "c"), ins("d")).op("Sqrt", ins("d"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), 0.5, 4)},
			nil, [][]float32{{0.5, 4}}, `"y" (Sqrt)`},
		{"broadcast: one NaN of a [1] operand spoils the row",
			newMG(13).in("x", 1).in("w", 2, 2).op("Sqrt", ins("x"), ins("s")).op("Mul", ins("w", "s"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(1), -4), floatsTensor(dims(2, 2), 1, 2, 3, 4)},
			[][]want{{wNaN, wNaN, wNaN, wNaN}}, [][]float32{{1}, {1, 2, 3, 4}}, ""},
		{"CastLike to a float type keeps NaN and ±∞",
			newMG(15).in("x", 3).init("l", dims(1), 0).op("CastLike", ins("x", "l"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(3), nanv, -inf, 2)},
			[][]want{{wNaN, wNInf, wReal}}, [][]float32{{1, 1, 2}}, ""},
		{"a computed numerator over a constant divisor is not partial",
			newMG(13).in("x", 2).init("c", dims(1), 4).op("Exp", ins("x"), ins("e")).op("Div", ins("e", "c"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), 0.5, 4)},
			nil, [][]float32{{0.5, 4}}, ""},
		{"a computed divisor is partial",
			newMG(13).in("x", 2).op("Exp", ins("x"), ins("e")).op("Div", ins("x", "e"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), 0.5, 4)},
			nil, [][]float32{{0.5, 4}}, `"y" (Div)`},
		{"nothing special: nothing replaced",
			newMG(13).in("x", 2).op("Sqrt", ins("x"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), 1, 4)},
			nil, [][]float32{{1, 4}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, fl, err := OptionsFor(c.m, c.in)
			if err != nil {
				t.Fatal(err)
			}
			im, err := Import(c.m, o)
			if err != nil {
				t.Fatal(err)
			}
			sp, rep, err := im.Analyze(c.m, fl)
			if err != nil {
				t.Fatal(err)
			}
			if (c.partial == "") != (sp.Partial == "") || !strings.Contains(sp.Partial, c.partial) {
				t.Errorf("Partial = %q, want %q", sp.Partial, c.partial)
			}
			for i := range im.Outputs {
				got := sp.Outputs[i]
				if c.want == nil || c.want[i] == nil {
					if got != nil {
						t.Errorf("output %d: %v, want every element Real", i, got)
					}
					continue
				}
				if len(got) != len(c.want[i]) {
					t.Fatalf("output %d: %d statuses, want %d", i, len(got), len(c.want[i]))
				}
				for j, w := range c.want[i] {
					g := got[j]
					ok := g.Status == w.st && (w.st != Known || g.Value == w.v || (math.IsNaN(w.v) && math.IsNaN(g.Value)))
					if !ok {
						t.Errorf("output %d element %d: %+v, want %+v", i, j, g, w)
					}
				}
			}
			for i, r := range c.replaced {
				for j, v := range r {
					if rep[i].Float32[j] != v {
						t.Errorf("input %d element %d replaced by %v, want %v", i, j, rep[i].Float32[j], v)
					}
				}
			}
			// The caller's tensors are never changed.
			for i, tt := range c.in {
				if tt == rep[i] {
					continue
				}
				for j := range tt.Float32 {
					if rep[i].Float32[j] != tt.Float32[j] && tt.Float32[j] == c.replaced[i][j] {
						t.Errorf("input %d element %d: the caller's tensor was changed", i, j)
					}
				}
			}
			// The replaced input packs (every element finite).
			if _, err := im.PackInputs(rep); err != nil {
				t.Errorf("PackInputs of the replaced input: %v", err)
			}
		})
	}
}

// TestSpecialJudge: a Known element holds only on its own value.
func TestSpecialJudge(t *testing.T) {
	cases := []struct {
		s         Special
		rec       float64
		holds, ok bool
	}{
		{Special{Status: Known, Value: math.NaN()}, math.NaN(), true, true},
		{Special{Status: Known, Value: math.NaN()}, 0, false, true}, // a number where NaN is required
		{Special{Status: Known, Value: math.Inf(-1)}, math.Inf(-1), true, true},
		{Special{Status: Known, Value: math.Inf(-1)}, math.Inf(1), false, true},
		{Special{Status: Known, Value: math.Inf(1)}, math.NaN(), false, true},
		{Special{Status: Known, Value: 0}, math.Copysign(0, -1), true, true},
		{Special{Status: Known, Value: 0}, 1e-45, false, true},
		{Special{Status: Unknown, Value: 0}, math.NaN(), false, false},
		{Special{Status: Real, Value: 0}, 0, false, false},
	}
	for _, c := range cases {
		h, ok := c.s.Judge(c.rec)
		if h != c.holds || ok != c.ok {
			t.Errorf("%+v.Judge(%v) = %v, %v; want %v, %v", c.s, c.rec, h, ok, c.holds, c.ok)
		}
	}
}
