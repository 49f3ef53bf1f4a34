package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// denseCase is one random linear layer over ErrOf.
type denseCase struct {
	rows, out, in int
	bias          bool
	zeros         bool // some inputs are exact zeros (the fold drops them)
	pending       bool // some inputs are pending sums (closed first)
	seed          uint64
}

func randF32(r *rand.Rand, scale float64) float64 {
	return float64(float32((r.Float64()*2 - 1) * scale))
}

// denseInputs draws x (rows×in), W (out×in) and b (out).
func denseInputs[F format](c denseCase) (x, w, b []ErrOf[F]) {
	r := rand.New(rand.NewPCG(c.seed, 7))
	x = make([]ErrOf[F], c.rows*c.in)
	for i := range x {
		lo := randF32(r, 4)
		hi := lo
		if r.IntN(3) == 0 {
			hi = lo + math.Abs(randF32(r, 0.01))
		}
		x[i] = valueOf[F](spec.Interval{Lo: lo, Hi: hi}, math.Abs(randF32(r, 1e-6)))
		switch {
		case c.zeros && r.IntN(4) == 0:
			x[i] = ErrOf[F]{}
		case c.pending && r.IntN(4) == 0:
			x[i] = x[i].Add(valueOf[F](spec.Interval{Lo: 0.5, Hi: 0.5}, 1e-7))
		}
	}
	w = make([]ErrOf[F], c.out*c.in)
	for i := range w {
		v := randF32(r, 1)
		if r.IntN(10) == 0 {
			v = 0
		}
		w[i] = valueOf[F](spec.Interval{Lo: v, Hi: v}, 0)
	}
	b = make([]ErrOf[F], c.out)
	for i := range b {
		v := randF32(r, 1)
		b[i] = valueOf[F](spec.Interval{Lo: v, Hi: v}, 0)
	}
	return x, w, b
}

func rat(v float64) *big.Rat { return new(big.Rat).SetFloat64(v) }

// required is the real value the bound of output (r, j) must reach, from
// the fold's own per-term charges (doc.go, "Products" and "Sums") summed
// exactly: Σ over non-zero weights of |W|E + u·(|W||x| + |W|E) + 2η, and
// the Σ|t̃| that its pending sum must carry. A product with an exact-zero
// input is an exact zero, which the fold drops (no charge).
func required[F format](x, w []ErrOf[F], b []ErrOf[F], r, j, in int, bias bool) (e, s *big.Rat) {
	var bv *ErrOf[F]
	if bias {
		bv = &b[j]
	}
	return requiredTerms(x[r*in:(r+1)*in], w[j*in:(j+1)*in], bv)
}

// requiredTerms is required for the terms xs[k]·ws[k] (+ *b when b is not
// nil) of one output.
func requiredTerms[F format](xs, ws []ErrOf[F], b *ErrOf[F]) (e, s *big.Rat) {
	c := constsOf[F]()
	u, sub := rat(c.u), rat(c.sub)
	e, s = new(big.Rat), new(big.Rat)
	for k := range xs {
		wv := math.Abs(ws[k].x.Lo)
		xv := xs[k].close()
		if wv == 0 || xv.exactZero() {
			continue // the fold's product is an exact zero, which Add drops
		}
		p := new(big.Rat).Mul(rat(wv), rat(xv.e))
		m := new(big.Rat).Mul(rat(wv), rat(mag(xv.x)))
		m.Add(m, p)
		t := new(big.Rat).Add(p, new(big.Rat).Mul(u, m))
		t.Add(t, sub)
		e.Add(e, t)
		s.Add(s, new(big.Rat).Sub(m, p))
		s.Add(s, t)
	}
	if b != nil {
		s.Add(s, rat(math.Abs(b.x.Lo)))
	}
	return e, s
}

func runDense[F format](t *testing.T, c denseCase) {
	x, w, b := denseInputs[F](c)
	y := make([]ErrOf[F], c.rows*c.out)
	if !linearDense(x, nil, w, b, y, c.rows, c.out, c.in, c.bias, plantNone) {
		t.Fatalf("%+v: the dense path did not apply", c)
	}
	for r := 0; r < c.rows; r++ {
		for j := 0; j < c.out; j++ {
			v := y[r*c.out+j]
			// The theorem's charges, summed exactly, are below the bound.
			re, rs := required(x, w, b, r, j, c.in, c.bias)
			if rat(v.e).Cmp(re) < 0 {
				t.Fatalf("%+v: output (%d,%d): bound %g below the required %s", c, r, j, v.e, re.FloatString(30))
			}
			if v.n >= 2 && rat(v.s).Cmp(rs) < 0 {
				t.Fatalf("%+v: output (%d,%d): Σ|t| %g below the required %s", c, r, j, v.s, rs.FloatString(30))
			}
			// The element-by-element fold of the same layer.
			var zero ErrOf[F]
			f := spec.FoldDot(zero, x[r*c.in:(r+1)*c.in], w[j*c.in:(j+1)*c.in])
			if c.bias {
				f = f.Add(b[j])
			}
			if v.n != f.n {
				t.Fatalf("%+v: output (%d,%d): %d terms, the fold counts %d", c, r, j, v.n, f.n)
			}
			// Both exact enclosures contain the exact value at the
			// inputs' lower endpoints.
			ex := new(big.Rat)
			for k := 0; k < c.in; k++ {
				ex.Add(ex, new(big.Rat).Mul(rat(x[r*c.in+k].close().x.Lo), rat(w[j*c.in+k].x.Lo)))
			}
			if c.bias {
				ex.Add(ex, rat(b[j].x.Lo))
			}
			if rat(v.x.Lo).Cmp(ex) > 0 || rat(v.x.Hi).Cmp(ex) < 0 {
				t.Fatalf("%+v: output (%d,%d): %v does not contain %s", c, r, j, v.x, ex.FloatString(20))
			}
			// The dense bound is the fold's up to the rounding of the
			// float64 sums (relative 2⁻³⁰ here).
			dv, fv := v.Bound(), f.Bound()
			if dv > fv*(1+math.Ldexp(1, -30)) {
				t.Fatalf("%+v: output (%d,%d): dense bound %g looser than the fold's %g", c, r, j, dv, fv)
			}
		}
	}
}

func TestLinearDense(t *testing.T) {
	cases := []denseCase{
		{rows: 1, out: 16, in: 64, bias: true, seed: 1},
		{rows: 3, out: 10, in: 33, bias: false, seed: 2},
		{rows: 4, out: 64, in: 64, bias: true, zeros: true, seed: 3},
		{rows: 2, out: 7, in: 129, bias: true, pending: true, seed: 4},
		{rows: 5, out: 1, in: 300, bias: true, zeros: true, pending: true, seed: 5},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("f32/%d", c.seed), func(t *testing.T) { runDense[binary32](t, c) })
		t.Run(fmt.Sprintf("f64/%d", c.seed), func(t *testing.T) { runDense[binary64](t, c) })
	}
}

// TestLinearDensePlanted drops the products' relative rounding term: the
// bound then falls below the theorem's required value, and the test's
// check must say so.
func TestLinearDensePlanted(t *testing.T) {
	c := denseCase{rows: 2, out: 8, in: 64, bias: true, seed: 9}
	x, w, b := denseInputs[binary32](c)
	y := make([]Err, c.rows*c.out)
	if !linearDense(x, nil, w, b, y, c.rows, c.out, c.in, c.bias, plantRounding) {
		t.Fatal("the dense path did not apply")
	}
	caught := 0
	for r := 0; r < c.rows; r++ {
		for j := 0; j < c.out; j++ {
			re, _ := required(x, w, b, r, j, c.in, c.bias)
			if rat(y[r*c.out+j].e).Cmp(re) < 0 {
				caught++
			}
		}
	}
	if caught == 0 {
		t.Fatal("a bound without the u·Σ|W||x| term was not caught")
	}
}

// TestLinearDenseRefuses checks the cases the dense path must leave to the
// fold: a weight that is not an exact point, an unbounded input, an input
// outside the tame range.
func TestLinearDenseRefuses(t *testing.T) {
	c := denseCase{rows: 1, out: 4, in: 32, seed: 11}
	for _, tc := range []struct {
		name string
		edit func(x, w []Err)
	}{
		{"weight-interval", func(x, w []Err) { w[3] = Value(spec.Interval{Lo: 1, Hi: 2}, 0) }},
		{"weight-bound", func(x, w []Err) { w[3] = Value(spec.Interval{Lo: 1, Hi: 1}, 1e-9) }},
		{"unbounded-input", func(x, w []Err) { x[5] = Value(spec.Interval{Lo: 1, Hi: 1}, math.Inf(1)) }},
		{"huge-input", func(x, w []Err) { x[5] = Value(spec.Interval{Lo: 1e300, Hi: 1e300}, 0) }},
	} {
		x, w, b := denseInputs[binary32](c)
		tc.edit(x, w)
		y := make([]Err, c.rows*c.out)
		if linearDense(x, nil, w, b, y, c.rows, c.out, c.in, c.bias, plantNone) {
			t.Errorf("%s: the dense path applied", tc.name)
		}
	}
}

// TestFromSmallFrac checks the payload conversion's fast path against
// FromRat: wherever it answers, the very same value (enclosure, bound,
// term count), and it answers for every binary32 value (format binary32)
// and declines a non-dyadic fraction and a binary64-only value.
func TestFromSmallFrac(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	type tc struct{ p, q int64 }
	cases := []tc{{1, 3}, {-7, 10}, {1, 1 << 62}, {(1 << 53) + 1, 1}, {(1 << 25) + 1, 1 << 10}, {0, 1}, {-1, 1}}
	for range 200 {
		f := float32((r.Float64()*2 - 1) * math.Ldexp(1, r.IntN(60)-30))
		x := new(big.Rat).SetFloat64(float64(f))
		cases = append(cases, tc{x.Num().Int64(), x.Denom().Int64()})
	}
	for _, c := range cases {
		want := Err{}.FromRat(big.NewRat(c.p, c.q))
		got, ok := Err{}.FromSmallFrac(c.p, c.q)
		if ok && got != want {
			t.Errorf("%d/%d: fast %v, FromRat %v", c.p, c.q, got, want)
		}
		if isF32 := float64(float32(float64(c.p)/float64(c.q))) == float64(c.p)/float64(c.q) && c.q&(c.q-1) == 0 && c.p < 1<<24 && c.p > -1<<24; isF32 && !ok {
			t.Errorf("%d/%d: a binary32 value was declined", c.p, c.q)
		}
		want64 := Err64{}.FromRat(big.NewRat(c.p, c.q))
		if got64, ok := (Err64{}).FromSmallFrac(c.p, c.q); ok && got64 != want64 {
			t.Errorf("%d/%d (binary64): fast %v, FromRat %v", c.p, c.q, got64, want64)
		}
	}
	if _, ok := (Err{}).FromSmallFrac(1, 3); ok {
		t.Error("1/3 accepted")
	}
	if _, ok := (Err{}).FromSmallFrac((1<<25)+1, 1<<10); ok {
		t.Error("a 26-bit significand accepted as binary32")
	}
}
