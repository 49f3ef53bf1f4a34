package irsem

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// TestRatWork: a graph whose declared work is within work but over
// rat-work evaluates over F64 and Interval and is refused over Rat before
// anything runs, the error naming rat-work and the node where the sum
// crosses it; at exactly its declared work it evaluates over Rat too.
func TestRatWork(t *testing.T) {
	g, err := DecodeGraph([]byte(doc(`{"id":0,"kind":"input","parents":[],"shape":[3,7]}`,
		`{"id":1,"kind":"relu","parents":[0],"shape":[3,7]}`,
		`{"id":2,"kind":"transpose","parents":[1],"shape":[7,3],"axis1":0,"axis2":1}`,
		`{"id":3,"kind":"matmul","parents":[1,2],"shape":[3,3]}`)))
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for i := range g.Nodes {
		var in []spec.Shape
		for _, p := range g.Nodes[i].Parents {
			in = append(in, g.Nodes[p].Shape)
		}
		total += DeclaredWork(&g.Nodes[i], in)
	}
	x := make([]spec.Rat, 21)
	for i := range x {
		x[i] = spec.NewRat(int64(i-10), 3)
	}
	in := spec.Tensor[spec.Rat]{Shape: spec.Shape{3, 7}, Data: x}
	restore := limits.Set(limits.Limits{RatWork: total - 1})
	defer restore()
	_, err = Denote(g, &Payload{}, in)
	if err == nil || !strings.Contains(err.Error(), "rat-work") || !strings.HasPrefix(err.Error(), "node 3 (matmul)") {
		t.Fatalf("over Rat: %v, want a rat-work refusal at node 3", err)
	}
	if _, err := Denote(g, &Payload{}, ConvertTensor[spec.F64](in)); err != nil {
		t.Fatalf("over F64: %v", err)
	}
	if _, err := Denote(g, &Payload{}, ConvertTensor[spec.Interval](in)); err != nil {
		t.Fatalf("over Interval: %v", err)
	}
	limits.Set(limits.Limits{RatWork: total})
	if _, err := Denote(g, &Payload{}, in); err != nil {
		t.Fatalf("over Rat at the limit: %v", err)
	}
}
