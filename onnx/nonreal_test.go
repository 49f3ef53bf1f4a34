package onnx

import (
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
)

// The expected values below are read off the operator texts by hand:
// Mod (opset 28, fmod = 0): NaN if an operand is NaN, the dividend ±∞ or
// the divisor ±0; a finite non-zero x over y = ±∞ is x when x and y have
// the same sign and y otherwise; 0 over ±∞ is ±0. With fmod = 1 (and C's
// fmod, Annex F) a finite x over ±∞ is x. An empty ReduceMax is −∞,
// ReduceMin +∞, ReduceLogSumExp log 0 = −∞, ReduceMax of BOOL false and
// ReduceMin of BOOL true (Or and And of nothing).

// nonrealCase is a model whose output statuses and real values are
// checked: want per output element (wReal: the IR's value, given in
// real), and a planted recorded value per Known element that must fail.
type nonrealCase struct {
	name   string
	m      *Model
	values bool // the inputs are recorded (Options.Values)
	in     []*Tensor
	want   []want
	real   map[int]string // exact value of a Real element
}

func TestNonrealOutputs(t *testing.T) {
	inf, nanv := float32(math.Inf(1)), float32(math.NaN())
	mod := func(opset, fmod int64) *Model {
		return newMG(opset).in("x", 9).in("y", 9).op("Mod", ins("x", "y"), ins("z"), aI("fmod", fmod)).out("z").model()
	}
	x := floatsTensor(dims(9), 0, -3, 3, -1, 1, inf, 1, nanv, 5.5)
	y := floatsTensor(dims(9), -2, inf, inf, -inf, -inf, 2, 0, 2, -2)
	red := func(op string) *Model {
		m := newMG(18).in("x", 2, 0, 3).op(op, ins("x", "axes"), ins("r"), aI("keepdims", 0))
		m.g.Initializers = append(m.g.Initializers, itensor("axes", []int64{1}, 1))
		return m.out("r").model()
	}
	empty := &Tensor{Dims: dims(2, 0, 3), DataType: Float}
	cases := []nonrealCase{
		{"Mod fmod=0: 0 mod −2, −3 mod +∞ = +∞, 3 mod +∞ = 3, −1 mod −∞ = −1, 1 mod −∞ = −∞, ∞ mod 2, 1 mod 0, NaN mod 2, 5.5 mod −2 = −0.5",
			mod(28, 0), true, []*Tensor{x, y},
			[]want{wReal, wPInf, wReal, wReal, wNInf, wNaN, wNaN, wNaN, wReal},
			map[int]string{0: "0", 2: "3", 3: "-1", 8: "-1/2"}},
		{"Mod fmod=1: a finite x over ±∞ is x; 5.5 fmod −2 = 1.5",
			mod(13, 1), true, []*Tensor{x, y},
			[]want{wReal, wReal, wReal, wReal, wReal, wNaN, wNaN, wNaN, wReal},
			map[int]string{0: "0", 1: "-3", 2: "3", 3: "-1", 4: "1", 8: "3/2"}},
		{"ReduceMax over an empty axis is −∞", red("ReduceMax"), false, []*Tensor{empty}, []want{wNInf, wNInf, wNInf, wNInf, wNInf, wNInf}, nil},
		{"ReduceMin over an empty axis is +∞", red("ReduceMin"), false, []*Tensor{empty}, []want{wPInf, wPInf, wPInf, wPInf, wPInf, wPInf}, nil},
		{"ReduceLogSumExp over an empty axis is log 0 = −∞", red("ReduceLogSumExp"), false, []*Tensor{empty}, []want{wNInf, wNInf, wNInf, wNInf, wNInf, wNInf}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, fl, err := OptionsFor(c.m, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if c.values {
				o.Values = map[string]*Tensor{"x": c.in[0], "y": c.in[1]}
			}
			im, err := Import(c.m, o)
			if err != nil {
				t.Fatal(err)
			}
			if (im.NonReal() == "") == hasSpecial(c.want) {
				t.Errorf("NonReal() = %q with specials %v", im.NonReal(), hasSpecial(c.want))
			}
			sp, rep, err := im.Analyze(c.m, fl)
			if err != nil {
				t.Fatal(err)
			}
			got := sp.Outputs[0]
			if !hasSpecial(c.want) {
				got = make([]Special, len(c.want))
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d statuses, want %d", len(got), len(c.want))
			}
			for j, w := range c.want {
				g := got[j]
				if g.Status != w.st || (w.st == Known && !(g.Value == w.v || (math.IsNaN(w.v) && math.IsNaN(g.Value)))) {
					t.Errorf("element %d: %+v, want %+v", j, g, w)
				}
				if w.st != Known {
					continue
				}
				// The required special holds; a planted finite value,
				// the other infinity, and NaN where ±∞ is due fail.
				if h, ok := g.Judge(w.v); !ok || !h {
					t.Errorf("element %d: the required %v does not hold", j, w.v)
				}
				for _, p := range []float64{0, 1, -w.v, math.NaN()} {
					if p == w.v || (math.IsNaN(p) && math.IsNaN(w.v)) || (math.IsNaN(-w.v) && math.IsNaN(p)) {
						continue
					}
					if h, ok := g.Judge(p); !ok || h {
						t.Errorf("element %d: planted %v where %v is due: holds=%v decided=%v, want FAILS", j, p, w.v, h, ok)
					}
				}
			}
			if len(c.real) > 0 {
				x, err := im.PackInputs(rep)
				if err != nil {
					t.Fatal(err)
				}
				y, err := irsem.Denote(im.Graph, im.Payload, x)
				if err != nil {
					t.Fatal(err)
				}
				for j, r := range c.real {
					if s := y.Data[j].String(); s != r {
						t.Errorf("element %d: the IR gives %s, want %s", j, s, r)
					}
				}
			}
		})
	}
}

func hasSpecial(ws []want) bool {
	for _, w := range ws {
		if w.st != Real {
			return true
		}
	}
	return false
}

// TestNonrealBool: ReduceMax of an empty BOOL axis is false, ReduceMin
// true: exact outputs (0 and 1), not specials.
func TestNonrealBool(t *testing.T) {
	for _, tc := range []struct {
		op   string
		want int64
	}{{"ReduceMax", 0}, {"ReduceMin", 1}} {
		m := newMG(20).inT("x", Bool, 2, 0, 3).in("f", 1).op(tc.op, ins("x", "axes"), ins("r"), aI("keepdims", 1)).out("r", "f")
		m.g.Initializers = append(m.g.Initializers, itensor("axes", []int64{1}, 1))
		im, err := Import(m.model(), Options{Bind: map[string]*Tensor{"x": {Dims: dims(2, 0, 3), DataType: Bool}}})
		if err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		if len(im.Exact) != 1 || len(im.Exact[0].Values) != 6 {
			t.Fatalf("%s: exact outputs %+v, want one of 6 elements", tc.op, im.Exact)
		}
		for j, v := range im.Exact[0].Values {
			if v != tc.want {
				t.Errorf("%s element %d: %d, want %d", tc.op, j, v, tc.want)
			}
		}
	}
}

// TestNonrealRefusedAsData: a value holding a special folded at import
// is a graph output only; a node reading it is refused with one line
// naming the element, and so is an integer empty ReduceMax.
func TestNonrealRefusedAsData(t *testing.T) {
	m := newMG(18).in("x", 2, 0, 3).op("ReduceMax", ins("x", "axes"), ins("r"), aI("keepdims", 0)).op("Relu", ins("r"), ins("y"))
	m.g.Initializers = append(m.g.Initializers, itensor("axes", []int64{1}, 1))
	_, err := Import(m.out("y").model(), Options{})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "element 0") || !strings.Contains(err.Error(), "Inf") {
		t.Errorf("Relu of an empty ReduceMax: %v, want one line naming element 0 and -Inf", err)
	}
	mi := newMG(18).inT("x", Int32, 2, 0, 3).in("f", 1).op("ReduceMax", ins("x", "axes"), ins("r"), aI("keepdims", 0)).out("r", "f")
	mi.g.Initializers = append(mi.g.Initializers, itensor("axes", []int64{1}, 1))
	if _, err := Import(mi.model(), Options{Bind: map[string]*Tensor{"x": {Dims: dims(2, 0, 3), DataType: Int32}}}); err == nil || !strings.Contains(err.Error(), "INT32") {
		t.Errorf("ReduceMax of an empty INT32 axis: %v, want a refusal naming the type", err)
	}
}
