package obligations

// Sinc is (sinc a, sinc′(a)·a') over the Dual[Interval] it wraps (the
// registry's sinc primitive): the interval methods enclose sinc near its
// removable singularity at 0, where the quotient sin x / x cannot.
func (x DualInterval) Sinc() (DualInterval, error) {
	d, err := x.d.Sinc()
	return wrapErr(d, x.tr, err)
}

// SincDeriv is (sinc′ a, sinc″(a)·a').
func (x DualInterval) SincDeriv() (DualInterval, error) {
	d, err := x.d.SincDeriv()
	return wrapErr(d, x.tr, err)
}
