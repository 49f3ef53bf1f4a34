package emit

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// This file is the Go mirror of the derivative theorems of
// lean/Tlcheck/Deriv.lean: for every exact primitive of the registry it
// checks, exactly over Rat on random instances, the identity the Lean
// theorem states for that kind of primitive, so that a wrong JVP rule
// (squareD a := 3*a) fails here as it makes the Lean statement false.
//
//   - Every differentiable primitive: the first-order Taylor identity in
//     the ring Rat[ε]/(ε²) — fwd over dual numbers at x + ε·v equals
//     fwd x + ε·jvp x v. For a polynomial or rational forward this is the
//     identity fwd (x + t•v) = fwd x + t•jvp x v + t²•R x v t read modulo
//     t² (R is a polynomial, or a rational function defined at t = 0).
//   - Polynomial primitives (OpInfo.Polynomial): the identity itself, with
//     R explicit. Each output element of t ↦ fwd (x + t•v) is a polynomial
//     in t; it is interpolated exactly through t = 0, 1, …, d (d the
//     smallest degree that also predicts two further points exactly), and
//     its constant and linear coefficients must be fwd x and jvp x v; R is
//     the rest, Σ_{i≥2} cᵢ t^{i−2}.
//   - Smooth rational primitives whose forward is defined along the line
//     (div, inv): t·R(t) = (fwd(x+t•v) − fwd x)/t − jvp x v, which tends to
//     0 as t → 0 exactly when jvp is the derivative, shrinks at least
//     8-fold from t = 2⁻²⁰ to t = 2⁻²⁴ (it is t·R(0) + O(t²)); a wrong
//     jvp leaves it near a non-zero constant.
//   - Piecewise-linear primitives (not Smooth): local linearity. With
//     t = 2⁻⁶⁴, far below the distance from a random rational point to
//     the next kink, each output element is linear on [−t, t] unless x is
//     on its kink: where both one-sided slopes agree (and agree with the
//     slope at t/2), jvp x v must equal them; at a kink the documented
//     convention must lie between the two one-sided slopes (relu′(0) = 0,
//     abs′(0) = 0, max/min ties ½–½, clamp 0 at the bounds: the Clarke
//     derivative along v), and a jump (sign at 0) takes the convention
//     from the dual-number check.
//   - NoGrad primitives (const, detach, random draws, masks): the JVP is
//     exactly zero.
//   - The float casts round_f16, round_bf16, round_f32 (piecewise
//     constant): Round.lean's `round_locally_constant` statement. At an x
//     whose every entry lies strictly inside its rounding interval
//     (`roundGap` > 0, transcribed in round_test.go), with
//     δ = minᵢ roundGap xᵢ / (|vᵢ| + 1) (`roundDelta`), the registry's
//     forward at x + t·v equals fwd x + t·jvp x v exactly for t at ±δ·(1 −
//     2⁻²⁰), ±δ/2, ±δ·2⁻³⁰ — so a JVP ≠ 0 fails — and every entry with
//     vᵢ ≠ 0 changes its rounding just past gapᵢ/|vᵢ| in one direction: the
//     radius is the distance to the nearest jump, not a smaller one.

// taylorCases is the number of random instances per primitive.
const taylorCases = 12

// dualReg is the reference registry over dual numbers over Rat (ratReg,
// over Rat, is emit.go's).
var dualReg = spec.Default[spec.Dual[spec.Rat]]()

// lineEval evaluates p's forward at xs + t·dxs over Rat.
func lineEval(p *spec.Prim[spec.Rat], a *spec.Attrs, xs, dxs []spec.Tensor[spec.Rat], t spec.Rat) (spec.Tensor[spec.Rat], error) {
	ys := make([]spec.Tensor[spec.Rat], len(xs))
	for i := range xs {
		d := make([]spec.Rat, len(xs[i].Data))
		for k := range d {
			d[k] = xs[i].Data[k].Add(t.Mul(dxs[i].Data[k]))
		}
		ys[i] = spec.Tensor[spec.Rat]{Shape: xs[i].Shape, Data: d}
	}
	return p.Forward(a, ys)
}

// taylorCheck checks op's JVP rule in reg against its forward rule (and
// the forward of dual over dual numbers) on one instance with tangents
// dxs. It returns nil, an error describing the identity that fails, or
// errSkip when the instance lies outside the rules' exact domain.
func taylorCheck(reg *spec.Registry[spec.Rat], dual *spec.Registry[spec.Dual[spec.Rat]], inst *casegen.Instance, dxs []spec.Tensor[spec.Rat]) error {
	p, err := reg.Lookup(inst.Op)
	if err != nil {
		return err
	}
	y, err := p.Forward(inst.Attrs, inst.Xs)
	if err != nil {
		return errSkip
	}
	j, err := p.JVP(inst.Attrs, inst.Xs, y, dxs)
	if err != nil {
		return errSkip
	}
	if len(j.Data) != len(y.Data) {
		return fmt.Errorf("jvp has %d elements, the forward %d", len(j.Data), len(y.Data))
	}
	if _, ok := registryFormat[inst.Op]; ok {
		// The float casts: local constancy with Round.lean's radius.
		return roundLocalCheck(p, inst, dxs, y, j)
	}
	if p.NoGrad {
		for k, v := range j.Data {
			if !v.IsZero() {
				return fmt.Errorf("element %d: a no-grad primitive's jvp is %v, not 0", k, v)
			}
		}
		return nil
	}
	// The dual-number identity: fwd(x + ε·v) = fwd x + ε·jvp x v.
	dp, err := dual.Lookup(inst.Op)
	if err != nil {
		return err
	}
	// dualAt evaluates the forward over dual numbers at x + shift·v + ε·v.
	dualAt := func(shift spec.Rat) (spec.Tensor[spec.Dual[spec.Rat]], error) {
		in := make([]spec.Tensor[spec.Dual[spec.Rat]], len(inst.Xs))
		for i, x := range inst.Xs {
			d := make([]spec.Dual[spec.Rat], len(x.Data))
			for k := range d {
				d[k] = spec.MakeDual(x.Data[k].Add(shift.Mul(dxs[i].Data[k])), dxs[i].Data[k])
			}
			in[i] = spec.Tensor[spec.Dual[spec.Rat]]{Shape: x.Shape, Data: d}
		}
		return dp.Forward(inst.Attrs, in)
	}
	checked := false
	if yd, err := dualAt(spec.NewRat(0, 1)); err == nil {
		checked = true
		for k := range y.Data {
			if !yd.Data[k].Re.Same(y.Data[k]) {
				return fmt.Errorf("element %d: the forward over dual numbers has primal %v, over Rat %v", k, yd.Data[k].Re, y.Data[k])
			}
			if yd.Data[k].Du.Same(j.Data[k]) {
				continue
			}
			if !p.Smooth {
				// x may sit on a kink along v, where the dual numbers'
				// own choice need not be the primitive's convention: the
				// convention must then lie between the derivatives just
				// beside the kink (x ± 2⁻⁶⁴·v).
				l, errL := dualAt(pow2(64).Neg())
				r, errR := dualAt(pow2(64))
				if errL != nil || errR != nil {
					// Beside x the forward leaves its exact domain (a
					// square root of a non-square): the kink cannot be
					// located over Rat, and the case is not decided.
					return errSkip
				}
				if !l.Data[k].Du.Same(r.Data[k].Du) {
					lo, hi := l.Data[k].Du.Min(r.Data[k].Du), l.Data[k].Du.Max(r.Data[k].Du)
					c1, _ := j.Data[k].Compare(lo)
					c2, _ := j.Data[k].Compare(hi)
					if c1 >= 0 && c2 <= 0 {
						continue
					}
					return fmt.Errorf("element %d: at a kink the derivatives beside it are %v and %v, but jvp x v = %v lies outside them", k, l.Data[k].Du, r.Data[k].Du, j.Data[k])
				}
			}
			return fmt.Errorf("element %d: fwd(x + ε·v) = %v + ε·%v, but jvp x v = %v (the first-order Taylor identity fails)", k, y.Data[k], yd.Data[k].Du, j.Data[k])
		}
	}
	switch {
	case p.Polynomial:
		return polyCheck(p, inst, dxs, y, j)
	case !p.Smooth:
		if err := kinkCheck(p, inst, dxs, y, j); err != errSkip {
			return err
		}
	default:
		if err := limitCheck(p, inst, dxs, y, j); err != errSkip {
			return err
		}
	}
	if !checked {
		return errSkip
	}
	return nil
}

var errSkip = errors.New("outside the exact domain")

// polyCheck interpolates each output element of t ↦ fwd(x + t·v) exactly
// and compares its two lowest coefficients with fwd x and jvp x v.
func polyCheck(p *spec.Prim[spec.Rat], inst *casegen.Instance, dxs []spec.Tensor[spec.Rat], y, j spec.Tensor[spec.Rat]) error {
	const maxDeg = 6
	var pts [][]spec.Rat // pts[i][k]: element k at t = i
	at := func(i int) error {
		for len(pts) <= i {
			g, err := lineEval(p, inst.Attrs, inst.Xs, dxs, spec.NewRat(int64(len(pts)), 1))
			if err != nil {
				return err
			}
			pts = append(pts, g.Data)
		}
		return nil
	}
	for k := range y.Data {
		ok := false
		for d := 0; d <= maxDeg && !ok; d++ {
			if err := at(d + 2); err != nil {
				return fmt.Errorf("a polynomial primitive's forward failed along the line: %v", err)
			}
			ys := make([]*big.Rat, d+1)
			for i := range ys {
				ys[i] = pts[i][k].Big()
			}
			c := interpolate(ys)
			// Does the degree-d interpolant predict t = d+1 and d+2?
			ok = true
			for _, i := range []int{d + 1, d + 2} {
				if evalPoly(c, int64(i)).Cmp(pts[i][k].Big()) != 0 {
					ok = false
				}
			}
			if !ok {
				continue
			}
			c1 := new(big.Rat)
			if len(c) > 1 {
				c1 = c[1]
			}
			if c[0].Cmp(y.Data[k].Big()) != 0 {
				return fmt.Errorf("element %d: fwd(x + t·v) at t = 0 is %v, fwd x is %v", k, c[0], y.Data[k])
			}
			if c1.Cmp(j.Data[k].Big()) != 0 {
				return fmt.Errorf("element %d: fwd(x + t·v) = %s, whose t-coefficient %v is not jvp x v = %v (the Taylor identity fails)", k, polyString(c), c1, j.Data[k])
			}
		}
		if !ok {
			return fmt.Errorf("element %d: t ↦ fwd(x + t·v) is not a polynomial of degree ≤ %d, though the registry says the primitive is polynomial", k, maxDeg)
		}
	}
	return nil
}

// interpolate returns the monomial coefficients of the polynomial of
// degree < len(ys) through (i, ys[i]), i = 0, 1, …, by Newton's divided
// differences, exactly.
func interpolate(ys []*big.Rat) []*big.Rat {
	n := len(ys)
	dd := make([]*big.Rat, n)
	for i := range ys {
		dd[i] = new(big.Rat).Set(ys[i])
	}
	for lvl := 1; lvl < n; lvl++ {
		for i := n - 1; i >= lvl; i-- {
			dd[i].Sub(dd[i], dd[i-1])
			dd[i].Quo(dd[i], big.NewRat(int64(lvl), 1))
		}
	}
	// p(t) = dd0 + dd1·t + dd2·t(t−1) + …: expand by Horner from the top.
	c := []*big.Rat{new(big.Rat).Set(dd[n-1])}
	for i := n - 2; i >= 0; i-- {
		// c := c·(t − i) + dd[i]
		next := make([]*big.Rat, len(c)+1)
		for k := range next {
			next[k] = new(big.Rat)
		}
		for k, ck := range c {
			next[k+1].Add(next[k+1], ck)
			next[k].Sub(next[k], new(big.Rat).Mul(ck, big.NewRat(int64(i), 1)))
		}
		next[0].Add(next[0], dd[i])
		c = next
	}
	return c
}

func evalPoly(c []*big.Rat, t int64) *big.Rat {
	r := new(big.Rat)
	for i := len(c) - 1; i >= 0; i-- {
		r.Mul(r, big.NewRat(t, 1))
		r.Add(r, c[i])
	}
	return r
}

func polyString(c []*big.Rat) string {
	s := ""
	for i, ci := range c {
		if i > 0 {
			s += " + "
		}
		s += fmt.Sprintf("%s·t^%d", ci.RatString(), i)
	}
	return s
}

// pow2 is 2^-k.
func pow2(k int) spec.Rat {
	return spec.RatFromBig(new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(k))))
}

// limitCheck: t·R(t) = (fwd(x+t·v) − fwd x)/t − jvp must shrink with t.
func limitCheck(p *spec.Prim[spec.Rat], inst *casegen.Instance, dxs []spec.Tensor[spec.Rat], y, j spec.Tensor[spec.Rat]) error {
	tr := func(k int) ([]spec.Rat, error) {
		t := pow2(k)
		g, err := lineEval(p, inst.Attrs, inst.Xs, dxs, t)
		if err != nil {
			return nil, errSkip
		}
		out := make([]spec.Rat, len(g.Data))
		for e := range out {
			q, err := g.Data[e].Sub(y.Data[e]).Div(t)
			if err != nil {
				return nil, err
			}
			out[e] = q.Sub(j.Data[e])
		}
		return out, nil
	}
	a, err := tr(20)
	if err != nil {
		return err
	}
	b, err := tr(24)
	if err != nil {
		return err
	}
	for e := range a {
		if b[e].IsZero() {
			continue
		}
		if c, _ := b[e].Abs().Mul(spec.NewRat(8, 1)).Compare(a[e].Abs()); c > 0 {
			return fmt.Errorf("element %d: (fwd(x+t·v) − fwd x)/t − jvp x v is %v at t = 2⁻²⁰ and %v at t = 2⁻²⁴: it does not tend to 0, so jvp is not the derivative", e, a[e].Float64(), b[e].Float64())
		}
	}
	return nil
}

// kinkCheck: local linearity away from kinks, the convention within the
// one-sided slopes at a kink.
func kinkCheck(p *spec.Prim[spec.Rat], inst *casegen.Instance, dxs []spec.Tensor[spec.Rat], y, j spec.Tensor[spec.Rat]) error {
	slope := func(k int, sign int64) ([]spec.Rat, error) {
		t := pow2(k).Mul(spec.NewRat(sign, 1))
		g, err := lineEval(p, inst.Attrs, inst.Xs, dxs, t)
		if err != nil {
			return nil, errSkip
		}
		out := make([]spec.Rat, len(g.Data))
		for e := range out {
			if out[e], err = g.Data[e].Sub(y.Data[e]).Div(t); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var s [4][]spec.Rat
	for i, a := range []struct {
		k    int
		sign int64
	}{{64, 1}, {65, 1}, {64, -1}, {65, -1}} {
		var err error
		if s[i], err = slope(a.k, a.sign); err != nil {
			return err
		}
	}
	for e := range y.Data {
		plus, minus := s[0][e], s[2][e]
		if !plus.Same(s[1][e]) || !minus.Same(s[3][e]) {
			continue // not linear on either side at this scale: a jump (sign at 0); the dual check holds the convention
		}
		if plus.Same(minus) {
			if !j.Data[e].Same(plus) {
				return fmt.Errorf("element %d: fwd is linear near x along v with slope %v, but jvp x v = %v (local linearity fails)", e, plus, j.Data[e])
			}
			continue
		}
		lo, hi := plus.Min(minus), plus.Max(minus)
		if c1, _ := j.Data[e].Compare(lo); c1 < 0 {
			return fmt.Errorf("element %d: at a kink the one-sided slopes are %v and %v, but jvp x v = %v lies outside them", e, minus, plus, j.Data[e])
		}
		if c2, _ := j.Data[e].Compare(hi); c2 > 0 {
			return fmt.Errorf("element %d: at a kink the one-sided slopes are %v and %v, but jvp x v = %v lies outside them", e, minus, plus, j.Data[e])
		}
	}
	return nil
}

// exactOps lists the registry's exact primitives.
func exactOps() []string {
	var ops []string
	for _, info := range spec.Infos() {
		if info.Exact {
			ops = append(ops, info.Name)
		}
	}
	return ops
}

// runTaylor checks op on taylorCases random instances and returns the
// number checked and the first failure.
func runTaylor(reg *spec.Registry[spec.Rat], dual *spec.Registry[spec.Dual[spec.Rat]], op string, seed uint64) (int, error) {
	checked := 0
	for c := 0; c < taylorCases; c++ {
		src := casegen.NewRandSource(seed + uint64(c))
		inst, err := casegen.Generate(src, op)
		if err != nil {
			return checked, fmt.Errorf("generate: %v", err)
		}
		out, err := casegen.OutShape(inst)
		if err != nil {
			return checked, err
		}
		dxs, _ := casegen.Tangents(src, inst, out)
		switch err := taylorCheck(reg, dual, inst, dxs); err {
		case nil:
			checked++
		case errSkip:
		default:
			return checked, fmt.Errorf("case %d (%s, inputs %v, tangents %v): %v", c, op, inst.Xs, dxs, err)
		}
	}
	return checked, nil
}

// TestTaylorIdentity: every exact primitive's JVP rule satisfies the
// identity of its Lean derivative theorem on random instances, and each
// primitive has at least one instance inside its exact domain.
func TestTaylorIdentity(t *testing.T) {
	for i, op := range exactOps() {
		t.Run(op, func(t *testing.T) {
			if !covered(op) {
				t.Skipf("%s has no Lean semantics (lean/README.md, Coverage)", op)
			}
			n, err := runTaylor(ratReg, dualReg, op, uint64(1000*i))
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatalf("none of %d instances of %s lies in its exact domain: the identity was never checked", taylorCases, op)
			}
		})
	}
}

// plantJVP returns a Rat registry whose JVP of op is replaced by wrong.
func plantJVP(op string, wrong func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y spec.Tensor[spec.Rat], dxs []spec.Tensor[spec.Rat], right spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat]) *spec.Registry[spec.Rat] {
	r := spec.New[spec.Rat]()
	p, _ := r.Lookup(op)
	bad, orig := *p, p.JVP
	bad.JVP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y spec.Tensor[spec.Rat], dxs []spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
		j, err := orig(a, xs, y, dxs)
		if err != nil {
			return j, err
		}
		return wrong(a, xs, y, dxs, j), nil
	}
	r.Override(&bad)
	return r
}

// TestTaylorCatchesPlantedRules: issue 27's planted rule square′(a) = 3a
// is caught (the Lean counter-instance of square_taylor, whose remainder is
// fixed to v²: a = 1, v = 1, t = 1 gives fwd(x + t·v) = 4 against
// fwd x + t·jvp + t²·v² = 1 + 3 + 1 = 5), and so is a wrong rule of every
// other kind.
func TestTaylorCatchesPlantedRules(t *testing.T) {
	scale := func(c int64) func(*spec.Attrs, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
		return func(_ *spec.Attrs, _ []spec.Tensor[spec.Rat], _ spec.Tensor[spec.Rat], _ []spec.Tensor[spec.Rat], j spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
			return spec.ScaleT(spec.NewRat(c, 2), j)
		}
	}
	square3a := func(_ *spec.Attrs, xs []spec.Tensor[spec.Rat], _ spec.Tensor[spec.Rat], dxs []spec.Tensor[spec.Rat], _ spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
		out, _ := spec.MulT(xs[0], dxs[0])
		return spec.ScaleT(spec.NewRat(3, 1), out)
	}
	// A float cast's planted JVP: 2⁻⁶⁰·v in place of 0, the smallest
	// non-zero rule tried — local constancy is exact, so any non-zero
	// entry is caught.
	tinyV := func(_ *spec.Attrs, _ []spec.Tensor[spec.Rat], _ spec.Tensor[spec.Rat], dxs []spec.Tensor[spec.Rat], j spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
		out, _ := spec.AddT(j, spec.ScaleT(pow2(60), dxs[0]))
		return out
	}
	for _, tc := range []struct {
		name, op string
		wrong    func(*spec.Attrs, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat]
	}{
		{"square′ = 3a", "square", square3a},
		{"mul ×3/2", "mul", scale(3)},
		{"matmul ×3/2", "matmul", scale(3)},
		{"div ×3/2", "div", scale(3)},
		{"inv ×3/2", "inv", scale(3)},
		{"relu ×3/2", "relu", scale(3)},
		{"max ×3/2", "max", scale(3)},
		{"permute ×3/2", "permute", scale(3)},
		{"conv ×3/2", "conv", scale(3)},
		{"layer_norm ×3/2", "layer_norm", scale(3)},
		{"round_f16 jvp = 2⁻⁶⁰·v", "round_f16", tinyV},
		{"round_bf16 jvp = 2⁻⁶⁰·v", "round_bf16", tinyV},
		{"round_f32 jvp = 2⁻⁶⁰·v", "round_f32", tinyV},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := spec.Info(tc.op); err != nil {
				t.Skip(err)
			}
			_, err := runTaylor(plantJVP(tc.op, tc.wrong), dualReg, tc.op, 7)
			if err == nil {
				t.Fatalf("the planted rule %s passed %d cases", tc.name, taylorCases)
			}
			t.Log(err)
		})
	}
}

// TestTaylorMethodsCatchAlone: each line check catches a planted rule by
// itself, without the dual-number check in front of it: the polynomial
// identity (square′ = 3a, conv ×3/2), the limit of t·R(t) (inv, div ×3/2)
// and local linearity (relu, max ×3/2).
func TestTaylorMethodsCatchAlone(t *testing.T) {
	type method func(*spec.Prim[spec.Rat], *casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) error
	wrong := func(j spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] { return spec.ScaleT(spec.NewRat(3, 2), j) }
	for _, tc := range []struct {
		op, name string
		m        method
	}{
		{"square", "polynomial", polyCheck},
		{"conv", "polynomial", polyCheck},
		{"inv", "limit", limitCheck},
		{"div", "limit", limitCheck},
		{"relu", "local linearity", kinkCheck},
		{"max", "local linearity", kinkCheck},
	} {
		t.Run(tc.op+"/"+tc.name, func(t *testing.T) {
			p, err := ratReg.Lookup(tc.op)
			if err != nil {
				t.Skip(err)
			}
			caught, honest := false, 0
			for c := 0; c < taylorCases && !caught; c++ {
				src := casegen.NewRandSource(uint64(500 + c))
				inst, err := casegen.Generate(src, tc.op)
				if err != nil {
					t.Fatal(err)
				}
				out, _ := casegen.OutShape(inst)
				dxs, _ := casegen.Tangents(src, inst, out)
				y, err := p.Forward(inst.Attrs, inst.Xs)
				if err != nil {
					continue
				}
				j, err := p.JVP(inst.Attrs, inst.Xs, y, dxs)
				if err != nil {
					continue
				}
				// The reference rule passes the method …
				switch err := tc.m(p, inst, dxs, y, j); err {
				case nil:
					honest++
				case errSkip:
					continue
				default:
					t.Fatalf("the reference rule fails %s: %v", tc.name, err)
				}
				// … and the planted one does not, unless its tangent is 0.
				if tc.m(p, inst, dxs, y, wrong(j)) != nil {
					caught = true
				}
			}
			if !caught || honest == 0 {
				t.Fatalf("%s alone: caught %v, reference cases passed %d", tc.name, caught, honest)
			}
		})
	}
}

// roundLocalCheck: local constancy of a float cast at x along v with
// Round.lean's δ (see the file comment); errSkip when an entry of x is a
// jump point (roundGap = 0: a tie or Ω), where the convention (JVP = 0,
// `round_jvp_nth`) is all the statement says.
func roundLocalCheck(p *spec.Prim[spec.Rat], inst *casegen.Instance, dxs []spec.Tensor[spec.Rat], y, j spec.Tensor[spec.Rat]) error {
	return roundLocalCheckGap(p, inst, dxs, y, j, lRoundGap)
}

// roundLocalCheckGap is roundLocalCheck with the gap function replaceable,
// so that a planted wrong radius can be shown caught.
func roundLocalCheckGap(p *spec.Prim[spec.Rat], inst *casegen.Instance, dxs []spec.Tensor[spec.Rat], y, j spec.Tensor[spec.Rat], gapOf func(fmtL, *big.Rat) *big.Rat) error {
	if len(inst.Xs) != 1 || len(dxs) != 1 || len(inst.Xs[0].Data) != len(dxs[0].Data) {
		return fmt.Errorf("a float cast has one input and one tangent of its length")
	}
	f := leanFmtOf(inst.Op)
	x, v := make([]*big.Rat, len(inst.Xs[0].Data)), make([]*big.Rat, len(dxs[0].Data))
	for i := range x {
		x[i], v[i] = inst.Xs[0].Data[i].Big(), dxs[0].Data[i].Big()
		if gapOf(f, x[i]).Sign() <= 0 {
			return errSkip
		}
	}
	delta := big.NewRat(1, 1) // roundDelta with gapOf for roundGap
	for i := range x {
		g := new(big.Rat).Quo(gapOf(f, x[i]), new(big.Rat).Add(lAbs(v[i]), big.NewRat(1, 1)))
		if g.Cmp(delta) <= 0 {
			delta = g
		}
	}
	if delta.Sign() <= 0 {
		return fmt.Errorf("roundDelta = %v ≤ 0 although every entry is strictly inside its interval", delta)
	}
	one := big.NewRat(1, 1)
	for _, c := range []*big.Rat{
		new(big.Rat).Sub(one, pow2(20).Big()), new(big.Rat).Neg(new(big.Rat).Sub(one, pow2(20).Big())),
		big.NewRat(1, 2), big.NewRat(-1, 2), pow2(30).Big(), new(big.Rat).Neg(pow2(30).Big()),
	} {
		t := spec.RatFromBig(new(big.Rat).Mul(c, delta))
		g, err := lineEval(p, inst.Attrs, inst.Xs, dxs, t)
		if err != nil {
			return fmt.Errorf("t = %v (|t| < δ = %v): the forward at x + t·v fails (%v) where it holds at x", t, delta, err)
		}
		for k := range y.Data {
			if want := y.Data[k].Add(t.Mul(j.Data[k])); !g.Data[k].Same(want) {
				return fmt.Errorf("element %d, t = %v (|t| < δ = %v): fwd(x + t·v) = %v, fwd x + t·jvp x v = %v (local constancy with the JVP fails)", k, t, delta, g.Data[k], want)
			}
		}
	}
	// The radius is sharp: just past gapᵢ/|vᵢ|, on one side, entry i
	// leaves its interval (x + t·v's entry crosses a jump point).
	rf := registryFormat[inst.Op]
	for i := range x {
		if v[i].Sign() == 0 {
			continue
		}
		r0, _ := rf.RoundRat(x[i])
		tt := new(big.Rat).Quo(gapOf(f, x[i]), lAbs(v[i]))
		tt.Mul(tt, new(big.Rat).Add(one, pow2(10).Big()))
		moved := false
		for _, s := range []*big.Rat{tt, new(big.Rat).Neg(tt)} {
			r, ok := rf.RoundRat(new(big.Rat).Add(x[i], new(big.Rat).Mul(s, v[i])))
			if !ok || r.Cmp(r0) != 0 {
				moved = true
			}
		}
		if !moved {
			return fmt.Errorf("element %d: round(x + t·v) is unchanged at t = ±%v, past roundGap/|v| on both sides: the gap %v is not the distance to a jump point", i, tt, gapOf(f, x[i]))
		}
	}
	return nil
}

// TestRoundLocallyConstant: Round.lean's local-constancy statement on
// random tensors of every binade (subnormal, normal, up to just below Ω)
// and random tangents, exactly over Rat against the registry's RoundRat:
// the forward is constant on |t| < roundDelta, the radius is sharp, the
// transcribed roundDelta is the minimum over the entries, and a planted
// radius twice the gap (constancy fails) or half of it (not sharp) is
// caught, as is a planted JVP of 2⁻⁶⁰·v.
func TestRoundLocallyConstant(t *testing.T) {
	double := func(f fmtL, a *big.Rat) *big.Rat { return new(big.Rat).Mul(lRoundGap(f, a), big.NewRat(2, 1)) }
	half := func(f fmtL, a *big.Rat) *big.Rat { return new(big.Rat).Mul(lRoundGap(f, a), big.NewRat(1, 2)) }
	for _, op := range []string{"round_f16", "round_bf16", "round_f32"} {
		t.Run(op, func(t *testing.T) {
			p, err := ratReg.Lookup(op)
			if err != nil {
				t.Fatal(err)
			}
			rf, lf := registryFormat[op], leanFmtOf(op)
			probes := roundProbes(rf, rand.New(rand.NewSource(int64(7*len(op)))))
			rng := rand.New(rand.NewSource(int64(len(op))))
			checked, boundary, caughtDouble, caughtHalf, caughtJVP := 0, 0, 0, 0, 0
			for c := 0; c < 150; c++ {
				x, v := make([]spec.Rat, 4), make([]spec.Rat, 4)
				xb, vb := make([]*big.Rat, 4), make([]*big.Rat, 4)
				for i := range x {
					for { // a probe below Ω (the overflowing ones are the forward's domain error)
						xb[i] = probes[rng.Intn(len(probes))]
						if _, ok := rf.RoundRat(xb[i]); ok {
							break
						}
					}
					vb[i] = big.NewRat(rng.Int63n(41)-20, rng.Int63n(7)+1)
					x[i], v[i] = spec.RatFromBig(xb[i]), spec.RatFromBig(vb[i])
				}
				inst := &casegen.Instance{Op: op, Attrs: &spec.Attrs{}, Xs: []spec.Tensor[spec.Rat]{{Shape: spec.Shape{4}, Data: x}}}
				dxs := []spec.Tensor[spec.Rat]{{Shape: spec.Shape{4}, Data: v}}
				y, err := p.Forward(inst.Attrs, inst.Xs)
				if err != nil {
					t.Fatalf("%v: %v", xb, err)
				}
				j, err := p.JVP(inst.Attrs, inst.Xs, y, dxs)
				if err != nil {
					t.Fatal(err)
				}
				switch err := roundLocalCheck(p, inst, dxs, y, j); err {
				case nil:
					checked++
				case errSkip:
					boundary++
					continue
				default:
					t.Fatalf("x = %v, v = %v: %v", xb, vb, err)
				}
				if roundLocalCheckGap(p, inst, dxs, y, j, double) != nil {
					caughtDouble++
				}
				if roundLocalCheckGap(p, inst, dxs, y, j, half) != nil {
					caughtHalf++
				}
				bad, _ := spec.AddT(j, spec.ScaleT(pow2(60), dxs[0]))
				if roundLocalCheck(p, inst, dxs, y, bad) != nil {
					caughtJVP++
				}
				// roundDelta's transcription is the minimum the check used.
				if d := lRoundDelta(lf, xb, vb); d.Sign() <= 0 {
					t.Fatalf("roundDelta %v ≤ 0 at a non-boundary x", d)
				}
			}
			t.Logf("%s: %d tensors checked, %d at a jump point; planted radius ×2 caught %d, ×½ caught %d, JVP 2⁻⁶⁰·v caught %d", op, checked, boundary, caughtDouble, caughtHalf, caughtJVP)
			if checked < 100 || caughtHalf != checked || caughtJVP != checked || caughtDouble == 0 {
				t.Errorf("checked %d, caught ×2 %d, ×½ %d, JVP %d", checked, caughtDouble, caughtHalf, caughtJVP)
			}
		})
	}
}

// roundNatViolations checks, on a transcription of rneNat and bitLen, the
// statements of lean/Tlcheck/RoundNat.lean exhaustively on small ranges
// (n ≤ 240, 1 ≤ d ≤ 48; bitLen on 1…4096 and 2^k − 1, 2^k, 2^k + 1 for
// k ≤ 100; the flog2 bracket on 1 ≤ N, D ≤ 96) and returns the names of
// the lemmas that fail, each once, in a fixed order:
//
//   - rneNat_near: 2·(d·m) ≤ 2n + d and 2n ≤ 2·(d·m) + d (|n/d − m| ≤ 1/2);
//   - rneNat_near_strict: the same strictly when 2·(n mod d) ≠ d;
//   - rneNat_eq_of_near: every m strictly within 1/2 of n/d is rneNat n d;
//   - rneNat_tie_even: at 2·(n mod d) = d the result is even;
//   - bitLen_spec: 2^(bitLen n − 1) ≤ n < 2^(bitLen n) for n > 0;
//   - flog2_bracket_nat: 2^(bN−1)·D < N·2^bD and N·2^(bD−1) < 2^bN·D.
func roundNatViolations(rne rneNatFn, bitLen func(*big.Int) int64) []string {
	bad := map[string]bool{}
	b := func(x int64) *big.Int { return big.NewInt(x) }
	for d := int64(1); d <= 48; d++ {
		for n := int64(0); n <= 240; n++ {
			m := rne(b(n), b(d)).Int64()
			lo, hi := 2*d*m, 2*n // |n/d − m| ≤ 1/2 ⇔ |2dm − 2n| ≤ d
			if lo > hi+d || hi > lo+d {
				bad["rneNat_near"] = true
			}
			tie := 2*(n%d) == d
			if !tie && (lo >= hi+d || hi >= lo+d) {
				bad["rneNat_near_strict"] = true
			}
			if tie && m%2 != 0 {
				bad["rneNat_tie_even"] = true
			}
			for m2 := int64(0); m2 <= n/d+2; m2++ {
				if l2 := 2 * d * m2; l2 < hi+d && hi < l2+d && m2 != m {
					bad["rneNat_eq_of_near"] = true
				}
			}
		}
	}
	pw := func(k int64) *big.Int { return new(big.Int).Lsh(big.NewInt(1), uint(max(k, 0))) }
	spec := func(n *big.Int) bool {
		k := bitLen(n)
		return k >= 1 && pw(k-1).Cmp(n) <= 0 && n.Cmp(pw(k)) < 0
	}
	for n := int64(1); n <= 4096; n++ {
		if !spec(b(n)) {
			bad["bitLen_spec"] = true
		}
	}
	for k := int64(1); k <= 100; k++ {
		for _, n := range []*big.Int{new(big.Int).Sub(pw(k), b(1)), pw(k), new(big.Int).Add(pw(k), b(1))} {
			if !spec(n) {
				bad["bitLen_spec"] = true
			}
		}
	}
	for N := int64(1); N <= 96; N++ {
		for D := int64(1); D <= 96; D++ {
			bN, bD := bitLen(b(N)), bitLen(b(D))
			l1, r1 := new(big.Int).Mul(pw(bN-1), b(D)), new(big.Int).Mul(b(N), pw(bD))
			l2, r2 := new(big.Int).Mul(b(N), pw(bD-1)), new(big.Int).Mul(pw(bN), b(D))
			if l1.Cmp(r1) >= 0 || l2.Cmp(r2) >= 0 {
				bad["flog2_bracket_nat"] = true
			}
		}
	}
	var out []string
	for _, name := range []string{"rneNat_near", "rneNat_near_strict", "rneNat_eq_of_near", "rneNat_tie_even", "bitLen_spec", "flog2_bracket_nat"} {
		if bad[name] {
			out = append(out, name)
		}
	}
	return out
}

var (
	rneNatInstRE = regexp.MustCompile(`rneNat ([0-9]+) ([0-9]+) = ([0-9]+)`)
	bitLenInstRE = regexp.MustCompile(`bitLen ([0-9]+) = ([0-9]+)`)
)

// TestRoundNatLemmas is the Go mirror of lean/Tlcheck/RoundNat.lean (the
// integer core of RoundScalarLocal): the transcriptions lRneNat and
// lBitLen that TestLeanRoundMatchesRegistry ties to the registry satisfy
// every lemma's statement on the ranges of roundNatViolations; the kernel
// instances of roundNat_instance are re-derived; and planted rules break
// the lemma each is meant to break — a single wrong value at one tie
// (7/2 → 3, odd), a single wrong value off the ties (37/10 → 3), ties
// rounded up, truncation, and a bit length one too large.
func TestRoundNatLemmas(t *testing.T) {
	if v := roundNatViolations(lRneNat, lBitLen); len(v) != 0 {
		t.Fatalf("the transcriptions violate %v", v)
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "RoundNat.lean"))
	if err != nil {
		t.Fatal(err)
	}
	num := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	inst := string(src)
	if i := strings.Index(inst, "theorem roundNat_instance"); i >= 0 {
		inst = inst[i:]
		if j := strings.Index(inst, ":= by"); j >= 0 {
			inst = inst[:j]
		}
	}
	rm, bm := rneNatInstRE.FindAllStringSubmatch(inst, -1), bitLenInstRE.FindAllStringSubmatch(inst, -1)
	if len(rm) != 4 || len(bm) != 5 {
		t.Fatalf("RoundNat.lean: %d rneNat and %d bitLen instances, want 4 and 5", len(rm), len(bm))
	}
	for _, m := range rm {
		if got := lRneNat(big.NewInt(num(m[1])), big.NewInt(num(m[2]))).Int64(); got != num(m[3]) {
			t.Errorf("%s: rneNat gives %d", m[0], got)
		}
	}
	for _, m := range bm {
		if got := lBitLen(big.NewInt(num(m[1]))); got != num(m[2]) {
			t.Errorf("%s: bitLen gives %d", m[0], got)
		}
	}
	// The first missing Lean lemma, the Rat bridge of flog2 (stated in
	// RoundNat.lean's header, not proved there): 2^flog2(a) ≤ a <
	// 2^(flog2(a)+1) for a > 0, on every N/D with 1 ≤ N, D ≤ 96 and on
	// 2^k·(1 ± 2⁻⁶⁰) for |k| ≤ 150. A flog2 without its "− 1 when a < 2^e"
	// correction fails it.
	flog2Spec := func(fl func(*big.Rat) int64) int {
		fails := 0
		chk := func(a *big.Rat) {
			e := fl(a)
			if a.Cmp(lPow2(e)) < 0 || a.Cmp(lPow2(e+1)) >= 0 {
				fails++
			}
		}
		for n := int64(1); n <= 96; n++ {
			for d := int64(1); d <= 96; d++ {
				chk(big.NewRat(n, d))
			}
		}
		eps := lPow2(-60)
		for k := int64(-150); k <= 150; k++ {
			for _, f := range []*big.Rat{new(big.Rat).Add(big.NewRat(1, 1), eps), new(big.Rat).Sub(big.NewRat(1, 1), eps), big.NewRat(1, 1)} {
				chk(new(big.Rat).Mul(lPow2(k), f))
			}
		}
		return fails
	}
	if n := flog2Spec(lFlog2); n != 0 {
		t.Errorf("flog2's Rat bracket fails on %d values", n)
	}
	noCorr := func(a *big.Rat) int64 { return lBitLen(lToNat(a.Num())) - lBitLen(a.Denom()) }
	if n := flog2Spec(noCorr); n == 0 {
		t.Errorf("a flog2 without its correction passes the Rat bracket")
	} else {
		t.Logf("planted flog2 without the − 1 correction: fails the Rat bracket on %d values", n)
	}
	at := func(n0, d0, v int64) rneNatFn {
		return func(n, d *big.Int) *big.Int {
			if n.Int64() == n0 && d.Int64() == d0 {
				return big.NewInt(v)
			}
			return lRneNat(n, d)
		}
	}
	halfUp := func(n, d *big.Int) *big.Int {
		q, r := new(big.Int).QuoRem(n, d, new(big.Int))
		if new(big.Int).Lsh(r, 1).Cmp(d) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		return q
	}
	trunc := func(n, d *big.Int) *big.Int { return new(big.Int).Quo(n, d) }
	plus1 := func(n *big.Int) int64 { return lBitLen(n) + 1 }
	for _, c := range []struct {
		name   string
		rne    rneNatFn
		bitLen func(*big.Int) int64
		want   string
	}{
		{"one tie 7/2 → 3", at(7, 2, 3), lBitLen, "rneNat_tie_even"},
		{"one value 37/10 → 3", at(37, 10, 3), lBitLen, "rneNat_near"},
		{"ties rounded up", halfUp, lBitLen, "rneNat_tie_even"},
		{"truncation", trunc, lBitLen, "rneNat_near"},
		{"bitLen + 1", lRneNat, plus1, "bitLen_spec"},
	} {
		v := roundNatViolations(c.rne, c.bitLen)
		found := false
		for _, name := range v {
			found = found || name == c.want
		}
		t.Logf("planted %s: violates %v", c.name, v)
		if !found {
			t.Errorf("planted %s: %s not violated (violations %v)", c.name, c.want, v)
		}
	}
}

// roundMagLocalCheck checks, on the transcription, the statements of
// RoundLocal.lean's magnitude facts — `RoundMagLocal f`'s `inner`
// (`roundMag_inner_of`), `roundOmega_nonneg`, `roundMag_over` (all proved
// in lean34, for FmtWF formats) and `roundMag_under` — at the positive probes
// and at points built to sit next to each boundary: Ω ≥ 0; roundMag w ≥
// 2^(emax+1) for w > overAt (Lean: overAt = Ω); roundMag w = 0 for
// 0 < w < underAt (Lean: underAt = 2^(emin−p)); and for every probe u with
// m = roundMag u finite and non-zero, every w strictly between roundLoM m
// and hiM m (Lean: `roundHiM`) at seven interior fractions is positive
// with roundMag w = m. The bounds and hiM are parameters so that planted
// wrong ones can be shown caught.
func roundMagLocalCheck(f fmtL, probes []*big.Rat, overAt, underAt *big.Rat, hiM func(fmtL, *big.Rat) *big.Rat) error {
	if lOmega(f).Sign() < 0 {
		return fmt.Errorf("omega_nonneg: Ω = %v < 0", lOmega(f))
	}
	top := lPow2(f.emax + 1)
	mag := func(w *big.Rat) *big.Rat { return lRoundMag(f, w, lRneNat) }
	var over, under []*big.Rat
	for j := int64(1); j <= 70; j++ {
		over = append(over, new(big.Rat).Add(overAt, lPow2(f.emax-f.prec-j)))
		under = append(under, new(big.Rat).Sub(underAt, lPow2(f.emin-f.prec-j)))
	}
	for _, u := range probes {
		if u.Sign() <= 0 {
			continue
		}
		if u.Cmp(overAt) > 0 {
			over = append(over, u)
		}
		if u.Cmp(underAt) < 0 {
			under = append(under, u)
		}
	}
	for _, w := range over {
		if m := mag(w); m.Cmp(top) < 0 {
			return fmt.Errorf("over: w = %v > %v but roundMag w = %v < 2^(emax+1)", w, overAt, m)
		}
	}
	for _, w := range under {
		if w.Sign() > 0 {
			if m := mag(w); m.Sign() != 0 {
				return fmt.Errorf("under: 0 < w = %v < %v but roundMag w = %v ≠ 0", w, underAt, m)
			}
		}
	}
	fracs := []*big.Rat{lPow2(-60), lPow2(-3), big.NewRat(1, 3), big.NewRat(1, 2), big.NewRat(2, 3), new(big.Rat).Sub(big.NewRat(1, 1), lPow2(-3)), new(big.Rat).Sub(big.NewRat(1, 1), lPow2(-60))}
	for _, u := range probes {
		if u.Sign() <= 0 {
			continue
		}
		m := mag(u)
		if m.Sign() == 0 || m.Cmp(top) >= 0 {
			continue
		}
		lo, hi := lRoundLoM(f, m), hiM(f, m)
		width := new(big.Rat).Sub(hi, lo)
		for _, c := range fracs {
			w := new(big.Rat).Add(lo, new(big.Rat).Mul(c, width))
			if w.Sign() <= 0 {
				return fmt.Errorf("inner: u = %v, m = %v: w = %v between roundLoM m and roundHiM m is not positive", u, m, w)
			}
			if got := mag(w); got.Cmp(m) != 0 {
				return fmt.Errorf("inner: u = %v, m = %v: w = %v in (%v, %v) has roundMag %v", u, m, w, lo, hi, got)
			}
		}
	}
	return nil
}

// TestRoundMagLocal is the Go mirror of RoundLocal.lean's magnitude facts,
// all proved in lean34 but never compiled: `RoundMagLocal` (`inner`,
// `roundMagLocal`), `roundOmega_nonneg`, `roundMag_over` (for `FmtWF`
// formats: p ≥ 1, emin ≤ emax, checked here too) and `roundMag_under`.
// Until a `lake build` confirms them, a false statement would be a wrong
// theorem waiting to fail, so each statement
// is checked true on every format's positive probes (TestLeanRound's
// roundProbes, a fixed seed) and at 70 points approaching each bound; and
// each check is sensitive — Ω minus 2^(emax−p−3) in place of Ω (just
// below Ω the magnitude is the largest finite value), half the least
// subnormal plus 2^(emin−p−9) in place of it (just above, the least
// subnormal), and the jump point above m one whole quantum above m in
// place of half of one, are each caught.
func TestRoundMagLocal(t *testing.T) {
	// The statements mirrored here, pinned to the Lean text.
	b, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "RoundLocal.lean"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"structure RoundMagLocal (f : Fmt) : Prop where",
		"theorem roundMagLocal (f : Fmt) (hf : FmtWF f) : RoundMagLocal f := ⟨roundMag_inner_of f hf⟩",
		"  inner : ∀ u w : Rat, 0 < u → ¬ roundMag f u = 0 → ¬ pow2 (f.emax + 1) ≤ roundMag f u →",
		"    roundLoM f (roundMag f u) < w → w < roundHiM f (roundMag f u) →",
		"      0 < w ∧ roundMag f w = roundMag f u",
		"theorem roundOmega_nonneg (f : Fmt) : 0 ≤ roundOmega f :=",
		"theorem roundMag_over (f : Fmt) (hf : FmtWF f) (w : Rat) (hw : roundOmega f < w) :",
		"    pow2 (f.emax + 1) ≤ roundMag f w := by",
		"  prec_pos : 1 ≤ f.prec",
		"  emin_le_emax : f.emin ≤ f.emax",
		"theorem roundMag_under (f : Fmt) (w : Rat) (hw0 : 0 < w)",
		"    (hw : w < pow2 (f.emin - (f.prec : Int))) : roundMag f w = 0 := by",
	} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("RoundLocal.lean no longer has the line TestRoundMagLocal mirrors:\n%s", line)
		}
	}
	for _, op := range []string{"round_f16", "round_bf16", "round_f32"} {
		t.Run(op, func(t *testing.T) {
			f := leanFmtOf(op)
			if f.prec == 0 {
				t.Fatal("Spec.lean's formats could not be read")
			}
			if f.prec < 1 || f.emin > f.emax { // FmtWF, discharged in Lean by fmtWF_<T>
				t.Fatalf("%s: format (p %d, emin %d, emax %d) is not FmtWF", op, f.prec, f.emin, f.emax)
			}
			rng := rand.New(rand.NewSource(27))
			all := roundProbes(registryFormat[op], rng)
			var probes []*big.Rat
			for i, u := range all { // every structured probe, a third of the random ones
				if i < 400 || i%3 == 0 {
					probes = append(probes, u)
				}
			}
			omega, underAt := lOmega(f), lPow2(f.emin-f.prec)
			if err := roundMagLocalCheck(f, probes, omega, underAt, lRoundHiM); err != nil {
				t.Fatal(err)
			}
			wholeQuantum := func(f fmtL, m *big.Rat) *big.Rat {
				if m.Sign() == 0 {
					return lRoundHiM(f, m)
				}
				return new(big.Rat).Add(m, lPow2(lRoundK(f, m)))
			}
			for name, err := range map[string]error{
				"over below Ω":            roundMagLocalCheck(f, probes, new(big.Rat).Sub(omega, lPow2(f.emax-f.prec-3)), underAt, lRoundHiM),
				"under past half the ulp": roundMagLocalCheck(f, probes, omega, new(big.Rat).Add(underAt, lPow2(f.emin-f.prec-9)), lRoundHiM),
				"inner, a whole quantum":  roundMagLocalCheck(f, probes, omega, underAt, wholeQuantum),
			} {
				if err == nil {
					t.Errorf("planted %s: not caught", name)
				}
			}
		})
	}
}
