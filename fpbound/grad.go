package fpbound

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
)

// GradErr is Bounds for reverse mode: it runs the forward pass and the
// reverse pass of g (payload p) at input along the tape, from the output
// cotangent seed, over Err, and returns the Err value of every gradient
// element (the IR input's and every payload parameter's, irgrad's
// context order) and the number of comparisons the evaluation could not
// decide.
//
// The theorem of the package doc applies unchanged to the reverse pass:
// the VJP rules of the registry are formulas over the same scalar
// operations, evaluated over Err by the same induction, so for every
// element with finite bound E and exact enclosure X (EncloseErr) every
// binary32 evaluation of the forward and reverse formulas satisfying
// M1–M3 — any order and parenthesisation of every sum, the accumulation of
// a node's cotangent over its children included, and any fusion of a
// product into a sum — produces a finite value within E of the exact
// gradient. As for the forward pass, a runtime whose VJP formula differs
// from the registry's (PyTorch's fused batch-norm backward, …) is judged
// relative to the registry's formula.
func GradErr(g *irsem.Graph, p *irsem.Payload, input, seed irsem.RatTensor, o Options) (*irgrad.Gradients[Err], []irgrad.Param, int64, error) {
	return gradErr[binary32](g, p, input, seed, o)
}

// GradErr64 is GradErr over Err64: the bound of every binary64 evaluation
// of the forward and reverse formulas satisfying M1–M3 with binary64's
// constants.
func GradErr64(g *irsem.Graph, p *irsem.Payload, input, seed irsem.RatTensor, o Options) (*irgrad.Gradients[Err64], []irgrad.Param, int64, error) {
	return gradErr[binary64](g, p, input, seed, o)
}

func gradErr[F format](g *irsem.Graph, p *irsem.Payload, input, seed irsem.RatTensor, o Options) (*irgrad.Gradients[ErrOf[F]], []irgrad.Param, int64, error) {
	k, err := o.ulps()
	if err != nil {
		return nil, nil, 0, err
	}
	if g == nil {
		return nil, nil, 0, fmt.Errorf("fpbound: nil graph")
	}
	l, err := irgrad.LowerWith[ErrOf[F]](errRegistry[F](o.Profile), g, p, irgrad.LowerOptions{ConstParams: o.ConstParams})
	if err != nil {
		return nil, nil, 0, err
	}
	evalMu.Lock()
	defer evalMu.Unlock()
	curULPs.Store(int64(k))
	defer curULPs.Store(DefaultULPs)
	before := undecided.Load()
	gr, err := l.VJP(irgrad.PathTape, irsem.ConvertTensor[ErrOf[F]](input), irsem.ConvertTensor[ErrOf[F]](seed))
	und := undecided.Load() - before
	if err != nil {
		return nil, nil, und, err
	}
	return gr, l.Params, und, nil
}

// EncloseErr closes v (an Err or an Err64) into an Enclosure: its exact
// enclosure and bound, or an unbounded one, with the reason, when the
// evaluation that produced it met undecided comparisons (the runtime may
// have taken the other branch) or the bound is infinite. The Enclosure's
// Bound is then about evaluations in v's format.
func EncloseErr[F format](v ErrOf[F], undecidedCount int64) Enclosure {
	c := v.close()
	en := Enclosure{Exact: c.x, Bound: c.e}
	switch {
	case undecidedCount > 0:
		en.Bound = math.Inf(1)
		en.Reason = fmt.Sprintf("%d comparison(s) a registry rule branches on could not be decided: the runtime may take the other branch", undecidedCount)
	case math.IsInf(c.e, 1):
		en.Reason = "no finite bound: an operation may overflow, or a divisor, log or sqrt argument may reach its singularity"
	}
	return en
}

// Evaluate runs f — code that applies registry rules over Err or Err64
// (or both) on the calling goroutine only, such as a tape.Session[Err64]
// recording a forward pass and sweeping it backwards — with the library
// accuracy of o (o.ULPs in ulps of each value's own format), and returns
// the number of comparisons those rules could not decide. The theorem of
// the package doc covers every Err and Err64 value f computes, each for
// its format; when the count is positive the runtime may have taken
// another branch than the rules did, so EncloseErr(v, count) makes every
// such value unbounded. Evaluations are serialised (the count and the
// accuracy are package state, shared by both formats, read around one
// evaluation).
func Evaluate(o Options, f func() error) (int64, error) {
	k, err := o.ulps()
	if err != nil {
		return 0, err
	}
	evalMu.Lock()
	defer evalMu.Unlock()
	curULPs.Store(int64(k))
	defer curULPs.Store(DefaultULPs)
	before := undecided.Load()
	err = f()
	return undecided.Load() - before, err
}
