package spec

import (
	"math"
	"math/big"
	"testing"
)

// TestMiniFloatMax: the greatest finite value of each format against the
// table of the ONNX Cast text (written by hand, not from the fields).
func TestMiniFloatMax(t *testing.T) {
	for _, c := range []struct {
		m    MiniFloat
		want float64
	}{{FormatE4M3FN, 448}, {FormatE4M3FNUZ, 240}, {FormatE5M2, 57344}, {FormatE5M2FNUZ, 57344}, {FormatE2M1, 6}} {
		if got := c.m.Max(); got != c.want {
			t.Errorf("%s: Max = %v, want %v", c.m.Name, got, c.want)
		}
	}
}

// TestMiniFloatDecodeRoundTrip: every bit pattern of every format decodes
// to a value whose cast is itself (the rounding is the identity on the
// format), the values are distinct but for ±0, there is exactly the number
// of NaN patterns the encoding has (E4M3FN 2, FNUZ 1, E5M2 6, E2M1 0), and
// the greatest finite decoded value is Max.
func TestMiniFloatDecodeRoundTrip(t *testing.T) {
	for _, c := range []struct {
		m    MiniFloat
		nans int
		infs int
	}{{FormatE4M3FN, 2, 0}, {FormatE4M3FNUZ, 1, 0}, {FormatE5M2, 6, 2}, {FormatE5M2FNUZ, 1, 0}, {FormatE2M1, 0, 0}} {
		n := 1 << (1 + c.m.EBits + c.m.MBits)
		nans, infs, maxv := 0, 0, 0.0
		seen := map[float64]bool{}
		for b := 0; b < n; b++ {
			x := c.m.Decode(uint8(b))
			switch {
			case math.IsNaN(x):
				nans++
				continue
			case math.IsInf(x, 0):
				infs++
				continue
			}
			maxv = math.Max(maxv, x)
			if seen[x] && x != 0 {
				t.Errorf("%s: %v decoded twice", c.m.Name, x)
			}
			seen[x] = true
			for _, sat := range []bool{true, false} {
				if y := c.m.CastFloat64(x, sat); y != x || math.Signbit(y) != math.Signbit(x) {
					t.Errorf("%s: cast of its value %v (bits %#x) is %v", c.m.Name, x, b, y)
				}
			}
		}
		if nans != c.nans || infs != c.infs || maxv != c.m.Max() {
			t.Errorf("%s: %d NaN, %d ∞ patterns, greatest %v; want %d, %d, %v", c.m.Name, nans, infs, maxv, c.nans, c.infs, c.m.Max())
		}
	}
}

// TestMiniFloatCast: rounding, ties, saturation and the special values,
// by hand from the Cast text's tables: E4M3FN values near 1 are spaced
// 2^−3, so 1 + 2^−4 is a tie to the even 1 and 1 + 3·2^−4 one to 1.25;
// 464 (between 448 and the pattern-less 480) ties to the even 448; past it
// saturate gives 448 and otherwise NaN; E5M2 without saturation gives ∞;
// FNUZ has no −0; FLOAT4E2M1 out of range is undefined; a rounding with
// ties away from zero (planted) would give 1.125 at 1 + 2^−4 — caught by
// the tie rows.
func TestMiniFloatCast(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		m    MiniFloat
		x    float64
		sat  bool
		want float64
	}{
		{FormatE4M3FN, 1 + 0x1p-4, true, 1},
		{FormatE4M3FN, 1 + 3*0x1p-4, true, 1.25},
		{FormatE4M3FN, 1 + 0x1p-4 + 0x1p-20, true, 1.125},
		{FormatE4M3FN, 464, true, 448},
		{FormatE4M3FN, 464.5, true, 448},
		{FormatE4M3FN, 464.5, false, nan},
		{FormatE4M3FN, inf, true, 448},
		{FormatE4M3FN, -inf, false, nan},
		{FormatE4M3FN, 0x1p-10, true, 0}, // half the least subnormal 2^−9: tie to even 0
		{FormatE4M3FN, 0x1p-10 + 0x1p-30, true, 0x1p-9},
		{FormatE4M3FN, -0x1p-12, true, math.Copysign(0, -1)},
		{FormatE4M3FNUZ, -0x1p-12, true, 0},
		{FormatE4M3FNUZ, 1e6, true, 240},
		{FormatE4M3FNUZ, 1e6, false, nan},
		{FormatE5M2, 1e6, false, inf},
		{FormatE5M2, -1e6, false, -inf},
		{FormatE5M2, -1e6, true, -57344},
		{FormatE5M2FNUZ, inf, false, nan},
		{FormatE2M1, 5, true, 4},    // tie between 4 and 6: even significand 4 = 1.0·2^2
		{FormatE2M1, 0.25, true, 0}, // tie between 0 and 0.5
		{FormatE2M1, 0.75, true, 1},
		{FormatE2M1, 9, true, Undefined},
		{FormatE2M1, nan, true, Undefined},
	} {
		got := c.m.CastFloat64(c.x, c.sat)
		same := got == c.want && math.Signbit(got) == math.Signbit(c.want) ||
			math.IsNaN(c.want) && math.IsNaN(got) && IsUndefined(got) == IsUndefined(c.want)
		if !same {
			t.Errorf("%s(%v, saturate %v) = %v, want %v", c.m.Name, c.x, c.sat, got, c.want)
		}
	}
}

// TestCastE8M0: the FLOAT8E8M0 cast by round_mode and saturate, from the
// Cast text's table and the attribute's doc: up is the least power of two
// ≥ x, down the greatest ≤ x, nearest ties (1.5·2^k) up.
func TestCastE8M0(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		x    float64
		mode string
		sat  bool
		want float64
	}{
		{0.124, "up", true, 0.125}, {1.1, "up", true, 2}, {1.1, "down", true, 1}, {1.5, "nearest", true, 2},
		{1.4999, "nearest", true, 1}, {8, "up", true, 8}, {0, "up", true, 0x1p-127}, {0, "nearest", false, nan},
		{inf, "up", true, 0x1p127}, {inf, "nearest", false, nan}, {0x1p128, "down", true, 0x1p127},
		{0x1p128, "down", false, nan}, {-1, "up", true, Undefined}, {nan, "up", true, nan},
	} {
		got, err := CastE8M0(c.x, nil, c.mode, c.sat)
		if err != nil {
			t.Fatal(err)
		}
		if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want) && IsUndefined(got) == IsUndefined(c.want)) {
			t.Errorf("E8M0(%v, %s, saturate %v) = %v, want %v", c.x, c.mode, c.sat, got, c.want)
		}
	}
	if _, err := CastE8M0(0, big.NewRat(1, 3), "sideways", true); err == nil {
		t.Error("an unknown round_mode is accepted")
	}
	for b := 0; b < 255; b++ {
		x := DecodeE8M0(uint8(b))
		for _, mode := range []string{"up", "down", "nearest"} {
			if y, _ := CastE8M0(x, nil, mode, false); y != x {
				t.Errorf("E8M0 %#x = %v: %s cast is %v", b, x, mode, y)
			}
		}
	}
}
