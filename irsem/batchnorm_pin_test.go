package irsem

import (
	"fmt"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// oldBatchNorm is batch_norm_eval's forward rule as irsem computed it
// before the primitive moved into the registry (irsem/kernels.go at
// 989556a), kept verbatim as the pin: std_c = sqrt(max(var_c, 0) + ε)
// once per channel, then ((x − μ_c)/std_c)·γ_c + β_c, with γ = 1, β = 0
// when the payload gives none and every constant converted with FromRat.
func oldBatchNorm[T spec.Scalar[T]](x spec.Tensor[T], axis int, mean, vr, gamma, beta []T, eps T) (spec.Tensor[T], error) {
	var z T
	std := make([]T, len(vr))
	for c, v := range vr {
		s, err := v.Max(z).Add(eps).Sqrt()
		if err != nil {
			return spec.Tensor[T]{}, err
		}
		std[c] = s
	}
	out := zerosOf[T](x.Shape)
	c := x.Shape[axis]
	inner := prod(x.Shape[axis+1:])
	one := z.FromInt(1)
	for i, v := range x.Data {
		ch := (i / inner) % c
		q, err := v.Sub(mean[ch]).Div(std[ch])
		if err != nil {
			return spec.Tensor[T]{}, err
		}
		g, b := one, z
		if gamma != nil {
			g = gamma[ch]
		}
		if beta != nil {
			b = beta[ch]
		}
		out.Data[i] = q.Mul(g).Add(b)
	}
	return out, nil
}

// pinBatchNorm compares DenoteAll's batch_norm_eval with oldBatchNorm
// element by element, by String (bit-exact for the float scalars: the
// shortest round-tripping decimal; exact for Rat; both endpoints for
// Interval).
func pinBatchNorm[T spec.Scalar[T]](t *testing.T, name string, g *Graph, p *Payload, x RatTensor) {
	t.Helper()
	got, err := Denote(g, p, ConvertTensor[T](x))
	if err != nil {
		t.Fatalf("%s over %s: %v", name, spec.KindOf[T](), err)
	}
	n, e := &g.Nodes[1], p.Entry(1)
	eps := FromRat[T](DefaultEps())
	if e.Eps != nil {
		eps = FromRat[T](*e.Eps)
	}
	want, err := oldBatchNorm(ConvertTensor[T](x), n.Kind.ChannelAxis, convertData[T](e.Mean), convertData[T](e.Var),
		convertData[T](e.Gamma), convertData[T](e.Beta), eps)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Data {
		if got.Data[i].String() != want.Data[i].String() {
			t.Errorf("%s over %s: element %d = %s, before the move %s", name, spec.KindOf[T](), i, got.Data[i], want.Data[i])
		}
	}
}

// TestBatchNormEvalPinned: moving batch_norm_eval into the registry left
// its values unchanged over every scalar, with and without γ, β and ε.
func TestBatchNormEvalPinned(t *testing.T) {
	s := func(d ...int) spec.Shape { return spec.Shape(d) }
	x := rt(t, s(2, 3, 2), "1", "-2", "1/3", "7/5", "0", "-1/7", "5", "2/9", "-3", "1/10", "11/3", "-4")
	bn := graphOf(input(2, 3, 2), nd(OpBatchNormEval, []int{0}, s(2, 3, 2), func(k *Kind) { k.ChannelAxis, k.Channels = 1, 3 }))
	payloads := map[string]*Payload{
		"full": payloadOf(map[int]*Params{1: {Mean: rtp(t, s(3), "1/3", "-2", "0"), Var: rtp(t, s(3), "2", "1/10", "-1"),
			Gamma: rtp(t, s(3), "3/2", "-1", "1/7"), Beta: rtp(t, s(3), "0", "1/3", "-5"), Eps: ptr(rat(t, "1/1000"))}}),
		"defaults": payloadOf(map[int]*Params{1: {Mean: rtp(t, s(3), "1/3", "-2", "0"), Var: rtp(t, s(3), "2", "1/10", "3")}}),
		"beta-only": payloadOf(map[int]*Params{1: {Mean: rtp(t, s(3), "0", "0", "1"), Var: rtp(t, s(3), "7", "1/3", "1"),
			Beta: rtp(t, s(3), "1", "2", "3")}}),
	}
	for name, p := range payloads {
		pinBatchNorm[spec.F32](t, name, bn, p, x)
		pinBatchNorm[spec.F64](t, name, bn, p, x)
		pinBatchNorm[spec.Binary32](t, name, bn, p, x)
		pinBatchNorm[spec.Interval](t, name, bn, p, x)
	}
	// Exact: variances whose max(σ², 0) + ε is a square.
	exact := payloadOf(map[int]*Params{1: {Mean: rtp(t, s(3), "1/3", "-2", "0"), Var: rtp(t, s(3), "4", "1/4", "-1"),
		Gamma: rtp(t, s(3), "3/2", "-1", "1/7"), Eps: ptr(rat(t, "0"))}})
	exact.Entries[1].Var.Data[2] = spec.NewRat(9, 1)
	pinBatchNorm[spec.Rat](t, "exact", bn, exact, x)
	// and a hand-derived value: channel 0, element 0: (1 − 1/3)/2·3/2 = 1/2.
	got, err := Denote(bn, exact, x)
	if err != nil || fmt.Sprint(got.Data[0]) != "1/2" {
		t.Errorf("exact element 0 = %v (%v), want 1/2", got.Data[0], err)
	}
}
