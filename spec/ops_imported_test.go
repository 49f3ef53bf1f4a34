package spec

import (
	"math"
	"math/big"
	"testing"
)

// vjpRat runs op's forward and VJP over Rat and returns the contributions
// as strings.
func vjpRat(t *testing.T, op string, a *Attrs, xs []Tensor[Rat], delta ...string) [][]string {
	t.Helper()
	p, err := Default[Rat]().Lookup(op)
	if err != nil {
		t.Fatal(err)
	}
	y, err := p.Apply(a, xs)
	if err != nil {
		t.Fatalf("%s forward: %v", op, err)
	}
	d := zerosOf[Rat](y.Shape)
	for i, s := range delta {
		r, err := ParseRat(s)
		if err != nil {
			t.Fatal(err)
		}
		d.Data[i] = r
	}
	gs, err := p.VJP(a, xs, y, d)
	if err != nil {
		t.Fatalf("%s vjp: %v", op, err)
	}
	out := make([][]string, len(gs))
	for i, g := range gs {
		for _, v := range g.Data {
			out[i] = append(out[i], v.String())
		}
	}
	return out
}

func ratTensor(t *testing.T, s Shape, vs ...string) Tensor[Rat] {
	x := zerosOf[Rat](s)
	for i, v := range vs {
		r, err := ParseRat(v)
		if err != nil {
			t.Fatal(err)
		}
		x.Data[i] = r
	}
	return x
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestImportedVJPHandDerived checks the VJPs of the primitives added for
// imported models against Jacobian rows worked out by hand.
func TestImportedVJPHandDerived(t *testing.T) {
	r := func(n, d int64) *big.Rat { return big.NewRat(n, d) }
	cases := []struct {
		name  string
		op    string
		a     *Attrs
		xs    []Tensor[Rat]
		delta []string
		want  [][]string
	}{
		// shrink′ = 1 strictly outside [−1/2, 1/2], 0 inside and at ±1/2.
		{"shrink kinks", "shrink", &Attrs{Lambd: r(1, 2), Bias: r(1, 4)}, []Tensor[Rat]{ratTensor(t, Shape{5}, "-1", "-1/2", "0", "1/2", "1")},
			[]string{"1", "1", "1", "1", "1"}, [][]string{{"1", "0", "0", "0", "1"}}},
		// sign′ := 0 everywhere, including 0.
		{"sign", "sign", nil, []Tensor[Rat]{ratTensor(t, Shape{3}, "-2", "0", "3")},
			[]string{"5", "7", "-1"}, [][]string{{"0", "0", "0"}}},
		// pad edge [2, 1] of (a, b): (a, a, a, b, b); δ = (1, 2, 3, 4, 5)
		// gives (1+2+3, 4+5).
		{"pad edge", "pad", &Attrs{Widths: []int{2, 1}, Mode: PadEdge}, []Tensor[Rat]{ratTensor(t, Shape{2}, "1", "2")},
			[]string{"1", "2", "3", "4", "5"}, [][]string{{"6", "9"}}},
		// pad reflect [2, 2] of (a, b, c): (c, b, a, b, c, b, a); δ = 1..7
		// gives a: 3+7, b: 2+4+6, c: 1+5.
		{"pad reflect", "pad", &Attrs{Widths: []int{2, 2}, Mode: PadReflect}, []Tensor[Rat]{ratTensor(t, Shape{3}, "1", "2", "3")},
			[]string{"1", "2", "3", "4", "5", "6", "7"}, [][]string{{"10", "12", "6"}}},
		// pad constant: the fill positions carry no gradient.
		{"pad constant", "pad", &Attrs{Widths: []int{1, 1}, Mode: PadConstant, Value: r(9, 1)}, []Tensor[Rat]{ratTensor(t, Shape{1}, "1")},
			[]string{"1", "2", "3"}, [][]string{{"2"}}},
		// gather [1, 1, 0] along axis 0: x1 gets δ0 + δ1, x0 gets δ2.
		{"gather repeated", "gather", &Attrs{Axis: 0, IndicesShape: Shape{3}, Indices: []int{1, 1, 0}}, []Tensor[Rat]{ratTensor(t, Shape{2}, "5", "6")},
			[]string{"1", "10", "100"}, [][]string{{"100", "11"}}},
		// instance_norm over x = (0, 0, 2, 2): μ = 1, σ = 1, x̂ = (−1, −1, 1, 1);
		// ∂y0/∂x_j = (δ0j − 1/4)/σ + (x_j − μ)/4 = (1/2, −1/2, 0, 0); ∂/∂γ = x̂0 = −1, ∂/∂β = 1.
		{"instance_norm row 0", "instance_norm", &Attrs{Eps: new(big.Rat)},
			[]Tensor[Rat]{ratTensor(t, Shape{1, 1, 2, 2}, "0", "0", "2", "2"), ratTensor(t, Shape{1}, "1"), ratTensor(t, Shape{1}, "0")},
			[]string{"1", "0", "0", "0"}, [][]string{{"1/2", "-1/2", "0", "0"}, {"-1"}, {"1"}}},
	}
	for _, c := range cases {
		got := vjpRat(t, c.op, c.a, c.xs, c.delta...)
		for i := range c.want {
			if !sameStrings(got[i], c.want[i]) {
				t.Errorf("%s: contribution %d = %v, want %v", c.name, i, got[i], c.want[i])
			}
		}
	}
}

// TestLRNAndMaskedSoftmaxHandDerived checks the non-exact primitives over
// F64 against hand-derived Jacobian rows.
func TestLRNAndMaskedSoftmaxHandDerived(t *testing.T) {
	vjp := func(op string, a *Attrs, x []float64, shape Shape, delta []float64) []float64 {
		p, _ := Default[F64]().Lookup(op)
		xt := zerosOf[F64](shape)
		for i, v := range x {
			xt.Data[i] = F64(v)
		}
		y, err := p.Apply(a, []Tensor[F64]{xt})
		if err != nil {
			t.Fatal(err)
		}
		d := zerosOf[F64](y.Shape)
		for i, v := range delta {
			d.Data[i] = F64(v)
		}
		g, err := p.VJP(a, []Tensor[F64]{xt}, y, d)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(g[0].Data))
		for i, v := range g[0].Data {
			out[i] = float64(v)
		}
		return out
	}
	close := func(name string, got, want []float64) {
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Errorf("%s: element %d = %v, want %v", name, i, got[i], want[i])
			}
		}
	}
	// LRN, C = 2, size 2 (window {c, c+1}), α = β = bias = 1, x = (1, 2):
	// d0 = 1 + (1+4)/2 = 7/2, d1 = 1 + 4/2 = 3; y0 = x0/d0, y1 = x1/d1.
	// ∂y0/∂x0 = 1/d0 − x0²/d0² = 10/49, ∂y0/∂x1 = −x0·x1/d0² = −8/49,
	// ∂y1/∂x0 = 0, ∂y1/∂x1 = 1/d1 − x1²/d1² = −1/9.
	a := &Attrs{Size: 2, Alpha: big.NewRat(1, 1), Beta: big.NewRat(1, 1), Bias: big.NewRat(1, 1)}
	close("lrn row 0", vjp("lrn", a, []float64{1, 2}, Shape{1, 2}, []float64{1, 0}), []float64{10.0 / 49, -8.0 / 49})
	close("lrn row 1", vjp("lrn", a, []float64{1, 2}, Shape{1, 2}, []float64{0, 1}), []float64{0, -1.0 / 9})
	// Masked softmax of (0, 5, 0) with the middle blocked: y = (1/2, 0, 1/2);
	// δ = (1, 7, 0): Σ δ·y = 1/2, g = y⊙(δ − 1/2) = (1/4, 0, −1/4).
	m := &Attrs{Mask: []bool{true, false, true}}
	close("hard_masked_softmax", vjp("hard_masked_softmax", m, []float64{0, 5, 0}, Shape{3}, []float64{1, 7, 0}), []float64{0.25, 0, -0.25})
}
