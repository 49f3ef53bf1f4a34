package gorgonia

import (
	"testing"
)

// TestCases runs every case on both machines: no finding (every gradient
// equals the exact one under gorgonia's declared relu′(0) = 1, bit for
// bit), and the relu cases note the convention at their kinks.
func TestCases(t *testing.T) {
	notes := map[string]int{}
	for _, c := range Cases() {
		res, err := Check(c)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, f := range res.Findings {
			t.Errorf("finding: %v", f)
		}
		notes[c.Name] = len(res.Notes)
	}
	// By hand: relu's input vecA has one zero (element 2), so each machine
	// notes one element; in dag_shared_leaf x⊙w is 0 at elements 2 (x = 0)
	// and 3 (w = 0), each touching one gradient element of x and one of
	// w, of which those with a nonzero partner differ: ∂/∂x[2] (w = 5/4)
	// and ∂/∂w[3] (x = 3): two per machine.
	if notes["relu"] != 2 || notes["dag_shared_leaf"] != 4 {
		t.Errorf("convention notes %v", notes)
	}
}

// TestPlantedFault: a gradient that differs from the exact one by one
// float64 ulp is reported (the checker is not vacuous).
func TestPlantedFault(t *testing.T) {
	c := Cases()[0] // neg
	c.Exact = func(s *sessionT, xs []refT) (refT, error) {
		y, err := s.Apply("neg", nil, xs[0])
		if err != nil {
			return y, err
		}
		return s.Apply("scale", scaleAttrs(1+1.0/(1<<52)), y)
	}
	res, err := Check(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 2*len(c.Xs[0].Data) { // the cotangent has no zero: every element, on both machines
		t.Errorf("findings %v", res.Findings)
	}
}
