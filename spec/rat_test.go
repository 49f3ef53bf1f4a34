package spec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"testing"
)

// The dyadic fast path is checked against plain big.Rat arithmetic (the
// representation Rat had before it): every operation, on random dyadics,
// non-dyadics and mixes — zero, signs, int64 edges, mantissas past 2^63,
// exponents up to ±20000, float64 values down to subnormals — must give
// the same rational, and the same String, BitLen, Float64, SmallFrac and
// order. checkCanon also asserts the canonical-form invariants the fast
// Same relies on.

// checkCanon fails unless x is in one of Rat's canonical forms.
func checkCanon(t testing.TB, what string, x Rat) {
	t.Helper()
	switch {
	case x.r != nil:
		if x.b != nil || x.m != 0 || x.e != 0 {
			t.Fatalf("%s: non-dyadic with dyadic fields set: %+v", what, x)
		}
		if x.r.Sign() == 0 || isPow2(x.r.Denom()) {
			t.Fatalf("%s: big.Rat form holds a dyadic %s", what, x.r.RatString())
		}
	case x.b != nil:
		if x.m != 0 || x.b.IsInt64() || x.b.Bit(0) != 1 {
			t.Fatalf("%s: big dyadic not canonical: m=%d b=%s", what, x.m, x.b)
		}
	case x.m == 0:
		if x.e != 0 {
			t.Fatalf("%s: zero with exponent %d", what, x.e)
		}
	default:
		if x.m&1 == 0 {
			t.Fatalf("%s: even small mantissa %d", what, x.m)
		}
	}
}

type ratGen struct{ r *rand.Rand }

// bigInt returns a random integer of up to n bits, either sign.
func (g ratGen) bigInt(n int) *big.Int {
	z := new(big.Int)
	for z.BitLen() < n {
		z.Lsh(z, 64).Or(z, new(big.Int).SetUint64(g.r.Uint64()))
	}
	z.Rsh(z, uint(max(z.BitLen()-1-g.r.IntN(n), 0)))
	if g.r.IntN(2) == 0 {
		z.Neg(z)
	}
	return z
}

func (g ratGen) exp() int {
	if g.r.IntN(25) == 0 {
		return g.r.IntN(40001) - 20000 // huge
	}
	switch g.r.IntN(5) {
	case 1:
		return g.r.IntN(4001) - 2000
	case 2:
		return 0
	}
	return g.r.IntN(141) - 70
}

// ref returns a random rational as a big.Rat.
func (g ratGen) ref() *big.Rat {
	switch g.r.IntN(12) {
	case 0:
		return new(big.Rat)
	case 1: // int64 edges
		edges := []int64{1, -1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1 << 62, -1 << 62, 3 << 61}
		return new(big.Rat).SetInt64(edges[g.r.IntN(len(edges))])
	case 2: // a float64, subnormals and extremes included
		var f float64
		switch g.r.IntN(4) {
		case 0:
			f = math.Float64frombits(g.r.Uint64() &^ (0x7ff << 52)) // subnormal or zero
		case 1:
			f = math.Float64frombits(g.r.Uint64())
		default:
			f = (g.r.Float64() - 0.5) * math.Ldexp(1, g.r.IntN(80)-40)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0.5
		}
		return new(big.Rat).SetFloat64(f)
	case 3: // a float32, as ONNX data is
		return new(big.Rat).SetFloat64(float64(float32((g.r.Float64() - 0.5) * 8)))
	case 4, 5, 6: // small dyadic
		m := g.r.Int64N(1<<uint(1+g.r.IntN(62))) - 1<<uint(g.r.IntN(62))
		return scale2(new(big.Rat).SetInt64(m), g.exp())
	case 7, 8: // big dyadic
		return scale2(new(big.Rat).SetInt(g.bigInt(64+g.r.IntN(300))), g.exp())
	case 9: // non-dyadic, small
		q := 3 * (1 + g.r.Int64N(1000))
		return big.NewRat(g.r.Int64N(20001)-10000, q)
	case 10: // non-dyadic with a power-of-two factor in the denominator
		return scale2(big.NewRat(g.r.Int64N(2001)-1000, 1+2*g.r.Int64N(50)), g.exp())
	}
	// non-dyadic, big
	d := g.bigInt(100)
	if d.Sign() == 0 {
		d.SetInt64(7)
	}
	return new(big.Rat).SetFrac(g.bigInt(200), d.Abs(d))
}

// scale2 returns r·2^e (in place).
func scale2(r *big.Rat, e int) *big.Rat {
	p := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(abs(e))))
	if e < 0 {
		return r.Quo(r, p)
	}
	return r.Mul(r, p)
}

func abs(e int) int {
	if e < 0 {
		return -e
	}
	return e
}

// sameAs fails unless the Rat x has the value want, in canonical form,
// with the observable results of want.
func sameAs(t testing.TB, what string, x Rat, want *big.Rat) {
	t.Helper()
	checkCanon(t, what, x)
	if x.Big().Cmp(want) != 0 {
		t.Fatalf("%s = %s, want %s", what, x.Big().RatString(), want.RatString())
	}
	if s, w := x.String(), want.RatString(); s != w {
		t.Fatalf("%s: String %q, want %q", what, s, w)
	}
	if b, w := x.BitLen(), want.Num().BitLen()+want.Denom().BitLen(); b != w {
		t.Fatalf("%s = %s: BitLen %d, want %d", what, want.RatString(), b, w)
	}
	if f, _ := want.Float64(); math.Float64bits(x.Float64()) != math.Float64bits(f) {
		t.Fatalf("%s = %s: Float64 %v, want %v", what, want.RatString(), x.Float64(), f)
	}
	p, q, ok := x.SmallFrac()
	wok := want.Num().IsInt64() && want.Denom().IsInt64()
	if ok != wok || (ok && (p != want.Num().Int64() || q != want.Denom().Int64())) {
		t.Fatalf("%s = %s: SmallFrac %d/%d %v", what, want.RatString(), p, q, ok)
	}
}

func TestRatDifferential(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 1000
	}
	g := ratGen{rand.New(rand.NewPCG(11, 2026))}
	for i := 0; i < n; i++ {
		a, b := g.ref(), g.ref()
		ratDiffCase(t, a, b)
	}
}

func ratDiffCase(t testing.TB, a, b *big.Rat) {
	t.Helper()
	x, y := RatFromBig(a), RatFromBig(b)
	sameAs(t, "x", x, a)
	sameAs(t, "y", y, b)
	sameAs(t, "x+y", x.Add(y), new(big.Rat).Add(a, b))
	sameAs(t, "x-y", x.Sub(y), new(big.Rat).Sub(a, b))
	sameAs(t, "x*y", x.Mul(y), new(big.Rat).Mul(a, b))
	sameAs(t, "-x", x.Neg(), new(big.Rat).Neg(a))
	sameAs(t, "|x|", x.Abs(), new(big.Rat).Abs(a))
	sameAs(t, "x+x", x.Add(x), new(big.Rat).Add(a, a))
	sameAs(t, "x-x", x.Sub(x), new(big.Rat))
	if q, err := x.Div(y); b.Sign() == 0 {
		if err == nil {
			t.Fatalf("%s / 0: no error", a.RatString())
		}
	} else if err != nil {
		t.Fatal(err)
	} else {
		sameAs(t, "x/y", q, new(big.Rat).Quo(a, b))
	}
	c := a.Cmp(b)
	if got, ok := x.Compare(y); !ok || got != c {
		t.Fatalf("Compare(%s, %s) = %d, want %d", a.RatString(), b.RatString(), got, c)
	}
	if x.Same(y) != (c == 0) || x.IsZero() != (a.Sign() == 0) {
		t.Fatalf("Same/IsZero(%s, %s) wrong", a.RatString(), b.RatString())
	}
	mx, mn := a, b
	if c < 0 {
		mx, mn = b, a
	}
	sameAs(t, "max", x.Max(y), mx)
	sameAs(t, "min", x.Min(y), mn)
	sameAs(t, "sign", x.Sign(), big.NewRat(int64(a.Sign()), 1))
	st := int64(0)
	if a.Sign() > 0 {
		st = 1
	}
	sameAs(t, "step", x.Step(), big.NewRat(st, 1))
	// sqrt of a square is exact; of x itself only when x is a square.
	if a.Num().BitLen()+a.Denom().BitLen() > 3000 {
		return // sqrt and float64 checks on huge values are slow in the reference
	}
	sq := new(big.Rat).Mul(a, a)
	if r, err := RatFromBig(sq).Sqrt(); err != nil {
		t.Fatalf("sqrt(%s²): %v", a.RatString(), err)
	} else {
		sameAs(t, "sqrt(x²)", r, new(big.Rat).Abs(a))
	}
	if f := a.Num().BitLen() + a.Denom().BitLen(); f < 400 {
		_, err := x.Sqrt()
		n, d := new(big.Int).Sqrt(new(big.Int).Abs(a.Num())), new(big.Int).Sqrt(a.Denom())
		isSq := a.Sign() >= 0 && new(big.Int).Mul(n, n).Cmp(a.Num()) == 0 && new(big.Int).Mul(d, d).Cmp(a.Denom()) == 0
		if (err == nil) != isSq {
			t.Fatalf("sqrt(%s): err %v, square %v", a.RatString(), err, isSq)
		}
	}
	// A float64 enters exactly.
	if f, _ := a.Float64(); !math.IsInf(f, 0) {
		r, err := RatFromFloat64(f)
		if err != nil {
			t.Fatal(err)
		}
		sameAs(t, "RatFromFloat64", r, new(big.Rat).SetFloat64(f))
	}
}

// TestRatFromFloat64Edges: signed zeros, subnormals, extremes and
// non-finite values.
func TestRatFromFloat64Edges(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 0x1p-1022, 0x1.fffffffffffffp-1023, 3 << 60, float64(float32(0.1)), 1e300, 1e-300} {
		r, err := RatFromFloat64(f)
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		sameAs(t, "float", r, new(big.Rat).SetFloat64(f))
		if math.Float64bits(r.Float64()) != math.Float64bits(f) && f != 0 {
			t.Fatalf("round trip %v → %v", f, r.Float64())
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := RatFromFloat64(f); err == nil {
			t.Fatalf("%v: no error", f)
		}
	}
}

// TestRatConstructorsCanonical: every way into a Rat yields the canonical
// form of its value, so that Same may compare small forms field by field.
func TestRatConstructorsCanonical(t *testing.T) {
	cases := []struct {
		got  Rat
		want *big.Rat
	}{
		{NewRat(6, 4), big.NewRat(3, 2)},
		{NewRat(-8, 1), big.NewRat(-8, 1)},
		{NewRat(1, 10), big.NewRat(1, 10)},
		{NewRat(3, -6), big.NewRat(-1, 2)},
		{Rat{}.FromInt(math.MinInt64), new(big.Rat).SetInt64(math.MinInt64)},
		{Rat{}.FromInt(0), new(big.Rat)},
		{Rat{}.FromInt(96), big.NewRat(96, 1)},
		{NewRat(1, 3).Mul(NewRat(3, 1)), big.NewRat(1, 1)}, // non-dyadic × → dyadic
		{NewRat(1, 3).Add(NewRat(1, 6)), big.NewRat(1, 2)}, // non-dyadic + → dyadic
		{NewRat(1, 3).Sub(NewRat(1, 3)), new(big.Rat)},     // → zero
		{NewRat(3, 4).Add(NewRat(1, 4)), big.NewRat(1, 1)}, // trailing zeros dropped
		{NewRat(-3, 4).Add(NewRat(3, 4)), new(big.Rat)},    // cancels to zero
		{NewRat(5, 8).Sub(NewRat(1, 8)), big.NewRat(1, 2)}, // exponent moves
		{Rat{}.FromInt(math.MaxInt64).Add(Rat{}.FromInt(1)), new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 63))},
		{Rat{}.FromInt(math.MaxInt64).Mul(Rat{}.FromInt(math.MaxInt64)).Sub(Rat{}.FromInt(math.MaxInt64).Mul(Rat{}.FromInt(math.MaxInt64))), new(big.Rat)},
	}
	for i, c := range cases {
		sameAs(t, "case "+string(rune('a'+i)), c.got, c.want)
	}
	if p, _ := ParseRat("0.5"); !p.Same(NewRat(1, 2)) || p.m != 1 || p.e != -1 {
		t.Fatalf("ParseRat(0.5) = %+v", p)
	}
	if p, _ := ParseRat("1/10"); p.r == nil {
		t.Fatal("1/10 is not dyadic")
	}
}

// FuzzRatArith decodes two rationals from the input (a mantissa of up
// to 32 bytes, an exponent, and an odd denominator factor) and checks
// every operation against big.Rat.
func FuzzRatArith(f *testing.F) {
	f.Add([]byte{1, 0, 0, 1, 2, 3, 0, 7, 0, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x80, 0x10, 0, 0, 3})
	f.Add([]byte{9, 200, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100, 3, 50, 1, 0, 250})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, rest := fuzzRat(data)
		b, _ := fuzzRat(rest)
		ratDiffCase(t, a, b)
	})
}

func fuzzRat(d []byte) (*big.Rat, []byte) {
	if len(d) < 3 {
		return new(big.Rat), nil
	}
	n := int(d[0]) % 33
	neg := d[0]&0x80 != 0
	e := int(int8(d[1])) * (1 + int(d[2])%64) // up to ±8128
	d = d[3:]
	n = min(n, len(d))
	m := new(big.Int).SetBytes(d[:n])
	d = d[n:]
	if neg {
		m.Neg(m)
	}
	q := int64(1)
	if len(d) > 0 {
		q = 2*int64(d[0]%16) + 1
		d = d[1:]
	}
	return scale2(new(big.Rat).SetFrac(m, big.NewInt(q)), e), d
}

// refDot is the left fold acc + x0·y0 + … in plain big.Rat arithmetic.
func refDot(acc *big.Rat, xs, ys []*big.Rat) *big.Rat {
	s := new(big.Rat).Set(acc)
	for i := range xs {
		s.Add(s, new(big.Rat).Mul(xs[i], ys[i]))
	}
	return s
}

// TestFoldDotRat: the fused exact dot product equals the plain big.Rat
// fold on random vectors of every mix — all small dyadics (one word, and
// spread exponents), big dyadics, non-dyadics, zeros — of lengths 0…40.
func TestFoldDotRat(t *testing.T) {
	g := ratGen{rand.New(rand.NewPCG(7, 11))}
	kinds := []struct {
		name string
		gen  func() *big.Rat
	}{
		{"float32", func() *big.Rat { return new(big.Rat).SetFloat64(float64(float32(g.r.NormFloat64()))) }},
		{"int", func() *big.Rat { return big.NewRat(g.r.Int64N(2001)-1000, 1) }},
		{"narrow", func() *big.Rat { return scale2(big.NewRat(g.r.Int64N(1<<20)-1<<19, 1), g.r.IntN(9)-4) }},
		{"int64-edge", func() *big.Rat {
			return new(big.Rat).SetInt64([]int64{math.MaxInt64, math.MinInt64, -math.MaxInt64, 1}[g.r.IntN(4)])
		}},
		{"any", g.ref},
		{"dyadic-or-zero", func() *big.Rat {
			if g.r.IntN(3) == 0 {
				return new(big.Rat)
			}
			return scale2(new(big.Rat).SetInt(g.bigInt(1+g.r.IntN(200))), g.exp())
		}},
		{"big-or-f32", func() *big.Rat { // activation × weight mixes, every shift residue
			if g.r.IntN(2) == 0 {
				return scale2(new(big.Rat).SetInt(g.bigInt(64+g.r.IntN(600))), g.r.IntN(401)-200)
			}
			return new(big.Rat).SetFloat64(float64(float32(g.r.NormFloat64())))
		}},
		{"mostly-dyadic", func() *big.Rat {
			if g.r.IntN(8) == 0 {
				return big.NewRat(g.r.Int64N(100)-50, 3+6*g.r.Int64N(10))
			}
			return new(big.Rat).SetFloat64(float64(float32(g.r.NormFloat64())))
		}},
	}
	// Fixed cases: zeros at the end of an int64 run, a run that
	// overflows int64 midway, a non-dyadic term after small ones.
	big63 := new(big.Rat).SetInt64(math.MaxInt64)
	fixed := []struct{ acc, xs, ys []*big.Rat }{
		{[]*big.Rat{big.NewRat(0, 1)}, []*big.Rat{big.NewRat(1, 1), big.NewRat(2, 1), big.NewRat(0, 1)}, []*big.Rat{big.NewRat(1, 1), big.NewRat(1, 1), big.NewRat(5, 1)}},
		{[]*big.Rat{big.NewRat(3, 4)}, []*big.Rat{big.NewRat(1, 2), big.NewRat(0, 1), big.NewRat(5, 1)}, []*big.Rat{big.NewRat(0, 1), big.NewRat(7, 1), big.NewRat(0, 1)}},
		{[]*big.Rat{big.NewRat(1, 1)}, []*big.Rat{big63, big63, big.NewRat(1, 2)}, []*big.Rat{big63, big.NewRat(2, 1), big.NewRat(1, 8)}},
		{[]*big.Rat{big.NewRat(-1, 1)}, []*big.Rat{big.NewRat(1, 2), big.NewRat(1, 3), big63}, []*big.Rat{big.NewRat(1, 2), big.NewRat(3, 1), big63}},
		{[]*big.Rat{big63}, []*big.Rat{big63, big.NewRat(0, 1)}, []*big.Rat{big.NewRat(1, 1), big.NewRat(1, 1)}},
	}
	for i, c := range fixed {
		xr, yr := make([]Rat, len(c.xs)), make([]Rat, len(c.ys))
		for j := range xr {
			xr[j], yr[j] = RatFromBig(c.xs[j]), RatFromBig(c.ys[j])
		}
		got, want := FoldDot(RatFromBig(c.acc[0]), xr, yr), refDot(c.acc[0], c.xs, c.ys)
		checkCanon(t, "fixed", got)
		if got.Big().Cmp(want) != 0 {
			t.Fatalf("fixed case %d: FoldDot = %s, want %s", i, got, want.RatString())
		}
	}
	for _, k := range kinds {
		for it := 0; it < 150; it++ {
			n := g.r.IntN(41)
			xs, ys := make([]*big.Rat, n), make([]*big.Rat, n)
			xr, yr := make([]Rat, n), make([]Rat, n)
			for i := range xs {
				xs[i], ys[i] = k.gen(), k.gen()
				xr[i], yr[i] = RatFromBig(xs[i]), RatFromBig(ys[i])
			}
			acc := k.gen()
			if it%4 == 0 {
				acc = new(big.Rat)
			}
			got := FoldDot(RatFromBig(acc), xr, yr)
			want := refDot(acc, xs, ys)
			checkCanon(t, k.name, got)
			if got.Big().Cmp(want) != 0 {
				t.Fatalf("%s n=%d: FoldDot = %s, want %s", k.name, n, got, want.RatString())
			}
			// Operands are not written.
			for i := range xs {
				if xr[i].Big().Cmp(xs[i]) != 0 || yr[i].Big().Cmp(ys[i]) != 0 {
					t.Fatalf("%s: operand %d changed", k.name, i)
				}
			}
		}
	}
}

// TestFoldDotFloats: over every other scalar FoldDot is the left fold of
// the scalar's own Mul and Add, bit for bit (NaN and signed zeros
// included), checked against a loop written here.
func TestFoldDotFloats(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	val := func() float64 {
		switch r.IntN(12) {
		case 0:
			return math.NaN()
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return math.Inf(1 - 2*r.IntN(2))
		case 3:
			return math.Ldexp(r.NormFloat64(), r.IntN(300)-150)
		}
		return r.NormFloat64()
	}
	for it := 0; it < 500; it++ {
		n := r.IntN(70)
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range xs {
			xs[i], ys[i] = val(), val()
		}
		acc := val()
		if it%3 == 0 {
			acc = 0
		}
		// Hardware NaNs are compared as NaN, not by payload: Go does not
		// specify which operand's payload a float operation returns, and
		// the compiler may commute an addition's operands (it does under
		// -race), so two compilations of the same loop can differ in a
		// NaN's bits. Binary32 (software, below) is compared bit for bit.
		checkFoldFloat(t, "f32", func(f float64) F32 { return F32(float32(f)) }, acc, xs, ys, func(a, b F32) bool {
			return math.Float32bits(float32(a)) == math.Float32bits(float32(b)) || a != a && b != b
		})
		checkFoldFloat(t, "f64", func(f float64) F64 { return F64(f) }, acc, xs, ys, func(a, b F64) bool {
			return math.Float64bits(float64(a)) == math.Float64bits(float64(b)) || a != a && b != b
		})
		checkFoldFloat(t, "binary32", func(f float64) Binary32 { return Binary32FromFloat32(float32(f)) }, acc, xs, ys, func(a, b Binary32) bool { return a == b })
		checkFoldFloat(t, "interval", func(f float64) Interval {
			if math.IsNaN(f) {
				f = 1.5
			}
			return Interval{Lo: f, Hi: f + math.Abs(f)/8}
		}, acc, xs, ys, func(a, b Interval) bool {
			return math.Float64bits(a.Lo) == math.Float64bits(b.Lo) && math.Float64bits(a.Hi) == math.Float64bits(b.Hi)
		})
		checkFoldFloat(t, "dual", func(f float64) Dual[F64] { return Dual[F64]{F64(f), F64(f / 3)} }, acc, xs, ys, func(a, b Dual[F64]) bool {
			return math.Float64bits(float64(a.Re)) == math.Float64bits(float64(b.Re)) && math.Float64bits(float64(a.Du)) == math.Float64bits(float64(b.Du))
		})
	}
}

func checkFoldFloat[T Scalar[T]](t *testing.T, name string, conv func(float64) T, acc float64, xs, ys []float64, same func(a, b T) bool) {
	t.Helper()
	xt, yt := make([]T, len(xs)), make([]T, len(ys))
	for i := range xs {
		xt[i], yt[i] = conv(xs[i]), conv(ys[i])
	}
	want := conv(acc)
	for i := range xt {
		want = want.Add(xt[i].Mul(yt[i]))
	}
	if got := FoldDot(conv(acc), xt, yt); !same(got, want) {
		t.Fatalf("%s n=%d: FoldDot %v, loop %v", name, len(xs), got, want)
	}
}

// TestFoldDotLengthMismatch: the fold runs over the shorter slice is not
// a contract; unequal lengths are a programming error and panic.
func TestFoldDotLengthMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	FoldDot(Rat{}, []Rat{NewRat(1, 2)}, nil)
}

// fatalRecorder is a testing.TB whose Fatalf records the failure and
// ends the goroutine, so a test can check that a checker fires.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Fatalf(string, ...any) { f.failed = true; runtime.Goexit() }

// fires reports whether check calls Fatalf.
func fires(t *testing.T, check func(tb testing.TB)) bool {
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); check(r) }()
	<-done
	return r.failed
}

// TestRatCheckersCatchPlantedFaults: the differential test's checks fire
// on planted faults — a non-canonical form (even mantissa, a zero with an
// exponent, a dyadic held as big.Rat, a big mantissa that fits int64), a
// wrong value, a wrong fused sum — and stay silent on the real thing.
func TestRatCheckersCatchPlantedFaults(t *testing.T) {
	faults := []struct {
		name  string
		check func(tb testing.TB)
	}{
		{"even mantissa", func(tb testing.TB) { checkCanon(tb, "x", Rat{m: 6, e: -3}) }},
		{"zero with exponent", func(tb testing.TB) { checkCanon(tb, "x", Rat{e: 4}) }},
		{"dyadic as big.Rat", func(tb testing.TB) { checkCanon(tb, "x", Rat{r: big.NewRat(3, 8)}) }},
		{"small big mantissa", func(tb testing.TB) { checkCanon(tb, "x", Rat{b: big.NewInt(3)}) }},
		{"wrong value", func(tb testing.TB) { sameAs(tb, "x", NewRat(1, 2), big.NewRat(1, 3)) }},
		{"wrong sum", func(tb testing.TB) {
			got := FoldDot(Rat{}, []Rat{NewRat(1, 2), NewRat(1, 3)}, []Rat{NewRat(1, 1), NewRat(1, 1)})
			sameAs(tb, "dot", got.Add(NewRat(1, 1<<40)), refDot(new(big.Rat), []*big.Rat{big.NewRat(1, 2), big.NewRat(1, 3)}, []*big.Rat{big.NewRat(1, 1), big.NewRat(1, 1)}))
		}},
	}
	for _, f := range faults {
		if !fires(t, f.check) {
			t.Errorf("%s: not caught", f.name)
		}
	}
	if fires(t, func(tb testing.TB) { sameAs(tb, "x", NewRat(-3, 8), big.NewRat(-3, 8)) }) {
		t.Error("a correct value was flagged")
	}
}

// TestRatOuter: the slab-allocated outer product is element for element
// ys[j]·xs[k], canonical, and shares no mantissa between elements or with
// its operands.
func TestRatOuter(t *testing.T) {
	g := ratGen{rand.New(rand.NewPCG(8, 9))}
	for it := 0; it < 60; it++ {
		ys, xs := make([]Rat, g.r.IntN(7)), make([]Rat, g.r.IntN(7))
		for i := range ys {
			ys[i] = RatFromBig(g.ref())
		}
		for i := range xs {
			xs[i] = RatFromBig(g.ref())
		}
		dst := make([]Rat, len(ys)*len(xs))
		ratOuter(dst, ys, xs)
		seen := map[*big.Int]bool{}
		for j := range ys {
			for k := range xs {
				got := dst[j*len(xs)+k]
				sameAs(t, "outer", got, new(big.Rat).Mul(ys[j].Big(), xs[k].Big()))
				if got.b != nil {
					if seen[got.b] || got.b == ys[j].b || got.b == xs[k].b {
						t.Fatalf("mantissa shared at (%d, %d)", j, k)
					}
					seen[got.b] = true
				}
			}
		}
	}
}
