package refine

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/spec"
)

// FlipBit is a provider with a planted fault, for testing that refinement
// checks (and a release gate) catch a wrong provider: it runs Inner and,
// for op Op only, flips bit Bit of the encoding of output element
// Element mod the output length (outputs with no element are left alone).
// It has Inner's name, device and op set, so it binds wherever Inner
// would.
//
// Flipping significand bit k of a finite value changes it by 2^k units in
// the last place: bit 0 is the one-ulp error that a fixed-left capsule's
// bit-exact check must catch; a bit well above log2 of n·Σ|terms|/|s|
// (for example 16 for k ≤ 16 products of moderately cancelling terms)
// exceeds the γ_n bound of an implementation-defined capsule. On ±∞ a
// significand flip gives a NaN, which the class rules catch.
type FlipBit struct {
	Inner   backend.Provider
	Op      string
	Element int
	Bit     uint
}

// NewFlipBit returns the faulty wrapper around inner. It rejects a nil
// provider, a negative element and a bit above 31.
func NewFlipBit(inner backend.Provider, op string, element int, bit uint) (*FlipBit, error) {
	switch {
	case inner == nil:
		return nil, fmt.Errorf("refine: FlipBit needs a provider")
	case element < 0:
		return nil, fmt.Errorf("refine: FlipBit element %d is negative", element)
	case bit > 31:
		return nil, fmt.Errorf("refine: FlipBit bit %d is not a bit of a binary32", bit)
	}
	return &FlipBit{Inner: inner, Op: op, Element: element, Bit: bit}, nil
}

// Name is the inner provider's name.
func (f *FlipBit) Name() string { return f.Inner.Name() }

// Device is the inner provider's device.
func (f *FlipBit) Device() backend.Device { return f.Inner.Device() }

// Ops is the inner provider's op set.
func (f *FlipBit) Ops() []string { return f.Inner.Ops() }

// Execute runs the inner provider and plants the fault.
func (f *FlipBit) Execute(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	y, err := f.Inner.Execute(op, a, xs)
	if err != nil || op != f.Op || len(y.Data) == 0 {
		return y, err
	}
	y = y.Clone()
	i := f.Element % len(y.Data)
	y.Data[i] = spec.F32(math.Float32frombits(math.Float32bits(float32(y.Data[i])) ^ 1<<f.Bit))
	return y, nil
}
