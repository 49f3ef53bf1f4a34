package obligations

import (
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// The planted faults below are built from the reference rules through the
// public API only, so they are the exact mistakes they name and nothing
// else: the per-output contributions of the reference VJP (its VJP of a
// one-hot cotangent) written with = instead of +=, and a max-pool VJP that
// gives a tied maximum's whole cotangent to its first position (the
// smallest flat input index the reference JVP shows the output depends
// on: row-major window order is flat order within a slice).

// onehotVJP returns the reference VJP's contribution to parent 0 of output
// element o alone (cotangent dy[o] at o, 0 elsewhere).
func onehotVJP(p *spec.Prim[spec.Rat], a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat], o int) (spec.Tensor[spec.Rat], error) {
	e := spec.ZerosLike(dy)
	e.Data[o] = dy.Data[o]
	gs, err := p.VJP(a, xs, y, e)
	if err != nil {
		return spec.Tensor[spec.Rat]{}, err
	}
	return gs[0], nil
}

// plantOverwrite replaces op's VJP in x by one that overwrites instead of
// accumulating: dx[i] is the contribution of the last output that reads i.
func plantOverwrite(reg *spec.Registry[spec.Rat], op string) {
	p, _ := reg.Lookup(op)
	orig := *p
	bad := *p
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		gs, err := orig.VJP(a, xs, y, dy)
		if err != nil {
			return gs, err
		}
		dx := spec.ZerosLike(xs[0])
		for o := range dy.Data {
			g, err := onehotVJP(&orig, a, xs, y, dy, o)
			if err != nil {
				return nil, err
			}
			for i, v := range g.Data {
				if !v.IsZero() {
					dx.Data[i] = v // the fault: = instead of +=
				}
			}
		}
		gs[0] = dx
		return gs, nil
	}
	reg.Override(&bad)
}

// plantFirstMax replaces a max pool's VJP by one that gives each output's
// whole cotangent to the first position attaining the maximum.
func plantFirstMax(reg *spec.Registry[spec.Rat], op string) {
	p, _ := reg.Lookup(op)
	orig := *p
	bad := *p
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		x := xs[0]
		first := make([]int, len(y.Data))
		for o := range first {
			first[o] = -1
		}
		for i := range x.Data { // ascending i: the first dependency wins
			dx := spec.ZerosLike(x)
			dx.Data[i] = spec.NewRat(1, 1)
			t, err := orig.JVP(a, xs, y, []spec.Tensor[spec.Rat]{dx})
			if err != nil {
				return nil, err
			}
			for o, v := range t.Data {
				if !v.IsZero() && first[o] < 0 {
					first[o] = i
				}
			}
		}
		g := spec.ZerosLike(x)
		for o, i := range first {
			if i >= 0 {
				g.Data[i] = g.Data[i].Add(dy.Data[o])
			}
		}
		return []spec.Tensor[spec.Rat]{g}, nil
	}
	reg.Override(&bad)
}

// TestPlantedWindowFaultsCaught: each planted fault fails adjointness,
// decided exactly over Rat, within the generators' first 40 cases (the
// generators draw overlapping windows and tied maxima often); the
// reference rules hold on the same cases (TestReferenceRegistryHolds
// checks them on more).
func TestPlantedWindowFaultsCaught(t *testing.T) {
	cases := []struct {
		name, op string
		plant    func(*spec.Registry[spec.Rat], string)
		cases    int // 40 when 0
	}{
		{"conv overwrite", "conv", plantOverwrite, 0},
		// Its outputs are the largest: the planted VJP runs the reference
		// once per output element, so fewer cases keep the test fast.
		{"conv_transpose overwrite", "conv_transpose", plantOverwrite, 8},
		{"avg_pool overwrite", "avg_pool", plantOverwrite, 0},
		{"avg_pool_nd overwrite", "avg_pool_nd", plantOverwrite, 0},
		{"max_pool overwrite", "max_pool", plantOverwrite, 0},
		{"max_pool_nd overwrite", "max_pool_nd", plantOverwrite, 0},
		{"max_pool first maximum", "max_pool", plantFirstMax, 0},
		{"max_pool_nd first maximum", "max_pool_nd", plantFirstMax, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := c.cases
			if n == 0 {
				n = 40
			}
			ref, err := DefaultRegistries().CheckOp(c.op, n, 7, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, rr := range ref {
				if !rr.Holds() {
					t.Fatalf("reference %s %s: %v", c.op, rr.Obligation, rr.Failure)
				}
			}
			r := DefaultRegistries()
			r.Rat = spec.New[spec.Rat]()
			c.plant(r.Rat, c.op)
			res, err := r.CheckOp(c.op, n, 7, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, rr := range res {
				if rr.Obligation == Adjointness {
					if rr.Failure == nil {
						t.Fatalf("%s not caught by adjointness", c.name)
					}
					return
				}
			}
			t.Fatal("no adjointness result")
		})
	}
}
