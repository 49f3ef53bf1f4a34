package ranges

import "github.com/tlcheck/tlcheck/spec"

// Erf encloses erf a for a ∈ x, within [−1, 1] (the registry's erf
// primitive: spec.Interval's enclosure, rounded outward to binary32).
func (x Interval32) Erf() (Interval32, error) {
	return x.elementary((spec.Interval).Erf)
}

// ErfDeriv encloses erf′(a) = (2/√π)·e^(−a²) for a ∈ x.
func (x Interval32) ErfDeriv() (Interval32, error) {
	return x.elementary((spec.Interval).ErfDeriv)
}

// Erf encloses erf a.
func (x scalar32) Erf() (scalar32, error) { r, err := x.iv.Erf(); return x.ret(r, err) }

// ErfDeriv encloses erf′(a).
func (x scalar32) ErfDeriv() (scalar32, error) { r, err := x.iv.ErfDeriv(); return x.ret(r, err) }
