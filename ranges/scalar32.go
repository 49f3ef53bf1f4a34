package ranges

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// scalar32 is Interval32 as a spec.Scalar, so that a registry rule can be
// run over enclosures: every range rule that is not hand-written is the
// registry's own forward rule evaluated over scalar32 (see ruleRegistry).
//
// Each method encloses, for all operands in its operands' enclosures, both
// the exact real result and the spec.Binary32 result of the same method
// (which rounds the exact result to nearest, or is exact), because it is
// the corresponding Interval32 operation (see Interval32 for why those
// enclose). The methods that cannot fail in spec.Scalar (Add, Sub, Mul,
// Neg, …) record a failure in the value instead: err is sticky, every
// result of a failed value fails too, and it is also recorded in the
// evaluation's brancher, so a rule that discarded the value would still
// fail. A valid result never has an infinite endpoint.
//
// Compare is where enclosures and executions part: a concrete execution
// takes one branch, and an enclosure may contain values that take
// different ones. Compare answers from the enclosures when every pair of
// values in them compares the same way; otherwise it asks the
// evaluation's brancher, which forces one of the outcomes that some pair
// of values has — each of them in turn over repeated evaluations, whose
// results are joined (enclosePaths). It never answers "undecided": a
// concrete binary32 or exact execution always decides (a NaN, the only
// undecided binary32 comparison, lies in no finite enclosure).
//
// The registry's forward rules compute with the spec.Scalar operations
// and branch only on Compare and IsZero (Same, Float64 and String are for
// display and tests); both branch points are forced. The zero value is
// the point 0, the additive zero. This type is the only
// implementation of spec.Scalar in this package; a method added to that
// interface belongs in this file.
type scalar32 struct {
	iv  Interval32
	err error
	br  *brancher // the evaluation's brancher; nil for constants
}

// errUndecidedConst is the panic of a comparison that two constants do not
// decide and no brancher can force (no registry rule compares constants
// only; the evaluation recovers it into an error).
var errUndecidedConst = errors.New("comparison of two constant enclosures is undecided")

// of returns a value combining the failures and branchers of x and ys
// with the operation's result r (or its failure err).
func (x scalar32) of(r Interval32, err error, ys ...scalar32) scalar32 {
	out := scalar32{iv: r, err: x.err, br: x.br}
	for _, y := range ys {
		if out.err == nil {
			out.err = y.err
		}
		if out.br == nil {
			out.br = y.br
		}
	}
	if out.err == nil {
		out.err = err
	}
	if out.err != nil {
		out.iv = Interval32{}
		if out.br != nil {
			out.br.fail(out.err)
		}
	}
	return out
}

func (x scalar32) ret(r Interval32, err error, ys ...scalar32) (scalar32, error) {
	v := x.of(r, err, ys...)
	return v, v.err
}

// Add encloses a+b.
func (x scalar32) Add(y scalar32) scalar32 { r, err := x.iv.Add(y.iv); return x.of(r, err, y) }

// Sub encloses a−b.
func (x scalar32) Sub(y scalar32) scalar32 { r, err := x.iv.Sub(y.iv); return x.of(r, err, y) }

// Mul encloses a·b (by corners: x.Mul(x) does not know that both factors
// are one value).
func (x scalar32) Mul(y scalar32) scalar32 { r, err := x.iv.Mul(y.iv); return x.of(r, err, y) }

// Neg is −x (exact).
func (x scalar32) Neg() scalar32 { r, err := x.iv.Neg(); return x.of(r, err) }

// Div encloses a/b; it fails when 0 is in the divisor.
func (x scalar32) Div(y scalar32) (scalar32, error) {
	r, err := x.iv.Div(y.iv)
	return x.ret(r, err, y)
}

// Abs is |x| (exact).
func (x scalar32) Abs() scalar32 { r, err := x.iv.Abs(); return x.of(r, err) }

// Max is {max(a,b)} (exact; Binary32.Max returns one of its operands).
func (x scalar32) Max(y scalar32) scalar32 { r, err := x.iv.Max(y.iv); return x.of(r, err, y) }

// Min is {min(a,b)} (exact).
func (x scalar32) Min(y scalar32) scalar32 { r, err := x.iv.Min(y.iv); return x.of(r, err, y) }

// Relu is [max(lo,0), max(hi,0)] (exact).
func (x scalar32) Relu() scalar32 { r, err := x.iv.Relu(); return x.of(r, err) }

// Clamp is min(max(x, lo), hi), each step the exact image.
func (x scalar32) Clamp(lo, hi scalar32) scalar32 {
	r, err := x.iv.Max(lo.iv)
	if err == nil {
		r, err = r.Min(hi.iv)
	}
	return x.of(r, err, lo, hi)
}

// sign32 is −1, 0 or 1.
func sign32(f float32) float32 {
	switch {
	case f > 0:
		return 1
	case f < 0:
		return -1
	}
	return 0
}

// Sign is [sign(lo), sign(hi)]: sign is non-decreasing, so these are the
// least and greatest signs over x (exact).
func (x scalar32) Sign() scalar32 {
	return x.of(Interval32{Lo: sign32(x.iv.Lo), Hi: sign32(x.iv.Hi)}.canon(), x.iv.Valid())
}

// Step is [step(lo), step(hi)], step(v) = 1 for v > 0 else 0
// (non-decreasing, exact).
func (x scalar32) Step() scalar32 {
	st := func(f float32) float32 {
		if f > 0 {
			return 1
		}
		return 0
	}
	return x.of(Interval32{Lo: st(x.iv.Lo), Hi: st(x.iv.Hi)}, x.iv.Valid())
}

// Sqrt encloses √a; it fails when x reaches below 0, where Binary32.Sqrt
// is NaN (the registry's sqrt primitive clips with Max(x, 0) first).
func (x scalar32) Sqrt() (scalar32, error) {
	if x.err == nil && x.iv.Lo < 0 {
		return x.ret(Interval32{}, fmt.Errorf("sqrt operand %s reaches below 0", x.iv))
	}
	r, err := x.iv.Sqrt()
	return x.ret(r, err)
}

// Exp encloses e^a (trusted math library, widened).
func (x scalar32) Exp() (scalar32, error) { r, err := x.iv.Exp(); return x.ret(r, err) }

// Log encloses ln a; it fails unless lo > 0.
func (x scalar32) Log() (scalar32, error) { r, err := x.iv.Log(); return x.ret(r, err) }

// Log1p encloses ln(1+a); it fails unless lo > −1.
func (x scalar32) Log1p() (scalar32, error) { r, err := x.iv.Log1p(); return x.ret(r, err) }

// Tanh encloses tanh a.
func (x scalar32) Tanh() (scalar32, error) { r, err := x.iv.Tanh(); return x.ret(r, err) }

// Sin encloses sin a.
func (x scalar32) Sin() (scalar32, error) { r, err := x.iv.Sin(); return x.ret(r, err) }

// Cos encloses cos a.
func (x scalar32) Cos() (scalar32, error) { r, err := x.iv.Cos(); return x.ret(r, err) }

// Compare decides x against y when the enclosures do (one entirely below
// the other, or both the same point); otherwise the brancher forces one
// of the outcomes some pair of values has (see scalar32). A failed
// operand fails the evaluation.
func (x scalar32) Compare(y scalar32) (int, bool) {
	br := x.br
	if br == nil {
		br = y.br
	}
	if err := errors.Join(x.err, y.err); err != nil {
		if br == nil {
			panic(err)
		}
		br.fail(err)
		return 0, true
	}
	a, b := x.iv, y.iv
	switch {
	case a.Hi < b.Lo:
		return -1, true
	case a.Lo > b.Hi:
		return 1, true
	case a.Lo == a.Hi && b.Lo == b.Hi:
		return 0, true
	}
	// Overlapping, so 0 is possible; −1 when some a < some b, 1 when
	// some a > some b.
	var opts []int
	if a.Lo < b.Hi {
		opts = append(opts, -1)
	}
	opts = append(opts, 0)
	if a.Hi > b.Lo {
		opts = append(opts, 1)
	}
	if br == nil {
		panic(errUndecidedConst)
	}
	return br.decide(opts), true
}

// IsZero is a comparison with 0 too: true for the point [0, 0], false
// when 0 is outside x, and otherwise forced to both answers by the
// brancher, like Compare (a binary32 value in x may or may not be ±0).
func (x scalar32) IsZero() bool {
	switch {
	case x.err != nil:
		if x.br == nil {
			panic(x.err)
		}
		x.br.fail(x.err)
		return false
	case x.iv.Lo == 0 && x.iv.Hi == 0:
		return true
	case x.iv.Lo > 0 || x.iv.Hi < 0:
		return false
	case x.br == nil:
		panic(errUndecidedConst)
	}
	return x.br.decide([]int{0, 1}) == 1
}

// Same compares the endpoints' bits and the failure state.
func (x scalar32) Same(y scalar32) bool { return x.iv.Same(y.iv) && (x.err == nil) == (y.err == nil) }

// FromInt is the tightest enclosure of n (EncloseInt).
func (scalar32) FromInt(n int64) scalar32 {
	r, err := EncloseInt(n)
	return scalar32{}.of(r, err)
}

// FromRat is the tightest enclosure of r (EncloseRat), which holds both r
// and Binary32.FromRat(r) = RN32(r).
func (scalar32) FromRat(r *big.Rat) scalar32 {
	v, err := EncloseRat(r)
	return scalar32{}.of(v, err)
}

// Float64 is the midpoint (NaN for a failed value).
func (x scalar32) Float64() float64 {
	if x.err != nil {
		return math.NaN()
	}
	return (float64(x.iv.Lo) + float64(x.iv.Hi)) / 2
}

// String prints the enclosure, or the failure.
func (x scalar32) String() string {
	if x.err != nil {
		return "failed(" + x.err.Error() + ")"
	}
	return x.iv.String()
}

// Kind names the algebra.
func (scalar32) Kind() string { return "interval32" }

var _ spec.Scalar[scalar32] = scalar32{}

// brancher forces the outcomes of one evaluation's undecided comparisons
// and records the first failure of any of its values.
type brancher struct {
	script []int    // the outcome to force at the k-th undecided comparison
	taken  []choice // the outcomes taken, in order
	err    error
}

type choice struct {
	c    int
	opts []int
}

func (b *brancher) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *brancher) decide(opts []int) int {
	c := opts[0]
	if k := len(b.taken); k < len(b.script) {
		c = b.script[k]
	}
	b.taken = append(b.taken, choice{c, opts})
	return c
}

// next returns the script of the next outcome sequence in depth-first
// order, or nil when every sequence has been run. The evaluation is
// deterministic, so equal prefixes of outcomes meet the same comparisons.
func (b *brancher) next() []int {
	for i := len(b.taken) - 1; i >= 0; i-- {
		ch := b.taken[i]
		for j, o := range ch.opts {
			if o == ch.c && j+1 < len(ch.opts) {
				s := make([]int, i+1)
				for k := 0; k < i; k++ {
					s[k] = b.taken[k].c
				}
				s[i] = ch.opts[j+1]
				return s
			}
		}
	}
	return nil
}

// maxPaths bounds the outcome sequences enclosePaths runs for one
// evaluation.
const maxPaths = 64

// enclosePaths runs eval once per outcome sequence of the undecided
// comparisons it meets (each run gets a fresh brancher to put on its
// operands) and returns the elementwise hull of the results, and whether
// any comparison was undecided. Sound: a concrete execution decides every
// comparison, the operands of each lie in their enclosures (by induction
// along the run with that execution's outcomes), so its outcome is one of
// those forced, and the run with its outcomes encloses its results. A
// failing run, a failed result element (reported with its index) or
// more than maxPaths sequences fail the whole evaluation.
func enclosePaths(eval func(br *brancher) ([]scalar32, error)) (out []Interval32, branched bool, err error) {
	var script []int
	for paths := 0; ; paths++ {
		if paths == maxPaths {
			return nil, true, fmt.Errorf("more than %d combinations of branch outcomes to enclose", maxPaths)
		}
		br := &brancher{script: script}
		vs, err := runRecovered(br, eval)
		branched = branched || len(br.taken) > 0
		if err != nil {
			return nil, branched, err
		}
		for i, v := range vs {
			if v.err != nil {
				return nil, branched, atElem(i, v.err)
			}
		}
		if br.err != nil {
			return nil, branched, br.err
		}
		if out == nil {
			out = make([]Interval32, len(vs))
			for i, v := range vs {
				out[i] = v.iv
			}
		} else {
			if len(vs) != len(out) {
				return nil, true, fmt.Errorf("internal error: branches produced %d and %d values", len(out), len(vs))
			}
			for i, v := range vs {
				if out[i], err = Hull(out[i], v.iv); err != nil {
					return nil, true, err
				}
			}
		}
		if script = br.next(); script == nil {
			return out, branched, nil
		}
	}
}

// runRecovered runs eval, turning a panic (errUndecidedConst, or a
// malformed argument) into an error.
func runRecovered(br *brancher, eval func(br *brancher) ([]scalar32, error)) (vs []scalar32, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
				return
			}
			err = fmt.Errorf("registry rule failed: %v", r)
		}
	}()
	return eval(br)
}

// lift puts enclosures into scalar32 values carrying br.
func lift(xs []Interval32, br *brancher) []scalar32 {
	out := make([]scalar32, len(xs))
	for i, x := range xs {
		out[i] = scalar32{iv: x, br: br}
	}
	return out
}
