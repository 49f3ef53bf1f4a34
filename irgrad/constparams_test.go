package irgrad

import (
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// constGraph is out = linear(x) ⊙ c + c ⊙ c for the input x [2], a
// linear node (node 1, W = [[1, 0], [0, 1]] so it is the identity, b = 0)
// and the const c [2] (node 2) used three times: the gradient w.r.t. c
// must be the sum over its uses.
func constGraph(t *testing.T) (*irsem.Graph, *irsem.Payload) {
	b := newBuilder(sh(2))
	l := b.add(irsem.OpLinear, []int{0}, sh(2))
	b.p[l] = &irsem.Params{W: rtp(t, sh(2, 2), "1", "0", "0", "1"), B: rtp(t, sh(2), "0", "0")}
	c := b.konst(t, sh(2), "3", "-5")
	m1 := b.add(irsem.OpMulElem, []int{l, c}, sh(2))
	m2 := b.add(irsem.OpMulElem, []int{c, c}, sh(2))
	b.add(irsem.OpAdd, []int{m1, m2}, sh(2))
	return b.graph()
}

// TestConstParams: with ConstParams the const node is the context entry
// "node2.value" after the linear node's W and b (node-id order), and its
// cotangent under the seed s is s ⊙ (x + 2c) — d/dc of ⟨s, x⊙c + c⊙c⟩,
// the sum of its three uses — by hand at x = (2, 1/3), c = (3, −5),
// s = (1/2, 7): (1/2·8, 7·(−29/3)) = (4, −203/3); the input's is s ⊙ c =
// (3/2, −35). Without the option the const is no entry. Every path agrees,
// over Rat exactly and over F64 on these dyadic-free but small values.
func TestConstParams(t *testing.T) {
	g, p := constGraph(t)
	x := rt(t, sh(2), "2", "1/3")
	seed := rt(t, sh(2), "1/2", "7")
	wantC := rt(t, sh(2), "4", "-203/3")
	wantX := rt(t, sh(2), "3/2", "-35")
	// The linear output's cotangent is s ⊙ c = (3/2, −35): b's gradient,
	// and W's is its outer product with x, [[3, 1/2], [−70, −35/3]].
	wantW := rt(t, sh(2, 2), "3", "1/2", "-70", "-35/3")
	for _, path := range Paths() {
		gr, params, err := GradWith(g, p, x, &seed, path, LowerOptions{ConstParams: true})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		names := []string{}
		for _, prm := range params {
			names = append(names, prm.Name)
		}
		if len(params) != 3 || names[0] != "node1.W" || names[1] != "node1.b" || names[2] != "node2.value" || params[2].Field != irsem.ParamValue || params[2].Node != 2 {
			t.Fatalf("%s: params %v, want node1.W, node1.b, node2.value", path, names)
		}
		for _, c := range []struct {
			what      string
			got, want spec.Tensor[spec.Rat]
		}{{"input", gr.Input, wantX}, {"node1.W", gr.Params[0], wantW}, {"node1.b", gr.Params[1], wantX}, {"node2.value", gr.Params[2], wantC}} {
			if !spec.SameTensor(c.got, c.want) {
				t.Errorf("%s: grad %s = %v, want %v", path, c.what, c.got, c.want)
			}
		}
		// out = x⊙c + c⊙c = (6+9, −5/3+25) = (15, 70/3).
		if want := rt(t, sh(2), "15", "70/3"); !spec.SameTensor(gr.Output, want) {
			t.Errorf("%s: output %v, want %v", path, gr.Output, want)
		}
	}
	// Without the option the const receives no gradient.
	_, params, err := GradWith(g, p, x, &seed, PathTape, LowerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(params) != 2 {
		t.Fatalf("without ConstParams: %d params, want 2 (W, b)", len(params))
	}
	// A nil seed is all ones: the gradient of the sum, s = (1, 1): x + 2c = (8, −29/3).
	gr, _, err := GradWith(g, p, x, nil, PathTypedGraph, LowerOptions{ConstParams: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := rt(t, sh(2), "8", "-29/3"); !spec.SameTensor(gr.Params[2], want) {
		t.Errorf("ones seed: grad c = %v, want %v", gr.Params[2], want)
	}
	// Over F64 the paths agree with the Rat result rounded (every value here is exact in binary64 but −203/3, −29/3).
	grf, _, err := GradWith(g, p, irsem.ConvertTensor[spec.F64](x), nil, PathTape, LowerOptions{ConstParams: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(grf.Params[2].Data[0]); got != 8 {
		t.Errorf("f64: grad c[0] = %v, want 8", got)
	}
}

// TestConstParamsSeedShape: a seed of the wrong shape is refused naming the
// output node.
func TestConstParamsSeedShape(t *testing.T) {
	g, p := constGraph(t)
	x := rt(t, sh(2), "2", "1/3")
	bad := rt(t, sh(3), "1", "1", "1")
	_, _, err := GradWith(g, p, x, &bad, PathTape, LowerOptions{ConstParams: true})
	if err == nil || err.Error() != "node 5 (add): seed shape mismatch: expected [2], got [3] (3 values)" {
		t.Fatalf("got %v", err)
	}
}
