package fpbound

import (
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/irsem"
)

// The 16-bit formats. The model, theorem and proof of doc.go are written
// with a format's constants, so IEEE 754 binary16 (ONNX FLOAT16) and
// bfloat16 (ONNX BFLOAT16: binary32's exponent range with an 8-bit
// significand) are two more instances of ErrOf, with these constants
// (p the precision, emin the least normal exponent):
//
//	                                          binary16        bfloat16
//	p, emin                                   11, −14         8, −126
//	u      unit roundoff 2^-p                 2^-11           2^-8
//	η_F    underflow of one rounding          2^-25           2^-134
//	2η_F   least positive subnormal           2^-24           2^-133
//	       ulp(y) ≤ 2^(1−p)·|y|, y normal     2^-10           2^-7
//	Ω      round to nearest overflows at      2^16 − 2^4      2^128 − 2^119
//	       (the largest finite value plus half its ulp: 65504 + 16;
//	       (2 − 2^-7)·2^127 + 2^119)
//	       γ_k finite for k ≤ 2^(p−1)         2^10            2^7
//	       integers held exactly up to 2^p    2^11            2^8
//
// Every constant is a float64 exactly, so the bound arithmetic uses them
// as they are. M3 counts ulps of the format (Options.ULPs): a runtime that
// evaluates exp of a float16 in binary32 and rounds the result once is
// within 1/2 + 2^-13 binary16 ulps, inside the default 4. A runtime that
// keeps binary32 intermediates inside one operation (a float16 matmul
// accumulating in binary32) is not an evaluation of the model (M2 rounds
// every operation to the format); a Fails against these bounds is then
// evidence about that runtime, as doc.go says of other formulas.

// binary16 is IEEE 754 binary16: p = 11, emin = −14.
type binary16 struct{}

// bfloat16 is bfloat16: p = 8, emin = −126.
type bfloat16 struct{}

var (
	consts16 = consts{u: 0x1p-11, eta: 0x1p-25, sub: 0x1p-24, ulpFactor: 0x1p-10,
		omega: 0x1p16 - 0x1p4, maxFinite: 0x1p16 - 0x1p5, maxTerms: 1 << 10, maxInt: 1 << 11}
	constsBF16 = consts{u: 0x1p-8, eta: 0x1p-134, sub: 0x1p-133, ulpFactor: 0x1p-7,
		omega: 0x1p128 - 0x1p119, maxFinite: 0x1p128 - 0x1p120, maxTerms: 1 << 7, maxInt: 1 << 8}
)

func (binary16) consts() *consts { return &consts16 }
func (binary16) holds(f float64) bool {
	return !math.IsInf(f, 0) && !math.IsNaN(f) && nearestP(new(big.Rat).SetFloat64(f), 11, -14, consts16.omega) == f
}
func (binary16) nearest(r *big.Rat) float64 { return nearestP(r, 11, -14, consts16.omega) }
func (binary16) kind() string               { return "fpbound16" }
func (binary16) sumFmt() uint8              { return sumAny }

func (bfloat16) consts() *consts { return &constsBF16 }
func (bfloat16) holds(f float64) bool {
	return !math.IsInf(f, 0) && !math.IsNaN(f) && nearestP(new(big.Rat).SetFloat64(f), 8, -126, constsBF16.omega) == f
}
func (bfloat16) nearest(r *big.Rat) float64 { return nearestP(r, 8, -126, constsBF16.omega) }
func (bfloat16) kind() string               { return "fpboundbf16" }
func (bfloat16) sumFmt() uint8              { return sumAny }

// nearestP rounds r to the nearest value of the binary format with
// precision p and least normal exponent emin, ties to even, with gradual
// underflow; ±∞ when |r| ≥ omega (round to nearest overflows there). The
// result is a float64 exactly (p ≤ 53, and the format's range lies inside
// float64's).
func nearestP(r *big.Rat, p uint, emin int, omega float64) float64 {
	if r.Sign() == 0 {
		return 0
	}
	a := new(big.Rat).Abs(r)
	if a.Cmp(new(big.Rat).SetFloat64(omega)) >= 0 {
		return math.Inf(r.Sign())
	}
	var v float64
	if a.Cmp(new(big.Rat).SetFloat64(math.Ldexp(1, emin))) < 0 {
		// Subnormal range: the nearest multiple of q = 2^(emin−p+1).
		x := new(big.Rat).Mul(a, new(big.Rat).SetFloat64(math.Ldexp(1, int(p)-1-emin)))
		n, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
		switch c := new(big.Int).Lsh(m, 1).Cmp(x.Denom()); {
		case c > 0, c == 0 && n.Bit(0) == 1:
			n.Add(n, big.NewInt(1))
		}
		v = math.Ldexp(float64(n.Int64()), emin-int(p)+1)
	} else {
		f := new(big.Float).SetPrec(p).SetMode(big.ToNearestEven).SetRat(a)
		v, _ = f.Float64()
	}
	if r.Sign() < 0 {
		v = -v
	}
	return v
}

// Bounds16 is Bounds for binary16 evaluations (ONNX FLOAT16), the
// library within o.ULPs binary16 ulps.
func Bounds16(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) ([]Enclosure, error) {
	return bounds[binary16](g, p, input, o)
}

// BoundsBF16 is Bounds for bfloat16 evaluations (ONNX BFLOAT16).
func BoundsBF16(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) ([]Enclosure, error) {
	return bounds[bfloat16](g, p, input, o)
}

// SharpBounds16 is SharpBounds for binary16 evaluations.
func SharpBounds16(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) ([]Sharp, error) {
	return sharp[binary16](g, p, input, o)
}

// SharpBoundsBF16 is SharpBounds for bfloat16 evaluations.
func SharpBoundsBF16(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) ([]Sharp, error) {
	return sharp[bfloat16](g, p, input, o)
}
