package spec

import (
	"math"
	"testing"
)

// TestErfValues: erf at points whose values are tabulated (Abramowitz &
// Stegun, Table 7.1, to 16 digits), over every scalar with Erf: floats
// near the table, Interval enclosing it (with the table's rounding
// allowed), Rat inexact.
func TestErfValues(t *testing.T) {
	cases := []struct{ x, erf float64 }{
		{0, 0},
		{0.5, 0.5204998778130465},
		{1, 0.8427007929497149},
		{-1, -0.8427007929497149},
		{2, 0.9953222650189527},
		{6, 1 - 2.15197367124989e-17},
	}
	for _, c := range cases {
		if got, _ := F64(c.x).Erf(); math.Abs(float64(got)-c.erf) > 4e-16 {
			t.Errorf("F64 erf(%v) = %v, want %v", c.x, got, c.erf)
		}
		if got, _ := F32(c.x).Erf(); math.Abs(float64(got)-c.erf) > 1e-7 {
			t.Errorf("F32 erf(%v) = %v, want %v", c.x, got, c.erf)
		}
		iv, err := Point(c.x).Erf()
		if err != nil {
			t.Fatal(err)
		}
		if !(iv.Lo <= c.erf+1e-16 && c.erf-1e-16 <= iv.Hi) || iv.Lo < -1 || iv.Hi > 1 {
			t.Errorf("Interval erf(%v) = %v misses %v", c.x, iv, c.erf)
		}
	}
	if _, err := NewRat(1, 2).Erf(); err == nil {
		t.Error("Rat erf(1/2) has no exact value, got no error")
	}
	// Monotone enclosure of a range: erf([−1, 2]) ⊇ [erf(−1), erf(2)].
	iv, _ := Interval{Lo: -1, Hi: 2}.Erf()
	if iv.Lo > -0.8427007929497149 || iv.Hi < 0.9953222650189527 {
		t.Errorf("erf([-1, 2]) = %v", iv)
	}
}

// TestErfDerivative: erf′ = (2/√π)e^(−x²) against a central difference of
// the tabulated erf (step 1e-5: error O(h²) ≈ 1e-10), and the Dual
// tangent and second derivative −2x·erf′(x).
func TestErfDerivative(t *testing.T) {
	const h = 1e-5
	for _, x := range []float64{-1.5, -0.25, 0, 0.5, 1, 3} {
		fd := (math.Erf(x+h) - math.Erf(x-h)) / (2 * h)
		d, _ := F64(x).ErfDeriv()
		if math.Abs(float64(d)-fd) > 1e-9 {
			t.Errorf("erf′(%v) = %v, central difference %v", x, d, fd)
		}
		iv, _ := Point(x).ErfDeriv()
		if !(iv.Lo <= float64(d) && float64(d) <= iv.Hi) {
			t.Errorf("Interval erf′(%v) = %v misses %v", x, iv, d)
		}
		y, err := MakeDual(F64(x), F64(3)).Erf()
		if err != nil {
			t.Fatal(err)
		}
		if y.Du != 3*d {
			t.Errorf("Dual erf(%v) tangent %v, want 3·%v", x, y.Du, d)
		}
		dd, _ := MakeDual(F64(x), F64(1)).ErfDeriv()
		fd2 := (float64(must(F64(x+h).ErfDeriv())) - float64(must(F64(x-h).ErfDeriv()))) / (2 * h)
		if math.Abs(float64(dd.Du)-fd2) > 1e-8 {
			t.Errorf("erf″(%v) = %v, central difference %v", x, dd.Du, fd2)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestErfRegistered: the registry's erf runs these rules: forward erf,
// JVP erf′⊙dx and VJP erf′⊙δ.
func TestErfRegistered(t *testing.T) {
	p, err := Default[F64]().Lookup("erf")
	if err != nil {
		t.Fatal(err)
	}
	x := Tensor[F64]{Shape: Shape{2}, Data: []F64{0.3, -1.2}}
	y, err := p.Forward(nil, []Tensor[F64]{x})
	if err != nil {
		t.Fatal(err)
	}
	if y.Data[0] != F64(math.Erf(0.3)) || y.Data[1] != F64(math.Erf(-1.2)) {
		t.Errorf("forward %v", y.Data)
	}
	d0, _ := F64(0.3).ErfDeriv()
	d1, _ := F64(-1.2).ErfDeriv()
	jvp, err := p.JVP(nil, []Tensor[F64]{x}, y, []Tensor[F64]{{Shape: Shape{2}, Data: []F64{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if jvp.Data[0] != d0 || jvp.Data[1] != 2*d1 {
		t.Errorf("JVP %v, want [%v %v]", jvp.Data, d0, 2*d1)
	}
	vjp, err := p.VJP(nil, []Tensor[F64]{x}, y, Tensor[F64]{Shape: Shape{2}, Data: []F64{3, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if vjp[0].Data[0] != 3*d0 || vjp[0].Data[1] != 0 {
		t.Errorf("VJP %v, want [%v 0]", vjp[0].Data, 3*d0)
	}
}
