package obligations

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/rewrite"
	"github.com/tlcheck/tlcheck/spec"
)

// gorgoniaCSE is the planted bug: a CSE whose hash ignores the op kind and
// which trusts the hash as the node's identity (no structural
// comparison), so softmax(x) and log_softmax(x) — same parent, same axis,
// same shape — are merged.
var gorgoniaCSE = rewrite.Optimizer{
	Hash: func(n *irsem.Node, p *irsem.Params) uint64 {
		m := *n
		m.Kind.Op = "" // the op kind left out of the hash
		return rewrite.Hash(&m, p)
	},
	Same: func(*irsem.Node, *irsem.Params, *irsem.Node, *irsem.Params) bool { return true },
}

// softmaxPair is input x[2,3] → softmax(x, 1), log_softmax(x, 1) → add.
func softmaxPair() (*irsem.Graph, spec.Tensor[spec.Rat]) {
	s := spec.Shape{2, 3}
	g := &irsem.Graph{InputID: 0, OutputID: 3, Nodes: []irsem.Node{
		{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: s},
		{ID: 1, Parents: []int{0}, Kind: irsem.Kind{Op: "softmax", Axis: 1}, Shape: s},
		{ID: 2, Parents: []int{0}, Kind: irsem.Kind{Op: "log_softmax", Axis: 1}, Shape: s},
		{ID: 3, Parents: []int{1, 2}, Kind: irsem.Kind{Op: "add"}, Shape: s},
	}}
	x, _ := spec.Zeros[spec.Rat](s)
	for i := range x.Data {
		x.Data[i] = spec.NewRat(int64(i%3)-1, 2)
	}
	return g, x
}

// TestRewriteCatchesGorgoniaCSE: the planted CSE that merges softmax and
// log_softmax is caught on the hand-built graph and by the rewrite
// obligation on random graphs (where it merges relu(x) with abs(x) and
// the like); the correct optimiser holds on both.
func TestRewriteCatchesGorgoniaCSE(t *testing.T) {
	g, x := softmaxPair()
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	_, err := CheckRewrite(gorgoniaCSE, g, nil, x)
	var f *counterexample.Failure
	if !errors.As(err, &f) || Obligation(f.Law) != RewriteAgreement || f.Node != 2 {
		t.Fatalf("planted softmax/log_softmax merge: got %v, want a rewrite failure at node 2", err)
	}
	if d, err := CheckRewrite(rewrite.Optimizer{}, g, nil, x); err != nil || !d {
		t.Fatalf("correct optimiser: decided %v, %v", d, err)
	}
	caught := 0
	for s := uint64(0); s < 40; s++ {
		if _, err := checkRewriteCaseWith(casegen.NewRandSource(s), gorgoniaCSE); err != nil {
			caught++
		}
	}
	if caught == 0 {
		t.Errorf("planted CSE bug caught on no random graph of 40")
	}
	t.Logf("planted CSE bug caught on %d random graphs of 40", caught)
}

// TestRewriteHoldsUnderCollisions: with every node hashing alike, the
// structural comparison keeps the optimiser correct on random graphs;
// and the rewrites do fire on them.
func TestRewriteHoldsUnderCollisions(t *testing.T) {
	collide := rewrite.Optimizer{Hash: func(*irsem.Node, *irsem.Params) uint64 { return 0 }}
	fired := map[string]bool{}
	decided := 0
	for s := uint64(0); s < 60; s++ {
		for _, opt := range []rewrite.Optimizer{{}, collide} {
			d, err := checkRewriteCaseWith(casegen.NewRandSource(s), opt)
			if err != nil {
				t.Fatalf("seed %d: %v", s, err)
			}
			if d {
				decided++
			}
		}
		src := casegen.NewRandSource(s)
		gc, err := casegen.GenGraph(src, globalFloat)
		if err != nil {
			t.Fatal(err)
		}
		g, p, _ := casegen.PlantRedundancy(src, gc.Graph, gc.Payload, false)
		res, err := rewrite.Optimize(g, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Applied {
			fired[a.Rule.Name] = true
		}
	}
	for _, r := range append(rewrite.Rules(), rewrite.CSE) {
		if r.Name == "transpose-identity" {
			continue // not planted: the generators draw transposes of two axes
		}
		if !fired[r.Name] {
			t.Errorf("rule %s never fired on 60 planted graphs", r.Name)
		}
	}
	if decided < 100 {
		t.Errorf("only %d of 120 cases decided", decided)
	}
}

// TestRewriteCatchesWrongRule: a merge of two different exact nodes
// (relu(x) and abs(x), by the planted CSE) is decided over Rat, with ==.
func TestRewriteCatchesWrongRule(t *testing.T) {
	s := spec.Shape{3}
	g := &irsem.Graph{InputID: 0, OutputID: 2, Nodes: []irsem.Node{
		{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: s},
		{ID: 1, Parents: []int{0}, Kind: irsem.Kind{Op: "relu"}, Shape: s},
		{ID: 2, Parents: []int{0}, Kind: irsem.Kind{Op: "abs"}, Shape: s},
	}}
	x, _ := spec.Zeros[spec.Rat](s)
	x.Data[0] = spec.NewRat(-1, 1)
	_, err := CheckRewrite(gorgoniaCSE, g, nil, x)
	var f *counterexample.Failure
	if !errors.As(err, &f) || f.Scalar != "rat" {
		t.Fatalf("relu/abs merge: got %v, want a rat failure", err)
	}
}
