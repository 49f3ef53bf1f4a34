package fpbound

import (
	"math/big"
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/spec"
)

// tree is a test-only binary32 scalar that evaluates the registry's
// formulas as a runtime allowed by the model may: every Add/Sub builds a
// pending list of terms (products stay unrounded), and when the sum is
// consumed it is summed in the order of the current policy — reversed,
// pairwise, or a random tree — optionally contracting each product term
// into a fused multiply-add (spec.Binary32.FMA, one rounding). Everything
// else is spec.F32 (one rounding per operation; elementary functions
// through float64, within 1 ulp). A policy is process state: tests using
// tree run sequentially.
type tree struct {
	f     spec.F32
	terms []tterm // pending sum (len ≥ 1); nil when closed
	prod  bool    // a pending, unrounded product pa·pb
	pa    spec.F32
	pb    spec.F32
}

type tterm struct {
	a, b spec.F32 // value a, or the exact product a·b when prod
	prod bool
}

type policy int

const (
	polLeft policy = iota
	polReverse
	polPairwise
	polRandom
)

var (
	treePolicy policy
	treeFMA    bool
	treeRand   = rand.New(rand.NewPCG(1, 2))
)

func leaf(v tree) []tterm {
	switch {
	case v.terms != nil:
		return v.terms
	case v.prod:
		return []tterm{{a: v.pa, b: v.pb, prod: true}}
	}
	return []tterm{{a: v.f}}
}

func round(t tterm) spec.F32 {
	if t.prod {
		return t.a.Mul(t.b)
	}
	return t.a
}

// sumTerms sums ts by the policy; acc is the running left operand.
func sumTerms(ts []tterm) spec.F32 {
	if len(ts) == 1 {
		return round(ts[0])
	}
	var split int
	switch treePolicy {
	case polLeft:
		split = len(ts) - 1
	case polReverse:
		split = 1 // sum(t0) + sum(rest): the rest is reduced first
	case polPairwise:
		split = len(ts) / 2
	default:
		split = 1 + treeRand.IntN(len(ts)-1)
	}
	left, right := ts[:split], ts[split:]
	if treePolicy == polReverse {
		// reverse order: ((t_{n-1} + t_{n-2}) + …) + t0
		l := sumTerms(right)
		return combine(l, left[0])
	}
	if len(right) == 1 {
		return combine(sumTerms(left), right[0])
	}
	return sumTerms(left).Add(sumTerms(right))
}

// combine adds one term to an already computed partial sum, fused when
// the term is a product and FMA contraction is on.
func combine(acc spec.F32, t tterm) spec.F32 {
	if t.prod && treeFMA {
		return spec.F32(spec.Binary32FromFloat32(float32(t.a)).FMA(spec.Binary32FromFloat32(float32(t.b)),
			spec.Binary32FromFloat32(float32(acc))).Float32())
	}
	return acc.Add(round(t))
}

func (v tree) val() spec.F32 {
	switch {
	case v.terms != nil:
		return sumTerms(v.terms)
	case v.prod:
		return v.pa.Mul(v.pb)
	}
	return v.f
}

func cl(f spec.F32) tree { return tree{f: f} }

func (v tree) Add(w tree) tree {
	ts := append(append([]tterm{}, leaf(v)...), leaf(w)...)
	return tree{terms: ts}
}
func (v tree) Sub(w tree) tree { return v.Add(w.Neg()) }
func (v tree) Mul(w tree) tree { return tree{prod: true, pa: v.val(), pb: w.val()} }
func (v tree) Neg() tree {
	switch {
	case v.terms != nil:
		ts := make([]tterm, len(v.terms))
		for i, t := range v.terms {
			t.a = t.a.Neg()
			ts[i] = t
		}
		return tree{terms: ts}
	case v.prod:
		return tree{prod: true, pa: v.pa.Neg(), pb: v.pb}
	}
	return cl(v.f.Neg())
}
func (v tree) Div(w tree) (tree, error) { q, _ := v.val().Div(w.val()); return cl(q), nil }
func (v tree) Abs() tree                { return cl(v.val().Abs()) }
func (v tree) Max(w tree) tree          { return cl(v.val().Max(w.val())) }
func (v tree) Min(w tree) tree          { return cl(v.val().Min(w.val())) }
func (v tree) Relu() tree               { return cl(v.val().Relu()) }
func (v tree) Clamp(lo, hi tree) tree   { return cl(v.val().Clamp(lo.val(), hi.val())) }
func (v tree) Sign() tree               { return cl(v.val().Sign()) }
func (v tree) Step() tree               { return cl(v.val().Step()) }
func (v tree) Sqrt() (tree, error)      { r, err := v.val().Sqrt(); return cl(r), err }
func (v tree) Exp() (tree, error)       { r, err := v.val().Exp(); return cl(r), err }
func (v tree) Log() (tree, error)       { r, err := v.val().Log(); return cl(r), err }
func (v tree) Log1p() (tree, error)     { r, err := v.val().Log1p(); return cl(r), err }
func (v tree) Tanh() (tree, error)      { r, err := v.val().Tanh(); return cl(r), err }
func (v tree) Sin() (tree, error)       { r, err := v.val().Sin(); return cl(r), err }
func (v tree) Cos() (tree, error)       { r, err := v.val().Cos(); return cl(r), err }
func (v tree) Compare(w tree) (int, bool) {
	return v.val().Compare(w.val())
}
func (v tree) IsZero() bool          { return v.terms == nil && !v.prod && v.f.IsZero() }
func (v tree) Same(w tree) bool      { return v.val().Same(w.val()) }
func (tree) FromInt(n int64) tree    { return cl(spec.F32(0).FromInt(n)) }
func (tree) FromRat(r *big.Rat) tree { return cl(spec.F32(0).FromRat(r)) }
func (v tree) Float64() float64      { return v.val().Float64() }
func (v tree) String() string        { return v.val().String() }
func (tree) Kind() string            { return "tree" }

var _ spec.Scalar[tree] = tree{}
