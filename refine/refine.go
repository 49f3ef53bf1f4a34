package refine

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/spec"
)

// Bits is a binary32 tensor by its encodings: a shape and one IEEE 754
// interchange word per element, row-major. It is how cases record inputs
// and outputs, so that NaN payloads and signed zeros survive exactly.
type Bits struct {
	Shape spec.Shape
	Data  []uint32
}

// BitsOf returns the encodings of a float32 tensor.
func BitsOf(t spec.Tensor[spec.F32]) Bits {
	d := make([]uint32, len(t.Data))
	for i, v := range t.Data {
		d[i] = math.Float32bits(float32(v))
	}
	return Bits{Shape: t.Shape.Clone(), Data: d}
}

// check validates the shape and the data length.
func (b Bits) check() error {
	n, err := b.Shape.Check(0)
	if err != nil {
		return err
	}
	if len(b.Data) != n {
		return fmt.Errorf("shape %v needs %d values, has %d", b.Shape, n, len(b.Data))
	}
	return nil
}

// Clone returns a deep copy.
func (b Bits) Clone() Bits {
	return Bits{Shape: b.Shape.Clone(), Data: slices.Clone(b.Data)}
}

func (b Bits) equal(c Bits) bool {
	return b.Shape.Equal(c.Shape) && slices.Equal(b.Data, c.Data)
}

// Class is the IEEE class of a binary32 value as the refinement rules use
// it: finite (zeros and subnormals included), +∞, −∞ or NaN (any sign or
// payload).
type Class string

// The classes.
const (
	ClassFinite Class = "finite"
	ClassPosInf Class = "+inf"
	ClassNegInf Class = "-inf"
	ClassNaN    Class = "nan"
)

// ClassOf classifies a binary32 encoding.
func ClassOf(bits uint32) Class {
	switch {
	case bits&0x7F800000 != 0x7F800000:
		return ClassFinite
	case bits&0x007FFFFF != 0:
		return ClassNaN
	case bits>>31 == 1:
		return ClassNegInf
	}
	return ClassPosInf
}

// Rule names the check applied to one output element.
type Rule string

// The rules. See the package documentation for each one's statement.
const (
	// RuleBitExact: fixed-left capsules. The provider's encoding equals
	// the binary32 replay's (any NaN matches any NaN).
	RuleBitExact Rule = "bit-exact"
	// RuleBound: implementation-defined capsules, finite terms, finite
	// provider output: |provider − exact| ≤ γ_g·Σ|terms| + p·2^-149.
	RuleBound Rule = "bound"
	// RuleClass: implementation-defined capsules, an element with a NaN
	// or infinite term: the provider's class is one of Allowed.
	RuleClass Rule = "class"
	// RuleOverflow: implementation-defined capsules, finite terms but a
	// non-finite provider output: allowed only when some evaluation
	// order can overflow towards that sign.
	RuleOverflow Rule = "overflow"
)

// Element is the record of one output element.
type Element struct {
	// Index is the element's row-major index in the output.
	Index int
	// Rule is the check applied.
	Rule Rule
	// Class is the class of the element's terms, order-independent: NaN
	// when a term is NaN (a NaN input, or 0·∞) or terms of both infinite
	// signs occur, else ±∞ when an infinite term occurs, else finite.
	Class Class
	// Exact is the exact value s of the semantic op (spec.Default[Rat]),
	// over the element's finite terms: non-finite inputs are read as 0.
	// It is the element's exact value when Class is finite.
	Exact spec.Rat
	// AbsSum is Σ|terms| over the finite terms (the semantic op applied
	// to the absolute values of the inputs).
	AbsSum spec.Rat
	// Bound is γ_g·AbsSum + p·2^-149 under RuleBound and RuleOverflow; 0
	// under RuleBitExact and RuleClass.
	Bound spec.Rat
	// Error is |provider − Exact| when both the provider's value and
	// Class are finite, else 0.
	Error spec.Rat
	// Ratio is Error/Bound under RuleBound (0 when Bound is 0, which
	// then requires Error = 0), else 0.
	Ratio spec.Rat
	// Allowed lists the classes admitted under RuleClass and
	// RuleOverflow.
	Allowed []Class
}

// Case is the record of one refinement case: what was run, on what, what
// came out, and every element's verdict.
type Case struct {
	// Index and Kind say which generated case this is; Seed is the seed
	// of the run. They document provenance and are not re-derived by
	// Recheck.
	Index int
	Kind  Kind
	Seed  uint64
	// Op, Provider and Capsule name the primitive and the capsule run;
	// Policy is the capsule's declared reduction policy.
	Op, Provider, Capsule string
	Policy                backend.Reduction
	// Axis is the reduce_sum axis (0 for other ops).
	Axis int
	// Terms (n) is the number of terms per output element, Products (p)
	// the number of rounded products, Rounds (g) the most roundings a
	// term undergoes, and Gamma is γ_g.
	Terms, Products, Rounds int
	Gamma                   spec.Rat
	// Inputs are the parents; Output is the provider's result; Replay is
	// the binary32 replay (spec.Default[Binary32]) when it was computed:
	// always for fixed-left capsules, and for implementation-defined ones
	// when an input is NaN or infinite.
	Inputs []Bits
	Output Bits
	Replay *Bits
	// Elements holds one record per output element.
	Elements []Element
	// Worst is the largest element Ratio (WorstElement its index, −1 for
	// an empty output) and WorstFloat its float64 value for display.
	Worst        spec.Rat
	WorstElement int
	WorstFloat   float64
	// Failure is the first failing element (or the provider's error);
	// nil when the case holds. Its Law is the element's Rule, its Kind
	// the case's input kind, and Detail the full explanation.
	Failure *counterexample.Failure
}

// Result is the outcome of Check for one (provider, op) pair.
type Result struct {
	Op, Provider, Capsule string
	Policy                backend.Reduction
	// Obligation is how the capsule's value contract is discharged under
	// the assurance policy of the run.
	Obligation Obligation
	Seed       uint64
	Cases      []Case
	// Worst is the largest case ratio, WorstCase its case index (−1 when
	// no case has an element), WorstFloat its float64 value.
	Worst      spec.Rat
	WorstCase  int
	WorstFloat float64
	// Failures counts failing cases; Failure is the first one (a
	// *counterexample.Failure), nil when every case holds.
	Failures int
	Failure  error
}

// Options configures CheckOptions.
type Options struct {
	// Cases is the number of cases; Seed makes them deterministic.
	Cases int
	Seed  uint64
	// Kinds are the input kinds to cycle through (nil: Kinds()).
	Kinds []Kind
	// Shapes, when non-nil, fixes the parents' shapes of every case
	// (and Axis the reduce_sum axis); otherwise each case draws small
	// random shapes.
	Shapes []spec.Shape
	Axis   int
	// Assurance is the assurance policy of the run ("" means checked):
	// a capsule resting on a trusted boundary is rejected under checked.
	Assurance backend.Assurance
}

// Check runs cases refinement cases of op on the binding b, deterministic
// from seed, cycling through every input kind. It is CheckOptions with
// default options.
func Check(b *backend.Binding, op string, cases int, seed uint64) (*Result, error) {
	return CheckOptions(b, op, Options{Cases: cases, Seed: seed})
}

// CheckOptions checks the bound capsule's executable primitive against
// the semantic primitive op on generated float32 inputs: for each case it
// runs the provider through the binding, computes the exact rational
// result with spec.Default[spec.Rat]() on the same inputs, and applies the
// rule of the capsule's reduction policy to every output element (see the
// package documentation). The error return is for runs that cannot be
// checked at all (no binding, an op without a generator, a capsule whose
// value contract the assurance policy does not admit, bad options); a
// refinement that does not hold is reported in Result.Failure.
func CheckOptions(b *backend.Binding, op string, o Options) (*Result, error) {
	if b == nil || b.Provider == nil {
		return nil, errors.New("refine: no binding")
	}
	if b.Capsule.Op != op {
		return nil, fmt.Errorf("refine: capsule %s implements %s, not %s", b.Capsule.Name, b.Capsule.Op, op)
	}
	if !slices.Contains(Ops(), op) {
		return nil, fmt.Errorf("refine: no case generator for %q (supported: %s)", op, strings.Join(Ops(), ", "))
	}
	if o.Cases < 0 {
		return nil, fmt.Errorf("refine: negative case count %d", o.Cases)
	}
	if o.Assurance == "" {
		o.Assurance = backend.AssuranceChecked
	}
	ob, err := Discharge(b.Capsule, o.Assurance)
	if err != nil {
		return nil, err
	}
	kinds, err := inputKinds(o.Kinds)
	if err != nil {
		return nil, err
	}
	res := &Result{Op: op, Provider: b.Capsule.Provider, Capsule: b.Capsule.Name, Policy: b.Capsule.Reduction,
		Obligation: ob, Seed: o.Seed, WorstCase: -1}
	for i := range o.Cases {
		k := kinds[i%len(kinds)]
		in, err := generate(op, k, o.Seed, i, &o)
		if err != nil {
			return nil, err
		}
		c, err := evaluate(b, op, in.axis, in.inputs)
		if err != nil {
			return nil, fmt.Errorf("refine: %s case %d (%s): %w", b.Capsule.Name, i, k, err)
		}
		c.Index, c.Kind, c.Seed = i, k, o.Seed
		if c.Failure != nil {
			c.Failure.Case, c.Failure.Kind = i, string(k)
			res.Failures++
			if res.Failure == nil {
				res.Failure = c.Failure
			}
		}
		if c.WorstElement >= 0 && (res.WorstCase < 0 || ratCmp(c.Worst, res.Worst) > 0) {
			res.Worst, res.WorstCase, res.WorstFloat = c.Worst, i, c.WorstFloat
		}
		res.Cases = append(res.Cases, *c)
	}
	return res, nil
}

// CheckCapsule looks the capsule called name up in cat, binds it through
// ps and runs CheckOptions on its op: the entry point for checking every
// (provider, op) pair of a catalog, e.g. "fast_cpu.matmul" of
// backend.FastCatalog through backend.FastProviders.
func CheckCapsule(cat *backend.Catalog, ps *backend.Providers, name string, o Options) (*Result, error) {
	c, ok := cat.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("refine: capsule %q is not in the catalog", name)
	}
	b, err := ps.Bind(c)
	if err != nil {
		return nil, fmt.Errorf("refine: %w", err)
	}
	return CheckOptions(b, c.Op, o)
}

// Recheck re-derives one recorded case from its recorded inputs alone,
// trusting nothing else in it: it looks the capsule up by name in cat
// (its op, provider and reduction policy must match the record), binds it
// through ps, re-executes the provider on the recorded inputs, recomputes
// the exact values, bounds, ratios and verdicts, and compares every
// recorded field with the recomputed one. It returns an error naming the
// first field that differs, the *counterexample.Failure of a case that does not hold, or
// nil.
func Recheck(c Case, cat *backend.Catalog, ps *backend.Providers) error {
	capsule, ok := cat.Lookup(c.Capsule)
	if !ok {
		return fmt.Errorf("refine: recheck case %d: capsule %q is not in the catalog", c.Index, c.Capsule)
	}
	for _, f := range []struct{ field, rec, cat string }{
		{"op", c.Op, capsule.Op},
		{"provider", c.Provider, capsule.Provider},
		{"policy", string(c.Policy), string(capsule.Reduction)},
	} {
		if f.rec != f.cat {
			return fmt.Errorf("refine: recheck case %d: field %s: recorded %q, capsule %s declares %q", c.Index, f.field, f.rec, c.Capsule, f.cat)
		}
	}
	if !slices.Contains(Ops(), c.Op) {
		return fmt.Errorf("refine: recheck case %d: no refinement rules for %q", c.Index, c.Op)
	}
	b, err := ps.Bind(capsule)
	if err != nil {
		return fmt.Errorf("refine: recheck case %d: %w", c.Index, err)
	}
	if c.Op != "reduce_sum" && c.Axis != 0 {
		return fmt.Errorf("refine: recheck case %d: field axis: %d recorded for %s, which has no axis", c.Index, c.Axis, c.Op)
	}
	re, err := evaluate(b, c.Op, c.Axis, c.Inputs)
	if err != nil {
		return fmt.Errorf("refine: recheck case %d: %w", c.Index, err)
	}
	if err := compareCase(c, re); err != nil {
		return fmt.Errorf("refine: recheck case %d (%s): %w", c.Index, c.Capsule, err)
	}
	if re.Failure != nil {
		re.Failure.Case, re.Failure.Kind = c.Index, string(c.Kind)
		return re.Failure
	}
	return nil
}

// compareCase reports the first recorded field of rec that differs from
// the recomputed case re.
func compareCase(rec Case, re *Case) error {
	diff := func(field string, a, b any) error {
		return fmt.Errorf("field %s: recorded %v, recomputed %v", field, a, b)
	}
	switch {
	case rec.Terms != re.Terms:
		return diff("terms", rec.Terms, re.Terms)
	case rec.Products != re.Products:
		return diff("products", rec.Products, re.Products)
	case rec.Rounds != re.Rounds:
		return diff("rounds", rec.Rounds, re.Rounds)
	case !rec.Gamma.Same(re.Gamma):
		return diff("gamma", rec.Gamma, re.Gamma)
	case !rec.Output.Shape.Equal(re.Output.Shape):
		return diff("output.shape", rec.Output.Shape, re.Output.Shape)
	case len(rec.Output.Data) != len(re.Output.Data):
		return diff("output length", len(rec.Output.Data), len(re.Output.Data))
	}
	for i := range rec.Output.Data {
		if rec.Output.Data[i] != re.Output.Data[i] {
			return diff(fmt.Sprintf("output[%d]", i), fmt.Sprintf("0x%08x", rec.Output.Data[i]), fmt.Sprintf("0x%08x (re-executed)", re.Output.Data[i]))
		}
	}
	switch {
	case (rec.Replay == nil) != (re.Replay == nil):
		return diff("replay presence", rec.Replay != nil, re.Replay != nil)
	case rec.Replay != nil && !rec.Replay.equal(*re.Replay):
		return diff("replay", *rec.Replay, *re.Replay)
	case len(rec.Elements) != len(re.Elements):
		return diff("element count", len(rec.Elements), len(re.Elements))
	}
	for i := range rec.Elements {
		a, b := rec.Elements[i], re.Elements[i]
		f := func(name string) string { return fmt.Sprintf("elements[%d].%s", i, name) }
		switch {
		case a.Index != b.Index:
			return diff(f("index"), a.Index, b.Index)
		case a.Rule != b.Rule:
			return diff(f("rule"), a.Rule, b.Rule)
		case a.Class != b.Class:
			return diff(f("class"), a.Class, b.Class)
		case !a.Exact.Same(b.Exact):
			return diff(f("exact"), a.Exact, b.Exact)
		case !a.AbsSum.Same(b.AbsSum):
			return diff(f("abs_sum"), a.AbsSum, b.AbsSum)
		case !a.Bound.Same(b.Bound):
			return diff(f("bound"), a.Bound, b.Bound)
		case !a.Error.Same(b.Error):
			return diff(f("error"), a.Error, b.Error)
		case !a.Ratio.Same(b.Ratio):
			return diff(f("ratio"), a.Ratio, b.Ratio)
		case !slices.Equal(a.Allowed, b.Allowed):
			return diff(f("allowed"), a.Allowed, b.Allowed)
		}
	}
	switch {
	case !rec.Worst.Same(re.Worst):
		return diff("worst", rec.Worst, re.Worst)
	case rec.WorstElement != re.WorstElement:
		return diff("worst_element", rec.WorstElement, re.WorstElement)
	case rec.WorstFloat != re.WorstFloat && !(math.IsNaN(rec.WorstFloat) && math.IsNaN(re.WorstFloat)):
		return diff("worst_float", rec.WorstFloat, re.WorstFloat)
	case (rec.Failure == nil) != (re.Failure == nil):
		return diff("failure", rec.Failure != nil, re.Failure != nil)
	}
	return nil
}

// Evaluate runs one case of op on the given parents (and reduce_sum axis)
// through the binding b, exactly as CheckOptions runs a generated case,
// and returns its record. Its error is for inputs that cannot be checked
// (malformed bits, shapes the op rejects, an unsupported op or policy); a
// refinement that does not hold is the returned case's Failure. Index,
// Kind and Seed are left zero.
func Evaluate(b *backend.Binding, op string, axis int, inputs []Bits) (*Case, error) {
	if b == nil || b.Provider == nil {
		return nil, errors.New("refine: no binding")
	}
	if b.Capsule.Op != op {
		return nil, fmt.Errorf("refine: capsule %s implements %s, not %s", b.Capsule.Name, b.Capsule.Op, op)
	}
	c, err := evaluate(b, op, axis, inputs)
	if err != nil {
		return nil, fmt.Errorf("refine: %s: %w", b.Capsule.Name, err)
	}
	return c, nil
}

// RuleCounts counts the output elements of every case by the rule
// applied to them.
func (r *Result) RuleCounts() map[Rule]int {
	m := map[Rule]int{}
	for _, c := range r.Cases {
		for _, e := range c.Elements {
			m[e.Rule]++
		}
	}
	return m
}

// shape describes the term structure shared by every output element.
type shape struct {
	terms, products, rounds int
}

// termShape returns n (terms per output), p (rounded products) and g
// (most roundings of one term) for op on parents in.
func termShape(op string, axis int, in []Bits) (shape, error) {
	switch op {
	case "matmul":
		k := in[0].Shape[len(in[0].Shape)-1]
		return shape{k, k, k}, nil
	case "linear":
		n := in[1].Shape[1]
		return shape{n + 1, n, n + 1}, nil
	case "sum":
		n := len(in[0].Data)
		return shape{n, 0, max(n-1, 0)}, nil
	case "reduce_sum":
		r := len(in[0].Shape)
		if axis < 0 {
			axis += r
		}
		n := in[0].Shape[axis]
		return shape{n, 0, max(n-1, 0)}, nil
	}
	return shape{}, fmt.Errorf("no refinement rules for %q", op)
}

// evaluate runs one case: the provider through b, the exact Rat semantics,
// the binary64 class evaluation and (when needed) the binary32 replay,
// then judges every element. Its error is for inputs that cannot be
// checked; a provider that fails is a Case.Failure.
func evaluate(b *backend.Binding, op string, axis int, in []Bits) (*Case, error) {
	pol := b.Capsule.Reduction
	if pol != backend.ReductionFixedLeft && pol != backend.ReductionImplementationDefined {
		return nil, fmt.Errorf("capsule %s declares reduction %q; %s needs fixed-left or implementation-defined", b.Capsule.Name, pol, op)
	}
	info, err := spec.Info(op)
	if err != nil {
		return nil, err
	}
	attrs := &spec.Attrs{Axis: axis}
	shapes := make([]spec.Shape, len(in))
	for i, x := range in {
		if err := x.check(); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		shapes[i] = x.Shape
	}
	outShape, err := info.InferShape(attrs, shapes)
	if err != nil {
		return nil, err
	}
	ts, err := termShape(op, axis, in)
	if err != nil {
		return nil, err
	}
	gamma, err := Gamma(ts.rounds)
	if err != nil {
		return nil, fmt.Errorf("%d terms per output: %w", ts.terms, err)
	}
	c := &Case{
		Op: op, Provider: b.Capsule.Provider, Capsule: b.Capsule.Name, Policy: pol, Axis: axis,
		Terms: ts.terms, Products: ts.products, Rounds: ts.rounds, Gamma: spec.RatFromBig(gamma),
		WorstElement: -1,
	}
	nonFinite := false
	f32 := make([]spec.Tensor[spec.F32], len(in))
	for i, x := range in {
		c.Inputs = append(c.Inputs, x.Clone())
		f32[i] = tensorOf(x, func(u uint32) spec.F32 { return spec.F32(math.Float32frombits(u)) })
		for _, u := range x.Data {
			nonFinite = nonFinite || ClassOf(u) != ClassFinite
		}
	}

	// The semantic values: exact over the finite terms, Σ|terms|, and the
	// order-independent class of the terms.
	exact, err := apply[spec.Rat](op, attrs, in, ratOf)
	if err != nil {
		return nil, fmt.Errorf("exact semantics: %w", err)
	}
	abs, err := apply[spec.Rat](op, attrs, in, func(u uint32) spec.Rat { return ratOf(u &^ (1 << 31)) })
	if err != nil {
		return nil, fmt.Errorf("exact semantics of |inputs|: %w", err)
	}
	class, err := apply[spec.F64](op, attrs, in, func(u uint32) spec.F64 { return spec.F64(math.Float32frombits(u)) })
	if err != nil {
		return nil, fmt.Errorf("class evaluation: %w", err)
	}
	if pol == backend.ReductionFixedLeft || nonFinite {
		rp, err := apply[spec.Binary32](op, attrs, in, spec.Binary32FromBits)
		if err != nil {
			return nil, fmt.Errorf("binary32 replay: %w", err)
		}
		r := Bits{Shape: rp.Shape.Clone(), Data: make([]uint32, len(rp.Data))}
		for i, v := range rp.Data {
			r.Data[i] = v.Bits()
		}
		c.Replay = &r
	}

	y, err := b.Execute(attrs, f32)
	if err != nil {
		c.Output = Bits{Shape: outShape.Clone()}
		c.Failure = &counterexample.Failure{Op: op, Provider: c.Provider, Capsule: c.Capsule, Element: -1,
			Detail: fmt.Sprintf("the provider failed: %v", err)}
		return c, nil
	}
	c.Output = BitsOf(y)

	j := judge{gamma: gamma, ts: ts}
	for e := range c.Output.Data {
		el := Element{Index: e, Exact: exact.Data[e], AbsSum: abs.Data[e]}
		switch v := float64(class.Data[e]); {
		case math.IsNaN(v):
			el.Class = ClassNaN
		case math.IsInf(v, 1):
			el.Class = ClassPosInf
		case math.IsInf(v, -1):
			el.Class = ClassNegInf
		default:
			el.Class = ClassFinite
		}
		got := c.Output.Data[e]
		var why string
		if pol == backend.ReductionFixedLeft {
			el.Rule = RuleBitExact
			if el.Class == ClassFinite && ClassOf(got) == ClassFinite {
				el.Error = errorOf(got, el.Exact)
			}
			rep := c.Replay.Data[e]
			if got != rep && !(ClassOf(got) == ClassNaN && ClassOf(rep) == ClassNaN) {
				why = fmt.Sprintf("provider 0x%08x (%v) differs from the binary32 replay 0x%08x (%v); a fixed-left capsule must match it bit for bit (exact value %s)",
					got, math.Float32frombits(got), rep, math.Float32frombits(rep), el.Exact)
			}
		} else {
			var verr error
			why, verr = j.element(&el, got)
			if verr != nil {
				return nil, fmt.Errorf("element %d: %w", e, verr)
			}
		}
		// The replay is one admissible evaluation order: it must satisfy
		// the order-independent rules, or the analysis itself is wrong.
		if c.Replay != nil {
			probe := el
			probe.Allowed = nil
			if rwhy, rerr := j.element(&probe, c.Replay.Data[e]); rerr != nil || rwhy != "" {
				return nil, fmt.Errorf("internal: element %d: the binary32 replay 0x%08x violates the order-independent rules (%s%v)", e, c.Replay.Data[e], rwhy, rerr)
			}
		}
		if why != "" && c.Failure == nil {
			c.Failure = &counterexample.Failure{Op: op, Provider: c.Provider, Capsule: c.Capsule, Element: e, Law: string(el.Rule),
				Got: got, AbsError: el.Error, Bound: el.Bound, Detail: why}
		}
		if c.WorstElement < 0 || ratCmp(el.Ratio, c.Worst) > 0 {
			c.Worst, c.WorstElement = el.Ratio, e
		}
		c.Elements = append(c.Elements, el)
	}
	c.WorstFloat = c.Worst.Float64()
	return c, nil
}

// judge applies the implementation-defined rules.
type judge struct {
	gamma *big.Rat
	ts    shape
}

// element fills el's Rule, Bound, Error, Ratio and Allowed for the
// provider encoding got and returns why it fails ("" when it holds). Its
// error is for a bound that cannot be computed.
func (j judge) element(el *Element, got uint32) (string, error) {
	g := ClassOf(got)
	abs := el.AbsSum.Big()
	var posOK, negOK bool
	if el.Class != ClassFinite || g != ClassFinite {
		// P and N: the magnitudes of the positive and the negative finite
		// terms, from Σ|t| and Σt. Only the non-finite rules need them.
		exact := el.Exact.Big()
		pos := new(big.Rat).Add(abs, exact)
		pos.Quo(pos, big.NewRat(2, 1))
		neg := new(big.Rat).Sub(abs, exact)
		neg.Quo(neg, big.NewRat(2, 1))
		posOK = overflowPossible(j.gamma, j.ts.products, pos)
		negOK = overflowPossible(j.gamma, j.ts.products, neg)
	}
	if el.Class != ClassFinite {
		el.Rule = RuleClass
		switch el.Class {
		case ClassNaN:
			el.Allowed = []Class{ClassNaN}
		case ClassPosInf:
			el.Allowed = []Class{ClassPosInf}
			if negOK {
				el.Allowed = append(el.Allowed, ClassNaN)
			}
		case ClassNegInf:
			el.Allowed = []Class{ClassNegInf}
			if posOK {
				el.Allowed = append(el.Allowed, ClassNaN)
			}
		}
		if !slices.Contains(el.Allowed, g) {
			return fmt.Sprintf("provider gives %s (0x%08x), but the terms make the result %s; allowed: %v",
				g, got, el.Class, el.Allowed), nil
		}
		return "", nil
	}
	bound := boundWith(j.gamma, j.ts.products, abs)
	el.Bound = spec.RatFromBig(bound)
	if g != ClassFinite {
		el.Rule = RuleOverflow
		if posOK {
			el.Allowed = append(el.Allowed, ClassPosInf)
		}
		if negOK {
			el.Allowed = append(el.Allowed, ClassNegInf)
		}
		if posOK && negOK {
			el.Allowed = append(el.Allowed, ClassNaN)
		}
		if !slices.Contains(el.Allowed, g) {
			return fmt.Sprintf("provider gives %s (0x%08x) for finite terms with exact value %s ≈ %.6g, but no evaluation order can overflow to it (allowed non-finite results: %v)",
				g, got, el.Exact, el.Exact.Float64(), el.Allowed), nil
		}
		return "", nil
	}
	el.Rule = RuleBound
	el.Error = errorOf(got, el.Exact)
	errBig := el.Error.Big()
	if bound.Sign() > 0 {
		el.Ratio = spec.RatFromBig(new(big.Rat).Quo(errBig, bound))
	}
	if errBig.Cmp(bound) > 0 {
		return fmt.Sprintf("|provider − exact| = %s ≈ %.6g exceeds the bound %s ≈ %.6g (ratio %.6g); provider 0x%08x (%v), exact %s ≈ %.9g",
			el.Error, el.Error.Float64(), el.Bound, el.Bound.Float64(), ratioFloat(errBig, bound), got, math.Float32frombits(got), el.Exact, el.Exact.Float64()), nil
	}
	return "", nil
}

// ratioFloat is a/b as a float64 for messages (+Inf when b is 0).
func ratioFloat(a, b *big.Rat) float64 {
	if b.Sign() == 0 {
		return math.Inf(1)
	}
	f, _ := new(big.Rat).Quo(a, b).Float64()
	return f
}

// errorOf returns |value(got) − exact| for a finite encoding got.
func errorOf(got uint32, exact spec.Rat) spec.Rat {
	return ratOf(got).Sub(exact).Abs()
}

// ratOf returns the exact value of a finite binary32 encoding, and 0 for
// NaN and ±∞ (the exact semantics is taken over the finite terms).
func ratOf(u uint32) spec.Rat {
	f := math.Float32frombits(u)
	r, err := spec.RatFromFloat64(float64(f))
	if err != nil {
		return spec.Rat{}
	}
	return r
}

func ratCmp(a, b spec.Rat) int {
	c, _ := a.Compare(b)
	return c
}

// tensorOf converts recorded encodings to a tensor over another scalar.
func tensorOf[T any](b Bits, f func(uint32) T) spec.Tensor[T] {
	d := make([]T, len(b.Data))
	for i, u := range b.Data {
		d[i] = f(u)
	}
	return spec.Tensor[T]{Shape: b.Shape.Clone(), Data: d}
}

// apply runs the registry's forward rule for op over the scalar T on the
// inputs converted by f.
func apply[T spec.Scalar[T]](op string, a *spec.Attrs, in []Bits, f func(uint32) T) (spec.Tensor[T], error) {
	p, err := spec.Default[T]().Lookup(op)
	if err != nil {
		return spec.Tensor[T]{}, err
	}
	xs := make([]spec.Tensor[T], len(in))
	for i, x := range in {
		xs[i] = tensorOf(x, f)
	}
	return p.Apply(a, xs)
}
