package refine_test

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// bind binds the named capsule of the fast catalog through ps (nil:
// FastProviders).
func bind(t testing.TB, name string, ps *backend.Providers) *backend.Binding {
	t.Helper()
	c, ok := backend.FastCatalog().Lookup(name)
	if !ok {
		t.Fatalf("no capsule %s", name)
	}
	if ps == nil {
		ps = backend.FastProviders()
	}
	b, err := ps.Bind(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCheckProviders runs every (provider, op) pair over every input kind:
// every case holds, every case survives Recheck, the fast capsules are
// judged by the bound (with a worst ratio in (0, 1]) and the reference
// capsules bit for bit (ratio 0).
func TestCheckProviders(t *testing.T) {
	cat, ps := backend.FastCatalog(), backend.FastProviders()
	for _, prov := range []string{backend.ProviderFastCPU, backend.ProviderReference} {
		for _, op := range refine.Ops() {
			name := prov + "." + op
			t.Run(name, func(t *testing.T) {
				res, err := refine.CheckCapsule(cat, ps, name, refine.Options{Cases: 70, Seed: 2026})
				if err != nil {
					t.Fatal(err)
				}
				if res.Failure != nil || res.Failures != 0 {
					t.Fatalf("%d failures, first: %v", res.Failures, res.Failure)
				}
				if len(res.Cases) != 70 || res.Capsule != name || res.Provider != prov || res.Op != op {
					t.Fatalf("result header %s/%s/%s with %d cases", res.Op, res.Provider, res.Capsule, len(res.Cases))
				}
				counts := res.RuleCounts()
				one := spec.NewRat(1, 1)
				switch prov {
				case backend.ProviderFastCPU:
					if res.Obligation.Rule != refine.RuleBound || !res.Obligation.Certificate {
						t.Fatalf("obligation %+v", res.Obligation)
					}
					if counts[refine.RuleBound] == 0 || counts[refine.RuleClass] == 0 || counts[refine.RuleBitExact] != 0 {
						t.Fatalf("rule counts %v", counts)
					}
					if c, _ := res.Worst.Compare(spec.Rat{}); c <= 0 || ratGT(res.Worst, one) {
						t.Fatalf("worst ratio %s, want in (0, 1]", res.Worst)
					}
				default:
					if counts[refine.RuleBitExact] == 0 || len(counts) != 1 || !res.Worst.IsZero() {
						t.Fatalf("rule counts %v, worst %s", counts, res.Worst)
					}
				}
				t.Logf("%s: worst ratio %.4g (case %d, kind %s), rules %v", name, res.WorstFloat, res.WorstCase, res.Cases[res.WorstCase].Kind, counts)
				for _, c := range res.Cases {
					if err := refine.Recheck(c, cat, ps); err != nil {
						t.Fatalf("recheck: %v", err)
					}
				}
			})
		}
	}
}

// TestOverflowRulesExercised confirms that the overflow kind really
// produces non-finite outputs from finite terms on the fast provider
// (RuleOverflow), and the special kind RuleClass.
func TestOverflowRulesExercised(t *testing.T) {
	for _, op := range []string{"matmul", "sum"} {
		res, err := refine.CheckOptions(bind(t, "fast_cpu."+op, nil), op, refine.Options{Cases: 20, Seed: 5,
			Kinds: []refine.Kind{refine.KindOverflow, refine.KindSpecial}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		c := res.RuleCounts()
		if c[refine.RuleOverflow] == 0 || c[refine.RuleClass] == 0 {
			t.Fatalf("%s: rule counts %v", op, c)
		}
	}
}

func f32bits(f float64) uint32 { return math.Float32bits(float32(f)) }

var (
	maxF   = f32bits(math.MaxFloat32)
	negMax = maxF | 1<<31
	posInf = uint32(0x7F800000)
	negInf = uint32(0xFF800000)
	qNaN   = uint32(0x7FC01234)
	hwNaN  = uint32(0xFFC00000)
	negZ   = uint32(1 << 31)
	sub1   = uint32(1) // 2^-149
)

// stub returns a binding of capsule to a provider (named like the
// capsule's) that ignores its inputs and returns out.
func stub(t *testing.T, c backend.Capsule, out Bits) *backend.Binding {
	t.Helper()
	p, err := backend.NewFuncProvider(c.Provider, c.Device, []string{c.Op},
		func(string, *spec.Attrs, []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
			d := make([]spec.F32, len(out.Data))
			for i, u := range out.Data {
				d[i] = spec.F32(math.Float32frombits(u))
			}
			return spec.NewTensor(out.Shape, d)
		})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := backend.NewProviders(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ps.Bind(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Bits is a local alias for brevity.
type Bits = refine.Bits

func vec(us ...uint32) Bits { return Bits{Shape: spec.Shape{len(us)}, Data: us} }

func scalar(u uint32) Bits { return Bits{Shape: spec.Shape{}, Data: []uint32{u}} }

// TestSpecialValueRules checks each special-value rule on hand-built
// inputs, with a stub provider returning a chosen result (or the real
// provider when out is nil).
func TestSpecialValueRules(t *testing.T) {
	fastSum, _ := backend.FastCPUCapsule("sum")
	fastMM, _ := backend.FastCPUCapsule("matmul")
	refSum, _ := backend.ReferenceCapsule("sum")
	tests := []struct {
		name    string
		capsule backend.Capsule
		in      []Bits
		out     *Bits // nil: the real provider
		rule    refine.Rule
		ok      bool
		allowed []refine.Class
	}{
		{"inf term gives +inf", fastSum, []Bits{vec(f32bits(1), posInf)}, ptr(scalar(posInf)), refine.RuleClass, true, []refine.Class{"+inf"}},
		{"inf term: NaN rejected", fastSum, []Bits{vec(f32bits(1), posInf)}, ptr(scalar(qNaN)), refine.RuleClass, false, []refine.Class{"+inf"}},
		{"inf term: finite rejected", fastSum, []Bits{vec(f32bits(1), posInf)}, ptr(scalar(f32bits(1))), refine.RuleClass, false, nil},
		{"inf term: -inf rejected", fastSum, []Bits{vec(f32bits(1), posInf)}, ptr(scalar(negInf)), refine.RuleClass, false, nil},
		{"NaN term: any NaN payload", fastSum, []Bits{vec(qNaN, f32bits(1))}, ptr(scalar(hwNaN)), refine.RuleClass, true, []refine.Class{"nan"}},
		{"NaN term: inf rejected", fastSum, []Bits{vec(qNaN, f32bits(1))}, ptr(scalar(posInf)), refine.RuleClass, false, nil},
		{"inf - inf is NaN", fastSum, []Bits{vec(posInf, negInf)}, ptr(scalar(qNaN)), refine.RuleClass, true, []refine.Class{"nan"}},
		{"inf - inf: +inf rejected", fastSum, []Bits{vec(posInf, negInf)}, ptr(scalar(posInf)), refine.RuleClass, false, nil},
		{"0·inf is NaN (real provider)", fastMM, []Bits{vec(0), vec(posInf)}, nil, refine.RuleClass, true, []refine.Class{"nan"}},
		{"0·inf: 0 rejected", fastMM, []Bits{vec(0), vec(posInf)}, ptr(scalar(0)), refine.RuleClass, false, nil},
		{"+inf with overflowing negatives may be NaN", fastSum, []Bits{vec(posInf, negMax, negMax)}, ptr(scalar(qNaN)), refine.RuleClass, true, []refine.Class{"+inf", "nan"}},
		{"exact overflow gives +inf (real provider)", fastSum, []Bits{vec(maxF, maxF)}, nil, refine.RuleOverflow, true, []refine.Class{"+inf"}},
		{"exact overflow: MaxFloat32 rejected", fastSum, []Bits{vec(maxF, maxF)}, ptr(scalar(maxF)), refine.RuleBound, false, nil},
		{"exact overflow: -inf rejected", fastSum, []Bits{vec(maxF, maxF)}, ptr(scalar(negInf)), refine.RuleOverflow, false, []refine.Class{"+inf"}},
		{"exact overflow: NaN rejected", fastSum, []Bits{vec(maxF, maxF)}, ptr(scalar(qNaN)), refine.RuleOverflow, false, []refine.Class{"+inf"}},
		{"finite result, both overflows reachable: NaN allowed", fastSum, []Bits{vec(maxF, maxF, negMax, negMax, f32bits(1))}, ptr(scalar(qNaN)), refine.RuleOverflow, true, []refine.Class{"+inf", "-inf", "nan"}},
		{"finite result, both overflows reachable: exact value allowed", fastSum, []Bits{vec(maxF, maxF, negMax, negMax, f32bits(1))}, ptr(scalar(f32bits(1))), refine.RuleBound, true, nil},
		{"no overflow reachable: +inf rejected", fastSum, []Bits{vec(f32bits(1), f32bits(2))}, ptr(scalar(posInf)), refine.RuleOverflow, false, []refine.Class(nil)},
		{"negative zeros: +0 has the exact value", fastSum, []Bits{vec(negZ, negZ)}, ptr(scalar(0)), refine.RuleBound, true, nil},
		{"negative zeros: -0 too", fastSum, []Bits{vec(negZ, negZ)}, ptr(scalar(negZ)), refine.RuleBound, true, nil},
		{"subnormal sums are exact", fastSum, []Bits{vec(sub1, sub1, sub1)}, nil, refine.RuleBound, true, nil},
		{"subnormal sums: one unit off rejected", fastSum, []Bits{vec(sub1, sub1, sub1)}, ptr(scalar(2)), refine.RuleBound, false, nil},
		{"fixed-left: -0 must be the replay's +0", refSum, []Bits{vec(negZ, negZ)}, ptr(scalar(negZ)), refine.RuleBitExact, false, nil},
		{"fixed-left: real reference gives +0", refSum, []Bits{vec(negZ, negZ)}, nil, refine.RuleBitExact, true, nil},
		{"fixed-left: inf - inf, hardware NaN matches", refSum, []Bits{vec(posInf, negInf)}, nil, refine.RuleBitExact, true, nil},
		{"fixed-left: NaN payloads need not match", refSum, []Bits{vec(qNaN)}, ptr(scalar(hwNaN)), refine.RuleBitExact, true, nil},
		{"fixed-left: inf for NaN rejected", refSum, []Bits{vec(qNaN)}, ptr(scalar(posInf)), refine.RuleBitExact, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b *backend.Binding
			if tc.out == nil {
				b = bind(t, tc.capsule.Name, nil)
			} else {
				b = stub(t, tc.capsule, *tc.out)
			}
			c, err := refine.Evaluate(b, tc.capsule.Op, 0, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Elements) != 1 {
				t.Fatalf("%d elements", len(c.Elements))
			}
			el := c.Elements[0]
			if el.Rule != tc.rule {
				t.Errorf("rule %s, want %s", el.Rule, tc.rule)
			}
			if ok := c.Failure == nil; ok != tc.ok {
				t.Errorf("holds = %t, want %t (failure: %v)", ok, tc.ok, c.Failure)
			}
			if tc.allowed != nil && !slices.Equal(el.Allowed, tc.allowed) {
				t.Errorf("allowed %v, want %v", el.Allowed, tc.allowed)
			}
			if c.Failure != nil && !strings.Contains(c.Failure.Error(), "element 0") {
				t.Errorf("failure %q does not name the element", c.Failure)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func ratGT(a, b spec.Rat) bool {
	c, _ := a.Compare(b)
	return c > 0
}

// TestUnderflowTermIsNeeded: a single product 2^-80 · (1+2^-23)·2^-70 is
// (1+2^-23)·2^-150 exactly and rounds to 2^-149, an error of almost
// 2^-150 that γ_1·|t| (about 2^-174) cannot cover; the p·2^-149 term does.
func TestUnderflowTermIsNeeded(t *testing.T) {
	a := f32bits(math.Ldexp(1, -80))
	b := f32bits(math.Ldexp(1+math.Ldexp(1, -23), -70))
	c, err := refine.Evaluate(bind(t, "fast_cpu.matmul", nil), "matmul", 0, []Bits{vec(a), vec(b)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Failure != nil {
		t.Fatal(c.Failure)
	}
	el := c.Elements[0]
	if c.Output.Data[0] != 1 {
		t.Fatalf("output 0x%08x, want the smallest subnormal", c.Output.Data[0])
	}
	g, _ := refine.Gamma(1)
	relative := new(big.Rat).Mul(g, el.AbsSum.Big())
	if el.Error.Big().Cmp(relative) <= 0 {
		t.Fatalf("error %s is within γ_1·Σ|t| = %s: the case does not need the underflow term", el.Error, relative)
	}
	// The error is 2^-150 − 2^-173 against a bound of 2^-149 + γ_1·|t|: a
	// ratio just under 1/2 (the underflow term carries a factor 2 for the
	// propagation through later additions, of which there are none here).
	if ratGT(spec.NewRat(49, 100), el.Ratio) {
		t.Fatalf("ratio %s: expected the underflow term to be half used", el.Ratio)
	}
}

// TestPlantedBoundBug: a fast provider whose one output element is off by
// 2^16 ulps fails the bound, and the failure names op, provider, element,
// error and bound.
func TestPlantedBoundBug(t *testing.T) {
	tests := []struct {
		op      string
		shapes  []spec.Shape
		element int
	}{
		{"matmul", []spec.Shape{{4, 8}, {8, 4}}, 3},
		{"linear", []spec.Shape{{3, 8}, {4, 8}, {4}}, 5},
		{"sum", []spec.Shape{{64}}, 0},
		{"reduce_sum", []spec.Shape{{5, 16}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			bad, err := refine.NewFlipBit(backend.NewFastCPUProvider(), tc.op, tc.element, 16)
			if err != nil {
				t.Fatal(err)
			}
			ps, err := backend.NewProviders(backend.NewReferenceProvider(nil), bad)
			if err != nil {
				t.Fatal(err)
			}
			axis := 0
			if tc.op == "reduce_sum" {
				axis = 1
			}
			res, err := refine.CheckOptions(bind(t, "fast_cpu."+tc.op, ps), tc.op, refine.Options{Cases: 4, Seed: 1,
				Kinds: []refine.Kind{refine.KindNormal}, Shapes: tc.shapes, Axis: axis})
			if err != nil {
				t.Fatal(err)
			}
			var f *counterexample.Failure
			if !errors.As(res.Failure, &f) {
				t.Fatalf("planted bug not caught: %v", res.Failure)
			}
			msg := f.Error()
			for _, want := range []string{tc.op + " on provider fast_cpu", "capsule fast_cpu." + tc.op,
				"element " + itoa(tc.element), "exceeds the bound", "|provider − exact| = "} {
				if !strings.Contains(msg, want) {
					t.Errorf("failure %q lacks %q", msg, want)
				}
			}
			if f.Element != tc.element || refine.Rule(f.Law) != refine.RuleBound || !ratGT(f.AbsError, f.Bound) {
				t.Errorf("failure %+v", f)
			}
			// Recheck with the honest provider rejects the record: the
			// re-executed output differs.
			if err := refine.Recheck(res.Cases[0], backend.FastCatalog(), backend.FastProviders()); err == nil ||
				!strings.Contains(err.Error(), "output["+itoa(tc.element)+"]") {
				t.Errorf("recheck with the honest provider: %v", err)
			}
			// Recheck with the faulty provider re-derives the failure.
			if err := refine.Recheck(res.Cases[0], backend.FastCatalog(), ps); !errors.As(err, &f) {
				t.Errorf("recheck with the faulty provider: %v", err)
			}
		})
	}
	// Under the default mix of kinds the planted bug is caught too.
	bad, _ := refine.NewFlipBit(backend.NewFastCPUProvider(), "matmul", 0, 16)
	ps, _ := backend.NewProviders(backend.NewReferenceProvider(nil), bad)
	res, err := refine.Check(bind(t, "fast_cpu.matmul", ps), "matmul", 14, 9)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures == 0 {
		t.Fatal("planted bug not caught under the default kinds")
	}
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }

// TestPlantedFixedLeftBug: a reference provider whose one output element
// is one ulp off fails the bit-exact check.
func TestPlantedFixedLeftBug(t *testing.T) {
	for _, op := range refine.Ops() {
		t.Run(op, func(t *testing.T) {
			bad, _ := refine.NewFlipBit(backend.NewReferenceProvider(nil), op, 0, 0)
			ps, _ := backend.NewProviders(bad)
			res, err := refine.CheckOptions(bind(t, "reference."+op, ps), op, refine.Options{Cases: 3, Seed: 3,
				Kinds: []refine.Kind{refine.KindNormal}})
			if err != nil {
				t.Fatal(err)
			}
			var f *counterexample.Failure
			if !errors.As(res.Failure, &f) || refine.Rule(f.Law) != refine.RuleBitExact || f.Element != 0 {
				t.Fatalf("one-ulp fault: %v", res.Failure)
			}
			if !strings.Contains(f.Error(), "differs from the binary32 replay") || !strings.Contains(f.Error(), "provider reference") {
				t.Fatalf("message %q", f.Error())
			}
		})
	}
}

// TestRecheckDetectsTampering edits one field of a recorded case at a time;
// Recheck names the field.
func TestRecheckDetectsTampering(t *testing.T) {
	cat, ps := backend.FastCatalog(), backend.FastProviders()
	res, err := refine.CheckOptions(bind(t, "fast_cpu.matmul", ps), "matmul", refine.Options{Cases: 1, Seed: 11,
		Kinds: []refine.Kind{refine.KindNormal}, Shapes: []spec.Shape{{2, 3}, {3, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	orig := res.Cases[0]
	if err := refine.Recheck(orig, cat, ps); err != nil {
		t.Fatal(err)
	}
	special, err := refine.CheckOptions(bind(t, "fast_cpu.sum", ps), "sum", refine.Options{Cases: 1, Seed: 2,
		Kinds: []refine.Kind{refine.KindSpecial}, Shapes: []spec.Shape{{40}}})
	if err != nil {
		t.Fatal(err)
	}
	sp := special.Cases[0]
	if sp.Replay == nil || sp.Elements[0].Rule != refine.RuleClass {
		t.Fatalf("special case: replay %v, rule %s", sp.Replay, sp.Elements[0].Rule)
	}
	copyCase := func(c refine.Case) refine.Case {
		c.Inputs = slices.Clone(c.Inputs)
		for i := range c.Inputs {
			c.Inputs[i] = c.Inputs[i].Clone()
		}
		c.Output = c.Output.Clone()
		c.Elements = slices.Clone(c.Elements)
		if c.Replay != nil {
			r := c.Replay.Clone()
			c.Replay = &r
		}
		return c
	}
	tests := []struct {
		name  string
		base  refine.Case
		edit  func(c *refine.Case)
		field string
	}{
		{"output bit", orig, func(c *refine.Case) { c.Output.Data[1] ^= 1 }, "output[1]"},
		{"input bit", orig, func(c *refine.Case) { c.Inputs[0].Data[0] ^= 1 << 10 }, "output["},
		{"exact", orig, func(c *refine.Case) { c.Elements[2].Exact = c.Elements[2].Exact.Add(spec.NewRat(1, 1<<40)) }, "elements[2].exact"},
		{"abs sum", orig, func(c *refine.Case) { c.Elements[0].AbsSum = spec.NewRat(7, 1) }, "elements[0].abs_sum"},
		{"bound", orig, func(c *refine.Case) { c.Elements[3].Bound = c.Elements[3].Bound.Add(c.Elements[3].Bound) }, "elements[3].bound"},
		{"error", orig, func(c *refine.Case) { c.Elements[1].Error = spec.Rat{} }, "elements[1].error"},
		{"ratio", orig, func(c *refine.Case) { c.Elements[1].Ratio = spec.NewRat(1, 3) }, "elements[1].ratio"},
		{"rule", orig, func(c *refine.Case) { c.Elements[0].Rule = refine.RuleBitExact }, "elements[0].rule"},
		{"class", orig, func(c *refine.Case) { c.Elements[0].Class = refine.ClassNaN }, "elements[0].class"},
		{"index", orig, func(c *refine.Case) { c.Elements[0].Index = 9 }, "elements[0].index"},
		{"dropped element", orig, func(c *refine.Case) { c.Elements = c.Elements[:3] }, "element count"},
		{"gamma", orig, func(c *refine.Case) { c.Gamma = spec.NewRat(1, 2) }, "gamma"},
		{"terms", orig, func(c *refine.Case) { c.Terms = 2 }, "terms"},
		{"products", orig, func(c *refine.Case) { c.Products = 0 }, "products"},
		{"rounds", orig, func(c *refine.Case) { c.Rounds = 1 }, "rounds"},
		{"worst", orig, func(c *refine.Case) { c.Worst = spec.Rat{} }, "worst"},
		{"worst element", orig, func(c *refine.Case) { c.WorstElement = 7 }, "worst_element"},
		{"worst float", orig, func(c *refine.Case) { c.WorstFloat = 0.5 }, "worst_float"},
		{"failure flag", orig, func(c *refine.Case) { c.Failure = &counterexample.Failure{} }, "failure"},
		{"policy", orig, func(c *refine.Case) { c.Policy = backend.ReductionFixedLeft }, "policy"},
		{"provider", orig, func(c *refine.Case) { c.Provider = "reference" }, "provider"},
		{"op", orig, func(c *refine.Case) { c.Op = "sum" }, "op"},
		{"capsule", orig, func(c *refine.Case) { c.Capsule = "fast_cpu.relu" }, "not in the catalog"},
		{"axis", orig, func(c *refine.Case) { c.Axis = 1 }, "axis"},
		{"truncated input", orig, func(c *refine.Case) { c.Inputs[1].Data = c.Inputs[1].Data[:5] }, "input 1"},
		{"replay", sp, func(c *refine.Case) { c.Replay.Data[0] ^= 1 << 30 }, "replay"},
		{"replay dropped", sp, func(c *refine.Case) { c.Replay = nil }, "replay presence"},
		{"allowed", sp, func(c *refine.Case) { c.Elements[0].Allowed = append(c.Elements[0].Allowed, refine.ClassPosInf) }, "elements[0].allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := copyCase(tc.base)
			tc.edit(&c)
			err := refine.Recheck(c, cat, ps)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("recheck: %v, want an error naming %q", err, tc.field)
			}
		})
	}
	// The edits did not leak into the originals.
	if err := refine.Recheck(orig, cat, ps); err != nil {
		t.Fatal(err)
	}
	if err := refine.Recheck(sp, cat, ps); err != nil {
		t.Fatal(err)
	}
}

// TestDischarge maps each evidence kind to its obligation under both
// assurance policies.
func TestDischarge(t *testing.T) {
	base, _ := backend.FastCPUCapsule("matmul")
	with := func(ev backend.Evidence, trust backend.Trust) backend.Capsule {
		c := base
		c.Value.Evidence, c.Trust = ev, trust
		return c
	}
	tests := []struct {
		name      string
		c         backend.Capsule
		a         backend.Assurance
		wantErr   string
		kind      backend.EvidenceKind
		certifies bool
	}{
		{"certificate", base, backend.AssuranceChecked, "", backend.EvidenceNumericalCertificate, true},
		{"theorem", with(backend.Theorem{Name: "NN.Runtime.matmul_refines"}, backend.TrustChecked), backend.AssuranceChecked, "", backend.EvidenceTheorem, false},
		{"checked guard", with(backend.RuntimeGuard{Name: "bounds guard"}, backend.TrustChecked), backend.AssuranceChecked, "", backend.EvidenceRuntimeGuard, false},
		{"test suite", with(backend.TestSuite{Name: "suite"}, backend.TrustChecked), backend.AssuranceChecked, "", backend.EvidenceTestSuite, false},
		{"trusted boundary under checked", with(backend.TrustedBoundary{Reason: "vendor BLAS"}, backend.TrustExternal), backend.AssuranceChecked, "assurance policy checked does not accept", "", false},
		{"trusted boundary under external", with(backend.TrustedBoundary{Reason: "vendor BLAS"}, backend.TrustExternal), backend.AssuranceExternal, "", backend.EvidenceTrustedBoundary, false},
		{"trusted boundary claimed checked", with(backend.TrustedBoundary{Reason: "vendor BLAS"}, backend.TrustChecked), backend.AssuranceExternal, "rests on a trusted boundary, but trust=checked", "", false},
		{"not applicable", with(backend.NotApplicable{}, backend.TrustChecked), backend.AssuranceChecked, "needs evidence", "", false},
		{"no evidence", with(nil, backend.TrustChecked), backend.AssuranceChecked, "no evidence", "", false},
		{"unknown policy", base, backend.Assurance("lenient"), "unknown assurance policy", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ob, err := refine.Discharge(tc.c, tc.a)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ob.Evidence != tc.kind || ob.Certificate != tc.certifies || ob.Rule != refine.RuleBound || ob.Basis == "" {
				t.Fatalf("obligation %+v", ob)
			}
		})
	}
	ref, _ := backend.ReferenceCapsule("sum")
	if ob, err := refine.Discharge(ref, backend.AssuranceChecked); err != nil || ob.Rule != refine.RuleBitExact {
		t.Fatalf("reference: %+v, %v", ob, err)
	}
}

// TestTrustedBoundaryRefinementContext: a capsule whose value contract is
// a trusted boundary is refused by a refinement check and by selection
// under the checked assurance policy, and admitted under external.
func TestTrustedBoundaryRefinementContext(t *testing.T) {
	c, _ := backend.FastCPUCapsule("sum")
	c.Name = "fast_cpu.sum_trusted"
	c.Trust = backend.TrustExternal
	c.Value.Evidence = backend.TrustedBoundary{Reason: "vendor reduction library"}
	b, err := backend.FastProviders().Bind(c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = refine.CheckOptions(b, "sum", refine.Options{Cases: 2, Seed: 1, Assurance: backend.AssuranceChecked})
	if err == nil || !strings.Contains(err.Error(), "trust=trusted-external") {
		t.Fatalf("checked assurance: %v, want a rejection", err)
	}
	res, err := refine.CheckOptions(b, "sum", refine.Options{Cases: 2, Seed: 1, Assurance: backend.AssuranceExternal})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil || res.Obligation.Evidence != backend.EvidenceTrustedBoundary || res.Obligation.Certificate {
		t.Fatalf("external assurance: %+v, %v", res.Obligation, res.Failure)
	}
	// Selection agrees: the same capsule, alone in a catalog.
	cat, _ := backend.NewCatalog(c)
	for _, tc := range []struct {
		a  backend.Assurance
		ok bool
	}{{backend.AssuranceChecked, false}, {backend.AssuranceExternal, true}} {
		p := backend.FastCPU()
		p.Assurance, p.Catalog = tc.a, cat
		_, err := p.Select("sum")
		if (err == nil) != tc.ok {
			t.Errorf("select under %s: %v", tc.a, err)
		}
	}
}

// TestDeterminism: the same seed gives the same records, whatever
// GOMAXPROCS is.
func TestDeterminism(t *testing.T) {
	run := func() *refine.Result {
		res, err := refine.Check(bind(t, "fast_cpu.sum", nil), "sum", 14, 77)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a := run()
	old := runtime.GOMAXPROCS(1)
	b := run()
	runtime.GOMAXPROCS(old)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
	c, err := refine.Check(bind(t, "fast_cpu.sum", nil), "sum", 14, 78)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a.Cases[0].Inputs, c.Cases[0].Inputs) {
		t.Fatal("different seeds drew the same inputs")
	}
}

// TestLongReductions covers fastcpu.Sum's chunking (more than two chunks of
// fastcpu.ChunkLen) and the strided reduce_sum path on long axes.
func TestLongReductions(t *testing.T) {
	if testing.Short() {
		t.Skip("long reductions")
	}
	tests := []struct {
		op     string
		shapes []spec.Shape
		axis   int
	}{
		{"sum", []spec.Shape{{40000}}, 0},
		{"reduce_sum", []spec.Shape{{3000, 3}}, 0},
		{"reduce_sum", []spec.Shape{{2, 5000}}, -1},
	}
	for _, tc := range tests {
		res, err := refine.CheckOptions(bind(t, "fast_cpu."+tc.op, nil), tc.op, refine.Options{Cases: 3, Seed: 4,
			Kinds: []refine.Kind{refine.KindNormal, refine.KindCancel, refine.KindWide}, Shapes: tc.shapes, Axis: tc.axis})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		t.Logf("%s %v: worst ratio %.4g", tc.op, tc.shapes, res.WorstFloat)
	}
}

// TestBoundConstants pins γ_n, the bound and the overflow threshold.
func TestBoundConstants(t *testing.T) {
	two24 := int64(1 << 24)
	tests := []struct {
		n    int
		want *big.Rat
		err  bool
	}{
		{0, big.NewRat(0, 1), false},
		{1, big.NewRat(1, two24-1), false},
		{16, big.NewRat(16, two24-16), false},
		{1 << 23, big.NewRat(1, 1), false},
		{1<<23 + 1, nil, true},
		{-1, nil, true},
	}
	for _, tc := range tests {
		g, err := refine.Gamma(tc.n)
		if (err != nil) != tc.err || (err == nil && g.Cmp(tc.want) != 0) {
			t.Errorf("Gamma(%d) = %v, %v; want %v", tc.n, g, err, tc.want)
		}
	}
	b, err := refine.ElementBound(2, 2, big.NewRat(3, 1))
	want := new(big.Rat).Add(big.NewRat(6, two24-2), new(big.Rat).Mul(big.NewRat(2, 1), refine.UnderflowUnit()))
	if err != nil || b.Cmp(want) != 0 {
		t.Errorf("ElementBound(2, 2, 3) = %v, %v; want %v", b, err, want)
	}
	if _, err := refine.ElementBound(1, -1, big.NewRat(1, 1)); err == nil {
		t.Error("negative product count accepted")
	}
	if u := refine.Unit(); u.Cmp(big.NewRat(1, two24)) != 0 {
		t.Errorf("Unit = %v", u)
	}
	// Ω rounds to +∞; anything below it rounds to MaxFloat32 or less.
	om := refine.OverflowThreshold()
	if got := (spec.Binary32(0)).FromRat(om).Bits(); got != 0x7F800000 {
		t.Errorf("round(Ω) = 0x%08x, want +inf", got)
	}
	below := new(big.Rat).Sub(om, refine.UnderflowUnit())
	if got := (spec.Binary32(0)).FromRat(below).Bits(); got != maxF {
		t.Errorf("round(Ω − 2^-149) = 0x%08x, want MaxFloat32", got)
	}
}

// TestCheckRejectsBadRuns covers the runs that cannot be checked.
func TestCheckRejectsBadRuns(t *testing.T) {
	relu, _ := backend.ReferenceCapsule("relu")
	rb, _ := backend.DefaultProviders().Bind(relu)
	na, _ := backend.FastCPUCapsule("sum")
	na.Reduction = backend.ReductionNA
	nab, _ := backend.FastProviders().Bind(na)
	sum := bind(t, "fast_cpu.sum", nil)
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"nil binding", func() error { _, err := refine.Check(nil, "sum", 1, 0); return err }, "no binding"},
		{"op mismatch", func() error { _, err := refine.Check(sum, "matmul", 1, 0); return err }, "implements sum, not matmul"},
		{"no generator", func() error { _, err := refine.Check(rb, "relu", 1, 0); return err }, "no case generator"},
		{"negative cases", func() error { _, err := refine.Check(sum, "sum", -1, 0); return err }, "negative case count"},
		{"unknown kind", func() error {
			_, err := refine.CheckOptions(sum, "sum", refine.Options{Cases: 1, Kinds: []refine.Kind{"weird"}})
			return err
		}, "unknown input kind"},
		{"no kinds", func() error {
			_, err := refine.CheckOptions(sum, "sum", refine.Options{Cases: 1, Kinds: []refine.Kind{}})
			return err
		}, "no input kinds"},
		{"bad shapes", func() error {
			mm := bind(t, "fast_cpu.matmul", nil)
			_, err := refine.CheckOptions(mm, "matmul", refine.Options{Cases: 1, Shapes: []spec.Shape{{2, 3}, {4, 2}}})
			return err
		}, "inner dimensions differ"},
		{"reduction n/a", func() error { _, err := refine.Check(nab, "sum", 1, 0); return err }, "needs fixed-left or implementation-defined"},
		{"evaluate malformed bits", func() error {
			_, err := refine.Evaluate(sum, "sum", 0, []Bits{{Shape: spec.Shape{3}, Data: []uint32{1}}})
			return err
		}, "needs 3 values"},
		{"evaluate arity", func() error { _, err := refine.Evaluate(sum, "sum", 0, nil); return err }, "sum takes 1 parents"},
		{"flipbit bit", func() error { _, err := refine.NewFlipBit(backend.NewFastCPUProvider(), "sum", 0, 32); return err }, "not a bit"},
		{"flipbit nil", func() error { _, err := refine.NewFlipBit(nil, "sum", 0, 1); return err }, "needs a provider"},
		{"check capsule unknown", func() error {
			_, err := refine.CheckCapsule(backend.FastCatalog(), backend.FastProviders(), "fast_cpu.relu", refine.Options{Cases: 1})
			return err
		}, "not in the catalog"},
		{"check capsule unbound", func() error {
			_, err := refine.CheckCapsule(backend.FastCatalog(), backend.DefaultProviders(), "fast_cpu.sum", refine.Options{Cases: 1})
			return err
		}, "missing provider"},
		{"recheck unknown op", func() error {
			return refine.Recheck(refine.Case{Capsule: "reference.relu", Op: "relu", Provider: "reference", Policy: backend.ReductionNA},
				backend.FastCatalog(), backend.FastProviders())
		}, "no refinement rules"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestProviderErrorIsAFailure: a provider that fails on valid inputs
// fails its refinement (it is not a checker error).
func TestProviderErrorIsAFailure(t *testing.T) {
	c, _ := backend.FastCPUCapsule("sum")
	p, _ := backend.NewFuncProvider(c.Provider, c.Device, []string{"sum"},
		func(string, *spec.Attrs, []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
			return spec.Tensor[spec.F32]{}, errors.New("device lost")
		})
	ps, _ := backend.NewProviders(p)
	b, _ := ps.Bind(c)
	res, err := refine.Check(b, "sum", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 2 || res.Failure == nil || !strings.Contains(res.Failure.Error(), "the provider failed") ||
		!strings.Contains(res.Failure.Error(), "device lost") {
		t.Fatalf("failures %d, first %v", res.Failures, res.Failure)
	}
}

// TestClassOf pins the classification of encodings.
func TestClassOf(t *testing.T) {
	tests := []struct {
		bits uint32
		want refine.Class
	}{
		{0, refine.ClassFinite}, {negZ, refine.ClassFinite}, {sub1, refine.ClassFinite}, {maxF, refine.ClassFinite},
		{posInf, refine.ClassPosInf}, {negInf, refine.ClassNegInf}, {qNaN, refine.ClassNaN}, {hwNaN, refine.ClassNaN},
		{0x7F800001, refine.ClassNaN},
	}
	for _, tc := range tests {
		if got := refine.ClassOf(tc.bits); got != tc.want {
			t.Errorf("ClassOf(0x%08x) = %s, want %s", tc.bits, got, tc.want)
		}
	}
}

// TestOpsFollowRegistry: the refinement op list is the registry's set of
// ops that a provider other than the reference one implements, so it
// covers every fast_cpu kernel (TestCheckProviders runs each).
func TestOpsFollowRegistry(t *testing.T) {
	var want []string
	for _, info := range spec.Infos() {
		if len(info.Providers) > 0 {
			want = append(want, info.Name)
		}
	}
	if got := refine.Ops(); !slices.Equal(got, want) || !slices.Equal(got, backend.FastCPUOps()) {
		t.Errorf("Ops = %v, registry %v, fast_cpu %v", got, want, backend.FastCPUOps())
	}
}
