package fpbound

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// foldTerm draws one operand of a dot product: a closed value (a point,
// ±1, a power of two, an exact zero, a box, a value without bound, one
// with an infinite enclosure, one with a lower bound) or a pending sum of
// two of them, so that the fold meets every case of Mul and Add.
func foldTerm[F format](r *rand.Rand, depth int) ErrOf[F] {
	box := func() spec.Interval {
		a, b := r.NormFloat64()*math.Ldexp(1, r.IntN(40)-20), r.NormFloat64()*math.Ldexp(1, r.IntN(40)-20)
		return spec.Interval{Lo: min(a, b), Hi: max(a, b)}
	}
	switch k := r.IntN(12); {
	case k == 0:
		return ErrOf[F]{}
	case k == 1:
		return ErrOf[F]{x: spec.Interval{Lo: 1, Hi: 1}}
	case k == 2:
		return ErrOf[F]{x: spec.Interval{Lo: -1, Hi: -1}}
	case k == 3:
		p := math.Ldexp(1, r.IntN(20)-10)
		return ErrOf[F]{x: spec.Interval{Lo: p, Hi: p}}
	case k == 4:
		p := float64(float32(r.NormFloat64()))
		return ErrOf[F]{x: spec.Interval{Lo: p, Hi: p}}
	case k == 5:
		return unbounded[F](box())
	case k == 6:
		return ErrOf[F]{x: spec.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}}
	case k == 7:
		return ErrOf[F]{x: box(), e: math.Inf(1), id: fresh()}
	case k == 8:
		b := box()
		b.Lo = math.Abs(b.Lo)
		b.Hi = max(b.Hi, b.Lo)
		return ErrOf[F]{x: b, e: math.Ldexp(1, -30)}.withLB(b.Lo / 2)
	case k == 9 && depth < 2:
		return foldTerm[F](r, depth+1).Add(foldTerm[F](r, depth+1))
	default:
		return ErrOf[F]{x: box(), e: math.Ldexp(r.Float64(), -r.IntN(30)), id: fresh()}
	}
}

// plainFold is spec.FoldDot's generic loop, which ErrOf.FoldDot must equal.
func plainFold[F format](acc ErrOf[F], xs, ys []ErrOf[F]) ErrOf[F] {
	for i := range xs {
		acc = acc.Add(xs[i].Mul(ys[i]))
	}
	return acc
}

// sameFold compares two fold results field for field; ids are drawn from
// a global counter, so only whether each is 0 is compared.
func sameFold[F format](a, b ErrOf[F]) bool {
	eq := func(p, q float64) bool { return math.Float64bits(p) == math.Float64bits(q) }
	return eq(a.x.Lo, b.x.Lo) && eq(a.x.Hi, b.x.Hi) && eq(a.e, b.e) && eq(a.s, b.s) && a.n == b.n &&
		eq(a.big, b.big) && (a.id == 0) == (b.id == 0) && eq(a.lb, b.lb) && a.hasLB == b.hasLB && a.sumFmt == b.sumFmt
}

// mixedFold is foldCase[binary64] inside a mixed evaluation's node
// (format_mixed.go) that rounds to binary32 (narrow) or binary64: the
// pending sums' format tags must come out as the plain fold's.
func mixedFold(narrow bool) func(r *rand.Rand) (bool, bool, string, string) {
	return func(r *rand.Rand) (bool, bool, string, string) {
		evalMu.Lock()
		defer evalMu.Unlock()
		restore := useFormats(Options{binary32: []bool{narrow}})
		defer restore()
		enterNode(0)
		defer leaveNode()
		return foldCase[binary64](r)
	}
}

func TestFoldDotSaturated(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(r *rand.Rand) (saturated bool, ok bool, got, want string)
	}{
		{"binary32", foldCase[binary32]},
		{"binary64", foldCase[binary64]},
		{"binary64 in a mixed evaluation's binary32 node", mixedFold(true)},
		{"binary64 in a mixed evaluation's binary64 node", mixedFold(false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(36, 24))
			sat := 0
			for c := 0; c < 3000; c++ {
				s, ok, got, want := tc.run(r)
				if !ok {
					t.Fatalf("case %d: FoldDot %s, the plain fold %s", c, got, want)
				}
				if s {
					sat++
				}
			}
			if sat < 300 {
				t.Fatalf("only %d of 3000 cases reached a saturated partial sum", sat)
			}
		})
	}
}

// foldCase draws one dot product (with squares: some ys[i] are xs[i]) and
// compares ErrOf.FoldDot (through spec.FoldDot, as conv and matmul call it)
// with the plain fold.
func foldCase[F format](r *rand.Rand) (bool, bool, string, string) {
	n := 1 + r.IntN(24)
	xs, ys := make([]ErrOf[F], n), make([]ErrOf[F], n)
	for i := range xs {
		xs[i] = foldTerm[F](r, 0)
		if r.IntN(8) == 0 {
			ys[i] = xs[i]
		} else {
			ys[i] = foldTerm[F](r, 0)
		}
	}
	var acc ErrOf[F]
	if r.IntN(3) == 0 {
		acc = foldTerm[F](r, 0)
	}
	want := plainFold(acc, xs, ys)
	got := spec.FoldDot(acc, xs, ys)
	sat := false
	a := acc
	for i := range xs {
		if a.saturated() {
			sat = true
			break
		}
		a = a.Add(xs[i].Mul(ys[i]))
	}
	return sat, sameFold(got, want), fmtErr(got), fmtErr(want)
}

func fmtErr[F format](v ErrOf[F]) string { return fmt.Sprintf("%+v", v) }

// TestFoldMaxIsFold checks ErrOf.FoldMax, through spec.MaxOf as max_pool
// calls it, against the plain left fold of Max field for field (ids
// exactly: the fold draws none) on 3000 windows per format of 2–10
// operands drawn by foldTerm (pending sums, values without bound, infinite
// enclosures, lower bounds), some repeated and some shifted so that the
// hulls are ordered or touch (exact points and boxes of distinct ids whose
// hulls share an endpoint), and requires that each of Max's three cases (the
// running maximum kept, replaced, merged) occurs.
func TestFoldMaxIsFold(t *testing.T) {
	t.Run("binary32", func(t *testing.T) { foldMaxCases[binary32](t) })
	t.Run("binary64", func(t *testing.T) { foldMaxCases[binary64](t) })
}

func foldMaxCases[F format](t *testing.T) {
	r := rand.New(rand.NewPCG(37, 5))
	var kept, replaced, merged int
	for c := 0; c < 3000; c++ {
		xs := make([]ErrOf[F], 2+r.IntN(9))
		for i := range xs {
			switch {
			case i > 0 && r.IntN(6) == 0:
				xs[i] = xs[r.IntN(i)]
			case r.IntN(5) == 0: // exact points and boxes, distinct ids: touching hulls
				d := float64(1 + r.IntN(2))
				xs[i] = ErrOf[F]{x: spec.Interval{Lo: d, Hi: d + float64(r.IntN(2))}, id: fresh()}
			case r.IntN(3) == 0:
				d := math.Ldexp(1, r.IntN(8))
				xs[i] = ErrOf[F]{x: spec.Interval{Lo: d, Hi: d + 0.5}, e: math.Ldexp(1, -20)}
			default:
				xs[i] = foldTerm[F](r, 0)
			}
		}
		want := xs[0]
		for _, w := range xs[1:] {
			a, b := want.close(), w.close()
			switch ha, hb := a.hull(), b.hull(); {
			case ha.Lo >= hb.Hi:
				kept++
			case hb.Lo >= ha.Hi:
				replaced++
			default:
				merged++
			}
			want = want.Max(w)
		}
		got := spec.MaxOf(xs)
		if !sameFold(got, want) || got.id != want.id {
			t.Fatalf("case %d: FoldMax %s, the plain fold %s", c, fmtErr(got), fmtErr(want))
		}
	}
	if kept < 300 || replaced < 300 || merged < 300 {
		t.Fatalf("cases kept %d, replaced %d, merged %d: each should occur ≥ 300 times", kept, replaced, merged)
	}
}
