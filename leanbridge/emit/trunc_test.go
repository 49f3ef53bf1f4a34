package emit

import (
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// A transcription of lean/Tlcheck/Spec.lean's trunc_int functions (truncZ,
// truncQ, truncAll) into Go, step for step on naturals, integers and
// rationals, compared with the registry's exact trunc_int over Rat
// (spec.Default[spec.Rat]'s primitive, which truncates with big.Int.Quo
// on the signed numerator; here |N| div D on naturals and the sign put
// back, as Lean does) on integers, fractions, the ends of every integer
// type's range and random values. It follows the Lean source only while
// the two are kept in step: TestLeanTruncSource pins the Lean text.

// truncZFn is the shape of truncZ, so that a planted wrong rule can take
// its place.
type truncZFn func(x *big.Rat) *big.Int

// lTruncZ is truncZ: if x.num < 0 then −(natAbs num / den) else natAbs num / den.
func lTruncZ(x *big.Rat) *big.Int {
	q := new(big.Int).Div(new(big.Int).Abs(x.Num()), x.Denom()) // Nat division: both natural
	if x.Num().Sign() < 0 {
		return q.Neg(q)
	}
	return q
}

// floorZ is ⌊x⌋, the planted wrong rule (it differs from truncation at
// every negative non-integer).
func floorZ(x *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(x.Num(), x.Denom(), new(big.Int)) // Euclidean: ⌊N/D⌋ for D > 0
	_ = m
	return q
}

// lTruncQ is truncQ with truncZ replaceable: (value, true), or (nil,
// false) for `none`.
func lTruncQ(lo, hi, x *big.Rat, tz truncZFn) (*big.Rat, bool) {
	zero := new(big.Rat)
	switch {
	case zero.Cmp(lo) < 0: // 0 < lo
		return nil, false
	case hi.Cmp(zero) < 0: // hi < 0
		return nil, false
	case x.Sign() == 0:
		return zero, true
	}
	y := new(big.Rat).SetInt(tz(x)) // mkRat (truncZ x) 1
	if y.Cmp(lo) < 0 || hi.Cmp(y) < 0 {
		return nil, false
	}
	return y, true
}

// leanTruncAll is truncAll: the truncated list, or false when an element
// is a domain error (truncFwd is then []).
func leanTruncAll(lo, hi *big.Rat, xs vec, tz truncZFn) (vec, bool) {
	out := make(vec, len(xs))
	for i, x := range xs {
		y, ok := lTruncQ(lo, hi, x, tz)
		if !ok {
			return nil, false
		}
		out[i] = y
	}
	return out, true
}

// registryTrunc is the registry's trunc_int over Rat on the scalar x:
// (value, true), or (nil, false) when it refuses (a domain error, or the
// shape rule's lo ≤ 0 ≤ hi).
func registryTrunc(t *testing.T, lo, hi, x *big.Rat) (*big.Rat, bool) {
	t.Helper()
	p, err := ratReg.Lookup("trunc_int")
	if err != nil {
		t.Fatal(err)
	}
	in, err := spec.NewTensor(spec.Shape{}, []spec.Rat{spec.RatFromBig(x)})
	if err != nil {
		t.Fatal(err)
	}
	y, err := p.Forward(&spec.Attrs{Lo: new(big.Rat).Set(lo), Hi: new(big.Rat).Set(hi)}, []spec.Tensor[spec.Rat]{in})
	if err != nil {
		return nil, false
	}
	if len(y.Data) != 1 {
		t.Fatalf("trunc_int of a scalar has %d elements", len(y.Data))
	}
	return y.Data[0].Big(), true
}

// truncRanges are the ranges compared: every integer type's
// (spec.IntTypeRange), a small odd one, and two the shape rule refuses.
func truncRanges() [][2]*big.Rat {
	var out [][2]*big.Rat
	for _, bits := range []int{8, 16, 32, 64} {
		for _, signed := range []bool{true, false} {
			lo, hi := spec.IntTypeRange(bits, signed)
			out = append(out, [2]*big.Rat{lo, hi})
		}
	}
	return append(out, [2]*big.Rat{rat(-3, 1), rat(5, 1)}, [2]*big.Rat{rat(1, 1), rat(255, 1)}, [2]*big.Rat{rat(-5, 1), rat(-1, 1)})
}

// truncProbes are the values compared for a range: 0, the integers at
// and around both ends and around 0, each ±1/2, ±1/3 and ±(1 − 2^−70)
// off them, and random rationals of every magnitude up to past 2^64,
// both signs.
func truncProbes(lo, hi *big.Rat, rng *rand.Rand) vec {
	out := vec{new(big.Rat)}
	offs := vec{rat(0, 1), rat(1, 2), rat(-1, 2), rat(1, 3), rat(-1, 3),
		new(big.Rat).Sub(rat(1, 1), new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 70)))}
	for _, base := range (vec{lo, hi, rat(0, 1), rat(1, 1), rat(-1, 1), rat(7, 1)}) {
		for d := int64(-2); d <= 2; d++ {
			k := new(big.Rat).Add(base, rat(d, 1))
			for _, o := range offs {
				out = append(out, new(big.Rat).Add(k, o), new(big.Rat).Sub(k, o))
			}
		}
	}
	for i := 0; i < 2000; i++ {
		num := new(big.Int).Rand(rng, new(big.Int).Lsh(big.NewInt(1), uint(1+rng.Intn(72))))
		den := new(big.Int).Rand(rng, new(big.Int).Lsh(big.NewInt(1), uint(1+rng.Intn(20))))
		den.Add(den, big.NewInt(1))
		r := new(big.Rat).SetFrac(num, den)
		out = append(out, r, new(big.Rat).Neg(r))
	}
	return out
}

// TestLeanTruncMatchesRegistry: the Lean truncation, transcribed, gives
// the registry's exact trunc_int on every probe of every range — the same
// value, and `none` exactly where the registry refuses — and a planted
// wrong rule (⌊x⌋ in place of truncation toward zero) is caught.
func TestLeanTruncMatchesRegistry(t *testing.T) {
	cases := []struct {
		name    string
		tz      truncZFn
		planted bool
	}{{"truncZ", lTruncZ, false}, {"floor (planted)", floorZ, true}}
	plantedCaught := 0
	for ri, r := range truncRanges() {
		lo, hi := r[0], r[1]
		probes := truncProbes(lo, hi, rand.New(rand.NewSource(int64(ri))))
		for _, c := range cases {
			bad, refused, accepted := 0, 0, 0
			for _, x := range probes {
				want, wok := registryTrunc(t, lo, hi, x)
				got, gok := lTruncQ(lo, hi, x, c.tz)
				if wok {
					accepted++
				} else {
					refused++
				}
				if wok != gok || (wok && want.Cmp(got) != 0) {
					bad++
					if !c.planted && bad <= 5 {
						t.Errorf("[%s, %s] trunc_int(%s): Lean's truncQ gives %v (ok %v), the registry %v (ok %v)",
							lo.RatString(), hi.RatString(), x.RatString(), got, gok, want, wok)
					}
				}
			}
			if c.planted {
				plantedCaught += bad
				continue
			}
			legal := lo.Sign() <= 0 && hi.Sign() >= 0
			if legal && (refused == 0 || accepted == 0) {
				t.Errorf("[%s, %s]: %d accepted, %d refused: the range ends are not exercised", lo.RatString(), hi.RatString(), accepted, refused)
			}
			if !legal && accepted != 0 {
				t.Errorf("[%s, %s]: the registry accepts %d values of a range without 0", lo.RatString(), hi.RatString(), accepted)
			}
		}
	}
	if plantedCaught == 0 {
		t.Error("the planted rule (floor for truncation) was not caught")
	}
}

// truncInstRE reads one conjunct of Trunc.lean's truncQ_instance.
var truncInstRE = regexp.MustCompile(`truncQ \(mkRat \(?(-?[0-9]+)\)? ([0-9]+)\) \(mkRat \(?(-?[0-9]+)\)? ([0-9]+)\) \(mkRat \(?(-?[0-9]+)\)? ([0-9]+)\) = (none|some \(mkRat \(?(-?[0-9]+)\)? ([0-9]+)\))`)

// TestLeanTruncInstances: every value `truncQ_instance` (Trunc.lean)
// claims by `decide +kernel` is the registry's trunc_int, and the
// transcription's; the floor rule fails on at least one of them.
func TestLeanTruncInstances(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "Trunc.lean"))
	if err != nil {
		t.Fatal(err)
	}
	ms := truncInstRE.FindAllStringSubmatch(string(b), -1)
	if len(ms) < 16 {
		t.Fatalf("Trunc.lean: %d truncQ instances, want 16", len(ms))
	}
	floorWrong := 0
	for _, m := range ms {
		q := func(n, d string) *big.Rat { r, _ := new(big.Rat).SetString(n + "/" + d); return r }
		lo, hi, x := q(m[1], m[2]), q(m[3], m[4]), q(m[5], m[6])
		want, wok := registryTrunc(t, lo, hi, x)
		got, gok := lTruncQ(lo, hi, x, lTruncZ)
		if f, fok := lTruncQ(lo, hi, x, floorZ); fok != wok || (wok && f.Cmp(want) != 0) {
			floorWrong++
		}
		if m[7] == "none" {
			if wok || gok {
				t.Errorf("%s: Trunc.lean claims none; the registry gives %v (ok %v), the transcription ok %v", m[0], want, wok, gok)
			}
			continue
		}
		y := q(m[8], m[9])
		if !wok || want.Cmp(y) != 0 || !gok || got.Cmp(y) != 0 {
			t.Errorf("%s: the registry gives %v (ok %v), the transcription %v (ok %v)", m[0], want, wok, got, gok)
		}
	}
	if floorWrong == 0 {
		t.Error("no instance of truncQ_instance tells truncation from floor")
	}
}

// TestLeanTruncSource pins the Lean definitions the transcription above
// follows: a change to them fails here until the Go side is updated.
func TestLeanTruncSource(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "Spec.lean"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"  if x.num < 0 then -((x.num.natAbs / x.den : Nat) : Int) else ((x.num.natAbs / x.den : Nat) : Int)",
		"  if 0 < lo then none",
		"  else if hi < 0 then none",
		"  else if x = 0 then some 0",
		"  else if mkRat (truncZ x) 1 < lo then none",
		"  else if hi < mkRat (truncZ x) 1 then none",
		"  else some (mkRat (truncZ x) 1)",
		"  | a :: as => consOpt (truncQ lo hi a) (truncAll lo hi as)",
		"def truncFwd (lo hi : Rat) (x : List Rat) : List Rat := optL (truncAll lo hi x)",
		"def truncD (_a : Rat) : Rat := 0",
		"  | .trunc_int, a, [x] => truncFwd a.lo a.hi x",
		"  | .trunc_int, _, [x], [dx] => pmul (pmap truncD x) dx",
		"  | .trunc_int, _, [x], δ => [pmul (pmap truncD x) δ]",
	} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("Spec.lean no longer has the line the Go transcription follows:\n%s", line)
		}
	}
}
