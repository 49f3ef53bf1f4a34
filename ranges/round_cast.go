package ranges

import "github.com/tlcheck/tlcheck/spec"

// RoundTo encloses round_T(a) for a ∈ x (the registry's casts round_f16,
// round_bf16, round_f32): round_T is monotone, so spec.Interval's
// [round_T(lo), round_T(hi)] encloses it, and its endpoints are binary32
// values already (T's values are); a box reaching T's overflow threshold is
// refused (IEEE gives ±∞ there).
func (x Interval32) RoundTo(f spec.FloatFormat) (Interval32, error) {
	return x.elementary(func(v spec.Interval) (spec.Interval, error) { return v.RoundTo(f) })
}

// RoundTo encloses round_T(a).
func (x scalar32) RoundTo(f spec.FloatFormat) (scalar32, error) {
	r, err := x.iv.RoundTo(f)
	return x.ret(r, err)
}
