package ranges

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

func TestRoundDirected32(t *testing.T) {
	third := 1.0 / 3
	// float32(1/3) = 0x3eaaaaab rounds up; its predecessor is below 1/3.
	f3lo, f3hi := math.Float32frombits(0x3eaaaaaa), math.Float32frombits(0x3eaaaaab)
	tiny := math.SmallestNonzeroFloat64
	cases := []struct {
		in         float64
		down, up   float32
		downS, upS string // when the expectation is easier to state as text
	}{
		{in: 1, down: 1, up: 1},
		{in: -2.5, down: -2.5, up: -2.5},
		{in: 0, down: 0, up: 0},
		{in: third, down: f3lo, up: f3hi},
		{in: -third, down: -f3hi, up: -f3lo},
		{in: tiny, down: 0, up: math.SmallestNonzeroFloat32},
		{in: -tiny, down: -math.SmallestNonzeroFloat32, upS: "-0"},
		{in: math.MaxFloat32, down: math.MaxFloat32, up: math.MaxFloat32},
		{in: math.MaxFloat64, down: math.MaxFloat32, upS: "+Inf"},
		{in: -math.MaxFloat64, downS: "-Inf", up: -math.MaxFloat32},
		{in: 1 + 0x1p-30, down: 1, up: nextUp32(1)},
	}
	for _, c := range cases {
		d, u := RoundDown32(c.in), RoundUp32(c.in)
		if c.downS != "" {
			if s := fmtSigned(d); s != c.downS {
				t.Errorf("RoundDown32(%g) = %s, want %s", c.in, s, c.downS)
			}
		} else if d != c.down {
			t.Errorf("RoundDown32(%g) = %g, want %g", c.in, d, c.down)
		}
		if c.upS != "" {
			if s := fmtSigned(u); s != c.upS {
				t.Errorf("RoundUp32(%g) = %s, want %s", c.in, s, c.upS)
			}
		} else if u != c.up {
			t.Errorf("RoundUp32(%g) = %g, want %g", c.in, u, c.up)
		}
		if float64(d) > c.in || float64(u) < c.in {
			t.Errorf("%g not bracketed by [%g, %g]", c.in, d, u)
		}
	}
	if !math.IsNaN(float64(RoundDown32(math.NaN()))) || !math.IsNaN(float64(RoundUp32(math.NaN()))) {
		t.Error("NaN not kept")
	}
}

func fmtSigned(f float32) string {
	switch {
	case math.IsInf(float64(f), 1):
		return "+Inf"
	case math.IsInf(float64(f), -1):
		return "-Inf"
	case f == 0 && math.Signbit(float64(f)):
		return "-0"
	}
	return big.NewFloat(float64(f)).String()
}

func TestRound32(t *testing.T) {
	x, err := Round32(spec.Interval{Lo: -1e-50, Hi: 1e-50})
	if err != nil {
		t.Fatal(err)
	}
	if x.Lo != -math.SmallestNonzeroFloat32 || x.Hi != math.SmallestNonzeroFloat32 {
		t.Errorf("tiny interval rounded to %s", x)
	}
	z, _ := Round32(spec.Interval{Lo: -1e-50, Hi: -1e-50})
	if math.Signbit(float64(z.Hi)) {
		t.Errorf("hi of %s is −0; zero endpoints must be +0", z)
	}
	for _, v := range []spec.Interval{{Lo: math.Inf(-1), Hi: 0}, {Lo: 0, Hi: math.Inf(1)}, {Lo: 0, Hi: 1e39}, {Lo: math.NaN(), Hi: 0}, {Lo: 1, Hi: 0}} {
		if _, err := Round32(v); err == nil {
			t.Errorf("Round32(%v) accepted", v)
		}
	}
	for _, c := range []struct {
		r    *big.Rat
		want Interval32
	}{
		{big.NewRat(1, 2), Interval32{0.5, 0.5}},
		{big.NewRat(1, 3), Interval32{math.Float32frombits(0x3eaaaaaa), math.Float32frombits(0x3eaaaaab)}},
		{big.NewRat(-1, 10), Interval32{-0.1, -math.Nextafter32(0.1, 0)}},
	} {
		got, err := EncloseRat(c.r)
		if err != nil || !got.Same(c.want) {
			t.Errorf("EncloseRat(%s) = %s, %v; want %s", c.r.RatString(), got, err, c.want)
		}
		if !got.ContainsRat(c.r) {
			t.Errorf("EncloseRat(%s) = %s misses it", c.r.RatString(), got)
		}
	}
	if _, err := EncloseRat(new(big.Rat).SetFloat64(1e39)); err == nil {
		t.Error("1e39 enclosed in binary32")
	}
	if _, err := EncloseRat(nil); err == nil {
		t.Error("nil rational enclosed")
	}
}

func TestInterval32Ops(t *testing.T) {
	iv := func(lo, hi float32) Interval32 { return Interval32{lo, hi} }
	thirdLo, thirdHi := math.Float32frombits(0x3eaaaaaa), math.Float32frombits(0x3eaaaaab)
	type op func() (Interval32, error)
	cases := []struct {
		name string
		run  op
		want Interval32
		err  string
	}{
		{"add exact", func() (Interval32, error) { return iv(1, 2).Add(iv(-3, 0.5)) }, iv(-2, 2.5), ""},
		{"add rounds outward", func() (Interval32, error) { return iv(1, 1).Add(iv(0x1p-30, 0x1p-30)) }, iv(1, nextUp32(1)), ""},
		{"sub", func() (Interval32, error) { return iv(1, 2).Sub(iv(-3, 0.5)) }, iv(0.5, 5), ""},
		{"sub to zero is +0", func() (Interval32, error) { return iv(-1, 1).Sub(iv(-1, 1)) }, iv(-2, 2), ""},
		{"mul corners", func() (Interval32, error) { return iv(-1, 2).Mul(iv(-3, 0.5)) }, iv(-6, 3), ""},
		{"mul of one interval by itself", func() (Interval32, error) { return iv(-1, 2).Mul(iv(-1, 2)) }, iv(-2, 4), ""},
		{"square", func() (Interval32, error) { return iv(-1, 2).Square() }, iv(0, 4), ""},
		{"square negative", func() (Interval32, error) { return iv(-3, -2).Square() }, iv(4, 9), ""},
		{"div", func() (Interval32, error) { return iv(1, 1).Div(iv(3, 3)) }, iv(thirdLo, thirdHi), ""},
		{"div by interval with 0", func() (Interval32, error) { return iv(1, 2).Div(iv(-1, 1)) }, Interval32{}, "divisor [-1, 1] contains 0"},
		{"div by 0 endpoint", func() (Interval32, error) { return iv(1, 2).Div(iv(0, 1)) }, Interval32{}, "divisor [0, 1] contains 0"},
		{"inv", func() (Interval32, error) { return iv(-4, -2).Inv() }, iv(-0.5, -0.25), ""},
		{"inv through 0", func() (Interval32, error) { return iv(-4, 2).Inv() }, Interval32{}, "contains 0"},
		{"neg", func() (Interval32, error) { return iv(0, 2).Neg() }, iv(-2, 0), ""},
		{"relu straddling", func() (Interval32, error) { return iv(-2, 3).Relu() }, iv(0, 3), ""},
		{"relu negative", func() (Interval32, error) { return iv(-2, -1).Relu() }, iv(0, 0), ""},
		{"abs straddling", func() (Interval32, error) { return iv(-5, 3).Abs() }, iv(0, 5), ""},
		{"abs negative", func() (Interval32, error) { return iv(-5, -3).Abs() }, iv(3, 5), ""},
		{"abs positive", func() (Interval32, error) { return iv(3, 5).Abs() }, iv(3, 5), ""},
		{"max", func() (Interval32, error) { return iv(-5, 3).Max(iv(-1, 1)) }, iv(-1, 3), ""},
		{"min", func() (Interval32, error) { return iv(-5, 3).Min(iv(-1, 1)) }, iv(-5, 1), ""},
		{"sqrt", func() (Interval32, error) { return iv(4, 9).Sqrt() }, iv(2, 3), ""},
		{"sqrt clips below 0", func() (Interval32, error) { return iv(-4, 9).Sqrt() }, iv(0, 3), ""},
		{"sqrt of negative is 0", func() (Interval32, error) { return iv(-4, -1).Sqrt() }, iv(0, 0), ""},
		{"sqrt 2", func() (Interval32, error) { return iv(2, 2).Sqrt() }, iv(float32(math.Sqrt2), nextUp32(float32(math.Sqrt2))), ""},
		{"exp 0", func() (Interval32, error) { return iv(0, 0).Exp() }, iv(1, 1), ""},
		{"exp overflow", func() (Interval32, error) { return iv(0, 89).Exp() }, Interval32{}, "not bounded within the binary32 range"},
		{"log of 0", func() (Interval32, error) { return iv(0, 1).Log() }, Interval32{}, "is not > 0"},
		{"log 1", func() (Interval32, error) { return iv(1, 1).Log() }, iv(0, 0), ""},
		{"tanh 0", func() (Interval32, error) { return iv(0, 0).Tanh() }, iv(0, 0), ""},
		{"tanh wide", func() (Interval32, error) { return iv(-100, 100).Tanh() }, iv(-1, 1), ""},
		{"sigmoid 0", func() (Interval32, error) { return sigmoid32(iv(0, 0)) }, iv(0.5, 0.5), ""},
		{"sigmoid wide", func() (Interval32, error) { return sigmoid32(iv(-200, 200)) }, iv(0, 1), ""},
		{"invalid operand", func() (Interval32, error) { return iv(2, 1).Add(iv(0, 0)) }, Interval32{}, "lo > hi"},
		{"NaN operand", func() (Interval32, error) { return iv(0, float32(math.NaN())).Mul(iv(0, 0)) }, Interval32{}, "non-finite"},
		{"inf operand", func() (Interval32, error) { return iv(0, float32(math.Inf(1))).Relu() }, Interval32{}, "non-finite"},
		{"hull", func() (Interval32, error) { return Hull(iv(-1, 0), iv(2, 3)) }, iv(-1, 3), ""},
		{"intersect", func() (Interval32, error) { return Intersect(iv(-1, 2), iv(1, 3)) }, iv(1, 2), ""},
		{"disjoint", func() (Interval32, error) { return Intersect(iv(-1, 0), iv(1, 3)) }, Interval32{}, "disjoint"},
	}
	for _, c := range cases {
		got, err := c.run()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got %s, %v; want error containing %q", c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || !got.Same(c.want) {
			t.Errorf("%s: got %s %s, %v; want %s %s", c.name, got, got.Bits(), err, c.want, c.want.Bits())
		}
		if got.Valid() != nil {
			t.Errorf("%s: invalid result %s", c.name, got)
		}
		for _, e := range []float32{got.Lo, got.Hi} {
			if e == 0 && math.Signbit(float64(e)) {
				t.Errorf("%s: −0 endpoint in %s", c.name, got)
			}
		}
	}
}

func TestNewInterval32AndBits(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	x, err := NewInterval32(negZero, 1)
	if err != nil || x.Bits() != (Bits32{0, 0x3f800000}) {
		t.Errorf("NewInterval32(−0, 1) = %s %s, %v", x, x.Bits(), err)
	}
	for _, c := range [][2]float32{{1, 0}, {float32(math.NaN()), 0}, {0, float32(math.Inf(1))}} {
		if _, err := NewInterval32(c[0], c[1]); err == nil {
			t.Errorf("NewInterval32(%v, %v) accepted", c[0], c[1])
		}
	}
	if _, err := Point32(float32(math.Inf(-1))); err == nil {
		t.Error("Point32(−Inf) accepted")
	}
	b := Bits32{Lo: 0x80000000, Hi: 0x3f800000}
	y, err := b.Interval()
	if err != nil || y.Bits() != b {
		t.Errorf("Bits32 %s decoded as %s %v (signed zeros must be kept)", b, y.Bits(), err)
	}
	if _, err := (Bits32{Lo: 0x7fc00000, Hi: 0}).Interval(); err == nil {
		t.Error("NaN bits accepted")
	}
	if got := (Bits32{1, 2}).String(); got != "[0x00000001, 0x00000002]" {
		t.Errorf("String %q", got)
	}
	tr := TraceBits([][]Interval32{{{-1, 1}}, {}})
	if len(tr) != 2 || tr[0][0] != (Bits32{0xbf800000, 0x3f800000}) || len(tr[1]) != 0 {
		t.Errorf("TraceBits %v", tr)
	}
}

// TestInterval32OpsEncloseBinary32 is the per-operation soundness property:
// for random operand intervals and random binary32 points in them, the
// binary32 result (spec.Binary32) and, where exact, the rational result lie
// in the Interval32 result.
func TestInterval32OpsEncloseBinary32(t *testing.T) {
	type binop struct {
		name string
		iv   func(a, b Interval32) (Interval32, error)
		b32  func(a, b spec.Binary32) (spec.Binary32, error)
		rat  func(a, b spec.Rat) (spec.Rat, error)
	}
	ops := []binop{
		{"add", (Interval32).Add, func(a, b spec.Binary32) (spec.Binary32, error) { return a.Add(b), nil },
			func(a, b spec.Rat) (spec.Rat, error) { return a.Add(b), nil }},
		{"sub", (Interval32).Sub, func(a, b spec.Binary32) (spec.Binary32, error) { return a.Sub(b), nil },
			func(a, b spec.Rat) (spec.Rat, error) { return a.Sub(b), nil }},
		{"mul", (Interval32).Mul, func(a, b spec.Binary32) (spec.Binary32, error) { return a.Mul(b), nil },
			func(a, b spec.Rat) (spec.Rat, error) { return a.Mul(b), nil }},
		{"div", (Interval32).Div, (spec.Binary32).Div, (spec.Rat).Div},
		{"max", (Interval32).Max, func(a, b spec.Binary32) (spec.Binary32, error) { return a.Max(b), nil },
			func(a, b spec.Rat) (spec.Rat, error) { return a.Max(b), nil }},
		{"min", (Interval32).Min, func(a, b spec.Binary32) (spec.Binary32, error) { return a.Min(b), nil },
			func(a, b spec.Rat) (spec.Rat, error) { return a.Min(b), nil }},
	}
	type unop struct {
		name string
		iv   func(a Interval32) (Interval32, error)
		b32  func(a spec.Binary32) (spec.Binary32, error)
	}
	zero := spec.Binary32FromFloat32(0)
	uops := []unop{
		{"square", (Interval32).Square, func(a spec.Binary32) (spec.Binary32, error) { return a.Mul(a), nil }},
		{"sqrt", (Interval32).Sqrt, func(a spec.Binary32) (spec.Binary32, error) { return a.Max(zero).Sqrt() }},
		{"inv", (Interval32).Inv, func(a spec.Binary32) (spec.Binary32, error) { return spec.Binary32FromFloat32(1).Div(a) }},
		{"relu", (Interval32).Relu, func(a spec.Binary32) (spec.Binary32, error) { return a.Max(zero), nil }},
		{"abs", (Interval32).Abs, func(a spec.Binary32) (spec.Binary32, error) { return a.Abs(), nil }},
		{"exp", (Interval32).Exp, (spec.Binary32).Exp},
		{"log", (Interval32).Log, (spec.Binary32).Log},
		{"tanh", (Interval32).Tanh, (spec.Binary32).Tanh},
		{"sin", (Interval32).Sin, (spec.Binary32).Sin},
		{"cos", (Interval32).Cos, (spec.Binary32).Cos},
	}
	n := 4000
	if testing.Short() {
		n = 500
	}
	ratOf := func(f float32) spec.Rat { r, _ := spec.RatFromFloat64(float64(f)); return r }
	for s := 0; s < n; s++ {
		seed := uint64(s)*7919 + 3
		a := randomBox(spec.Shape{1}, seed).Data[0]
		b := randomBox(spec.Shape{1}, seed+1).Data[0]
		pts := SamplePoints(Interval32Tensor{Shape: spec.Shape{2}, Data: []Interval32{a, b}}, 3, seed, 4)
		for _, op := range ops {
			r, err := op.iv(a, b)
			if err != nil {
				continue // a failure encloses nothing and claims nothing
			}
			for _, p := range pts {
				x, y := spec.Binary32FromFloat32(p[0]), spec.Binary32FromFloat32(p[1])
				v, _ := op.b32(x, y)
				if !r.Contains(v.Float32()) {
					t.Fatalf("%s(%s, %s) = %s misses binary32 %s∘%s = %s", op.name, a, b, r, x, y, v)
				}
				if q, err := op.rat(ratOf(p[0]), ratOf(p[1])); err == nil && !r.ContainsRat(q.Big()) {
					t.Fatalf("%s(%s, %s) = %s misses exact %s", op.name, a, b, r, q)
				}
			}
		}
		for _, op := range uops {
			r, err := op.iv(a)
			if err != nil {
				continue
			}
			for _, p := range pts {
				x := spec.Binary32FromFloat32(p[0])
				v, _ := op.b32(x)
				if !r.Contains(v.Float32()) {
					t.Fatalf("%s(%s) = %s misses binary32 %s → %s", op.name, a, r, x, v)
				}
			}
		}
		r, err := sigmoid32(a)
		if err != nil {
			t.Fatalf("sigmoid(%s): %v", a, err)
		}
		for _, p := range pts {
			x := spec.Binary32FromFloat32(p[0])
			v, err := binary32Sigmoid(x)
			if err != nil || !r.Contains(v.Float32()) {
				t.Fatalf("sigmoid(%s) = %s misses binary32 %s → %s (%v)", a, r, x, v, err)
			}
		}
	}
}

// sigmoid32 is the sigmoid range rule on one enclosure: the registry's
// sigmoid over Interval32 (split at 0 where its branch is undecided),
// cut to [0, 1].
func sigmoid32(x Interval32) (Interval32, error) {
	p, err := spec.Default[scalar32]().Lookup("sigmoid")
	if err != nil {
		return Interval32{}, err
	}
	v, err := encloseUnary(p.Unary, &spec.Attrs{}, x)
	if err != nil {
		return Interval32{}, err
	}
	return Intersect(v, knownRange[irsem.OpSigmoid])
}

// binary32Sigmoid runs the registry's sigmoid over spec.Binary32.
func binary32Sigmoid(x spec.Binary32) (spec.Binary32, error) {
	p, err := spec.Default[spec.Binary32]().Lookup("sigmoid")
	if err != nil {
		return x, err
	}
	y, err := p.Apply(&spec.Attrs{}, []spec.Tensor[spec.Binary32]{spec.Scalar0(x)})
	if err != nil {
		return x, err
	}
	return y.Data[0], nil
}

// TestEncloseRatFastPath compares EncloseRat's fast path for small
// numerators and denominators with the general enclosure (spec.Interval's
// FromRat rounded outward).
func TestEncloseRatFastPath(t *testing.T) {
	slow := func(r *big.Rat) (Interval32, error) {
		var iv spec.Interval
		return Round32(iv.FromRat(r))
	}
	var rs []*big.Rat
	for _, p := range []int64{0, 1, -1, 3, -7, 1 << 24, 1<<24 + 1, 1<<53 - 1, 1 << 53, -(1 << 53), 123456789012345} {
		for _, q := range []int64{1, 2, 3, 10, 1 << 30, 1<<53 - 1, 1 << 53, 999999999999989} {
			rs = append(rs, big.NewRat(p, q))
		}
	}
	for i := 0; i < 2000; i++ {
		u := spec.UniformBits(11, i)
		v := spec.UniformBits(12, i)
		rs = append(rs, big.NewRat(int64(u)-1<<31, int64(v)+1), big.NewRat(int64(u)<<21+int64(v), int64(v)<<20+1))
	}
	// Beyond the fast path: tiny and huge values.
	rs = append(rs, new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 150)),
		new(big.Rat).SetFrac(big.NewInt(3), new(big.Int).Lsh(big.NewInt(1), 149)),
		new(big.Rat).SetFrac(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(3)))
	for _, r := range rs {
		a, errA := EncloseRat(r)
		b, errB := slow(r)
		if (errA == nil) != (errB == nil) || (errA == nil && !a.Same(b)) {
			t.Fatalf("EncloseRat(%s) = %s %v, general enclosure %s %v", r.RatString(), a, errA, b, errB)
		}
		if errA == nil && !a.ContainsRat(r) {
			t.Fatalf("EncloseRat(%s) = %s misses it", r.RatString(), a)
		}
		if errA == nil && !a.Contains(spec.Binary32(0).FromRat(r).Float32()) {
			t.Fatalf("EncloseRat(%s) = %s misses its binary32 rounding", r.RatString(), a)
		}
	}
}
