package fpbound

import "github.com/tlcheck/tlcheck/spec"

// Join is the hull of a and b (spec.Encloser): the max-pool rules, whose
// primitives state spec.OpInfo.HullsUndecided, return the join of every
// outcome an undecided order of a window could give instead of refusing
// (doc.go, "Max-pool ties on boxes"). A join is a new value, not a copy
// of a sum, so it carries no id.
func (a adj) Join(b adj) adj { return adj{iv: spec.Hull(a.iv, b.iv)} }

// watchesUndecided reports whether adj must watch a rule of primitive pr
// for what voids the mean value argument (adj's doc): a primitive that is
// not Smooth, unless it states HullsUndecided, whose rules over adj (an
// Encloser) take the hull of every outcome an undecided order could give
// and whose function is continuous.
func watchesUndecided(pr *spec.OpInfo) bool {
	return !pr.Smooth && (!pr.HullsUndecided || noHullsUndecided)
}

// noHullsUndecided (tests only) ignores HullsUndecided, as before unet36.
var noHullsUndecided bool
