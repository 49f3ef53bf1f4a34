package certificates

import (
	"fmt"
	"slices"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// The bounds a certificate's rounding-bound verdicts can rest on, spelled
// as fpbound.Sharp.Decider spells them: fpbound's classic bound (the
// standard model carried through the formula, package fpbound, "Proof")
// and its first-order bound (fpbound, "First-order bound").
const (
	BoundClassic    = "classic"
	BoundFirstOrder = "first-order"
)

// The formats a rounding bound is stated for.
const (
	FormatBinary32 = "binary32"
	FormatBinary64 = "binary64"
)

// RoundingBound records which a-priori rounding bound decided a
// certificate's verdicts and the inputs it was computed with, so that the
// verifier recomputes the choice and requires the same (format v3).
type RoundingBound struct {
	// Kind is the bound that decided: BoundClassic or BoundFirstOrder.
	Kind string `json:"kind"`
	// Format is the floating-point format of the evaluations it bounds.
	Format string `json:"format"`
	// Profile is the runtime profile of the elementary functions
	// (fpbound.Profiles; fpbound.ProfileIEEE is the model M3).
	Profile string `json:"profile"`
	// ULPs is the library accuracy the bound assumes, in ulps of Format;
	// 0 when no library function enters the formula.
	ULPs int `json:"ulps"`
}

// refinementBound is the rounding bound every RuleBound and RuleOverflow
// element of a refinement certificate of op decides with (package
// refine, "The first-order bound"): a case is one primitive on binary32
// data, whose first-order bound is its classic one, refine's γ_g·Σ|terms|
// + p·2^-149; refine's ops are sums of products, exact over the
// rationals, so no library function enters (0 ulps, the ieee profile).
func refinementBound(op string) (RoundingBound, error) {
	info, err := spec.Info(op)
	if err != nil {
		return RoundingBound{}, err
	}
	if !info.Exact {
		return RoundingBound{}, fmt.Errorf("%s is not exact over the rationals: refine has no bound for it", op)
	}
	return RoundingBound{Kind: BoundClassic, Format: FormatBinary32, Profile: fpbound.ProfileIEEE, ULPs: 0}, nil
}

// BitsTensor is a binary32 tensor in a certificate: its shape and one
// "0x%08x" encoding per element, row-major, so that signed zeros, NaN
// payloads and infinities survive exactly.
type BitsTensor struct {
	Shape []int    `json:"shape"`
	Bits  []string `json:"bits"`
}

// RefinementElement is the record of one output element of a refinement
// case. Rationals are exact "p/q"; RatioFloat is Ratio as a float64 for
// display (strconv 'g', 6 digits), compared as text.
type RefinementElement struct {
	Index int    `json:"index"`
	Rule  string `json:"rule"`
	// Class is the order-independent class of the element's terms:
	// finite, pos_inf, neg_inf or nan.
	Class      string `json:"class"`
	Exact      string `json:"exact"`
	AbsSum     string `json:"abs_sum"`
	Bound      string `json:"bound"`
	Error      string `json:"error"`
	Ratio      string `json:"ratio"`
	RatioFloat string `json:"ratio_float"`
	// Allowed lists the classes the class and overflow rules admit.
	Allowed []string `json:"allowed,omitempty"`
}

// RefinementCase is one refinement case: the provider run on binary32
// inputs and every output element judged against the exact semantics.
type RefinementCase struct {
	Index int `json:"index"`
	// InputKind is the generator's input family (refine.Kind).
	InputKind string `json:"input_kind"`
	Op        string `json:"op"`
	Provider  string `json:"provider"`
	Capsule   string `json:"capsule"`
	Policy    string `json:"policy"`
	// Axis is the reduce_sum axis (0 for the other ops).
	Axis   int          `json:"axis"`
	Inputs []BitsTensor `json:"inputs"`
	Output BitsTensor   `json:"output"`
	// Replay is the binary32 replay (left folds from +0), present for
	// fixed-left capsules and for cases with a NaN or infinite input.
	Replay *BitsTensor `json:"replay,omitempty"`
	// Terms (n), Products (p) and Rounds (g) describe every output
	// element's sum; Gamma is γ_g = g/(2^24 − g).
	Terms    int                 `json:"terms"`
	Products int                 `json:"products"`
	Rounds   int                 `json:"rounds"`
	Gamma    string              `json:"gamma"`
	Elements []RefinementElement `json:"elements"`
	// Worst is the largest element ratio, WorstElement the first element
	// that has it (−1 for an empty output).
	Worst        string `json:"worst"`
	WorstElement int    `json:"worst_element"`
}

// RefinementFile certifies one (provider, op) pair.
type RefinementFile struct {
	Header
	Op       string `json:"op"`
	Provider string `json:"provider"`
	Capsule  string `json:"capsule"`
	Policy   string `json:"policy"`
	// Evidence is the kind of evidence behind the capsule's value
	// contract (refine.Discharge under the checked assurance policy).
	Evidence string `json:"evidence"`
	// Seed is the run seed (the manifest's).
	Seed uint64 `json:"seed"`
	// RoundingBound is the bound the bound and overflow rules decide
	// with (refinementBound).
	RoundingBound RoundingBound    `json:"rounding_bound"`
	Cases         []RefinementCase `json:"cases"`
	// Worst is the largest case ratio, WorstCase its case (−1 when no
	// case has an element), WorstFloat its display value.
	Worst      string `json:"worst"`
	WorstCase  int    `json:"worst_case"`
	WorstFloat string `json:"worst_float"`
}

// Class spellings in certificates (the refine spellings "+inf"/"-inf"
// are outside the safe alphabet).
// refinementEnv carries the providers the refinement certificates are
// produced and verified with.
type refinementEnv struct {
	providers *backend.Providers // nil: backend.FastProviders()
	// allowFailures makes the producer write a certificate even when a
	// case fails (for tests of the verifier's own checks).
	allowFailures bool
}

func (e refinementEnv) set() *backend.Providers {
	if e.providers != nil {
		return e.providers
	}
	return backend.FastProviders()
}

// RefinementCapsule resolves the capsule certified for a provider and op:
// the reference capsule is what the checked_cpu profile selects (from the
// reference catalog), the fast one is fast_cpu.OP of backend.FastCatalog.
func RefinementCapsule(provider, op string) (backend.Capsule, error) {
	switch provider {
	case backend.ProviderReference:
		sel, err := backend.CheckedCPU().Select(op)
		if err != nil {
			return backend.Capsule{}, err
		}
		if sel.Capsule.Provider != provider {
			return backend.Capsule{}, fmt.Errorf("checked_cpu selects %s for %s, not a reference capsule", sel.Capsule.Name, op)
		}
		return sel.Capsule, nil
	case backend.ProviderFastCPU:
		c, ok := backend.FastCatalog().Lookup(provider + "." + op)
		if !ok {
			return backend.Capsule{}, fmt.Errorf("no capsule %s.%s in the fast catalog", provider, op)
		}
		return c, nil
	case backend.ProviderNativeCUDA:
		c, ok := backend.CUDACatalog().Lookup(provider + "." + op)
		if !ok {
			return backend.Capsule{}, fmt.Errorf("no capsule %s.%s in the CUDA catalog", provider, op)
		}
		return c, nil
	}
	return backend.Capsule{}, fmt.Errorf("unknown provider %q", provider)
}

// refinementPairs lists the (provider, op) pairs Certify covers with o.
func refinementPairs(o Options) ([][2]string, error) {
	provs, err := selectedProviders(o)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, p := range provs {
		for _, op := range refine.Ops() {
			if o.Ops != nil && !slices.Contains(o.Ops, op) {
				continue
			}
			out = append(out, [2]string{p, op})
		}
	}
	return out, nil
}

// RefinementPath is the path of the refinement certificate of op on
// provider: refinement/PROVIDER.OP.json.
func RefinementPath(provider, op string) string {
	return KindRefinement + "/" + provider + "." + op + ".json"
}

func (e refinementEnv) produce(w *Writer, o Options) error {
	pairs, err := refinementPairs(o)
	if err != nil {
		return err
	}
	return putEach(w, o, KindRefinement, len(pairs), func(k int) string { return RefinementPath(pairs[k][0], pairs[k][1]) }, func(k int) (any, error) {
		return e.produceOne(pairs[k][0], pairs[k][1], o.Cases, o.Seed)
	})
}

// ProduceRefinement runs refine.Check for op on the provider's capsule
// (bound through backend.FastProviders) and returns the certificate; it
// fails, naming op, provider, case and element, if any case does not hold.
func ProduceRefinement(provider, op string, cases int, seed uint64) (*RefinementFile, error) {
	return refinementEnv{}.produceOne(provider, op, cases, seed)
}

// ProduceUncheckedRefinement is ProduceRefinement through the providers
// ps, writing the certificate even when a case fails (recording the
// faulty output): the material of the verifier's tests, which must reject
// it; certify never writes one.
func ProduceUncheckedRefinement(ps *backend.Providers, provider, op string, cases int, seed uint64) (*RefinementFile, error) {
	return refinementEnv{providers: ps, allowFailures: true}.produceOne(provider, op, cases, seed)
}

func (e refinementEnv) produceOne(provider, op string, cases int, seed uint64) (*RefinementFile, error) {
	capsule, err := RefinementCapsule(provider, op)
	if err != nil {
		return nil, fmt.Errorf("refinement %s.%s: %w", provider, op, err)
	}
	b, err := e.set().Bind(capsule)
	if err != nil {
		return nil, fmt.Errorf("refinement %s.%s: %w", provider, op, err)
	}
	res, err := refine.Check(b, op, cases, seed)
	if err != nil {
		return nil, fmt.Errorf("refinement %s.%s: %w", provider, op, err)
	}
	if res.Failure != nil && !e.allowFailures {
		return nil, fmt.Errorf("refinement %s.%s: %d failing cases; first: %w", provider, op, res.Failures, res.Failure)
	}
	rb, err := refinementBound(op)
	if err != nil {
		return nil, fmt.Errorf("refinement %s.%s: %w", provider, op, err)
	}
	f := &RefinementFile{
		Header: Header{Format: Format, Kind: KindRefinement}, RoundingBound: rb,
		Op: op, Provider: res.Provider, Capsule: res.Capsule, Policy: string(res.Policy),
		Evidence: string(res.Obligation.Evidence), Seed: seed, Cases: []RefinementCase{},
		Worst: res.Worst.String(), WorstCase: res.WorstCase, WorstFloat: DisplayFloat(res.Worst.Big()),
	}
	for _, c := range res.Cases {
		rc := RefinementCase{
			Index: c.Index, InputKind: string(c.Kind), Op: c.Op, Provider: c.Provider, Capsule: c.Capsule,
			Policy: string(c.Policy), Axis: c.Axis, Output: encodeBits(c.Output),
			Terms: c.Terms, Products: c.Products, Rounds: c.Rounds, Gamma: c.Gamma.String(),
			Elements: []RefinementElement{}, Worst: c.Worst.String(), WorstElement: c.WorstElement,
		}
		for _, in := range c.Inputs {
			rc.Inputs = append(rc.Inputs, encodeBits(in))
		}
		if c.Replay != nil {
			r := encodeBits(*c.Replay)
			rc.Replay = &r
		}
		for _, el := range c.Elements {
			re := RefinementElement{
				Index: el.Index, Rule: string(el.Rule), Class: ClassName(el.Class),
				Exact: el.Exact.String(), AbsSum: el.AbsSum.String(), Bound: el.Bound.String(),
				Error: el.Error.String(), Ratio: el.Ratio.String(), RatioFloat: DisplayFloat(el.Ratio.Big()),
			}
			for _, a := range el.Allowed {
				re.Allowed = append(re.Allowed, ClassName(a))
			}
			rc.Elements = append(rc.Elements, re)
		}
		f.Cases = append(f.Cases, rc)
	}
	return f, nil
}

func encodeBits(b refine.Bits) BitsTensor {
	out := BitsTensor{Shape: append([]int{}, b.Shape...), Bits: make([]string, len(b.Data))}
	for i, u := range b.Data {
		out.Bits[i] = fmt.Sprintf("0x%08x", u)
	}
	return out
}
