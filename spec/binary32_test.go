package spec

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

var _ Scalar[Binary32] = Binary32(0)

const (
	b32QNaN    = Binary32(0x7FC00001)
	b32QNaN2   = Binary32(0xFFC00002) // negative quiet NaN
	b32SNaN    = Binary32(0x7F800001)
	b32SNaN2   = Binary32(0xFF800003) // negative signalling NaN
	b32PosInf  = Binary32(0x7F800000)
	b32NegInf  = Binary32(0xFF800000)
	b32NegZero = Binary32(0x80000000)
	b32Max     = Binary32(0x7F7FFFFF)
	b32MinSub  = Binary32(0x00000001)
	b32MaxSub  = Binary32(0x007FFFFF)
	b32MinNorm = Binary32(0x00800000)
)

// b32Specials are the edge-case operands mixed into every random stream.
var b32Specials = []uint32{
	0, 0x80000000, // ±0
	0x7F800000, 0xFF800000, // ±inf
	0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800001, 0xFFBFFFFF, // NaNs
	0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, // smallest/largest subnormal
	0x00800000, 0x80800000, 0x00800001, 0x00400000, // smallest normals, half of it
	0x7F7FFFFF, 0xFF7FFFFF, 0x7F7FFFFE, 0x7F000000, 0x7F000001, // near overflow
	0x3F800000, 0xBF800000, 0x3F800001, 0x3F7FFFFF, 0x40000000, 0x3F000000, // around 1
	0x33800000, 0x33800001, 0x34000000, 0x4B800000, 0x4B800001, // 2^-24, 2^-23, 2^24
	0x1F800000, 0x5F800000, 0x5F7FFFFF, 0x20000000, // 2^-64, 2^64
}

type b32Gen struct{ r *rand.Rand }

func newB32Gen(seed uint64) *b32Gen { return &b32Gen{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))} }

func (g *b32Gen) sign() uint32 { return g.r.Uint32() & b32Sign }

// operand draws one operand from a mix of classes.
func (g *b32Gen) operand() Binary32 {
	r := g.r
	switch k := r.IntN(16); {
	case k < 5: // uniformly random bit pattern
		return Binary32(r.Uint32())
	case k < 7: // listed edge cases
		return Binary32(b32Specials[r.IntN(len(b32Specials))])
	case k < 8: // random subnormal
		return Binary32(g.sign() | (1 + r.Uint32N(b32FracMask)))
	case k < 10: // short significand times a power of two: ties, exact results
		m := uint64(1 + r.Uint32N(1<<uint(1+r.IntN(24))-1))
		return b32RoundPack(g.sign(), m, r.IntN(254+149)-149, false)
	case k < 11: // near overflow
		return Binary32(g.sign() | uint32(245+r.IntN(10))<<23 | r.Uint32N(1<<23))
	case k < 12: // tiny normals
		return Binary32(g.sign() | uint32(1+r.IntN(30))<<23 | r.Uint32N(1<<23))
	case k < 14: // moderate range, where most real data lives
		return Binary32(g.sign() | uint32(100+r.IntN(56))<<23 | r.Uint32N(1<<23))
	}
	// exponents around the middle with a few low bits set (ties in mul)
	return Binary32(g.sign() | uint32(120+r.IntN(16))<<23 | (r.Uint32N(1<<23) &^ (1<<uint(r.IntN(23)) - 1)))
}

// related draws an operand related to a: close exponent (cancellation,
// ties), exactly half an ulp, or far apart.
func (g *b32Gen) related(a Binary32) Binary32 {
	r := g.r
	ea := int(uint32(a) >> 23 & 0xFF)
	clampE := func(e int) uint32 {
		if e < 0 {
			return 0
		}
		if e > 254 {
			return 254
		}
		return uint32(e)
	}
	switch r.IntN(6) {
	case 0: // near-cancellation: flip a few low bits and maybe the sign
		return (a ^ Binary32(r.Uint32N(1<<uint(r.IntN(24))))) ^ Binary32(g.sign())
	case 1: // half an ulp of a (a tie in addition) or just around it
		e := clampE(ea - 24 + r.IntN(3) - 1)
		return Binary32(g.sign() | e<<23 | r.Uint32N(4)*(r.Uint32N(2)))
	case 2: // close exponent
		return Binary32(g.sign() | clampE(ea+r.IntN(61)-30)<<23 | r.Uint32N(1<<23))
	case 3: // far apart
		return Binary32(g.sign() | clampE(ea+r.IntN(241)-120)<<23 | r.Uint32N(1<<23))
	case 4: // product or quotient around the overflow or underflow threshold
		var e int
		switch r.IntN(4) {
		case 0:
			e = 382 - ea // mul near 2^128
		case 1:
			e = 105 - ea // mul near 2^-149
		case 2:
			e = ea - 128 // div near 2^128
		default:
			e = ea + 149 // div near 2^-149
		}
		return Binary32(g.sign() | clampE(e+r.IntN(9)-4)<<23 | r.Uint32N(1<<23))
	}
	return g.operand()
}

func (g *b32Gen) pair() (Binary32, Binary32) {
	a := g.operand()
	if g.r.IntN(2) == 0 {
		return a, g.operand()
	}
	b := g.related(a)
	if g.r.IntN(2) == 0 {
		return b, a
	}
	return a, b
}

// b32Iterations is a random test's case count: full with
// TLCHECK_EXHAUSTIVE set (CI), short under -short, and a quarter of full
// (at least short) by default.
func b32Iterations(t testing.TB, full, short int) int {
	if testing.Short() {
		return short
	}
	if !exhaustive() {
		return max(full/4, short)
	}
	return full
}

// b32ExpectNaN is an independent restatement of the propagation rule.
func b32ExpectNaN(ops ...Binary32) Binary32 {
	for _, o := range ops {
		if o.isNaN() && o&b32QuietBit == 0 {
			return o | b32QuietBit
		}
	}
	for _, o := range ops {
		if o.isNaN() {
			return o
		}
	}
	panic("no NaN operand")
}

// b32CheckHW compares got with the hardware result want.
func b32CheckHW(t *testing.T, fails *int, op string, got Binary32, want float32, ops ...Binary32) {
	t.Helper()
	wb := math.Float32bits(want)
	anyNaN := false
	for _, o := range ops {
		anyNaN = anyNaN || o.isNaN()
	}
	var ok bool
	var note string
	switch {
	case anyNaN:
		ok, note = got == b32ExpectNaN(ops...), "NaN propagation rule"
	case want != want:
		ok, note = got == b32CanonNaN, "invalid operation gives the canonical NaN"
	default:
		ok = uint32(got) == wb
	}
	if !ok {
		*fails++
		if *fails <= 20 {
			t.Errorf("%s%v = %#08x, hardware %#08x %s", op, b32HexOps(ops), uint32(got), wb, note)
		}
	}
}

func b32HexOps(ops []Binary32) []string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = fmt.Sprintf("%#08x", uint32(o))
	}
	return s
}

func TestBinary32MatchesHardware(t *testing.T) {
	n := b32Iterations(t, 2_000_000, 200_000)
	type binop struct {
		name string
		soft func(a, b Binary32) Binary32
		hw   func(a, b F32) F32
	}
	ops := []binop{
		{"add", Binary32.Add, F32.Add},
		{"sub", Binary32.Sub, F32.Sub},
		{"mul", Binary32.Mul, F32.Mul},
		{"div", func(a, b Binary32) Binary32 { q, _ := a.Div(b); return q },
			func(a, b F32) F32 { q, _ := a.Div(b); return q }},
	}
	for i, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			g := newB32Gen(uint64(100 + i))
			fails := 0
			for range n {
				a, b := g.pair()
				got := op.soft(a, b)
				want := op.hw(F32(a.Float32()), F32(b.Float32()))
				b32CheckHW(t, &fails, op.name, got, float32(want), a, b)
			}
			if fails > 0 {
				t.Errorf("%d of %d %s results differ", fails, n, op.name)
			}
		})
	}
	t.Run("sqrt", func(t *testing.T) {
		t.Parallel()
		g := newB32Gen(7)
		fails := 0
		for range n {
			a := g.operand()
			if g.r.IntN(4) == 0 {
				a &^= b32Sign
			}
			got, err := a.Sqrt()
			if err != nil {
				t.Fatal(err)
			}
			want, _ := F32(a.Float32()).Sqrt()
			b32CheckHW(t, &fails, "sqrt", got, float32(want), a)
		}
		// Every positive finite input whose significand is all ones or a
		// perfect square is exercised too, across all exponents.
		for e := uint32(0); e < 255; e++ {
			for _, f := range []uint32{0, 1, 0x7FFFFF, 0x400000, 0x100000, 0x7FFFFE} {
				a := Binary32(e<<23 | f)
				got, _ := a.Sqrt()
				want, _ := F32(a.Float32()).Sqrt()
				b32CheckHW(t, &fails, "sqrt", got, float32(want), a)
			}
		}
		if fails > 0 {
			t.Errorf("%d sqrt results differ", fails)
		}
	})
}

// b32RatOf returns the exact value of a finite x.
func b32RatOf(x Binary32) *big.Rat { return new(big.Rat).SetFloat64(x.widen64()) }

func b32IsFinite(x Binary32) bool { return uint32(x)&b32ExpMask != b32ExpMask }

// b32RoundRat is the proof model's rounding: round(exact) to nearest even.
// exactZeroSign is the sign to give an exact zero.
func b32RoundRat(r *big.Rat, exactZeroSign uint32) Binary32 {
	if r.Sign() == 0 {
		return Binary32(exactZeroSign)
	}
	f, _ := r.Float32()
	return Binary32FromFloat32(f)
}

// TestBinary32ProofModel checks the finite path against round(exact)
// computed with big.Rat, independently of the hardware.
func TestBinary32ProofModel(t *testing.T) {
	n := b32Iterations(t, 100_000, 10_000)
	g := newB32Gen(11)
	fails := 0
	report := func(op string, got, want Binary32, ops ...Binary32) {
		if got != want {
			fails++
			if fails <= 20 {
				t.Errorf("%s%v = %#08x, round(exact) = %#08x", op, b32HexOps(ops), uint32(got), uint32(want))
			}
		}
	}
	for range n {
		a, b := g.pair()
		if !b32IsFinite(a) || !b32IsFinite(b) {
			continue
		}
		ra, rb := b32RatOf(a), b32RatOf(b)
		sa, sb := uint32(a)&b32Sign, uint32(b)&b32Sign
		zs := func(s1, s2 uint32) uint32 { // sign of an exact zero sum
			if a.IsZero() && b.IsZero() {
				return s1 & s2
			}
			return 0
		}
		report("add", a.Add(b), b32RoundRat(new(big.Rat).Add(ra, rb), zs(sa, sb)), a, b)
		report("sub", a.Sub(b), b32RoundRat(new(big.Rat).Sub(ra, rb), zs(sa, sb^b32Sign)), a, b)
		report("mul", a.Mul(b), b32RoundRat(new(big.Rat).Mul(ra, rb), sa^sb), a, b)
		if !b.IsZero() {
			q, _ := a.Div(b)
			report("div", q, b32RoundRat(new(big.Rat).Quo(ra, rb), sa^sb), a, b)
		}
		// sqrt: the result q must satisfy mid(pred q, q)² < a < mid(q, succ q)².
		if a.orderKey() > 0 {
			q, _ := a.Sqrt()
			lo := new(big.Rat).Add(b32RatOf(q), b32RatOf(q-1))
			lo.Quo(lo, big.NewRat(2, 1))
			hi := new(big.Rat).Add(b32RatOf(q), b32RatOf(q+1)) // q ≤ 2^64, so q+1 is finite
			hi.Quo(hi, big.NewRat(2, 1))
			if q == 0 || new(big.Rat).Mul(lo, lo).Cmp(ra) >= 0 || new(big.Rat).Mul(hi, hi).Cmp(ra) <= 0 {
				fails++
				t.Errorf("sqrt(%#08x) = %#08x is not the nearest root", uint32(a), uint32(q))
			}
		}
	}
	if fails > 0 {
		t.Errorf("%d results differ from round(exact)", fails)
	}
}

func TestBinary32FMA(t *testing.T) {
	n := b32Iterations(t, 200_000, 20_000)
	g := newB32Gen(13)
	fails := 0
	for i := range n {
		a, b := g.pair()
		var c Binary32
		switch i % 4 {
		case 0:
			c = g.operand()
		case 1: // cancel the rounded product: exposes the product's low bits
			c = a.Mul(b).Neg()
		case 2: // nearly cancel it
			c = a.Mul(b).Neg() ^ Binary32(g.r.Uint32N(1<<uint(g.r.IntN(12))))
		default:
			c = g.related(a)
		}
		got := a.FMA(b, c)
		var want Binary32
		switch {
		case a.isNaN() || b.isNaN() || c.isNaN():
			want = b32ExpectNaN(a, b, c)
		case !b32IsFinite(a) || !b32IsFinite(b) || !b32IsFinite(c):
			// Compare with float64 hardware: a·b is exact in float64 and the
			// sum of infinities is exact, so only the NaN-ness matters.
			w := math.FMA(a.widen64(), b.widen64(), c.widen64())
			if w != w {
				want = b32CanonNaN
			} else {
				want = binary32FromFloat64(w)
			}
		default:
			p := new(big.Rat).Mul(b32RatOf(a), b32RatOf(b))
			var zs uint32
			if p.Sign() == 0 && c.IsZero() {
				zs = (uint32(a) ^ uint32(b)) & uint32(c) & b32Sign
			}
			want = b32RoundRat(p.Add(p, b32RatOf(c)), zs)
		}
		if got != want {
			fails++
			if fails <= 20 {
				t.Errorf("fma(%#08x, %#08x, %#08x) = %#08x, want %#08x", uint32(a), uint32(b), uint32(c), uint32(got), uint32(want))
			}
		}
		// FMA with a zero addend of the product's sign is Mul; with b = 1
		// it is Add.
		if !a.Mul(b).isNaN() {
			zero := Binary32((uint32(a) ^ uint32(b)) & b32Sign)
			if m := a.Mul(b); a.FMA(b, zero) != m {
				fails++
				t.Errorf("fma(%#08x, %#08x, ±0) = %#08x, mul gives %#08x", uint32(a), uint32(b), uint32(a.FMA(b, zero)), uint32(m))
			}
		}
		if s := a.Add(c); !s.isNaN() && a.FMA(b32One, c) != s {
			fails++
			t.Errorf("fma(%#08x, 1, %#08x) differs from add", uint32(a), uint32(c))
		}
	}
	if fails > 0 {
		t.Errorf("%d FMA results wrong", fails)
	}
}

func TestBinary32FMASpecial(t *testing.T) {
	one, two, three := Binary32(b32One), Binary32(0x40000000), Binary32(0x40400000)
	tiny := b32MinSub
	half := Binary32(0x3F000000)
	cases := []struct {
		a, b, c, want Binary32
	}{
		{two, three, one, 0x40E00000}, // 7
		{b32PosInf, 0, one, b32CanonNaN},
		{0, b32NegInf, b32QNaN, b32QNaN}, // propagation wins over invalid
		{b32PosInf, one, b32NegInf, b32CanonNaN},
		{b32PosInf, b32MinusOne, b32NegInf, b32NegInf},
		{one, one, b32PosInf, b32PosInf},
		{b32Max, two, b32NegInf, b32NegInf}, // finite product overflow is not ∞ − ∞
		{b32Max, two, b32Max.Neg(), b32Max}, // exact: 2M − M = M, no intermediate overflow
		{b32NegZero, one, 0, 0},
		{b32NegZero, one, b32NegZero, b32NegZero},
		{b32NegZero, b32MinusOne, b32NegZero, 0},
		{one, one, b32MinusOne, 0},
		{b32MinusOne, one, one, 0},
		{tiny, tiny, b32NegZero, 0},                    // underflowed product keeps its sign
		{tiny.Neg(), tiny, 0, b32NegZero},              //
		{tiny, half, 0, 0},                             // tie at the bottom rounds to even 0
		{tiny, half, tiny, 0x2},                        // 1.5·2^-149 ties to 2·2^-149
		{b32Max, one, Binary32(0x73000000), b32PosInf}, // M + 2^103 ties to even = ∞
		{b32SNaN, b32QNaN, 0, b32SNaN | b32QuietBit},
		{b32QNaN, b32SNaN2, b32SNaN, b32SNaN2 | b32QuietBit},
		{b32QNaN, one, b32QNaN2, b32QNaN},
		{one, b32QNaN2, b32QNaN, b32QNaN2},
		{one, one, b32SNaN2, b32SNaN2 | b32QuietBit},
		// (1 + 2^-23)² − (1 + 2^-22) = 2^-46: the product's low bits survive
		{0x3F800001, 0x3F800001, 0xBF800002, 0x28800000},
		// (1 + 2^-23)² − 1 = 2^-22 + 2^-46 ties to even 2^-22
		{0x3F800001, 0x3F800001, b32MinusOne, 0x34800000},
	}
	for _, c := range cases {
		if got := c.a.FMA(c.b, c.c); got != c.want {
			t.Errorf("fma(%#08x, %#08x, %#08x) = %#08x, want %#08x", uint32(c.a), uint32(c.b), uint32(c.c), uint32(got), uint32(c.want))
		}
	}
}

func TestBinary32NaNPropagation(t *testing.T) {
	one := Binary32(b32One)
	div := func(a, b Binary32) Binary32 { q, _ := a.Div(b); return q }
	type bin func(a, b Binary32) Binary32
	ops := map[string]bin{"add": Binary32.Add, "sub": Binary32.Sub, "mul": Binary32.Mul, "div": div,
		"max": Binary32.Max, "min": Binary32.Min}
	cases := []struct {
		a, b, want Binary32
	}{
		{b32QNaN, one, b32QNaN},
		{one, b32QNaN2, b32QNaN2}, // sign kept, also for sub
		{b32SNaN, one, b32SNaN | b32QuietBit},
		{one, b32SNaN2, b32SNaN2 | b32QuietBit},
		{b32QNaN, b32SNaN2, b32SNaN2 | b32QuietBit}, // signalling beats an earlier quiet NaN
		{b32SNaN, b32SNaN2, b32SNaN | b32QuietBit},  // first signalling NaN
		{b32QNaN2, b32QNaN, b32QNaN2},               // first quiet NaN
		{b32QNaN, b32QNaN2, b32QNaN},
		{b32PosInf, b32SNaN, b32SNaN | b32QuietBit},
		{0, b32QNaN, b32QNaN},
	}
	for name, op := range ops {
		for _, c := range cases {
			if got := op(c.a, c.b); got != c.want {
				t.Errorf("%s(%#08x, %#08x) = %#08x, want %#08x", name, uint32(c.a), uint32(c.b), uint32(got), uint32(c.want))
			}
		}
	}
	unary := map[string]func(Binary32) Binary32{
		"sqrt":  func(x Binary32) Binary32 { r, _ := x.Sqrt(); return r },
		"exp":   func(x Binary32) Binary32 { r, _ := x.Exp(); return r },
		"log":   func(x Binary32) Binary32 { r, _ := x.Log(); return r },
		"log1p": func(x Binary32) Binary32 { r, _ := x.Log1p(); return r },
		"tanh":  func(x Binary32) Binary32 { r, _ := x.Tanh(); return r },
		"sin":   func(x Binary32) Binary32 { r, _ := x.Sin(); return r },
		"cos":   func(x Binary32) Binary32 { r, _ := x.Cos(); return r },
		"sign":  Binary32.Sign,
	}
	for name, op := range unary {
		for _, x := range []Binary32{b32QNaN, b32QNaN2, b32SNaN, b32SNaN2, 0x7FFFFFFF} {
			if got, want := op(x), x|b32QuietBit; got != want {
				t.Errorf("%s(%#08x) = %#08x, want %#08x", name, uint32(x), uint32(got), uint32(want))
			}
		}
	}
	// Neg and Abs are sign-bit operations, also on NaNs.
	if b32SNaN.Neg() != b32SNaN|b32Sign || b32QNaN2.Abs() != b32QNaN2&^b32Sign {
		t.Error("Neg/Abs must only touch the sign bit")
	}
	// Invalid operations give the canonical NaN.
	for _, got := range []Binary32{
		b32PosInf.Add(b32NegInf), b32PosInf.Sub(b32PosInf), b32NegInf.Sub(b32NegInf),
		Binary32(0).Mul(b32NegInf), b32NegInf.Mul(b32NegZero),
		div(0, 0), div(b32NegZero, 0), div(b32PosInf, b32NegInf),
		Binary32(b32MinusOne).sqrt(), b32NegInf.sqrt(), Binary32(0x80000001).sqrt(),
	} {
		if got != b32CanonNaN {
			t.Errorf("invalid operation gave %#08x, want 0x7fc00000", uint32(got))
		}
	}
}

func TestBinary32SignedZeroAndBoundaries(t *testing.T) {
	one, two := Binary32(b32One), Binary32(0x40000000)
	half := Binary32(0x3F000000)
	div := func(a, b Binary32) Binary32 { q, _ := a.Div(b); return q }
	cases := []struct {
		name      string
		got, want Binary32
	}{
		{"+0 + -0", Binary32(0).Add(b32NegZero), 0},
		{"-0 + +0", b32NegZero.Add(0), 0},
		{"-0 + -0", b32NegZero.Add(b32NegZero), b32NegZero},
		{"1 + -1", one.Add(one.Neg()), 0},
		{"-1 - -1", one.Neg().Sub(one.Neg()), 0},
		{"-0 - +0", b32NegZero.Sub(0), b32NegZero},
		{"-0 - -0", b32NegZero.Sub(b32NegZero), 0},
		{"+0 - +0", Binary32(0).Sub(0), 0},
		{"x + -0", two.Add(b32NegZero), two},
		{"-0 + x", b32NegZero.Add(b32MinSub), b32MinSub},
		{"-0 * 1", b32NegZero.Mul(one), b32NegZero},
		{"-0 * -1", b32NegZero.Mul(one.Neg()), 0},
		{"tiny * tiny", b32MinSub.Mul(b32MinSub), 0},
		{"-tiny * tiny", b32MinSub.Neg().Mul(b32MinSub), b32NegZero},
		{"-0 / 1", div(b32NegZero, one), b32NegZero},
		{"1 / -inf", div(one, b32NegInf), b32NegZero},
		{"-1 / -0", div(one.Neg(), b32NegZero), b32PosInf},
		{"1 / -0", div(one, b32NegZero), b32NegInf},
		{"-inf / 2", div(b32NegInf, two), b32NegInf},
		{"sqrt(-0)", b32NegZero.sqrt(), b32NegZero},
		{"sqrt(+0)", Binary32(0).sqrt(), 0},
		{"sqrt(+inf)", b32PosInf.sqrt(), b32PosInf},
		{"sqrt(4)", Binary32(0x40800000).sqrt(), two},
		{"sqrt(min subnormal)", b32MinSub.sqrt(), 0x1A3504F3},
		// overflow
		{"max + half ulp ties to inf", b32Max.Add(0x73000000), b32PosInf},
		{"max + below half ulp", b32Max.Add(0x72FFFFFF), b32Max},
		{"-max - half ulp", b32Max.Neg().Sub(0x73000000), b32NegInf},
		{"max * 2", b32Max.Mul(two), b32PosInf},
		{"max * 1", b32Max.Mul(one), b32Max},
		{"max / 0.5", div(b32Max, half), b32PosInf},
		{"2^127 * 2", Binary32(0x7F000000).Mul(two), b32PosInf},
		// underflow
		{"min sub * 0.5 ties to 0", b32MinSub.Mul(half), 0},
		{"min sub * 0.75", b32MinSub.Mul(0x3F400000), b32MinSub},
		{"3 min sub / 2 ties to even", div(0x3, two), 0x2},
		{"5 min sub / 2 ties to even", div(0x5, two), 0x2},
		{"-min sub / 2", div(b32MinSub.Neg(), two), b32NegZero},
		{"max sub + min sub", b32MaxSub.Add(b32MinSub), b32MinNorm},
		{"min norm - min sub", b32MinNorm.Sub(b32MinSub), b32MaxSub},
		{"min norm / 2", div(b32MinNorm, two), 0x00400000},
		{"min norm * (1 - 2^-24)", b32MinNorm.Mul(0x3F7FFFFF), b32MinNorm}, // rounds back up
		{"1 / max", div(one, b32Max), 0x00200000},
		{"2^-126 * 2^-23", b32MinNorm.Mul(0x34000000), b32MinSub},
		// ties in the normal range
		{"1 + 2^-24 ties to even", one.Add(0x33800000), one},
		{"1 + 3·2^-24 ties to even", Binary32(0x3F800001).Add(0x33800000), 0x3F800002},
		{"2^24 + 1", Binary32(0x4B800000).Add(one), 0x4B800000},
		{"2^24 + 3", Binary32(0x4B800000).Add(0x40400000), 0x4B800002},
		{"1 - 2^-25", one.Sub(0x33000000), 0x3F800000}, // tie between 1-2^-24 and 1: even is 1
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %#08x, want %#08x", c.name, uint32(c.got), uint32(c.want))
		}
	}
}

func TestBinary32ScalarMethods(t *testing.T) {
	one, two := Binary32(b32One), Binary32(0x40000000)
	if one.Kind() != "binary32" {
		t.Error("kind")
	}
	if c, ok := b32NegZero.Compare(0); !ok || c != 0 {
		t.Error("-0 must compare equal to +0")
	}
	if c, ok := one.Compare(two); !ok || c != -1 {
		t.Error("1 < 2")
	}
	if c, ok := b32NegInf.Compare(b32Max.Neg()); !ok || c != -1 {
		t.Error("-inf < -max")
	}
	if _, ok := b32QNaN.Compare(one); ok {
		t.Error("NaN compare must be undecided")
	}
	if !b32NegZero.IsZero() || !Binary32(0).IsZero() || b32MinSub.IsZero() {
		t.Error("IsZero")
	}
	if b32NegZero.Same(0) || !b32QNaN.Same(b32QNaN) || b32QNaN.Same(b32QNaN2) {
		t.Error("Same must be bit equality")
	}
	if one.Max(two) != two || two.Max(one) != two || one.Min(two) != one || b32NegZero.Max(0) != b32NegZero ||
		Binary32(0).Min(b32NegZero) != 0 || b32NegInf.Max(b32NegZero) != b32NegZero {
		t.Error("Max/Min")
	}
	if two.Neg().Sign() != b32MinusOne || b32NegZero.Sign() != 0 || b32MinSub.Sign() != one || b32NegInf.Sign() != b32MinusOne {
		t.Error("Sign")
	}
	if b32NegZero.Step() != 0 || b32MinSub.Step() != one || b32NegInf.Step() != 0 || b32QNaN.Step() != 0 || b32PosInf.Step() != one {
		t.Error("Step")
	}
	if two.Neg().Abs() != two || b32NegZero.Abs() != 0 {
		t.Error("Abs")
	}
	if Zero[Binary32]() != 0 || One[Binary32]() != one {
		t.Error("Zero/One")
	}
	if x := Binary32FromBits(0x12345678); x.Bits() != 0x12345678 || Binary32FromFloat32(x.Float32()) != x {
		t.Error("bit round trip")
	}
	if Binary32FromFloat32(float32(math.Float32frombits(0x7FA00000))).Bits() != 0x7FA00000 {
		t.Error("signalling NaN bits must survive Float32 round trip")
	}

	elementaries := []struct {
		name string
		soft func(Binary32) (Binary32, error)
		hw   func(F32) (F32, error)
	}{
		{"exp", Binary32.Exp, F32.Exp}, {"log", Binary32.Log, F32.Log}, {"log1p", Binary32.Log1p, F32.Log1p}, {"tanh", Binary32.Tanh, F32.Tanh},
		{"sin", Binary32.Sin, F32.Sin}, {"cos", Binary32.Cos, F32.Cos},
	}
	g := newB32Gen(17)
	for range 200_000 {
		x := Binary32(g.r.Uint32())
		if !x.isNaN() {
			if got, want := x.Float64(), float64(x.Float32()); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("Float64(%#08x) = %v, want %v", uint32(x), got, want)
			}
			if x.String() != F32(x.Float32()).String() {
				t.Fatalf("String(%#08x) = %s, want %s", uint32(x), x.String(), F32(x.Float32()).String())
			}
			for _, e := range elementaries {
				got, _ := e.soft(x)
				want, _ := e.hw(F32(x.Float32()))
				if want != want {
					if got != b32CanonNaN {
						t.Fatalf("%s(%#08x) = %#08x, want canonical NaN", e.name, uint32(x), uint32(got))
					}
				} else if got.Float32() != float32(want) || got.Bits()>>31 != math.Float32bits(float32(want))>>31 {
					t.Fatalf("%s(%#08x) = %v, F32 gives %v", e.name, uint32(x), got, want)
				}
			}
		}
		// Narrowing float64 → binary32 in software agrees with hardware.
		f := math.Float64frombits(g.r.Uint64())
		if g.r.IntN(2) == 0 { // concentrate on the binary32 range
			f = math.Ldexp(float64(g.r.Uint64()>>11)/(1<<53), g.r.IntN(320)-170)
		}
		if f == f {
			if got, want := binary32FromFloat64(f), Binary32FromFloat32(float32(f)); got != want {
				t.Fatalf("binary32FromFloat64(%v) = %#08x, want %#08x", f, uint32(got), uint32(want))
			}
		}
		// FromInt rounds exactly like the hardware conversion.
		n := int64(g.r.Uint64()) >> uint(g.r.IntN(64))
		if got, want := Binary32(0).FromInt(n), Binary32FromFloat32(float32(n)); got != want {
			t.Fatalf("FromInt(%d) = %#08x, want %#08x", n, uint32(got), uint32(want))
		}
	}
	for _, n := range []int64{0, 1, -1, 1<<24 + 1, 1<<24 + 3, -(1<<24 + 1), math.MaxInt64, math.MinInt64, 1<<53 + 1} {
		if got, want := Binary32(0).FromInt(n), Binary32FromFloat32(float32(n)); got != want {
			t.Errorf("FromInt(%d) = %#08x, want %#08x", n, uint32(got), uint32(want))
		}
	}
	ratCases := []struct {
		r    *big.Rat
		want Binary32
	}{
		{big.NewRat(1, 3), 0x3EAAAAAB},
		{big.NewRat(-1, 3), 0xBEAAAAAB},
		{new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 149)), b32MinSub},
		{new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 150)), 0},           // tie to even 0
		{new(big.Rat).SetFrac(big.NewInt(3), new(big.Int).Lsh(big.NewInt(1), 151)), b32MinSub},   // 0.75 ulp
		{new(big.Rat).SetFrac(big.NewInt(-3), new(big.Int).Lsh(big.NewInt(1), 150)), 0x80000002}, // -1.5 ulp ties to -2
		{new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 128)), b32PosInf},                   // overflow
		{new(big.Rat).SetInt(b32Pow2m(128, 103, 0)), b32PosInf},                                  // max + half ulp ties to "even" ∞
		{new(big.Rat).SetInt(b32Pow2m(128, 103, 1)), b32Max},
		{new(big.Rat).SetInt(b32Pow2m(128, 104, 0)), b32Max},
	}
	for _, c := range ratCases {
		if got := Binary32(0).FromRat(c.r); got != c.want {
			t.Errorf("FromRat(%s) = %#08x, want %#08x", c.r.RatString(), uint32(got), uint32(c.want))
		}
	}
	if got := ConstRat[Binary32](1, 2); got != 0x3F000000 {
		t.Errorf("ConstRat(1,2) = %#08x", uint32(got))
	}
	if _, err := Binary32(0).Div(0); err != nil {
		t.Error("Div never fails")
	}
	if s := b32NegZero.String(); s != "-0" {
		t.Errorf("String(-0) = %q", s)
	}
	if s := Binary32(0x3DCCCCCD).String(); s != "0.1" {
		t.Errorf("String(0.1f) = %q", s)
	}
}

// TestBinary32FromRatSoftRounding cross-checks FromRat (big.Rat.Float32)
// against the soft-float rounding on random rationals p/q·2^e, including
// the subnormal range, total underflow and overflow: q' = ⌊p·2^k/q⌋ has
// at least 26 bits and a non-zero remainder is the sticky bit.
func TestBinary32FromRatSoftRounding(t *testing.T) {
	g := newB32Gen(31)
	for range 50_000 {
		p := new(big.Int).SetUint64(1 + g.r.Uint64()>>uint(g.r.IntN(64)))
		q := new(big.Int).SetUint64(1 + g.r.Uint64()>>uint(g.r.IntN(64)))
		if g.r.IntN(3) == 0 {
			q.SetInt64(1) // dyadic: often exact, ties likely
		}
		e := g.r.IntN(500) - 300
		var sign uint32
		if g.r.IntN(2) == 0 {
			sign = b32Sign
		}
		r := new(big.Rat).SetFrac(p, q)
		if e >= 0 {
			r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(e))))
		} else {
			r.Quo(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(-e))))
		}
		if sign != 0 {
			r.Neg(r)
		}
		k := 90 // p·2^90/q ≥ 2^26 since q < 2^64
		num := new(big.Int).Lsh(p, uint(k))
		quo, rem := new(big.Int).QuoRem(num, q, new(big.Int))
		// quo < 2^154: shift it into 64 bits, folding the lost bits into sticky
		sticky := rem.Sign() != 0
		if sh := quo.BitLen() - 64; sh > 0 {
			lost := new(big.Int).And(quo, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(sh)), big.NewInt(1)))
			sticky = sticky || lost.Sign() != 0
			quo.Rsh(quo, uint(sh))
			k -= sh
		}
		want := b32RoundPack(sign, quo.Uint64(), e-k, sticky)
		if got := Binary32(0).FromRat(r); got != want {
			t.Fatalf("FromRat(%s·2^%d) = %#08x, soft rounding gives %#08x", new(big.Rat).SetFrac(p, q).RatString(), e, uint32(got), uint32(want))
		}
	}
}

// b32Pow2m returns 2^a − 2^b − c.
func b32Pow2m(a, b uint, c int64) *big.Int {
	x := new(big.Int).Lsh(big.NewInt(1), a)
	x.Sub(x, new(big.Int).Lsh(big.NewInt(1), b))
	return x.Sub(x, big.NewInt(c))
}

func TestBinary32Isqrt(t *testing.T) {
	g := newB32Gen(19)
	check := func(n uint64) {
		r := b32Isqrt64(n)
		lo := new(big.Int).SetUint64(r)
		hi := new(big.Int).Add(lo, big.NewInt(1))
		bn := new(big.Int).SetUint64(n)
		if new(big.Int).Mul(lo, lo).Cmp(bn) > 0 || new(big.Int).Mul(hi, hi).Cmp(bn) <= 0 {
			t.Fatalf("b32Isqrt64(%d) = %d", n, r)
		}
	}
	for _, n := range []uint64{0, 1, 2, 3, 4, 1<<62 - 1, 1 << 62, 1<<63 - 1, 1 << 63, math.MaxUint64} {
		check(n)
	}
	for range 100_000 {
		check(g.r.Uint64() >> uint(g.r.IntN(64)))
	}
}

// b32BenchOperands are finite, normal operands of moderate magnitude.
func b32BenchOperands() []Binary32 {
	g := newB32Gen(23)
	xs := make([]Binary32, 1024)
	for i := range xs {
		xs[i] = Binary32(uint32(100+g.r.IntN(56))<<23 | g.r.Uint32N(1<<23))
	}
	return xs
}

var b32Sink Binary32

func benchBinary32(b *testing.B, op func(x, y Binary32) Binary32) {
	xs := b32BenchOperands()
	b.ReportAllocs()
	b.ResetTimer()
	var acc Binary32
	for i := 0; b.Loop(); i++ {
		acc ^= op(xs[i&1023], xs[(i+1)&1023])
	}
	b32Sink = acc
}

func BenchmarkBinary32Add(b *testing.B) { benchBinary32(b, Binary32.Add) }

func BenchmarkBinary32Mul(b *testing.B) { benchBinary32(b, Binary32.Mul) }

func BenchmarkBinary32Div(b *testing.B) {
	benchBinary32(b, func(x, y Binary32) Binary32 { q, _ := x.Div(y); return q })
}

func BenchmarkBinary32Sqrt(b *testing.B) {
	benchBinary32(b, func(x, _ Binary32) Binary32 { r, _ := x.Sqrt(); return r })
}

func BenchmarkBinary32FMA(b *testing.B) {
	benchBinary32(b, func(x, y Binary32) Binary32 { return x.FMA(y, x) })
}
