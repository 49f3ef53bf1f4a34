package spec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// linearInCases are the parent shapes each primitive that states
// OpInfo.LinearIn is checked on (two rows, so the block structure is
// exercised); a primitive that states it without a case fails the test.
var linearInCases = map[string][][]Shape{
	"linear": {{{2, 3}, {4, 3}, {4}}},
	// x batched, x 1-D, M 1-D (inner × 1), and a square M (a transposed
	// read passes the shapes).
	"matmul": {{{2, 3}, {3, 4}}, {{2, 2, 3}, {3, 4}}, {{3}, {3, 2}}, {{2, 3}, {3}}, {{2, 3}, {3, 3}}},
}

// mAt is M's coefficient of x[r, k] in y[r, j] under li.
func mAt(li *LinearJac, m []Rat, inner, out, j, k int) Rat {
	if li.InnerOut {
		return m[k*out+j]
	}
	return m[j*inner+k]
}

// checkLinearIn compares the Jacobian that p's LinearIn states with the
// one-hot rows of p's VJP over Rat on random parents of the given shapes:
// every contribution to parent X of the cotangent e_{r,j} must be M[j, ·]
// on block r and 0 elsewhere, exactly.
func checkLinearIn(p *Prim[Rat], shapes []Shape, rng *rand.Rand) error {
	li := p.LinearIn
	xs := make([]Tensor[Rat], len(shapes))
	for t, sh := range shapes {
		xs[t] = zerosOf[Rat](sh)
		for i := range xs[t].Data {
			xs[t].Data[i] = NewRat(rng.Int64N(19)-9, 1+rng.Int64N(4))
		}
	}
	y, err := p.Forward(&Attrs{}, xs)
	if err != nil {
		return err
	}
	x, m := xs[li.X], xs[li.Matrix]
	if li.InnerOut && len(m.Shape) > 2 {
		return fmt.Errorf("%s: a case with a %d-axis Matrix, where InnerOut states nothing", p.Name, len(m.Shape))
	}
	inner := x.Shape[len(x.Shape)-1]
	if len(m.Data)%max(inner, 1) != 0 {
		return fmt.Errorf("%s: Matrix has %d elements, not a multiple of X's last axis %d", p.Name, len(m.Data), inner)
	}
	out := len(m.Data) / inner
	rows := len(x.Data) / inner
	if len(y.Data) != rows*out {
		return fmt.Errorf("%s: %d outputs for %d rows × %d", p.Name, len(y.Data), rows, out)
	}
	for r := 0; r < rows; r++ {
		for j := 0; j < out; j++ {
			dy := zerosOf[Rat](y.Shape)
			dy.Data[r*out+j] = NewRat(1, 1)
			dxs, err := p.VJP(&Attrs{}, xs, y, dy)
			if err != nil {
				return err
			}
			for rr := 0; rr < rows; rr++ {
				for k := 0; k < inner; k++ {
					want := Rat{}
					if rr == r {
						want = mAt(li, m.Data, inner, out, j, k)
					}
					if got := dxs[li.X].Data[rr*inner+k]; !got.Same(want) {
						return fmt.Errorf("%s: ∂y[%d,%d]/∂x[%d,%d] = %v by VJP, %v by LinearIn", p.Name, r, j, rr, k, got, want)
					}
				}
			}
		}
	}
	return nil
}

// TestLinearInEqualsVJP checks every primitive that states LinearIn
// against its VJP rule, and that the check catches a planted fault: a
// linear whose VJP reads W transposed (here square, so the shapes pass).
func TestLinearInEqualsVJP(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 21))
	reg := Default[Rat]()
	n := 0
	for _, name := range reg.Names() {
		p, err := reg.Lookup(name)
		if err != nil || p.LinearIn == nil {
			continue
		}
		n++
		cases, ok := linearInCases[name]
		if !ok {
			t.Errorf("%s states LinearIn but has no case in linearInCases", name)
			continue
		}
		for _, shapes := range cases {
			if err := checkLinearIn(p, shapes, rng); err != nil {
				t.Error(err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no primitive states LinearIn")
	}
	lin, err := reg.Lookup("linear")
	if err != nil {
		t.Fatal(err)
	}
	bad := *lin
	bad.VJP = func(a *Attrs, xs []Tensor[Rat], y, dy Tensor[Rat]) ([]Tensor[Rat], error) {
		w := xs[1]
		wt := zerosOf[Rat](w.Shape)
		transposeInto(wt.Data, w.Data, w.Shape[0], w.Shape[1])
		return lin.VJP(a, []Tensor[Rat]{xs[0], wt, xs[2]}, y, dy)
	}
	if err := checkLinearIn(&bad, []Shape{{2, 3}, {3, 3}, {3}}, rng); err == nil {
		t.Error("a linear whose VJP reads W transposed passed the LinearIn check")
	}
	// matmul stated with M read out × inner (InnerOut dropped) on a square
	// M: caught.
	mm, err := reg.Lookup("matmul")
	if err != nil {
		t.Fatal(err)
	}
	badMM := *mm
	badMM.OpInfo = new(OpInfo)
	*badMM.OpInfo = *mm.OpInfo
	badMM.LinearIn = &LinearJac{X: mm.LinearIn.X, Matrix: mm.LinearIn.Matrix}
	if err := checkLinearIn(&badMM, []Shape{{2, 3}, {3, 3}}, rng); err == nil {
		t.Error("matmul's LinearIn without InnerOut passed the check")
	}
}
