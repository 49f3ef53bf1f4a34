package spec

import (
	"math"
	"strings"
	"testing"
)

func TestShapeCheck(t *testing.T) {
	cases := []struct {
		s    Shape
		max  int
		n    int
		want string
	}{
		{Shape{}, 0, 1, ""},
		{Shape{2, 3}, 0, 6, ""},
		{Shape{0, 5}, 0, 0, ""},
		{Shape{2, -1}, 0, 0, "axis 1 has negative extent -1"},
		{Shape{1 << 20, 1 << 20}, 0, 0, "more than 134217728 elements"},
		{Shape{math.MaxInt, math.MaxInt, 2}, 0, 0, "over the axis limit"},
		{Shape{10, 10}, 50, 0, "more than 50 elements"},
		{make(Shape, MaxRank+1), 0, 0, "rank 17"},
	}
	for _, c := range cases {
		n, err := c.s.Check(c.max)
		if c.want == "" {
			if err != nil || n != c.n {
				t.Errorf("%v: got %d, %v; want %d", c.s, n, err, c.n)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want error containing %q", c.s, err, c.want)
		}
	}
}

func TestNewTensorChecks(t *testing.T) {
	if _, err := NewTensor(Shape{2, 2}, []Rat{{}, {}, {}}); err == nil || !strings.Contains(err.Error(), "needs 4 values, got 3") {
		t.Fatalf("got %v", err)
	}
	if _, err := Zeros[F32](Shape{1 << 14, 1 << 14}); err == nil {
		t.Fatal("hostile shape allocated")
	}
}

// TestSomeTensorCast: Cast succeeds only at the stored shape, never
// reshapes, and Erase∘Cast is the identity.
func TestSomeTensorCast(t *testing.T) {
	x, _ := NewTensor(Shape{2, 3}, []Rat{NewRat(1, 2), NewRat(2, 1), {}, NewRat(-1, 3), NewRat(5, 1), NewRat(7, 2)})
	s := Erase(x)
	if !s.Shape().Equal(Shape{2, 3}) {
		t.Fatalf("shape %v", s.Shape())
	}
	y, err := s.Cast(Shape{2, 3})
	if err != nil || !SameTensor(x, y) {
		t.Fatalf("round trip: %v %v", y, err)
	}
	if z := Erase(y); !SameTensor(mustCast(t, z, Shape{2, 3}), x) {
		t.Fatal("Erase(Cast(s)) differs")
	}
	for _, bad := range []Shape{{3, 2}, {6}, {2, 3, 1}, {}} {
		if _, err := s.Cast(bad); err == nil || !strings.Contains(err.Error(), "is not the requested shape") {
			t.Errorf("cast to %v: %v", bad, err)
		}
	}
}

func mustCast[T any](t *testing.T, s SomeTensor[T], want Shape) Tensor[T] {
	t.Helper()
	v, err := s.Cast(want)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRatExactness(t *testing.T) {
	if v, err := NewRat(9, 4).Sqrt(); err != nil || !v.Same(NewRat(3, 2)) {
		t.Fatalf("sqrt(9/4) = %v, %v", v, err)
	}
	for _, x := range []Rat{NewRat(2, 1), NewRat(1, 2), NewRat(-4, 1)} {
		if _, err := x.Sqrt(); err == nil {
			t.Errorf("sqrt(%s) must fail over rat", x)
		}
	}
	if _, err := NewRat(1, 1).Div(Rat{}); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("1/0: %v", err)
	}
	// Value semantics: results never alias operands.
	a := NewRat(1, 3)
	b := a.Add(NewRat(1, 3))
	if !a.Same(NewRat(1, 3)) || !b.Same(NewRat(2, 3)) {
		t.Fatal("Add mutated its receiver")
	}
	for _, s := range []string{"3", "-3/2", "0.25", "1e-3", " 7/8 "} {
		if _, err := ParseRat(s); err != nil {
			t.Errorf("ParseRat(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "1/0", "abc", "1e99999", "0x10", "0b101", "1_000", "0x1p4", "1/-2"} {
		if _, err := ParseRat(s); err == nil {
			t.Errorf("ParseRat(%q) accepted", s)
		}
	}
}

func TestF32RoundsOncePerOp(t *testing.T) {
	// a*b + c with a fused multiply-add would keep the low bits of a*b.
	a, b, c := F32(1+1.0/(1<<12)), F32(1+1.0/(1<<12)), F32(-1)
	got := a.Mul(b).Add(c)
	want := float32(float32(float32(a)*float32(b)) + float32(c))
	fused := float32(math.FMA(float64(a), float64(b), float64(c)))
	if float32(got) != want || float32(got) == fused {
		t.Fatalf("F32 a·b+c = %v; one rounding per op gives %v, a fused multiply-add %v", got, want, fused)
	}
}

func TestDual(t *testing.T) {
	// d/dx x³ at 2 is 12.
	x := MakeDual(NewRat(2, 1), NewRat(1, 1))
	y := x.Mul(x).Mul(x)
	if !y.Re.Same(NewRat(8, 1)) || !y.Du.Same(NewRat(12, 1)) {
		t.Fatalf("x³ at 2: %s", y)
	}
	// Nested: second derivative of x³ at 2 is 12·2 = 24... f'' = 6x = 12.
	one := Rat{}.FromInt(1)
	xx := MakeDual(MakeDual(NewRat(2, 1), one), MakeDual(one, Rat{}))
	yy := xx.Mul(xx).Mul(xx)
	if !yy.Du.Du.Same(NewRat(12, 1)) || !yy.Du.Re.Same(NewRat(12, 1)) {
		t.Fatalf("nested dual of x³: %s", yy)
	}
	// Choices decide on the primal; ties average the tangents; abs'(0)=0.
	a, b := MakeDual(NewRat(1, 1), NewRat(3, 1)), MakeDual(NewRat(1, 1), NewRat(5, 1))
	if m := a.Max(b); !m.Du.Same(NewRat(4, 1)) {
		t.Fatalf("tie max tangent %s, want 4", m.Du)
	}
	if m := a.Max(MakeDual(NewRat(0, 1), NewRat(9, 1))); !m.Du.Same(NewRat(3, 1)) {
		t.Fatalf("max tangent %s", m.Du)
	}
	if z := MakeDual(Rat{}, NewRat(7, 1)).Abs(); !z.Du.IsZero() {
		t.Fatalf("abs'(0) = %s", z.Du)
	}
	if _, err := MakeDual(NewRat(1, 1), one).Exp(); err == nil {
		t.Fatal("exp over Dual[Rat] must fail")
	}
	if k := (Dual[Dual[Rat]]{}).Kind(); k != "dual(dual(rat))" {
		t.Fatalf("kind %q", k)
	}
}

func TestF64LogSubnormal(t *testing.T) {
	got, _ := F64(5e-324).Log()
	if math.Abs(float64(got)-(-744.4400719213812)) > 1e-12 {
		t.Fatalf("log(5e-324) = %v, want -744.44007192138...", got)
	}
}

func TestLayerNormEmptyAxis(t *testing.T) {
	p, _ := Default[F32]().Lookup("layer_norm")
	x, _ := Zeros[F32](Shape{2, 0})
	if _, err := p.Apply(&Attrs{Axis: 1}, []Tensor[F32]{x}); err == nil {
		t.Fatal("layer_norm over an empty axis must fail, not panic")
	}
}
