package irgrad

import (
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// refMLPGrad is the exact gradient of deepMLP's graph written out by hand
// in plain big.Rat arithmetic (the representation spec.Rat had before its
// dyadic fast path, and no FoldDot): forward z_l = W_l h_{l−1} + b_l, h_l
// = relu(z_l) (relu′(0) = 0) except after the last layer; backward from
// the seed 1: g ← g ⊙ [z_l > 0] below the last layer, dW_l = g h_{l−1}ᵀ,
// db_l = g, g ← W_lᵀ g. It returns the output, dx and, per linear node
// id, dW and db.
func refMLPGrad(g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) (out *big.Rat, dx []*big.Rat, dW, db map[int][]*big.Rat) {
	bigs := func(t *irsem.RatTensor) []*big.Rat {
		v := make([]*big.Rat, len(t.Data))
		for i, r := range t.Data {
			v[i] = r.Big()
		}
		return v
	}
	var ids []int
	for _, n := range g.Nodes {
		if n.Kind.Op == irsem.OpLinear {
			ids = append(ids, n.ID)
		}
	}
	h := [][]*big.Rat{bigs(&x)} // h[l] is layer l's input
	zs := [][]*big.Rat{}
	for li, id := range ids {
		e := p.Entry(id)
		w, b := bigs(e.W), bigs(e.B)
		in, outN := len(h[li]), len(b)
		z := make([]*big.Rat, outN)
		for j := range z {
			s := new(big.Rat)
			for k := 0; k < in; k++ {
				s.Add(s, new(big.Rat).Mul(w[j*in+k], h[li][k]))
			}
			z[j] = s.Add(s, b[j])
		}
		zs = append(zs, z)
		a := make([]*big.Rat, outN)
		for j := range z {
			a[j] = new(big.Rat)
			if z[j].Sign() > 0 {
				a[j].Set(z[j])
			}
		}
		h = append(h, a)
	}
	L := len(ids)
	out = zs[L-1][0]
	dW, db = map[int][]*big.Rat{}, map[int][]*big.Rat{}
	gr := []*big.Rat{big.NewRat(1, 1)}
	for li := L - 1; li >= 0; li-- {
		if li < L-1 {
			for j := range gr {
				if zs[li][j].Sign() <= 0 {
					gr[j] = new(big.Rat)
				}
			}
		}
		id := ids[li]
		in := len(h[li])
		w := bigs(p.Entry(id).W)
		dw := make([]*big.Rat, len(gr)*in)
		for j := range gr {
			for k := 0; k < in; k++ {
				dw[j*in+k] = new(big.Rat).Mul(gr[j], h[li][k])
			}
		}
		dW[id], db[id] = dw, gr
		prev := make([]*big.Rat, in)
		for k := range prev {
			s := new(big.Rat)
			for j := range gr {
				s.Add(s, new(big.Rat).Mul(w[j*in+k], gr[j]))
			}
			prev[k] = s
		}
		gr = prev
	}
	return out, gr, dW, db
}

// TestDeepMLPGradMatchesBigRat: the exact gradient of a 16-layer MLP of
// float32 weights (activations of several hundred bits), along every
// path, is the very rational the hand-written big.Rat reference gives,
// for the output, the input and every weight and bias.
func TestDeepMLPGradMatchesBigRat(t *testing.T) {
	width := 32
	if testing.Short() {
		width = 12
	}
	g, p, x := deepMLP(t, 16, width)
	out, dx, dW, db := refMLPGrad(g, p, x)
	l, err := Lower[spec.Rat](nil, g, p)
	if err != nil {
		t.Fatal(err)
	}
	check := func(path Path, what string, got []spec.Rat, want []*big.Rat) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s %s: %d values, want %d", path, what, len(got), len(want))
		}
		for i := range got {
			if got[i].Big().Cmp(want[i]) != 0 {
				t.Fatalf("%s %s[%d] = %s, want %s", path, what, i, got[i], want[i].RatString())
			}
		}
	}
	for _, path := range Paths() {
		gr, err := l.Grad(path, x)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		check(path, "output", gr.Output.Data, []*big.Rat{out})
		check(path, "dx", gr.Input.Data, dx)
		for i, pr := range l.Params {
			switch pr.Field {
			case irsem.ParamW:
				check(path, pr.Name, gr.Params[i].Data, dW[pr.Node])
			case irsem.ParamB:
				check(path, pr.Name, gr.Params[i].Data, db[pr.Node])
			default:
				t.Fatalf("unexpected parameter %s", pr.Name)
			}
		}
	}
	// The activations are wide: the test exercises the big-mantissa path.
	if b := out.Num().BitLen() + out.Denom().BitLen(); b < 300 {
		t.Fatalf("output has only %d bits", b)
	}
}
