package check_test

import (
	"flag"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

// twoRules drops the JVP: the user writes forward and VJP only.
func twoRules[T spec.Scalar[T]](r check.Rules[T]) check.Rules[T] {
	r.JVP = nil
	return r
}

// softplus2 is softplus with forward and VJP only; wrongVJP makes the VJP
// use eˣ for softplus′ (its JVP, derived, is right).
func softplus2(wrongVJP bool) check.Primitive {
	rules := func(r check.Rules[spec.Interval], d check.Rules[check.Dual]) check.Primitive {
		return check.Primitive{Name: "softplus_2", Arity: 1, Doc: "log(1+eˣ), two rules",
			Interval: twoRules(r), Dual: twoRules(d)}
	}
	p := rules(softplusRules[spec.Interval](false), softplusRules[check.Dual](false))
	if wrongVJP {
		p.Interval.VJP = softplusRules[spec.Interval](true).VJP
		p.Dual.VJP = softplusRules[check.Dual](true).VJP
	}
	return p
}

// leakyVJP is leaky's rules with the VJP's slope for x < 0 replaced by
// neg and its slope at the kink 0 by atKink.
func leakyVJP[T spec.Scalar[T]](neg, atKink *big.Rat) check.Rules[T] {
	r := leakyRules[T](false)
	r.VJP = func(xs []spec.Tensor[T], _ spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
		g := xs[0].Clone()
		var z T
		for k, x := range xs[0].Data {
			s := spec.One[T]()
			switch c, _ := x.Compare(z); {
			case c < 0:
				s = z.FromRat(neg)
			case c == 0:
				s = z.FromRat(atKink)
			}
			g.Data[k] = s.Mul(dy.Data[k])
		}
		return []spec.Tensor[T]{g}, nil
	}
	return twoRules(r)
}

// leaky2 is the exact leaky relu (slope 1/4) with forward and VJP only;
// its exact JVP is derived through the forward over Dual[Rat].
func leaky2(neg, atKink *big.Rat) check.Primitive {
	return check.Primitive{Name: "leaky_2", Arity: 1, Exact: true, Kinks: []*big.Rat{new(big.Rat)}, Doc: "leaky relu, two rules",
		Rat: leakyVJP[spec.Rat](neg, atKink), Interval: leakyVJP[spec.Interval](neg, atKink),
		Dual: leakyVJP[check.Dual](neg, atKink), DualRat: leakyVJP[spec.Dual[spec.Rat]](neg, atKink)}
}

// sumAbs is Σ|x| to a scalar (not elementwise), with abs′(0) = conv in the
// VJP and, with wrong, the VJP's sign flipped off the kink.
func sumAbsRules[T spec.Scalar[T]](conv *big.Rat, wrong bool) check.Rules[T] {
	return check.Rules[T]{
		Forward: func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
			var s T
			for _, x := range xs[0].Data {
				s = s.Add(x.Abs())
			}
			return spec.Tensor[T]{Shape: spec.Shape{}, Data: []T{s}}, nil
		},
		VJP: func(xs []spec.Tensor[T], _ spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
			g := xs[0].Clone()
			var z T
			for k, x := range xs[0].Data {
				s := x.Sign()
				if x.IsZero() {
					s = z.FromRat(conv)
				}
				if wrong {
					s = s.Neg()
				}
				g.Data[k] = s.Mul(dy.Data[0])
			}
			return []spec.Tensor[T]{g}, nil
		},
	}
}

func sumAbs(conv *big.Rat, wrong bool) check.Primitive {
	return check.Primitive{Name: "sum_abs_2", Arity: 1, Exact: true, Kinks: []*big.Rat{new(big.Rat)}, Doc: "Σ|x|, two rules",
		Shape: func([]spec.Shape) (spec.Shape, error) { return spec.Shape{}, nil },
		Rat:   sumAbsRules[spec.Rat](conv, wrong), Interval: sumAbsRules[spec.Interval](conv, wrong),
		Dual: sumAbsRules[check.Dual](conv, wrong), DualRat: sumAbsRules[spec.Dual[spec.Rat]](conv, wrong)}
}

// TestDerivedJVP: a primitive written as two rules (forward and VJP) gets
// its JVP by forward mode through the forward rule, and its VJP is judged
// by adjointness against it: a correct VJP holds (also with another
// valid convention at a declared kink, which the derived JVP's own choice
// must not reject), a planted wrong VJP fails adjointness — over
// intervals for an inexact op, exactly over Rat for an exact one.
func TestDerivedJVP(t *testing.T) {
	r := func(a, b int64) *big.Rat { return big.NewRat(a, b) }
	tests := []struct {
		name   string
		p      check.Primitive
		oracle obligations.Oracle // the oracle that decides adjointness
		fails  bool
		// inconclusive: some cases (on the kink of a non-elementwise op, or
		// every element on the kink)
		// decide nothing.
		inconclusive bool
	}{
		{"softplus", softplus2(false), obligations.OracleInterval, false, false},
		{"softplus wrong VJP", softplus2(true), obligations.OracleInterval, true, false},
		{"leaky", leaky2(r(1, 4), r(1, 4)), obligations.OracleRat, false, true},
		{"leaky, other valid convention at 0", leaky2(r(1, 4), r(1, 1)), obligations.OracleRat, false, true},
		{"leaky wrong slope below 0", leaky2(r(1, 2), r(1, 4)), obligations.OracleRat, true, false},
		{"sum abs", sumAbs(r(1, 2), false), obligations.OracleRat, false, true},
		{"sum abs wrong sign", sumAbs(r(1, 2), true), obligations.OracleRat, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := check.Find(tc.p, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.DerivedJVP {
				t.Errorf("DerivedJVP not reported")
			}
			if len(rep.Decided[string(obligations.Derivative)]) != 0 {
				t.Errorf("the derivative obligation ran on a derived JVP: %v", rep.Decided)
			}
			if !tc.fails {
				if rep.Failure != nil {
					t.Fatalf("a correct VJP failed: %v", rep.Failure)
				}
				adj := rep.Decided[string(obligations.Adjointness)]
				if adj[string(tc.oracle)] == 0 {
					t.Errorf("adjointness decided by %s on no case: %v", tc.oracle, adj)
				}
				if got := adj[string(obligations.OracleInconclusive)] > 0; got != tc.inconclusive {
					t.Errorf("inconclusive adjointness cases: %v, want some: %v", adj, tc.inconclusive)
				}
				return
			}
			f := rep.Failure
			if f == nil || obligations.Obligation(f.Law) != obligations.Adjointness || obligations.Oracle(f.Oracle) != tc.oracle {
				t.Fatalf("planted wrong VJP: got %v, want an adjointness failure over %s", f, tc.oracle)
			}
		})
	}
}

// TestDerivedJVPOp: check.Op (rapid) on two rules holds for a correct op
// and writes a certificate that Verify re-derives (through the derived
// JVP), and fails t for a wrong VJP.
func TestDerivedJVPOp(t *testing.T) {
	dir := t.TempDir()
	check.Op(t, leaky2(big.NewRat(1, 4), big.NewRat(0, 1)), check.Options{CertDir: dir})
	if _, err := check.Verify(check.CertPath(dir, leaky2(big.NewRat(1, 4), big.NewRat(0, 1))), leaky2(big.NewRat(1, 4), big.NewRat(0, 1))); err != nil {
		t.Errorf("Verify: %v", err)
	}
	// The same certificate against a VJP wrong below 0 fails verification.
	if _, err := check.Verify(check.CertPath(dir, leaky2(big.NewRat(1, 4), big.NewRat(0, 1))), leaky2(big.NewRat(1, 3), big.NewRat(0, 1))); err == nil {
		t.Errorf("Verify accepted the certificate under a wrong VJP")
	}
	if f := flag.Lookup("rapid.nofailfile"); f != nil {
		old := f.Value.String()
		_ = f.Value.Set("true") // no fail file in the package directory
		defer f.Value.Set(old)
	}
	tb := &captureTB{name: "TestDerivedWrong"}
	check.Op(tb, softplus2(true), check.Options{})
	if out := tb.log.String(); !tb.failed || !strings.Contains(out, "adjointness fails for softplus_2") {
		t.Errorf("Op on a wrong VJP: failed=%v, log:\n%s", tb.failed, out)
	}
}

// TestDerivedJVPNeedsDualRat: an exact two-rule primitive without its
// forward over Dual[Rat] is refused, naming the field.
func TestDerivedJVPNeedsDualRat(t *testing.T) {
	p := leaky2(big.NewRat(1, 4), big.NewRat(1, 4))
	p.DualRat = check.Rules[spec.Dual[spec.Rat]]{}
	_, err := check.Find(p, check.Options{})
	if err == nil || !strings.Contains(err.Error(), "DualRat") {
		t.Errorf("got %v, want a refusal naming DualRat", err)
	}
}

// TestDerivedJVPAllOrNone: a JVP given over some scalars and not others
// is refused, naming the scalar that lacks it.
func TestDerivedJVPAllOrNone(t *testing.T) {
	p := softplus(false)
	p.Dual.JVP = nil
	_, err := check.Find(p, check.Options{})
	if err == nil || !strings.Contains(err.Error(), "field Dual") {
		t.Errorf("got %v, want a refusal naming field Dual", err)
	}
}

// TestDerivedJVPNotVacuous: restricting a two-rule primitive to the
// derivative obligation alone, which a derived JVP does not run, is
// refused rather than reported as holding.
func TestDerivedJVPNotVacuous(t *testing.T) {
	_, err := check.Find(softplus2(true), check.Options{Obligations: []obligations.Obligation{obligations.Derivative}})
	if err == nil || !strings.Contains(err.Error(), "nothing would be checked") {
		t.Errorf("got %v, want a refusal", err)
	}
}

// mymax2 is mymax written as two rules, forward and VJP; with swapped, the
// VJP sends the cotangent to the smaller operand.
func mymax2(swapped bool) check.Primitive {
	p := check.Primitive{Name: "mymax2", Arity: 2, Exact: true, Ties: "max(a,b) at a = b: 1/2 to each",
		Doc: "elementwise max, two rules", Rat: twoRules(maxRules[spec.Rat](false)),
		Interval: twoRules(maxRules[spec.Interval](false)), Dual: twoRules(maxRules[check.Dual](false)),
		DualRat: twoRules(maxRules[spec.Dual[spec.Rat]](false))}
	if swapped {
		p.Rat.VJP, p.Interval.VJP, p.Dual.VJP = swapVJP(p.Rat.VJP), swapVJP(p.Interval.VJP), swapVJP(p.Dual.VJP)
	}
	return p
}

// swapVJP exchanges the two parents' contributions.
func swapVJP[T spec.Scalar[T]](v func([]spec.Tensor[T], spec.Tensor[T], spec.Tensor[T]) ([]spec.Tensor[T], error)) func([]spec.Tensor[T], spec.Tensor[T], spec.Tensor[T]) ([]spec.Tensor[T], error) {
	return func(xs []spec.Tensor[T], y spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
		g, err := v(xs, y, dy)
		if err != nil {
			return g, err
		}
		return []spec.Tensor[T]{g[1], g[0]}, nil
	}
}

// Example_twoRules checks a primitive written as forward and VJP only (as
// for JAX's custom_vjp): its JVP is derived from the forward rule by forward
// mode over dual numbers, and a VJP that sends the cotangent to the wrong
// operand fails adjointness exactly, shrunk off the tie.
func Example_twoRules() {
	for _, swapped := range []bool{false, true} {
		rep, err := check.Find(mymax2(swapped), check.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("swapped:", swapped, "derived JVP:", rep.DerivedJVP, "counterexample:", rep.Failure)
	}
	// Output:
	// swapped: false derived JVP: true counterexample: <nil>
	// swapped: true derived JVP: true counterexample: adjointness fails for mymax2 (oracle rat): ⟨jvp,δ⟩=0 ≠ ⟨dx,vjp⟩=1; inputs (0, 1) dx (1, 0) δ 1
}
