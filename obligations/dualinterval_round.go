package obligations

import "github.com/tlcheck/tlcheck/spec"

// RoundTo is (round_T(a), 0) over the Dual[Interval] it wraps (the
// registry's casts round_f16, round_bf16, round_f32, whose derivative is
// 0: see spec's rounding primitives). The primal is spec.Interval's
// enclosure [round_T(lo), round_T(hi)].
func (x DualInterval) RoundTo(f spec.FloatFormat) (DualInterval, error) {
	d, err := x.d.RoundTo(f)
	return wrapErr(d, x.tr, err)
}

// RoundTo is T's own (spec.RoundOf), for the casts, whose rules call it
// through an interface check that a scalar without it fails loudly.
func (x Plain[T]) RoundTo(f spec.FloatFormat) (Plain[T], error) {
	return x.lift(func() (T, error) { return spec.RoundOf(x.V, f) })
}
