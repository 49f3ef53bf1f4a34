package spec

import (
	"math"
	"testing"
)

// TestBCEWithLogitsAgainstCrossEntropy: the registry's bce_with_logits
// over F64 against the textbook form −(y·ln σ(x) + (1−y)·ln(1−σ(x)))
// (evaluated at moderate x, where it is accurate), its partials against
// (σ(x) − y)/N and −x/N, and the large-|x| values against softplus(x) − x·y
// computed as |x|-scaled closed forms.
func TestBCEWithLogitsAgainstCrossEntropy(t *testing.T) {
	p, _ := Default[F64]().Lookup("bce_with_logits")
	xs := []F64{-2, 0, 0.5, 3, -0.25}
	ys := []F64{0, 1, 0.3, 1, 0.5}
	x := Tensor[F64]{Shape: Shape{5}, Data: xs}
	y := Tensor[F64]{Shape: Shape{5}, Data: ys}
	l, err := p.Apply(nil, []Tensor[F64]{x, y})
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	for i := range xs {
		s, v := sig(float64(xs[i])), float64(ys[i])
		want -= v*math.Log(s) + (1-v)*math.Log(1-s)
	}
	want /= 5
	if math.Abs(float64(l.Data[0])-want) > 1e-14 {
		t.Errorf("bce = %v, cross-entropy %v", l.Data[0], want)
	}
	d := Scalar0(F64(2))
	g, err := p.VJP(nil, []Tensor[F64]{x, y}, l, d)
	if err != nil {
		t.Fatal(err)
	}
	dx := Tensor[F64]{Shape: Shape{5}, Data: []F64{1, -1, 2, 0, 1}}
	dy := Tensor[F64]{Shape: Shape{5}, Data: []F64{0, 1, 1, -2, 0}}
	jv, err := p.JVP(nil, []Tensor[F64]{x, y}, l, []Tensor[F64]{dx, dy})
	if err != nil {
		t.Fatal(err)
	}
	jwant := 0.0
	for i := range xs {
		gx, gy := (sig(float64(xs[i]))-float64(ys[i]))/5, -float64(xs[i])/5
		if math.Abs(float64(g[0].Data[i])-2*gx) > 1e-15 || math.Abs(float64(g[1].Data[i])-2*gy) > 1e-15 {
			t.Errorf("VJP at %d = %v, %v; want %v, %v", i, g[0].Data[i], g[1].Data[i], 2*gx, 2*gy)
		}
		jwant += gx*float64(dx.Data[i]) + gy*float64(dy.Data[i])
	}
	if math.Abs(float64(jv.Data[0])-jwant) > 1e-15 {
		t.Errorf("JVP = %v, want %v", jv.Data[0], jwant)
	}
	// Large logits: no overflow, and ℓ(x, y) = x·(1 − y) + e^(−x) for
	// x ≫ 0 (to within e^(−2x)), −x·y + e^(x) for x ≪ 0.
	big := Tensor[F64]{Shape: Shape{2}, Data: []F64{800, -800}}
	tg := Tensor[F64]{Shape: Shape{2}, Data: []F64{0.25, 0.25}}
	l, err = p.Apply(nil, []Tensor[F64]{big, tg})
	if err != nil {
		t.Fatal(err)
	}
	if w := (800*0.75 + 800*0.25) / 2; float64(l.Data[0]) != w {
		t.Errorf("bce at ±800 = %v, want %v", l.Data[0], w)
	}
	// Forward mode through the rule at x = 0 gives σ(0) − y.
	pd, _ := Default[Dual[F64]]().Lookup("bce_with_logits")
	dl, err := pd.Forward(nil, []Tensor[Dual[F64]]{
		{Shape: Shape{1}, Data: []Dual[F64]{MakeDual(F64(0), F64(1))}},
		{Shape: Shape{1}, Data: []Dual[F64]{MakeDual(F64(0.25), F64(0))}}})
	if err != nil {
		t.Fatal(err)
	}
	if dl.Data[0].Du != 0.25 {
		t.Errorf("forward-mode derivative at x = 0, y = 1/4: %v, want 1/4", dl.Data[0].Du)
	}
	// An empty input is refused by name.
	if _, err := p.Apply(nil, []Tensor[F64]{{Shape: Shape{0}}, {Shape: Shape{0}}}); err == nil {
		t.Error("bce of no elements succeeded")
	}
}
