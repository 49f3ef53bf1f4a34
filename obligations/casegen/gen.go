package casegen

import (
	"fmt"
	"math/big"
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/spec"
)

// Source is where generators draw their choices. A rapid.T adapter makes
// every draw shrinkable; RandSource replays a math/rand stream. Each draw
// returns a value in [0, n) and shrinks toward 0, so generators put the
// simplest choice first.
type Source interface {
	Intn(n int, label string) int
}

// RandSource draws from a seeded PCG stream.
type RandSource struct{ R *rand.Rand }

// NewRandSource returns a deterministic source for seed.
func NewRandSource(seed uint64) *RandSource {
	return &RandSource{R: rand.New(rand.NewPCG(seed, seed^0x5eed))}
}

// Intn draws uniformly from [0, n).
func (s *RandSource) Intn(n int, _ string) int {
	if n <= 1 {
		return 0
	}
	return s.R.IntN(n)
}

// interesting are the rationals the generators favour: zero, the kinks of
// relu/abs/clamp, ties, small integers and halves.
var interesting = []spec.Rat{
	spec.NewRat(0, 1), spec.NewRat(1, 1), spec.NewRat(-1, 1), spec.NewRat(1, 2),
	spec.NewRat(-1, 2), spec.NewRat(2, 1), spec.NewRat(-3, 2), spec.NewRat(3, 1),
}

// Domain constrains generated values; it is the registry's
// spec.Domain, which each primitive's GenHint names.
type Domain = spec.Domain

// Domains.
const (
	Any      = spec.DomainAny      // any small rational
	Positive = spec.DomainPositive // strictly positive (log)
	Square   = spec.DomainSquare   // a perfect square of a small rational (exact sqrt)
	NonZero  = spec.DomainNonZero  // non-zero (inv, divisors)
)

// GenRat draws a small rational: mostly interesting points, otherwise
// p/q with |p| ≤ 6 and 1 ≤ q ≤ 4.
func GenRat(src Source, d Domain, label string) spec.Rat {
	var v spec.Rat
	if src.Intn(3, label+".kind") < 2 {
		v = interesting[src.Intn(len(interesting), label)]
	} else {
		p := int64(src.Intn(13, label+".num")) - 6
		q := int64(src.Intn(4, label+".den")) + 1
		v = spec.NewRat(p, q)
	}
	switch d {
	case Positive:
		v = v.Abs().Add(spec.NewRat(1, 4))
	case Square:
		v = v.Mul(v)
	case NonZero:
		if v.IsZero() {
			v = spec.NewRat(1, 1)
		}
	}
	return v
}

// GenTensor fills a tensor of shape s.
func GenTensor(src Source, s spec.Shape, d Domain, label string) spec.Tensor[spec.Rat] {
	t, _ := spec.Zeros[spec.Rat](s)
	for i := range t.Data {
		t.Data[i] = GenRat(src, d, fmt.Sprintf("%s[%d]", label, i))
	}
	return t
}

// GenShape draws a shape of rank in [minRank, maxRank] with extents 1..3.
func GenShape(src Source, minRank, maxRank int, label string) spec.Shape {
	r := minRank + src.Intn(maxRank-minRank+1, label+".rank")
	s := make(spec.Shape, r)
	for i := range s {
		s[i] = 1 + src.Intn(3, fmt.Sprintf("%s.dim%d", label, i))
	}
	return s
}

// Instance is one application of a primitive: attributes and exact
// inputs.
type Instance struct {
	Op    string
	Attrs *spec.Attrs
	Xs    []spec.Tensor[spec.Rat]
	// Domains of each parent, so that tangent perturbations for a finite
	// difference stay meaningful.
	Domains []Domain
}

// genFunc draws the attributes and parent shapes/domains of one op.
type genFunc func(src Source) (*spec.Attrs, []spec.Shape, []Domain)

func same(n int, d Domain) genFunc {
	return func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 0, 3, "shape")
		shapes, doms := make([]spec.Shape, n), make([]Domain, n)
		for i := range shapes {
			shapes[i], doms[i] = s, Any
		}
		if n == 2 && d != Any {
			doms[1] = d // the divisor
		} else if d != Any {
			doms[0] = d
		}
		return &spec.Attrs{}, shapes, doms
	}
}

func axisOf(src Source, s spec.Shape) int {
	if len(s) == 0 {
		return 0
	}
	return src.Intn(len(s), "axis") - len(s)*src.Intn(2, "axis.neg")
}

func ratAttr(src Source, label string) *big.Rat { return GenRat(src, Any, label).Big() }

// generator returns how to draw a well-formed application of op: its
// structural generator when it has one, else — for a primitive of fixed
// arity 1 or 2 without attributes — equal shapes of rank ≤ 3 with values
// in the registry's GenHint.Domain (the divisor's for a binary op). Every
// primitive of the registry must have one; TestGeneratorsCoverRegistry
// enforces it.
func generator(op string) (genFunc, bool) {
	if g, ok := structural[op]; ok {
		return g, true
	}
	if g, ok := extraStructural[op]; ok {
		return g, true
	}
	info, err := spec.Info(op)
	if err != nil || !plainElementwise(info) {
		return nil, false
	}
	return same(info.MinArity, info.Gen.Domain), true
}

// plainElementwise reports whether a primitive is drawn from its hints
// alone: fixed arity 1 or 2 and no attributes.
func plainElementwise(info *spec.OpInfo) bool {
	return len(info.Attrs) == 0 && info.MinArity == info.MaxArity && (info.MinArity == 1 || info.MinArity == 2)
}

// structural holds the generators of the primitives whose applications
// need more than equal shapes: attributes, or shapes that must fit
// together. Primitives drawn from their hints alone are not listed.
var structural = map[string]genFunc{
	"scale": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		return &spec.Attrs{C: ratAttr(src, "c")}, []spec.Shape{GenShape(src, 0, 3, "shape")}, []Domain{Any}
	},
	"clamp": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		lo, hi := GenRat(src, Any, "lo"), GenRat(src, Any, "hi")
		if c, _ := lo.Compare(hi); c > 0 {
			lo, hi = hi, lo
		}
		return &spec.Attrs{Lo: lo.Big(), Hi: hi.Big()}, []spec.Shape{GenShape(src, 0, 3, "shape")}, []Domain{Any}
	},
	// trunc_int's range: INT8's or INT16's, which hold every drawn value
	// (|x| ≤ 6), so the obligations are decided inside the domain (its
	// domain errors are spec's TestTruncInt and the Partial witness).
	"trunc_int": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		lo, hi := spec.IntTypeRange(8<<src.Intn(2, "bits"), true)
		return &spec.Attrs{Lo: lo, Hi: hi}, []spec.Shape{GenShape(src, 0, 3, "shape")}, []Domain{Any}
	},
	// quant_int: a scale of 1/8 … 8 (the drawn values then cross the
	// grid's jumps), a zero point in −3 … 3 and INT8's range.
	"quant_int": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		lo, hi := spec.IntTypeRange(8, true)
		c := new(big.Rat).SetFrac64(1, 8)
		c.Mul(c, big.NewRat(1<<src.Intn(7, "scale"), 1))
		return &spec.Attrs{C: c, Bias: big.NewRat(int64(src.Intn(7, "zp"))-3, 1), Lo: lo, Hi: hi}, []spec.Shape{GenShape(src, 0, 3, "shape")}, []Domain{Any}
	},
	"safe_log": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		return &spec.Attrs{Eps: GenRat(src, Positive, "eps").Big()}, []spec.Shape{GenShape(src, 0, 2, "shape")}, []Domain{Any}
	},
	"reduce_sum":  reduceGen,
	"reduce_mean": reduceGen,
	"softmax":     reduceGen,
	"log_softmax": reduceGen,
	"matmul": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		m, k, n := 1+src.Intn(3, "m"), 1+src.Intn(3, "k"), 1+src.Intn(3, "n")
		var a, b spec.Shape
		switch src.Intn(5, "matmul.form") {
		case 0:
			a, b = spec.Shape{m, k}, spec.Shape{k, n}
		case 1:
			a, b = spec.Shape{k}, spec.Shape{k}
		case 2:
			a, b = spec.Shape{k}, spec.Shape{k, n}
		case 3:
			a, b = spec.Shape{m, k}, spec.Shape{k}
		default:
			bt := 1 + src.Intn(2, "batch")
			a, b = spec.Shape{bt, 1, m, k}, spec.Shape{2, k, n}
		}
		return &spec.Attrs{}, []spec.Shape{a, b}, []Domain{Any, Any}
	},
	"linear": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		in, out := 1+src.Intn(3, "in"), 1+src.Intn(3, "out")
		x := spec.Shape{in}
		if src.Intn(2, "batched") == 1 {
			x = spec.Shape{1 + src.Intn(3, "rows"), in}
		}
		return &spec.Attrs{}, []spec.Shape{x, {out, in}, {out}}, []Domain{Any, Any, Any}
	},
	"layer_norm": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		// Lanes of two distinct values with ε = 0 keep σ = |x1−x0|/2
		// rational, so layer_norm can be checked exactly.
		rows := 1 + src.Intn(2, "rows")
		n := 1 + src.Intn(3, "affine")
		shapes := []spec.Shape{{rows, 2}, {2}, {2}}[:n]
		doms := []Domain{Any, Any, Any}[:n]
		return &spec.Attrs{Axis: -1, Eps: new(big.Rat)}, shapes, doms
	},
	"reshape": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 1, 3, "shape")
		return &spec.Attrs{Shape: spec.Shape{s.Size()}}, []spec.Shape{s}, []Domain{Any}
	},
	"flatten": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 1, 3, "shape")
		return &spec.Attrs{Axis: src.Intn(len(s), "axis")}, []spec.Shape{s}, []Domain{Any}
	},
	"permute": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 1, 3, "shape")
		perm := make([]int, len(s))
		for i := range perm {
			perm[i] = i
		}
		for i := len(perm) - 1; i > 0; i-- {
			j := src.Intn(i+1, "perm")
			perm[i], perm[j] = perm[j], perm[i]
		}
		return &spec.Attrs{Perm: perm}, []spec.Shape{s}, []Domain{Any}
	},
	"transpose": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 2, 3, "shape")
		return &spec.Attrs{Axis: src.Intn(len(s), "a1"), Axis2: src.Intn(len(s), "a2")}, []spec.Shape{s}, []Domain{Any}
	},
	"broadcast_to": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		to := GenShape(src, 1, 3, "to")
		drop := src.Intn(len(to)+1, "drop")
		from := to[drop:].Clone()
		for i := range from {
			if src.Intn(2, "one") == 1 {
				from[i] = 1
			}
		}
		return &spec.Attrs{Shape: to}, []spec.Shape{from}, []Domain{Any}
	},
	"slice": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 1, 3, "shape")
		ax := src.Intn(len(s), "axis")
		start := src.Intn(s[ax]+1, "start")
		end := start + src.Intn(s[ax]-start+1, "len")
		return &spec.Attrs{Axis: ax, Start: start, End: end}, []spec.Shape{s}, []Domain{Any}
	},
	"concat": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 1, 3, "shape")
		ax := src.Intn(len(s), "axis")
		n := 1 + src.Intn(3, "parents")
		shapes, doms := make([]spec.Shape, n), make([]Domain, n)
		for i := range shapes {
			shapes[i] = s.Clone()
			shapes[i][ax] = 1 + src.Intn(3, "extent")
		}
		return &spec.Attrs{Axis: ax}, shapes, doms
	},
	"const": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		s := GenShape(src, 0, 2, "shape")
		vals := make([]*big.Rat, s.Size())
		for i := range vals {
			vals[i] = ratAttr(src, "v")
		}
		return &spec.Attrs{Shape: s, Values: vals}, nil, nil
	},
	"rand_uniform": func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		return &spec.Attrs{Shape: GenShape(src, 0, 2, "shape"), Seed: uint64(src.Intn(1000, "seed"))}, nil, nil
	},
	"bernoulli_mask": dropGen,
	"dropout":        dropGen,
	"conv":           windowGen("conv"),
	"conv_transpose": windowGen("conv_transpose"),
	"max_pool":       windowGen("max_pool"),
	"max_pool_nd":    windowGen("max_pool_nd"),
	"avg_pool":       windowGen("avg_pool"),
	"avg_pool_nd":    windowGen("avg_pool_nd"),
}

// windowGen draws a small geometry for a window primitive (spec.Window):
// 1 or 2 spatial axes, kernel 1–3, stride 1–2, dilation 1–2 (where the
// primitive reads it), pads 0–2 per side (symmetric and below the kernel
// for max_pool and avg_pool), ceil_mode and count_include_pad both ways,
// groups 1–2 dividing 1–2 channels per group, an optional batch axis (1-D
// windows) and bias, and spatial extents from the smallest that fits up
// to 2 more (1 more for 2-D windows, which keeps the cases fast). A
// draw the primitive rejects (a pool window of padding only, a
// non-positive conv_transpose extent) falls back to no padding, no ceil
// mode and extents that fit, which every primitive accepts. The values
// come from GenTensor, whose small pool of interesting rationals makes
// ties within a max-pool window frequent.
func windowGen(op string) genFunc {
	conv, convT := op == "conv", op == "conv_transpose"
	torch := op == "max_pool" || op == "avg_pool"
	nd := op == "max_pool_nd" || op == "avg_pool_nd"
	return func(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
		r := 1 + src.Intn(2, "win.rank")
		w := &spec.Window{Kernel: make([]int, r), Stride: make([]int, r), Pads: make([]int, 2*r)}
		if !torch {
			w.Dilation = make([]int, r)
		}
		if convT {
			w.OutputPadding = make([]int, r)
		}
		sp := make([]int, r)
		for d := 0; d < r; d++ {
			k, s := 1+src.Intn(3, "win.kernel"), 1+src.Intn(2, "win.stride")
			w.Kernel[d], w.Stride[d] = k, s
			dl := 1
			if w.Dilation != nil {
				dl = 1 + src.Intn(2, "win.dilation")
				w.Dilation[d] = dl
			}
			if torch {
				p := src.Intn(min(k, 3), "win.padding")
				w.Pads[d], w.Pads[r+d] = p, p
			} else {
				w.Pads[d], w.Pads[r+d] = src.Intn(3, "win.pad_begin"), src.Intn(3, "win.pad_end")
			}
			if convT {
				w.OutputPadding[d] = src.Intn(max(s, dl), "win.output_padding")
			}
			e := dl*(k-1) + 1
			sp[d] = max(1, e-w.Pads[d]-w.Pads[r+d]) + src.Intn(4-r, "win.extent")
		}
		if nd {
			w.CeilMode = src.Intn(2, "win.ceil") == 1
			w.CountIncludePad = op == "avg_pool_nd" && src.Intn(2, "win.count_include_pad") == 1
		}
		var lead []int
		if r == 1 && src.Intn(2, "win.batch") == 1 { // 2-D windows stay small without one
			lead = append(lead, 1+src.Intn(2, "win.batch_extent"))
		}
		var shapes []spec.Shape
		if conv || convT {
			w.Groups = 1 + src.Intn(2, "win.groups")
			cin, cout := w.Groups*(1+src.Intn(2, "win.cin")), w.Groups*(1+src.Intn(2, "win.cout"))
			x := append(append(spec.Shape{}, lead...), cin)
			x = append(x, sp...)
			ws := spec.Shape{cout, cin / w.Groups}
			if convT {
				ws = spec.Shape{cin, cout / w.Groups}
			}
			ws = append(ws, w.Kernel...)
			shapes = []spec.Shape{x, ws}
			if src.Intn(2, "win.bias") == 1 {
				shapes = append(shapes, spec.Shape{cout})
			}
		} else {
			x := append(append(spec.Shape{}, lead...), 1+src.Intn(2, "win.channels"))
			shapes = []spec.Shape{append(x, sp...)}
		}
		a := &spec.Attrs{Window: w}
		if info, err := spec.Info(op); err == nil {
			if _, err := info.InferShape(a, shapes); err != nil {
				x := shapes[0]
				for d := 0; d < r; d++ {
					w.Pads[d], w.Pads[r+d] = 0, 0
					dl := 1
					if w.Dilation != nil {
						dl = w.Dilation[d]
					}
					x[len(x)-r+d] = max(x[len(x)-r+d], dl*(w.Kernel[d]-1)+1)
				}
				w.CeilMode = false
			}
		}
		doms := make([]Domain, len(shapes))
		return a, shapes, doms
	}
}

func reduceGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	s := GenShape(src, 1, 3, "shape")
	return &spec.Attrs{Axis: axisOf(src, s)}, []spec.Shape{s}, []Domain{Any}
}

func dropGen(src Source) (*spec.Attrs, []spec.Shape, []Domain) {
	p := []*big.Rat{big.NewRat(1, 2), big.NewRat(0, 1), big.NewRat(1, 4), big.NewRat(1, 1)}[src.Intn(4, "p")]
	return &spec.Attrs{P: p, Seed: uint64(src.Intn(1000, "seed"))}, []spec.Shape{GenShape(src, 1, 2, "shape")}, []Domain{Any}
}

// Generate draws an application of op.
func Generate(src Source, op string) (*Instance, error) {
	g, ok := generator(op)
	if !ok {
		return nil, fmt.Errorf("no generator for primitive %q", op)
	}
	a, shapes, doms := g(src)
	xs := make([]spec.Tensor[spec.Rat], len(shapes))
	for i, s := range shapes {
		xs[i] = GenTensor(src, s, doms[i], fmt.Sprintf("x%d", i))
	}
	if op == "layer_norm" { // distinct pairs keep 1/σ finite
		for i := 0; i+1 < len(xs[0].Data); i += 2 {
			if xs[0].Data[i].Same(xs[0].Data[i+1]) {
				xs[0].Data[i+1] = xs[0].Data[i+1].Add(spec.NewRat(1, 1))
			}
		}
	}
	regopsFixup(src, op, a, xs)
	return &Instance{Op: op, Attrs: a, Xs: xs, Domains: doms}, nil
}

// HasGenerator reports whether op has a generator.
func HasGenerator(op string) bool {
	_, ok := generator(op)
	return ok
}

// Tangents draws one tangent per parent and one cotangent of the output
// shape for inst.
func Tangents(src Source, inst *Instance, outShape spec.Shape) ([]spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) {
	dxs := make([]spec.Tensor[spec.Rat], len(inst.Xs))
	for i, x := range inst.Xs {
		dxs[i] = GenTensor(src, x.Shape, Any, fmt.Sprintf("dx%d", i))
	}
	return dxs, GenTensor(src, outShape, Any, "delta")
}

// OutShape infers the output shape of inst.
func OutShape(inst *Instance) (spec.Shape, error) {
	info, err := spec.Info(inst.Op)
	if err != nil {
		return nil, err
	}
	in := make([]spec.Shape, len(inst.Xs))
	for i, x := range inst.Xs {
		in[i] = x.Shape
	}
	return info.InferShape(inst.Attrs, in)
}
