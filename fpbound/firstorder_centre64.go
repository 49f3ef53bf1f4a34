package fpbound

import (
	"math"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// centre64 is the float64 centre's state (doc.go, "The exact
// enclosure"): ŷ₆₄, the registry's formulas evaluated over spec.F64 (one
// binary64 evaluation of the model M1–M3), and per node the binary64
// local errors ē⁶⁴ and first-order bounds G, computed by the same sweeps
// as the binary32 ones (alt holds them while the sweeps hold the
// binary32 ones, and the other way round in gmode).
type centre64 struct {
	p      *irsem.Payload
	y      []spec.Tensor[spec.F64] // nil until the first finite G
	alt    []altNode
	nofuse []spec.Tensor[ErrOf[binary64]]
	reg    *spec.Registry[ErrOf[binary64]]
	dead   bool // an induction step failed: no G from here on
	output bool // every output element's X is ŷ₆₄ ± G (∩ the interval's)
}

// altNode is the binary64 side of one node's sweep state (foNode's
// local, fo, foOK, lvl, fallback).
type altNode struct {
	local, fo []float64
	foOK      bool
	lvl       int
	fallback  bool
}

// centre64On (tests turn it off) enables the float64 centre;
// centre64Plant (tests only) shifts ŷ₆₄ by that multiple of G before the
// enclosure is formed — a planted error of the centre that the
// containment tests must catch; centre64Seen (tests only) receives every
// node's state at the end of the first-order pass.
var (
	centre64On    = true
	centre64Plant float64
	centre64Seen  func(nodes []foNode)
)

// newCentre64 is the float64 centre's state before the first node; ŷ₆₄
// is evaluated when the first G is finite.
func newCentre64(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor) *centre64 {
	if !centre64On {
		return nil
	}
	return &centre64{
		p:      p,
		alt:    make([]altNode, len(g.Nodes)),
		nofuse: make([]spec.Tensor[ErrOf[binary64]], len(g.Nodes)),
		reg:    spec.Default[ErrOf[binary64]](),
	}
}

// local64 computes node j's binary64 local error ē⁶⁴_j over Err64 on its
// parents' boxes, unfused (ŷ₆₄ rounds every node's value), with the
// library's ulps at least DefaultULPs (Go's math package, the F64
// evaluation's library, is within 2.25 binary64 ulps: doc.go, M3). An
// error reaching j in either format marks j (nd.err), so every sweep
// visits it. A failure (an undecided comparison, an error) ends the
// float64 centre at j: no later G is computed, and no later box needs to
// hold binary64 values.
func (r *foRun[F]) local64(j int) {
	c := r.c64
	if c == nil || c.dead {
		return
	}
	k := curULPs.Load()
	curULPs.Store(max(k, DefaultULPs))
	before := undecided.Load()
	loc, err := localErr[binary64](r.g, j, r.apps, r.nodes, c.nofuse, r.input, c.reg)
	curULPs.Store(k)
	if err != nil || undecided.Load() != before {
		undecided.Store(before)
		c.dead = true
		return
	}
	var local []float64
	for m, v := range loc.Data {
		if e := v.close().e; e != 0 {
			if local == nil {
				local = make([]float64, len(loc.Data))
			}
			local[m] = e
		}
	}
	c.alt[j].local = local
	nd := &r.nodes[j]
	nd.err = nd.err || local != nil
}

// swapAlt exchanges the binary32 and binary64 sweep states of nodes 0…j.
func (r *foRun[F]) swapAlt(j int) {
	for k := 0; k <= j; k++ {
		nd, a := &r.nodes[k], &r.c64.alt[k]
		nd.local, a.local = a.local, nd.local
		nd.fo, a.fo = a.fo, nd.fo
		nd.foOK, a.foOK = a.foOK, nd.foOK
		nd.lvl, a.lvl = a.lvl, nd.lvl
		nd.fallback, a.fallback = a.fallback, nd.fallback
	}
}

// centre64 runs node j's sweeps again with the binary64 local errors
// (G_j: the same adjoints, the same choice of sweep, the budget's state
// restored after, so the binary32 sweeps decide as before), then
// narrows X_j to ŷ₆₄ ± G_j and sets node j's box to the hull of the
// binary32 box (B32: as before, narrowed by the new X_j) and the binary64
// one (B64: f_j(parents' boxes) ± ē⁶⁴_j ∩ X_j ± G_j), which holds every
// partially perturbed value of either format (doc.go, "The exact
// enclosure").
func (r *foRun[F]) centre64(j int) error {
	c := r.c64
	if c == nil || c.dead {
		return nil
	}
	nd := &r.nodes[j]
	isOut := j == r.g.OutputID
	if !nd.err {
		// No local error of either format reaches j: every evaluation
		// holds the exact value, which the box holds.
		if isOut {
			c.output = false
		}
		return nil
	}
	spent, cutSpent, swept, lastFull := r.spent, r.cutSpent, r.swept, r.lastFull
	r.swapAlt(j)
	r.gmode = true
	err := r.sweeps(j)
	r.gmode = false
	r.swapAlt(j)
	r.spent, r.cutSpent, r.swept, r.lastFull = spent, cutSpent, swept, lastFull
	if err != nil {
		return err
	}
	gs, loc := c.alt[j].fo, c.alt[j].local
	if !anyFinite(gs) {
		if !anyFinite(nd.fo) {
			// The sweeps do not reach node j in either format (the
			// budget; planes too large): give the centre up here, its
			// cost (an evaluation, a local error and a sweep per node)
			// buys nothing where no sweep runs. This decides only
			// where the centre is tried, not soundness: node j's box
			// stays the binary32 one, and nothing reads a later G.
			c.dead, c.output = true, false
			return nil
		}
	} else if c.y == nil {
		// ŷ₆₄, once a G is finite.
		y, err := irsem.DenoteAll(r.g, c.p, irsem.ConvertTensor[spec.F64](r.input))
		if err != nil || len(y) != len(r.g.Nodes) {
			c.dead, c.output = true, false
			return nil
		}
		c.y = y
	}
	var fwd []spec.Interval
	if len(nd.steps) > 0 && len(nd.steps[len(nd.steps)-1].Data) == len(nd.box) {
		last := nd.steps[len(nd.steps)-1].Data
		fwd = make([]spec.Interval, len(nd.box))
		for m := range fwd {
			el := 0.0
			if loc != nil {
				el = loc[m]
			}
			fwd[m] = widen(last[m].iv, el)
		}
	}
	all := true
	var y []spec.F64
	if c.y != nil {
		y = c.y[j].Data
	}
	b64s := make([]spec.Interval, len(nd.box))
	for m := range nd.box {
		g := inf
		if gs != nil {
			g = gs[m]
		}
		b64 := spec.Interval{Lo: math.Inf(-1), Hi: inf}
		if fwd != nil {
			b64 = fwd[m]
		}
		yv := math.NaN()
		if y != nil {
			yv = float64(y[m])
		}
		if !math.IsInf(g, 1) && !math.IsNaN(yv) && !math.IsInf(yv, 0) {
			if centre64Plant != 0 {
				yv += centre64Plant * g
			}
			if x, ok := intersect(nd.x[m], widen(spec.Interval{Lo: yv, Hi: yv}, g)); ok {
				nd.x[m] = x
			}
			if b, ok := intersect(b64, widen(nd.x[m], g)); ok {
				b64 = b
			}
		} else {
			all = false
			if fwd == nil {
				// Neither (b) nor (c) holds node j's binary64 values:
				// the induction ends at j, whose box then needs to
				// hold only the binary32 values.
				c.dead = true
			}
		}
		b64s[m] = b64
	}
	for m := range nd.box {
		// B32: the binary32 values lie within E_j (≤ F_j) of x_j ∈ X_j.
		b32 := nd.box[m]
		if b, ok := intersect(b32, widen(nd.x[m], nd.e[m])); ok {
			b32 = b
		}
		if c.dead {
			nd.box[m] = b32
			continue
		}
		b64 := b64s[m]
		nd.box[m] = spec.Interval{Lo: min(b32.Lo, b64.Lo), Hi: max(b32.Hi, b64.Hi)}
	}
	if c.dead {
		// The boxes already set stay sound (each holds both formats'
		// values); from here on only the binary32 values matter.
		c.output = false
		return nil
	}
	if isOut {
		c.output = all
		for m := range r.out {
			r.out[m].x = nd.x[m]
		}
	}
	return nil
}

// anyFinite reports whether some bound of bs is finite.
func anyFinite(bs []float64) bool {
	for _, b := range bs {
		if !math.IsInf(b, 1) {
			return true
		}
	}
	return false
}
