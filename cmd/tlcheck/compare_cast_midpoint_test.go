package main

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// midpointCase is mixedCases' d2f graph (h = MatMul(x, W1) in DOUBLE, y =
// MatMul(Cast(h, FLOAT), W2) in FLOAT) with W1 solved so that every
// exact h element lies within a few binary64 ulps of a midpoint of
// adjacent binary32 values in [1, 2) (an odd multiple of 2^-24): W1's
// first row is fixed and its two other rows solve, column by column, the
// 2×2 system that puts both rows of h on the midpoints, each weight then
// rounded to binary64. So the DOUBLE evaluations of h land on either side
// of the midpoint and the cast's input box straddles it (fpbound's
// round_cast.go, "Casts in the first-order bound").
func midpointCase() (mixedCase, [][]*big.Rat) {
	c := mixedCase{name: "d2f-midpoint", inD: true, w1D: true, outputDouble: false,
		x:  []float64{0.1, -0.7, 1.3, 2.9, 0.3, -1.1},
		w2: []float64{0.75, -1.5, 0.375, 2.25, -0.625, 1.125, 0.5, -0.25}}
	w0 := []float64{0.2, -0.3, 0.7, 1.1}
	c.w1 = make([]float64, 12)
	copy(c.w1, w0)
	r := func(f float64) *big.Rat { return new(big.Rat).SetFloat64(f) }
	mid := func(k int64) *big.Rat { return big.NewRat(1<<24+2*k+1, 1<<24) }
	x := c.x
	for j := 0; j < 4; j++ {
		// Rows i = 0, 1: x[i,1]·a + x[i,2]·b = μ_ij − x[i,0]·w0_j.
		rhs := [2]*big.Rat{}
		for i := 0; i < 2; i++ {
			rhs[i] = new(big.Rat).Sub(mid(int64(1000003*(j+1)+7919*i)), new(big.Rat).Mul(r(x[3*i]), r(w0[j])))
		}
		a11, a12, a21, a22 := r(x[1]), r(x[2]), r(x[4]), r(x[5])
		det := new(big.Rat).Sub(new(big.Rat).Mul(a11, a22), new(big.Rat).Mul(a12, a21))
		a := new(big.Rat).Quo(new(big.Rat).Sub(new(big.Rat).Mul(rhs[0], a22), new(big.Rat).Mul(a12, rhs[1])), det)
		b := new(big.Rat).Quo(new(big.Rat).Sub(new(big.Rat).Mul(a11, rhs[1]), new(big.Rat).Mul(a21, rhs[0])), det)
		c.w1[4+j], _ = a.Float64()
		c.w1[8+j], _ = b.Float64()
	}
	exact := make([][]*big.Rat, 2)
	for i := 0; i < 2; i++ {
		exact[i] = make([]*big.Rat, 4)
		for j := 0; j < 4; j++ {
			s := new(big.Rat)
			for q := 0; q < 3; q++ {
				s.Add(s, new(big.Rat).Mul(r(x[3*i+q]), r(c.w1[4*q+j])))
			}
			exact[i][j] = s
		}
	}
	return c, exact
}

// TestCompareMixedCastMidpoint: through the CLI, the four Go evaluation
// orders of midpointCase hold, though some of them round h to the other
// side of a binary32 midpoint than the exact value does (checked here:
// the exact reference rounds, as ONNX's Cast); the first-order bound is
// finite (it was +∞, the cast a discontinuity, before cast37); a fault
// one binary32 ulp past exact.Hi + the per-node bound of element 0 fails.
func TestCompareMixedCastMidpoint(t *testing.T) {
	c, exact := midpointCase()
	crossed := 0
	for order := 0; order < 4; order++ {
		h := matmulIn(c.x, c.w1, 2, 3, 4, true, order)
		for i, v := range h {
			want, _ := spec.FormatBinary32.RoundRat(exact[i/4][i%4])
			if new(big.Rat).SetFloat64(float64(float32(v))).Cmp(want) != 0 {
				crossed++
			}
		}
		m, d := c.write(t, c.evaluate(order))
		code, out, errs := runCmd("compare", "--onnx", m, "--data", d)
		if code != 0 || !strings.Contains(out, "4 hold, 0 fail, 0 inconclusive") || !strings.Contains(out, "format: binary32 and binary64 mixed") {
			t.Fatalf("order %d: exit %d, want 0 with 4 holding and the mixed format named; stderr %s; stdout %s", order, code, errs, out)
		}
	}
	if crossed == 0 {
		t.Fatalf("no evaluation order rounds h across a midpoint: the case exercises nothing")
	}
	m, d := c.write(t, c.evaluate(0))
	lm, err := model.LoadONNX(m, []string{d + "/input_0.pb"}, model.Options{Recorded: true})
	if err != nil {
		t.Fatal(err)
	}
	narrow := make([]bool, len(lm.Graph.Nodes))
	for j, ty := range lm.ONNX.Imported.Types {
		narrow[j] = ty != onnx.Double
	}
	sh, err := fpbound.SharpBoundsMixed(lm.Graph, lm.Payload, lm.Input, narrow, fpbound.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sh {
		if math.IsInf(s.FirstOrder, 1) {
			t.Errorf("element %d: no first-order bound: %s", i, s.FirstOrderReason)
		}
	}
	en := sh[0].Enclosure
	rec := c.evaluate(0)
	rec[0] = mixedBeyond(en.Exact.Hi, en.Bound, false)
	m, d = c.write(t, rec)
	code, out, errs := runCmd("compare", "--onnx", m, "--data", d)
	if code != 1 || !strings.Contains(out, "1 fail") {
		t.Fatalf("planted %v (exact ≤ %v, bound %v): exit %d, want 1 with one failing element; stderr %s; stdout %s", rec[0], en.Exact.Hi, en.Bound, code, errs, out)
	}
	t.Logf("%d of 32 evaluated h elements (8 × 4 orders) rounded across a midpoint; element 0: bound %.3g (first-order %.3g, classic %.3g); planted %.9g, %.3g beyond exact.Hi + bound (%.2g of the bound)",
		crossed, en.Bound, sh[0].FirstOrder, sh[0].Classic, rec[0], rec[0]-en.Exact.Hi-en.Bound, (rec[0]-en.Exact.Hi-en.Bound)/en.Bound)
}
