package fpbound

import (
	"math"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/spec"
)

// A forceScript answers the undecided comparisons of one run of a scalar
// formula over Err whose operands are both exact (bound 0) with the
// outcomes ans in turn, −1, 0 or +1 past its end (doc.go, "Split
// primitives in the local errors"); bad records a comparison undecided
// with an operand that is not exact, which it cannot answer.
type forceScript struct {
	ans []int
	pos int
	bad bool
}

// next is the script's next answer; past its end, −1 (appended).
func (f *forceScript) next() int {
	if f.pos == len(f.ans) {
		f.ans = append(f.ans, -1)
	}
	c := f.ans[f.pos]
	f.pos++
	return c
}

// advance moves the script to the next path in lexicographic order of
// the answers the last run consumed, and reports false when every path
// has been run.
func (f *forceScript) advance() bool {
	f.ans = f.ans[:f.pos]
	k := len(f.ans) - 1
	for k >= 0 && f.ans[k] == 1 {
		k--
	}
	if k < 0 {
		return false
	}
	f.ans[k]++
	f.ans = f.ans[:k+1]
	f.pos, f.bad = 0, false
	return true
}

// forcing is the script ErrOf.Compare answers from while splitStep runs
// a formula (nil otherwise; set only under evalMu).
var forcing atomic.Pointer[forceScript]

// maxSplitPaths caps the paths splitStep runs per element: 3² covers two
// nested comparisons of exact values.
const maxSplitPaths = 9

// splitStep is the local value over Err of a Smooth elementwise step (a
// primitive with a scalar rule, applied to xs[0]) whose formula met an
// undecided comparison: element by element, the formula run on every
// path of outcomes of its comparisons of exact values, and the closed
// union of the paths' results (doc.go, "Split primitives in the local
// errors"). ok is false when some element's comparison had an operand
// that is not exact, a path failed, or an element has more than
// maxSplitPaths paths; the caller then keeps the comparison undecided.
func splitStep[F format](pr *spec.Prim[ErrOf[F]], a *spec.Attrs, x spec.Tensor[ErrOf[F]]) (spec.Tensor[ErrOf[F]], bool) {
	out := spec.Tensor[ErrOf[F]]{Shape: x.Shape, Data: make([]ErrOf[F], len(x.Data))}
	one := spec.Shape{1}
	for i, v := range x.Data {
		fs := &forceScript{}
		var u ErrOf[F]
		for paths := 0; ; paths++ {
			if paths == maxSplitPaths {
				return out, false
			}
			before := undecided.Load()
			forcing.Store(fs)
			y, err := pr.Apply(a, []spec.Tensor[ErrOf[F]]{{Shape: one, Data: []ErrOf[F]{v}}})
			forcing.Store(nil)
			if err != nil || fs.bad || undecided.Load() != before || len(y.Data) != 1 {
				return out, false
			}
			c := y.Data[0].close()
			switch {
			case paths == 0 && len(fs.ans) == 0:
				c = y.Data[0] // no comparison undecided: the value as it is
				fallthrough
			case paths == 0:
				u = c
			default:
				u = unionErr(u, c)
			}
			if !fs.advance() {
				break
			}
		}
		out.Data[i] = u
	}
	return out, true
}

// unionErr is a closed value that holds whatever either closed value a or
// b holds: the hull of their enclosures, the larger bound, and the
// smaller lower bound where both have one.
func unionErr[F format](a, b ErrOf[F]) ErrOf[F] {
	u := ErrOf[F]{x: spec.Interval{Lo: math.Min(a.x.Lo, b.x.Lo), Hi: math.Max(a.x.Hi, b.x.Hi)}, e: math.Max(a.e, b.e)}
	if a.hasLB && b.hasLB {
		u.lb, u.hasLB = math.Min(a.lb, b.lb), true
	}
	return u
}
