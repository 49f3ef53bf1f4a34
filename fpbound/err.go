package fpbound

import (
	"math"
	"math/big"
	"strconv"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/spec"
)

// ErrOf is the scalar algebra of the a-priori bound for the binary
// format F: a spec.Scalar, so that the registry's own rules and
// irsem.DenoteAll run over it unchanged. It is used through its two
// instances, Err (binary32) and Err64 (binary64); F only selects the
// constants of the format (u, the underflow term, Ω, …: see doc.go,
// "Formats"), the arithmetic is the same. An ErrOf value stands for one
// value of the graph and carries
//
//   - Exact(): an interval that encloses the exact real value x;
//   - Bound(): an upper bound E on |v̂ − x| for every value v̂ of the
//     format that an evaluation of the model (doc.go) can produce for it.
//
// A value produced by Add or Sub is a pending sum: it also remembers the
// number of its terms n and an upper bound s on Σ|t̃ᵢ| (the magnitudes of
// the terms as the runtime feeds them), and its own rounding error,
// γ_{n−1}·s, is charged only when the sum is consumed by any operation
// other than Add, Sub or Neg (it is then "closed"), so that a sum of n
// terms is charged γ_{n−1} once, for whatever order or tree the runtime
// sums it in. The theorem and the argument for every operation are in the
// package documentation.
//
// The zero value is the exact zero: [0, 0] with bound 0.
//
// Use Err through Bounds and Compare, and either instance through
// Evaluate. An evaluation outside them (irsem.Denote[Err] directly)
// assumes DefaultULPs for the elementary functions and cannot learn of
// undecided comparisons (Compare); it must not run concurrently with a
// Bounds or Evaluate call, which sets both for its own evaluation.
type ErrOf[F format] struct {
	x spec.Interval
	e float64 // the bound; for a pending sum Σ Eᵢ (without the sum's own rounding)
	s float64 // pending sums only: an upper bound of Σ|t̃ᵢ|
	n int64   // pending sums only: the number of terms (≥ 2); 0 otherwise
	// big, pending sums only: for some term i*, |t̃_{i*}| ≤ big and
	// Σ_{i≠i*} |t̃ᵢ| ≤ s − big (doc.go, "Sums", near the top of the
	// range); 0 when not known (a sum whose terms' bounds are all 0 needs
	// no such fact).
	big float64
	// id names the runtime value v stands for: copies of v (a tensor
	// operation that moves it, a second consumer) keep it, and a value
	// whose id is not 0 was made by one operation of a formula (Add:
	// every new sum gets a fresh id), so two operands with the same
	// non-zero id are one runtime value (doc.go, "Squares and lower
	// bounds"). 0: no identity known.
	id uint64
	// lb, when hasLB: every modelled evaluation's value v̂ is ≥ lb (for a
	// pending sum, its rounded sum in every tree). A lower bound of the
	// computed value that the hull X − E may not show (a sum of squares
	// plus ε > 0 is ≥ ε̂ whatever its error bound).
	lb    float64
	hasLB bool
	// sumFmt, pending sums only: the format their additions were
	// performed in, in a mixed binary32/binary64 evaluation (sumWide,
	// sumNarrow; format_mixed.go), which close charges; sumAny otherwise.
	sumFmt uint8
	// ord, under a summation-order profile only (order.go): the terms of
	// the pending sum v is, in the order the formulas added them, exact
	// zeros included; nil otherwise and for every closed value.
	ord *ordTerm
}

// ids hands out the ids of new sums (see ErrOf.id and adj.id).
var ids atomic.Uint64

// fresh returns a new non-zero id.
func fresh() uint64 { return ids.Add(1) }

// ConcurrentRules marks ErrOf's rules as safe to run element-parallel
// inside one kernel call (spec.ConcurrentRules; spec's window kernels
// then split their output rows over goroutines): the process-wide state
// they touch is atomic and either a counter whose final value is a sum
// (undecided) or set only between rules and read during them (curULPs,
// narrowNow, forcing: splitStep applies a rule to one element, which never
// runs in parallel); and the ids they draw (fresh) are unique whatever
// the interleaving and are only ever compared for equality (Mul's square
// case, FoldDot), so every element's value, bound and every document are
// the same for any GOMAXPROCS. Each element's arithmetic is the serial
// loop's, so no bound changes.
func (ErrOf[F]) ConcurrentRules() {}

// lower returns a lower bound of every modelled evaluation of the closed
// value v: the hull's, raised to lb when that is known and the bound is
// finite (an unbounded value may be computed as NaN, below nothing).
func (v ErrOf[F]) lower() float64 {
	l := v.hull().Lo
	if v.hasLB && !math.IsInf(v.e, 1) {
		l = max(l, v.lb)
	}
	return l
}

// withLB records the lower bound l ≥ 0 of every computed value of v.
func (v ErrOf[F]) withLB(l float64) ErrOf[F] {
	v.lb, v.hasLB = l, true
	return v
}

// square returns {a² : a ∈ x}: x·x, whose lower end is raised to 0 when x
// contains 0 (a square is never negative).
func square(x spec.Interval) spec.Interval {
	y := x.Mul(x)
	y.Lo = max(y.Lo, 0)
	return y
}

// Err is the bound for binary32 evaluations (u = 2^-24): the scalar of
// Bounds, Compare and GradErr.
type Err = ErrOf[binary32]

// Err64 is the bound for binary64 evaluations (u = 2^-53), for runtimes
// that compute in float64: the same algebra as Err with binary64's
// constants (doc.go, "Formats").
type Err64 = ErrOf[binary64]

// Value returns the closed binary32 value whose exact real value lies in
// x and whose every modelled binary32 evaluation is within e of it. A NaN
// or negative e is taken as +∞ (no bound).
func Value(x spec.Interval, e float64) Err { return valueOf[binary32](x, e) }

// Value64 is Value for binary64: every modelled binary64 evaluation is
// within e of the exact value, which lies in x.
func Value64(x spec.Interval, e float64) Err64 { return valueOf[binary64](x, e) }

func valueOf[F format](x spec.Interval, e float64) ErrOf[F] {
	if !(e >= 0) {
		e = inf
	}
	return ErrOf[F]{x: x, e: e}
}

// Exact returns the enclosure of the exact real value.
func (v ErrOf[F]) Exact() spec.Interval { return v.x }

// Bound returns the bound on |v̂ − x|, the sum's rounding included when v
// is a pending sum: +∞ when no bound is known (a possible overflow, a
// division by a value that may be 0, …).
func (v ErrOf[F]) Bound() float64 { return v.close().e }

// Terms returns the number of terms of a pending sum (0 for a closed
// value).
func (v ErrOf[F]) Terms() int64 { return v.n }

// hull returns an interval that contains every modelled evaluation of the
// closed value v: [Lo − e, Hi + e], rounded outward.
func (v ErrOf[F]) hull() spec.Interval {
	if math.IsInf(v.e, 1) {
		return spec.Interval{Lo: math.Inf(-1), Hi: inf}
	}
	return spec.Interval{Lo: subDown(v.x.Lo, v.e), Hi: addUpSigned(v.x.Hi, v.e)}
}

// exactZero reports a closed exact zero: every modelled evaluation is 0.
func (v ErrOf[F]) exactZero() bool { return v.n < 2 && v.x.Lo == 0 && v.x.Hi == 0 && v.e == 0 }

// exactPoint reports a closed value known exactly to be c, with bound 0.
func (v ErrOf[F]) exactPoint(c float64) bool {
	return v.n < 2 && v.x.Lo == c && v.x.Hi == c && v.e == 0
}

// unbounded is a value without error bound whose exact value lies in x.
func unbounded[F format](x spec.Interval) ErrOf[F] { return ErrOf[F]{x: x, e: inf} }

// close charges a pending sum's rounding: e + γ_{n−1}·s (doc.go, "Sums").
// Every partial sum of any evaluation tree is at most (1+γ_{n−1})·s in
// magnitude, so when that is below Ω no addition overflows; otherwise the
// bound is +∞.
func (v ErrOf[F]) close() ErrOf[F] {
	if v.n < 2 {
		v.ord = nil // a sum of one term and exact zeros is that term
		return v
	}
	c := sumConsts[F](v.sumFmt) // the format the additions were performed in
	if v.ord != nil {
		return v.closeOrdered(c)
	}
	if !c.sumFits(v.n, v.s, v.big) {
		return unbounded[F](v.x)
	}
	return ErrOf[F]{x: v.x, e: addUp(v.e, mulUp(c.gamma(v.n-1), v.s)), id: v.id, lb: v.lb, hasLB: v.hasLB}
}

// closeOrdered is close under a summation-order profile (doc.go,
// "Summation-order profiles"): the charge is the smaller of any's,
// γ_{n−1}·s, and the profile's orders' A (orderCharge); +∞ when both are.
func (v ErrOf[F]) closeOrdered(c *consts) ErrOf[F] {
	e := inf
	if c.sumFits(v.n, v.s, v.big) {
		e = addUp(v.e, mulUp(c.gamma(v.n-1), v.s))
	}
	if a := orderCharge(c, v.ord); a < inf {
		e = min(e, addUp(v.e, a))
	}
	if math.IsInf(e, 1) {
		return unbounded[F](v.x)
	}
	return ErrOf[F]{x: v.x, e: e, id: v.id, lb: v.lb, hasLB: v.hasLB}
}

// sumFits reports that no addition of any evaluation tree of a pending
// sum of n ≥ 2 terms overflows (doc.go, "Sums"): with Σ|t̃ᵢ| ≤ s, every
// exact result of an addition of the tree is at most (1+γ_{n−2})·s in
// magnitude; and when one term is at most big and the others sum to at
// most s − big (big > 0), at most max(big, maxFinite) + (1+γ_{n−2})·(s −
// big): one operand of the addition holds no term but the largest, and the
// other is that term itself or a finite rounded result. Either below Ω
// suffices.
func (c *consts) sumFits(n int64, s, big float64) bool {
	g1 := addUp(1, c.gamma(n-2))
	if c.fits(mulUp(g1, s)) {
		return true
	}
	if !(big > 0) || math.IsInf(s, 1) {
		return false
	}
	rest := 0.0
	if s > big {
		rest = up(s - big)
	}
	return c.fits(addUp(max(big, c.maxFinite), mulUp(g1, rest)))
}

// term returns v as the terms of a sum: its error, Σ|t̃ᵢ|, its term
// count and the bound of its largest term (see ErrOf.big).
func (v ErrOf[F]) term() (e, s float64, n int64, big float64) {
	if v.n >= 2 {
		return v.e, v.s, v.n, v.big
	}
	s = addUp(mag(v.x), v.e)
	return v.e, s, 1, s
}

// rounded finishes one rounded operation (×, ÷) whose exact result on the
// exact operands lies in x and whose exact result on the computed operands
// is within p of it: fl(r̂) = r̂(1+δ) + η, |δ| ≤ u, |η| ≤ eta, as long as
// |r̂| < Ω (u and Ω from fc, the constants of F). |r̂| ≤ mag(x) + p =: M,
// so the bound is p + u·M + eta, and +∞ when M ≥ Ω (the operation may
// overflow).
func rounded[F format](fc *consts, x spec.Interval, p, eta float64) ErrOf[F] {
	m := addUp(mag(x), p)
	if !fc.fits(m) {
		return unbounded[F](x)
	}
	return ErrOf[F]{x: x, e: addUp(p, addUp(mulUp(fc.u, m), eta))}
}

// scaled finishes a product or quotient by an exact power of two: the
// exact result on the computed operand is c·b̂, a value of the format
// unless it falls in the subnormal range (where it rounds with |η| ≤ eta)
// or overflows, so the bound is p + eta without the relative term.
func scaled[F format](fc *consts, x spec.Interval, p, eta float64) ErrOf[F] {
	if !fc.fits(addUp(mag(x), p)) {
		return unbounded[F](x)
	}
	return ErrOf[F]{x: x, e: addUp(p, eta)}
}

// pow2 reports a closed value known exactly to be ±2^k (bound 0).
func (v ErrOf[F]) pow2() bool {
	if v.n >= 2 || v.e != 0 || v.x.Lo != v.x.Hi || v.x.Lo == 0 || math.IsInf(v.x.Lo, 0) {
		return false
	}
	// A power of two has a zero fraction field (normal) or a single bit in
	// it (subnormal, exponent field 0).
	b := math.Float64bits(v.x.Lo) &^ (1 << 63)
	frac := b & (1<<52 - 1)
	if b>>52 == 0 {
		return frac&(frac-1) == 0
	}
	return frac == 0
}

// Add returns the pending sum of v and w (doc.go, "Sums"). An exact zero
// operand is dropped: adding an exact zero is exact.
func (v ErrOf[F]) Add(w ErrOf[F]) ErrOf[F] {
	if sumOrderOn() {
		return v.addOrdered(w)
	}
	switch {
	case w.exactZero():
		return v
	case v.exactZero():
		return w
	}
	return v.addPending(w)
}

// addOrdered is Add under a summation-order profile: the same value,
// carrying the list of its terms (exact zeros kept: they hold a place in
// the order).
func (v ErrOf[F]) addOrdered(w ErrOf[F]) ErrOf[F] {
	l := ordAdd(v, w)
	var r ErrOf[F]
	switch {
	case w.exactZero():
		r = v
	case v.exactZero():
		r = w
	default:
		r = v.addPending(w)
	}
	r.ord = l
	return r
}

// addPending is the pending sum of v and w, neither an exact zero.
func (v ErrOf[F]) addPending(w ErrOf[F]) ErrOf[F] {
	e1, s1, n1, b1 := v.term()
	e2, s2, n2, b2 := w.term()
	// Either side's largest term serves as i* (the other side's terms
	// join the rest), so the larger known one does; 0 is "not known".
	big := max(b1, b2)
	var fm F
	r := ErrOf[F]{x: v.x.Add(w.x), e: addUp(e1, e2), s: addUp(s1, s2), n: n1 + n2, big: big, id: fresh(),
		sumFmt: mergeSum(v.sumFmt, w.sumFmt, fm.sumFmt())}
	// A sum of terms that are all ≥ 0 is, in every tree, at least each
	// term that is a value of the format (doc.go, "Squares and lower
	// bounds"): lb is the larger of the two sides' lower bounds.
	if l1, l2 := v.termLower(), w.termLower(); l1 >= 0 && l2 >= 0 {
		r = r.withLB(max(l1, l2))
	}
	return r
}

// termLower is what v contributes to the lower bound of a sum it is a
// term of (doc.go, "Squares and lower bounds"): for a pending sum, its
// lb (−∞ without one); for a closed value with lower() = L ≥ 0, a lower
// bound of fl(t) for every t ≥ L, max(0, L·(1 − u) − η) — the computed
// value is ≥ L, and a fused product âb̂ ≥ L (|âb̂ − ab| ≤ E) enters the
// sum's rounded result as at least fl(âb̂); −∞ when L < 0.
func (v ErrOf[F]) termLower() float64 {
	if v.n >= 2 {
		if v.hasLB {
			return v.lb
		}
		return math.Inf(-1)
	}
	l := v.lower()
	if !(l >= 0) {
		return math.Inf(-1)
	}
	c := constsOf[F]()
	return max(0, down(down(l*(1-c.u))-c.eta))
}

// Sub returns the pending sum v + (−w).
func (v ErrOf[F]) Sub(w ErrOf[F]) ErrOf[F] { return v.Add(w.Neg()) }

// Neg negates v exactly (a pending sum stays pending: −Σtᵢ = Σ(−tᵢ)).
// −v is another value than v (its id is dropped) and has no lower bound.
func (v ErrOf[F]) Neg() ErrOf[F] {
	if v.ord != nil {
		v.ord = ordNeg(v.ord)
	}
	v.x = v.x.Neg()
	v.id, v.lb, v.hasLB = 0, 0, false
	return v
}

// Mul bounds a rounded product: |âb̂ − ab| ≤ |a|·E_b + |b|·E_a + E_a·E_b
// over the magnitudes of the enclosures, then one rounding with the
// underflow term 2·η (2^-149, 2^-1074; doc.go, "Products"). An exact ±1
// or 0 factor is exact.
func (v ErrOf[F]) Mul(w ErrOf[F]) ErrOf[F] {
	a, b := v.close(), w.close()
	switch {
	case a.exactPoint(1):
		return b
	case b.exactPoint(1):
		return a
	case a.exactPoint(-1):
		return b.Neg()
	case b.exactPoint(-1):
		return a.Neg()
	case (a.exactZero() && !math.IsInf(b.e, 1)) || (b.exactZero() && !math.IsInf(a.e, 1)):
		return ErrOf[F]{}
	}
	x := a.x.Mul(b.x)
	sq := a.id != 0 && a.id == b.id // one runtime value times itself
	if sq {
		x = square(a.x)
	}
	ma, mb := mag(a.x), mag(b.x)
	p := addUp(addUp(mulUp(ma, b.e), mulUp(mb, a.e)), mulUp(a.e, b.e))
	c := constsOf[F]()
	var r ErrOf[F]
	if a.pow2() || b.pow2() {
		r = scaled[F](c, x, p, c.sub)
	} else {
		r = rounded[F](c, x, p, c.sub)
	}
	// â·â ≥ 0, and â·b̂ ≥ 0 for â, b̂ ≥ 0: the exact product of the
	// computed factors and its rounding (monotone, fl(0) = 0) are ≥ 0.
	if !math.IsInf(r.e, 1) && (sq || (a.lower() >= 0 && b.lower() >= 0)) {
		r = r.withLB(0)
	}
	return r
}

// Div bounds a rounded quotient (doc.go, "Quotients"): when every modelled
// divisor b̂ satisfies |b̂| ≥ m > 0, |â/b̂ − a/b| ≤ (E_a + |a/b|·E_b)/m,
// then one rounding with the underflow term η. A divisor that may be
// 0 gives no bound (+∞). Div never fails.
func (v ErrOf[F]) Div(w ErrOf[F]) (ErrOf[F], error) {
	a, b := v.close(), w.close()
	x, _ := a.x.Div(b.x)
	switch {
	case b.exactPoint(1):
		return a, nil
	case b.exactPoint(-1):
		return a.Neg(), nil
	}
	m := subDown(mig(b.x), b.e)
	lb := b.lower() // every computed divisor is ≥ lb
	if mig(b.x) > 0 && lb > m {
		m = lb
	}
	if !(m > 0) {
		return unbounded[F](x), nil
	}
	if a.exactZero() {
		return ErrOf[F]{}, nil
	}
	p := divUp(addUp(a.e, mulUp(mag(x), b.e)), m)
	c := constsOf[F]()
	var r ErrOf[F]
	if b.pow2() {
		r = scaled[F](c, x, p, c.eta)
	} else {
		r = rounded[F](c, x, p, c.eta)
	}
	// â ≥ 0 and b̂ > 0: â/b̂ ≥ 0, and so is its rounding.
	if !math.IsInf(r.e, 1) && a.lower() >= 0 && lb > 0 {
		r = r.withLB(0)
	}
	return r, nil
}

// Abs is 1-Lipschitz and exact.
// Every computed |â| is ≥ 0.
func (v ErrOf[F]) Abs() ErrOf[F] {
	a := v.close()
	r := ErrOf[F]{x: a.x.Abs(), e: a.e}
	if !math.IsInf(a.e, 1) {
		r = r.withLB(0)
	}
	return r
}

// Max is 1-Lipschitz in the maximum norm and exact:
// |max(â,b̂) − max(a,b)| ≤ max(|â−a|, |b̂−b|). When the hulls are
// ordered (H_a.Lo ≥ H_b.Hi) both the exact and every computed maximum are
// a's, so the result is a itself, with a's bound alone. The order may
// also come from a's lower bound (lower(), "Squares and lower bounds"):
// every computed â ≥ lower(a) ≥ H_b.Hi and X_a.Lo ≥ X_b.Hi (max(σ² + ε,
// 0), sqrt's rule, of a sum of squares whose hull reaches below 0).
// Otherwise every computed maximum is ≥ each operand's lower bound.
func (v ErrOf[F]) Max(w ErrOf[F]) ErrOf[F] {
	a, b := v.close(), w.close()
	switch ha, hb := a.hull(), b.hull(); {
	case ha.Lo >= hb.Hi, maxLowerBounds && a.lower() >= hb.Hi && a.x.Lo >= b.x.Hi:
		return a
	case hb.Lo >= ha.Hi, maxLowerBounds && b.lower() >= ha.Hi && b.x.Lo >= a.x.Hi:
		return b
	}
	r := ErrOf[F]{x: a.x.Max(b.x), e: max(a.e, b.e)}
	if l := max(a.lower(), b.lower()); maxLowerBounds && l >= 0 && !math.IsInf(r.e, 1) {
		r = r.withLB(l)
	}
	return r
}

// Min is Max's mirror.
func (v ErrOf[F]) Min(w ErrOf[F]) ErrOf[F] {
	a, b := v.close(), w.close()
	switch ha, hb := a.hull(), b.hull(); {
	case ha.Hi <= hb.Lo:
		return a
	case hb.Hi <= ha.Lo:
		return b
	}
	return ErrOf[F]{x: a.x.Min(b.x), e: max(a.e, b.e)}
}

// Relu is max(x, 0): exact and 1-Lipschitz; when the hull
// lies in (−∞, 0] both the exact and every computed value are 0, an exact
// zero (bound 0), and when it lies in [0, ∞) the value is x itself.
func (v ErrOf[F]) Relu() ErrOf[F] { return v.Max(ErrOf[F]{}) }

// Clamp is min(max(x, lo), hi), through Max and Min.
func (v ErrOf[F]) Clamp(lo, hi ErrOf[F]) ErrOf[F] { return v.Max(lo).Min(hi) }

// Sign bounds a discontinuous choice soundly instead of deciding it: the
// exact sign lies in Sign(X), a computed one in Sign(H) with H the hull of
// the modelled evaluations, so the error is at most the largest distance
// between the two sets — 0 when H is on one side of 0 (or is {0}), at most
// 2 otherwise.
func (v ErrOf[F]) Sign() ErrOf[F] {
	a := v.close()
	sx, sh := a.x.Sign(), a.hull().Sign()
	if math.IsInf(a.e, 1) {
		return unbounded[F](sx) // the computed argument may be NaN
	}
	return ErrOf[F]{x: sx, e: max(sh.Hi-sx.Lo, sx.Hi-sh.Lo)}
}

// Step is 1 for x > 0 and 0 otherwise, bounded as Sign: 0 when the hull
// decides it, at most 1 otherwise.
func (v ErrOf[F]) Step() ErrOf[F] {
	a := v.close()
	sx, sh := a.x.Step(), a.hull().Step()
	if math.IsInf(a.e, 1) {
		return unbounded[F](sx)
	}
	return ErrOf[F]{x: sx, e: max(sh.Hi-sx.Lo, sx.Hi-sh.Lo)}
}

// ulpsOf is k ulps of a result of the format of magnitude at most m:
// k·(2^(1−p)·m + 2^(emin−p+1)) (binary32: k·(2^-23·m + 2^-149)), since
// ulp(y) ≤ 2^(1−p)·|y| for normal y and ulp is the least subnormal in the
// subnormal range.
func (c *consts) ulpsOf(k, m float64) float64 {
	return mulUp(k, addUp(mulUp(c.ulpFactor, m), c.sub))
}

// elementary finishes an elementary function f (doc.go, "Elementary
// functions"): x is the enclosure of f(exact), fh an enclosure of f over
// the hull H of the computed arguments, lip an upper bound of |f′| over H
// and e the argument's bound. By the mean value theorem |f(x̂) − f(x)| ≤
// lip·e, and the library result is within k ulps of f(x̂), whose magnitude
// is at most mag(fh).
func elementary[F format](x, fh spec.Interval, lip, e float64) ErrOf[F] {
	c := constsOf[F]()
	m := mag(fh)
	k := float64(curULPs.Load())
	ul := c.ulpsOf(k, m)
	if !c.fits(addUp(m, ul)) {
		return unbounded[F](x)
	}
	return ErrOf[F]{x: x, e: addUp(mulUp(lip, e), ul)}
}

// Exp: f′ = exp, so lip = exp(H.Hi) = the top of exp(H).
func (v ErrOf[F]) Exp() (ErrOf[F], error) {
	a := v.close()
	x, _ := a.x.Exp()
	h := a.hull()
	if math.IsInf(h.Hi, 1) {
		return unbounded[F](x), nil
	}
	fh, _ := h.Exp()
	return elementary[F](x, fh, fh.Hi, a.e), nil
}

// Log: f′ = 1/x, so lip = 1/H.Lo; no bound when H reaches 0.
func (v ErrOf[F]) Log() (ErrOf[F], error) {
	a := v.close()
	h := a.hull()
	if !(a.x.Lo > 0) {
		return unbounded[F](spec.Interval{Lo: math.Inf(-1), Hi: inf}), nil
	}
	x, _ := a.x.Log()
	if !(h.Lo > 0) || math.IsInf(h.Hi, 1) {
		return unbounded[F](x), nil
	}
	fh, _ := h.Log()
	return elementary[F](x, fh, divUp(1, h.Lo), a.e), nil
}

// Log1p: f′ = 1/(1+x), so lip = 1/(1+H.Lo); no bound when H reaches −1.
func (v ErrOf[F]) Log1p() (ErrOf[F], error) {
	a := v.close()
	h := a.hull()
	if !(a.x.Lo > -1) {
		return unbounded[F](spec.Interval{Lo: math.Inf(-1), Hi: inf}), nil
	}
	x, _ := a.x.Log1p()
	d := down(1 + h.Lo) // 1 + H.Lo rounded down (Nextafter below the rounded sum)
	if !(h.Lo > -1) || !(d > 0) || math.IsInf(h.Hi, 1) {
		return unbounded[F](x), nil
	}
	fh, _ := h.Log1p()
	return elementary[F](x, fh, divUp(1, d), a.e), nil
}

// Tanh: |f′| = 1 − tanh² ≤ 1 − tanh(mig H)², bounded by 1 − t² with t a
// lower bound of tanh(mig H) ≥ 0.
func (v ErrOf[F]) Tanh() (ErrOf[F], error) {
	a := v.close()
	x, _ := a.x.Tanh()
	h := a.hull()
	fh, _ := h.Tanh()
	lip := 1.0
	if m := mig(h); m > 0 && !math.IsInf(m, 1) {
		t, _ := spec.Point(m).Tanh()
		if t.Lo > 0 {
			lip = up(1 - down(t.Lo*t.Lo)) // 1 − (a lower bound of t²), rounded up
		}
	}
	return elementary[F](x, fh, min(lip, 1), a.e), nil
}

// Sin and Cos are 1-Lipschitz.
func (v ErrOf[F]) Sin() (ErrOf[F], error) {
	a := v.close()
	x, _ := a.x.Sin()
	fh, _ := a.hull().Sin()
	return elementary[F](x, fh, 1, a.e), nil
}

// Cos is 1-Lipschitz; see Sin.
func (v ErrOf[F]) Cos() (ErrOf[F], error) {
	a := v.close()
	x, _ := a.x.Cos()
	fh, _ := a.hull().Cos()
	return elementary[F](x, fh, 1, a.e), nil
}

// Sqrt is correctly rounded (IEEE 754), so its rounding is u·|result| (a
// square root is never subnormal: √(2^-149) = 2^-74.5 and √(2^-1074) =
// 2^-537 are normal). Propagation:
// |√x̂ − √x| ≤ min(e/(2√H.Lo), √e), the second form from
// |√p − √q| ≤ √|p − q| for p, q ≥ 0. No bound when H reaches below 0 (the
// runtime could take the root of a negative number).
func (v ErrOf[F]) Sqrt() (ErrOf[F], error) {
	a := v.close()
	h := a.hull()
	if a.x.Hi < 0 {
		return unbounded[F](spec.Interval{Lo: math.Inf(-1), Hi: inf}), nil
	}
	x, _ := a.x.Sqrt()
	// Every computed argument is ≥ l; the exact one is ≥ X.Lo: the mean
	// value theorem runs over [min(X.Lo, l), H.Hi].
	l := a.lower()
	if !(l >= 0) || a.x.Lo < 0 || math.IsInf(h.Hi, 1) {
		return unbounded[F](x), nil
	}
	h.Lo = l
	fh, _ := h.Sqrt()
	p := 0.0
	if a.e > 0 {
		p = up(math.Sqrt(a.e))
	}
	if lo := min(a.x.Lo, l); lo > 0 && p > 0 {
		p = min(p, divUp(a.e, down(2*down(math.Sqrt(lo)))))
	}
	r := ErrOf[F]{x: x, e: addUp(p, mulUp(constsOf[F]().u, mag(fh)))}
	// fl(√â) ≥ fl(√l) ≥ √l·(1 − u) for â ≥ l (correctly rounded, monotone,
	// never subnormal).
	if l > 0 {
		r = r.withLB(down(down(math.Sqrt(l)) * down(1-constsOf[F]().u)))
	} else {
		r = r.withLB(0)
	}
	return r, nil
}

// undecided counts the comparisons that could not be decided (see
// Compare); Bounds reads it around its evaluation.
var undecided atomic.Int64

// curULPs is the elementary-function accuracy in ulps that the
// evaluations use (Options.ULPs; set by Bounds for its evaluation).
var curULPs atomic.Int64

func init() { curULPs.Store(DefaultULPs) }

// Compare orders the modelled evaluations: decided (and then the exact
// values are in the same order, since X ⊆ H) only when the hulls of the
// two values do not overlap, or both are the same exact point. An
// undecided comparison returns ok = false and is counted: a registry rule
// that branches on it (sigmoid's two forms) may take another branch than
// the runtime, so Bounds turns every element of such an evaluation
// Inconclusive.
func (v ErrOf[F]) Compare(w ErrOf[F]) (int, bool) {
	a, b := v.close(), w.close()
	ha, hb := a.hull(), b.hull()
	switch {
	case ha.Hi < hb.Lo:
		return -1, true
	case ha.Lo > hb.Hi:
		return 1, true
	case a.e == 0 && b.e == 0 && a.x.Lo == a.x.Hi && b.x.Lo == b.x.Hi && a.x.Lo == b.x.Lo:
		return 0, true
	}
	if f := forcing.Load(); f != nil {
		if a.e == 0 && b.e == 0 {
			return f.next(), true
		}
		f.bad = true
	}
	undecided.Add(1)
	return 0, false
}

// IsZero reports an exact zero whose every modelled evaluation is 0.
func (v ErrOf[F]) IsZero() bool { return v.exactZero() }

// Same reports identical fields (bit equality of the floats).
func (v ErrOf[F]) Same(w ErrOf[F]) bool {
	return v.x.Same(w.x) && math.Float64bits(v.e) == math.Float64bits(w.e) &&
		math.Float64bits(v.s) == math.Float64bits(w.s) && v.n == w.n &&
		math.Float64bits(v.big) == math.Float64bits(w.big) &&
		math.Float64bits(v.lb) == math.Float64bits(w.lb) && v.hasLB == w.hasLB && v.sumFmt == w.sumFmt
}

// FromInt returns the integer n: exact, with the bound |n − fl(n)|, fl
// the rounding to the format (0 for |n| ≤ 2^p: 2^24, 2^53).
func (ErrOf[F]) FromInt(n int64) ErrOf[F] {
	if lim := constsOf[F]().maxInt; n >= -lim && n <= lim {
		f := float64(n)
		return ErrOf[F]{x: spec.Interval{Lo: f, Hi: f}}
	}
	return ErrOf[F]{}.FromRat(new(big.Rat).SetInt64(n))
}

// FromRat returns the constant r: its enclosure, and the bound
// |r − fl(r)| where fl(r) is r rounded to the nearest value of the format
// (the constant the runtime holds, M1); 0 when r is a value of the
// format. (Should big.Rat's rounding miss the nearest value f̃, the
// distance d to the value it returns is still ≥ |r − fl(r)|: fl(r) is the
// nearest.)
func (ErrOf[F]) FromRat(r *big.Rat) ErrOf[F] {
	var fm F
	if f, ok := dyadic[F](r); ok {
		return ErrOf[F]{x: spec.Interval{Lo: f, Hi: f}}
	}
	x := spec.Interval{}.FromRat(r)
	fr := fm.nearest(r)
	if math.IsInf(fr, 0) {
		return unbounded[F](x)
	}
	d := new(big.Rat).SetFloat64(fr)
	d.Sub(d, r)
	d.Abs(d)
	// d.Float64 rounds to nearest; its exactness flag is not trusted
	// (golang/go#56164), the comparison is exact.
	e, _ := d.Float64()
	if new(big.Rat).SetFloat64(e).Cmp(d) < 0 {
		e = up(e)
	}
	return ErrOf[F]{x: x, e: e}
}

// FromSmallFrac is FromRat(p/q) for a dyadic p/q (q a power of two,
// |p| < 2^53) that is a value of the format F — the exact point, bound 0,
// as FromRat returns it — and reports false otherwise (irsem.SmallFracer:
// a payload's binary32 weights convert without a big.Rat).
func (ErrOf[F]) FromSmallFrac(p, q int64) (ErrOf[F], bool) {
	var fm F
	if q <= 0 || q&(q-1) != 0 || p <= -1<<53 || p >= 1<<53 {
		return ErrOf[F]{}, false
	}
	f := float64(p) / float64(q) // exact: p has ≤ 53 bits, q a power of two
	if !fm.holds(f) {
		return ErrOf[F]{}, false
	}
	return ErrOf[F]{x: spec.Interval{Lo: f, Hi: f}}, true
}

// dyadic returns r as a float64 when r is exactly a value of the format F
// (a fast path: an int64 numerator of at most 53 bits and a power-of-two
// int64 denominator, so that r is a float64 — at least 2^-62 in magnitude,
// hence normal — with then a significand of at most p bits and an
// exponent in the format's range, which F.holds decides).
func dyadic[F format](r *big.Rat) (float64, bool) {
	var fm F
	num, den := r.Num(), r.Denom()
	if !num.IsInt64() || !den.IsInt64() {
		return 0, false
	}
	p, q := num.Int64(), den.Int64()
	if q&(q-1) != 0 || p <= -1<<53 || p >= 1<<53 {
		return 0, false
	}
	f := float64(p) / float64(q) // exact: p has ≤ 53 bits, q a power of two
	return f, fm.holds(f)
}

// Float64 returns the midpoint of the enclosure.
func (v ErrOf[F]) Float64() float64 { return v.x.Float64() }

// String prints "[lo, hi] ± e" (the bound of the closed value).
func (v ErrOf[F]) String() string {
	return v.x.String() + " ± " + strconv.FormatFloat(v.Bound(), 'g', 6, 64)
}

// Kind is "fpbound" for Err and "fpbound64" for Err64.
func (ErrOf[F]) Kind() string { var f F; return f.kind() }

// DefaultULPs is the elementary-function accuracy assumed when
// Options.ULPs is 0: every exp, log, log1p, tanh, sin and cos of the
// runtime is within 4 ulps of the format (binary32 ulps for Err, binary64
// ulps for Err64) of the real function at its argument (doc.go, "Model").
const DefaultULPs = 4

var (
	_ spec.Scalar[Err]   = Err{}
	_ spec.Scalar[Err64] = Err64{}
)
