package spec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// checkDiagonalFact compares OpInfo.Elementwise with p's VJP over F64 on
// random parents of shape sh: for every one-hot cotangent e_m, every
// parent's contribution must be 0 off element m (the Jacobian is
// diagonal), and the contributions of the cotangent of ones must equal
// the one-hot runs' element m, element for element (the diagonal that a
// consumer reads from one run). A primitive whose rules fail on the draw
// (a domain or an attribute the draw does not meet) is reported by ok =
// false, not as a mismatch.
func checkDiagonalFact(p *Prim[F64], sh Shape, rng *rand.Rand) (ok bool, err error) {
	n := sh.Size()
	xs := make([]Tensor[F64], p.MinArity)
	for t := range xs {
		xs[t] = zerosOf[F64](sh)
		for i := range xs[t].Data {
			// Positive and away from 0 and 1: in every Domain, off the
			// kinks of relu, abs, sign, and off the ties of max and min.
			xs[t].Data[i] = F64(0.3 + 1.6*rng.Float64())
		}
	}
	a := &Attrs{}
	y, err := p.Forward(a, xs)
	if err != nil || !y.Shape.Equal(sh) {
		return false, nil
	}
	ones := zerosOf[F64](sh)
	for i := range ones.Data {
		ones.Data[i] = 1
	}
	all, err := p.VJP(a, xs, y, ones)
	if err != nil {
		return false, nil
	}
	for m := 0; m < n; m++ {
		dy := zerosOf[F64](sh)
		dy.Data[m] = 1
		dxs, err := p.VJP(a, xs, y, dy)
		if err != nil {
			return false, nil
		}
		for t := range dxs {
			if len(dxs[t].Data) != n {
				return true, fmt.Errorf("%s: parent %d's contribution has %d elements, the output %d", p.Name, t, len(dxs[t].Data), n)
			}
			for i, v := range dxs[t].Data {
				if i != m && v != 0 {
					return true, fmt.Errorf("%s: ∂y[%d]/∂x%d[%d] = %v ≠ 0 by VJP, 0 by Elementwise", p.Name, m, t, i, v)
				}
			}
			if got := all[t].Data[m]; got != dxs[t].Data[m] {
				return true, fmt.Errorf("%s: the ones cotangent gives %v at element %d of parent %d, the one-hot run %v", p.Name, got, m, t, dxs[t].Data[m])
			}
		}
	}
	return true, nil
}

// TestElementwiseDiagonalVJP checks every primitive that states
// OpInfo.Elementwise against its VJP rule on random inputs (two shapes),
// that the fact is set on every primitive built from a scalar rule
// (Unary, Binary) and on no other, and that the check catches a planted
// fault: a primitive whose Jacobian is not diagonal (softmax; mul with a VJP that
// moves each contribution one element on) stated Elementwise.
func TestElementwiseDiagonalVJP(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 22))
	reg := Default[F64]()
	checked := 0
	for _, name := range reg.Names() {
		p, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Elementwise != (p.Unary != nil || p.Binary != nil) {
			t.Errorf("%s: Elementwise %t with scalar rules unary %t binary %t", name, p.Elementwise, p.Unary != nil, p.Binary != nil)
		}
		if !p.Elementwise {
			continue
		}
		for _, sh := range []Shape{{2, 3}, {5}} {
			ok, err := checkDiagonalFact(p, sh, rng)
			if err != nil {
				t.Error(err)
			}
			if ok && len(sh) == 2 {
				checked++
			}
		}
	}
	t.Logf("%d elementwise primitives checked", checked)
	if checked < 20 {
		t.Fatalf("only %d elementwise primitives checked", checked)
	}
	sm, err := reg.Lookup("softmax")
	if err != nil {
		t.Fatal(err)
	}
	bad := *sm
	bad.OpInfo = new(OpInfo)
	*bad.OpInfo = *sm.OpInfo
	bad.Elementwise = true
	if ok, err := checkDiagonalFact(&bad, Shape{2, 3}, rng); !ok || err == nil {
		t.Errorf("softmax stated Elementwise passed the check (ran %t)", ok)
	}
	mul, err := reg.Lookup("mul")
	if err != nil {
		t.Fatal(err)
	}
	shift := *mul
	shift.VJP = func(a *Attrs, xs []Tensor[F64], y, dy Tensor[F64]) ([]Tensor[F64], error) {
		dxs, err := mul.VJP(a, xs, y, dy)
		if err != nil {
			return nil, err
		}
		for _, d := range dxs {
			last := d.Data[len(d.Data)-1]
			copy(d.Data[1:], d.Data[:len(d.Data)-1])
			d.Data[0] = last
		}
		return dxs, nil
	}
	if ok, err := checkDiagonalFact(&shift, Shape{2, 3}, rng); !ok || err == nil {
		t.Errorf("a mul whose VJP moves each contribution one on passed the check (ran %t)", ok)
	}
}
