package spec

import (
	"errors"
	"math"
	"math/big"
	"testing"
)

// isTrunc reports that y is trunc(x), by the definition rather than by
// the code under test: y is an integer, |y| ≤ |x| < |y| + 1, and y is 0 or
// has x's sign.
func isTrunc(x, y *big.Rat) bool {
	if !y.IsInt() {
		return false
	}
	ax, ay := new(big.Rat).Abs(x), new(big.Rat).Abs(y)
	if ay.Cmp(ax) > 0 || ax.Cmp(new(big.Rat).Add(ay, big.NewRat(1, 1))) >= 0 {
		return false
	}
	return y.Sign() == 0 || y.Sign() == x.Sign()
}

// floorInsteadOfTrunc is a planted fault: ⌊x⌋, which differs from trunc
// for a negative non-integer.
func floorInsteadOfTrunc(x *big.Rat) *big.Rat {
	q, m := new(big.Int).DivMod(x.Num(), x.Denom(), new(big.Int)) // Euclidean: floor for a positive denominator
	_ = m
	return new(big.Rat).SetInt(q)
}

// TestTruncInt: trunc_int over Rat against the definition (isTrunc), the
// range of each ONNX integer type at and past its ends, and the planted
// floor caught by the same check.
func TestTruncInt(t *testing.T) {
	i8lo, i8hi := IntTypeRange(8, true)
	u8lo, u8hi := IntTypeRange(8, false)
	i64lo, i64hi := IntTypeRange(64, true)
	u64lo, u64hi := IntTypeRange(64, false)
	if i8lo.Cmp(big.NewRat(-128, 1)) != 0 || i8hi.Cmp(big.NewRat(127, 1)) != 0 || u8lo.Sign() != 0 || u8hi.Cmp(big.NewRat(255, 1)) != 0 {
		t.Fatalf("ranges: int8 [%s, %s], uint8 [%s, %s]", i8lo, i8hi, u8lo, u8hi)
	}
	if i64lo.Cmp(new(big.Rat).SetFloat64(-math.Ldexp(1, 63))) != 0 || new(big.Rat).Add(u64hi, big.NewRat(1, 1)).Cmp(new(big.Rat).SetFloat64(math.Ldexp(1, 64))) != 0 {
		t.Fatalf("ranges: int64 lo %s, uint64 hi %s", i64lo, u64hi)
	}
	i8, u8, i64, u64 := IntFormat(i8lo, i8hi), IntFormat(u8lo, u8hi), IntFormat(i64lo, i64hi), IntFormat(u64lo, u64hi)
	cases := []struct {
		f       FloatFormat
		x       *big.Rat
		defined bool
	}{
		{i8, big.NewRat(7, 2), true},
		{i8, big.NewRat(-7, 2), true},
		{i8, big.NewRat(-1, 3), true},
		{i8, big.NewRat(0, 1), true},
		{i8, big.NewRat(1279, 10), true},  // 127.9 → 127
		{i8, big.NewRat(128, 1), false},   // past INT8's top
		{i8, big.NewRat(-1289, 10), true}, // −128.9 → −128
		{i8, big.NewRat(-129, 1), false},  // past its bottom
		{u8, big.NewRat(-9, 10), true},    // −0.9 → 0, in UINT8
		{u8, big.NewRat(-1, 1), false},    // −1 is not a UINT8
		{u8, big.NewRat(2559, 10), true},  // 255.9 → 255
		{u8, big.NewRat(256, 1), false},   //
		{i64, new(big.Rat).Neg(new(big.Rat).SetFloat64(math.Ldexp(1, 63))), true},
		{i64, new(big.Rat).SetFloat64(math.Ldexp(1, 63)), false},
		{u64, new(big.Rat).SetFloat64(math.Ldexp(1, 64) - math.Ldexp(1, 11)), true},
		{u64, new(big.Rat).SetFloat64(math.Ldexp(1, 64)), false},
	}
	p, _ := Default[Rat]().Lookup("trunc_int")
	for _, c := range cases {
		y, ok := c.f.RoundRat(c.x)
		if ok != c.defined {
			t.Errorf("%s in %s: defined %v, want %v", c.x, c.f.Name, ok, c.defined)
			continue
		}
		x := Tensor[Rat]{Shape: Shape{1}, Data: []Rat{RatFromBig(c.x)}}
		got, err := p.Apply(&Attrs{Lo: c.f.IntLo, Hi: c.f.IntHi}, []Tensor[Rat]{x})
		var de *DomainError
		if !c.defined {
			if err == nil || !errors.As(err, &de) {
				t.Errorf("%s in %s: primitive gave %v, %v, want a domain error", c.x, c.f.Name, got.Data, err)
			}
			continue
		}
		if !isTrunc(c.x, y) || err != nil || got.Data[0].Big().Cmp(y) != 0 {
			t.Errorf("trunc(%s) = %s (primitive %v, %v)", c.x, y, got.Data, err)
		}
		if !c.x.IsInt() && c.x.Sign() < 0 && isTrunc(c.x, floorInsteadOfTrunc(c.x)) {
			t.Errorf("planted floor(%s) = %s passes the check", c.x, floorInsteadOfTrunc(c.x))
		}
	}
	// The attributes: lo ≤ 0 ≤ hi, both given.
	for _, a := range []*Attrs{nil, {Lo: big.NewRat(1, 1), Hi: big.NewRat(2, 1)}, {Lo: big.NewRat(-2, 1), Hi: big.NewRat(-1, 1)}, {Lo: big.NewRat(0, 1)}} {
		if _, err := p.InferShape(a, []Shape{{2}}); err == nil {
			t.Errorf("trunc_int attributes %+v accepted", a)
		}
	}
}

// TestTruncScalars: over F64 and Binary32 against Go's own float-to-int64
// conversion (truncation, another implementation) for in-range values, NaN
// for NaN, ±∞ and out-of-range ones; over Interval the enclosure
// [trunc(lo), trunc(hi)] contains trunc of every sample point.
func TestTruncScalars(t *testing.T) {
	lo, hi := IntTypeRange(16, true)
	f := IntFormat(lo, hi)
	xs := []float64{0, -0.0, 0.5, -0.5, 1, -1, 2.75, -2.75, 32767.99, -32768.5, 32768, -32769, 1e30, math.Inf(1), math.Inf(-1), math.NaN(), 1e-300, -123.456}
	for _, x := range xs {
		var want float64
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0) || x >= 32768 || x <= -32769:
			want = math.NaN()
		default:
			want = float64(int64(x))
		}
		got64, _ := F64(x).RoundTo(f)
		got32, _ := binary32FromFloat64(float64(float32(x))).RoundTo(f)
		want32 := math.NaN()
		if x32 := float64(float32(x)); !math.IsNaN(x32) && !math.IsInf(x32, 0) && x32 < 32768 && x32 > -32769 {
			want32 = float64(int64(x32))
		}
		if !same(float64(got64), want) || !same(got32.widen64(), want32) {
			t.Errorf("trunc(%v): F64 %v, Binary32 %v; want %v, %v", x, got64, got32.widen64(), want, want32)
		}
	}
	for _, iv := range []Interval{{Lo: -2.5, Hi: 3.25}, {Lo: -0.5, Hi: 0.5}, {Lo: 7, Hi: 7}, {Lo: -32768.75, Hi: -100.5}} {
		r, err := iv.RoundTo(f)
		if err != nil {
			t.Fatalf("%v: %v", iv, err)
		}
		for k := 0; k <= 16; k++ {
			x := iv.Lo + (iv.Hi-iv.Lo)*float64(k)/16
			if y := float64(int64(x)); y < r.Lo || y > r.Hi {
				t.Errorf("trunc(%v) = %v outside %v's image %v", x, y, iv, r)
			}
		}
	}
	for _, iv := range []Interval{{Lo: 0, Hi: 40000}, {Lo: math.Inf(-1), Hi: 0}} {
		if _, err := iv.RoundTo(f); err == nil {
			t.Errorf("%v: no domain error", iv)
		}
	}
}

// same is equality with NaN equal to NaN.
func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
