package spec

import (
	"math/big"
	"testing"
)

// TestRenormByHand: values and JVPs worked by hand on x = [[3, 1], [4, 0]]
// with Axis 1 (torch's dim = 1: the sub-tensors are the columns (3, 4),
// norm 5, and (1, 0), norm 1) and dx = [[1, 1], [0, 1]] (column tangents
// (1, 0) and (1, 1)). With s = min(1, c/ν), x̂ = x/ν and w the tie weight,
// dy = s·dx − w·(c/ν)·(x̂·dx)·x̂:
//
//   - c = 5 meets column 0 (w = ½, s = 1): (1, 0) − ½·(3/5)·(3/5, 4/5) =
//     (41/50, −6/25); column 1 is below c: dy = dx.
//   - c = 1 clamps column 0 (s = 1/5): (1/5)(1, 0) − (1/5)(3/5)(3/5, 4/5) =
//     (16/125, −12/125); column 1 is the tie: (1, 1) − ½·1·(1, 0) = (½, 1).
//   - c = 10: nothing clamps, y = x, dy = dx. c = 0: y = 0, dy = 0.
//   - a zero column with c = ½ keeps s = 1 (no division by ν = 0); column
//     (1, 0) is clamped to (½, 0) with dy = ½(1, 1) − ½·1·(1, 0) = (0, ½).
//
// The VJP equals the JVP (the Jacobian is symmetric).
func TestRenormByHand(t *testing.T) {
	p, _ := Default[Rat]().Lookup("renorm")
	cases := []struct {
		name   string
		c      *big.Rat
		x      string
		y, jvp string
	}{
		{"tie in column 0", big.NewRat(5, 1), "3 1 4 0", "3 1 4 0", "41/50 1 -6/25 1"},
		{"clamped, tie in column 1", big.NewRat(1, 1), "3 1 4 0", "3/5 1 4/5 0", "16/125 1/2 -12/125 1"},
		{"below", big.NewRat(10, 1), "3 1 4 0", "3 1 4 0", "1 1 0 1"},
		{"c = 0", new(big.Rat), "3 1 4 0", "0 0 0 0", "0 0 0 0"},
		{"zero column", big.NewRat(1, 2), "0 1 0 0", "0 1/2 0 0", "1 0 0 1/2"},
	}
	for _, c := range cases {
		a := &Attrs{Axis: 1, Maxnorm: c.c}
		x := Tensor[Rat]{Shape: Shape{2, 2}, Data: ratsOf(t, c.x)}
		dx := Tensor[Rat]{Shape: Shape{2, 2}, Data: ratsOf(t, "1 1 0 1")}
		y, err := p.Apply(a, []Tensor[Rat]{x})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !sameRats(y.Data, ratsOf(t, c.y)) {
			t.Errorf("%s: y = %v, want %s", c.name, y.Data, c.y)
		}
		j, err := p.JVP(a, []Tensor[Rat]{x}, y, []Tensor[Rat]{dx})
		if err != nil || !sameRats(j.Data, ratsOf(t, c.jvp)) {
			t.Errorf("%s: jvp = %v, %v; want %s", c.name, j.Data, err, c.jvp)
		}
		g, err := p.VJP(a, []Tensor[Rat]{x}, y, dx)
		if err != nil || !sameRats(g[0].Data, ratsOf(t, c.jvp)) {
			t.Errorf("%s: vjp = %v, %v; want %s", c.name, g, err, c.jvp)
		}
	}
	// An absent or negative maxnorm is refused.
	x := []Tensor[Rat]{{Shape: Shape{2}, Data: ratsOf(t, "3 4")}}
	for _, m := range []*big.Rat{nil, big.NewRat(-1, 1)} {
		if _, err := p.Apply(&Attrs{Maxnorm: m}, x); err == nil {
			t.Errorf("renorm with maxnorm %v succeeded", m)
		}
	}
}
