package obligations

import (
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// DualInterval is the scalar of the derivative oracle: a dual number
// Re + Du·ε over outward-rounded intervals (spec.Dual[spec.Interval], whose
// chain rules it reuses unchanged) that also records every decision it
// could not take soundly.
//
// Meaning: a DualInterval (R, D) computed from enclosures of reals
// (x, ẋ) encloses what the same sequence of operations computes over real
// dual numbers: the real primal lies in R and the real tangent in D. That
// holds operation by operation because spec.Interval encloses every real
// result, with three exceptions where spec.Dual decides on the primal and
// an interval primal may leave the order undecided:
//
//   - Max and Min: when the primals' order is undecided the real winner may
//     be either operand, or a tie whose tangent is the average. The tangent
//     here is the hull of both tangents, which contains all three (the
//     average lies between them), and the primal is the interval Max/Min.
//     Sound, no record needed.
//   - Sqrt and Clamp: when the primal's side of 0 (of a bound) is undecided
//     and the tangent that would be chosen is not zero, the case is
//     recorded as undecided.
//   - Compare, called by a rule to choose a branch: an undecided order is
//     recorded, since the branch taken over intervals need not be the one
//     the reals take.
//
// Abs, Relu, Sign and Step need no exception: spec.Dual computes their
// tangents as Sign(Re)·Du and Step(Re)·Du, and the interval Sign and Step
// are the hulls of the signs and steps over the range (monotone maps), so
// they contain the real choice.
//
// The record lives in a trace shared by every value derived from the
// oracle's inputs (derivativeEnclosures makes one per case). The zero
// value, and constants built from it inside a rule (var z T;
// z.FromRat(c)), carry none: they are constants, with zero tangents, so
// Sqrt and Clamp never record for them, and an undecided Compare between
// two of them is answered undecided (ok = false) and not recorded. The
// rule then handles that order as it must over spec.Interval — with a
// form valid for either order, or an error, which makes the case
// inconclusive — so the enclosures stay sound. Nothing is shared between
// cases, so verdicts do not depend on which cases run concurrently.
//
// Comparisons are decided exactly where both primals are known exactly:
// the oracle's inputs and the constants built by FromInt and FromRat carry
// their exact rational value (ex), which arithmetic drops. So a lane max
// over inputs 2/3 and 2/3 is an exact tie (tangents averaged, as over the
// reals), not an undecided order of two overlapping enclosures.
type DualInterval struct {
	d     spec.Dual[spec.Interval]
	tr    *diTrace
	ex    spec.Rat // the exact primal, when exact
	exact bool
}

// diTrace counts the undecided choices of one evaluation.
type diTrace struct{ undecided int }

// MakeDualInterval returns re + du·ε (without a trace).
func MakeDualInterval(re, du spec.Interval) DualInterval {
	return DualInterval{d: spec.MakeDual(re, du)}
}

// Re is the primal enclosure.
func (x DualInterval) Re() spec.Interval { return x.d.Re }

// Du is the tangent enclosure.
func (x DualInterval) Du() spec.Interval { return x.d.Du }

func (x DualInterval) with(d spec.Dual[spec.Interval]) DualInterval {
	return DualInterval{d: d, tr: x.tr}
}

func pick(x, y DualInterval) *diTrace {
	if x.tr != nil {
		return x.tr
	}
	return y.tr
}

func (x DualInterval) undecided(y DualInterval) { note(pick(x, y)) }

// note records one undecided choice in tr; a choice among values that
// carry no trace (constants) is not recorded (see DualInterval).
func note(tr *diTrace) {
	if tr != nil {
		tr.undecided++
	}
}

func wrap(d spec.Dual[spec.Interval], tr *diTrace) DualInterval { return DualInterval{d: d, tr: tr} }

func wrapErr(d spec.Dual[spec.Interval], tr *diTrace, err error) (DualInterval, error) {
	return DualInterval{d: d, tr: tr}, err
}

// Add is (a+b, a'+b').
func (x DualInterval) Add(y DualInterval) DualInterval { return wrap(x.d.Add(y.d), pick(x, y)) }

// Sub is (a−b, a'−b').
func (x DualInterval) Sub(y DualInterval) DualInterval { return wrap(x.d.Sub(y.d), pick(x, y)) }

// Mul is (ab, a'b + ab').
func (x DualInterval) Mul(y DualInterval) DualInterval { return wrap(x.d.Mul(y.d), pick(x, y)) }

// Neg is (−a, −a').
func (x DualInterval) Neg() DualInterval { return x.with(x.d.Neg()) }

// Div is (a/b, (a' − (a/b)·b')/b); a divisor enclosure containing 0 gives
// the whole line (spec.Interval's rule), never an error.
func (x DualInterval) Div(y DualInterval) (DualInterval, error) {
	d, err := x.d.Div(y.d)
	return wrapErr(d, pick(x, y), err)
}

// Abs is (|a|, Sign(a)·a').
func (x DualInterval) Abs() DualInterval { return x.with(x.d.Abs()) }

// order compares the primals: exactly when both are exact, else by their
// enclosures (ok is false when those overlap).
func (x DualInterval) order(y DualInterval) (int, bool) {
	if x.exact && y.exact {
		return x.ex.Compare(y.ex)
	}
	return x.d.Re.Compare(y.d.Re)
}

func (x DualInterval) choose(y DualInterval, greater bool) DualInterval {
	tr := pick(x, y)
	if c, ok := x.order(y); ok {
		switch {
		case c != 0 && (c > 0) == greater:
			x.tr = tr
			return x
		case c != 0:
			y.tr = tr
			return y
		}
		// An exact tie: spec.Dual's tie rule on equal (zero) primals gives
		// the tangent, x the primal.
		zx, zy := spec.MakeDual(spec.Interval{}, x.d.Du), spec.MakeDual(spec.Interval{}, y.d.Du)
		t := zx.Min(zy)
		if greater {
			t = zx.Max(zy)
		}
		x.d.Du, x.tr = t.Du, tr
		return x
	}
	re := x.d.Re.Min(y.d.Re)
	if greater {
		re = x.d.Re.Max(y.d.Re)
	}
	return wrap(spec.MakeDual(re, spec.Hull(x.d.Du, y.d.Du)), tr)
}

// Max is the operand with the larger primal (ties average the tangents);
// an undecided order gives the hull of both tangents.
func (x DualInterval) Max(y DualInterval) DualInterval { return x.choose(y, true) }

// Min is the operand with the smaller primal (ties average the tangents);
// an undecided order gives the hull of both tangents.
func (x DualInterval) Min(y DualInterval) DualInterval { return x.choose(y, false) }

// Relu is (relu(a), Step(a)·a').
func (x DualInterval) Relu() DualInterval { return x.with(x.d.Relu()) }

// Clamp is spec.Dual's clamp; an undecided comparison with a bound whose
// tangent is not zero is recorded.
func (x DualInterval) Clamp(lo, hi DualInterval) DualInterval {
	tr := pick(x, DualInterval{tr: pick(lo, hi)})
	for _, b := range []DualInterval{lo, hi} {
		// spec.Dual decides the active bound on the enclosures.
		if _, ok := x.d.Re.Compare(b.d.Re); !ok && !b.d.Du.IsZero() {
			note(tr)
		}
	}
	return wrap(x.d.Clamp(lo.d, hi.d), tr)
}

// Sign is (sign(a), 0).
func (x DualInterval) Sign() DualInterval { return x.with(x.d.Sign()) }

// Step is (step(a), 0).
func (x DualInterval) Step() DualInterval { return x.with(x.d.Step()) }

// Sqrt is (√a, a'/(2√a)) for a > 0 and a zero tangent for a ≤ 0; an
// undecided sign of a with a non-zero tangent is recorded.
func (x DualInterval) Sqrt() (DualInterval, error) {
	// spec.Dual decides the side of 0 on the enclosure.
	if _, ok := x.d.Re.Compare(spec.Interval{}); !ok && !x.d.Du.IsZero() {
		note(x.tr)
	}
	d, err := x.d.Sqrt()
	return wrapErr(d, x.tr, err)
}

// Exp is (e^a, e^a·a').
func (x DualInterval) Exp() (DualInterval, error) { d, err := x.d.Exp(); return wrapErr(d, x.tr, err) }

// Log is (ln a, a'/a).
func (x DualInterval) Log() (DualInterval, error) { d, err := x.d.Log(); return wrapErr(d, x.tr, err) }

// Log1p is (ln(1+a), a'/(1+a)).
func (x DualInterval) Log1p() (DualInterval, error) {
	d, err := x.d.Log1p()
	return wrapErr(d, x.tr, err)
}

// Tanh is (t, (1−t²)·a').
func (x DualInterval) Tanh() (DualInterval, error) {
	d, err := x.d.Tanh()
	return wrapErr(d, x.tr, err)
}

// Sin is (sin a, cos a·a').
func (x DualInterval) Sin() (DualInterval, error) { d, err := x.d.Sin(); return wrapErr(d, x.tr, err) }

// Cos is (cos a, −sin a·a').
func (x DualInterval) Cos() (DualInterval, error) { d, err := x.d.Cos(); return wrapErr(d, x.tr, err) }

// Compare orders the primals (exactly when both are exact); an undecided
// order is recorded.
func (x DualInterval) Compare(y DualInterval) (int, bool) {
	c, ok := x.order(y)
	if !ok {
		x.undecided(y)
	}
	return c, ok
}

// IsZero reports that both parts are [0, 0].
func (x DualInterval) IsZero() bool { return x.d.IsZero() }

// Same compares both parts' endpoints.
func (x DualInterval) Same(y DualInterval) bool { return x.d.Same(y.d) }

// FromInt returns n + 0ε, exact, with the receiver's trace.
func (x DualInterval) FromInt(n int64) DualInterval {
	return DualInterval{d: x.d.FromInt(n), tr: x.tr, ex: spec.Rat{}.FromInt(n), exact: true}
}

// FromRat returns an enclosure of r + 0ε, exact, with the receiver's trace.
func (x DualInterval) FromRat(r *big.Rat) DualInterval {
	return DualInterval{d: x.d.FromRat(r), tr: x.tr, ex: spec.RatFromBig(r), exact: true}
}

// Float64 is the primal's midpoint.
func (x DualInterval) Float64() float64 { return x.d.Float64() }

// String prints "[lo, hi]+[lo, hi]ε".
func (x DualInterval) String() string { return x.d.String() }

// Kind is "dual-interval".
func (DualInterval) Kind() string { return "dual-interval" }

var _ spec.Scalar[DualInterval] = DualInterval{}

// MaxOfTies is the maximum of x and rest (spec.MaxOf): when every order is
// decided (exactly where both primals are exact) it is spec.Dual's n-ary
// rule — the largest operand, or at a t-way tie the average of the t tied
// tangents; when some order is undecided the primal is the interval
// maximum and the tangent the hull of the tangents of the candidates (the
// operands no operand is decidedly greater than). Sound: the real maximum
// is attained on a non-empty subset of the candidates, and the average of
// any such subset's tangents lies in their hull.
func (x DualInterval) MaxOfTies(rest []DualInterval) DualInterval {
	all := append([]DualInterval{x}, rest...)
	tr := x.tr
	for _, y := range rest {
		if tr == nil {
			tr = y.tr
		}
	}
	best, ties := 0, []int{0}
	decided := true
	for i := 1; i < len(all) && decided; i++ {
		c, ok := all[i].order(all[best])
		switch {
		case !ok:
			decided = false
		case c > 0:
			best, ties = i, append(ties[:0], i)
		case c == 0:
			ties = append(ties, i)
		}
	}
	if decided {
		if len(ties) == 1 {
			r := all[best]
			r.tr = tr
			return r
		}
		var sum spec.Interval
		for _, i := range ties {
			sum = sum.Add(all[i].d.Du)
		}
		du, _ := sum.Div(spec.Interval{}.FromInt(int64(len(ties))))
		r := all[best]
		r.d.Du, r.tr = du, tr
		return r
	}
	re := all[0].d.Re
	for _, y := range all[1:] {
		re = re.Max(y.d.Re)
	}
	var du spec.Interval
	first := true
	for i := range all {
		below := false
		for j := range all {
			if c, ok := all[j].order(all[i]); ok && c > 0 {
				below = true
				break
			}
		}
		if below {
			continue
		}
		if first {
			du, first = all[i].d.Du, false
		} else {
			du = spec.Hull(du, all[i].d.Du)
		}
	}
	return wrap(spec.MakeDual(re, du), tr)
}
