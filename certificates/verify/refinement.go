package verify

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// decodeBits checks and converts a certificate bit tensor.
func decodeBits(t certificates.BitsTensor, file, field string) (refine.Bits, error) {
	s := spec.Shape(t.Shape)
	n, err := s.Check(0)
	if err != nil {
		return refine.Bits{}, certificates.FieldErr(file, field+".shape", "%v", err)
	}
	if len(t.Bits) != n {
		return refine.Bits{}, certificates.FieldErr(file, field+".bits", "%d encodings for shape %v (want %d)", len(t.Bits), s, n)
	}
	out := refine.Bits{Shape: s.Clone(), Data: make([]uint32, n)}
	for i, v := range t.Bits {
		if err := certificates.CheckBits(file, fmt.Sprintf("%s.bits[%d]", field, i), v); err != nil {
			return out, err
		}
		u, _ := strconv.ParseUint(v[2:], 16, 32)
		out.Data[i] = uint32(u)
	}
	return out, nil
}

// The verifier's own arithmetic, independent of refine.

// twoPow returns 2^e exactly.
func twoPow(e int) *big.Rat {
	if e >= 0 {
		return new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(e)))
	}
	return new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(-e)))
}

// binary32Value decodes an IEEE 754 binary32 encoding into its exact value
// from its fields: (−1)^s · 1.f · 2^(e−127) for normal numbers,
// (−1)^s · 0.f · 2^-126 for subnormals. ok is false for NaN and ±∞.
func binary32Value(u uint32) (v *big.Rat, ok bool) {
	exp := int(u>>23) & 0xff
	frac := int64(u & 0x7fffff)
	if exp == 0xff {
		return new(big.Rat), false
	}
	var m int64
	var e int
	if exp == 0 {
		m, e = frac, -149
	} else {
		m, e = frac|1<<23, exp-150
	}
	v = new(big.Rat).Mul(new(big.Rat).SetInt64(m), twoPow(e))
	if u>>31 == 1 {
		v.Neg(v)
	}
	return v, true
}

func finite32(u uint32) bool { return (u>>23)&0xff != 0xff }

func nan32(u uint32) bool { return (u>>23)&0xff == 0xff && u&0x7fffff != 0 }

// maxTerms bounds g for which γ_g and the underflow factor are valid:
// (n−1)·u ≤ 1/2.
const maxTerms = 1 << 23

// gammaOf is γ_g = g·u/(1 − g·u) = g/(2^24 − g), u = 2^-24.
func gammaOf(g int) (*big.Rat, error) {
	if g < 0 || g > maxTerms {
		return nil, fmt.Errorf("γ_%d is outside 0 ≤ g ≤ 2^23", g)
	}
	return new(big.Rat).SetFrac(big.NewInt(int64(g)), big.NewInt(1<<24-int64(g))), nil
}

// boundOf is B = γ_g·Σ|terms| + p·2^-149.
func boundOf(gamma *big.Rat, p int, absSum *big.Rat) *big.Rat {
	b := new(big.Rat).Mul(gamma, absSum)
	return b.Add(b, new(big.Rat).Mul(new(big.Rat).SetInt64(int64(p)), twoPow(-149)))
}

// termCounts returns n (terms per output element), p (rounded products)
// and g (most roundings of one term) for op on parents of the given
// shapes, as refine's package documentation states them: matmul n = g =
// p = k; linear n = g = in+1, p = in; sum and reduce_sum g = n−1, p = 0.
func termCounts(op string, axis int, shapes []spec.Shape) (n, p, g int, err error) {
	switch op {
	case "matmul":
		k := shapes[0][len(shapes[0])-1]
		return k, k, k, nil
	case "linear":
		in := shapes[1][1]
		return in + 1, in, in + 1, nil
	case "sum":
		n := shapes[0].Size()
		return n, 0, max(n-1, 0), nil
	case "reduce_sum":
		if axis < 0 {
			axis += len(shapes[0])
		}
		n := shapes[0][axis]
		return n, 0, max(n-1, 0), nil
	}
	return 0, 0, 0, fmt.Errorf("no refinement rules for %q", op)
}

// applyOver runs the registry's forward rule for op over T on inputs
// converted by conv.
func applyOver[T spec.Scalar[T]](op string, axis int, in []refine.Bits, conv func(uint32) T) (spec.Tensor[T], error) {
	prim, err := spec.Default[T]().Lookup(op)
	if err != nil {
		return spec.Tensor[T]{}, err
	}
	xs := make([]spec.Tensor[T], len(in))
	for i, b := range in {
		t := spec.Tensor[T]{Shape: b.Shape.Clone(), Data: make([]T, len(b.Data))}
		for k, u := range b.Data {
			t.Data[k] = conv(u)
		}
		xs[i] = t
	}
	return prim.Apply(&spec.Attrs{Axis: axis}, xs)
}

// cmpRat compares a recorded rational with the recomputed one, as text
// (the recorded spelling must be the canonical one).
func cmpRat(file, field, rec string, got *big.Rat) error {
	if err := certificates.CheckRat(file, field, rec); err != nil {
		return err
	}
	if want := got.RatString(); rec != want {
		return certificates.FieldErr(file, field, "recorded %s, recomputed %s", certificates.Truncate(rec), certificates.Truncate(want))
	}
	return nil
}

func cmpStr(file, field, rec, want string) error {
	if rec != want {
		return certificates.FieldErr(file, field, "recorded %q, recomputed %q", certificates.Truncate(rec), certificates.Truncate(want))
	}
	return nil
}

func cmpInt(file, field string, rec, want int) error {
	if rec != want {
		return certificates.FieldErr(file, field, "recorded %d, recomputed %d", rec, want)
	}
	return nil
}

// refinementEnv carries the providers the refinement certificates are
// verified with (the suite's: certificates.Suite.ProviderSet).
type refinementEnv struct {
	providers *backend.Providers
}

func (e refinementEnv) verifyFile(file string, data []byte, m *certificates.Manifest) (int, error) {
	var f certificates.RefinementFile
	if err := certificates.DecodeStrict(file, data, &f); err != nil {
		return 0, err
	}
	return e.verify(file, &f, m)
}

// verify re-derives every case of a refinement certificate without
// trusting a recorded result.
//
//   - The capsule is resolved anew from provider and op (checked_cpu's
//     selection for reference, fast_cpu.OP of the fast catalog) and bound
//     through the providers; op, capsule, policy and evidence must match.
//   - The inputs are regenerated from the manifest's seed (refine's
//     deterministic generator alone, refine.GenerateInputs: nothing of
//     the producer's evaluation runs) and must equal the recorded bits,
//     so that seed and inputs are bound to each other.
//   - The provider is re-executed on the recorded inputs and its output
//     bits compared with the recorded ones.
//   - Every element's exact value and Σ|terms| are recomputed with the
//     registry's forward rule over spec.Rat on the inputs decoded here
//     from their bit fields (non-finite inputs read as 0), the term class
//     with the forward rule over spec.F64, the replay with spec.Binary32.
//   - The bound is recomputed with this package's own γ_g = g/(2^24 − g)
//     and p·2^-149 (the term counts of refine's documentation), then
//     error and ratio, and error ≤ bound is checked in big.Rat; a
//     fixed-left capsule must equal the replay bit for bit.
//   - The rounding bound that decided (rounding_bound) is derived anew
//     (checkRoundingBound) and must equal the recorded one.
//   - Only elements under the class and overflow rules (NaN, ∞ and
//     overflow cases) are re-derived by refine.Recheck on the case
//     reconstructed from the certificate: that one rule family shares code
//     with the producer.
func (e refinementEnv) verify(file string, f *certificates.RefinementFile, m *certificates.Manifest) (int, error) {
	for _, n := range []struct{ field, v string }{
		{"op", f.Op}, {"provider", f.Provider}, {"capsule", f.Capsule}, {"policy", f.Policy},
		{"evidence", f.Evidence}, {"worst_float", f.WorstFloat},
	} {
		if err := certificates.CheckName(file, n.field, n.v); err != nil {
			return 0, err
		}
	}
	if !slices.Contains(refine.Ops(), f.Op) {
		return 0, certificates.FieldErr(file, "op", "%q has no refinement rules (known: %v)", f.Op, refine.Ops())
	}
	if !certificates.KnownProvider(f.Provider) {
		return 0, certificates.FieldErr(file, "provider", "unknown provider %q (known: %v, %v)", f.Provider, certificates.Providers(), certificates.OptionalProviders())
	}
	if want := certificates.RefinementPath(f.Provider, f.Op); file != want {
		return 0, certificates.FieldErr(file, "op", "a certificate of %s.%s must be stored as %s", f.Provider, f.Op, want)
	}
	capsule, err := certificates.RefinementCapsule(f.Provider, f.Op)
	if err != nil {
		return 0, certificates.FieldErr(file, "capsule", "%v", err)
	}
	if err := cmpStr(file, "capsule", f.Capsule, capsule.Name); err != nil {
		return 0, err
	}
	if err := cmpStr(file, "policy", f.Policy, string(capsule.Reduction)); err != nil {
		return 0, err
	}
	ob, err := refine.Discharge(capsule, backend.AssuranceChecked)
	if err != nil {
		return 0, certificates.FieldErr(file, "evidence", "%v", err)
	}
	if err := cmpStr(file, "evidence", f.Evidence, string(ob.Evidence)); err != nil {
		return 0, err
	}
	if err := checkRoundingBound(file, f); err != nil {
		return 0, err
	}
	if f.Seed != m.Seed {
		return 0, seedErr(certificates.FieldErr(file, "seed", "%d, the manifest's seed is %d", f.Seed, m.Seed))
	}
	if len(f.Cases) == 0 || len(f.Cases) != m.Cases {
		return 0, certificates.FieldErr(file, "cases", "%d cases, the manifest promises %d", len(f.Cases), m.Cases)
	}
	// Cheap structural checks first, so that a file of junk cases is
	// rejected before the inputs are regenerated.
	kinds := refine.Kinds()
	for i := range f.Cases {
		c := &f.Cases[i]
		at := fmt.Sprintf("cases[%d]", i)
		if err := cmpInt(file, at+".index", c.Index, i); err != nil {
			return 0, err
		}
		if err := cmpStr(file, at+".input_kind", c.InputKind, string(kinds[i%len(kinds)])); err != nil {
			return 0, err
		}
	}
	ps := e.providers
	b, err := ps.Bind(capsule)
	var missing *backend.MissingProviderError
	switch {
	case err != nil && slices.Contains(certificates.OptionalProviders(), f.Provider) && errors.As(err, &missing):
		// An optional provider absent here (no GPU): the case is
		// re-derived from its recorded output, not re-executed.
		b = nil
	case err != nil:
		return 0, certificates.FieldErr(file, "capsule", "cannot bind %s: %v", capsule.Name, err)
	}
	gen, err := refine.GenerateInputs(f.Op, refine.Options{Cases: m.Cases, Seed: m.Seed})
	if err != nil {
		return 0, certificates.FieldErr(file, "cases", "cannot regenerate the inputs: %v", err)
	}
	fileWorst, fileWorstCase := new(big.Rat), -1
	for i := range f.Cases {
		c := &f.Cases[i]
		worst, worstEl, err := e.verifyCase(file, i, f, c, &gen[i], b, capsule, m)
		if err != nil {
			return 0, err
		}
		if worstEl >= 0 && (fileWorstCase < 0 || worst.Cmp(fileWorst) > 0) {
			fileWorst, fileWorstCase = worst, i
		}
	}
	if err := cmpRat(file, "worst", f.Worst, fileWorst); err != nil {
		return 0, err
	}
	if err := cmpInt(file, "worst_case", f.WorstCase, fileWorstCase); err != nil {
		return 0, err
	}
	if err := cmpStr(file, "worst_float", f.WorstFloat, certificates.DisplayFloat(fileWorst)); err != nil {
		return 0, err
	}
	return len(f.Cases), nil
}

// refinementCheck is one refinement case under verification: the file
// and case it belongs to, and what the verifier has decoded and re-derived
// of it so far.
type refinementCheck struct {
	e       refinementEnv
	file    string
	at      string // the case's JSON path, cases[i]
	f       *certificates.RefinementFile
	c       *certificates.RefinementCase
	capsule backend.Capsule
	in      []refine.Bits // the recorded inputs, bound to the seed
	shapes  []spec.Shape
	out     refine.Bits // the recorded output
	gamma   *big.Rat
	p       int      // rounded products per element
	replay  []uint32 // the binary32 replay, when the case has one
}

func (r *refinementCheck) fail(field, format string, args ...any) error {
	return certificates.FieldErr(r.file, r.at+field, format, args...)
}

// verifyCase re-derives one case and returns its worst ratio and element.
// Each claim kind of the case has its function, checked in this order:
// the header and the inputs (bound to the seed), the provider's output
// (re-executed), the term counts and γ, the binary32 replay, every
// element, the case's worst, and the class and overflow rules (Recheck).
func (e refinementEnv) verifyCase(file string, i int, f *certificates.RefinementFile, c *certificates.RefinementCase, gen *refine.Case,
	b *backend.Binding, capsule backend.Capsule, m *certificates.Manifest) (*big.Rat, int, error) {
	r := &refinementCheck{e: e, file: file, at: fmt.Sprintf("cases[%d]", i), f: f, c: c, capsule: capsule}
	if err := r.checkHeader(i, gen); err != nil {
		return nil, 0, err
	}
	nonFinite, err := r.checkInputs(gen)
	if err != nil {
		return nil, 0, err
	}
	if err := r.checkOutput(b); err != nil {
		return nil, 0, err
	}
	if err := r.checkTermCounts(); err != nil {
		return nil, 0, err
	}
	sem, err := r.semantics()
	if err != nil {
		return nil, 0, err
	}
	fixed := capsule.Reduction == backend.ReductionFixedLeft
	if err := r.checkReplay(fixed || nonFinite); err != nil {
		return nil, 0, err
	}
	if len(c.Elements) != len(r.out.Data) {
		return nil, 0, r.fail(".elements", "%d elements for %d outputs", len(c.Elements), len(r.out.Data))
	}
	worst, worstEl := new(big.Rat), -1
	recheck := false
	for j := range c.Elements {
		ratio, rule, err := r.checkElement(j, sem, fixed)
		if err != nil {
			return nil, 0, err
		}
		recheck = recheck || rule == refine.RuleClass || rule == refine.RuleOverflow
		if worstEl < 0 || ratio.Cmp(worst) > 0 {
			worst, worstEl = ratio, j
		}
	}
	if err := cmpRat(file, r.at+".worst", c.Worst, worst); err != nil {
		return nil, 0, err
	}
	if err := cmpInt(file, r.at+".worst_element", c.WorstElement, worstEl); err != nil {
		return nil, 0, err
	}
	if recheck {
		if err := r.recheck(m.Seed, worst, worstEl); err != nil {
			return nil, 0, err
		}
	}
	return worst, worstEl, nil
}

// checkHeader checks the case's index, its names against the file's and
// the generator's, its axis and its number of inputs.
func (r *refinementCheck) checkHeader(i int, gen *refine.Case) error {
	f, c := r.f, r.c
	if err := cmpInt(r.file, r.at+".index", c.Index, i); err != nil {
		return err
	}
	for _, n := range []struct{ field, rec, want string }{
		{".op", c.Op, f.Op}, {".provider", c.Provider, f.Provider}, {".capsule", c.Capsule, f.Capsule},
		{".policy", c.Policy, f.Policy}, {".input_kind", c.InputKind, string(gen.Kind)},
	} {
		if err := certificates.CheckName(r.file, r.at+n.field, n.rec); err != nil {
			return err
		}
		if err := cmpStr(r.file, r.at+n.field, n.rec, n.want); err != nil {
			return err
		}
	}
	if c.Axis != gen.Axis {
		return r.fail(".axis", "%d, the seed generates %d", c.Axis, gen.Axis)
	}
	if len(c.Inputs) != len(gen.Inputs) {
		return r.fail(".inputs", "%d inputs, the seed generates %d", len(c.Inputs), len(gen.Inputs))
	}
	return nil
}

// checkInputs decodes the recorded inputs and binds them to the ones the
// seed generates, bit for bit; nonFinite says whether one is NaN or ±∞.
func (r *refinementCheck) checkInputs(gen *refine.Case) (nonFinite bool, err error) {
	c := r.c
	r.in = make([]refine.Bits, len(c.Inputs))
	r.shapes = make([]spec.Shape, len(c.Inputs))
	for k := range c.Inputs {
		field := fmt.Sprintf("%s.inputs[%d]", r.at, k)
		x, err := decodeBits(c.Inputs[k], r.file, field)
		if err != nil {
			return false, err
		}
		g := gen.Inputs[k]
		if !x.Shape.Equal(g.Shape) {
			return false, certificates.FieldErr(r.file, field+".shape", "%v, the seed generates %v", x.Shape, g.Shape)
		}
		for j := range x.Data {
			if x.Data[j] != g.Data[j] {
				return false, certificates.FieldErr(r.file, fmt.Sprintf("%s.bits[%d]", field, j), "0x%08x, the seed generates 0x%08x", x.Data[j], g.Data[j])
			}
			nonFinite = nonFinite || !finite32(x.Data[j])
		}
		r.in[k], r.shapes[k] = x, x.Shape
	}
	return nonFinite, nil
}

// checkOutput decodes the recorded output, checks its shape against the
// op's shape rule and re-executes the provider on the recorded inputs
// (b nil: re-derivation only, see OptionalProviders).
func (r *refinementCheck) checkOutput(b *backend.Binding) error {
	f, c := r.f, r.c
	info, err := spec.Info(f.Op)
	if err != nil {
		return r.fail(".op", "%v", err)
	}
	outShape, err := info.InferShape(&spec.Attrs{Axis: c.Axis}, r.shapes)
	if err != nil {
		return r.fail(".inputs", "%v", err)
	}
	out, err := decodeBits(c.Output, r.file, r.at+".output")
	if err != nil {
		return err
	}
	if !out.Shape.Equal(outShape) {
		return r.fail(".output.shape", "%v, the op gives %v", out.Shape, outShape)
	}
	r.out = out
	switch {
	case b == nil:
		// Re-derivation only (see OptionalProviders).
		return nil
	case slices.Contains(certificates.OptionalProviders(), f.Provider):
		return r.reexecuteOnDevice(b)
	}
	return r.reexecute(b)
}

// reexecuteOnDevice re-executes an optional provider on the device: the
// new output must satisfy the case's rule on its own; its bits may differ
// from the record's (implementation-defined order).
func (r *refinementCheck) reexecuteOnDevice(b *backend.Binding) error {
	re, err := refine.Evaluate(b, r.f.Op, r.c.Axis, r.in)
	if err != nil {
		return r.fail(".output", "re-executing %s failed: %v", r.capsule.Name, err)
	}
	if re.Failure != nil {
		return r.fail(".output", "provider %s re-executed on the recorded inputs does not refine: %v", r.f.Provider, re.Failure)
	}
	return nil
}

// reexecute re-executes the provider on the recorded inputs and requires
// the recorded output bits.
func (r *refinementCheck) reexecute(b *backend.Binding) error {
	xs := make([]spec.Tensor[spec.F32], len(r.in))
	for k, x := range r.in {
		t := spec.Tensor[spec.F32]{Shape: x.Shape.Clone(), Data: make([]spec.F32, len(x.Data))}
		for j, u := range x.Data {
			t.Data[j] = spec.F32(math.Float32frombits(u))
		}
		xs[k] = t
	}
	y, err := b.Execute(&spec.Attrs{Axis: r.c.Axis}, xs)
	if err != nil {
		return r.fail(".output", "re-executing %s failed: %v", r.capsule.Name, err)
	}
	out := r.out
	if len(y.Data) != len(out.Data) {
		return r.fail(".output.bits", "%d recorded, the provider re-executed gives %d", len(out.Data), len(y.Data))
	}
	for j, v := range y.Data {
		if got := math.Float32bits(float32(v)); got != out.Data[j] {
			return r.fail(fmt.Sprintf(".output.bits[%d]", j), "recorded 0x%08x, provider %s re-executed on the recorded inputs gives 0x%08x (op %s, element %d)",
				out.Data[j], r.f.Provider, got, r.f.Op, j)
		}
	}
	return nil
}

// checkTermCounts recomputes n, p, g and γ_g with this package's own
// formulas and compares them with the record.
func (r *refinementCheck) checkTermCounts() error {
	c := r.c
	n, p, g, err := termCounts(r.f.Op, c.Axis, r.shapes)
	if err != nil {
		return r.fail(".op", "%v", err)
	}
	gamma, err := gammaOf(g)
	if err != nil {
		return r.fail(".rounds", "%v", err)
	}
	for _, x := range []struct {
		field     string
		rec, want int
	}{{".terms", c.Terms, n}, {".products", c.Products, p}, {".rounds", c.Rounds, g}} {
		if err := cmpInt(r.file, r.at+x.field, x.rec, x.want); err != nil {
			return err
		}
	}
	if err := cmpRat(r.file, r.at+".gamma", c.Gamma, gamma); err != nil {
		return err
	}
	r.gamma, r.p = gamma, p
	return nil
}

// refinementSemantics are the values the registry's forward rule gives
// on the inputs decoded from their bits: exact, over their absolute
// values (Σ|terms|), and over float64 (the class of the terms).
type refinementSemantics struct {
	exact, abs spec.Tensor[spec.Rat]
	class      spec.Tensor[spec.F64]
}

func (r *refinementCheck) semantics() (*refinementSemantics, error) {
	op, axis := r.f.Op, r.c.Axis
	exact, err := applyOver(op, axis, r.in, func(u uint32) spec.Rat { v, _ := binary32Value(u); return spec.RatFromBig(v) })
	if err != nil {
		return nil, r.fail(".inputs", "exact semantics: %v", err)
	}
	abs, err := applyOver(op, axis, r.in, func(u uint32) spec.Rat { v, _ := binary32Value(u &^ (1 << 31)); return spec.RatFromBig(v) })
	if err != nil {
		return nil, r.fail(".inputs", "exact semantics of |inputs|: %v", err)
	}
	class, err := applyOver(op, axis, r.in, func(u uint32) spec.F64 { return spec.F64(math.Float32frombits(u)) })
	if err != nil {
		return nil, r.fail(".inputs", "class evaluation: %v", err)
	}
	return &refinementSemantics{exact: exact, abs: abs, class: class}, nil
}

// checkReplay recomputes the binary32 replay when the case needs one
// (a fixed-left capsule or a non-finite input) and requires the recorded
// bits; a case that needs none must record none.
func (r *refinementCheck) checkReplay(needed bool) error {
	c := r.c
	if !needed {
		if c.Replay != nil {
			return r.fail(".replay", "present, but this case has no binary32 replay (implementation-defined capsule, finite inputs)")
		}
		return nil
	}
	rp, err := applyOver(r.f.Op, c.Axis, r.in, spec.Binary32FromBits)
	if err != nil {
		return r.fail(".inputs", "binary32 replay: %v", err)
	}
	if c.Replay == nil {
		return r.fail(".replay", "missing (a fixed-left capsule or a non-finite input needs the binary32 replay)")
	}
	rec, err := decodeBits(*c.Replay, r.file, r.at+".replay")
	if err != nil {
		return err
	}
	if !rec.Shape.Equal(rp.Shape) || len(rec.Data) != len(rp.Data) {
		return r.fail(".replay.shape", "%v, the replay gives %v", rec.Shape, rp.Shape)
	}
	r.replay = make([]uint32, len(rp.Data))
	for j, v := range rp.Data {
		r.replay[j] = v.Bits()
		if r.replay[j] != rec.Data[j] {
			return r.fail(fmt.Sprintf(".replay.bits[%d]", j), "recorded 0x%08x, the binary32 replay gives 0x%08x", rec.Data[j], r.replay[j])
		}
	}
	return nil
}

// termClass is the order-independent class of a float64 evaluation.
func termClass(v float64) refine.Class {
	switch {
	case math.IsNaN(v):
		return refine.ClassNaN
	case math.IsInf(v, 1):
		return refine.ClassPosInf
	case math.IsInf(v, -1):
		return refine.ClassNegInf
	}
	return refine.ClassFinite
}

// checkElement re-derives element j: its class, exact value and Σ|terms|,
// its rule with bound, error and ratio, and the classes the rule admits.
// It returns the element's ratio and rule.
func (r *refinementCheck) checkElement(j int, sem *refinementSemantics, fixed bool) (*big.Rat, refine.Rule, error) {
	el := &r.c.Elements[j]
	ef := fmt.Sprintf("%s.elements[%d]", r.at, j)
	if err := cmpInt(r.file, ef+".index", el.Index, j); err != nil {
		return nil, "", err
	}
	cls := termClass(float64(sem.class.Data[j]))
	if err := cmpStr(r.file, ef+".class", el.Class, certificates.ClassName(cls)); err != nil {
		return nil, "", err
	}
	s, sAbs := sem.exact.Data[j].Big(), sem.abs.Data[j].Big()
	if err := cmpRat(r.file, ef+".exact", el.Exact, s); err != nil {
		return nil, "", err
	}
	if err := cmpRat(r.file, ef+".abs_sum", el.AbsSum, sAbs); err != nil {
		return nil, "", err
	}
	d, err := r.judge(j, cls, s, sAbs, fixed)
	if err != nil {
		return nil, "", err
	}
	if err := cmpStr(r.file, ef+".rule", el.Rule, string(d.rule)); err != nil {
		return nil, "", err
	}
	for _, x := range []struct {
		name string
		rec  string
		want *big.Rat
	}{{"bound", el.Bound, d.bound}, {"error", el.Error, d.err}, {"ratio", el.Ratio, d.ratio}} {
		if err := cmpRat(r.file, ef+"."+x.name, x.rec, x.want); err != nil {
			return nil, "", err
		}
	}
	if err := certificates.CheckName(r.file, ef+".ratio_float", el.RatioFloat); err != nil {
		return nil, "", err
	}
	if err := cmpStr(r.file, ef+".ratio_float", el.RatioFloat, certificates.DisplayFloat(d.ratio)); err != nil {
		return nil, "", err
	}
	got := r.out.Data[j]
	if d.rule == refine.RuleBound && d.err.Cmp(d.bound) > 0 {
		return nil, "", r.fail(fmt.Sprintf(".elements[%d].error", j), "|provider − exact| = %s exceeds the bound %s (op %s, provider %s, capsule %s, element %d: provider 0x%08x, exact %s)",
			certificates.Truncate(d.err.RatString()), certificates.Truncate(d.bound.RatString()), r.f.Op, r.f.Provider, r.f.Capsule, j, got, certificates.Truncate(s.RatString()))
	}
	if err := r.checkAllowed(j, d.rule); err != nil {
		return nil, "", err
	}
	return d.ratio, d.rule, nil
}

// judgement is an element's rule and the bound, error and ratio the
// verifier derives for it (zero where the rule has none).
type judgement struct {
	rule              refine.Rule
	bound, err, ratio *big.Rat
}

// judge decides element j's rule from the capsule's policy, the class of
// its terms and the provider's output, and derives bound, error and
// ratio; a fixed-left capsule must equal the replay bit for bit.
func (r *refinementCheck) judge(j int, cls refine.Class, s, sAbs *big.Rat, fixed bool) (judgement, error) {
	zero := new(big.Rat)
	d := judgement{bound: zero, err: zero, ratio: zero}
	got := r.out.Data[j]
	gotV, gotFinite := binary32Value(got)
	switch {
	case fixed:
		d.rule = refine.RuleBitExact
		if cls == refine.ClassFinite && gotFinite {
			d.err = new(big.Rat).Abs(new(big.Rat).Sub(gotV, s))
		}
		if got != r.replay[j] && !(nan32(got) && nan32(r.replay[j])) {
			return d, r.fail(fmt.Sprintf(".output.bits[%d]", j), "provider %s gives 0x%08x, the binary32 replay 0x%08x: a fixed-left capsule must match it bit for bit (op %s, element %d)",
				r.f.Provider, got, r.replay[j], r.f.Op, j)
		}
	case cls != refine.ClassFinite:
		d.rule = refine.RuleClass
	case !gotFinite:
		d.rule = refine.RuleOverflow
		d.bound = boundOf(r.gamma, r.p, sAbs)
	default:
		d.rule = refine.RuleBound
		d.bound = boundOf(r.gamma, r.p, sAbs)
		d.err = new(big.Rat).Abs(new(big.Rat).Sub(gotV, s))
		if d.bound.Sign() > 0 {
			d.ratio = new(big.Rat).Quo(d.err, d.bound)
		}
	}
	return d, nil
}

// checkAllowed checks element j's admitted classes: listed, known and
// holding the provider's class under the class and overflow rules, absent
// under any other.
func (r *refinementCheck) checkAllowed(j int, rule refine.Rule) error {
	el := &r.c.Elements[j]
	got := r.out.Data[j]
	if rule != refine.RuleClass && rule != refine.RuleOverflow {
		if len(el.Allowed) != 0 {
			return r.fail(fmt.Sprintf(".elements[%d].allowed", j), "present under rule %s", rule)
		}
		return nil
	}
	if len(el.Allowed) == 0 {
		return r.fail(fmt.Sprintf(".elements[%d].allowed", j), "missing: the %s rule lists the classes it admits", rule)
	}
	ok := false
	for k, a := range el.Allowed {
		ac, known := certificates.ClassOfName(a)
		if !known {
			return r.fail(fmt.Sprintf(".elements[%d].allowed[%d]", j, k), "unknown class %q", certificates.Truncate(a))
		}
		ok = ok || ac == refine.ClassOf(got)
	}
	if !ok {
		return r.fail(fmt.Sprintf(".elements[%d].allowed", j), "provider gives %s (0x%08x), not among the admitted classes (op %s, provider %s, element %d)",
			certificates.ClassName(refine.ClassOf(got)), got, r.f.Op, r.f.Provider, j)
	}
	return nil
}

// recheck re-derives the class and overflow rules with refine.Recheck on
// the case reconstructed from the certificate.
func (r *refinementCheck) recheck(seed uint64, worst *big.Rat, worstEl int) error {
	rc, err := reconstructCase(r.c, r.in, r.out, r.replay, seed, r.gamma, worst, worstEl)
	if err != nil {
		return r.fail("", "%v", err)
	}
	if err := refine.Recheck(rc, backend.FastCatalog(), r.e.providers); err != nil {
		return r.fail("", "refine.Recheck (class and overflow rules): %v", err)
	}
	return nil
}

// reconstructCase rebuilds the refine.Case a certificate case records,
// from fields the verifier has already checked, for refine.Recheck.
func reconstructCase(c *certificates.RefinementCase, in []refine.Bits, out refine.Bits, replay []uint32, seed uint64, gamma, worst *big.Rat, worstEl int) (refine.Case, error) {
	rc := refine.Case{
		Index: c.Index, Kind: refine.Kind(c.InputKind), Seed: seed,
		Op: c.Op, Provider: c.Provider, Capsule: c.Capsule, Policy: backend.Reduction(c.Policy), Axis: c.Axis,
		Terms: c.Terms, Products: c.Products, Rounds: c.Rounds, Gamma: spec.RatFromBig(gamma),
		Inputs: in, Output: out, Worst: spec.RatFromBig(worst), WorstElement: worstEl,
	}
	rc.WorstFloat = rc.Worst.Float64()
	if replay != nil {
		rc.Replay = &refine.Bits{Shape: out.Shape.Clone(), Data: replay}
	}
	for _, el := range c.Elements {
		cls, _ := certificates.ClassOfName(el.Class)
		re := refine.Element{Index: el.Index, Rule: refine.Rule(el.Rule), Class: cls}
		for _, x := range []struct {
			v   string
			dst *spec.Rat
		}{{el.Exact, &re.Exact}, {el.AbsSum, &re.AbsSum}, {el.Bound, &re.Bound}, {el.Error, &re.Error}, {el.Ratio, &re.Ratio}} {
			r, ok := new(big.Rat).SetString(x.v)
			if !ok {
				return rc, fmt.Errorf("malformed rational %q", certificates.Truncate(x.v))
			}
			*x.dst = spec.RatFromBig(r)
		}
		for _, a := range el.Allowed {
			ac, _ := certificates.ClassOfName(a)
			re.Allowed = append(re.Allowed, ac)
		}
		rc.Elements = append(rc.Elements, re)
	}
	return rc, nil
}

// checkRoundingBound derives which a-priori bound decides a refinement
// file's bound and overflow rules, and with what inputs, and requires the
// recorded rounding_bound to say the same, field by field:
//
//   - kind: every case applies one primitive to binary32 data, so its
//     graph has one rounded node whose inputs carry no error; the
//     first-order bound Σ mag(A)·ē then has one term, adjoint 1 times the
//     node's own local bound, which is the classic bound this verifier
//     recomputes (γ_g·Σ|terms| + p·2^-149): the classic bound decides, and
//     a file naming the first-order one claims a bound nothing computed;
//   - format: the inputs and output are binary32 encodings (bits32), so
//     binary32;
//   - profile and ulps: the op's registry rules are exact over the
//     rationals (a sum of products), so no library function enters the
//     bound: the ieee profile (fpbound's model M3, unused) and 0 ulps.
func checkRoundingBound(file string, f *certificates.RefinementFile) error {
	info, err := spec.Info(f.Op)
	if err != nil {
		return certificates.FieldErr(file, "op", "%v", err)
	}
	if !info.Exact {
		return certificates.FieldErr(file, "op", "%s is not exact over the rationals: no refinement bound covers its library functions", f.Op)
	}
	rb := f.RoundingBound
	for _, c := range []struct{ field, rec, want, why string }{
		{"kind", rb.Kind, certificates.BoundClassic, "one primitive on binary32 data: the first-order bound is the classic one, which decides"},
		{"format", rb.Format, certificates.FormatBinary32, "the cases' inputs and outputs are binary32"},
		{"profile", rb.Profile, fpbound.ProfileIEEE, "no library function enters a sum of products"},
	} {
		if c.rec != c.want {
			return certificates.FieldErr(file, "rounding_bound."+c.field, "%q, but this verifier derives %q (%s)", certificates.Truncate(c.rec), c.want, c.why)
		}
	}
	if rb.ULPs != 0 {
		return certificates.FieldErr(file, "rounding_bound.ulps", "%d, but this verifier derives 0 (no library function enters a sum of products)", rb.ULPs)
	}
	return nil
}
