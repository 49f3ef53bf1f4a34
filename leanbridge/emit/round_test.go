package emit

import (
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// A transcription of lean/Tlcheck/Spec.lean's rounding functions (pow2,
// bitLenF/bitLen, flog2, rneNat, roundK, roundMag, roundQ, roundAll) into
// Go, step for step on naturals, integers and rationals, compared with the
// registry's exact rounding spec.FloatFormat.RoundRat — an independent
// implementation (bit lengths and big.Int.QuoRem there, halving with fuel
// and Nat division here) — on ties, subnormals, the overflow boundary and
// random values. It follows the Lean source only while the two are kept
// in step: TestLeanRoundSource pins the Lean text it transcribes.

// fmtL is Lean's Fmt.
type fmtL struct{ prec, emin, emax int64 }

var (
	leanFmtOnce sync.Once
	leanFmtMap  map[string]fmtL
	leanFmtErr  error
	fmtRE       = regexp.MustCompile(`(?m)^def Fmt\.(f16|bf16|f32) : Fmt := \{ prec := ([0-9]+), emin := (-?[0-9]+), emax := (-?[0-9]+) \}$`)
)

// leanFmts reads Fmt.f16, Fmt.bf16 and Fmt.f32 from Spec.lean, keyed by
// the primitive's name (the Fmt Prim.fwd passes it).
func leanFmts() (map[string]fmtL, error) {
	leanFmtOnce.Do(func() {
		b, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "Spec.lean"))
		if err != nil {
			leanFmtErr = err
			return
		}
		leanFmtMap = map[string]fmtL{}
		for _, m := range fmtRE.FindAllStringSubmatch(string(b), -1) {
			p, _ := strconv.ParseInt(m[2], 10, 64)
			lo, _ := strconv.ParseInt(m[3], 10, 64)
			hi, _ := strconv.ParseInt(m[4], 10, 64)
			leanFmtMap["round_"+m[1]] = fmtL{p, lo, hi}
		}
		for _, k := range []string{"f16", "bf16", "f32"} {
			src := "  | .round_" + k + ", _, [x] => roundFwd Fmt." + k + " x"
			if !strings.Contains(string(b), src) {
				leanFmtErr = &os.PathError{Op: "Prim.fwd", Path: "Spec.lean", Err: os.ErrNotExist}
			}
		}
	})
	return leanFmtMap, leanFmtErr
}

// leanFmtOf is op's Fmt (the zero Fmt when Spec.lean cannot be read;
// TestLeanRoundFormats reports that).
func leanFmtOf(op string) fmtL {
	m, _ := leanFmts()
	return m[op]
}

// lPow2 is pow2: mkRat (2^k) 1 for k ≥ 0, mkRat 1 (2^−k) otherwise.
func lPow2(k int64) *big.Rat {
	if k >= 0 {
		return new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(k)))
	}
	return new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(-k)))
}

// lBitLen is bitLen n = bitLenF n n: halve until 0, at most n times.
func lBitLen(n *big.Int) int64 {
	fuel, m, c := new(big.Int).Set(n), new(big.Int).Set(n), int64(0)
	for fuel.Sign() > 0 && m.Sign() != 0 {
		m.Rsh(m, 1)
		fuel.Sub(fuel, big.NewInt(1))
		c++
	}
	return c
}

// lToNat is Int.toNat (0 below 0).
func lToNat(n *big.Int) *big.Int {
	if n.Sign() < 0 {
		return new(big.Int)
	}
	return n
}

// lFlog2 is flog2: e = bitLen num − bitLen den, e − 1 when a < 2^e.
func lFlog2(a *big.Rat) int64 {
	e := lBitLen(lToNat(a.Num())) - lBitLen(a.Denom())
	if a.Cmp(lPow2(e)) < 0 {
		return e - 1
	}
	return e
}

// rneNatFn is the shape of rneNat, so that a planted wrong rule can take
// its place.
type rneNatFn func(n, d *big.Int) *big.Int

// lRneNat is rneNat: q = n / d, r = n % d (Nat); q + 1 when d < 2r, at
// 2r = d the even one of q, q + 1, else q.
func lRneNat(n, d *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	r2 := new(big.Int).Lsh(r, 1)
	switch {
	case d.Cmp(r2) < 0:
		return q.Add(q, big.NewInt(1))
	case r2.Cmp(d) == 0:
		if q.Bit(0) == 1 {
			return q.Add(q, big.NewInt(1))
		}
		return q
	}
	return q
}

// lRoundMag is roundMag: k = max(flog2 a, emin) − prec + 1 (roundK),
// s = a·2^−k, mkRat (rneNat s.num.toNat s.den) 1 · 2^k.
func lRoundMag(f fmtL, a *big.Rat, rne rneNatFn) *big.Rat {
	k := max(lFlog2(a), f.emin) - f.prec + 1
	s := new(big.Rat).Mul(a, lPow2(-k))
	n := rne(lToNat(s.Num()), s.Denom())
	return new(big.Rat).Mul(new(big.Rat).SetInt(n), lPow2(k))
}

// lRoundQ is roundQ with rneNat replaceable: (value, true), or (nil,
// false) for `none` (the overflow).
func lRoundQ(f fmtL, x *big.Rat, rne rneNatFn) (*big.Rat, bool) {
	if x.Sign() == 0 {
		return new(big.Rat), true
	}
	a, negx := x, x.Sign() < 0
	if negx {
		a = new(big.Rat).Neg(x)
	}
	m := lRoundMag(f, a, rne)
	if lPow2(f.emax+1).Cmp(m) <= 0 {
		return nil, false
	}
	if negx {
		return m.Neg(m), true
	}
	return m, true
}

// leanRoundQ is roundQ.
func leanRoundQ(f fmtL, x *big.Rat) (*big.Rat, bool) { return lRoundQ(f, x, lRneNat) }

// leanRoundAll is roundAll: the rounded list, or false when an element
// overflows (roundFwd is then []).
func leanRoundAll(f fmtL, xs vec) (vec, bool) {
	out := make(vec, len(xs))
	for i, x := range xs {
		y, ok := leanRoundQ(f, x)
		if !ok {
			return nil, false
		}
		out[i] = y
	}
	return out, true
}

// registryFormat is the registry's format of a rounding primitive.
var registryFormat = map[string]spec.FloatFormat{"round_f16": spec.FormatBinary16, "round_bf16": spec.FormatBFloat16, "round_f32": spec.FormatBinary32}

// TestLeanRoundFormats: Spec.lean's Fmt.f16, Fmt.bf16 and Fmt.f32 are the
// registry's binary16, bfloat16 and binary32 (precision, emin, emax), and
// Prim.fwd passes each to its primitive.
func TestLeanRoundFormats(t *testing.T) {
	m, err := leanFmts()
	if err != nil {
		t.Fatal(err)
	}
	for op, f := range registryFormat {
		g, ok := m[op]
		if !ok {
			t.Errorf("%s: no Fmt in Spec.lean", op)
			continue
		}
		if g != (fmtL{int64(f.P), int64(f.Emin), int64(f.Emax)}) {
			t.Errorf("%s: Spec.lean's Fmt %+v, the registry's %s p=%d emin=%d emax=%d", op, g, f.Name, f.P, f.Emin, f.Emax)
		}
	}
}

// roundProbes are the values the transcription is compared on, for a
// format: every tie between adjacent values of the format (k the quantum
// exponent, (n + ½)·2^k for n around the binade edges, in the subnormal
// range, at the least normal and at the top), the largest finite value,
// Ω and its neighbours, and random rationals over the whole range.
func roundProbes(f spec.FloatFormat, rng *rand.Rand) []*big.Rat {
	var out []*big.Rat
	p := int64(f.P)
	qmin := int64(f.Emin) - p + 1 // the subnormal quantum exponent
	half := big.NewRat(1, 2)
	tie := func(n int64, k int64) *big.Rat { // (n + ½)·2^k
		return new(big.Rat).Mul(new(big.Rat).Add(new(big.Rat).SetInt64(n), half), lPow2(k))
	}
	// Binade exponents e: subnormal (quantum qmin), the least normal, middle, top.
	for _, e := range []int64{int64(f.Emin) - 3, int64(f.Emin) - 1, int64(f.Emin), 0, 1, int64(f.Emax) - 1, int64(f.Emax)} {
		k := max(e, int64(f.Emin)) - p + 1
		lo := new(big.Int).Lsh(big.NewInt(1), uint(p-1)).Int64() // 2^(p−1): the binade's first significand
		if e < int64(f.Emin) {
			lo = 0
		}
		for _, n := range []int64{lo, lo + 1, lo + 2, lo + 3, 2*lo - 2, 2*lo - 1} {
			if n < 0 {
				continue
			}
			if e < int64(f.Emin) {
				k = qmin
			}
			out = append(out, tie(n, k))
			out = append(out, new(big.Rat).Mul(new(big.Rat).SetInt64(n), lPow2(k)))                                 // exactly representable
			out = append(out, new(big.Rat).Add(tie(n, k), lPow2(k-p-3)), new(big.Rat).Sub(tie(n, k), lPow2(k-p-3))) // just off the tie
		}
	}
	// The overflow boundary: Ω = (2 − 2^−p)·2^emax, the largest finite value (2 − 2^(1−p))·2^emax.
	omega := new(big.Rat).Mul(new(big.Rat).Sub(big.NewRat(2, 1), lPow2(-p)), lPow2(int64(f.Emax)))
	maxf := new(big.Rat).Mul(new(big.Rat).Sub(big.NewRat(2, 1), lPow2(1-p)), lPow2(int64(f.Emax)))
	eps := lPow2(int64(f.Emax) - 2*p)
	out = append(out, omega, new(big.Rat).Sub(omega, eps), new(big.Rat).Add(omega, eps), maxf, lPow2(int64(f.Emax)+1), lPow2(int64(f.Emax)+5))
	// Below half the least subnormal (→ 0), at it (a tie → 0), just above (→ the least subnormal).
	out = append(out, lPow2(qmin-1), lPow2(qmin-2), new(big.Rat).Add(lPow2(qmin-1), lPow2(qmin-9)), lPow2(qmin-40))
	// Random rationals: numerator and denominator of random bit lengths, so
	// that every binade from below the subnormals to past Ω is hit.
	for i := 0; i < 3000; i++ {
		num := new(big.Int).Rand(rng, new(big.Int).Lsh(big.NewInt(1), uint(1+rng.Intn(f.Emax+40))))
		den := new(big.Int).Rand(rng, new(big.Int).Lsh(big.NewInt(1), uint(1+rng.Intn(-f.Emin+f.P+40))))
		den.Add(den, big.NewInt(1))
		out = append(out, new(big.Rat).SetFrac(num, den))
	}
	var all []*big.Rat
	for _, x := range out {
		all = append(all, x, new(big.Rat).Neg(x))
	}
	return all
}

// TestLeanRoundMatchesRegistry: the Lean rounding function, transcribed,
// gives the registry's exact rounding on every probe of every format —
// the same value, and `none` exactly where the registry reports an
// overflow — and a planted wrong rule (ties away from zero in place of
// ties to even) is caught on the ties.
func TestLeanRoundMatchesRegistry(t *testing.T) {
	tiesAway := func(n, d *big.Int) *big.Int {
		q, r := new(big.Int).QuoRem(n, d, new(big.Int))
		if new(big.Int).Lsh(r, 1).Cmp(d) >= 0 {
			return q.Add(q, big.NewInt(1))
		}
		return q
	}
	cases := []struct {
		name    string
		rne     rneNatFn
		planted bool
	}{{"rneNat", lRneNat, false}, {"ties away (planted)", tiesAway, true}}
	for _, op := range []string{"round_f16", "round_bf16", "round_f32"} {
		f := registryFormat[op]
		lf := leanFmtOf(op)
		probes := roundProbes(f, rand.New(rand.NewSource(int64(len(op)))))
		for _, c := range cases {
			bad, overflows := 0, 0
			for _, x := range probes {
				want, wok := f.RoundRat(x)
				got, gok := lRoundQ(lf, x, c.rne)
				if !wok {
					overflows++
				}
				if wok != gok || (wok && want.Cmp(got) != 0) {
					bad++
					if !c.planted && bad <= 5 {
						t.Errorf("%s(%s): Lean's roundQ gives %v (ok %v), the registry %v (ok %v)", op, x.RatString(), got, gok, want, wok)
					}
				}
			}
			if c.planted && bad == 0 {
				t.Errorf("%s: the planted rule (%s) was not caught on %d probes", op, c.name, len(probes))
			}
			if !c.planted && overflows == 0 {
				t.Errorf("%s: no probe overflows: the boundary is not exercised", op)
			}
		}
	}
}

// roundInstRE reads one conjunct of Round.lean's roundQ_instance.
var roundInstRE = regexp.MustCompile(`roundQ Fmt\.(f16|bf16|f32) \(mkRat \(?(-?[0-9]+)\)? ([0-9]+)\) = (none|some \(mkRat \(?(-?[0-9]+)\)? ([0-9]+)\))`)

// TestLeanRoundInstances: every value `roundQ_instance` (Round.lean) claims
// by `decide +kernel` is the registry's RoundRat, and the transcription's.
func TestLeanRoundInstances(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "Round.lean"))
	if err != nil {
		t.Fatal(err)
	}
	ms := roundInstRE.FindAllStringSubmatch(string(b), -1)
	if len(ms) < 12 {
		t.Fatalf("Round.lean: %d roundQ instances, want 12", len(ms))
	}
	for _, m := range ms {
		op := "round_" + m[1]
		x, _ := new(big.Rat).SetString(m[2] + "/" + m[3])
		want, wok := registryFormat[op].RoundRat(x)
		got, gok := leanRoundQ(leanFmtOf(op), x)
		if m[4] == "none" {
			if wok || gok {
				t.Errorf("%s: Round.lean claims none; the registry gives %v (ok %v), the transcription ok %v", m[0], want, wok, gok)
			}
			continue
		}
		y, _ := new(big.Rat).SetString(m[5] + "/" + m[6])
		if !wok || want.Cmp(y) != 0 || !gok || got.Cmp(y) != 0 {
			t.Errorf("%s: the registry gives %v (ok %v), the transcription %v (ok %v)", m[0], want, wok, got, gok)
		}
	}
}

// TestLeanRoundSource pins the Lean definitions the transcription above
// follows: a change to them fails here until the Go side is updated.
func TestLeanRoundSource(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "Spec.lean"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"  if 0 ≤ k then mkRat ((2 ^ k.toNat : Nat) : Int) 1 else mkRat 1 (2 ^ (-k).toNat)",
		"  | f + 1, n => if n = 0 then 0 else bitLenF f (n / 2) + 1",
		"def bitLen (n : Nat) : Nat := bitLenF n n",
		"  if a < pow2 ((bitLen a.num.toNat : Int) - (bitLen a.den : Int)) then",
		"    (bitLen a.num.toNat : Int) - (bitLen a.den : Int) - 1",
		"  if d < 2 * (n % d) then n / d + 1",
		"  else if 2 * (n % d) = d then (if n / d % 2 = 1 then n / d + 1 else n / d)",
		"def roundK (f : Fmt) (a : Rat) : Int := max (flog2 a) f.emin - (f.prec : Int) + 1",
		"  mkRat (rneNat (a * pow2 (-(roundK f a))).num.toNat (a * pow2 (-(roundK f a))).den : Int) 1 *",
		"  if x = 0 then some 0",
		"    (if pow2 (f.emax + 1) ≤ roundMag f (-x) then none else some (-(roundMag f (-x))))",
		"    (if pow2 (f.emax + 1) ≤ roundMag f x then none else some (roundMag f x))",
		"  | a :: as => consOpt (roundQ f a) (roundAll f as)",
		"  | .round_f16, _, [x], [dx] => pmul (pmap roundD x) dx",
		"  | .round_f32, _, [x], δ => [pmul (pmap roundD x) δ]",
		"def roundD (_a : Rat) : Rat := 0",
	} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("Spec.lean no longer has the line the Go transcription follows:\n%s", line)
		}
	}
}

// A transcription of Round.lean's rounding interval (rabs, roundOmega,
// roundHiM, roundLoM, roundGap, roundDelta): the jump points around a
// value of the format and the radius `round_locally_constant` names.

// lAbs is rabs.
func lAbs(a *big.Rat) *big.Rat { return new(big.Rat).Abs(a) }

// lOmega is roundOmega: Ω = 2^(emax+1) − 2^(emax−prec), the overflow
// threshold (the midpoint between the largest finite value and 2^(emax+1)).
func lOmega(f fmtL) *big.Rat {
	return new(big.Rat).Sub(lPow2(f.emax+1), lPow2(f.emax-f.prec))
}

// lRoundK is roundK: max(flog2 m, emin) − prec + 1.
func lRoundK(f fmtL, m *big.Rat) int64 { return max(lFlog2(m), f.emin) - f.prec + 1 }

// lRoundHiM is roundHiM: the jump point above a magnitude m of the
// format, m + 2^(k−1) (half its quantum above it); 2^(emin−prec), half the
// least subnormal, for m = 0.
func lRoundHiM(f fmtL, m *big.Rat) *big.Rat {
	if m.Sign() == 0 {
		return lPow2(f.emin - f.prec)
	}
	return new(big.Rat).Add(m, lPow2(lRoundK(f, m)-1))
}

// lRoundLoM is roundLoM: the jump point below a magnitude m > 0 of the
// format, m − 2^(k−1), or m − 2^(k−2) when m = 2^e starts a normal binade
// above the least (the quantum below it is half m's).
func lRoundLoM(f fmtL, m *big.Rat) *big.Rat {
	e := lFlog2(m)
	if m.Cmp(lPow2(e)) == 0 && f.emin < e {
		return new(big.Rat).Sub(m, lPow2(lRoundK(f, m)-2))
	}
	return new(big.Rat).Sub(m, lPow2(lRoundK(f, m)-1))
}

// lRoundGap is roundGap: the distance from a to the nearest jump point of
// roundQ f — |a| − Ω past the overflow threshold, the distance to ±half
// the least subnormal where a rounds to 0, else the smaller of |a| −
// roundLoM m and roundHiM m − |a| with m = |roundQ f a|. It is 0 exactly
// at a jump point (a tie, or Ω).
func lRoundGap(f fmtL, a *big.Rat) *big.Rat {
	r, ok := leanRoundQ(f, a)
	if !ok {
		return new(big.Rat).Sub(lAbs(a), lOmega(f))
	}
	m := lAbs(r)
	if m.Sign() == 0 {
		return new(big.Rat).Sub(lRoundHiM(f, m), lAbs(a))
	}
	lo := new(big.Rat).Sub(lAbs(a), lRoundLoM(f, m))
	hi := new(big.Rat).Sub(lRoundHiM(f, m), lAbs(a))
	if lo.Cmp(hi) <= 0 {
		return lo
	}
	return hi
}

// lRoundDelta is roundDelta: the least roundGap f xᵢ / (|vᵢ| + 1), 1 for
// the empty tensor.
func lRoundDelta(f fmtL, x, v []*big.Rat) *big.Rat {
	d := big.NewRat(1, 1)
	for i := 0; i < len(x) && i < len(v); i++ {
		g := new(big.Rat).Quo(lRoundGap(f, x[i]), new(big.Rat).Add(lAbs(v[i]), big.NewRat(1, 1)))
		if g.Cmp(d) <= 0 {
			d = g
		}
	}
	return d
}

// roundGapInstRE reads one roundGap conjunct of RoundLocal.lean.
var roundGapInstRE = regexp.MustCompile(`roundGap Fmt\.(f16|bf16|f32) \(mkRat \(?(-?[0-9]+)\)? ([0-9]+)\) = (?:mkRat ([0-9]+) ([0-9]+)|(0))`)

// TestLeanRoundGapInstances: every value roundGap_instance and
// round_jump_instance (RoundLocal.lean) claim by `decide +kernel` is the
// transcription's, and — independently of it, from the registry's
// RoundRat alone — a positive gap g is the distance to the nearest jump
// (RoundRat constant at a ± g·(1 − 2⁻³⁰), changing on one side at
// a ± g·(1 + 2⁻³⁰)) and a zero gap is a jump (RoundRat differs at a ± 2⁻⁴⁰
// or overflows on one side); the roundQ values round_jump_instance claims
// are RoundRat's.
func TestLeanRoundGapInstances(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "RoundLocal.lean"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	ms := roundGapInstRE.FindAllStringSubmatch(src, -1)
	if len(ms) < 11 {
		t.Fatalf("RoundLocal.lean: %d roundGap instances, want 11", len(ms))
	}
	near := func(f spec.FloatFormat, a, d *big.Rat) (*big.Rat, bool) {
		return f.RoundRat(new(big.Rat).Add(a, d))
	}
	for _, m := range ms {
		op := "round_" + m[1]
		x, _ := new(big.Rat).SetString(m[2] + "/" + m[3])
		g := new(big.Rat)
		if m[6] == "" {
			g.SetString(m[4] + "/" + m[5])
		}
		if got := lRoundGap(leanFmtOf(op), x); got.Cmp(g) != 0 {
			t.Errorf("%s: the transcription gives %v", m[0], got)
		}
		rf := registryFormat[op]
		r0, ok0 := rf.RoundRat(x)
		if g.Sign() == 0 {
			e := lPow2(-40)
			lo, okl := near(rf, x, new(big.Rat).Neg(e))
			hi, okh := near(rf, x, e)
			if okl && okh && lo.Cmp(hi) == 0 {
				t.Errorf("%s: RoundRat is %v on both sides of %v: not a jump point", m[0], lo, x)
			}
			continue
		}
		if !ok0 {
			// past Ω: the overflow must persist within g
			for _, c := range []*big.Rat{big.NewRat(-1, 1), big.NewRat(1, 1)} {
				d := new(big.Rat).Mul(c, new(big.Rat).Mul(g, new(big.Rat).Sub(big.NewRat(1, 1), lPow2(-30))))
				if _, ok := near(rf, x, d); ok {
					t.Errorf("%s: RoundRat is finite at %v + %v", m[0], x, d)
				}
			}
			continue
		}
		moved := false
		for _, c := range []*big.Rat{big.NewRat(-1, 1), big.NewRat(1, 1)} {
			in := new(big.Rat).Mul(c, new(big.Rat).Mul(g, new(big.Rat).Sub(big.NewRat(1, 1), lPow2(-30))))
			if r, ok := near(rf, x, in); !ok || r.Cmp(r0) != 0 {
				t.Errorf("%s: RoundRat changes at %v + %v, inside the gap", m[0], x, in)
			}
			out := new(big.Rat).Mul(c, new(big.Rat).Mul(g, new(big.Rat).Add(big.NewRat(1, 1), lPow2(-30))))
			if r, ok := near(rf, x, out); !ok || r.Cmp(r0) != 0 {
				moved = true
			}
		}
		if !moved {
			t.Errorf("%s: RoundRat is unchanged just past the gap on both sides: not the nearest jump", m[0])
		}
	}
	// round_jump_instance's roundQ values.
	qs := roundInstRE.FindAllStringSubmatch(src, -1)
	if len(qs) < 2 {
		t.Fatalf("RoundLocal.lean: %d roundQ instances, want 2", len(qs))
	}
	for _, m := range qs {
		x, _ := new(big.Rat).SetString(m[2] + "/" + m[3])
		y, _ := new(big.Rat).SetString(m[5] + "/" + m[6])
		if want, ok := registryFormat["round_"+m[1]].RoundRat(x); !ok || want.Cmp(y) != 0 {
			t.Errorf("%s: the registry gives %v (ok %v)", m[0], want, ok)
		}
	}
	if !strings.Contains(src, "roundStable Fmt.f16 [mkRat 2049 1] = false") {
		t.Error("round_jump_instance no longer states that the tie 2049 fails roundStable")
	}
}

// TestLeanRoundLocalSource pins the RoundLocal.lean definitions the
// transcription (lOmega, lRoundHiM, lRoundLoM, lRoundGap, lRoundDelta)
// follows.
func TestLeanRoundLocalSource(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "RoundLocal.lean"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"def roundOmega (f : Fmt) : Rat := pow2 (f.emax + 1) - pow2 (f.emax - (f.prec : Int))",
		"  if m = 0 then pow2 (f.emin - (f.prec : Int)) else m + pow2 (roundK f m - 1)",
		"  if m = pow2 (flog2 m) ∧ f.emin < flog2 m then m - pow2 (roundK f m - 2)",
		"  else m - pow2 (roundK f m - 1)",
		"  | none => absS a - roundOmega f",
		"    if absS r = 0 then roundHiM f 0 - absS a",
		"    else rmin (absS a - roundLoM f (absS r)) (roundHiM f (absS r) - absS a)",
		"  | a :: as, w :: ws => rmin (roundGap f a / (absS w + 1)) (roundDelta f as ws)",
		"  | a :: as => decide (0 < roundGap f a) && roundStable f as",
	} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("RoundLocal.lean no longer has the line the Go transcription follows:\n%s", line)
		}
	}
}
