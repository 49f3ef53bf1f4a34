package fpbound

import (
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// FoldDot implements spec.DotFolder: the fold acc + x₀·y₀ + … + xₙ₋₁·yₙ₋₁
// of ErrOf's own Mul and Add, with the same result field for field (ids
// drawn in the same order), but cheaper once the partial sum is saturated.
//
// A pending sum is saturated when its bound, its Σ|t̃ᵢ| and its largest
// term's bound are all +∞ and it has no lower bound. Adding a term t to it
// then gives (Add): nothing new when t is an exact zero (t is dropped),
// and otherwise the pending sum with enclosure x + x_t, bound, Σ and
// largest term addUp(+∞, ·) = +∞, n + 1 terms (t is a closed value: one
// term), a fresh id and no lower bound (the saturated side's termLower is
// −∞, so max-of-lower-bounds is never recorded) — saturated again. Of the
// product t = x·y the sum so reads only its enclosure and whether it is an
// exact zero, which mulX computes without Mul's error terms. So from the
// first saturated partial sum on, each term costs one interval product and
// one interval sum instead of Mul's and Add's bookkeeping. Nothing here
// changes a bound: the result is the fold's (TestFoldDotSaturated checks
// it field for field against the plain loop on random terms with infinite
// bounds and enclosures, exact zeros, ±1, powers of two and squares).
//
// It matters where a model's enclosures overflow (a deep net whose interval
// boxes wrap past 2^1023: ResNet-50's classic pass and its first-order local
// errors, docs/performance.md, rn36), where the dense kernels decline and
// every dot product of every conv runs here with infinite bounds.
func (ErrOf[F]) FoldDot(acc ErrOf[F], xs, ys []ErrOf[F]) ErrOf[F] {
	if len(xs) != len(ys) {
		panic("fpbound.FoldDot: operands of different lengths")
	}
	i := 0
	for ; i < len(xs) && !acc.saturated(); i++ {
		acc = acc.Add(xs[i].Mul(ys[i]))
	}
	if i == len(xs) {
		return acc
	}
	var fm F
	x, n, sf := acc.x, acc.n, acc.sumFmt
	var id uint64 = acc.id
	for ; i < len(xs); i++ {
		tx, zero := mulX(xs[i], ys[i])
		if zero {
			continue
		}
		x = x.Add(tx)
		n++
		id = fresh()
		sf = mergeSum(sf, 0, fm.sumFmt()) // a product is closed: its tag is 0, as Add merges it
	}
	return ErrOf[F]{x: x, e: inf, s: inf, n: n, big: inf, id: id, sumFmt: sf}
}

// saturated reports a pending sum whose bound, Σ|t̃ᵢ| and largest term's
// bound are +∞ and that has no lower bound (FoldDot).
func (v ErrOf[F]) saturated() bool {
	return v.n >= 2 && math.IsInf(v.e, 1) && math.IsInf(v.s, 1) && math.IsInf(v.big, 1) && !v.hasLB && v.lb == 0
}

// mulX is the enclosure of v.Mul(w) and whether that product is an exact
// zero, following Mul's cases: the exact ±1 factors return the other
// (closed, possibly negated) operand; an exact zero times a value with a
// bound is the exact zero; otherwise the enclosure is the interval product
// (the square for one value times itself), which rounded and scaled pass
// through unchanged, and the result is never an exact zero (its bound is
// at least the underflow term, or +∞).
func mulX[F format](v, w ErrOf[F]) (spec.Interval, bool) {
	a, b := v.close(), w.close()
	var r ErrOf[F]
	switch {
	case a.exactPoint(1):
		r = b
	case b.exactPoint(1):
		r = a
	case a.exactPoint(-1):
		r = b.Neg()
	case b.exactPoint(-1):
		r = a.Neg()
	case (a.exactZero() && !math.IsInf(b.e, 1)) || (b.exactZero() && !math.IsInf(a.e, 1)):
		return spec.Interval{}, true
	default:
		if a.id != 0 && a.id == b.id {
			return square(a.x), false
		}
		return a.x.Mul(b.x), false
	}
	return r.x, r.exactZero()
}

// FoldMax implements spec.MaxFolder: the left fold
// xs[0].Max(xs[1]).Max(xs[2])… of a window's maximum (max_pool), len(xs)
// ≥ 2, with the running maximum kept closed and its hull kept, instead of
// closing it and recomputing its hull at every step. That is the fold's
// result field for field: Max returns one of its closed operands or a
// value with term count 0, and close returns a value with term count < 2
// unchanged, so closing the running maximum again (what Max does on the
// next step) is the identity, and its hull is a function of the value
// alone. Each operand is closed and its hull taken once, as Max does; the
// three cases are Max's, in its order, lower bounds included
// (TestFoldMaxIsFold).
func (ErrOf[F]) FoldMax(xs []ErrOf[F]) ErrOf[F] {
	a := xs[0].close()
	ha := a.hull()
	for i := 1; i < len(xs); i++ {
		b := xs[i].close()
		hb := b.hull()
		switch {
		case ha.Lo >= hb.Hi, maxLowerBounds && a.lower() >= hb.Hi && a.x.Lo >= b.x.Hi:
		case hb.Lo >= ha.Hi, maxLowerBounds && b.lower() >= ha.Hi && b.x.Lo >= a.x.Hi:
			a, ha = b, hb
		default:
			r := ErrOf[F]{x: a.x.Max(b.x), e: max(a.e, b.e)}
			if l := max(a.lower(), b.lower()); maxLowerBounds && l >= 0 && !math.IsInf(r.e, 1) {
				r = r.withLB(l)
			}
			a = r
			ha = a.hull()
		}
	}
	return a
}
