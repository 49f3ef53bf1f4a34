package obligations

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/spec"
)

// A consistent fault changes an exact primitive's derivative the same way
// in its JVP and its VJP rules (the real bugs of issue 25, class 1):
// adjointness, linearity and zero preservation still hold, and only the
// derivative obligation (CheckDerivativeExact) sees it. Each plant replaces
// the Rat rules of one primitive; the forward rule stays the reference.

// plantRat returns registries whose Rat JVP and VJP of op are replaced.
func plantRat(op string, jvp func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], dx spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat],
	vjp func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], dy spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat]) Registries {
	r := DefaultRegistries()
	r.Rat = spec.New[spec.Rat]()
	p, _ := r.Rat.Lookup(op)
	bad := *p
	bad.JVP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], _ spec.Tensor[spec.Rat], dxs []spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
		return jvp(a, xs, dxs[0]), nil
	}
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], _ spec.Tensor[spec.Rat], dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		gs := []spec.Tensor[spec.Rat]{vjp(a, xs, dy)}
		for _, x := range xs[1:] { // parameters (layer_norm's γ, β) get the reference
			gs = append(gs, spec.ZerosLike(x))
		}
		if len(xs) > 1 {
			y, _ := p.Apply(a, xs)
			ref, _ := p.VJP(a, xs, y, dy)
			copy(gs[1:], ref[1:])
		}
		return gs, nil
	}
	r.Rat.Override(&bad)
	return r
}

// firstArgmax breaks every tie of x towards the first element in
// row-major order: x_i − i·η with (n−1)·η below the smallest gap between
// distinct values, so strict orders stay and ties resolve to the lowest
// flat index — the first position of the window that reads it.
func firstArgmax(x spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
	gap := spec.Rat{}.FromInt(1)
	for i := range x.Data {
		for j := range x.Data {
			if d := x.Data[i].Sub(x.Data[j]).Abs(); !d.IsZero() {
				if c, _ := d.Compare(gap); c < 0 {
					gap = d
				}
			}
		}
	}
	eta, _ := gap.Div(spec.Rat{}.FromInt(int64(len(x.Data) + 1)))
	out := x.Clone()
	for i := range out.Data {
		out.Data[i] = out.Data[i].Sub(eta.Mul(spec.Rat{}.FromInt(int64(i))))
	}
	return out
}

func refRat(op string) *spec.Prim[spec.Rat] {
	p, _ := spec.Default[spec.Rat]().Lookup(op)
	return p
}

// plantedConsistent are the planted examples of issue 25, class 1.
func plantedConsistent() []struct {
	name, op string
	r        Registries
} {
	mp := refRat("max_pool")
	// max_pool: the first argmax takes the whole tie, in both rules.
	maxPool := plantRat("max_pool",
		func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], dx spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
			x := []spec.Tensor[spec.Rat]{firstArgmax(xs[0])}
			y, _ := mp.Apply(a, x)
			j, _ := mp.JVP(a, x, y, []spec.Tensor[spec.Rat]{dx})
			return j
		},
		func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], dy spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
			x := []spec.Tensor[spec.Rat]{firstArgmax(xs[0])}
			y, _ := mp.Apply(a, x)
			g, _ := mp.VJP(a, x, y, dy)
			return g[0]
		})
	// clamp′ = ½ at the bounds, in both rules.
	atBound := func(a *spec.Attrs, v spec.Rat) bool {
		lo, hi := spec.RatFromBig(a.Lo), spec.RatFromBig(a.Hi)
		return v.Same(lo) || v.Same(hi)
	}
	half := spec.NewRat(1, 2)
	clampHalf := func(a *spec.Attrs, x, t spec.Tensor[spec.Rat], ref spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
		out := ref.Clone()
		for i := range out.Data {
			if atBound(a, x.Data[i]) {
				out.Data[i] = t.Data[i].Mul(half)
			}
		}
		return out
	}
	cl := refRat("clamp")
	clamp := plantRat("clamp",
		func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], dx spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
			y, _ := cl.Apply(a, xs)
			j, _ := cl.JVP(a, xs, y, []spec.Tensor[spec.Rat]{dx})
			return clampHalf(a, xs[0], dx, j)
		},
		func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], dy spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
			y, _ := cl.Apply(a, xs)
			g, _ := cl.VJP(a, xs, y, dy)
			return clampHalf(a, xs[0], dy, g[0])
		})
	// neg′ = 0, in both rules.
	zero := func(_ *spec.Attrs, xs []spec.Tensor[spec.Rat], _ spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
		return spec.ZerosLike(xs[0])
	}
	neg := plantRat("neg", zero, zero)
	// layer_norm without its mean and variance terms, in both rules:
	// dy = γ·dx/σ, μ and σ held constant (lanes along the last axis, the
	// generator's Axis −1).
	scaleLanes := func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], t spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
		x := xs[0]
		n := x.Shape[len(x.Shape)-1]
		out := t.Clone()
		eps := spec.Rat{}
		if a.Eps != nil {
			eps = spec.RatFromBig(a.Eps)
		}
		for base := 0; base < len(x.Data); base += n {
			var mu, v spec.Rat
			for j := 0; j < n; j++ {
				mu = mu.Add(x.Data[base+j])
			}
			mu, _ = mu.Div(spec.Rat{}.FromInt(int64(n)))
			for j := 0; j < n; j++ {
				d := x.Data[base+j].Sub(mu)
				v = v.Add(d.Mul(d))
			}
			v, _ = v.Div(spec.Rat{}.FromInt(int64(n)))
			sigma, err := v.Add(eps).Sqrt()
			for j := 0; j < n; j++ {
				g := spec.Rat{}.FromInt(1)
				if len(xs) > 1 {
					g = xs[1].Data[j]
				}
				q, err2 := t.Data[base+j].Mul(g).Div(sigma)
				if err != nil || err2 != nil {
					q = spec.Rat{}
				}
				out.Data[base+j] = q
			}
		}
		return out
	}
	layerNorm := plantRat("layer_norm",
		func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], dx spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
			return scaleLanes(a, xs, dx)
		},
		func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], dy spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
			return scaleLanes(a, xs, dy)
		})
	return []struct {
		name, op string
		r        Registries
	}{
		{"max_pool first argmax takes the tie", "max_pool", maxPool},
		{"clamp′ = ½ at the bounds", "clamp", clamp},
		{"neg′ = 0", "neg", neg},
		{"layer_norm without mean and variance terms", "layer_norm", layerNorm},
	}
}

// TestConsistentFaultsCaught: each consistent fault is caught by the
// derivative obligation at the gate's default 100 cases, at seed 0 and
// at every seed 1–20, with a *counterexample.Failure naming the derivative obligation.
func TestConsistentFaultsCaught(t *testing.T) {
	for _, pl := range plantedConsistent() {
		t.Run(pl.op, func(t *testing.T) {
			for seed := uint64(0); seed <= 20; seed++ {
				res, err := pl.r.CheckOp(pl.op, 100, seed, nil)
				if err != nil {
					t.Fatal(err)
				}
				caught := false
				for _, rr := range res {
					var f *counterexample.Failure
					if rr.Obligation == Derivative && errors.As(rr.Failure, &f) && Obligation(f.Law) == Derivative {
						caught = true
					}
				}
				if !caught {
					t.Fatalf("seed %d: planted %q not caught: %+v", seed, pl.name, res)
				}
			}
		})
	}
}
