package rapidtests

import "github.com/tlcheck/tlcheck/spec"

// RoundTo is spec.Interval's enclosure of the casts round_f16, round_bf16
// and round_f32 (no fault planted in it: the planted faults are in the
// ring operations and abs).
func (x plantedIv[F]) RoundTo(f spec.FloatFormat) (plantedIv[F], error) {
	return pvErr[F](x.v.RoundTo(f))
}
