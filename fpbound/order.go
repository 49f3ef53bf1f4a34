package fpbound

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/spec"
)

// Summation-order profiles (doc.go, "Summation-order profiles"). A
// runtime profile may state the orders in which the runtime sums: the
// field order of a profile, selected by a suffix of the profile's name,
// "ieee+sequential", "onnxruntime-cpu+blocked:8". Without a suffix (or
// with "+any") the order is M2's, every order and tree: the default, and
// every bound is then the same float64 as without this file.

// orderKind is the kind of a summation-order profile.
type orderKind int

const (
	// orderAny is M2(a): every order and tree (the default).
	orderAny orderKind = iota
	// orderSequential is the left fold in the order the formulas list the
	// terms, with or without a fused multiply-add per product term.
	orderSequential
	// orderBlocked is k strided partial accumulators (term i to
	// accumulator i mod k, each a left fold, with or without FMA), then
	// the pairwise reduction of the accumulators (adjacent pairs, an odd
	// last one carried to the next level).
	orderBlocked
)

// sumOrder is a summation-order profile: its kind and, for orderBlocked,
// the number k ≥ 2 of accumulators.
type sumOrder struct {
	kind orderKind
	k    int
}

// maxBlocked is the largest k blocked:k accepts.
const maxBlocked = 1024

// String is the order's name as a profile suffix ("any", "sequential",
// "blocked:k").
func (o sumOrder) String() string {
	switch o.kind {
	case orderSequential:
		return "sequential"
	case orderBlocked:
		return "blocked:" + strconv.Itoa(o.k)
	}
	return "any"
}

// SumOrders lists the summation orders a profile name may end in
// ("+order"; k in blocked:k from 2 to 1024).
func SumOrders() []string { return []string{"any", "sequential", "blocked:k"} }

// parseSumOrder parses a summation order's name.
func parseSumOrder(s string) (sumOrder, error) {
	switch {
	case s == "any":
		return sumOrder{}, nil
	case s == "sequential":
		return sumOrder{kind: orderSequential}, nil
	case strings.HasPrefix(s, "blocked:"):
		k, err := strconv.Atoi(strings.TrimPrefix(s, "blocked:"))
		if err != nil || k < 2 || k > maxBlocked {
			return sumOrder{}, fmt.Errorf("fpbound: summation order %q: want blocked:k with k from 2 to %d", s, maxBlocked)
		}
		return sumOrder{kind: orderBlocked, k: k}, nil
	}
	return sumOrder{}, fmt.Errorf("fpbound: unknown summation order %q (known: %v)", s, SumOrders())
}

// splitProfileName splits "base+order" into the base profile's name and
// the order ("any" without a suffix).
func splitProfileName(name string) (base string, o sumOrder, err error) {
	base, suffix, ok := strings.Cut(name, "+")
	if !ok {
		return name, sumOrder{}, nil
	}
	o, err = parseSumOrder(suffix)
	return base, o, err
}

// curSumOrder is the summation order of the evaluation over Err in
// progress (set by useSumOrder for one Bounds, Evaluate or SharpBounds
// call; evaluations over Err are serialised): 0 any, −1 sequential, k ≥ 2
// blocked:k.
var curSumOrder atomic.Int64

// useSumOrder makes the named profile's summation order the current one
// and returns the function that restores any.
func useSumOrder(profile string) (restore func()) {
	pr, err := lookupProfile(profile)
	if err != nil || pr.order.kind == orderAny {
		return func() {}
	}
	switch pr.order.kind {
	case orderSequential:
		curSumOrder.Store(-1)
	default:
		curSumOrder.Store(int64(pr.order.k))
	}
	return func() { curSumOrder.Store(0) }
}

// sumOrderOn reports that a summation-order profile other than any is in
// force: Add then records each pending sum's terms in order, and the
// dense kernels (dense.go), which do not, decline.
func sumOrderOn() bool { return curSumOrder.Load() != 0 }

// ordTerm is one term of a pending sum's list of terms in the order the
// formulas add them (a persistent linked list: prev is the terms before
// it; lists are shared, never changed): x encloses the exact term, e
// bounds |t̃ − t| (the term's own error, as Add reads it), n is the
// number of terms up to this one. charge caches the order's charge of
// the sum that ends here (math.Float64bits + 1; 0 while not computed);
// order is curSumOrder when the term was added, so that a sum closed after
// its evaluation (a caller reading Bound) is charged by the same order.
type ordTerm struct {
	prev   *ordTerm
	x      spec.Interval
	e      float64
	n      int64
	order  int64
	charge atomic.Uint64
}

// ordList is v's terms as a list: its own list when it has one, the one
// term v when v is closed; ok is false for a pending sum without a list
// (made by a path that does not record its order: the charge is then
// any's).
func ordList[F format](v ErrOf[F]) (*ordTerm, bool) {
	switch {
	case v.ord != nil:
		return v.ord, true
	case v.n >= 2:
		return nil, false
	}
	return &ordTerm{x: v.x, e: v.e, n: 1, order: curSumOrder.Load()}, true
}

// ordConcat is the list of a's terms followed by b's (b is copied term
// by term onto a; a is shared).
func ordConcat(a, b *ordTerm) *ordTerm {
	if b.n == 1 {
		return &ordTerm{prev: a, x: b.x, e: b.e, n: a.n + 1, order: a.order}
	}
	bs := ordSlice(b)
	for _, t := range bs {
		a = &ordTerm{prev: a, x: t.x, e: t.e, n: a.n + 1, order: a.order}
	}
	return a
}

// ordSlice is the list's terms, first to last.
func ordSlice(l *ordTerm) []*ordTerm {
	out := make([]*ordTerm, l.n)
	for i := l.n - 1; i >= 0; i-- {
		out[i] = l
		l = l.prev
	}
	return out
}

// ordNeg is the list of the negated terms.
func ordNeg(l *ordTerm) *ordTerm {
	var out *ordTerm
	for _, t := range ordSlice(l) {
		out = &ordTerm{prev: out, x: t.x.Neg(), e: t.e, n: t.n, order: t.order}
	}
	return out
}

// ordAdd is the list of the sum v + w (Add), or nil when either operand
// is a pending sum without a list.
func ordAdd[F format](v, w ErrOf[F]) *ordTerm {
	a, ok1 := ordList(v)
	b, ok2 := ordList(w)
	if !ok1 || !ok2 {
		return nil
	}
	return ordConcat(a, b)
}

// partial is a partial sum of an evaluation order: p encloses its exact
// value over the terms' exact values, es bounds Σ|t̃ᵢ − tᵢ| over its terms,
// a bounds the rounding error the additions that formed it made, |ŝ −
// Σt̃ᵢ| ≤ a (doc.go, "Summation-order profiles"), zero that every term
// is an exact zero.
type partial struct {
	p    spec.Interval
	es   float64
	a    float64
	zero bool
}

// orderCharge is the bound A of the additions' rounding of the sum whose
// list ends at l under its order (ordTerm.order) (the fold with and without fused
// multiply-adds), or +∞ when an addition may overflow or the order is any.
func orderCharge(c *consts, l *ordTerm) float64 {
	if v := l.charge.Load(); v != 0 {
		return math.Float64frombits(v - 1)
	}
	var a float64
	switch k := l.order; {
	case k == -1:
		a = foldCharge(c, ordSlice(l)).a
	case k >= 2:
		a = blockedCharge(c, ordSlice(l), int(k))
	default:
		return inf
	}
	if math.IsNaN(a) {
		a = inf
	}
	l.charge.Store(math.Float64bits(a) + 1)
	return a
}

// fold is the partial sum after adding t to q (the left operand, the
// accumulator) in one rounded addition: the exact operand sum is within
// q.a of Σt̃ᵢ, so |fl(·) − Σt̃ᵢ| ≤ q.a + u·(S + q.a) + η with S = |P| + Σ
// eᵢ the largest |Σt̃ᵢ|; η for a fused multiply-add's subnormal result
// (an addition of two values of the format is exact there). Adding an
// exact zero is exact.
func fold(c *consts, q partial, t partial) partial {
	r := partial{p: q.p.Add(t.p), es: addUp(q.es, t.es), zero: q.zero && t.zero}
	if t.zero && t.a == 0 {
		r.a = q.a
		return r
	}
	if q.zero && q.a == 0 {
		r.a = t.a
		return r
	}
	base := addUp(q.a, t.a)
	s := addUp(mag(r.p), r.es)
	if !c.fits(addUp(s, base)) {
		r.a = inf
		return r
	}
	r.a = addUp(addUp(base, mulUp(c.u, addUp(s, base))), c.eta)
	return r
}

// leafOf is one term as a partial sum: its value is the term as fed in,
// no addition yet.
func leafOf(t *ordTerm) partial {
	return partial{p: t.x, es: t.e, zero: t.x.Lo == 0 && t.x.Hi == 0 && t.e == 0}
}

// foldCharge is the left fold of ts.
func foldCharge(c *consts, ts []*ordTerm) partial {
	q := leafOf(ts[0])
	for _, t := range ts[1:] {
		q = fold(c, q, leafOf(t))
	}
	return q
}

// blockedCharge is blocked:k's: accumulator r is the left fold of the
// terms r, r+k, r+2k, …; the min(k, n) accumulators are then reduced
// pairwise, adjacent pairs at each level, an odd last one carried.
func blockedCharge(c *consts, ts []*ordTerm, k int) float64 {
	var accs []partial
	for r := 0; r < k && r < len(ts); r++ {
		var sub []*ordTerm
		for i := r; i < len(ts); i += k {
			sub = append(sub, ts[i])
		}
		accs = append(accs, foldCharge(c, sub))
	}
	for len(accs) > 1 {
		var next []partial
		for i := 0; i+1 < len(accs); i += 2 {
			next = append(next, fold(c, accs[i], accs[i+1]))
		}
		if len(accs)%2 == 1 {
			next = append(next, accs[len(accs)-1])
		}
		accs = next
	}
	return accs[0].a
}
