package fpbound

import (
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// Sign floors of the boxes (vitgrad38; the package doc, "Sign floors of
// the boxes"): a node whose local value over Err records a lower bound
// lb of every computed value (a square, a product of non-negative
// factors, a sum of non-negative terms, a root; "Squares and lower
// bounds") and whose exact value over the parents' boxes lies at or
// above X.Lo holds, in every partially perturbed evaluation, a value at
// or above min(X.Lo, lb). The forward enclosure f_j(boxes) ± ē_j loses
// that fact: it widens the square's range [0, H] by ē_j below 0, a
// mean of such boxes inherits it, and σ² + ε then reaches below 0 and
// √ has no bound.

// signFloors turns the sign floors on; tests turn them off to compare
// with the boxes before them.
var signFloors = true

// maxLowerBounds turns on Max's use of lower bounds (err.go, Max);
// tests turn it off to compare with the bound before it.
var maxLowerBounds = true

// recordFloor keeps node j's sign floors from its local values loc (the
// local error's evaluation over Err on the parents' boxes, or the fused
// pending sums): element m's floor is min(X.Lo, lb) where the value
// records lb (finite bound), −∞ otherwise; nothing is kept when no
// element has a floor.
func (r *foRun[F]) recordFloor(j int, loc spec.Tensor[ErrOf[F]]) {
	if !signFloors {
		return
	}
	var fl []float64
	for m, v := range loc.Data {
		c := v.close()
		if !c.hasLB || math.IsInf(c.e, 1) || math.IsNaN(c.e) {
			continue
		}
		f := min(c.x.Lo, c.lb)
		if math.IsNaN(f) || math.IsInf(f, -1) {
			continue
		}
		if fl == nil {
			fl = make([]float64, len(loc.Data))
			for i := range fl {
				fl[i] = math.Inf(-1)
			}
		}
		fl[m] = f
	}
	if fl == nil {
		return
	}
	if r.floors == nil {
		r.floors = make([][]float64, len(r.nodes))
	}
	r.floors[j] = fl
}

// applyFloor raises the lower end of node j's box to its sign floor
// where that is above it (and not above the box's upper end, which a
// sound floor never is). A cast element under the identity treatment
// (round_cast.go) keeps its box: its local value is not the cast's.
func (r *foRun[F]) applyFloor(j int) {
	if r.floors == nil || r.floors[j] == nil {
		return
	}
	nd := &r.nodes[j]
	for m, f := range r.floors[j] {
		if nd.pass != nil && nd.pass[m] {
			continue
		}
		if b := nd.box[m]; f > b.Lo && f <= b.Hi {
			nd.box[m].Lo = f
		}
	}
}
