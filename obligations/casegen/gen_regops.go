package casegen

import (
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// The generators of the primitives added for imported models other than
// the window ones (pad, gather, shrink, batch_norm_eval, instance_norm,
// lrn, hard_masked_softmax, keep_mask; sign is drawn from its hints). They
// draw the boundary cases the rules must get right: zero widths and
// reflect widths at the limit extent − 1, repeated gather indices (whose
// cotangents must accumulate), thresholds on the interesting points,
// several channel counts, fully blocked mask rows; and, for the
// normalisations, data whose square roots are rational, so that the
// exact obligations run over Rat.

func init() {
	for op, g := range map[string]genFunc{
		"pad":                 padGen,
		"gather":              gatherGen,
		"shrink":              shrinkGen,
		"batch_norm_eval":     batchNormGen,
		"instance_norm":       instanceNormGen,
		"lrn":                 lrnGen,
		"hard_masked_softmax": maskedSoftmaxGen,
		"keep_mask":           keepMaskGen,
	} {
		structural[op] = g
	}
}

func padGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	s := GenShape(src, 1, 3, "shape")
	r := len(s)
	a := &spec.Attrs{Mode: []string{spec.PadConstant, spec.PadReflect, spec.PadEdge}[src.Intn(3, "mode")], Widths: make([]int, 2*r)}
	for d := 0; d < r; d++ {
		for _, j := range []int{d, r + d} {
			if a.Mode == spec.PadReflect {
				// 0 … extent−1, the last the limit.
				a.Widths[j] = src.Intn(s[d], "width")
			} else {
				a.Widths[j] = src.Intn(3, "width")
			}
		}
	}
	if a.Mode == spec.PadConstant {
		a.Value = ratAttr(src, "value")
	}
	return a, []spec.Shape{s}, []Domain{Any}
}

func gatherGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	s := GenShape(src, 1, 3, "shape")
	ax := axisOf(src, s)
	n := s[(ax+len(s))%len(s)]
	is := GenShape(src, 0, 2, "indices_shape")
	idx := make([]int, is.Size())
	same := src.Intn(2, "repeat") == 1 // every index equal: the most accumulation
	for j := range idx {
		if same && j > 0 {
			idx[j] = idx[0]
		} else {
			idx[j] = src.Intn(n, "index")
		}
	}
	return &spec.Attrs{Axis: ax, IndicesShape: is, Indices: idx}, []spec.Shape{s}, []Domain{Any}
}

func shrinkGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	lam := []*big.Rat{big.NewRat(1, 2), big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(3, 2)}[src.Intn(4, "lambd")]
	return &spec.Attrs{Lambd: lam, Bias: ratAttr(src, "bias")}, []spec.Shape{GenShape(src, 0, 3, "shape")}, []Domain{Any}
}

// batchNormGen draws x with channel axis Axis and [C] statistics; the
// variance is fixed up in regopsFixup so that max(σ², 0) + ε is a
// non-zero square.
func batchNormGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	s := GenShape(src, 1, 3, "shape")
	ax := src.Intn(len(s), "axis")
	eps := []*big.Rat{new(big.Rat), big.NewRat(1, 4)}[src.Intn(2, "eps")]
	n := 3 + src.Intn(3, "affine")
	shapes := []spec.Shape{s, {s[ax]}, {s[ax]}, {s[ax]}, {s[ax]}}[:n]
	doms := []Domain{Any, Any, Square, Any, Any}[:n]
	return &spec.Attrs{Axis: ax, Eps: eps}, shapes, doms
}

// instanceNormGen draws x [N, C, spatial] with two spatial positions; with
// ε = 0 and the pair made distinct in regopsFixup, σ = |x1 − x0|/2 is
// rational.
func instanceNormGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	n, c := 1+src.Intn(2, "n"), 1+src.Intn(3, "channels")
	x := spec.Shape{n, c, 2}
	if src.Intn(2, "spatial") == 1 {
		x = spec.Shape{n, c, 1, 2}
	}
	return &spec.Attrs{Eps: new(big.Rat)}, []spec.Shape{x, {c}, {c}}, []Domain{Any, Any, Any}
}

func lrnGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	n, c := 1+src.Intn(2, "n"), 1+src.Intn(4, "channels")
	x := spec.Shape{n, c}
	if src.Intn(2, "spatial") == 1 {
		x = append(x, 1+src.Intn(2, "h"))
	}
	a := &spec.Attrs{Size: 1 + src.Intn(4, "size"),
		Alpha: GenRat(src, Positive, "alpha").Big(),
		Beta:  []*big.Rat{big.NewRat(3, 4), big.NewRat(1, 1), big.NewRat(1, 2), big.NewRat(2, 1)}[src.Intn(4, "beta")],
		Bias:  GenRat(src, Positive, "bias").Big()}
	return a, []spec.Shape{x}, []Domain{Any}
}

func maskedSoftmaxGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	s := GenShape(src, 0, 2, "shape")
	m := make([]bool, s.Size())
	for i := range m {
		m[i] = src.Intn(3, fmt.Sprintf("mask[%d]", i)) > 0
	}
	return &spec.Attrs{Mask: m}, []spec.Shape{s}, []Domain{Any}
}

func keepMaskGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	return &spec.Attrs{Shape: GenShape(src, 0, 2, "shape"), Seed: uint64(src.Intn(1000, "seed"))}, []spec.Shape{{}}, []Domain{Any}
}

// regopsFixup adjusts drawn data where a primitive's exact rule needs it:
// batch_norm_eval's variance so that s = sqrt(max(σ², 0) + ε) is a non-zero
// rational (ε = 0: σ² a non-zero square; ε = 1/4: σ² ≤ 0 or 2, giving s =
// 1/2 or 3/2), instance_norm's spatial pairs distinct (σ ≠ 0).
func regopsFixup(src Source, op string, a *spec.Attrs, xs []spec.Tensor[spec.Rat]) {
	switch op {
	case "l2_normalize":
		l2Fixup(a, xs[0])
	case "renorm":
		renormFixup(a, xs[0])
	case "batch_norm_eval":
		v := xs[2].Data
		for c := range v {
			if a.Eps.Sign() == 0 {
				if v[c].IsZero() {
					v[c] = spec.NewRat(1, 1)
				}
				continue
			}
			v[c] = []spec.Rat{spec.NewRat(0, 1), spec.NewRat(-1, 1), spec.NewRat(2, 1), spec.NewRat(-1, 2)}[src.Intn(4, fmt.Sprintf("var[%d]", c))]
		}
	case "instance_norm":
		for i := 0; i+1 < len(xs[0].Data); i += 2 {
			if xs[0].Data[i].Same(xs[0].Data[i+1]) {
				xs[0].Data[i+1] = xs[0].Data[i+1].Add(spec.NewRat(1, 1))
			}
		}
	}
}
