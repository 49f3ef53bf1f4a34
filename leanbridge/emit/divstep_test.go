package emit

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// This file is the Go mirror of div_step's explicit proof in
// lean/Tlcheck/Deriv.lean. The proof multiplies both sides by
// M = b²·(b + t·e) and reduces the right side, term by term (h1–h4), to
// the numerator identity div_poly, which it expands into five monomials
// (E1–E5) and cancels (div_cancel_sum). Each of those statements is checked
// here exactly over Rat on random values (zeros included, the two
// denominators non-zero), transcribed from the Lean statements, and the
// check must reject planted wrong rules: divDb with the wrong sign, the
// remainder's a·e − b·c reversed, div_poly's right side with a − t·c, and
// div_cancel_sum keeping R instead of Q.

// divRule is div_step's right side with its partials and remainder as
// parameters, so that a planted rule can replace any of them.
type divRule struct {
	da, db func(a, b *big.Rat) *big.Rat
	rem    func(t, a, b, c, e *big.Rat) *big.Rat
}

func newQ() *big.Rat { return new(big.Rat) }

func mulR(xs ...*big.Rat) *big.Rat {
	p := rat(1, 1)
	for _, x := range xs {
		p = newQ().Mul(p, x)
	}
	return p
}

func addR(xs ...*big.Rat) *big.Rat {
	s := rat(0, 1)
	for _, x := range xs {
		s = newQ().Add(s, x)
	}
	return s
}

func negR(x *big.Rat) *big.Rat { return newQ().Neg(x) }

func divR(x, y *big.Rat) *big.Rat { return newQ().Quo(x, y) }

// leanDiv transcribes Spec.lean's divDa, divDb and div_step's remainder
// e·(a·e − b·c)/(b·b·(b + t·e)).
var leanDiv = divRule{
	da: func(_, b *big.Rat) *big.Rat { return divR(rat(1, 1), b) },
	db: func(a, b *big.Rat) *big.Rat { return negR(divR(a, mulR(b, b))) },
	rem: func(t, a, b, c, e *big.Rat) *big.Rat {
		u := addR(b, mulR(t, e))
		return divR(mulR(e, addR(mulR(a, e), negR(mulR(b, c)))), mulR(b, b, u))
	},
}

// divStepHolds checks div_step: (a + t·c)/(b + t·e) =
// a/b + t·(da·c + db·e) + t·t·rem.
func divStepHolds(d divRule, t, a, b, c, e *big.Rat) error {
	lhs := divR(addR(a, mulR(t, c)), addR(b, mulR(t, e)))
	rhs := addR(divR(a, b), mulR(t, addR(mulR(d.da(a, b), c), mulR(d.db(a, b), e))),
		mulR(t, t, d.rem(t, a, b, c, e)))
	if lhs.Cmp(rhs) != 0 {
		return fmt.Errorf("div_step at t=%s a=%s b=%s c=%s e=%s: %s ≠ %s", t, a, b, c, e, lhs, rhs)
	}
	return nil
}

// divPoly returns div_poly's two sides: a·(b·u) + t·(c·(b·u) + −(a·e·u))
// + t·t·(e·(a·e − b·c)) and b·b·(a + t·c), u = b + t·e.
func divPoly(t, a, b, c, e *big.Rat) (*big.Rat, *big.Rat) {
	u := addR(b, mulR(t, e))
	lhs := addR(mulR(a, mulR(b, u)), mulR(t, addR(mulR(c, mulR(b, u)), negR(mulR(a, e, u)))),
		mulR(t, t, mulR(e, addR(mulR(a, e), negR(mulR(b, c))))))
	return lhs, mulR(b, b, addR(a, mulR(t, c)))
}

// divCancelSum returns div_cancel_sum's two sides:
// p + R + (Q + S + (−R + −W)) + (W + −S) and p + Q.
func divCancelSum(p, r, qq, s, w *big.Rat) (*big.Rat, *big.Rat) {
	lhs := addR(addR(p, r), addR(addR(qq, s), addR(negR(r), negR(w))), addR(w, negR(s)))
	return lhs, addR(p, qq)
}

// divPieces checks div_step's intermediate statements hL, h1–h4 and E1–E5
// (each side as the Lean states it).
func divPieces(t, a, b, c, e *big.Rat) error {
	u := addR(b, mulR(t, e))
	m := mulR(b, b, u)
	sub := addR(mulR(a, e), negR(mulR(b, c)))
	pairs := []struct {
		name     string
		lhs, rhs *big.Rat
	}{
		{"hL", mulR(divR(addR(a, mulR(t, c)), u), m), mulR(b, b, addR(a, mulR(t, c)))},
		{"h1", mulR(divR(a, b), m), mulR(a, mulR(b, u))},
		{"h2", mulR(divR(rat(1, 1), b), c, m), mulR(c, mulR(b, u))},
		{"h3", mulR(negR(divR(a, mulR(b, b))), e, m), negR(mulR(a, e, u))},
		{"h4", mulR(t, t, divR(mulR(e, sub), m), m), mulR(t, t, mulR(e, sub))},
		{"E1", mulR(a, mulR(b, u)), addR(mulR(a, b, b), mulR(t, a, b, e))},
		{"E2", mulR(c, mulR(b, u)), addR(mulR(c, b, b), mulR(t, c, b, e))},
		{"E3", mulR(a, e, u), addR(mulR(a, b, e), mulR(t, a, e, e))},
		{"E4", mulR(t, t, mulR(e, sub)), addR(mulR(t, t, a, e, e), negR(mulR(t, t, c, b, e)))},
		{"E5", mulR(b, b, addR(a, mulR(t, c))), addR(mulR(a, b, b), mulR(t, c, b, b))},
	}
	for _, p := range pairs {
		if p.lhs.Cmp(p.rhs) != 0 {
			return fmt.Errorf("%s at t=%s a=%s b=%s c=%s e=%s: %s ≠ %s", p.name, t, a, b, c, e, p.lhs, p.rhs)
		}
	}
	return nil
}

func randSmall(r *rand.Rand) *big.Rat {
	if r.IntN(5) == 0 {
		return rat(0, 1)
	}
	return rat(r.Int64N(19)-9, r.Int64N(5)+1)
}

// divPoint draws t, a, b, c, e with b ≠ 0 and b + t·e ≠ 0 (div_step's
// hypotheses).
func divPoint(r *rand.Rand) (t, a, b, c, e *big.Rat) {
	for {
		t, a, b, c, e = randSmall(r), randSmall(r), randSmall(r), randSmall(r), randSmall(r)
		if b.Sign() != 0 && addR(b, mulR(t, e)).Sign() != 0 {
			return
		}
	}
}

func TestDivStepProof(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 1))
	for i := 0; i < 2000; i++ {
		tt, a, b, c, e := divPoint(r)
		if err := divStepHolds(leanDiv, tt, a, b, c, e); err != nil {
			t.Fatal(err)
		}
		if err := divPieces(tt, a, b, c, e); err != nil {
			t.Fatal(err)
		}
		if l, rr := divPoly(tt, a, b, c, e); l.Cmp(rr) != 0 {
			t.Fatalf("div_poly at t=%s a=%s b=%s c=%s e=%s: %s ≠ %s", tt, a, b, c, e, l, rr)
		}
		p, rv, qv, sv, wv := randSmall(r), randSmall(r), randSmall(r), randSmall(r), randSmall(r)
		if l, rr := divCancelSum(p, rv, qv, sv, wv); l.Cmp(rr) != 0 {
			t.Fatalf("div_cancel_sum at %s %s %s %s %s: %s ≠ %s", p, rv, qv, sv, wv, l, rr)
		}
	}
	// A hand instance: t = 1, a = 1, b = 1, c = 1, e = 1: 2/2 = 1 and
	// 1 + 1·(1 − 1) + 1·(1·(1 − 1)/2) = 1.
	if err := divStepHolds(leanDiv, rat(1, 1), rat(1, 1), rat(1, 1), rat(1, 1), rat(1, 1)); err != nil {
		t.Fatal(err)
	}
}

func TestDivStepCatchesPlantedRules(t *testing.T) {
	wrongSign := leanDiv
	wrongSign.db = func(a, b *big.Rat) *big.Rat { return divR(a, mulR(b, b)) }
	swapped := leanDiv
	swapped.rem = func(tt, a, b, c, e *big.Rat) *big.Rat {
		u := addR(b, mulR(tt, e))
		return divR(mulR(e, addR(mulR(b, c), negR(mulR(a, e)))), mulR(b, b, u))
	}
	for _, tc := range []struct {
		name string
		d    divRule
	}{{"divDb = +a/b²", wrongSign}, {"remainder b·c − a·e", swapped}} {
		r := rand.New(rand.NewPCG(27, 2))
		caught := false
		for i := 0; i < 200 && !caught; i++ {
			tt, a, b, c, e := divPoint(r)
			caught = divStepHolds(tc.d, tt, a, b, c, e) != nil
		}
		if !caught {
			t.Errorf("planted %s not caught", tc.name)
		}
	}
	// Hand counter-instances (t = 1, a = b = c = e = 1): div_poly with
	// a − t·c on the right reads 2 = 0; div_cancel_sum keeping R reads
	// with p = 0, R = 1, Q = 2, S = W = 0: 2 = 1.
	l, _ := divPoly(rat(1, 1), rat(1, 1), rat(1, 1), rat(1, 1), rat(1, 1))
	if wrong := mulR(rat(1, 1), rat(1, 1), addR(rat(1, 1), negR(rat(1, 1)))); l.Cmp(wrong) == 0 {
		t.Error("planted div_poly right side a − t·c not caught")
	}
	if l.Cmp(rat(2, 1)) != 0 {
		t.Errorf("div_poly's left side at t = a = b = c = e = 1 is %s, by hand 2", l)
	}
	l, _ = divCancelSum(rat(0, 1), rat(1, 1), rat(2, 1), rat(0, 1), rat(0, 1))
	if wrong := addR(rat(0, 1), rat(1, 1)); l.Cmp(wrong) == 0 {
		t.Error("planted div_cancel_sum keeping R not caught")
	}
	if l.Cmp(rat(2, 1)) != 0 {
		t.Errorf("div_cancel_sum's left side at (0, 1, 2, 0, 0) is %s, by hand 2", l)
	}
}
