package spec

import (
	"github.com/tlcheck/tlcheck/limits"
)

// ratBits is the bit length of numerator plus denominator of x in lowest
// terms (Rat.BitLen, computed without allocating), except that 0 counts
// 0 bits: it is the zero value, which holds no storage.
func ratBits(x Rat) int {
	if x.IsZero() {
		return 0
	}
	return x.BitLen()
}

// checkRatBits enforces the rational bit-length budget (limits.RatBits)
// on a rule's result: over Rat (and duals of Rat) an element of more than
// limits.Current().RatBits bits is an error naming the element. Every
// registry rule's result passes through it (see guard), on every
// execution path, so a value that doubles in length per node — x⊙x
// nested 40 times on 1/3 — is refused after a few dozen nodes instead of
// running for hours. Other scalars have bounded size and pass unchecked.
func checkRatBits[T Scalar[T]](what string, ts ...Tensor[T]) error {
	var lim int
	for _, t := range ts {
		switch d := any(t.Data).(type) {
		case []Rat:
			if lim == 0 {
				lim = limits.Current().RatBits
			}
			for i, x := range d {
				if b := ratBits(x); b > lim {
					return ElemError(i, limits.Exceeded("rat-bits", int64(lim), "%s: a rational of %d bits", what, b))
				}
			}
		case []Dual[Rat]:
			if lim == 0 {
				lim = limits.Current().RatBits
			}
			for i, x := range d {
				if b := max(ratBits(x.Re), ratBits(x.Du)); b > lim {
					return ElemError(i, limits.Exceeded("rat-bits", int64(lim), "%s: a rational of %d bits", what, b))
				}
			}
		}
	}
	return nil
}

// RatBitsOf is the total bit length (numerator + denominator, summed over
// the elements) of a tensor over Rat or Dual[Rat], and 0 over every other
// scalar: the measure the evaluation budget limits.RatBitsTotal counts.
func RatBitsOf[T Scalar[T]](t Tensor[T]) int64 {
	var n int64
	switch d := any(t.Data).(type) {
	case []Rat:
		for _, x := range d {
			n += int64(ratBits(x))
		}
	case []Dual[Rat]:
		for _, x := range d {
			n += int64(ratBits(x.Re) + ratBits(x.Du))
		}
	}
	return n
}
