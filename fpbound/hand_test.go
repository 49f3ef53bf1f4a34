package fpbound

import (
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// builder assembles small IR graphs by hand.
type builder struct {
	g *irsem.Graph
	p *irsem.Payload
}

func newBuilder(in spec.Shape) *builder {
	return &builder{
		g: &irsem.Graph{Nodes: []irsem.Node{{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: in}}},
		p: &irsem.Payload{Entries: map[int]*irsem.Params{}},
	}
}

func (b *builder) node(k irsem.Kind, shape spec.Shape, parents ...int) int {
	id := len(b.g.Nodes)
	if parents == nil {
		parents = []int{}
	}
	b.g.Nodes = append(b.g.Nodes, irsem.Node{ID: id, Parents: parents, Kind: k, Shape: shape})
	b.g.OutputID = id
	return id
}

func (b *builder) konst(v irsem.RatTensor) int {
	id := b.node(irsem.Kind{Op: irsem.OpConst, ValueShape: v.Shape.Clone()}, v.Shape.Clone())
	b.p.Entries[id] = &irsem.Params{Value: &v}
	return id
}

func (b *builder) linear(x int, w, bias irsem.RatTensor) int {
	id := b.node(irsem.Kind{Op: irsem.OpLinear}, spec.Shape{w.Shape[0]}, x)
	b.p.Entries[id] = &irsem.Params{W: &w, B: &bias}
	return id
}

func ratTensor(shape spec.Shape, vals ...spec.Rat) irsem.RatTensor {
	return irsem.RatTensor{Shape: shape, Data: vals}
}

func filled(shape spec.Shape, v spec.Rat) irsem.RatTensor {
	d := make([]spec.Rat, shape.Size())
	for i := range d {
		d[i] = v
	}
	return ratTensor(shape, d...)
}

// near asserts got ≥ want (the bound is rounded upward) and got ≤ want·(1 +
// 1e-9): the float64 upward roundings and interval widenings cost far less
// than 1e-9 relative.
func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if !(got >= want*(1-1e-12)) || !(got <= want*(1+1e-9)) {
		t.Errorf("%s: bound %.17g, hand-derived %.17g", name, got, want)
	}
}

const u = 0x1p-24

func gammaHand(n float64) float64 { return n * u / (1 - n*u) }

// TestHandDerivedBounds checks the bound of tiny graphs against the
// formulas of doc.go worked out by hand.
func TestHandDerivedBounds(t *testing.T) {
	one := spec.NewRat(1, 1)
	t.Run("dot", func(t *testing.T) {
		// x·w with n = 64, xᵢ = 3/4, wᵢ = 3/2: each product 9/8 is charged
		// its rounding u·9/8 + 2^-149; the sum of 64 terms
		// γ_63·Σ(9/8 + Eᵢ). Hand: E = 64·Eᵢ + γ_63·64·(9/8 + Eᵢ), which
		// is also below the classical γ_64·Σ|xᵢwᵢ| + 64·2^-148 (Higham
		// 3.5). (A factor exactly ±1 would be charged nothing: 1·y = y.)
		const n = 64
		b := newBuilder(spec.Shape{n})
		w := b.konst(filled(spec.Shape{n}, spec.NewRat(3, 2)))
		m := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{n}, 0, w)
		b.node(irsem.Kind{Op: irsem.OpSum}, spec.Shape{}, m)
		en, err := Bounds(b.g, b.p, filled(spec.Shape{n}, spec.NewRat(3, 4)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		ei := u*9/8 + 0x1p-149
		want := n*ei + gammaHand(n-1)*n*(9.0/8+ei)
		near(t, "dot", en[0].Bound, want)
		if classical := gammaHand(n)*n*9/8 + n*0x1p-148; en[0].Bound > classical {
			t.Errorf("dot: bound %g above the classical %g", en[0].Bound, classical)
		}
		if !en[0].Exact.Contains(big.NewRat(n*9, 8)) {
			t.Errorf("dot: exact %v does not contain %d", en[0].Exact, n)
		}
	})
	t.Run("linear", func(t *testing.T) {
		// linear 3 → 1 with W = (3/4, 5/8, 3), b = 1 at x = (3/2, 5/4, 3/8):
		// products 9/8, 25/32, 9/8 (each charged u·|p| + 2^-149), then 4
		// terms with the bias (γ_3). Hand: Σ|p| = 97/32, Σ E_p = u·97/32 +
		// 3·2^-149, S = 97/32 + 1 + Σ E_p, E = Σ E_p + γ_3·S.
		b := newBuilder(spec.Shape{3})
		b.linear(0, ratTensor(spec.Shape{1, 3}, spec.NewRat(3, 4), spec.NewRat(5, 8), spec.NewRat(3, 1)),
			ratTensor(spec.Shape{1}, one))
		en, err := Bounds(b.g, b.p, ratTensor(spec.Shape{3}, spec.NewRat(3, 2), spec.NewRat(5, 4), spec.NewRat(3, 8)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		ep := 97.0/32*u + 3*0x1p-149
		near(t, "linear", en[0].Bound, ep+gammaHand(3)*(97.0/32+1+ep))
	})
	t.Run("linear by powers of two", func(t *testing.T) {
		// W = (1/2, 1/4, 2) at x = (3/2, 5/4, 3/8): a product by ±2^k is
		// exact but for underflow, so each is charged 2^-149 only; the sum
		// of the products 3/4, 5/16, 3/4 and the bias 1 is charged γ_3·S.
		b := newBuilder(spec.Shape{3})
		b.linear(0, ratTensor(spec.Shape{1, 3}, spec.NewRat(1, 2), spec.NewRat(1, 4), spec.NewRat(2, 1)),
			ratTensor(spec.Shape{1}, one))
		en, err := Bounds(b.g, b.p, ratTensor(spec.Shape{3}, spec.NewRat(3, 2), spec.NewRat(5, 4), spec.NewRat(3, 8)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		ep := 3 * 0x1p-149
		near(t, "linear pow2", en[0].Bound, ep+gammaHand(3)*(0.75+0.3125+0.75+1+ep))
	})
	t.Run("mean", func(t *testing.T) {
		// reduce_mean of 6 ones is the registry's Σ·(1/6): the sum's
		// γ_5·6, times the constant 1/6, held as fl32(1/6) = 11184811/2^26,
		// off by E_c = 1/(3·2^26). Product: P = 6·E_c + (1/6)·γ_5·6 +
		// γ_5·6·E_c, then one rounding u·(1 + P) + 2^-149.
		b := newBuilder(spec.Shape{6})
		b.node(irsem.Kind{Op: irsem.OpReduceMean, Axis: 0}, spec.Shape{}, 0)
		en, err := Bounds(b.g, b.p, filled(spec.Shape{6}, one), Options{})
		if err != nil {
			t.Fatal(err)
		}
		ec, es := 0x1p-26/3, gammaHand(5)*6
		p := 6*ec + es/6 + es*ec
		near(t, "mean", en[0].Bound, p+u*(1+p)+0x1p-149)
	})
	t.Run("mean of 8", func(t *testing.T) {
		// Σ·(1/8): a product by a power of two is exact but for underflow:
		// γ_7·8/8 + 2^-149.
		b := newBuilder(spec.Shape{8})
		b.node(irsem.Kind{Op: irsem.OpReduceMean, Axis: 0}, spec.Shape{}, 0)
		en, err := Bounds(b.g, b.p, filled(spec.Shape{8}, one), Options{})
		if err != nil {
			t.Fatal(err)
		}
		near(t, "mean of 8", en[0].Bound, gammaHand(7)+0x1p-149)
	})
	t.Run("exp", func(t *testing.T) {
		// exp(x + 1/3) at x = 0: the constant 1/3 is held as
		// fl32(1/3) = 11184811/2^25, off by 1/(3·2^25); adding the exact
		// zero x is exact. exp is then charged e^{1/3 + E}·E for the
		// argument's error plus k = 4 ulps of a result ≤ e^{1/3+E}:
		// 4·(2^-23·e^{1/3+E} + 2^-149).
		b := newBuilder(spec.Shape{})
		c := b.konst(ratTensor(spec.Shape{}, spec.NewRat(1, 3)))
		s := b.node(irsem.Kind{Op: irsem.OpAdd}, spec.Shape{}, 0, c)
		b.node(irsem.Kind{Op: irsem.OpExp}, spec.Shape{}, s)
		en, err := Bounds(b.g, b.p, ratTensor(spec.Shape{}, spec.Rat{}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := 0x1p-25 / 3
		top := math.Exp(1.0/3 + e)
		near(t, "exp", en[0].Bound, top*e+4*(0x1p-23*top+0x1p-149))
		// With ULPs = 1 the library term shrinks to one ulp.
		en1, err := Bounds(b.g, b.p, ratTensor(spec.Shape{}, spec.Rat{}), Options{ULPs: 1})
		if err != nil {
			t.Fatal(err)
		}
		near(t, "exp ulps=1", en1[0].Bound, top*e+(0x1p-23*top+0x1p-149))
	})
	t.Run("division by a value that may be zero", func(t *testing.T) {
		// inv(x − 1/3 + 1/3 − … ) is not needed: inv(c) with c = 1/3 −
		// fl-held… simplest: inv(x) at x = 0 has no bound.
		b := newBuilder(spec.Shape{})
		b.node(irsem.Kind{Op: irsem.OpInv}, spec.Shape{}, 0)
		en, err := Bounds(b.g, b.p, ratTensor(spec.Shape{}, spec.Rat{}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsInf(en[0].Bound, 1) || en[0].Reason == "" {
			t.Errorf("inv(0): bound %g reason %q, want +Inf with a reason", en[0].Bound, en[0].Reason)
		}
	})
	t.Run("underflow", func(t *testing.T) {
		// x·x at x = 3·2^-80: the exact 9·2^-160 is below half the
		// smallest subnormal, so binary32 gives 0; the bound must cover
		// it: u·9·2^-160 + 2^-149 (the underflow term).
		b := newBuilder(spec.Shape{})
		b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{}, 0, 0)
		tiny, _ := spec.RatFromFloat64(3 * 0x1p-80)
		en, err := Bounds(b.g, b.p, ratTensor(spec.Shape{}, tiny), Options{})
		if err != nil {
			t.Fatal(err)
		}
		near(t, "underflow", en[0].Bound, u*9*0x1p-160+0x1p-149)
		got := f32Out(t, b.g, b.p, ratTensor(spec.Shape{}, tiny))[0]
		if el := Judge(got, en[0]); got != 0 || el.Verdict != Holds {
			t.Errorf("underflow: f32 gives %v, verdict %v", got, el.Verdict)
		}
	})
	t.Run("overflow", func(t *testing.T) {
		// x·x at x = 2^64: 2^128 ≥ Ω overflows binary32: no bound.
		b := newBuilder(spec.Shape{})
		b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{}, 0, 0)
		big64, _ := spec.RatFromFloat64(0x1p64)
		en, err := Bounds(b.g, b.p, ratTensor(spec.Shape{}, big64), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsInf(en[0].Bound, 1) {
			t.Errorf("2^64·2^64: bound %g, want +Inf", en[0].Bound)
		}
	})
}

// TestUnboundedStaysUnbounded: an operand without a bound (its computed
// value may be ±∞ or NaN) never yields a finite bound, through every
// operation.
func TestUnboundedStaysUnbounded(t *testing.T) {
	u := Value(spec.Interval{Lo: 1, Hi: 2}, math.Inf(1))
	c := Err{}.FromInt(3)
	z := Err{}
	ops := map[string]func() (Err, error){
		"add":    func() (Err, error) { return u.Add(c), nil },
		"sub":    func() (Err, error) { return c.Sub(u), nil },
		"mul":    func() (Err, error) { return u.Mul(c), nil },
		"mul0":   func() (Err, error) { return z.Mul(u), nil },
		"div":    func() (Err, error) { return u.Div(c) },
		"div by": func() (Err, error) { return c.Div(u) },
		"abs":    func() (Err, error) { return u.Abs(), nil },
		"max":    func() (Err, error) { return u.Max(c), nil },
		"min":    func() (Err, error) { return u.Min(c), nil },
		"relu":   func() (Err, error) { return u.Relu(), nil },
		"clamp":  func() (Err, error) { return u.Clamp(z, c), nil },
		"sign":   func() (Err, error) { return u.Sign(), nil },
		"step":   func() (Err, error) { return u.Step(), nil },
		"exp":    func() (Err, error) { return u.Exp() },
		"log":    func() (Err, error) { return u.Log() },
		"log1p":  func() (Err, error) { return u.Log1p() },
		"tanh":   func() (Err, error) { return u.Tanh() },
		"sin":    func() (Err, error) { return u.Sin() },
		"cos":    func() (Err, error) { return u.Cos() },
		"sqrt":   func() (Err, error) { return u.Sqrt() },
	}
	for name, f := range ops {
		v, err := f()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !math.IsInf(v.Bound(), 1) {
			t.Errorf("%s of an unbounded value: bound %g", name, v.Bound())
		}
	}
	if _, ok := u.Compare(c); ok {
		t.Errorf("compare of an unbounded value decided")
	}
}
