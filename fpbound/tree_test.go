package fpbound

import (
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/spec"
)

// treeOf is a test-only scalar of the float format T (spec.F32 or
// spec.F64) that evaluates the registry's formulas as a runtime allowed by
// the model may: every Add/Sub builds a pending list of terms (products
// stay unrounded), and when the sum is consumed it is summed in the order
// of the current policy — reversed, pairwise, or a random tree —
// optionally contracting each product term into a fused multiply-add (one
// rounding: spec.Binary32.FMA, math.FMA). Everything else is T (one
// rounding per operation; elementary functions through Go's float64
// library, within 1 ulp of float64 and so of binary32). A policy is process
// state: tests using a tree run sequentially.
type treeOf[T treeFloat[T]] struct {
	f     T
	terms []ttermOf[T] // pending sum (len ≥ 1); nil when closed
	prod  bool         // a pending, unrounded product pa·pb
	pa    T
	pb    T
}

// treeFloat is the constraint of treeOf: spec.F32 or spec.F64.
type treeFloat[T any] interface {
	spec.F32 | spec.F64
	spec.Scalar[T]
}

// tree is the binary32 tree, tree64 the binary64 one.
type (
	tree   = treeOf[spec.F32]
	tree64 = treeOf[spec.F64]
)

type ttermOf[T treeFloat[T]] struct {
	a, b T // value a, or the exact product a·b when prod
	prod bool
}

// fma returns a·b + c rounded once in T's format.
func fma[T treeFloat[T]](a, b, c T) T {
	switch any(a).(type) {
	case spec.F32:
		return T(spec.Binary32FromFloat32(float32(a)).FMA(spec.Binary32FromFloat32(float32(b)),
			spec.Binary32FromFloat32(float32(c))).Float32())
	default:
		return T(math.FMA(float64(a), float64(b), float64(c)))
	}
}

type policy int

const (
	polLeft policy = iota
	polReverse
	polPairwise
	polRandom
	// polBlocked8: term i goes to accumulator i mod 8 (each a left fold,
	// fused when FMA is on), then the 8 partial sums are reduced pairwise
	// — the vectorised dot product of SIMD kernels.
	polBlocked8
)

var (
	treePolicy policy
	treeFMA    bool
	treeRand   = rand.New(rand.NewPCG(1, 2))
)

func leaf[T treeFloat[T]](v treeOf[T]) []ttermOf[T] {
	switch {
	case v.terms != nil:
		return v.terms
	case v.prod:
		return []ttermOf[T]{{a: v.pa, b: v.pb, prod: true}}
	}
	return []ttermOf[T]{{a: v.f}}
}

func round[T treeFloat[T]](t ttermOf[T]) T {
	if t.prod {
		return t.a.Mul(t.b)
	}
	return t.a
}

// sumTerms sums ts by the policy; acc is the running left operand.
func sumTerms[T treeFloat[T]](ts []ttermOf[T]) T {
	if len(ts) == 1 {
		return round(ts[0])
	}
	if treePolicy == polBlocked8 {
		var accs []T
		for a := 0; a < 8 && a < len(ts); a++ {
			acc := round(ts[a])
			for i := a + 8; i < len(ts); i += 8 {
				acc = combine(acc, ts[i])
			}
			accs = append(accs, acc)
		}
		for len(accs) > 1 {
			var next []T
			for i := 0; i+1 < len(accs); i += 2 {
				next = append(next, accs[i].Add(accs[i+1]))
			}
			if len(accs)%2 == 1 {
				next = append(next, accs[len(accs)-1])
			}
			accs = next
		}
		return accs[0]
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
func combine[T treeFloat[T]](acc T, t ttermOf[T]) T {
	if t.prod && treeFMA {
		return fma(t.a, t.b, acc)
	}
	return acc.Add(round(t))
}

func (v treeOf[T]) val() T {
	switch {
	case v.terms != nil:
		return sumTerms(v.terms)
	case v.prod:
		return v.pa.Mul(v.pb)
	}
	return v.f
}

func cl[T treeFloat[T]](f T) treeOf[T] { return treeOf[T]{f: f} }

func (v treeOf[T]) Add(w treeOf[T]) treeOf[T] {
	ts := append(append([]ttermOf[T]{}, leaf(v)...), leaf(w)...)
	return treeOf[T]{terms: ts}
}
func (v treeOf[T]) Sub(w treeOf[T]) treeOf[T] { return v.Add(w.Neg()) }
func (v treeOf[T]) Mul(w treeOf[T]) treeOf[T] {
	return treeOf[T]{prod: true, pa: v.val(), pb: w.val()}
}
func (v treeOf[T]) Neg() treeOf[T] {
	switch {
	case v.terms != nil:
		ts := make([]ttermOf[T], len(v.terms))
		for i, t := range v.terms {
			t.a = t.a.Neg()
			ts[i] = t
		}
		return treeOf[T]{terms: ts}
	case v.prod:
		return treeOf[T]{prod: true, pa: v.pa.Neg(), pb: v.pb}
	}
	return cl(v.f.Neg())
}
func (v treeOf[T]) Div(w treeOf[T]) (treeOf[T], error) {
	q, _ := v.val().Div(w.val())
	return cl(q), nil
}
func (v treeOf[T]) Abs() treeOf[T]                   { return cl(v.val().Abs()) }
func (v treeOf[T]) Max(w treeOf[T]) treeOf[T]        { return cl(v.val().Max(w.val())) }
func (v treeOf[T]) Min(w treeOf[T]) treeOf[T]        { return cl(v.val().Min(w.val())) }
func (v treeOf[T]) Relu() treeOf[T]                  { return cl(v.val().Relu()) }
func (v treeOf[T]) Clamp(lo, hi treeOf[T]) treeOf[T] { return cl(v.val().Clamp(lo.val(), hi.val())) }
func (v treeOf[T]) Sign() treeOf[T]                  { return cl(v.val().Sign()) }
func (v treeOf[T]) Step() treeOf[T]                  { return cl(v.val().Step()) }
func (v treeOf[T]) Sqrt() (treeOf[T], error)         { r, err := v.val().Sqrt(); return cl(r), err }
func (v treeOf[T]) Exp() (treeOf[T], error)          { r, err := v.val().Exp(); return cl(r), err }
func (v treeOf[T]) Log() (treeOf[T], error)          { r, err := v.val().Log(); return cl(r), err }
func (v treeOf[T]) Log1p() (treeOf[T], error)        { r, err := v.val().Log1p(); return cl(r), err }
func (v treeOf[T]) Tanh() (treeOf[T], error)         { r, err := v.val().Tanh(); return cl(r), err }
func (v treeOf[T]) Sin() (treeOf[T], error)          { r, err := v.val().Sin(); return cl(r), err }
func (v treeOf[T]) Cos() (treeOf[T], error)          { r, err := v.val().Cos(); return cl(r), err }
func (v treeOf[T]) Compare(w treeOf[T]) (int, bool) {
	return v.val().Compare(w.val())
}
func (v treeOf[T]) IsZero() bool               { return v.terms == nil && !v.prod && v.f.IsZero() }
func (v treeOf[T]) Same(w treeOf[T]) bool      { return v.val().Same(w.val()) }
func (treeOf[T]) FromInt(n int64) treeOf[T]    { var z T; return cl(z.FromInt(n)) }
func (treeOf[T]) FromRat(r *big.Rat) treeOf[T] { var z T; return cl(z.FromRat(r)) }
func (v treeOf[T]) Float64() float64           { return v.val().Float64() }
func (v treeOf[T]) String() string             { return v.val().String() }
func (treeOf[T]) Kind() string                 { return "tree" }

var (
	_ spec.Scalar[tree]   = tree{}
	_ spec.Scalar[tree64] = tree64{}
)
