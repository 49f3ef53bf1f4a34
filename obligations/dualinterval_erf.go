package obligations

// Erf is (erf a, erf′(a)·a') over the Dual[Interval] it wraps (the
// registry's erf primitive, for ONNX's Erf and exact Gelu).
func (x DualInterval) Erf() (DualInterval, error) {
	d, err := x.d.Erf()
	return wrapErr(d, x.tr, err)
}

// ErfDeriv is (erf′(a), −2a·erf′(a)·a'), erf′(x) = (2/√π)·e^(−x²).
func (x DualInterval) ErfDeriv() (DualInterval, error) {
	d, err := x.d.ErfDeriv()
	return wrapErr(d, x.tr, err)
}
