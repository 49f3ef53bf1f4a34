package fpbound

import (
	"errors"
	"fmt"
	"sync"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

var _ spec.Scalar[Ball] = Ball{}
var _ spec.Encloser[Ball] = Ball{}

// The ball evaluation's precisions: it starts at minBallPrec bits and
// doubles, up to maxBallPrec, while the output's radii shrink.
const (
	minBallPrec = 128
	maxBallPrec = 1024
)

// ballWork caps the ball evaluation: the graph's declared work times
// (precision/64)² (a big.Float multiplication's cost grows about as the
// square of its words) stays below it. Measured on two shared cores, one
// unit costs about 1 µs: the 12-block GPT-2 stack (work 6·10⁴) takes 1.2 s
// at 128 and 256 bits together, and the cap about 15 s. A graph above it
// at 128 bits keeps the interval centre.
var ballWork int64 = 1 << 24 // a variable only so that tests can lower it

// ballMu serialises ball evaluations: the precision and the fallback
// counts are package state read around one evaluation.
var ballMu sync.Mutex

// Centre is the ball evaluation of a graph (doc.go, "The ball centre").
type Centre struct {
	// Nodes holds, per node (id order) and element (row-major), a float64
	// interval that contains the exact real value of the node's registry
	// formula on the exact input and payload.
	Nodes [][]spec.Interval
	// Prec is the midpoint precision of the evaluation Nodes comes from.
	Prec uint
	// Fallback names the functions some element evaluated over float64
	// intervals (spec.Interval's trusted boundary), sorted; empty when
	// every operation had a high-precision enclosure.
	Fallback []string
}

// BallCentre encloses the exact value of every node of g by a
// high-precision ball evaluation: the registry's forward rules run over
// Ball (irsem.DenoteAll), at 128 bits, then 256, … up to 1024, while the
// output's widest relative radius at least halves and some output element
// is wider than a few float64 ulps; the enclosures are the tightest
// evaluation's. A malformed graph, payload or input, or a failed
// evaluation (a raw log whose argument may be ≤ 0), is an error; a
// resource limit is a limits error.
func BallCentre(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor) (*Centre, error) {
	if g == nil {
		return nil, fmt.Errorf("fpbound: nil graph")
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	work := prefixWork(g, len(g.Nodes)-1)
	var best *Centre
	bestRad := inf
	for prec := uint(minBallPrec); prec <= maxBallPrec; prec *= 2 {
		q := int64(prec / 64)
		if work > ballWork/(q*q) {
			if best == nil {
				return nil, fmt.Errorf("fpbound: work %d×(%d/64)² exceeds %d: %w", work, prec, int64(ballWork), errBallWork)
			}
			break
		}
		c, rad, tight, err := ballEval(g, p, input, prec)
		if err != nil {
			if best != nil && !limits.IsLimit(err) {
				break
			}
			return nil, err
		}
		if best != nil && !(rad <= bestRad/2) {
			break
		}
		best, bestRad = c, rad
		if tight {
			break
		}
	}
	return best, nil
}

// ballEval runs one ball evaluation at prec bits: the enclosures, the
// output's widest radius relative to its midpoint (absolute where the
// midpoint is below 1; +∞ for an unbounded element), and whether every
// output element is at most two float64 ulps wide.
func ballEval(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, prec uint) (*Centre, float64, bool, error) {
	ballMu.Lock()
	defer ballMu.Unlock()
	ballPrec.Store(uint32(prec))
	defer ballPrec.Store(defaultBallPrec)
	clearFallbacks()
	all, err := irsem.DenoteAll(g, p, irsem.ConvertTensor[Ball](input))
	if err != nil {
		return nil, 0, false, err
	}
	c := &Centre{Nodes: make([][]spec.Interval, len(all)), Prec: prec, Fallback: fallbackNames()}
	for i, t := range all {
		c.Nodes[i] = make([]spec.Interval, len(t.Data))
		for m, v := range t.Data {
			c.Nodes[i][m] = v.Interval()
		}
	}
	rad, tight := 0.0, true
	for m, v := range all[g.OutputID].Data {
		rad = max(rad, divUp(v.r, max(1, magDown(v.mid()))))
		iv := c.Nodes[g.OutputID][m]
		tight = tight && iv.Hi <= up(up(iv.Lo))
	}
	return c, rad, tight, nil
}

// ratExact reports that every step of every application is exact over
// spec.Rat (the registry's OpInfo.Exact), where the exact centre is the
// rational value and no ball evaluation is needed.
func ratExact(apps []irsem.Application) bool {
	for i := range apps {
		for _, s := range apps[i].Steps {
			if info, err := spec.Info(s.Prim); err != nil || !info.Exact {
				return false
			}
		}
	}
	return true
}

// errBallWork is the ball evaluation's own work cap: exactEnclosures then
// keeps the interval enclosure; it is not a resource limit of the user's.
var errBallWork = errors.New("the ball evaluation's work cap")
