package obligations

import (
	"errors"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// withForward returns the reference registries with op's interval forward
// rule replaced by one returning the constant enclosure v (a planted
// fault).
func withForward(op string, v spec.Interval) Registries {
	return withRule(op, func(*spec.Attrs, []spec.Tensor[spec.Interval]) (spec.Tensor[spec.Interval], error) {
		return spec.Scalar0(v), nil
	})
}

// withRule returns the reference registries with op's interval forward
// rule replaced by f.
func withRule(op string, f func(*spec.Attrs, []spec.Tensor[spec.Interval]) (spec.Tensor[spec.Interval], error)) Registries {
	r := DefaultRegistries()
	r.Interval = spec.New[spec.Interval]()
	p, _ := r.Interval.Lookup(op)
	bad := *p
	bad.Forward = f
	r.Interval.Override(&bad)
	return r
}

func declined(*spec.Attrs, []spec.Tensor[spec.Interval]) (spec.Tensor[spec.Interval], error) {
	return spec.Tensor[spec.Interval]{}, &spec.DomainError{Op: "mul", Scalar: "interval", Reason: "planted"}
}

// expAtLo is an interval exp that evaluates the lower endpoint only: right
// at a point, wrong for every box of positive width.
func expAtLo(_ *spec.Attrs, xs []spec.Tensor[spec.Interval]) (spec.Tensor[spec.Interval], error) {
	v, err := spec.Point(xs[0].Data[0].Lo).Exp()
	return spec.Scalar0(v), err
}

func rat(p, q int64) spec.Tensor[spec.Rat] { return spec.Scalar0(spec.NewRat(p, q)) }

func ts(xs ...spec.Tensor[spec.Rat]) []spec.Tensor[spec.Rat] { return xs }

// TestCheckEnclosure decides hand-derived cases. [−1, 2]·[−3, 4]: the
// corners are 3, −4, −6 and 8, so the product is [−6, 8], and at the
// corner (2, 4) the exact value is 8; dropping the Hi·Hi corner gives
// [−6, 3], which the check must reject at that point, while the midpoint
// (1/2, 1/2) with value 1/4 lies in both. exp on [0, 1] at 1 has no
// rational value (interval oracle); an exp that evaluates the lower
// endpoint only gives [1, 1] on the box, disjoint from e's own enclosure
// ⊂ [2.71, 2.72]. A rule that declines to enclose (a DomainError, as
// Interval.Log does for a box reaching 0) makes the case inconclusive.
func TestCheckEnclosure(t *testing.T) {
	mulBox := &casegen.Box{Lo: ts(rat(-1, 1), rat(-3, 1)), Hi: ts(rat(2, 1), rat(4, 1)), P: ts(rat(2, 1), rat(4, 1))}
	mulMid := &casegen.Box{Lo: mulBox.Lo, Hi: mulBox.Hi, P: ts(rat(1, 2), rat(1, 2))}
	expBox := &casegen.Box{Lo: ts(rat(0, 1)), Hi: ts(rat(1, 1)), P: ts(rat(1, 1))}
	for _, c := range []struct {
		name   string
		reg    Registries
		op     string
		box    *casegen.Box
		oracle Oracle
		fail   string // "" when the case holds
	}{
		{"mul corner", DefaultRegistries(), "mul", mulBox, OracleRat, ""},
		{"mul dropped corner", withForward("mul", spec.Interval{Lo: -6, Hi: 3}), "mul", mulBox, OracleRat, "f(p)=8 ≠ F(box)∋[-6, 3]"},
		{"mul dropped corner, midpoint", withForward("mul", spec.Interval{Lo: -6, Hi: 3}), "mul", mulMid, OracleRat, ""},
		{"exp", DefaultRegistries(), "exp", expBox, OracleInterval, ""},
		{"exp at lo", withRule("exp", expAtLo), "exp", expBox, OracleInterval, "F(box)∋[1, 1] (two enclosures of f(p) are disjoint"},
		{"declined", withRule("mul", declined), "mul", mulBox, OracleInconclusive, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			inst := &casegen.Instance{Op: c.op, Attrs: &spec.Attrs{}, Xs: c.box.P}
			o, err := c.reg.CheckEnclosure(inst, c.box)
			if o.Oracle != c.oracle {
				t.Errorf("oracle %s, want %s", o.Oracle, c.oracle)
			}
			if c.fail == "" {
				if err != nil {
					t.Fatalf("unexpected failure: %v", err)
				}
				return
			}
			var f *counterexample.Failure
			if !errors.As(err, &f) || Obligation(f.Law) != IntervalEnclosure || f.Element != 0 {
				t.Fatalf("want an interval-enclosure failure at element 0, got %v", err)
			}
			if !strings.Contains(err.Error(), c.fail) {
				t.Fatalf("failure %q does not say %q", err, c.fail)
			}
		})
	}
}

// TestCheckOpCatchesDroppedCorner: the check run of `tlcheck check` and
// the gate (CheckOp) owes interval enclosure for every primitive and
// fails it for mul when the interval rule drops a corner, while the other
// obligations of mul still hold (the fault is invisible to them).
func TestCheckOpCatchesDroppedCorner(t *testing.T) {
	r := DefaultRegistries()
	r.Interval = spec.New[spec.Interval]()
	p, _ := r.Interval.Lookup("mul")
	bad := *p
	bad.Forward = func(_ *spec.Attrs, xs []spec.Tensor[spec.Interval]) (spec.Tensor[spec.Interval], error) {
		y := xs[0].Clone()
		for k := range y.Data {
			x, z := xs[0].Data[k], xs[1].Data[k]
			c := func(a, b float64) spec.Interval { return spec.Point(a).Mul(spec.Point(b)) }
			y.Data[k] = spec.Hull(spec.Hull(c(x.Lo, z.Lo), c(x.Lo, z.Hi)), c(x.Hi, z.Lo))
		}
		return y, nil
	}
	r.Interval.Override(&bad)
	res, err := r.CheckOp("mul", 100, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res {
		switch {
		case rr.Obligation == IntervalEnclosure && rr.Holds():
			t.Fatalf("a dropped corner went undetected in %d cases", rr.Cases)
		case rr.Obligation != IntervalEnclosure && !rr.Holds():
			t.Fatalf("%s fails too: %v", rr.Obligation, rr.Failure)
		}
	}
	good, err := DefaultRegistries().CheckOp("mul", 100, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rr := good[len(good)-1]; rr.Obligation != IntervalEnclosure || !rr.Holds() || rr.Cases != 100 {
		t.Fatalf("reference mul: %s holds=%v on %d cases: %v", rr.Obligation, rr.Holds(), rr.Cases, rr.Failure)
	}
}
