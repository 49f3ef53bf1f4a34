package spec

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// Binary32 is a bit-level IEEE 754 binary32 soft-float: the value is the
// 32-bit interchange encoding itself, and every arithmetic operation is
// computed without any host floating-point instruction.
//
// Add, Sub, Mul, Div, Sqrt and FMA decode their operands into exact
// (sign, integer significand, exponent) triples, compute the exact result
// (or an integer truncation of it plus a sticky bit) in uint64 arithmetic,
// and round ONCE to nearest, ties to even, with gradual underflow
// (subnormals) and overflow to ±inf. This is the §7 proof model: on the
// finite path the operation equals round(exact).
//
// Special values follow IEEE 754 under round-to-nearest: x + (−x) = +0,
// −0 + −0 = −0, the sign of a zero product or quotient is the XOR of the
// operand signs, sqrt(−0) = −0. Invalid operations (∞ − ∞, 0·∞, 0/0, ∞/∞,
// sqrt of a negative non-zero number) return the canonical NaN 0x7FC00000.
// NaN propagation is deterministic (unlike hardware, whose payload choice
// is platform-defined): when any operand is a NaN, the operands are scanned
// left to right, the first signalling NaN is chosen if there is one, else
// the first quiet NaN, and it is returned quieted (bit 22 set). Max, Min,
// Sign and the elementary functions propagate NaN operands the same way.
//
// Trusted boundary: Exp, Log, Log1p, Tanh, Sin and Cos evaluate Go's
// float64 math library at the exactly widened operand and round the
// float64 result to binary32 (in software, ties to even). They are deterministic but NOT
// claimed correctly rounded; nothing in the checker may assume more than
// "close to the real function" for them.
type Binary32 uint32

const (
	b32Sign          = 0x80000000
	b32ExpMask       = 0x7F800000 // also the encoding of +inf
	b32FracMask      = 0x007FFFFF
	b32QuietBit      = 0x00400000
	b32CanonNaN      = 0x7FC00000
	b32MinExp        = -149 // exponent of the least significant bit of every subnormal
	b32One           = 0x3F800000
	b32MinusOne      = 0xBF800000
	b32MagnitudeMask = 0x7FFFFFFF
)

// Binary32FromBits returns the binary32 whose encoding is u.
func Binary32FromBits(u uint32) Binary32 { return Binary32(u) }

// Binary32FromFloat32 returns the binary32 with the same encoding as f (a
// bit copy; NaN payloads are kept).
func Binary32FromFloat32(f float32) Binary32 { return Binary32(math.Float32bits(f)) }

// Bits returns the IEEE 754 encoding of x.
func (x Binary32) Bits() uint32 { return uint32(x) }

// Float32 returns the host float32 with the same encoding as x (a bit
// copy).
func (x Binary32) Float32() float32 { return math.Float32frombits(uint32(x)) }

func (x Binary32) isNaN() bool { return uint32(x)&b32MagnitudeMask > b32ExpMask }

func (x Binary32) isSNaN() bool { return x.isNaN() && uint32(x)&b32QuietBit == 0 }

// b32PickNaN2 applies the propagation rule to two operands, at least one of
// which is a NaN.
func b32PickNaN2(a, b Binary32) Binary32 {
	switch {
	case a.isSNaN():
		return a | b32QuietBit
	case b.isSNaN():
		return b | b32QuietBit
	case a.isNaN():
		return a
	}
	return b | b32QuietBit
}

// b32PickNaN3 applies the propagation rule to three operands, at least one of
// which is a NaN.
func b32PickNaN3(a, b, c Binary32) Binary32 {
	switch {
	case a.isSNaN():
		return a | b32QuietBit
	case b.isSNaN():
		return b | b32QuietBit
	case c.isSNaN():
		return c | b32QuietBit
	case a.isNaN():
		return a
	case b.isNaN():
		return b
	}
	return c | b32QuietBit
}

// b32Unpack decodes a finite, non-zero magnitude (sign bit clear) into m·2^e
// with m < 2^24.
func b32Unpack(a uint32) (m uint64, e int) {
	be := int(a >> 23)
	f := uint64(a & b32FracMask)
	if be == 0 {
		return f, b32MinExp
	}
	return f | 1<<23, be - 150
}

// b32RoundPack returns the binary32 nearest, ties to even, to
// (−1)^sign · (m + δ) · 2^exp, where δ = 0 when sticky is false and
// 0 < δ < 1 when it is true. sign is 0 or b32Sign. When sticky is set, m
// must have at least 25 significant bits, so that the rounding position
// lies at or above bit 1 of m and δ only breaks ties.
func b32RoundPack(sign uint32, m uint64, exp int, sticky bool) Binary32 {
	if m == 0 {
		return Binary32(sign)
	}
	// e2 is the exponent of the least significant bit of the 24-bit result
	// significand, clamped at the subnormal exponent.
	e2 := exp + bits.Len64(m) - 24
	if e2 < b32MinExp {
		e2 = b32MinExp
	}
	var sig uint64
	if shift := e2 - exp; shift <= 0 {
		sig = m << uint(-shift) // exact
	} else {
		var half, rest bool
		switch {
		case shift > 64:
			sig, half, rest = 0, false, true
		case shift == 64:
			sig, half, rest = 0, m>>63 != 0, m<<1 != 0 || sticky
		default:
			sig = m >> uint(shift)
			rem := m & (1<<uint(shift) - 1)
			hb := uint64(1) << uint(shift-1)
			half, rest = rem&hb != 0, rem&(hb-1) != 0 || sticky
		}
		if half && (rest || sig&1 != 0) {
			sig++
		}
	}
	// For sig in [2^23, 2^24] this adds the implicit bit into the exponent
	// field (a carry to 2^24 bumps the exponent); for a subnormal (e2 =
	// −149, sig < 2^23) the exponent field stays 0.
	enc := uint64(e2-b32MinExp)<<23 + sig
	if enc >= b32ExpMask {
		return Binary32(sign | b32ExpMask)
	}
	return Binary32(sign | uint32(enc))
}

// b32AddCore returns round((−1)^sa·ma·2^ea + (−1)^sb·mb·2^eb) for non-zero
// ma, mb < 2^62.
func b32AddCore(sa uint32, ma uint64, ea int, sb uint32, mb uint64, eb int) Binary32 {
	// Normalise both significands to bit 62, so the larger exponent is the
	// larger magnitude (ties broken by the significand).
	sh := 63 - bits.Len64(ma)
	ma, ea = ma<<uint(sh), ea-sh
	sh = 63 - bits.Len64(mb)
	mb, eb = mb<<uint(sh), eb-sh
	if ea < eb || (ea == eb && ma < mb) {
		sa, ma, ea, sb, mb, eb = sb, mb, eb, sa, ma, ea
	}
	d := ea - eb
	sticky := false
	switch {
	case d >= 63:
		mb, sticky = 0, true
	case d > 0:
		sticky = mb&(1<<uint(d)-1) != 0
		mb >>= uint(d)
	}
	if sa == sb {
		return b32RoundPack(sa, ma+mb, ea, sticky) // < 2^63 + 2^62
	}
	// ma ≥ 2^62 > mb when d > 0, and ma ≥ mb when d = 0.
	m := ma - mb
	if sticky {
		// ma − (mb + δ) = (ma − mb − 1) + (1 − δ); at least 61 bits remain.
		m--
	}
	if m == 0 && !sticky {
		return 0 // exact cancellation is +0 under round-to-nearest
	}
	return b32RoundPack(sa, m, ea, sticky)
}

// Add returns x+y rounded once to nearest, ties to even.
func (x Binary32) Add(y Binary32) Binary32 {
	if x.isNaN() || y.isNaN() {
		return b32PickNaN2(x, y)
	}
	return b32AddNoNaN(uint32(x), uint32(y))
}

// Sub returns x−y rounded once to nearest, ties to even. A NaN y is
// propagated with its own sign.
func (x Binary32) Sub(y Binary32) Binary32 {
	if x.isNaN() || y.isNaN() {
		return b32PickNaN2(x, y)
	}
	return b32AddNoNaN(uint32(x), uint32(y)^b32Sign)
}

func b32AddNoNaN(a, b uint32) Binary32 {
	aa, ba := a&b32MagnitudeMask, b&b32MagnitudeMask
	switch {
	case aa == b32ExpMask:
		if ba == b32ExpMask && (a^b)&b32Sign != 0 {
			return b32CanonNaN // ∞ − ∞
		}
		return Binary32(a)
	case ba == b32ExpMask:
		return Binary32(b)
	case aa == 0:
		if ba == 0 {
			return Binary32(a & b) // −0 only when both are −0
		}
		return Binary32(b)
	case ba == 0:
		return Binary32(a)
	}
	ma, ea := b32Unpack(aa)
	mb, eb := b32Unpack(ba)
	return b32AddCore(a&b32Sign, ma, ea, b&b32Sign, mb, eb)
}

// Mul returns x·y rounded once to nearest, ties to even.
func (x Binary32) Mul(y Binary32) Binary32 {
	if x.isNaN() || y.isNaN() {
		return b32PickNaN2(x, y)
	}
	a, b := uint32(x), uint32(y)
	s := (a ^ b) & b32Sign
	aa, ba := a&b32MagnitudeMask, b&b32MagnitudeMask
	switch {
	case aa == b32ExpMask:
		if ba == 0 {
			return b32CanonNaN // ∞·0
		}
		return Binary32(s | b32ExpMask)
	case ba == b32ExpMask:
		if aa == 0 {
			return b32CanonNaN // 0·∞
		}
		return Binary32(s | b32ExpMask)
	case aa == 0 || ba == 0:
		return Binary32(s)
	}
	ma, ea := b32Unpack(aa)
	mb, eb := b32Unpack(ba)
	return b32RoundPack(s, ma*mb, ea+eb, false) // the product is exact in 48 bits
}

// Neg flips the sign bit (also of a NaN, as IEEE negate does).
func (x Binary32) Neg() Binary32 { return x ^ b32Sign }

// Div returns x/y rounded once to nearest, ties to even. It never fails:
// x/±0 is a signed infinity (or NaN for 0/0), as IEEE 754 specifies.
func (x Binary32) Div(y Binary32) (Binary32, error) { return x.quo(y), nil }

func (x Binary32) quo(y Binary32) Binary32 {
	if x.isNaN() || y.isNaN() {
		return b32PickNaN2(x, y)
	}
	a, b := uint32(x), uint32(y)
	s := (a ^ b) & b32Sign
	aa, ba := a&b32MagnitudeMask, b&b32MagnitudeMask
	switch {
	case aa == b32ExpMask:
		if ba == b32ExpMask {
			return b32CanonNaN // ∞/∞
		}
		return Binary32(s | b32ExpMask)
	case ba == b32ExpMask:
		return Binary32(s)
	case ba == 0:
		if aa == 0 {
			return b32CanonNaN // 0/0
		}
		return Binary32(s | b32ExpMask)
	case aa == 0:
		return Binary32(s)
	}
	ma, ea := b32Unpack(aa)
	mb, eb := b32Unpack(ba)
	// Normalise both to exactly 24 bits, then take a quotient of at least
	// 40 bits; a non-zero remainder is the sticky bit.
	sh := 24 - bits.Len64(ma)
	ma, ea = ma<<uint(sh), ea-sh
	sh = 24 - bits.Len64(mb)
	mb, eb = mb<<uint(sh), eb-sh
	n := ma << 40
	q, r := n/mb, n%mb
	return b32RoundPack(s, q, ea-40-eb, r != 0)
}

// FMA returns x·b + c with a single rounding to nearest, ties to even.
// NaN operands are propagated in the order x, b, c; ∞·0 is invalid even
// when c is finite, and so is ∞ + (−∞) between the product and c.
func (x Binary32) FMA(b, c Binary32) Binary32 {
	if x.isNaN() || b.isNaN() || c.isNaN() {
		return b32PickNaN3(x, b, c)
	}
	ua, ub, uc := uint32(x), uint32(b), uint32(c)
	sp := (ua ^ ub) & b32Sign
	sc := uc & b32Sign
	aa, ba, ca := ua&b32MagnitudeMask, ub&b32MagnitudeMask, uc&b32MagnitudeMask
	switch {
	case aa == b32ExpMask || ba == b32ExpMask:
		if aa == 0 || ba == 0 {
			return b32CanonNaN // ∞·0
		}
		if ca == b32ExpMask && sc != sp {
			return b32CanonNaN // ∞ − ∞
		}
		return Binary32(sp | b32ExpMask)
	case ca == b32ExpMask:
		return c
	case aa == 0 || ba == 0:
		if ca == 0 {
			return Binary32(sp & uc) // (±0) + (±0)
		}
		return c
	}
	ma, ea := b32Unpack(aa)
	mb, eb := b32Unpack(ba)
	if ca == 0 {
		return b32RoundPack(sp, ma*mb, ea+eb, false)
	}
	mc, ec := b32Unpack(ca)
	return b32AddCore(sp, ma*mb, ea+eb, sc, mc, ec)
}

// Abs clears the sign bit (also of a NaN).
func (x Binary32) Abs() Binary32 { return x &^ b32Sign }

// orderKey maps a non-NaN encoding to an integer with the same order as
// the values, −0 and +0 both mapping to 0.
func (x Binary32) orderKey() int64 {
	m := int64(uint32(x) & b32MagnitudeMask)
	if uint32(x)&b32Sign != 0 {
		return -m
	}
	return m
}

// Max returns the larger of x and y (x when they compare equal, so
// Max(+0, −0) = +0 and Max(−0, +0) = −0); a NaN operand is propagated by
// the NaN rule.
func (x Binary32) Max(y Binary32) Binary32 {
	if x.isNaN() || y.isNaN() {
		return b32PickNaN2(x, y)
	}
	if y.orderKey() > x.orderKey() {
		return y
	}
	return x
}

// Min returns the smaller of x and y (x when they compare equal); a NaN
// operand is propagated by the NaN rule.
func (x Binary32) Min(y Binary32) Binary32 {
	if x.isNaN() || y.isNaN() {
		return b32PickNaN2(x, y)
	}
	if y.orderKey() < x.orderKey() {
		return y
	}
	return x
}

// Sign returns −1, +0 or 1 (+0 for either zero); a NaN is propagated
// quieted.
func (x Binary32) Sign() Binary32 {
	switch {
	case x.isNaN():
		return x | b32QuietBit
	case uint32(x)&b32MagnitudeMask == 0:
		return 0
	case uint32(x)&b32Sign != 0:
		return b32MinusOne
	}
	return b32One
}

// Step returns 1 if x > 0 and +0 otherwise (also for NaN).
func (x Binary32) Step() Binary32 {
	if !x.isNaN() && x.orderKey() > 0 {
		return b32One
	}
	return 0
}

// b32Isqrt64 returns ⌊√n⌋ by the digit-by-digit method.
func b32Isqrt64(n uint64) uint64 {
	var r uint64
	bit := uint64(1) << 62
	for bit > n {
		bit >>= 2
	}
	for bit != 0 {
		if n >= r+bit {
			n -= r + bit
			r = r>>1 + bit
		} else {
			r >>= 1
		}
		bit >>= 2
	}
	return r
}

// Sqrt returns the correctly rounded square root (never an error):
// sqrt(±0) = ±0, sqrt(+∞) = +∞, and the canonical NaN for a negative
// non-zero operand.
func (x Binary32) Sqrt() (Binary32, error) { return x.sqrt(), nil }

func (x Binary32) sqrt() Binary32 {
	a := uint32(x)
	switch {
	case x.isNaN():
		return x | b32QuietBit
	case a&b32MagnitudeMask == 0 || a == b32ExpMask:
		return x // ±0, +∞
	case a&b32Sign != 0:
		return b32CanonNaN
	}
	m, e := b32Unpack(a)
	// Scale m to 62 or 63 bits with an even exponent; the root then has
	// 31 or 32 bits and a non-zero remainder is the sticky bit.
	sh := 62 - bits.Len64(m)
	if (e-sh)&1 != 0 {
		sh++
	}
	m, e = m<<uint(sh), e-sh
	r := b32Isqrt64(m)
	return b32RoundPack(0, r, e/2, m != r*r)
}

// widen64 returns the exact float64 value of a non-NaN x, and a NaN with
// the same sign and (shifted) payload for a NaN.
func (x Binary32) widen64() float64 {
	a := uint32(x)
	s := uint64(a&b32Sign) << 32
	aa := a & b32MagnitudeMask
	switch {
	case aa == 0:
		return math.Float64frombits(s)
	case aa >= b32ExpMask:
		return math.Float64frombits(s | 0x7FF<<52 | uint64(aa&b32FracMask)<<29)
	}
	m, e := b32Unpack(aa)
	l := bits.Len64(m)
	// m·2^e = 1.f · 2^(e+l−1); always a normal float64.
	frac := (m << uint(53-l)) & (1<<52 - 1)
	return math.Float64frombits(s | uint64(e+l-1+1023)<<52 | frac)
}

// binary32FromFloat64 rounds f to binary32, to nearest, ties to even, in
// software; a NaN becomes the canonical NaN.
func binary32FromFloat64(f float64) Binary32 {
	u := math.Float64bits(f)
	sign := uint32(u>>32) & b32Sign
	be := int(u >> 52 & 0x7FF)
	frac := u & (1<<52 - 1)
	switch {
	case be == 0x7FF && frac != 0:
		return b32CanonNaN
	case be == 0x7FF:
		return Binary32(sign | b32ExpMask)
	case be == 0:
		return b32RoundPack(sign, frac, -1074, false)
	}
	return b32RoundPack(sign, frac|1<<52, be-1075, false)
}

// elementary evaluates f in float64 at the exact value of x and rounds the
// result to binary32 (the trusted boundary described on Binary32).
func (x Binary32) elementary(f func(float64) float64) Binary32 {
	if x.isNaN() {
		return x | b32QuietBit
	}
	return binary32FromFloat64(f(x.widen64()))
}

// Exp is math.Exp in float64 rounded to binary32 (trusted, not claimed
// correctly rounded).
func (x Binary32) Exp() (Binary32, error) { return x.elementary(math.Exp), nil }

// Log is math.Log in float64 rounded to binary32 (trusted, not claimed
// correctly rounded); log(±0) = −∞ and log(x<0) is the canonical NaN.
func (x Binary32) Log() (Binary32, error) { return x.elementary(math.Log), nil }

// Log1p is math.Log1p in float64 rounded to binary32 (trusted, not
// claimed correctly rounded); log1p(−1) = −∞ and log1p(x<−1) is the
// canonical NaN.
func (x Binary32) Log1p() (Binary32, error) { return x.elementary(math.Log1p), nil }

// Tanh is math.Tanh in float64 rounded to binary32 (trusted, not claimed
// correctly rounded).
func (x Binary32) Tanh() (Binary32, error) { return x.elementary(math.Tanh), nil }

// Sin is math.Sin in float64 rounded to binary32 (trusted, not claimed
// correctly rounded).
func (x Binary32) Sin() (Binary32, error) { return x.elementary(math.Sin), nil }

// Cos is math.Cos in float64 rounded to binary32 (trusted, not claimed
// correctly rounded).
func (x Binary32) Cos() (Binary32, error) { return x.elementary(math.Cos), nil }

// Compare orders x and y by value (−0 equals +0); undecided when either is
// a NaN.
func (x Binary32) Compare(y Binary32) (int, bool) {
	if x.isNaN() || y.isNaN() {
		return 0, false
	}
	kx, ky := x.orderKey(), y.orderKey()
	switch {
	case kx < ky:
		return -1, true
	case kx > ky:
		return 1, true
	}
	return 0, true
}

// IsZero reports whether x is +0 or −0.
func (x Binary32) IsZero() bool { return uint32(x)&b32MagnitudeMask == 0 }

// Same reports bit equality (NaN payloads and signed zeros count).
func (x Binary32) Same(y Binary32) bool { return x == y }

// FromInt returns n rounded to nearest, ties to even (exactly, in
// software).
func (Binary32) FromInt(n int64) Binary32 {
	var sign uint32
	mag := uint64(n)
	if n < 0 {
		sign, mag = b32Sign, -mag // also right for math.MinInt64
	}
	return b32RoundPack(sign, mag, 0, false)
}

// FromRat returns r rounded to nearest, ties to even, with gradual
// underflow and overflow to ±inf (big.Rat.Float32 is correctly rounded).
func (Binary32) FromRat(r *big.Rat) Binary32 {
	f, _ := r.Float32()
	return Binary32FromFloat32(f)
}

// Float64 returns the exact value of x as a float64 (NaNs keep sign and
// payload, shifted).
func (x Binary32) Float64() float64 { return x.widen64() }

// String prints the shortest decimal that reads back as x.
func (x Binary32) String() string { return strconv.FormatFloat(x.widen64(), 'g', -1, 32) }

// Kind is "binary32".
func (Binary32) Kind() string { return "binary32" }

// Relu is max(x, 0).
func (x Binary32) Relu() Binary32 { return x.Max(0) }

// Clamp is min(max(x, lo), hi).
func (x Binary32) Clamp(lo, hi Binary32) Binary32 { return x.Max(lo).Min(hi) }
