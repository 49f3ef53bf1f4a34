package obligations

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// derivativeOps are the primitives that owe the derivative obligation
// decided by the interval oracle (CheckDerivative): those without exact
// rational semantics (exact ones are decided over Dual[Rat],
// TestConsistentFaultsCaught).
func derivativeOps(t *testing.T) []string {
	t.Helper()
	var ops []string
	for _, info := range spec.Infos() {
		for _, ob := range ObligationsFor(info) {
			if ob == Derivative && !info.Exact {
				ops = append(ops, info.Name)
			}
		}
	}
	if len(ops) < 10 {
		t.Fatalf("only %d primitives owe the derivative obligation: %v", len(ops), ops)
	}
	return ops
}

// plantJVP returns registries whose DualInterval JVP rule of op is
// replaced by wrong(original result).
func plantJVP(op string, wrong func(spec.Tensor[DualInterval]) spec.Tensor[DualInterval]) Registries {
	r := DefaultRegistries()
	r.Dual = spec.New[DualInterval]()
	p, _ := r.Dual.Lookup(op)
	bad, orig := *p, p.JVP
	bad.JVP = func(a *spec.Attrs, xs []spec.Tensor[DualInterval], y spec.Tensor[DualInterval], dxs []spec.Tensor[DualInterval]) (spec.Tensor[DualInterval], error) {
		j, err := orig(a, xs, y, dxs)
		if err != nil {
			return j, err
		}
		return wrong(j), nil
	}
	r.Dual.Override(&bad)
	return r
}

// TestDerivativeCatchesPlantedFaults: a JVP rule off by 1% (JVP·1.01), on
// every primitive that owes the derivative obligation, and a sign flip in
// tanh's JVP are caught within 30 cases, with a counterexample that names
// the obligation, the op and an element — while the reference rules hold
// on the same cases (TestReferenceRegistryHolds).
func TestDerivativeCatchesPlantedFaults(t *testing.T) {
	scale101 := func(j spec.Tensor[DualInterval]) spec.Tensor[DualInterval] {
		return spec.ScaleT(DualInterval{}.FromRat(big.NewRat(101, 100)), j)
	}
	type plant struct {
		name, op string
		wrong    func(spec.Tensor[DualInterval]) spec.Tensor[DualInterval]
	}
	var plants []plant
	for _, op := range derivativeOps(t) {
		plants = append(plants, plant{"1%", op, scale101})
	}
	plants = append(plants, plant{"sign flip", "tanh", spec.NegT[DualInterval]})
	for _, pl := range plants {
		t.Run(pl.op+"/"+pl.name, func(t *testing.T) {
			res, err := plantJVP(pl.op, pl.wrong).CheckOp(pl.op, 30, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			var f *counterexample.Failure
			for _, rr := range res {
				switch {
				case rr.Obligation == Derivative && !errors.As(rr.Failure, &f):
					t.Fatalf("planted %s in %s's JVP not caught: %+v", pl.name, pl.op, rr)
				case rr.Obligation != Derivative && rr.Failure != nil:
					// Only the DualInterval rules were planted.
					t.Fatalf("%s fails though only the derivative oracle's rules were planted: %v", rr.Obligation, rr.Failure)
				}
			}
			if f.Op != pl.op || Oracle(f.Oracle) != OracleDualInterval || f.Element < 0 ||
				!strings.Contains(f.Error(), "derivative fails for "+pl.op) || !strings.Contains(f.Error(), "disjoint enclosures") {
				t.Fatalf("counterexample %q", f.Error())
			}
		})
	}
}

// TestDerivativeIssueCasesHold: the cases on which the former F64
// finite-difference bound (a Richardson estimate) reported false failures
// of a correct log_softmax JVP hold.
func TestDerivativeIssueCasesHold(t *testing.T) {
	for _, c := range []struct {
		op         string
		seed       uint64
		cases      int
		wantOracle Oracle
	}{
		{"log_softmax", 0, 2440, OracleDualInterval}, // tlcheck check --ops log_softmax --cases 2440 --graphs 0 --seed 0
		{"log_softmax", 91, 100, OracleDualInterval}, // tlcheck gate --seed 91 (case 20)
	} {
		res, err := DefaultRegistries().CheckOp(c.op, c.cases, c.seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, rr := range res {
			if !rr.Holds() {
				t.Errorf("%s seed %d: %s: %v", c.op, c.seed, rr.Obligation, rr.Failure)
			}
			if rr.Obligation == Derivative && rr.Oracles[c.wantOracle] != c.cases {
				t.Errorf("%s seed %d: oracles %v, want %d cases decided by %s", c.op, c.seed, rr.Oracles, c.cases, c.wantOracle)
			}
		}
	}
}

// The independent reference: f′(x)·dx from the closed-form derivatives of
// calculus, evaluated in 256-bit big.Float arithmetic with series defined
// here (not Go's math library, not the spec rules).

const refPrec = 256

func bfRat(r *big.Rat) *big.Float { return new(big.Float).SetPrec(refPrec).SetRat(r) }
func bfInt(n int64) *big.Float    { return new(big.Float).SetPrec(refPrec).SetInt64(n) }
func bfAdd(a, b *big.Float) *big.Float {
	return new(big.Float).SetPrec(refPrec).Add(a, b)
}
func bfSub(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(refPrec).Sub(a, b) }
func bfMul(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(refPrec).Mul(a, b) }
func bfDiv(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(refPrec).Quo(a, b) }

// bfExp is e^x: halve x until |x| ≤ 1/2, sum the Taylor series to 2^-300,
// square back.
func bfExp(x *big.Float) *big.Float {
	y, k := new(big.Float).SetPrec(refPrec).Set(x), 0
	half := big.NewFloat(0.5)
	for new(big.Float).Abs(y).Cmp(half) > 0 {
		y = bfMul(y, half)
		k++
	}
	sum, term := bfInt(1), bfInt(1)
	for n := int64(1); n < 200; n++ {
		term = bfDiv(bfMul(term, y), bfInt(n))
		sum = bfAdd(sum, term)
		if term.Sign() == 0 || term.MantExp(nil) < -300 {
			break
		}
	}
	for ; k > 0; k-- {
		sum = bfMul(sum, sum)
	}
	return sum
}

// bfSinCos sums the Taylor series of sin and cos (|x| is small here).
func bfSinCos(x *big.Float) (sin, cos *big.Float) {
	sin, cos = bfInt(0), bfInt(0)
	term := bfInt(1) // x^n/n!
	for n := int64(0); n < 400; n++ {
		switch n % 4 {
		case 0:
			cos = bfAdd(cos, term)
		case 1:
			sin = bfAdd(sin, term)
		case 2:
			cos = bfSub(cos, term)
		case 3:
			sin = bfSub(sin, term)
		}
		term = bfDiv(bfMul(term, x), bfInt(n+1))
	}
	return sin, cos
}

// bfSigmoid is 1/(1+e^−x).
func bfSigmoid(x *big.Float) *big.Float {
	return bfDiv(bfInt(1), bfAdd(bfInt(1), bfExp(new(big.Float).Neg(x))))
}

// refDerivative is f′(x) for the elementwise primitives, by calculus.
var refDerivative = map[string]func(x *big.Float) *big.Float{
	"exp": bfExp,
	"log": func(x *big.Float) *big.Float { return bfDiv(bfInt(1), x) },
	"tanh": func(x *big.Float) *big.Float { // 4/(e^x + e^−x)²
		c := bfAdd(bfExp(x), bfExp(new(big.Float).Neg(x)))
		return bfDiv(bfInt(4), bfMul(c, c))
	},
	"sigmoid": func(x *big.Float) *big.Float {
		s := bfSigmoid(x)
		return bfMul(s, bfSub(bfInt(1), s))
	},
	"softplus": bfSigmoid,
	"sin":      func(x *big.Float) *big.Float { _, c := bfSinCos(x); return c },
	"cos":      func(x *big.Float) *big.Float { s, _ := bfSinCos(x); return new(big.Float).Neg(s) },
}

// inIv reports whether the reference value v lies in iv, allowing the
// reference's own error (relative 2^-200).
func inIv(v *big.Float, iv spec.Interval) bool {
	slack := new(big.Float).Abs(v)
	slack.SetMantExp(slack, -200)
	lo := bfAdd(v, slack)
	hi := bfSub(v, slack)
	return (math.IsInf(iv.Lo, -1) || big.NewFloat(iv.Lo).Cmp(lo) <= 0) && (math.IsInf(iv.Hi, 1) || big.NewFloat(iv.Hi).Cmp(hi) >= 0)
}

// TestDerivativeEnclosesReference: both enclosures the oracle compares —
// D from the forward rule over dual intervals and J from the JVP rule over
// intervals — contain the 256-bit reference f′(x)·dx, for elementwise
// primitives and for softmax and log_softmax, whose derivative is
// p ⊙ (dx − ⟨p, dx⟩) and dx − ⟨p, dx⟩ with p the softmax.
func TestDerivativeEnclosesReference(t *testing.T) {
	r := DefaultRegistries()
	xs := []spec.Rat{spec.NewRat(-3, 1), spec.NewRat(-1, 3), spec.NewRat(0, 1), spec.NewRat(1, 7), spec.NewRat(2, 3), spec.NewRat(5, 2), spec.NewRat(9, 1)}
	dx := []spec.Rat{spec.NewRat(1, 1), spec.NewRat(-2, 3), spec.NewRat(5, 4), spec.NewRat(-7, 3), spec.NewRat(1, 10), spec.NewRat(3, 1), spec.NewRat(-1, 2)}
	check := func(op string, x, d []spec.Rat, want []*big.Float) {
		t.Helper()
		inst := &casegen.Instance{Op: op, Attrs: &spec.Attrs{}, Xs: []spec.Tensor[spec.Rat]{spec.Vector(x...)}}
		D, J, decided, err := r.derivativeEnclosures(inst, []spec.Tensor[spec.Rat]{spec.Vector(d...)})
		if err != nil || !decided {
			t.Fatalf("%s: decided=%t err=%v", op, decided, err)
		}
		for k := range want {
			if !inIv(want[k], D[k]) || !inIv(want[k], J[k]) {
				t.Errorf("%s element %d: reference %s not in D=%v or J=%v", op, k, want[k].Text('g', 20), D[k], J[k])
			}
			if D[k].Width() > 1e-12*math.Max(1, math.Abs(D[k].Lo)) || J[k].Width() > 1e-12*math.Max(1, math.Abs(J[k].Lo)) {
				t.Errorf("%s element %d: enclosures too wide to catch a 1%% error: D=%v J=%v", op, k, D[k], J[k])
			}
		}
	}
	for op, fp := range refDerivative {
		var x, d []spec.Rat
		var want []*big.Float
		for k := range xs {
			if op == "log" && xs[k].Float64() <= 0 {
				continue
			}
			x, d = append(x, xs[k]), append(d, dx[k])
			want = append(want, bfMul(fp(bfRat(xs[k].Big())), bfRat(dx[k].Big())))
		}
		check(op, x, d, want)
	}
	// softmax and log_softmax along the only axis.
	var es []*big.Float
	sum := bfInt(0)
	for _, x := range xs {
		e := bfExp(bfRat(x.Big()))
		es, sum = append(es, e), bfAdd(sum, e)
	}
	mean := bfInt(0) // ⟨p, dx⟩
	ps := make([]*big.Float, len(es))
	for k, e := range es {
		ps[k] = bfDiv(e, sum)
		mean = bfAdd(mean, bfMul(ps[k], bfRat(dx[k].Big())))
	}
	var wantLog, wantSoft []*big.Float
	for k := range xs {
		c := bfSub(bfRat(dx[k].Big()), mean)
		wantLog, wantSoft = append(wantLog, c), append(wantSoft, bfMul(ps[k], c))
	}
	check("log_softmax", xs, dx, wantLog)
	check("softmax", xs, dx, wantSoft)
}

// TestDerivativeUndecidedIsInconclusive: a forward rule that branches on
// a comparison its enclosures cannot decide (here x − x against 0 for a
// non-dyadic x, whose enclosure straddles 0), with a wrong derivative on
// the branch the intervals take, makes the case inconclusive — never a
// failure, never a decided case — while the same planted rule at a dyadic
// x, where the comparison is decided, fails as it must.
func TestDerivativeUndecidedIsInconclusive(t *testing.T) {
	r := DefaultRegistries()
	r.Dual = spec.New[DualInterval]()
	p, _ := r.Dual.Lookup("exp")
	bad, orig := *p, p.Forward
	bad.Forward = func(a *spec.Attrs, xs []spec.Tensor[DualInterval]) (spec.Tensor[DualInterval], error) {
		y, err := orig(a, xs)
		if err != nil {
			return y, err
		}
		x := xs[0].Data[0]
		if c, ok := x.Sub(x).Compare(x.FromInt(0)); !ok || c != 0 {
			y.Data[0] = y.Data[0].Mul(y.Data[0]) // e^{2x}: derivative 2e^{2x}, not what exp's JVP says
		}
		return y, nil
	}
	r.Dual.Override(&bad)
	for _, c := range []struct {
		x    spec.Rat
		want Oracle
	}{
		{spec.NewRat(1, 3), OracleInconclusive}, // [1/3] − [1/3] straddles 0: undecided, the wrong branch is taken
		{spec.NewRat(1, 2), OracleDualInterval}, // 1/2 − 1/2 = [0, 0]: decided, the correct branch is taken
	} {
		inst := &casegen.Instance{Op: "exp", Attrs: &spec.Attrs{}, Xs: []spec.Tensor[spec.Rat]{spec.Vector(c.x)}}
		o, err := r.CheckDerivative(inst, []spec.Tensor[spec.Rat]{spec.Vector(spec.NewRat(1, 1))})
		if err != nil {
			t.Fatalf("x=%s: %v", c.x, err)
		}
		if o.Oracle != c.want {
			t.Fatalf("x=%s: oracle %s, want %s", c.x, o.Oracle, c.want)
		}
	}
	// The same branch taken where it is decided: a genuine failure.
	r2 := DefaultRegistries()
	r2.Dual = spec.New[DualInterval]()
	bad2 := *p
	bad2.Forward = func(a *spec.Attrs, xs []spec.Tensor[DualInterval]) (spec.Tensor[DualInterval], error) {
		y, err := orig(a, xs)
		if err == nil {
			y.Data[0] = y.Data[0].Mul(y.Data[0])
		}
		return y, err
	}
	r2.Dual.Override(&bad2)
	inst := &casegen.Instance{Op: "exp", Attrs: &spec.Attrs{}, Xs: []spec.Tensor[spec.Rat]{spec.Vector(spec.NewRat(1, 3))}}
	if _, err := r2.CheckDerivative(inst, []spec.Tensor[spec.Rat]{spec.Vector(spec.NewRat(1, 1))}); err == nil {
		t.Fatal("a decided wrong derivative was not caught")
	}
	// CheckOp counts inconclusive cases apart: none decided, so the
	// obligation does not hold (an obligation checked on no case does not).
	res, err := r.CheckOp("exp", 40, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res {
		if rr.Obligation != Derivative {
			continue
		}
		if rr.Failure != nil {
			t.Fatalf("undecided cases reported as a failure: %v", rr.Failure)
		}
		if rr.Oracles[OracleInconclusive] == 0 || rr.Cases != rr.Oracles[OracleDualInterval] || rr.Cases+rr.Oracles[OracleInconclusive] != 40 {
			t.Fatalf("cases %d, oracles %v", rr.Cases, rr.Oracles)
		}
	}
}

// TestDualIntervalChoices: the non-smooth choices of DualInterval enclose
// every real outcome when the order is undecided, and follow spec.Dual's
// conventions when it is decided (exactly, for exact primals).
func TestDualIntervalChoices(t *testing.T) {
	third := spec.Interval{}.FromRat(big.NewRat(1, 3))
	tan := func(lo, hi float64) spec.Interval { iv, _ := spec.NewInterval(lo, hi); return iv }
	// Computed (not exact) primals whose enclosures overlap.
	a := MakeDualInterval(third, tan(1, 1)).Add(DualInterval{})
	b := MakeDualInterval(third, tan(-2, -2)).Add(DualInterval{})
	for name, got := range map[string]DualInterval{"max": a.Max(b), "min": a.Min(b)} {
		if got.Du().Lo > -2 || got.Du().Hi < 1 {
			t.Errorf("undecided %s: tangent %v does not contain both tangents [-2] and [1]", name, got.Du())
		}
	}
	// Exact primals 1/3 and 1/3: an exact tie, tangents averaged.
	ea, eb := DualInterval{}.FromRat(big.NewRat(1, 3)), DualInterval{}.FromRat(big.NewRat(1, 3))
	ea.d.Du, eb.d.Du = tan(1, 1), tan(-2, -2)
	if got := ea.Max(eb).Du(); got.Lo != -0.5 || got.Hi != -0.5 {
		t.Errorf("exact tie: tangent %v, want the average -1/2", got)
	}
	// Exact 1/3 against exact 1/2: decided, the winner's tangent.
	ec := DualInterval{}.FromRat(big.NewRat(1, 2))
	ec.d.Du = tan(7, 7)
	if got := ea.Max(ec).Du(); got.Lo != 7 || got.Hi != 7 {
		t.Errorf("decided max: tangent %v, want 7", got)
	}
	// Compare records what it cannot decide; decided comparisons do not.
	tr := &diTrace{}
	a.tr, b.tr = tr, tr
	if _, ok := a.Compare(b); ok || tr.undecided != 1 {
		t.Errorf("undecided compare: ok=%t recorded=%d", ok, tr.undecided)
	}
	ea.tr = tr
	if c, ok := ea.Compare(ec); !ok || c != -1 || tr.undecided != 1 {
		t.Errorf("exact compare: c=%d ok=%t recorded=%d", c, ok, tr.undecided)
	}
}

// TestDerivativeDecides: on the generators' cases the reference rules are
// decided (not inconclusive) on at least 99% of the cases of every
// primitive that owes the derivative obligation, and hold on all.
func TestDerivativeDecides(t *testing.T) {
	const cases = 300
	for _, op := range derivativeOps(t) {
		res, err := DefaultRegistries().CheckOp(op, cases, 7, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, rr := range res {
			if rr.Obligation != Derivative {
				continue
			}
			if !rr.Holds() || rr.Oracles[OracleInconclusive] > cases/100 || rr.Cases+rr.Oracles[OracleInconclusive] != cases {
				t.Errorf("%s: cases %d, oracles %v, failure %v", op, rr.Cases, rr.Oracles, rr.Failure)
			}
		}
	}
}
