package onnx

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

// TestRepresentable: exact membership in each format, by the formats'
// definitions (binary16: 11 significand bits, max 65504, subnormal unit
// 2⁻²⁴; bfloat16: 8 significand bits).
func TestRepresentable(t *testing.T) {
	r := func(f float64) *big.Rat { return new(big.Rat).SetFloat64(f) }
	third := big.NewRat(1, 3)
	cases := []struct {
		name string
		x    *big.Rat
		dt   DataType
		want bool
	}{
		{"1/3 double", third, Double, false},
		{"1+2^-30 float", r(1 + math.Ldexp(1, -30)), Float, false},
		{"1+2^-30 double", r(1 + math.Ldexp(1, -30)), Double, true},
		{"1+2^-10 half", r(1 + math.Ldexp(1, -10)), Float16, true},
		{"1+2^-11 half", r(1 + math.Ldexp(1, -11)), Float16, false},
		{"65504 half", r(65504), Float16, true},
		{"65520 half", r(65520), Float16, false},
		{"2^-24 half", r(math.Ldexp(1, -24)), Float16, true},
		{"3·2^-24 half", r(3 * math.Ldexp(1, -24)), Float16, true},
		{"2^-25 half", r(math.Ldexp(1, -25)), Float16, false},
		{"1+2^-7 bf16", r(1 + math.Ldexp(1, -7)), BFloat16, true},
		{"1+2^-8 bf16", r(1 + math.Ldexp(1, -8)), BFloat16, false},
		{"int64", r(1), Int64, false},
	}
	for _, tc := range cases {
		if got := representable(tc.x, tc.dt); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestModOnRecordedInputs: Mod of two recorded float inputs folds on
// Options.Values (by hand: fmod = 1 keeps the dividend's sign, 5.5 fmod −2
// = 1.5, −5.5 fmod 2 = −1.5; fmod = 0 the divisor's, −5.5 mod 2 = 0.5,
// 5.5 mod −2 = −0.5); an fmod = 0 remainder that is no float32 is refused
// (−2⁻³⁰ mod 1 = 1 − 2⁻³⁰), and so is Mod of a computed value.
func TestModOnRecordedInputs(t *testing.T) {
	x := floatsTensor(dims(2), 5.5, -5.5)
	y := floatsTensor(dims(2), -2, 2)
	mk := func(opset, fmod int64) *Model {
		return newMG(opset).in("x", 2).in("y", 2).op("Mod", ins("x", "y"), ins("m"), aI("fmod", fmod)).
			op("Add", ins("x", "m"), ins("z")).out("z").model()
	}
	for _, tc := range []struct {
		name string
		m    *Model
		want string
	}{
		{"fmod 1", mk(13, 1), "[7 -7]"}, // x + [1.5 −1.5]
		{"fmod 0", mk(28, 0), "[5 -5]"}, // x + [−0.5 0.5]
	} {
		_, outs := evalRat(t, tc.m, Options{Values: map[string]*Tensor{"x": x, "y": y}}, x, y)
		if got := ratStrings(outs[0].Data); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
	tiny := floatsTensor(dims(2), -float32(math.Ldexp(1, -30)), 1)
	one := floatsTensor(dims(2), 1, 1)
	if _, err := Import(mk(28, 0), Options{Values: map[string]*Tensor{"x": tiny, "y": one}}); err == nil || !strings.Contains(err.Error(), "rounds") {
		t.Errorf("a rounded fmod = 0 remainder: err = %v, want a refusal", err)
	}
	computed := newMG(13).in("x", 2).in("y", 2).op("Exp", ins("x"), ins("e")).op("Mod", ins("e", "y"), ins("m"), aI("fmod", 1)).
		op("Add", ins("x", "m"), ins("z")).out("z").model()
	if _, err := Import(computed, Options{Values: map[string]*Tensor{"x": x, "y": y}}); err == nil || !strings.Contains(err.Error(), "data-dependent") {
		t.Errorf("Mod of a computed value: err = %v, want a data-dependent refusal", err)
	}
}
