package check_test

import (
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

// fault names a planted bug in the rules of maxOp.
type fault int

const (
	none       fault = iota
	tieVJP           // VJP sends the whole cotangent to a at a tie
	scaledVJP        // VJP doubles the contribution to b everywhere
	nonlinJVP        // JVP squares the tangent
	nonlinVJP        // VJP squares the cotangent
	zeroVJP          // VJP adds 1 to the contribution to a (vjp(x, 0) ≠ 0)
	doubledAll       // JVP and VJP both doubled: adjoint and linear, but not the derivative
)

// maxOp is mymax with fault planted.
func maxOp[T spec.Scalar[T]](f fault) check.Rules[T] {
	r := maxRules[T](f == tieVJP)
	two := spec.Const[T](2)
	jvp, vjp := r.JVP, r.VJP
	switch f {
	case nonlinJVP, doubledAll:
		r.JVP = func(xs []spec.Tensor[T], y spec.Tensor[T], dxs []spec.Tensor[T]) (spec.Tensor[T], error) {
			if f == nonlinJVP {
				sq := make([]spec.Tensor[T], len(dxs))
				for i, d := range dxs {
					sq[i] = d.Clone()
					for k := range d.Data {
						sq[i].Data[k] = d.Data[k].Mul(d.Data[k])
					}
				}
				dxs = sq
			}
			t, err := jvp(xs, y, dxs)
			if f == doubledAll {
				for k := range t.Data {
					t.Data[k] = two.Mul(t.Data[k])
				}
			}
			return t, err
		}
	}
	switch f {
	case scaledVJP, nonlinVJP, zeroVJP, doubledAll:
		r.VJP = func(xs []spec.Tensor[T], y spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
			if f == nonlinVJP {
				dy = dy.Clone()
				for k := range dy.Data {
					dy.Data[k] = dy.Data[k].Mul(dy.Data[k])
				}
			}
			g, err := vjp(xs, y, dy)
			if err != nil {
				return g, err
			}
			for k := range g[0].Data {
				switch f {
				case scaledVJP:
					g[1].Data[k] = two.Mul(g[1].Data[k])
				case zeroVJP:
					g[0].Data[k] = g[0].Data[k].Add(spec.One[T]())
				case doubledAll:
					g[0].Data[k], g[1].Data[k] = two.Mul(g[0].Data[k]), two.Mul(g[1].Data[k])
				}
			}
			return g, nil
		}
	}
	return r
}

func faulty(f fault) check.Primitive {
	p := mymax(false)
	p.Rat, p.Interval, p.Dual = maxOp[spec.Rat](f), maxOp[spec.Interval](f), maxOp[check.Dual](f)
	return p
}

// TestPlantedFaults: each planted fault is caught by the obligation meant
// to catch it, checked alone, with the default number of cases; the
// correct op passes every obligation alone.
func TestPlantedFaults(t *testing.T) {
	for _, tc := range []struct {
		f  fault
		ob obligations.Obligation
	}{
		{tieVJP, obligations.Adjointness},
		{scaledVJP, obligations.Adjointness},
		{nonlinJVP, obligations.JVPLinearity},
		{nonlinVJP, obligations.VJPLinearity},
		{zeroVJP, obligations.ZeroPreservation},
		{doubledAll, obligations.Derivative},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.ob, tc.f), func(t *testing.T) {
			rep, err := check.Find(faulty(tc.f), check.Options{Obligations: []obligations.Obligation{tc.ob}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failure == nil || obligations.Obligation(rep.Failure.Law) != tc.ob {
				t.Fatalf("fault %d not caught by %s: %v", tc.f, tc.ob, rep.Failure)
			}
			// With every obligation on, the fault is still caught.
			rep, err = check.Find(faulty(tc.f), check.Options{})
			if err != nil || rep.Failure == nil {
				t.Fatalf("fault %d not caught with every obligation: %v %v", tc.f, rep.Failure, err)
			}
		})
	}
	for _, ob := range check.Obligations {
		rep, err := check.Find(faulty(none), check.Options{Obligations: []obligations.Obligation{ob}})
		if err != nil || rep.Failure != nil || rep.Cases != 100 {
			t.Errorf("%s on the correct op: %v %v (%d cases)", ob, rep.Failure, err, rep.Cases)
		}
	}
}

// TestDoubledDerivativeCounterexample checks the derivative failure by
// hand: the shrunk case is off a tie, where the doubled JVP gives 2·dx
// and the forward's derivative dx.
func TestDoubledDerivativeCounterexample(t *testing.T) {
	rep, _ := check.Find(faulty(doubledAll), check.Options{})
	f := rep.Failure
	if f == nil || obligations.Obligation(f.Law) != obligations.Derivative {
		t.Fatalf("got %v", rep.Failure)
	}
	// Off a tie max(a,b) has derivative dx of the larger parent.
	a, b := f.Inputs[0].Data[f.Element], f.Inputs[1].Data[f.Element]
	if a.Same(b) {
		t.Fatalf("derivative counterexample at a tie %v: the oracle must be inconclusive there (%v)", a, f)
	}
	if !strings.Contains(f.Error(), "disjoint enclosures") {
		t.Errorf("message %q", f.Error())
	}
}

// captureTB records a rapid run instead of failing the test.
type captureTB struct {
	name   string
	failed bool
	log    strings.Builder
}

func (c *captureTB) Helper()                   {}
func (c *captureTB) Name() string              { return c.name }
func (c *captureTB) Logf(f string, a ...any)   { fmt.Fprintf(&c.log, f+"\n", a...) }
func (c *captureTB) Log(a ...any)              { fmt.Fprintln(&c.log, a...) }
func (c *captureTB) Skipf(f string, a ...any)  { c.Logf(f, a...) }
func (c *captureTB) Skip(a ...any)             { c.Log(a...) }
func (c *captureTB) SkipNow()                  {}
func (c *captureTB) Errorf(f string, a ...any) { c.failed = true; c.Logf(f, a...) }
func (c *captureTB) Error(a ...any)            { c.failed = true; c.Log(a...) }
func (c *captureTB) Fatalf(f string, a ...any) { c.failed = true; c.Logf(f, a...) }
func (c *captureTB) Fatal(a ...any)            { c.failed = true; c.Log(a...) }
func (c *captureTB) FailNow()                  { c.failed = true }
func (c *captureTB) Fail()                     { c.failed = true }
func (c *captureTB) Failed() bool              { return c.failed }

// TestOpUnderRapid: check.Op fails on the tie fault with rapid's replay
// line and the shrunk case; the record is written.
func TestOpUnderRapid(t *testing.T) {
	if f := flag.Lookup("rapid.nofailfile"); f != nil {
		old := f.Value.String()
		_ = f.Value.Set("true") // no fail file in the package directory
		defer f.Value.Set(old)
	}
	dir := t.TempDir()
	tb := &captureTB{name: "TestPlantedTie"}
	check.Op(tb, faulty(tieVJP), check.Options{CertDir: dir})
	out := tb.log.String()
	if !tb.failed || !strings.Contains(out, "-rapid.seed=") || !strings.Contains(out, "adjointness fails for mymax") {
		t.Fatalf("rapid run: failed %v, log:\n%s", tb.failed, out)
	}
	rec, err := os.ReadFile(filepath.Join(dir, "mymax.check.json"))
	if err != nil || !strings.Contains(string(rec), "adjointness fails") {
		t.Errorf("record: %v\n%s", err, rec)
	}
	ok := &captureTB{name: "TestOK"}
	check.Op(ok, faulty(none), check.Options{})
	if ok.failed {
		t.Errorf("correct op failed:\n%s", ok.log.String())
	}
}

// TestNoLeak: a checked op never reaches the default registry, and a name
// taken by a built-in primitive is refused.
func TestNoLeak(t *testing.T) {
	check.Op(t, mymax(false), check.Options{})
	if _, err := spec.Info("mymax"); err == nil {
		t.Errorf("mymax leaked into the default registry")
	}
	p := mymax(false)
	p.Name = "relu"
	if _, err := check.Find(p, check.Options{}); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("a built-in name was accepted: %v", err)
	}
	if err := spec.Default[spec.Rat]().Register(&spec.Prim[spec.Rat]{OpInfo: &spec.OpInfo{Name: "x"}}); err == nil {
		t.Errorf("Register wrote into the default registry")
	}
}

// TestBadPrimitives: malformed declarations are errors naming the field.
func TestBadPrimitives(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*check.Primitive)
	}{
		{"Arity", func(p *check.Primitive) { p.Arity = 0 }},
		{"Domains", func(p *check.Primitive) { p.Domains = make([]spec.Domain, 3) }},
		{"Rat", func(p *check.Primitive) { p.Rat.VJP = nil }},
		{"Interval", func(p *check.Primitive) { p.Interval.Forward = nil }},
		{"Dual", func(p *check.Primitive) { p.Dual.JVP = nil }},
		{"Kinks", func(p *check.Primitive) { p.Kinks = []*big.Rat{nil} }},
		{"Name", func(p *check.Primitive) { p.Name = "" }},
	} {
		p := mymax(false)
		tc.edit(&p)
		_, err := check.Find(p, check.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
	_, err := check.Find(mymax(false), check.Options{Obligations: []obligations.Obligation{"nope"}})
	if err == nil {
		t.Errorf("unknown obligation accepted")
	}
	// A rule that panics is an error value, not a panic.
	p := mymax(false)
	p.Rat.VJP = func([]spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		var s []spec.Tensor[spec.Rat]
		return s[:1], nil
	}
	rep, err := check.Find(p, check.Options{})
	if err != nil || rep.Failure == nil || !errors.Is(rep.Failure, rep.Failure) || !strings.Contains(rep.Failure.Error(), "malformed") {
		t.Errorf("panicking rule: %v %v", rep.Failure, err)
	}
}

// TestFindDeterministicRecord: Find's record is byte-identical across
// runs (same op, same options).
func TestFindDeterministicRecord(t *testing.T) {
	var recs [2][]byte
	for i := range recs {
		dir := t.TempDir()
		if _, err := check.Find(faulty(tieVJP), check.Options{CertDir: dir}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "mymax.check.json"))
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = b
	}
	if string(recs[0]) != string(recs[1]) || !strings.Contains(string(recs[0]), `"counterexample": "adjointness fails`) {
		t.Errorf("records differ or lack the counterexample:\n%s\n%s", recs[0], recs[1])
	}
}
