package check

import (
	"fmt"
	"math/big"
	"sort"

	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// values are the rationals the generators draw, simplest first: the
// eight points where kinks and ties of common ops sit (0, ±1, ±1/2, 2,
// −3/2, 3), then every other p/q with |p| ≤ 6 and 1 ≤ q ≤ 4 by
// denominator, magnitude and sign. One draw picks one value, so a
// shrinker that lowers a draw moves a value toward 0 without shifting the
// draws after it.
var values = func() []spec.Rat {
	out := []spec.Rat{spec.NewRat(0, 1), spec.NewRat(1, 1), spec.NewRat(-1, 1), spec.NewRat(1, 2),
		spec.NewRat(-1, 2), spec.NewRat(2, 1), spec.NewRat(-3, 2), spec.NewRat(3, 1)}
	seen := map[string]bool{}
	for _, v := range out {
		seen[v.String()] = true
	}
	var rest []spec.Rat
	for q := int64(1); q <= 4; q++ {
		for p := int64(-6); p <= 6; p++ {
			v := spec.NewRat(p, q)
			if !seen[v.String()] {
				seen[v.String()] = true
				rest = append(rest, v)
			}
		}
	}
	sort.SliceStable(rest, func(i, j int) bool {
		a, b := rest[i].Big(), rest[j].Big()
		if c := a.Denom().Cmp(b.Denom()); c != 0 {
			return c < 0
		}
		if c := new(big.Int).Abs(a.Num()).Cmp(new(big.Int).Abs(b.Num())); c != 0 {
			return c < 0
		}
		return a.Sign() > b.Sign()
	})
	return append(out, rest...)
}()

// genValue draws one value of domain d: a choice between the eight
// common points and the whole table, then one index (see values), mapped
// into d as casegen.GenRat maps its draws (Positive: |v| + 1/4;
// Square: v²; NonZero: 0 becomes 1).
func genValue(src Source, d spec.Domain, label string) spec.Rat {
	n := 8
	if src.Intn(2, label+".wide") == 1 {
		n = len(values)
	}
	v := values[min(src.Intn(n, label), n-1)]
	switch d {
	case spec.DomainPositive:
		v = v.Abs().Add(spec.NewRat(1, 4))
	case spec.DomainSquare:
		v = v.Mul(v)
	case spec.DomainNonZero:
		if v.IsZero() {
			v = spec.NewRat(1, 1)
		}
	default:
		v = v.Add(spec.NewRat(0, 1)) // a fresh Rat: tensors never share one
	}
	return v
}

// genTensor fills a tensor of shape s with values of domain d.
func genTensor(src Source, s spec.Shape, d spec.Domain, label string) spec.Tensor[spec.Rat] {
	t, _ := spec.Zeros[spec.Rat](s)
	for i := range t.Data {
		t.Data[i] = genValue(src, d, fmt.Sprintf("%s[%d]", label, i))
	}
	return t
}

// tangents draws one tangent per parent and a cotangent of shape out.
func tangents(src Source, xs []spec.Tensor[spec.Rat], out spec.Shape, label string) ([]spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) {
	dxs := make([]spec.Tensor[spec.Rat], len(xs))
	for i, x := range xs {
		dxs[i] = genTensor(src, x.Shape, spec.DomainAny, fmt.Sprintf("%s.dx%d", label, i))
	}
	return dxs, genTensor(src, out, spec.DomainAny, label+".delta")
}

// inDomain reports whether v lies in domain d.
func inDomain(v spec.Rat, d spec.Domain) bool {
	switch d {
	case spec.DomainPositive:
		return v.Big().Sign() > 0
	case spec.DomainNonZero:
		return !v.IsZero()
	case spec.DomainSquare:
		_, err := v.Sqrt()
		return err == nil
	}
	return true
}

// generate draws one instance: parent shapes from Shapes (or one shared
// shape), then every element as documented in the package doc (a fresh
// rational, a kink, or a copy that makes a tie). A kink or copy outside
// the parent's domain falls back to the fresh rational.
func (c *checker) generate(src Source) (*casegen.Instance, error) {
	n := c.p.Arity
	var shapes []spec.Shape
	if c.p.Shapes != nil {
		shapes = c.p.Shapes(src)
		if len(shapes) != n {
			return nil, fmt.Errorf("check: %s: Shapes drew %d shapes for %d parents", c.p.Name, len(shapes), n)
		}
	} else {
		s := casegen.GenShape(src, 0, 3, "shape")
		shapes = make([]spec.Shape, n)
		for i := range shapes {
			shapes[i] = s
		}
	}
	inst := &casegen.Instance{Op: c.p.Name, Xs: make([]spec.Tensor[spec.Rat], n), Domains: make([]spec.Domain, n)}
	// The element kinds, simplest first: a copy (a tie) when the op
	// declares ties, a kink when it declares kinks, a fresh value.
	var kinds []string
	if c.p.Ties != "" {
		kinds = append(kinds, "tie")
	}
	if len(c.p.Kinks) > 0 {
		kinds = append(kinds, "kink")
	}
	kinds = append(kinds, "fresh")
	for i, s := range shapes {
		if _, err := s.Check(0); err != nil {
			return nil, fmt.Errorf("check: %s: Shapes drew an invalid shape for parent %d: %w", c.p.Name, i, err)
		}
		if s.Size() > 1<<12 {
			return nil, fmt.Errorf("check: %s: Shapes drew %v for parent %d, over the %d elements a case may have", c.p.Name, s, i, 1<<12)
		}
		d := spec.DomainAny
		if i < len(c.p.Domains) {
			d = c.p.Domains[i]
		}
		inst.Domains[i] = d
		t, _ := spec.Zeros[spec.Rat](s)
		for k := range t.Data {
			label := fmt.Sprintf("x%d[%d]", i, k)
			v := genValue(src, d, label)
			switch kinds[min(src.Intn(len(kinds), label+".kind"), len(kinds)-1)] {
			case "kink":
				if w := spec.RatFromBig(c.p.Kinks[min(src.Intn(len(c.p.Kinks), label+".kink"), len(c.p.Kinks)-1)]); inDomain(w, d) {
					v = w
				}
			case "tie":
				// Copy: the same position of an earlier parent, or (with
				// TiesWithin) an earlier element of this one.
				var cands []spec.Rat
				for j := range i {
					if k < len(inst.Xs[j].Data) {
						cands = append(cands, inst.Xs[j].Data[k])
					}
				}
				if c.p.TiesWithin {
					cands = append(cands, t.Data[:k]...)
				}
				if len(cands) > 0 {
					if w := cands[min(src.Intn(len(cands), label+".tie"), len(cands)-1)]; inDomain(w, d) {
						v = w.Add(spec.NewRat(0, 1)) // a fresh Rat: tensors never share one
					}
				}
			}
			t.Data[k] = v
		}
		inst.Xs[i] = t
	}
	return inst, nil
}
