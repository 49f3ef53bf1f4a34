package fpbound

// Erf and ErfDeriv make the first-order sweeps' interval scalar run the
// erf primitive (ONNX's Erf, exact GELU) as spec.Interval does: erf is
// increasing, so its enclosure is the image of the endpoints, each
// enclosed by spec.Interval's trusted boundary; the derivative
// (2/√π)·e^(−x²) is spec.Interval's composition. Without them every graph
// with an erf had no first-order bound (forward or gradient).
func (a adj) Erf() (adj, error) { r, err := a.iv.Erf(); return adj{iv: r}, err }

// ErfDeriv encloses erf′(X) = (2/√π)·e^(−X²) (see Erf).
func (a adj) ErfDeriv() (adj, error) { r, err := a.iv.ErfDeriv(); return adj{iv: r}, err }
