package ranges

import (
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/spec"
)

// Generic scalar operations, instantiated over scalar32 and spec.Binary32
// so that both run literally the same code.
func opAdd[T spec.Scalar[T]](a, b T) (T, error) { return a.Add(b), nil }
func opSub[T spec.Scalar[T]](a, b T) (T, error) { return a.Sub(b), nil }
func opMul[T spec.Scalar[T]](a, b T) (T, error) { return a.Mul(b), nil }
func opDiv[T spec.Scalar[T]](a, b T) (T, error) { return a.Div(b) }
func opMax[T spec.Scalar[T]](a, b T) (T, error) { return a.Max(b), nil }
func opMin[T spec.Scalar[T]](a, b T) (T, error) { return a.Min(b), nil }
func opClamp[T spec.Scalar[T]](a, b T) (T, error) {
	return a.Clamp(b, b.Add(b.FromInt(1))), nil
}
func opNeg[T spec.Scalar[T]](a, _ T) (T, error)   { return a.Neg(), nil }
func opAbs[T spec.Scalar[T]](a, _ T) (T, error)   { return a.Abs(), nil }
func opRelu[T spec.Scalar[T]](a, _ T) (T, error)  { return a.Relu(), nil }
func opSign[T spec.Scalar[T]](a, _ T) (T, error)  { return a.Sign(), nil }
func opStep[T spec.Scalar[T]](a, _ T) (T, error)  { return a.Step(), nil }
func opSqrt[T spec.Scalar[T]](a, _ T) (T, error)  { return a.Sqrt() }
func opExp[T spec.Scalar[T]](a, _ T) (T, error)   { return a.Exp() }
func opLog[T spec.Scalar[T]](a, _ T) (T, error)   { return a.Log() }
func opLog1p[T spec.Scalar[T]](a, _ T) (T, error) { return a.Log1p() }
func opTanh[T spec.Scalar[T]](a, _ T) (T, error)  { return a.Tanh() }
func opSin[T spec.Scalar[T]](a, _ T) (T, error)   { return a.Sin() }
func opCos[T spec.Scalar[T]](a, _ T) (T, error)   { return a.Cos() }
func opThird[T spec.Scalar[T]](a, _ T) (T, error) {
	return a.Mul(a.FromRat(big.NewRat(1, 3))), nil
}

type scalarOp struct {
	name string
	s    func(a, b scalar32) (scalar32, error)
	b    func(a, b spec.Binary32) (spec.Binary32, error)
}

func scalarOps() []scalarOp {
	return []scalarOp{
		{"add", opAdd[scalar32], opAdd[spec.Binary32]}, {"sub", opSub[scalar32], opSub[spec.Binary32]},
		{"mul", opMul[scalar32], opMul[spec.Binary32]}, {"div", opDiv[scalar32], opDiv[spec.Binary32]},
		{"max", opMax[scalar32], opMax[spec.Binary32]}, {"min", opMin[scalar32], opMin[spec.Binary32]},
		{"clamp", opClamp[scalar32], opClamp[spec.Binary32]}, {"neg", opNeg[scalar32], opNeg[spec.Binary32]},
		{"abs", opAbs[scalar32], opAbs[spec.Binary32]}, {"relu", opRelu[scalar32], opRelu[spec.Binary32]},
		{"sign", opSign[scalar32], opSign[spec.Binary32]}, {"step", opStep[scalar32], opStep[spec.Binary32]},
		{"sqrt", opSqrt[scalar32], opSqrt[spec.Binary32]}, {"exp", opExp[scalar32], opExp[spec.Binary32]},
		{"log", opLog[scalar32], opLog[spec.Binary32]}, {"tanh", opTanh[scalar32], opTanh[spec.Binary32]},
		{"sin", opSin[scalar32], opSin[spec.Binary32]}, {"cos", opCos[scalar32], opCos[spec.Binary32]},
		{"log1p", opLog1p[scalar32], opLog1p[spec.Binary32]},
		{"third", opThird[scalar32], opThird[spec.Binary32]},
	}
}

// TestScalar32EnclosesBinary32: every spec.Scalar method of scalar32
// encloses the same method over spec.Binary32 at binary32 points of its
// operands (random boxes, some straddling 0, and their corners); a
// failure claims nothing, but a success must never be finite where the
// binary32 result is not.
func TestScalar32EnclosesBinary32(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 400
	}
	checked := map[string]int{}
	for s := 0; s < n; s++ {
		seed := uint64(s)*6151 + 9
		a := randomBox(spec.Shape{1}, seed).Data[0]
		b := randomBox(spec.Shape{1}, seed+1).Data[0]
		pts := SamplePoints(Interval32Tensor{Shape: spec.Shape{2}, Data: []Interval32{a, b}}, 3, seed, 4)
		for _, op := range scalarOps() {
			r, err := op.s(scalar32{iv: a}, scalar32{iv: b})
			if err != nil || r.err != nil {
				continue
			}
			for _, p := range pts {
				x, y := spec.Binary32FromFloat32(p[0]), spec.Binary32FromFloat32(p[1])
				v, err := op.b(x, y)
				if err != nil || !r.iv.Contains(v.Float32()) {
					t.Fatalf("%s(%s, %s) = %s misses binary32 %s, %s → %s (%v)", op.name, a, b, r, x, y, v, err)
				}
				checked[op.name]++
			}
		}
	}
	for _, op := range scalarOps() {
		if checked[op.name] == 0 {
			t.Errorf("%s never checked", op.name)
		}
	}
}

func TestScalar32Basics(t *testing.T) {
	iv := func(lo, hi float32) scalar32 { return scalar32{iv: Interval32{Lo: lo, Hi: hi}} }
	var z scalar32
	cases := []struct {
		name string
		got  scalar32
		want Interval32
		err  string
	}{
		{"zero value is 0", z, Interval32{}, ""},
		{"FromInt", z.FromInt(-3), Interval32{Lo: -3, Hi: -3}, ""},
		{"FromRat 1/2", z.FromRat(big.NewRat(1, 2)), Interval32{Lo: 0.5, Hi: 0.5}, ""},
		{"FromRat 1/3 brackets", z.FromRat(big.NewRat(1, 3)), Interval32{Lo: 0.3333333, Hi: nextUp32(0.3333333)}, ""},
		{"sign straddling", iv(-2, 3).Sign(), Interval32{Lo: -1, Hi: 1}, ""},
		{"sign of 0", iv(0, 0).Sign(), Interval32{}, ""},
		{"step straddling", iv(-2, 3).Step(), Interval32{Lo: 0, Hi: 1}, ""},
		{"step at 0 is 0", iv(-1, 0).Step(), Interval32{}, ""},
		{"clamp", iv(-5, 0.25).Clamp(iv(-1, -1), iv(1, 1)), Interval32{Lo: -1, Hi: 0.25}, ""},
		{"overflow is sticky", iv(0, 3e38).Add(iv(0, 3e38)).Sub(iv(1, 1)), Interval32{}, "not bounded within the binary32 range"},
		{"sticky through a later op", iv(1, 2).Mul(iv(0, 3e38).Mul(iv(2, 2))), Interval32{}, "not bounded"},
	}
	for _, c := range cases {
		if c.err != "" {
			if c.got.err == nil || !strings.Contains(c.got.err.Error(), c.err) {
				t.Errorf("%s: got %s, want failure %q", c.name, c.got, c.err)
			}
			continue
		}
		if c.got.err != nil || !c.got.iv.Same(c.want) {
			t.Errorf("%s: got %s, want %s", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		run  func() (scalar32, error)
		err  string
	}{
		{"div by an interval with 0", func() (scalar32, error) { return iv(1, 1).Div(iv(-1, 1)) }, "contains 0"},
		{"sqrt below 0", func() (scalar32, error) { return iv(-1, 4).Sqrt() }, "reaches below 0"},
		{"log of 0", func() (scalar32, error) { return iv(0, 1).Log() }, "is not > 0"},
		{"exp overflow", func() (scalar32, error) { return iv(0, 100).Exp() }, "not bounded"},
		{"failed operand", func() (scalar32, error) { return iv(0, 3e38).Add(iv(3e38, 3e38)).Exp() }, "not bounded"},
	} {
		if _, err := c.run(); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.err)
		}
	}
	if got := iv(1, 1).compare1(iv(1, 1)); got != 0 {
		t.Errorf("Compare of equal points %d", got)
	}
	if c, ok := iv(-2, -1).Compare(iv(0, 1)); c != -1 || !ok {
		t.Errorf("Compare below: %d %v", c, ok)
	}
	if c, ok := iv(2, 3).Compare(iv(0, 1)); c != 1 || !ok {
		t.Errorf("Compare above: %d %v", c, ok)
	}
}

// Compare is a one-result method in tests: the decided order.
func (x scalar32) compare1(y scalar32) int { c, _ := x.Compare(y); return c }

// signOf is a branching rule: −1 for x < 0, 0 at 0, 1 for x > 0,
// written as a registry rule would be (Compare against a constant).
func signOf[T spec.Scalar[T]](x T) (T, error) {
	c, ok := x.Compare(x.FromInt(0))
	switch {
	case !ok:
		return x, nil
	case c < 0:
		return x.FromInt(-1), nil
	case c > 0:
		return x.FromInt(1), nil
	}
	return x.FromInt(0), nil
}

// nested branches on two undecided comparisons.
func nested[T spec.Scalar[T]](x T) (T, error) {
	c1, _ := x.Compare(x.FromInt(0))
	c2, _ := x.Compare(x.FromInt(1))
	return x.FromInt(int64(10*c1 + c2)), nil
}

// TestEnclosePathsForcesEveryOutcome: an undecided comparison is forced
// to each outcome some pair of values has, and the results are joined, so
// the enclosure holds the binary32 result at every point. The planted
// fault is the evaluation that stops after the first outcome (what a
// scalar that answered "undecided" and let the rule fall through to one
// branch would compute): it misses a binary32 value, which the same
// check detects.
func TestEnclosePathsForcesEveryOutcome(t *testing.T) {
	x := Interval32{Lo: -1, Hi: 2}
	eval := func(f func(scalar32) (scalar32, error)) func(br *brancher) ([]scalar32, error) {
		return func(br *brancher) ([]scalar32, error) {
			v, err := f(scalar32{iv: x, br: br})
			return []scalar32{v}, err
		}
	}
	contains := func(r Interval32, f func(spec.Binary32) (spec.Binary32, error)) error {
		for _, p := range []float32{-1, -0.5, 0, 1, 1.5, 2} {
			v, _ := f(spec.Binary32FromFloat32(p))
			if !r.Contains(v.Float32()) {
				return &elemError{elem: 0, err: errString("binary32 " + v.String() + " at " + spec.Binary32FromFloat32(p).String() + " outside " + r.String())}
			}
		}
		return nil
	}
	got, branched, err := enclosePaths(eval(signOf[scalar32]))
	if err != nil || !branched || !got[0].Same(Interval32{Lo: -1, Hi: 1}) {
		t.Fatalf("sign over %s: %v %v %v, want [-1, 1]", x, got, branched, err)
	}
	if err := contains(got[0], signOf[spec.Binary32]); err != nil {
		t.Fatal(err)
	}
	// The planted fault: one run, the first outcome only.
	br := &brancher{}
	v, _ := signOf(scalar32{iv: x, br: br})
	if err := contains(v.iv, signOf[spec.Binary32]); err == nil {
		t.Fatalf("single-outcome evaluation %s not caught", v)
	}
	// Two comparisons: outcomes of x vs 0 are {−1, 0, 1}, of x vs 1 are
	// {−1, 0, 1}: 9 runs, results 10·c1 + c2 from −11 to 11.
	got, _, err = enclosePaths(eval(nested[scalar32]))
	if err != nil || !got[0].Same(Interval32{Lo: -11, Hi: 11}) {
		t.Fatalf("nested: %v %v", got, err)
	}
	if err := contains(got[0], nested[spec.Binary32]); err != nil {
		t.Fatal(err)
	}
	// A decided comparison takes no branch.
	if _, branched, _ := enclosePaths(func(br *brancher) ([]scalar32, error) {
		v, err := signOf(scalar32{iv: Interval32{Lo: 1, Hi: 2}, br: br})
		return []scalar32{v}, err
	}); branched {
		t.Error("decided comparison counted as a branch")
	}
	// IsZero on an enclosure holding 0 and other values is forced both
	// ways.
	got, branched, err = enclosePaths(func(br *brancher) ([]scalar32, error) {
		v := scalar32{iv: x, br: br}
		if v.IsZero() {
			return []scalar32{v.FromInt(7)}, nil
		}
		return []scalar32{v}, nil
	})
	if err != nil || !branched || !got[0].Same(Interval32{Lo: -1, Hi: 7}) {
		t.Errorf("IsZero over %s: %v %v %v, want [-1, 7]", x, got, branched, err)
	}
	if (scalar32{iv: Interval32{Lo: 1, Hi: 2}}).IsZero() || !(scalar32{}).IsZero() {
		t.Error("IsZero of a decided enclosure")
	}
	// Too many outcome sequences fail rather than enumerate without end.
	_, _, err = enclosePaths(func(br *brancher) ([]scalar32, error) {
		out := make([]scalar32, 5)
		for i := range out {
			out[i], _ = signOf(scalar32{iv: x, br: br})
		}
		return out, nil
	})
	if err == nil || !strings.Contains(err.Error(), "more than 64 combinations") {
		t.Errorf("3^5 outcome sequences: %v", err)
	}
	// Two constants that do not decide are an error, not a panic.
	_, _, err = enclosePaths(func(*brancher) ([]scalar32, error) {
		var z scalar32
		a := z.FromRat(big.NewRat(1, 3))
		return []scalar32{a.FromInt(int64(a.compare1(a)))}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "undecided") {
		t.Errorf("undecided constants: %v", err)
	}
	// A failed value fails the evaluation even when the rule drops it.
	_, _, err = enclosePaths(func(br *brancher) ([]scalar32, error) {
		big := scalar32{iv: Interval32{Lo: 3e38, Hi: 3e38}, br: br}
		_ = big.Add(big)
		return []scalar32{{iv: x}}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "not bounded") {
		t.Errorf("dropped failure: %v", err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestRegistryElementwiseEnclosesBinary32 runs every elementwise registry
// primitive (not only the IR tags) through the registry range rule on
// random boxes and checks that the primitive's own scalar rule over
// spec.Binary32 lands inside at binary32 points of the box: the branch
// splitting of sigmoid, softplus, safe_log, sqrt and log included.
func TestRegistryElementwiseEnclosesBinary32(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	attrs := map[string]*spec.Attrs{
		"scale":    {C: big.NewRat(-7, 3)},
		"clamp":    {Lo: big.NewRat(-1, 2), Hi: big.NewRat(3, 4)},
		"safe_log": {Eps: big.NewRat(1, 1000)},
	}
	reg, ref := spec.Default[scalar32](), spec.Default[spec.Binary32]()
	checked := map[string]int{}
	for _, name := range reg.Names() {
		p, _ := reg.Lookup(name)
		q, _ := ref.Lookup(name)
		if p.Unary == nil && p.Binary == nil {
			continue
		}
		a := attrs[name]
		if a == nil {
			a = &spec.Attrs{}
		}
		for s := 0; s < n; s++ {
			seed := uint64(s)*104723 + 5
			box := randomBox(spec.Shape{2}, seed)
			var r Interval32
			var err error
			if p.Unary != nil {
				r, err = encloseUnary(p.Unary, a, box.Data[0])
			} else {
				var v []Interval32
				v, _, err = enclosePaths(func(br *brancher) ([]scalar32, error) {
					y, err := p.Binary.F(scalar32{iv: box.Data[0], br: br}, scalar32{iv: box.Data[1], br: br})
					return []scalar32{y}, err
				})
				if err == nil {
					r = v[0]
				}
			}
			if err != nil {
				continue
			}
			for _, pt := range SamplePoints(box, 4, seed, 4) {
				x, y := spec.Binary32FromFloat32(pt[0]), spec.Binary32FromFloat32(pt[1])
				var v spec.Binary32
				var berr error
				if q.Unary != nil {
					v, berr = q.Unary.F(a, x)
				} else {
					v, berr = q.Binary.F(x, y)
				}
				if berr != nil || !r.Contains(v.Float32()) {
					t.Fatalf("%s over %v = %s misses binary32 at %v: %s (%v)", name, box.Data, r, pt, v, berr)
				}
				checked[name]++
			}
		}
	}
	for _, name := range []string{"sigmoid", "softplus", "safe_log", "sqrt", "log", "gelu", "clamp", "relu", "max", "div"} {
		if checked[name] == 0 {
			t.Errorf("%s never checked", name)
		}
	}
	// The sign split at work: over [−100, 100] a single branch of the
	// stable softplus overflows exp(100), the split does not. Above 0 it
	// is x + log(1+e^−x) with the two terms enclosed independently, so
	// the upper bound is 100 + log 2 (plus rounding), not softplus(100).
	p, _ := reg.Lookup("softplus")
	r, err := encloseUnary(p.Unary, &spec.Attrs{}, Interval32{Lo: -100, Hi: 100})
	if err != nil || r.Lo < 0 || r.Hi < 100.6931 || r.Hi > 100.6933 {
		t.Errorf("softplus over [-100, 100]: %s %v", r, err)
	}
}

// TestTraceDeterministic: tracing the same graph, payload and box twice
// gives the same rules and bit-identical enclosures, for every test graph
// (the branch-forcing softplus and safe_log included) and several boxes.
func TestTraceDeterministic(t *testing.T) {
	prof := backend.CheckedCPU()
	for _, tg := range testGraphs(t) {
		for s := uint64(0); s < 8; s++ {
			box := randomBox(tg.inShape, 31*s+2)
			a, errA := TraceNodes(tg.g, tg.p, box, mustPlan(t, tg.g, prof))
			b, errB := TraceNodes(tg.g, tg.p, box, mustPlan(t, tg.g, prof))
			if errText(errA) != errText(errB) {
				t.Fatalf("%s box %d: errors %v and %v", tg.name, s, errA, errB)
			}
			for i := range a {
				if a[i].Rule != b[i].Rule || len(a[i].Enclosures) != len(b[i].Enclosures) {
					t.Fatalf("%s box %d node %d: rules %s and %s", tg.name, s, i, a[i].Rule, b[i].Rule)
				}
				for j := range a[i].Enclosures {
					if a[i].Enclosures[j].Bits() != b[i].Enclosures[j].Bits() {
						t.Fatalf("%s box %d node %d element %d: %s and %s", tg.name, s, i, j, a[i].Enclosures[j], b[i].Enclosures[j])
					}
				}
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
