package spec

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

// ulpsApart is the distance of a and b in float64 ulps (of the larger).
func ulpsApart(a, b float64) float64 {
	if a == b {
		return 0
	}
	u := math.Nextafter(math.Max(math.Abs(a), math.Abs(b)), math.Inf(1)) - math.Max(math.Abs(a), math.Abs(b))
	return math.Abs(a-b) / u
}

// TestAsinhAgainstLibrary: the registry's formula over F64 is within a
// few ulps of Go's math.Asinh (an independent implementation, FreeBSD's)
// across magnitudes and signs, including x ≪ 0, where ln(x + √(x²+1))
// would cancel, and tiny x, where it would lose every digit.
func TestAsinhAgainstLibrary(t *testing.T) {
	p, _ := Default[F64]().Lookup("asinh")
	for _, x := range []float64{0, 1e-300, -1e-17, 1e-8, -3e-4, 0.5, -0.75, 1, -2, 10, -1e4, 3e7, -1e150} {
		y, err := p.Apply(nil, []Tensor[F64]{{Shape: Shape{}, Data: []F64{F64(x)}}})
		if err != nil {
			t.Fatalf("asinh(%g): %v", x, err)
		}
		if d := ulpsApart(float64(y.Data[0]), math.Asinh(x)); d > 4 {
			t.Errorf("asinh(%g) = %v, math.Asinh %v: %.1f ulps apart", x, y.Data[0], math.Asinh(x), d)
		}
		// The derivative against a central difference of math.Asinh.
		if math.Abs(x) < 1e3 {
			h := 1e-6 * math.Max(1, math.Abs(x))
			fd := (math.Asinh(x+h) - math.Asinh(x-h)) / (2 * h)
			g, _ := asinhDeriv(F64(x))
			if math.Abs(float64(g)-fd) > 1e-8 {
				t.Errorf("asinh′(%g) = %v, central difference %v", x, g, fd)
			}
		}
	}
}

// TestAsinhDualAtZero: forward mode through the forward rule gives
// asinh′(0) = 1 (max and min split the tie ½/½), the declared derivative.
func TestAsinhDualAtZero(t *testing.T) {
	for _, x := range []float64{0, 0.25, -3} {
		y, err := AsinhOf(MakeDual(F64(x), F64(1)))
		if err != nil {
			t.Fatal(err)
		}
		g, _ := asinhDeriv(F64(x))
		if math.Abs(float64(y.Du-g)) > 1e-15 {
			t.Errorf("dual asinh at %g: tangent %v, want %v", x, y.Du, g)
		}
	}
	// Over Dual[Rat] at 0 the forward value is inexact (log1p), so only
	// the derivative rule is rational: 1/√(1+0) = 1 exactly.
	if g, err := asinhDeriv(NewRat(0, 1)); err != nil || !g.Same(NewRat(1, 1)) {
		t.Errorf("asinh′(0) over Rat = %v, %v; want 1", g, err)
	}
	if _, err := AsinhOf(NewRat(1, 2)); err == nil {
		t.Error("asinh over Rat succeeded; it has no exact value")
	}
}

// TestAsinhIntervalEncloses: the interval enclosure contains the
// library's value at its endpoints and at interior points, and the
// formula over Interval (the path of every other interval-like scalar)
// encloses it too.
func TestAsinhIntervalEncloses(t *testing.T) {
	for _, c := range [][2]float64{{-3, 2}, {0, 0}, {1e-9, 1e-8}, {-1e6, -5}, {0.5, 0.5}} {
		iv := mkInterval(c[0], c[1])
		e, err := iv.Asinh()
		if err != nil {
			t.Fatal(err)
		}
		f, err := asinhNonNeg(iv.Max(Interval{}))
		if err != nil {
			t.Fatal(err)
		}
		m, err := asinhNonNeg(iv.Min(Interval{}).Neg())
		if err != nil {
			t.Fatal(err)
		}
		generic := f.Sub(m)
		for k := 0; k <= 8; k++ {
			v := c[0] + (c[1]-c[0])*float64(k)/8
			r := new(big.Rat).SetFloat64(math.Asinh(v))
			// math.Asinh is within an ulp or two of the real value; the
			// enclosures are 4 ulps wider, so they must hold its value.
			if !e.Contains(r) || !generic.Contains(r) {
				t.Errorf("asinh(%g) = %g outside %v or the formula's %v", v, math.Asinh(v), e, generic)
			}
		}
	}
}

// TestPowAgainstLibrary: forward, JVP and VJP of pow over F64 against
// math.Pow and the closed-form partials, and the refusal of a base ≤ 0.
func TestPowAgainstLibrary(t *testing.T) {
	p, _ := Default[F64]().Lookup("pow")
	xs := []F64{0.5, 2, 3, 1e-3, 7}
	ys := []F64{3, -0.5, 1.5, 2, 0}
	x := Tensor[F64]{Shape: Shape{5}, Data: xs}
	e := Tensor[F64]{Shape: Shape{5}, Data: ys}
	z, err := p.Apply(nil, []Tensor[F64]{x, e})
	if err != nil {
		t.Fatal(err)
	}
	dx := Tensor[F64]{Shape: Shape{5}, Data: []F64{1, 0, 1, 0, 1}}
	dy := Tensor[F64]{Shape: Shape{5}, Data: []F64{0, 1, 1, 0, 1}}
	jv, err := p.JVP(nil, []Tensor[F64]{x, e}, z, []Tensor[F64]{dx, dy})
	if err != nil {
		t.Fatal(err)
	}
	d := Tensor[F64]{Shape: Shape{5}, Data: []F64{1, 2, -1, 1, 1}}
	vj, err := p.VJP(nil, []Tensor[F64]{x, e}, z, d)
	if err != nil {
		t.Fatal(err)
	}
	for i := range xs {
		a, b := float64(xs[i]), float64(ys[i])
		want := math.Pow(a, b)
		if ulpsApart(float64(z.Data[i]), want) > 64 {
			t.Errorf("pow(%g, %g) = %v, math.Pow %v", a, b, z.Data[i], want)
		}
		gx, gy := b*math.Pow(a, b-1), want*math.Log(a)
		close := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want)) }
		if w := gx*float64(dx.Data[i]) + gy*float64(dy.Data[i]); !close(float64(jv.Data[i]), w) {
			t.Errorf("pow JVP at (%g, %g) = %v, want %v", a, b, jv.Data[i], w)
		}
		if !close(float64(vj[0].Data[i]), gx*float64(d.Data[i])) || !close(float64(vj[1].Data[i]), gy*float64(d.Data[i])) {
			t.Errorf("pow VJP at (%g, %g) = %v, %v; want %v, %v", a, b, vj[0].Data[i], vj[1].Data[i], gx*float64(d.Data[i]), gy*float64(d.Data[i]))
		}
	}
	for _, base := range []F64{0, -2, F64(math.NaN())} {
		_, err := p.Apply(nil, []Tensor[F64]{{Shape: Shape{1}, Data: []F64{base}}, {Shape: Shape{1}, Data: []F64{2}}})
		if err == nil || !strings.Contains(err.Error(), "base > 0") {
			t.Errorf("pow with base %v: %v, want the domain refusal", base, err)
		}
	}
	// An interval base reaching 0 is refused too (undecided sign).
	pi, _ := Default[Interval]().Lookup("pow")
	if _, err := pi.Apply(nil, []Tensor[Interval]{{Shape: Shape{1}, Data: []Interval{mkInterval(0, 1)}}, {Shape: Shape{1}, Data: []Interval{Point(2)}}}); err == nil {
		t.Error("pow over the interval base [0, 1] succeeded")
	}
}

// TestReduceProdZeros: reduce_prod's forward, JVP and VJP over Rat
// against a direct evaluation of Π_{j≠i} x_j (a loop that skips i), on
// lanes with no zero, one zero and two zeros, along each axis.
func TestReduceProdZeros(t *testing.T) {
	p, _ := Default[Rat]().Lookup("reduce_prod")
	r := func(n int64) Rat { return NewRat(n, 1) }
	lanes := [][]Rat{
		{r(2), NewRat(-1, 3), r(5)}, // no zero
		{r(2), r(0), r(5)},          // one zero: only ∂/∂x_1 ≠ 0
		{r(0), r(3), r(0)},          // two zeros: every partial is 0
	}
	// x has shape [3 lanes, 3]; reduce along axis 1 and, transposed,
	// along axis 0.
	for _, axis := range []int{1, 0} {
		x := zerosOf[Rat](Shape{3, 3})
		for l, lane := range lanes {
			for j, v := range lane {
				if axis == 1 {
					x.Data[l*3+j] = v
				} else {
					x.Data[j*3+l] = v
				}
			}
		}
		at := func(l, j int) int {
			if axis == 1 {
				return l*3 + j
			}
			return j*3 + l
		}
		a := &Attrs{Axis: axis}
		y, err := p.Apply(a, []Tensor[Rat]{x})
		if err != nil {
			t.Fatal(err)
		}
		dx := zerosOf[Rat](x.Shape)
		for i := range dx.Data {
			dx.Data[i] = NewRat(int64(i+1), 2)
		}
		jv, err := p.JVP(a, []Tensor[Rat]{x}, y, []Tensor[Rat]{dx})
		if err != nil {
			t.Fatal(err)
		}
		d := Tensor[Rat]{Shape: Shape{3}, Data: []Rat{r(1), r(-2), r(3)}}
		vj, err := p.VJP(a, []Tensor[Rat]{x}, y, d)
		if err != nil {
			t.Fatal(err)
		}
		for l, lane := range lanes {
			prod, jsum := r(1), r(0)
			for i := range lane {
				prod = prod.Mul(lane[i])
				others := r(1)
				for j := range lane {
					if j != i {
						others = others.Mul(lane[j])
					}
				}
				jsum = jsum.Add(others.Mul(dx.Data[at(l, i)]))
				if g := vj[0].Data[at(l, i)]; !g.Same(others.Mul(d.Data[l])) {
					t.Errorf("axis %d lane %d: VJP[%d] = %v, want %v", axis, l, i, g, others.Mul(d.Data[l]))
				}
			}
			if !y.Data[l].Same(prod) || !jv.Data[l].Same(jsum) {
				t.Errorf("axis %d lane %d: y = %v, JVP = %v; want %v, %v", axis, l, y.Data[l], jv.Data[l], prod, jsum)
			}
		}
	}
	// The one-zero lane's gradient is not zero: the product of the others.
	vj, _ := p.VJP(&Attrs{Axis: 0}, []Tensor[Rat]{{Shape: Shape{3}, Data: lanes[1]}}, Scalar0(r(0)), Scalar0(r(1)))
	if !vj[0].Data[1].Same(r(10)) || !vj[0].Data[0].IsZero() || !vj[0].Data[2].IsZero() {
		t.Errorf("∇Π(2, 0, 5) = %v, want [0 10 0]", vj[0].Data)
	}
	// An empty lane's product is 1, its gradient empty.
	y, err := p.Apply(&Attrs{Axis: 1}, []Tensor[Rat]{zerosOf[Rat](Shape{2, 0})})
	if err != nil || len(y.Data) != 2 || !y.Data[0].Same(r(1)) {
		t.Errorf("Π over an empty axis = %v, %v; want [1 1]", y.Data, err)
	}
}
