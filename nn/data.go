package nn

import (
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// Sample is one (input, target) pair.
type Sample[T any] struct {
	X, Y spec.Tensor[T]
}

// f64To rounds a float64 once into T through its exact rational value.
func f64To[T spec.Scalar[T]](f float64) T {
	var z T
	r, err := spec.RatFromFloat64(f)
	if err != nil {
		return z
	}
	return z.FromRat(r.Big())
}

// SquareGrid is the quickstart data set: the 5×5 grid on [−1,1]²
// (linspace −1, −0.5, 0, 0.5, 1; the first coordinate outer) with target
// 0.8·relu(x0+x1) − 0.4·relu(x1−x0) + 0.2 computed in float64 and rounded
// once into T.
func SquareGrid[T spec.Scalar[T]]() []Sample[T] {
	ls := []float64{-1, -0.5, 0, 0.5, 1}
	relu := func(v float64) float64 { return math.Max(v, 0) }
	var out []Sample[T]
	for _, a := range ls {
		for _, b := range ls {
			y := 0.8*relu(a+b) - 0.4*relu(b-a) + 0.2
			out = append(out, Sample[T]{
				X: spec.Vector(f64To[T](a), f64To[T](b)),
				Y: spec.Vector(f64To[T](y)),
			})
		}
	}
	return out
}

// HeldOut is the quickstart's held-out input [0.25, −0.75] with target 0.2.
func HeldOut[T spec.Scalar[T]]() Sample[T] {
	return Sample[T]{X: spec.Vector(f64To[T](0.25), f64To[T](-0.75)), Y: spec.Vector(f64To[T](0.2))}
}
