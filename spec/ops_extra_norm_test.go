package spec

import (
	"math/big"
	"testing"
)

// TestL2NormalizeByHand: values and JVPs worked by hand on the lane
// (3, 4) (norm 5) with dx = (1, 0): ε = 0 gives (I − y yᵀ)/5 dx =
// (16/125, −12/125); ε = 5 is the tie, w = ½: (41/250, −6/125); ε = 10
// clamps, dy = dx/10; a zero lane with ε = 1/2 gives y = 0 and dy = 2dx
// (not torch's NaN). The VJP equals the JVP (the Jacobian is symmetric).
func TestL2NormalizeByHand(t *testing.T) {
	p, _ := Default[Rat]().Lookup("l2_normalize")
	cases := []struct {
		name   string
		eps    *big.Rat
		x      string
		y, jvp string
	}{
		{"eps 0", nil, "3 4", "3/5 4/5", "16/125 -12/125"},
		{"tie", big.NewRat(5, 1), "3 4", "3/5 4/5", "41/250 -6/125"},
		{"clamped", big.NewRat(10, 1), "3 4", "3/10 2/5", "1/10 0"},
		{"zero lane", big.NewRat(1, 2), "0 0", "0 0", "2 0"},
	}
	for _, c := range cases {
		a := &Attrs{Axis: 0, Eps: c.eps}
		x := Tensor[Rat]{Shape: Shape{2}, Data: ratsOf(t, c.x)}
		dx := Tensor[Rat]{Shape: Shape{2}, Data: ratsOf(t, "1 0")}
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
	// A zero lane with ε = 0 is refused, not NaN.
	if _, err := p.Apply(&Attrs{}, []Tensor[Rat]{{Shape: Shape{2}, Data: ratsOf(t, "0 0")}}); err == nil {
		t.Error("l2_normalize of a zero lane with ε = 0 succeeded")
	}
}
