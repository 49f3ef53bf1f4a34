package spec

import (
	"fmt"
	"math/big"
)

// noGradPrim builds a primitive whose JVP and VJP are zero by definition.
func noGradPrim[T Scalar[T]](info *OpInfo, fwd func(a *Attrs, xs []Tensor[T]) (Tensor[T], error)) *Prim[T] {
	info.NoGrad, info.Exact = true, true
	return &Prim[T]{
		OpInfo:  info,
		Forward: fwd,
		JVP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			return zerosOf[T](y.Shape), nil
		},
		VJP: func(_ *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			out := make([]Tensor[T], len(xs))
			for i, x := range xs {
				out[i] = zerosOf[T](x.Shape)
			}
			return out, nil
		},
	}
}

// keepMask returns the 0/1 keep mask of a dropout draw: element i is kept
// when UniformRat(seed, i) ≥ p, compared exactly.
func keepMask(seed uint64, p *big.Rat, n int) []bool {
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = UniformRat(seed, i).Cmp(p) >= 0
	}
	return keep
}

func checkProb(p *big.Rat) error {
	if p == nil {
		return fmt.Errorf("missing probability P")
	}
	if p.Sign() < 0 || p.Cmp(big.NewRat(1, 1)) > 0 {
		return fmt.Errorf("probability %s outside [0,1]", p.RatString())
	}
	return nil
}

// dropoutApply computes x⊙mask/(1−p), the mask replayed from the seed so
// that forward and reverse use the same draw. p = 1 drops everything.
func dropoutApply[T Scalar[T]](a *Attrs, x Tensor[T]) (Tensor[T], error) {
	if err := checkProb(a.P); err != nil {
		return Tensor[T]{}, err
	}
	keep := keepMask(a.Seed, a.P, len(x.Data))
	out := zerosOf[T](x.Shape)
	q := new(big.Rat).Sub(big.NewRat(1, 1), a.P)
	if q.Sign() == 0 {
		return out, nil
	}
	scale := rc[T](new(big.Rat).Inv(q))
	for i, k := range keep {
		if k {
			out.Data[i] = x.Data[i].Mul(scale)
		}
	}
	return out, nil
}

func miscPrims[T Scalar[T]]() []*Prim[T] {
	return []*Prim[T]{
		noGradPrim[T](&OpInfo{Name: "const", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "const", Attrs: []string{"value_shape"}, Params: []string{"value"}, Required: []string{"value"}, Doc: "a constant tensor of shape value_shape; its values are the payload's \"value\""}, Gen: GenHint{Graph: 24}, MinArity: 0, MaxArity: 0, Attrs: []string{"Shape", "Values"},
			Shape: func(a *Attrs, _ []Shape) (Shape, error) {
				n, err := a.Shape.Check(0)
				if err != nil {
					return nil, err
				}
				if len(a.Values) != n {
					return nil, fmt.Errorf("const of shape %v needs %d values, got %d", a.Shape, n, len(a.Values))
				}
				return a.Shape.Clone(), nil
			}, Doc: "a constant tensor; never receives a gradient"},
			func(a *Attrs, _ []Tensor[T]) (Tensor[T], error) {
				out := zerosOf[T](a.Shape)
				for i, v := range a.Values {
					if v == nil {
						return Tensor[T]{}, fmt.Errorf("const value %d missing", i)
					}
					out.Data[i] = rc[T](v)
				}
				return out, nil
			}),
		noGradPrim[T](&OpInfo{Name: "detach", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "detach", Doc: "stop-gradient: the same value"}, Gen: GenHint{Graph: 7}, MinArity: 1, MaxArity: 1, Shape: shapeSame,
			Doc: "stop-gradient: same value (no copy), no gradient flows"},
			func(_ *Attrs, xs []Tensor[T]) (Tensor[T], error) { return xs[0], nil }),
		noGradPrim[T](&OpInfo{Name: "rand_uniform", ZeroPreserving: true, IR: &IRForm{Tag: "rand_uniform", Attrs: []string{"seed"}, Doc: "uniform draws k/2^32 of the splitmix64 stream keyed by seed, one per element of the node's shape"}, Gen: GenHint{Graph: 27}, MinArity: 0, MaxArity: 0, Attrs: []string{"Shape", "Seed"},
			Shape: func(a *Attrs, _ []Shape) (Shape, error) {
				if _, err := a.Shape.Check(0); err != nil {
					return nil, err
				}
				return a.Shape.Clone(), nil
			}, Doc: "uniform draws k/2^32 in [0,1) from the splitmix64 stream of Seed"},
			func(a *Attrs, _ []Tensor[T]) (Tensor[T], error) {
				out := zerosOf[T](a.Shape)
				for i := range out.Data {
					out.Data[i] = rc[T](UniformRat(a.Seed, i))
				}
				return out, nil
			}),
		noGradPrim[T](&OpInfo{Name: "bernoulli_mask", ZeroPreserving: true, MinArity: 1, MaxArity: 1, Attrs: []string{"P", "Seed"}, Shape: shapeSame,
			Doc: "0/1 keep mask shaped like its parent: 1 where the draw is ≥ P (drop probability)"},
			func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
				if err := checkProb(a.P); err != nil {
					return Tensor[T]{}, err
				}
				out := zerosOf[T](xs[0].Shape)
				for i, k := range keepMask(a.Seed, a.P, len(out.Data)) {
					if k {
						out.Data[i] = out.Data[i].FromInt(1)
					}
				}
				return out, nil
			}),
		linearUnaryPrim[T](&OpInfo{Name: "dropout", ZeroPreserving: true, Attrs: []string{"P", "Seed"}, Exact: true, Shape: shapeSame,
			Doc: "x⊙mask/(1−P); the mask is drawn from Seed, so the reverse pass replays the forward draw"},
			dropoutApply[T],
			func(a *Attrs, _ Tensor[T], dy Tensor[T]) (Tensor[T], error) { return dropoutApply(a, dy) }),
	}
}

// builtinPrims lists the built-in primitives in the order of the
// semantics table.
func builtinPrims[T Scalar[T]]() []*Prim[T] {
	var ps []*Prim[T]
	ps = append(ps, elementwisePrims[T]()...)
	ps = append(ps, reducePrims[T]()...)
	ps = append(ps, matmulPrim[T](), linearPrim[T](),
		softmaxPrim[T](false), softmaxPrim[T](true), layerNormPrim[T]())
	ps = append(ps, shapePrims[T]()...)
	ps = append(ps, miscPrims[T]()...)
	ps = append(ps, windowPrims[T]()...)
	ps = append(ps, importedPrims[T]()...)
	ps = append(ps, onnxPrims[T]()...)
	ps = append(ps, extraPrims[T]()...)
	ps = append(ps, roundPrims[T]()...)
	ps = append(ps, truncPrim[T]())
	ps = append(ps, quantPrims[T]()...)
	return ps
}
