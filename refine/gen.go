package refine

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// Kind names a family of generated inputs. Check cycles through the kinds
// it is given, case i using kind i mod len(kinds).
type Kind string

// The input kinds. Magnitudes are chosen so that nothing overflows
// (Σ|terms| stays far below 2^127) except under KindOverflow and
// KindSpecial.
const (
	// KindNormal: random signs, exponents in [-8, 8], random significands.
	KindNormal Kind = "normal"
	// KindWide: exponents spanning many binades ([-60, 55] for factors of
	// products, [-126, 100] for summed values).
	KindWide Kind = "wide"
	// KindSubnormal: subnormals, tiny normals near 2^-126, ±0 and
	// moderate normals, so that products underflow and sums stay in the
	// subnormal range.
	KindSubnormal Kind = "subnormal"
	// KindCancel: exact cancellations: the terms of each output come in
	// pairs t, −t (for products: a duplicated factor against a negated
	// one), plus at most one small residual term.
	KindCancel Kind = "cancel"
	// KindZeros: mostly zeros of both signs (all-negative-zero inputs
	// included).
	KindZeros Kind = "zeros"
	// KindSpecial: normal values with NaNs (quiet and signalling, both
	// signs, random payloads), ±∞ and zeros sprinkled in, so that 0·∞,
	// ∞ − ∞ and NaN propagation occur.
	KindSpecial Kind = "special"
	// KindOverflow: finite values near the top of the range (factors
	// around 2^50…2^70, summed values around 2^120…2^127) with random
	// signs, so that products and partial sums overflow while the exact
	// result may be finite.
	KindOverflow Kind = "overflow"
)

// Kinds lists every input kind, in the order Check cycles through them by
// default.
func Kinds() []Kind {
	return []Kind{KindNormal, KindWide, KindSubnormal, KindCancel, KindZeros, KindSpecial, KindOverflow}
}

// Valid reports whether k is one of the declared kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds() {
		if v == k {
			return true
		}
	}
	return false
}

// Ops lists the primitives Check can generate cases for: every registry
// primitive that a provider other than the reference one implements
// (spec.OpInfo.Providers), in registry order. Each is an accumulating op
// whose term structure this package knows (termShape, randomShapes,
// cancel); a test requires rules for every one.
func Ops() []string {
	var out []string
	for _, info := range spec.Infos() {
		if len(info.Providers) > 0 {
			out = append(out, info.Name)
		}
	}
	return out
}

// rng is a splitmix64 stream.
type rng struct{ s uint64 }

// newRNG returns the stream of case index of op under the run seed,
// started at spec.CaseSeed(seed, "refine/"+op, index): a case depends on
// (seed, op, index) alone, so it can be regenerated alone, and every
// provider of op is checked on the same inputs.
func newRNG(seed uint64, op string, index int) *rng {
	return &rng{s: spec.CaseSeed(seed, "refine/"+op, index)}
}

func (r *rng) next() uint64 {
	x := spec.SplitMix64(r.s)
	r.s += spec.GoldenGamma
	return x
}

// intn returns a uniform integer in [0, n) (n ≥ 1).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// between returns a uniform integer in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// chance reports true with probability num/den.
func (r *rng) chance(num, den int) bool { return r.intn(den) < num }

// normalBits returns a binary32 with a random sign, unbiased exponent e
// and random significand.
func (r *rng) normalBits(e int) uint32 {
	return uint32(r.next()>>63)<<31 | uint32(e+127)<<23 | uint32(r.next())&(1<<23-1)
}

// role distinguishes factors of products from summed values, which get
// different exponent ranges.
type role int

const (
	factor role = iota
	summand
)

// value draws one binary32 of the given kind.
func (r *rng) value(k Kind, ro role) uint32 {
	sign := uint32(r.next()>>63) << 31
	switch k {
	case KindWide:
		if ro == factor {
			return r.normalBits(r.between(-60, 55))
		}
		return r.normalBits(r.between(-126, 100))
	case KindSubnormal:
		switch x := r.intn(10); {
		case x < 4: // subnormal: exponent field 0, non-zero significand
			return sign | (uint32(r.next())&(1<<23-1) | 1)
		case x < 6:
			return r.normalBits(r.between(-126, -110))
		case x < 9:
			return r.normalBits(r.between(-12, 4))
		default:
			return sign
		}
	case KindZeros:
		if r.chance(7, 10) {
			return sign
		}
		return r.normalBits(r.between(-8, 8))
	case KindSpecial:
		switch x := r.intn(40); {
		case x < 2:
			return sign | 0x7F800000 // ±∞
		case x < 3: // quiet NaN, random payload
			return sign | 0x7FC00000 | uint32(r.next())&(1<<22-1)
		case x < 4: // signalling NaN, non-zero payload
			return sign | 0x7F800000 | (uint32(r.next())&(1<<22-1) | 1)
		case x < 7:
			return sign
		}
		return r.normalBits(r.between(-8, 8))
	case KindOverflow:
		if ro == factor {
			return r.normalBits(r.between(50, 70))
		}
		return r.normalBits(r.between(120, 127))
	}
	return r.normalBits(r.between(-8, 8)) // KindNormal, and KindCancel's base values
}

// caseInput is one generated case: the reduce_sum axis and the parents.
type caseInput struct {
	axis   int
	inputs []Bits
}

// generate draws case index of op from seed: its shapes (or opts.Shapes),
// then its values by kind.
func generate(op string, k Kind, seed uint64, index int, opts *Options) (caseInput, error) {
	r := newRNG(seed, op, index)
	var shapes []spec.Shape
	axis := 0
	if opts != nil && opts.Shapes != nil {
		shapes = make([]spec.Shape, len(opts.Shapes))
		for i, s := range opts.Shapes {
			shapes[i] = s.Clone()
		}
		axis = opts.Axis
	} else {
		shapes, axis = randomShapes(r, op)
	}
	info, err := spec.Info(op)
	if err != nil {
		return caseInput{}, err
	}
	if _, err := info.InferShape(&spec.Attrs{Axis: axis}, shapes); err != nil {
		return caseInput{}, fmt.Errorf("refine: shapes %v for %s: %w", shapes, op, err)
	}
	in := make([]Bits, len(shapes))
	for i, s := range shapes {
		ro := summand
		if op == "matmul" || (op == "linear" && i < 2) {
			ro = factor
		}
		n := s.Size()
		d := make([]uint32, n)
		for j := range d {
			d[j] = r.value(k, ro)
		}
		in[i] = Bits{Shape: s, Data: d}
	}
	if k == KindCancel {
		cancel(r, op, axis, in)
	}
	return caseInput{axis: axis, inputs: in}, nil
}

// randomShapes draws parent shapes for op (and the reduce_sum axis), kept
// small so that the exact rational evaluation stays fast.
func randomShapes(r *rng, op string) ([]spec.Shape, int) {
	switch op {
	case "matmul":
		m, k, n := r.between(1, 4), r.between(0, 12), r.between(1, 4)
		switch r.intn(6) {
		case 0:
			return []spec.Shape{{k}, {k}}, 0
		case 1:
			return []spec.Shape{{k}, {k, n}}, 0
		case 2:
			return []spec.Shape{{m, k}, {k}}, 0
		case 3:
			return []spec.Shape{{r.between(1, 3), m, k}, {k, n}}, 0
		case 4:
			return []spec.Shape{{r.between(1, 2), 1, m, k}, {r.between(1, 3), k, n}}, 0
		}
		return []spec.Shape{{m, k}, {k, n}}, 0
	case "linear":
		in, out := r.between(0, 12), r.between(1, 4)
		w, b := spec.Shape{out, in}, spec.Shape{out}
		switch r.intn(3) {
		case 0:
			return []spec.Shape{{in}, w, b}, 0
		case 1:
			return []spec.Shape{{r.between(1, 2), r.between(1, 3), in}, w, b}, 0
		}
		return []spec.Shape{{r.between(1, 4), in}, w, b}, 0
	case "sum":
		switch r.intn(4) {
		case 0:
			return []spec.Shape{{r.between(100, 600)}}, 0
		case 1:
			return []spec.Shape{{}}, 0
		}
		s := make(spec.Shape, r.between(1, 3))
		for i := range s {
			s[i] = r.between(0, 6)
		}
		return []spec.Shape{s}, 0
	}
	// reduce_sum
	s := make(spec.Shape, r.between(1, 3))
	for i := range s {
		s[i] = r.between(1, 9)
	}
	if r.chance(1, 10) {
		s[r.intn(len(s))] = 0
	}
	if r.chance(1, 5) {
		s[r.intn(len(s))] = r.between(20, 40)
	}
	return []spec.Shape{s}, r.between(-len(s), len(s)-1)
}

// cancel rewrites KindCancel inputs so that the terms of every output
// element cancel in pairs t, −t, leaving at most one residual term scaled
// down by 2^-20 (when the term count is odd).
func cancel(r *rng, op string, axis int, in []Bits) {
	switch op {
	case "sum":
		cancelLane(r, in[0].Data, 0, 1, len(in[0].Data))
	case "reduce_sum":
		s := in[0].Shape
		if axis < 0 {
			axis += len(s)
		}
		outer, n, inner := s[:axis].Size(), s[axis], s[axis+1:].Size()
		for o := range outer {
			for c := range inner {
				cancelLane(r, in[0].Data, o*n*inner+c, inner, n)
			}
		}
	case "matmul":
		// The contracted index is A's last axis and B's second-to-last
		// (B's only axis when B is 1-D).
		k := in[0].Shape[len(in[0].Shape)-1]
		n := 1
		if len(in[1].Shape) > 1 {
			n = in[1].Shape[len(in[1].Shape)-1]
		}
		pairs, rest := pairUp(r, k)
		for _, p := range pairs {
			for row := 0; row < len(in[0].Data)/max(k, 1); row++ { // duplicate A[..., p0] into A[..., p1]
				in[0].Data[row*k+p[1]] = in[0].Data[row*k+p[0]]
			}
			for mat := 0; mat < len(in[1].Data)/max(k*n, 1); mat++ { // B[..., p1, :] = −B[..., p0, :]
				for j := range n {
					in[1].Data[mat*k*n+p[1]*n+j] = in[1].Data[mat*k*n+p[0]*n+j] ^ 1<<31
				}
			}
		}
		if rest >= 0 {
			for row := 0; row < len(in[0].Data)/max(k, 1); row++ {
				in[0].Data[row*k+rest] = scaleDown(in[0].Data[row*k+rest])
			}
		}
	case "linear":
		// x[..., i], W[o, i]: duplicate x's column, negate W's column; the
		// bias is the residual, scaled down.
		in0 := in[1].Shape[1]
		out := in[1].Shape[0]
		pairs, rest := pairUp(r, in0)
		for _, p := range pairs {
			for row := 0; row < len(in[0].Data)/max(in0, 1); row++ {
				in[0].Data[row*in0+p[1]] = in[0].Data[row*in0+p[0]]
			}
			for o := range out {
				in[1].Data[o*in0+p[1]] = in[1].Data[o*in0+p[0]] ^ 1<<31
			}
		}
		if rest >= 0 {
			for o := range out {
				in[1].Data[o*in0+rest] = scaleDown(in[1].Data[o*in0+rest])
			}
		}
		for o := range in[2].Data {
			in[2].Data[o] = scaleDown(in[2].Data[o])
		}
	}
}

// cancelLane rewrites the n elements base, base+stride, … of d into
// pairs v, −v at random positions (the odd one out scaled down).
func cancelLane(r *rng, d []uint32, base, stride, n int) {
	pairs, rest := pairUp(r, n)
	for _, p := range pairs {
		d[base+p[1]*stride] = d[base+p[0]*stride] ^ 1<<31
	}
	if rest >= 0 {
		d[base+rest*stride] = scaleDown(d[base+rest*stride])
	}
}

// pairUp shuffles 0…n−1 and pairs consecutive entries; rest is the
// unpaired index (−1 when n is even).
func pairUp(r *rng, n int) ([][2]int, int) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	var pairs [][2]int
	for i := 0; i+1 < n; i += 2 {
		pairs = append(pairs, [2]int{p[i], p[i+1]})
	}
	rest := -1
	if n%2 == 1 {
		rest = p[n-1]
	}
	return pairs, rest
}

// scaleDown multiplies a normal binary32 of exponent ≥ -100 by 2^-20
// exactly (the generators' base values have exponents in [-8, 8]).
func scaleDown(b uint32) uint32 {
	f := math.Float32frombits(b)
	return math.Float32bits(float32(math.Ldexp(float64(f), -20)))
}

// GenerateInputs returns the cases CheckOptions(b, op, o) would check,
// with only their provenance and inputs filled in and nothing run: case i
// has Index i, Kind o.Kinds[i mod len(o.Kinds)] (default Kinds()), Seed
// o.Seed, Op op, and Axis and Inputs drawn from spec.CaseSeed(o.Seed,
// "refine/"+op, i) exactly as CheckOptions draws them. A verifier uses it
// to bind recorded inputs to the seed at the cost of generation alone.
func GenerateInputs(op string, o Options) ([]Case, error) {
	if !slices.Contains(Ops(), op) {
		return nil, fmt.Errorf("refine: no case generator for %q (supported: %s)", op, strings.Join(Ops(), ", "))
	}
	if o.Cases < 0 {
		return nil, fmt.Errorf("refine: negative case count %d", o.Cases)
	}
	kinds, err := inputKinds(o.Kinds)
	if err != nil {
		return nil, err
	}
	out := make([]Case, o.Cases)
	for i := range out {
		k := kinds[i%len(kinds)]
		in, err := generate(op, k, o.Seed, i, &o)
		if err != nil {
			return nil, err
		}
		out[i] = Case{Index: i, Kind: k, Seed: o.Seed, Op: op, Axis: in.axis, Inputs: in.inputs}
	}
	return out, nil
}

// inputKinds resolves an options' list of input kinds: nil means every
// kind (Kinds), an empty list or an unknown kind is an error.
func inputKinds(kinds []Kind) ([]Kind, error) {
	if kinds == nil {
		kinds = Kinds()
	}
	if len(kinds) == 0 {
		return nil, errors.New("refine: no input kinds")
	}
	for _, k := range kinds {
		if !k.Valid() {
			return nil, fmt.Errorf("refine: unknown input kind %q", k)
		}
	}
	return kinds, nil
}
