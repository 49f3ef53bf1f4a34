package spec

import (
	"fmt"
	"math"
	"math/big"
)

// The ONNX 8-bit and 4-bit float formats and ONNX Cast into them
// (onnx.defs.get_schema("Cast", 28), the Cast operator text of opsets 19
// to 28: the float 8 tables, the saturate and round_mode attributes).
//
// A MiniFloat of precision p (the implicit bit included), least normal
// exponent emin and greatest finite value Max holds 0, the values
// n·2^(max(e, emin) − p + 1) for integers 2^(p−1) ≤ n < 2^p (normal) or
// 0 < n < 2^(p−1) (subnormal, e = emin) up to Max, their negatives, and
// the special values its encoding has:
//
//	format        bits      bias  p  emin  Max           ±∞   NaN         −0
//	FLOAT8E4M3FN  S.EEEE.MMM   7  4   −6   448 = 1.75·2^8  no   S.1111.111  yes
//	FLOAT8E4M3FNUZ           8  4   −7   240 = 1.875·2^7 no   1.0000.000  no
//	FLOAT8E5M2    S.EEEEE.MM  15  3  −14   57344 = 1.75·2^15 yes  IEEE        yes
//	FLOAT8E5M2FNUZ          16  3  −15   57344         no   1.00000.00  no
//	FLOAT4E2M1    S.EE.M       1  2    0   6 = 1.5·2^2   no   none        yes
//
// (FN: finite, no infinity; UZ: unsigned zero, the pattern of −0 is the
// one NaN.) FLOAT8E8M0 is exponent-only: 2^(e−127) for bits e = 0…254,
// 255 is NaN; no zero, no sign.
//
// The cast of a real x to a MiniFloat T is, as the operator text says,
// "[x]": x rounded to T's mantissa width, to nearest, ties to even, with
// gradual underflow below 2^emin and the exponent unbounded above (the
// rounding of FloatFormat.RoundRat with Emax = ∞); then
//
//	|[x]| ≤ Max                         [x]   (a zero result keeps x's sign
//	                                           where T has −0, else +0)
//	[x] > Max, or x = +∞, saturate = 1  +Max  (−Max for the negatives)
//	saturate = 0: [x] > Max or x = ±∞   ±∞ where T has infinities (E5M2),
//	                                    else NaN
//	x NaN                               NaN
//
// saturate applies to the float 8 types only. For FLOAT4E2M1, which has
// neither infinity nor NaN, the text defines no value for an x out of
// range, ±∞ or NaN: such an element's cast is undefined (Undefined: no
// recorded value is judged against it). RNE is the unique nearest value,
// except at a tie, where the even significand wins.
//
// FLOAT8E8M0 (round_mode, saturate): for a finite x > 0, round_mode "up"
// gives the least power of two ≥ x, "down" the greatest ≤ x, "nearest"
// the nearer of the two, 2^(k+1) at the midpoint 1.5·2^k ("ties round
// up"); a result above 2^127 is 2^127 (saturate) or NaN, below 2^−127
// is 2^−127 (saturate) or NaN; x = 0 is 2^−127 (saturate) or NaN; +∞ is
// 2^127 (saturate) or NaN; NaN is NaN; x < 0 or −0 is undefined ("casting
// negative values … gives undefined behavior", −0 "Unspecified").
//
// Every value of these formats is a float64 (and a float32) exactly, so
// a result is a float64 with NaN and ±∞ as themselves.

// MiniFloat is one of the ONNX float 8 and float 4 formats (see above).
type MiniFloat struct {
	Name     string
	EBits    int  // exponent field width
	MBits    int  // mantissa field width (p − 1)
	Bias     int  // exponent bias
	FN       bool // no infinity: the all-ones pattern of S.E.M (FN) is NaN
	UZ       bool // unsigned zero: 0x80 is the one NaN, no −0
	HasInf   bool // IEEE-like: exponent all ones is ±∞ (mantissa 0) or NaN
	HasNaN   bool
	Saturate bool // whether the saturate attribute applies (float 8)
}

// The ONNX mini-float formats.
var (
	FormatE4M3FN   = MiniFloat{Name: "FLOAT8E4M3FN", EBits: 4, MBits: 3, Bias: 7, FN: true, HasNaN: true, Saturate: true}
	FormatE4M3FNUZ = MiniFloat{Name: "FLOAT8E4M3FNUZ", EBits: 4, MBits: 3, Bias: 8, FN: true, UZ: true, HasNaN: true, Saturate: true}
	FormatE5M2     = MiniFloat{Name: "FLOAT8E5M2", EBits: 5, MBits: 2, Bias: 15, HasInf: true, HasNaN: true, Saturate: true}
	FormatE5M2FNUZ = MiniFloat{Name: "FLOAT8E5M2FNUZ", EBits: 5, MBits: 2, Bias: 16, FN: true, UZ: true, HasNaN: true, Saturate: true}
	FormatE2M1     = MiniFloat{Name: "FLOAT4E2M1", EBits: 2, MBits: 1, Bias: 1, FN: true}
)

// Emin is the least normal exponent, 1 − bias.
func (m MiniFloat) Emin() int { return 1 - m.Bias }

// Max is the greatest finite value: the greatest pattern that is neither
// NaN nor ∞ (all-ones exponent and mantissa less one for E4M3FN, whose
// S.1111.111 is NaN; the all-ones exponent below it for IEEE-like E5M2;
// every pattern but 0x80 for FNUZ and E2M1).
func (m MiniFloat) Max() float64 {
	emax := (1 << m.EBits) - 1 - m.Bias // the all-ones exponent
	mant := (1 << m.MBits) - 1
	switch {
	case m.HasInf:
		emax-- // all-ones exponent: ∞ and NaN
	case m.FN && !m.UZ && m.HasNaN:
		mant-- // S.1111.111 is NaN
	}
	return math.Ldexp(1+float64(mant)/float64(int(1)<<m.MBits), emax)
}

// Decode is the value of the bit pattern b (the format's low bits), NaN
// and ±∞ included.
func (m MiniFloat) Decode(b uint8) float64 {
	n := 1 + m.EBits + m.MBits
	b &= uint8(1<<n - 1)
	sign := b>>(n-1) == 1
	e := int(b>>m.MBits) & (1<<m.EBits - 1)
	f := int(b) & (1<<m.MBits - 1)
	switch {
	case m.UZ && b == 1<<(n-1):
		return math.NaN()
	case m.HasInf && e == 1<<m.EBits-1:
		if f != 0 {
			return math.NaN()
		}
		return math.Copysign(math.Inf(1), boolSign(sign))
	case m.FN && !m.UZ && m.HasNaN && e == 1<<m.EBits-1 && f == 1<<m.MBits-1:
		return math.NaN()
	}
	var v float64
	if e == 0 {
		v = math.Ldexp(float64(f), m.Emin()-m.MBits)
	} else {
		v = math.Ldexp(float64(f+1<<m.MBits), e-m.Bias-m.MBits)
	}
	return math.Copysign(v, boolSign(sign))
}

func boolSign(neg bool) float64 {
	if neg {
		return -1
	}
	return 1
}

// Undefined is the result of a cast that the operator text leaves
// undefined (see above): not a value, so no recorded value is judged
// against it.
var Undefined = math.Float64frombits(0x7ff8dead0000dead)

// IsUndefined reports whether x is the Undefined marker.
func IsUndefined(x float64) bool { return math.Float64bits(x) == math.Float64bits(Undefined) }

// CastRat is the cast of the real x to m (see above), with saturate the
// Cast attribute (ignored by FLOAT4E2M1): a float64 that is the exact
// result, or NaN, ±∞, or Undefined.
func (m MiniFloat) CastRat(x *big.Rat, saturate bool) float64 {
	neg := x.Sign() < 0
	// Emax above x's binade: the rounding never overflows (the exponent
	// is unbounded above), and 2^(Emax+1) stays as small as x.
	e := x.Num().BitLen() - x.Denom().BitLen() + 1
	f := FloatFormat{Name: m.Name, P: m.MBits + 1, Emin: m.Emin(), Emax: max(e+1, 1<<m.EBits)}
	y, _ := f.RoundRat(x)
	v, _ := y.Float64() // |y| ≤ |x|·(1+2^−p); a float64 when |[x]| ≤ Max, else compared below
	if math.Abs(v) > m.Max() {
		return m.outOfRange(neg, saturate)
	}
	if v == 0 && neg && !m.UZ {
		return math.Copysign(0, -1)
	}
	return v
}

// outOfRange is the cast of an x with |[x]| > Max or x = ±∞.
func (m MiniFloat) outOfRange(neg, saturate bool) float64 {
	switch {
	case !m.Saturate: // FLOAT4E2M1: not defined by the text
		return Undefined
	case saturate:
		return math.Copysign(m.Max(), boolSign(neg))
	case m.HasInf:
		return math.Copysign(math.Inf(1), boolSign(neg))
	}
	return math.NaN()
}

// CastFloat64 is the cast of a float64 x (NaN and ±∞ included) to m.
func (m MiniFloat) CastFloat64(x float64, saturate bool) float64 {
	switch {
	case math.IsNaN(x):
		if !m.HasNaN {
			return Undefined
		}
		return math.NaN()
	case math.IsInf(x, 0):
		return m.outOfRange(x < 0, saturate)
	case x == 0:
		if math.Signbit(x) && !m.UZ {
			return x
		}
		return 0
	}
	return m.CastRat(new(big.Rat).SetFloat64(x), saturate)
}

// CastE8M0 is the cast of x (a float64, NaN and ±∞ included; or exact
// when r is not nil, then x is ignored) to FLOAT8E8M0 under round_mode
// mode ("up", "down", "nearest") and saturate (see above).
func CastE8M0(x float64, r *big.Rat, mode string, saturate bool) (float64, error) {
	oor := func(v float64) float64 {
		if saturate {
			return v
		}
		return math.NaN()
	}
	lo, hi := math.Ldexp(1, -127), math.Ldexp(1, 127)
	if r == nil {
		switch {
		case math.IsNaN(x):
			return math.NaN(), nil
		case math.IsInf(x, 1):
			return oor(hi), nil
		case x < 0 || math.IsInf(x, -1) || math.Signbit(x):
			return Undefined, nil
		case x == 0:
			return oor(lo), nil
		}
		r = new(big.Rat).SetFloat64(x)
	}
	switch r.Sign() {
	case -1:
		return Undefined, nil
	case 0:
		return oor(lo), nil
	}
	// 2^k ≤ r < 2^(k+1)
	k := r.Num().BitLen() - r.Denom().BitLen()
	if r.Cmp(pow2Rat(k)) < 0 {
		k--
	}
	exact := r.Cmp(pow2Rat(k)) == 0
	switch mode {
	case "up":
		if !exact {
			k++
		}
	case "down":
	case "nearest":
		mid := new(big.Rat).Mul(pow2Rat(k), big.NewRat(3, 2))
		if r.Cmp(mid) >= 0 {
			k++
		}
	default:
		return 0, fmt.Errorf("round_mode %q is not one of up, down, nearest", mode)
	}
	switch {
	case k > 127:
		return oor(hi), nil
	case k < -127:
		return oor(lo), nil
	}
	return math.Ldexp(1, k), nil
}

// DecodeE8M0 is the value of a FLOAT8E8M0 pattern: 2^(b−127), NaN for 255.
func DecodeE8M0(b uint8) float64 {
	if b == 0xFF {
		return math.NaN()
	}
	return math.Ldexp(1, int(b)-127)
}
