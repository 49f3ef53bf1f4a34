package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestSquaresAreOneValue: a product is a square only when both operands
// are one runtime value (the same sum, or a copy of it). The planted
// faults are the other rows: two distinct values with identical fields,
// and a value times its negation, whose products can be negative — a
// rule that keyed on equal fields, or kept the id through Neg, would
// call them squares and claim a lower bound 0 that −1 (or −d²) breaks.
func TestSquaresAreOneValue(t *testing.T) {
	a, b := Value(spec.Interval{Lo: -1, Hi: 1}, 0), Value(spec.Interval{Lo: -1, Hi: 1}, 0)
	d := a.Sub(Value(spec.Point(0.25), 0)) // [−1.25, 0.75]
	cp := d
	for _, tc := range []struct {
		name   string
		p      Err
		square bool
	}{
		{"d·d", d.Mul(d), true},
		{"a copy of d times d", cp.Mul(d), true},
		{"two values with equal fields", a.Mul(b), false},
		{"−d·d", d.Neg().Mul(d), false},
		{"d·(d − 0)", d.Mul(d.Sub(Err{}.FromInt(0))), true}, // subtracting an exact 0 is d itself
	} {
		x := tc.p.close()
		if tc.square {
			if x.x.Lo < 0 || x.lower() < 0 {
				t.Errorf("%s: a square with enclosure %v, lower bound %g", tc.name, x.x, x.lower())
			}
			continue
		}
		if x.x.Lo > -1 || x.lower() >= 0 {
			t.Errorf("%s: not a square, yet enclosure %v, lower bound %g", tc.name, x.x, x.lower())
		}
	}
	ai, bi := adj{iv: spec.Interval{Lo: -1, Hi: 1}}, adj{iv: spec.Interval{Lo: -1, Hi: 1}}
	di := ai.Sub(adj{iv: spec.Point(0.25)})
	if got := di.Mul(di).iv; got.Lo != 0 {
		t.Errorf("adj d·d = %v, want lower end 0", got)
	}
	if got := ai.Mul(bi).iv; got.Lo > -1 {
		t.Errorf("adj: two boxes with equal fields multiply to %v", got)
	}
	if got := di.Neg().Mul(di).iv; got.Lo >= 0 {
		t.Errorf("adj −d·d = %v", got)
	}
}

// TestLayerNormDivisor: a layer norm over a lane whose values lie within
// their error bounds of each other — every deviation's hull straddles 0,
// so the variance's hull reaches below 0 and √(σ² + ε) to 0 without the
// lower bound of the computed sum of squares — gets a finite bound, and
// it holds: every float32 evaluation of the registry's formula (left
// folds, spec.F32) at inputs drawn within the bounds lies within it of
// the exact value (enclosed over spec.Interval at the exact inputs), and
// so does every summation order the model allows (the tree scalar:
// reversed, pairwise, random, 8 accumulators; with and without fused
// multiply-adds). The control row is a divisor with no such fact (a sum of products of
// distinct values plus ε): still +∞.
func TestLayerNormDivisor(t *testing.T) {
	ln, err := spec.Default[Err]().Lookup("layer_norm")
	if err != nil {
		t.Fatal(err)
	}
	lnF, _ := spec.Default[spec.F32]().Lookup("layer_norm")
	lnI, _ := spec.Default[spec.Interval]().Lookup("layer_norm")
	lnT, _ := spec.Default[tree]().Lookup("layer_norm")
	defer func() { treePolicy, treeFMA = polLeft, false }()
	r := rand.New(rand.NewPCG(21, 6))
	for _, tc := range []struct {
		name string
		x    []float64
		e    float64
	}{
		{"near-constant lane", []float64{1, 1 + 0x1p-10, 1 - 0x1p-10, 1}, 0x1p-9},
		{"constant lane", []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 0x1p-12},
		{"spread lane", []float64{-1, 0.5, 2, 0.25}, 0x1p-6},
	} {
		n := len(tc.x)
		xs := spec.Tensor[Err]{Shape: spec.Shape{n}, Data: make([]Err, n)}
		xi := spec.Tensor[spec.Interval]{Shape: spec.Shape{n}, Data: make([]spec.Interval, n)}
		for i, v := range tc.x {
			xs.Data[i] = Value(spec.Point(v), tc.e)
			xi.Data[i] = spec.Point(v)
		}
		y, err := ln.Apply(&spec.Attrs{}, []spec.Tensor[Err]{xs})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := lnI.Apply(&spec.Attrs{}, []spec.Tensor[spec.Interval]{xi})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range y.Data {
			if b := v.Bound(); math.IsInf(b, 1) {
				t.Fatalf("%s: element %d unbounded", tc.name, i)
			}
		}
		check := func(how string, i int, got float64) {
			x := ex.Data[i]
			d := max(x.Lo-got, got-x.Hi, 0)
			if !(d <= y.Data[i].Bound()) {
				t.Fatalf("%s, %s: element %d: float32 %g is %g from [%g, %g], bound %g", tc.name, how, i, got, d, x.Lo, x.Hi, y.Data[i].Bound())
			}
		}
		for k := range 300 {
			xf := spec.Tensor[spec.F32]{Shape: spec.Shape{n}, Data: make([]spec.F32, n)}
			xt := spec.Tensor[tree]{Shape: spec.Shape{n}, Data: make([]tree, n)}
			for i, v := range tc.x {
				f := float32(v + tc.e*(2*r.Float64()-1)*0.999)
				xf.Data[i] = spec.F32(f)
				xt.Data[i] = tree{}.FromRat(new(big.Rat).SetFloat64(float64(f)))
			}
			yf, err := lnF.Apply(&spec.Attrs{}, []spec.Tensor[spec.F32]{xf})
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range yf.Data {
				check("left folds", i, float64(v))
			}
			if k%10 != 0 {
				continue
			}
			for _, pol := range []policy{polLeft, polReverse, polPairwise, polRandom, polBlocked8} {
				for _, fma := range []bool{false, true} {
					treePolicy, treeFMA = pol, fma
					yt, err := lnT.Apply(&spec.Attrs{}, []spec.Tensor[tree]{xt})
					if err != nil {
						t.Fatal(err)
					}
					for i, v := range yt.Data {
						check(fmt.Sprintf("policy %d, fma %v", pol, fma), i, float64(float32(v.val())))
					}
				}
			}
		}
	}
	// The control: the same shape of divisor without a square.
	a, b := Value(spec.Interval{Lo: -1, Hi: 1}, 0), Value(spec.Interval{Lo: -1, Hi: 1}, 0)
	eps := Err{}.FromRat(big.NewRat(1, 100000))
	s, _ := a.Mul(b).Add(eps).Sqrt()
	if q, _ := (Err{}).FromInt(1).Div(s); !math.IsInf(q.Bound(), 1) {
		t.Fatalf("1/√(a·b + ε) for distinct a, b ∈ [−1, 1] bounded by %g", q.Bound())
	}
	d := a.Sub(Value(spec.Point(0.25), 0))
	s, _ = d.Mul(d).Add(eps).Sqrt()
	q, _ := (Err{}).FromInt(1).Div(s)
	if b := q.Bound(); math.IsInf(b, 1) || q.lower() < 0 {
		t.Fatalf("1/√(d·d + ε): bound %g, lower bound %g", b, q.lower())
	}
}
