package nn

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// XavierUniform fills a [fanOut, fanIn] weight from the seed seedW:
// L = sqrt(6/(fanIn+fanOut)); for flat row-major index idx,
// key = splitmix64(seedW), u = (splitmix64(key+idx) mod 2^32)/2^32, and
// the value −L + u·2L is computed in float64 and then rounded once into T.
func XavierUniform[T spec.Scalar[T]](seedW uint64, shape spec.Shape, fanIn, fanOut int) (spec.Tensor[T], error) {
	if fanIn+fanOut <= 0 {
		return spec.Tensor[T]{}, fmt.Errorf("xavier: fanIn+fanOut must be positive, got %d", fanIn+fanOut)
	}
	t, err := spec.Zeros[T](shape)
	if err != nil {
		return t, err
	}
	l := math.Sqrt(6 / float64(fanIn+fanOut))
	for idx := range t.Data {
		u := float64(spec.UniformBits(seedW, idx)) / 4294967296.0
		v, err := spec.RatFromFloat64(-l + u*2*l)
		if err != nil {
			return t, err
		}
		t.Data[idx] = t.Data[idx].FromRat(v.Big())
	}
	return t, nil
}
