package fpbound

import (
	"math/big"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/spec"
)

// adj is spec.Interval as the scalar of the first-order bound's interval
// sweeps (doc.go, "First-order bound"): the registry's forward rules run
// over it on boxes, its VJP rules on interval cotangents. It is
// spec.Interval operation for operation; it only watches for what would
// void the mean value argument on a box:
//
//   - in a forward rule of a primitive that is not Smooth (spec.OpInfo),
//     a Sign or Step whose argument straddles its jump, or any undecided
//     Compare: the function may be discontinuous on the box;
//   - in a VJP rule of such a primitive, an undecided Compare: the rule
//     may select one one-sided derivative instead of their hull.
//
// Abs, Max, Min, Relu and Clamp are Lipschitz, and spec.Interval returns
// the exact hull of their values; their VJP rules take derivatives through
// Step and Sign, whose interval values on a straddling box are [0, 1] and
// [−1, 1], the hull of the one-sided derivatives. The watch is package
// state read around one evaluation under evalMu.
//
// A sum (Add, Sub) gets a fresh id, which copies keep, and Mul of two
// operands with the same non-zero id — one value times itself, as in
// layer_norm's (x − μ)·(x − μ) — is the square's range, never negative
// (doc.go, "Squares and lower bounds"): without it the variance of a box
// that straddles the mean would reach below 0 and its √(σ² + ε) to 0.
type adj struct {
	iv spec.Interval
	id uint64
}

var (
	adjForward   atomic.Bool  // a forward rule is running (else a VJP rule)
	adjNonSmooth atomic.Bool  // the running rule's primitive is not Smooth
	adjVoid      atomic.Int64 // events that void the mean value argument
)

// jump records a Sign or Step whose argument straddles its jump.
func jump() {
	if adjForward.Load() && adjNonSmooth.Load() {
		adjVoid.Add(1)
	}
}

// Add, Sub and Mul take a shortcut where an operand is the exact point 0
// (the one-hot cotangents of the Jacobians are mostly zeros): the result
// is spec.Interval's, bit for bit — 0 + y is y (with −0 ends made +0, as
// spec.Interval's constructor does), and every corner product with a 0 is
// +0 — with the same identities as the general case.
func (a adj) Add(b adj) adj {
	if zeroPoint(a.iv) && b.iv.Lo <= b.iv.Hi {
		return adj{plusZero(b.iv), fresh()}
	}
	if zeroPoint(b.iv) && a.iv.Lo <= a.iv.Hi {
		return adj{plusZero(a.iv), fresh()}
	}
	return adj{a.iv.Add(b.iv), fresh()}
}
func (a adj) Sub(b adj) adj { return adj{a.iv.Sub(b.iv), fresh()} }
func (a adj) Mul(b adj) adj {
	if a.id != 0 && a.id == b.id {
		return adj{iv: square(a.iv)}
	}
	if zeroPoint(a.iv) || zeroPoint(b.iv) {
		return adj{}
	}
	return adj{iv: a.iv.Mul(b.iv)}
}

// zeroPoint reports x = [0, 0].
func zeroPoint(x spec.Interval) bool { return x.Lo == 0 && x.Hi == 0 }

// plusZero is x with a −0 end made +0.
func plusZero(x spec.Interval) spec.Interval {
	if x.Lo == 0 {
		x.Lo = 0
	}
	if x.Hi == 0 {
		x.Hi = 0
	}
	return x
}
func (a adj) Neg() adj        { return adj{iv: a.iv.Neg()} }
func (a adj) Abs() adj        { return adj{iv: a.iv.Abs()} }
func (a adj) Max(b adj) adj   { return adj{iv: a.iv.Max(b.iv)} }
func (a adj) Min(b adj) adj   { return adj{iv: a.iv.Min(b.iv)} }
func (a adj) Relu() adj       { return adj{iv: a.iv.Relu()} }
func (a adj) IsZero() bool    { return a.iv.IsZero() }
func (a adj) Same(b adj) bool { return a.iv.Same(b.iv) }
func (a adj) Float64() float64 {
	return a.iv.Float64()
}
func (a adj) String() string { return a.iv.String() }
func (adj) Kind() string     { return "fpbound.adj" }
func (a adj) Clamp(lo, hi adj) adj {
	return adj{iv: a.iv.Clamp(lo.iv, hi.iv)}
}
func (a adj) Div(b adj) (adj, error) { r, err := a.iv.Div(b.iv); return adj{iv: r}, err }
func (a adj) Sign() adj {
	r := a.iv.Sign()
	if r.Lo != r.Hi {
		jump()
	}
	return adj{iv: r}
}
func (a adj) Step() adj {
	r := a.iv.Step()
	if r.Lo != r.Hi {
		jump()
	}
	return adj{iv: r}
}
func (a adj) Sqrt() (adj, error)  { r, err := a.iv.Sqrt(); return adj{iv: r}, err }
func (a adj) Exp() (adj, error)   { r, err := a.iv.Exp(); return adj{iv: r}, err }
func (a adj) Log() (adj, error)   { r, err := a.iv.Log(); return adj{iv: r}, err }
func (a adj) Log1p() (adj, error) { r, err := a.iv.Log1p(); return adj{iv: r}, err }
func (a adj) Tanh() (adj, error)  { r, err := a.iv.Tanh(); return adj{iv: r}, err }
func (a adj) Sin() (adj, error)   { r, err := a.iv.Sin(); return adj{iv: r}, err }
func (a adj) Cos() (adj, error)   { r, err := a.iv.Cos(); return adj{iv: r}, err }

// Compare is spec.Interval's; an undecided comparison inside a rule of a
// primitive that is not Smooth voids the sweep (see adj). Inside a Smooth
// primitive's rule a branch only chooses between two formulas of the same
// smooth function (sigmoid's, softplus's stable forms), and either
// encloses it on the box.
func (a adj) Compare(b adj) (int, bool) {
	c, ok := a.iv.Compare(b.iv)
	if !ok && adjNonSmooth.Load() {
		adjVoid.Add(1)
	}
	return c, ok
}
func (adj) FromInt(n int64) adj    { return adj{iv: spec.Interval{}.FromInt(n)} }
func (adj) FromRat(r *big.Rat) adj { return adj{iv: spec.Interval{}.FromRat(r)} }

// FromSmallFrac is FromRat(p/q) for a dyadic p/q (q a power of two, |p| <
// 2^53): the exact float64 point p/q (normal: at least 2^-62 in
// magnitude), which is spec.Interval's FromRat of it; false otherwise
// (irsem.SmallFracer: a payload's weights convert without a big.Rat).
func (adj) FromSmallFrac(p, q int64) (adj, bool) {
	if q <= 0 || q&(q-1) != 0 || p <= -1<<53 || p >= 1<<53 {
		return adj{}, false
	}
	f := float64(p) / float64(q) // exact: p has ≤ 53 bits, q a power of two
	return adj{iv: spec.Interval{Lo: f, Hi: f}}, true
}
