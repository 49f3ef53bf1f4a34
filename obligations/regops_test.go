package obligations

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/spec"
)

// TestRegopsDecidedExactly: the exact obligations of the exact primitives
// added for imported models are decided over Rat on every case (the
// generators draw data whose square roots are rational), and lrn and
// hard_masked_softmax owe and meet the derivative obligation.
func TestRegopsDecidedExactly(t *testing.T) {
	r := DefaultRegistries()
	for _, op := range []string{"pad", "gather", "sign", "shrink", "batch_norm_eval", "instance_norm", "lrn", "hard_masked_softmax", "keep_mask"} {
		info, err := spec.Info(op)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.CheckOp(op, 40, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		derivative := false
		for _, rr := range res {
			if !rr.Holds() {
				t.Errorf("%s %s: cases=%d oracles=%v failure=%v", op, rr.Obligation, rr.Cases, rr.Oracles, rr.Failure)
			}
			want := OracleRat
			if rr.Obligation == Derivative {
				want = OracleDualRat // forward mode over Dual[Rat], compared with ==
			}
			if info.Exact && rr.Obligation != IntervalEnclosure && rr.Obligation != FastPath && rr.Oracles[want] != rr.Cases {
				t.Errorf("%s %s: only %d of %d cases decided by %s (%v)", op, rr.Obligation, rr.Oracles[want], rr.Cases, want, rr.Oracles)
			}
			derivative = derivative || rr.Obligation == Derivative
		}
		if derivative != !info.NoGrad {
			t.Errorf("%s: derivative obligation checked %v, want %v", op, derivative, !info.NoGrad)
		}
	}
}

// plantVJP replaces op's VJP in both registries of r with bad.
func plantVJP(r *Registries, op string, bad func(a *spec.Attrs, x spec.Tensor[spec.Rat], dy spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat]) {
	r.Rat, r.Interval = spec.New[spec.Rat](), spec.New[spec.Interval]()
	p, _ := r.Rat.Lookup(op)
	q := *p
	q.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], _, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		return []spec.Tensor[spec.Rat]{bad(a, xs[0], dy)}, nil
	}
	r.Rat.Override(&q)
}

// overwrite is the classic scatter bug: g[src(o)] = δ_o instead of +=.
func overwrite(x spec.Shape, src []int, dy spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
	g, _ := spec.Zeros[spec.Rat](x)
	for o, s := range src {
		if s >= 0 {
			g.Data[s] = dy.Data[o]
		}
	}
	return g
}

// TestPlantedScatterFaultsCaught: a gather VJP that overwrites instead of
// accumulating on repeated indices, and a reflect-pad VJP that drops the
// reflected positions' cotangents (only the interior gets δ), both fail
// adjointness exactly, with a counterexample naming the op.
func TestPlantedScatterFaultsCaught(t *testing.T) {
	cases := []struct {
		op  string
		bad func(a *spec.Attrs, x spec.Tensor[spec.Rat], dy spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat]
	}{
		{"gather", func(a *spec.Attrs, x spec.Tensor[spec.Rat], dy spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
			return overwrite(x.Shape, spec.GatherMap(a, x.Shape), dy)
		}},
		{"pad", func(a *spec.Attrs, x spec.Tensor[spec.Rat], dy spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
			if a.Mode != spec.PadReflect {
				g, _ := spec.Zeros[spec.Rat](x.Shape)
				for o, s := range spec.PadMap(a, x.Shape) {
					if s >= 0 {
						g.Data[s] = g.Data[s].Add(dy.Data[o])
					}
				}
				return g
			}
			interior := *a
			interior.Mode = spec.PadConstant // the interior only: reflected positions read as fill
			return overwrite(x.Shape, spec.PadMap(&interior, x.Shape), dy)
		}},
	}
	for _, c := range cases {
		r := DefaultRegistries()
		plantVJP(&r, c.op, c.bad)
		res, err := r.CheckOp(c.op, 60, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		var f *counterexample.Failure
		if res[0].Obligation != Adjointness || !errors.As(res[0].Failure, &f) || f.Op != c.op || Oracle(f.Oracle) != OracleRat {
			t.Errorf("%s: planted scatter fault not caught exactly: %+v", c.op, res[0])
		}
	}
}
