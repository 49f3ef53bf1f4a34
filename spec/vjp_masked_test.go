package spec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// maskedCase is one heavy primitive applied to random rational operands.
type maskedCase struct {
	name  string
	op    string
	attrs *Attrs
	xs    []Shape
}

func maskedCases() []maskedCase {
	conv := &Window{Kernel: []int{2, 2}, Stride: []int{1, 2}, Pads: []int{1, 0, 1, 1}, Dilation: []int{1, 1}, Groups: 2}
	convT := &Window{Kernel: []int{3}, Stride: []int{2}, Pads: []int{1, 0}, Dilation: []int{1}, OutputPadding: []int{1}, Groups: 1}
	return []maskedCase{
		{name: "linear", op: "linear", xs: []Shape{{3, 4}, {5, 4}, {5}}},
		{name: "linear one row", op: "linear", xs: []Shape{{4}, {5, 4}, {5}}},
		{name: "matmul", op: "matmul", xs: []Shape{{3, 4}, {4, 2}}},
		{name: "matmul batched", op: "matmul", xs: []Shape{{2, 3, 4}, {4, 2}}},
		{name: "conv with bias", op: "conv", attrs: &Attrs{Window: conv}, xs: []Shape{{1, 4, 3, 4}, {2, 2, 2, 2}, {2}}},
		{name: "conv without bias", op: "conv", attrs: &Attrs{Window: conv}, xs: []Shape{{1, 4, 3, 4}, {2, 2, 2, 2}}},
		{name: "conv_transpose", op: "conv_transpose", attrs: &Attrs{Window: convT}, xs: []Shape{{1, 2}, {1, 1, 3}, {1}}},
	}
}

// maskedMismatch runs p's VJPNeed under every mask on the case's operands
// (converted from the rationals xs, dy) and returns the first difference
// from VJP on a needed slot, or a non-nil contribution on an unneeded one
// ("" when none).
func maskedMismatch[T Scalar[T]](p *Prim[T], a *Attrs, rxs []Tensor[Rat], rdy Tensor[Rat]) (string, error) {
	conv := func(x Tensor[Rat]) Tensor[T] {
		var z T
		return Convert(x, func(v Rat) T { return z.FromRat(v.Big()) })
	}
	xs := make([]Tensor[T], len(rxs))
	for i, x := range rxs {
		xs[i] = conv(x)
	}
	y, err := p.Forward(a, xs)
	if err != nil {
		return "", err
	}
	dy := conv(rdy)
	full, err := p.VJP(a, xs, y, dy)
	if err != nil {
		return "", err
	}
	for m := 0; m < 1<<len(xs); m++ {
		need := make([]bool, len(xs))
		for t := range need {
			need[t] = m>>t&1 == 1
		}
		got, err := p.VJPNeed(a, xs, y, dy, need)
		if err != nil {
			return "", err
		}
		if len(got) != len(full) {
			return fmt.Sprintf("mask %v: %d contributions, VJP %d", need, len(got), len(full)), nil
		}
		for t := range got {
			switch {
			case !need[t] && got[t].Data != nil:
				return fmt.Sprintf("mask %v: parent %d computed", need, t), nil
			case need[t] && len(got[t].Data) != len(full[t].Data):
				return fmt.Sprintf("mask %v: parent %d has %d values, VJP %d", need, t, len(got[t].Data), len(full[t].Data)), nil
			case need[t]:
				for i := range got[t].Data {
					if !got[t].Data[i].Same(full[t].Data[i]) {
						return fmt.Sprintf("mask %v: parent %d element %d: %v, VJP %v", need, t, i, got[t].Data[i], full[t].Data[i]), nil
					}
				}
			}
		}
	}
	return "", nil
}

func maskedRun[T Scalar[T]](t *testing.T, c maskedCase, rxs []Tensor[Rat], rdy Tensor[Rat]) {
	t.Helper()
	p, err := Default[T]().Lookup(c.op)
	if err != nil {
		t.Fatal(err)
	}
	if p.VJPMasked == nil {
		t.Fatalf("%s: no VJPMasked", c.op)
	}
	var z T
	if msg, err := maskedMismatch(p, c.attrs, rxs, rdy); err != nil || msg != "" {
		t.Errorf("%s over %s: %s %v", c.name, z.Kind(), msg, err)
	}
}

// TestVJPMaskedEqualsVJP: the masked VJP of every heavy product returns,
// under every mask, exactly VJP's contribution (Same, element by
// element) on the needed parents and nothing on the others, over Rat,
// F64, F32 and Interval; and a masked rule that returns the weight's
// contribution in place of the input's is caught.
func TestVJPMaskedEqualsVJP(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 24))
	for _, c := range maskedCases() {
		rxs := make([]Tensor[Rat], len(c.xs))
		for i, s := range c.xs {
			rxs[i] = randTensor(rng, s, false)
		}
		p, err := Default[Rat]().Lookup(c.op)
		if err != nil {
			t.Fatal(err)
		}
		y, err := p.Forward(c.attrs, rxs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rdy := randTensor(rng, y.Shape, false)
		maskedRun[Rat](t, c, rxs, rdy)
		maskedRun[F64](t, c, rxs, rdy)
		maskedRun[F32](t, c, rxs, rdy)
		maskedRun[Interval](t, c, rxs, rdy)

		// The planted fault: the weight's contribution as the input's.
		bad := *p
		bad.VJPMasked = func(a *Attrs, xs []Tensor[Rat], y, dy Tensor[Rat], need []bool) ([]Tensor[Rat], error) {
			dxs, err := p.VJP(a, xs, y, dy)
			if err != nil {
				return nil, err
			}
			if len(dxs[1].Data) == len(dxs[0].Data) {
				dxs[0] = dxs[1]
			} else {
				dxs[0].Data = dxs[0].Data[:len(dxs[0].Data)-1]
			}
			return masked(dxs, need), nil
		}
		if msg, err := maskedMismatch(&bad, c.attrs, rxs, rdy); err != nil || msg == "" {
			t.Errorf("%s: the planted fault was not caught (%v)", c.name, err)
		}
	}
}
