package obligations

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/spec"
)

// plantF64 returns registries whose F64 rule of op is changed by edit —
// a fault in a scalar-specialised path only, as a type-switched kernel
// would have: the Rat, interval and dual rules stay the reference.
func plantF64(op string, edit func(p *spec.Prim[spec.F64])) Registries {
	r := DefaultRegistries()
	r.F64 = spec.New[spec.F64]()
	p, _ := r.F64.Lookup(op)
	bad := *p
	edit(&bad)
	r.F64.Override(&bad)
	return r
}

// plantedFastPaths are the planted examples of issue 25, class 4.
func plantedFastPaths() []struct {
	name, op string
	r        Registries
} {
	// softmax's F64 VJP with every lane after the first zeroed.
	softmax := plantF64("softmax", func(p *spec.Prim[spec.F64]) {
		orig := p.VJP
		p.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.F64], y, dy spec.Tensor[spec.F64]) ([]spec.Tensor[spec.F64], error) {
			gs, err := orig(a, xs, y, dy)
			if err != nil {
				return gs, err
			}
			x := gs[0]
			lane := x.Shape[len(x.Shape)-1]
			if a != nil && a.Axis >= 0 && a.Axis < len(x.Shape) {
				lane = x.Shape[a.Axis]
			}
			for i := lane; i < len(x.Data); i++ {
				x.Data[i] = 0
			}
			return gs, nil
		}
	})
	// matmul's F64 forward reading row i+1 of A for row i (a row offset).
	matmul := plantF64("matmul", func(p *spec.Prim[spec.F64]) {
		orig := p.Forward
		p.Forward = func(a *spec.Attrs, xs []spec.Tensor[spec.F64]) (spec.Tensor[spec.F64], error) {
			A := xs[0].Clone()
			if r := len(A.Shape); r >= 2 && A.Shape[r-2] > 1 {
				k := A.Shape[r-1]
				copy(A.Data, A.Data[k:])
			}
			return orig(a, append([]spec.Tensor[spec.F64]{A}, xs[1:]...))
		}
	})
	return []struct {
		name, op string
		r        Registries
	}{
		{"F64 softmax VJP lanes after the first zeroed", "softmax", softmax},
		{"F64 matmul forward row offset", "matmul", matmul},
	}
}

// TestFastPathFaultsCaught: a fault in the F64 path alone is caught by the
// fast-path obligation at the gate's default 100 cases, at seed 0 and
// every seed 1–20, while every other obligation (decided over Rat,
// intervals and duals) still holds — which is why it escaped before.
func TestFastPathFaultsCaught(t *testing.T) {
	for _, pl := range plantedFastPaths() {
		t.Run(pl.op, func(t *testing.T) {
			for seed := uint64(0); seed <= 20; seed++ {
				res, err := pl.r.CheckOp(pl.op, 100, seed, nil)
				if err != nil {
					t.Fatal(err)
				}
				caught := false
				for _, rr := range res {
					var f *counterexample.Failure
					switch {
					case rr.Obligation == FastPath:
						caught = errors.As(rr.Failure, &f) && Obligation(f.Law) == FastPath
					case rr.Failure != nil:
						t.Fatalf("seed %d: %s fails though only the F64 rule was planted: %v", seed, rr.Obligation, rr.Failure)
					}
				}
				if !caught {
					t.Fatalf("seed %d: planted %q not caught", seed, pl.name)
				}
			}
		})
	}
}

// TestPlainIsGeneric: Plain[F64] takes the generic code path (no type
// switch matches it), and its values are F64's bit for bit.
func TestPlainIsGeneric(t *testing.T) {
	if _, ok := any([]Plain[spec.F64]{}).([]spec.F64); ok {
		t.Fatal("Plain[F64] slices are F64 slices")
	}
	for _, c := range [][2]spec.F64{{0.1, 0.2}, {1e308, 10}, {-0.0, 0}, {3, 7}} {
		a, b := c[0], c[1]
		q, _ := a.Div(b)
		pq, _ := Plain[spec.F64]{a}.Div(Plain[spec.F64]{b})
		if !a.Add(b).Same(Plain[spec.F64]{a}.Add(Plain[spec.F64]{b}).V) || !a.Mul(b).Same(Plain[spec.F64]{a}.Mul(Plain[spec.F64]{b}).V) || !q.Same(pq.V) {
			t.Errorf("Plain[F64] differs from F64 at %v, %v", a, b)
		}
	}
}
