package check

import (
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// Dual is the scalar of the derivative oracle: a dual number over
// outward-rounded intervals (obligations.DualInterval). A primitive's
// rules instantiated over Dual let the oracle differentiate its forward
// rule independently of its JVP rule.
type Dual = obligations.DualInterval

// Source is where generators draw their choices: Intn(n, label) returns a
// value in [0, n), and shrinking moves every draw toward 0.
type Source = casegen.Source

// Rules are a primitive's forward, JVP and VJP rules over one scalar T.
// Write them once as a generic function and instantiate it per scalar.
type Rules[T spec.Scalar[T]] struct {
	// Forward computes y = f(x₁, …, xₙ).
	Forward func(xs []spec.Tensor[T]) (spec.Tensor[T], error)
	// JVP maps tangents dxs (one per parent, of its shape) to the output
	// tangent Σᵢ ∂f/∂xᵢ·dxᵢ; y is the forward output. Nil (over every
	// scalar at once) derives it from Forward by forward mode over dual
	// numbers: see the package doc, "Two rules: the JVP derived".
	JVP func(xs []spec.Tensor[T], y spec.Tensor[T], dxs []spec.Tensor[T]) (spec.Tensor[T], error)
	// VJP maps an output cotangent δ to one contribution (∂f/∂xᵢ)ᵀδ per
	// parent, of its shape; y is the forward output.
	VJP func(xs []spec.Tensor[T], y spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error)
}

// Primitive declares a user's primitive: its facts, its domain and its
// rules over the oracles' scalars.
type Primitive struct {
	// Name is the primitive's name ([a-z0-9_], not a built-in primitive's).
	Name string
	// Arity is the number of parents (≥ 1).
	Arity int
	// Shape computes the output shape from the parent shapes, or says why
	// they do not fit; nil means elementwise: all parents share one shape,
	// which is the output's.
	Shape func(in []spec.Shape) (spec.Shape, error)
	// Shapes draws the parent shapes of a case; nil draws one shape of
	// rank 0…3 with extents 1…3 for every parent. The shapes must satisfy
	// Shape.
	Shapes func(src Source) []spec.Shape
	// Domains is the value domain of each parent (spec.DomainAny,
	// DomainPositive, DomainNonZero, DomainSquare); missing entries are
	// DomainAny.
	Domains []spec.Domain
	// Kinks are input values where the derivative jumps (0 for relu and
	// abs; lo and hi for a clamp): the generators put elements there.
	Kinks []*big.Rat
	// Ties states the derivative convention where the op compares
	// elements that are equal (max's 1/2-1/2 split, argmax's first index);
	// a non-empty Ties makes the generators copy elements on purpose.
	// Empty for an op without ties.
	Ties string
	// TiesWithin says the op compares elements within one parent (a
	// max or sort over an axis), not only the elements at the same
	// position of different parents (elementwise max): the generators
	// then also copy within a parent, and equal elements of one parent
	// count as a tie.
	TiesWithin bool
	// Exact is true when the rules have exact rational semantics (no exp,
	// log, tanh, …): the laws are then decided over Rat with ==.
	Exact bool
	// Partial is true when the rules may fail on particular data even
	// over Rat (division by zero, the square root of a non-square).
	Partial bool
	// Doc is a one-line description.
	Doc string

	// Rat, Interval and Dual are the rules over the three oracle scalars.
	// Rat is required when Exact; Interval and Dual are always required.
	// JVP may be left nil in all three (never in some only): the JVP is
	// then derived from the forward rule (package doc, "Two rules").
	Rat      Rules[spec.Rat]
	Interval Rules[spec.Interval]
	Dual     Rules[Dual]
	// DualRat is the forward rule over exact dual numbers Dual[Rat]; only
	// its Forward is read, and only to derive the exact JVP of an Exact
	// primitive that gives no JVP rule (then it is required).
	DualRat Rules[spec.Dual[spec.Rat]]
}

// Options tune a check. The zero value is the default.
type Options struct {
	// Cases is the number of cases of Find's sweep (default 100, the
	// number rapid draws by default); Op's rapid run takes its count from
	// -rapid.checks.
	Cases int
	// Seed is Find's sweep seed (default 1).
	Seed uint64
	// Obligations restricts the check to these obligations (nil: all of
	// Obligations).
	Obligations []obligations.Obligation
	// CertDir, when set, is where Op and Find write, for a primitive that
	// holds, its certificate directory CertDir/<Name> (package
	// certificates' format: manifest.json and adjointness/<Name>.json,
	// byte-deterministic; see the package doc, "Certificates"), which
	// Verify re-derives; and, whatever the verdict, the check's record
	// CertDir/<Name>.check.json (the Report as JSON). A failing check
	// writes no certificate and removes a previous one.
	CertDir string
}

func (o Options) cases() int {
	if o.Cases <= 0 {
		return 100
	}
	return o.Cases
}

func (o Options) seed() uint64 {
	if o.Seed == 0 {
		return 1
	}
	return o.Seed
}

// Obligations are the obligations every case decides, in order.
var Obligations = []obligations.Obligation{
	obligations.Adjointness, obligations.JVPLinearity, obligations.VJPLinearity,
	obligations.ZeroPreservation, obligations.Derivative,
}

// checker holds one check's private registries.
type checker struct {
	p    Primitive
	regs obligations.Registries
	info *spec.OpInfo
	only map[obligations.Obligation]bool // nil: every obligation
	// onCase, when set, receives every case that runCase decided
	// without a failure (Op records rapid's cases for the certificate).
	onCase func(drawn)
	// derived is true when the JVP is derived from the forward rule
	// (no JVP rule given).
	derived bool
}

// drawn is one case's adjointness data: the instance, one tangent per
// parent and the cotangent.
type drawn struct {
	inst *casegen.Instance
	dxs  []spec.Tensor[spec.Rat]
	d    spec.Tensor[spec.Rat]
	// noAdj is set, with a derived JVP, when the case sits on a declared
	// kink or tie of an op whose tangents cannot be masked there: dxs is
	// then zero and the case does not decide adjointness.
	noAdj bool
}

func prim[T spec.Scalar[T]](info *spec.OpInfo, r Rules[T]) *spec.Prim[T] {
	return &spec.Prim[T]{OpInfo: info,
		Forward: func(_ *spec.Attrs, xs []spec.Tensor[T]) (spec.Tensor[T], error) { return r.Forward(xs) },
		JVP: func(_ *spec.Attrs, xs []spec.Tensor[T], y spec.Tensor[T], dxs []spec.Tensor[T]) (spec.Tensor[T], error) {
			return r.JVP(xs, y, dxs)
		},
		VJP: func(_ *spec.Attrs, xs []spec.Tensor[T], y spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
			return r.VJP(xs, y, dy)
		},
	}
}

func complete[T spec.Scalar[T]](r Rules[T]) bool {
	return r.Forward != nil && r.JVP != nil && r.VJP != nil
}

// elementwiseShape is the shape rule of an elementwise primitive.
func elementwiseShape(in []spec.Shape) (spec.Shape, error) {
	for i, s := range in[1:] {
		if !s.Equal(in[0]) {
			return nil, fmt.Errorf("parent %d has shape %v, parent 0 has %v", i+1, s, in[0])
		}
	}
	return in[0].Clone(), nil
}

// newChecker validates p and registers it into fresh private registries.
func newChecker(p Primitive, opts Options) (*checker, error) {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("check: primitive %q: field %s: %s", p.Name, field, fmt.Sprintf(format, args...))
	}
	derived := p.Interval.JVP == nil && p.Dual.JVP == nil && (!p.Exact || p.Rat.JVP == nil)
	var fm *forwardMode
	if derived {
		if p.Exact && p.DualRat.Forward == nil {
			return nil, bad("DualRat", "an Exact primitive without a JVP rule needs Forward over spec.Dual[spec.Rat], from which its exact JVP is derived")
		}
		p, fm = deriveJVP(p)
	}
	switch {
	case p.Arity < 1:
		return nil, bad("Arity", "%d; a primitive has at least one parent", p.Arity)
	case len(p.Domains) > p.Arity:
		return nil, bad("Domains", "%d domains for %d parents", len(p.Domains), p.Arity)
	case p.Exact && !complete(p.Rat):
		return nil, bad("Rat", "an Exact primitive needs Forward, JVP and VJP over Rat (or JVP nil over every scalar, to derive it)")
	case !complete(p.Interval):
		return nil, bad("Interval", "Forward, JVP and VJP over Interval are required (or JVP nil over every scalar, to derive it)")
	case !complete(p.Dual):
		return nil, bad("Dual", "Forward, JVP and VJP over Dual are required (or JVP nil over every scalar, to derive it)")
	}
	for i, k := range p.Kinks {
		if k == nil {
			return nil, bad("Kinks", "element %d is nil", i)
		}
	}
	shape := p.Shape
	if shape == nil {
		shape = elementwiseShape
	}
	info := &spec.OpInfo{Name: p.Name, MinArity: p.Arity, MaxArity: p.Arity,
		Shape: func(_ *spec.Attrs, in []spec.Shape) (spec.Shape, error) { return shape(in) },
		Exact: p.Exact, Smooth: p.Ties == "" && len(p.Kinks) == 0, Ties: p.Ties, Partial: p.Partial, Doc: p.Doc}
	rat := p.Rat
	if !complete(rat) {
		// An inexact primitive's Rat rules are never consulted (Exact is
		// false); registration still needs rules, which say so.
		no := func() error { return fmt.Errorf("%s has no Rat rules", p.Name) }
		rat = Rules[spec.Rat]{
			Forward: func([]spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) { return spec.Tensor[spec.Rat]{}, no() },
			JVP: func([]spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], []spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
				return spec.Tensor[spec.Rat]{}, no()
			},
			VJP: func([]spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
				return nil, no()
			},
		}
	}
	regs := obligations.Registries{Rat: spec.New[spec.Rat](), Interval: spec.New[spec.Interval](), Dual: spec.New[Dual]()}
	// Each registry gets its own OpInfo copy: guard wraps the rules in place.
	cp := func() *spec.OpInfo { c := *info; return &c }
	if err := errors.Join(regs.Rat.Register(prim(cp(), rat)), regs.Interval.Register(prim(cp(), p.Interval)),
		regs.Dual.Register(prim(cp(), p.Dual))); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	c := &checker{p: p, regs: regs, info: info, derived: derived}
	if fm != nil {
		fm.dual = regs.Dual
	}
	if opts.Obligations != nil {
		c.only = map[obligations.Obligation]bool{}
		for _, ob := range opts.Obligations {
			if !slices.Contains(Obligations, ob) {
				return nil, fmt.Errorf("check: Options.Obligations: unknown obligation %q", ob)
			}
			c.only[ob] = true
		}
		if derived && len(c.only) == 1 && c.only[obligations.Derivative] {
			return nil, fmt.Errorf("check: Options.Obligations: only the derivative obligation, which a derived JVP does not run (it would compare the forward rule's tangent with itself): nothing would be checked")
		}
		if opts.CertDir != "" && !c.only[obligations.Adjointness] {
			return nil, fmt.Errorf("check: Options.CertDir: the certificate records adjointness cases, which Options.Obligations excludes")
		}
	}
	return c, nil
}

// runCase draws one case from src and decides the checker's obligations
// (all of Obligations unless restricted); it returns the first failure
// in Obligations order, or nil. Every draw happens whichever obligations
// run, so a case is the same case under any restriction.
func (c *checker) runCase(src Source) (decided map[obligations.Obligation]obligations.Oracle, fail error) {
	dr, out, err := c.drawCase(src)
	if err != nil {
		return nil, err
	}
	inst, dxs, d := dr.inst, dr.dxs, dr.d
	defer func() {
		if fail == nil && c.onCase != nil {
			c.onCase(dr)
		}
	}()
	decided = map[obligations.Obligation]obligations.Oracle{}
	v, dv := tangents(src, inst.Xs, out, "u")
	a, b := genValue(src, spec.DomainAny, "a"), genValue(src, spec.DomainAny, "b")
	on := func(ob obligations.Obligation) bool { return c.only == nil || c.only[ob] }
	note := func(ob obligations.Obligation, o obligations.Outcome, err error) {
		if err != nil {
			if fail == nil {
				fail = err
			}
			return
		}
		decided[ob] = o.Oracle
	}
	switch {
	case !on(obligations.Adjointness):
	case dr.noAdj:
		decided[obligations.Adjointness] = obligations.OracleInconclusive
	default:
		o, err := c.regs.CheckAdjointness(inst, dxs, d)
		note(obligations.Adjointness, o, err)
	}
	if on(obligations.JVPLinearity) || on(obligations.VJPLinearity) {
		o1, o2, err := c.regs.CheckLinearity(inst, a, b, dxs, v, d, dv)
		var f *counterexample.Failure
		switch {
		case err == nil:
			note(obligations.JVPLinearity, o1, nil)
			note(obligations.VJPLinearity, o2, nil)
		case errors.As(err, &f) && obligations.Obligation(f.Law) == obligations.VJPLinearity:
			note(obligations.JVPLinearity, o1, nil)
			if on(obligations.VJPLinearity) {
				note(obligations.VJPLinearity, o2, err)
			}
		case errors.As(err, &f) && obligations.Obligation(f.Law) == obligations.JVPLinearity && !on(obligations.JVPLinearity):
			// VJP linearity was not reached; the case decides neither.
		default:
			note(obligations.JVPLinearity, o1, err)
		}
		if !on(obligations.JVPLinearity) {
			delete(decided, obligations.JVPLinearity)
		}
		if !on(obligations.VJPLinearity) {
			delete(decided, obligations.VJPLinearity)
		}
	}
	if on(obligations.ZeroPreservation) {
		o, err := c.regs.CheckZeroPreservation(inst)
		note(obligations.ZeroPreservation, o, err)
	}
	if on(obligations.Derivative) && !c.derived {
		ddx, ok := c.derivativeTangents(inst, dxs)
		if !ok {
			decided[obligations.Derivative] = obligations.OracleInconclusive
		} else {
			o, err := c.regs.CheckDerivative(inst, ddx)
			note(obligations.Derivative, o, err)
		}
	}
	return decided, fail
}

// drawCase draws the head of a case from src: the instance, then the
// tangents dx and the cotangent δ that adjointness is decided on; it also
// returns the output shape. runCase draws the rest of the case after it,
// and the certificate's cases are these draws (seeded: draw).
func (c *checker) drawCase(src Source) (drawn, spec.Shape, error) {
	inst, err := c.generate(src)
	if err != nil {
		return drawn{}, nil, err
	}
	in := make([]spec.Shape, len(inst.Xs))
	for i, x := range inst.Xs {
		in[i] = x.Shape
	}
	out, err := c.info.InferShape(nil, in)
	if err != nil {
		return drawn{}, nil, fmt.Errorf("check: %s: Shapes drew parent shapes %v that Shape rejects: %w", c.p.Name, in, err)
	}
	dxs, d := tangents(src, inst.Xs, out, "t")
	dr := drawn{inst: inst, dxs: dxs, d: d}
	if c.derived {
		dr.dxs, dr.noAdj = c.derivedTangents(inst, dxs)
	}
	return dr, out, nil
}

// draw is case i of Find's sweep with seed (spec.CaseSeed(seed, Name,
// i)), up to its adjointness data: what a certificate of Find's records,
// and what the verifier regenerates.
func (c *checker) draw(seed uint64, i int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error) {
	dr, _, err := c.drawCase(&streamSource{rng: casegen.NewRandSource(spec.CaseSeed(seed, c.p.Name, i))})
	return dr.inst, dr.dxs, dr.d, err
}

// asFailure locates a case's error at case i of seed: a law's
// counterexample (a copy) takes the seed and case; any other error is an
// ill-formed case's.
func asFailure(err error, seed uint64, i int) *counterexample.Failure {
	var of *counterexample.Failure
	if errors.As(err, &of) && of.Law != "" {
		f := *of
		f.Seed, f.Case = seed, i
		return &f
	}
	return &counterexample.Failure{Err: err, Seed: seed, Case: i}
}

// derivativeTangents returns the tangents the derivative obligation uses,
// or false when the case cannot decide it. Off every declared kink and
// tie they are dxs. For an elementwise op (no Shape rule, ties only
// between parents) output k depends on position k alone, so the
// positions on a kink or tie get tangent 0 in every parent: the real
// directional derivative there is exactly 0 along such a direction
// whatever the convention, and the enclosure of the forward's tangent
// is Σ convention·0 = 0, so the remaining positions decide soundly. For
// any other op a case with a kink or tie anywhere is not decided.
func (c *checker) derivativeTangents(inst *casegen.Instance, dxs []spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], bool) {
	if !c.atKinkOrTie(inst) {
		return dxs, true
	}
	if c.p.Shape != nil || c.p.TiesWithin {
		return nil, false
	}
	n := len(inst.Xs[0].Data)
	masked := make([]bool, n)
	free := 0
	for k := range n {
		seen := map[string]bool{}
		for _, x := range inst.Xs {
			v := x.Data[k]
			for _, kink := range c.p.Kinks {
				masked[k] = masked[k] || v.Big().Cmp(kink) == 0
			}
			if c.p.Ties != "" {
				masked[k] = masked[k] || seen[v.String()]
				seen[v.String()] = true
			}
		}
		if !masked[k] {
			free++
		}
	}
	if free == 0 {
		return nil, false
	}
	out := make([]spec.Tensor[spec.Rat], len(dxs))
	for i, d := range dxs {
		out[i] = d.Clone()
		for k := range out[i].Data {
			if masked[k] {
				out[i].Data[k] = spec.NewRat(0, 1)
			}
		}
	}
	return out, true
}

// atKinkOrTie reports whether a case sits where the derivative is a
// convention rather than a derivative: an input element on a declared
// kink, or — for an op that declares ties — two equal input elements at
// the same position of two parents (or anywhere, with TiesWithin). DualInterval resolves an exact tie by
// its own convention (max and min average the tangents), which need not
// be the op's, so the derivative oracle decides only off these points;
// there the op's convention is pinned by adjointness and linearity.
func (c *checker) atKinkOrTie(inst *casegen.Instance) bool {
	seen := map[string]bool{}
	for _, x := range inst.Xs {
		for k, v := range x.Data {
			for _, kink := range c.p.Kinks {
				if v.Big().Cmp(kink) == 0 {
					return true
				}
			}
			if c.p.Ties == "" {
				continue
			}
			key := v.String()
			if !c.p.TiesWithin {
				key = fmt.Sprintf("%d:%s", k, key) // ties only at one position
			}
			if seen[key] {
				return true
			}
			seen[key] = true
		}
	}
	return false
}
