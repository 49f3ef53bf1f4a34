package irsem

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// TestDeclaredWork: the declared work of a node, computed by hand from the
// definition (Σ parent elements + output elements × terms per output
// element).
func TestDeclaredWork(t *testing.T) {
	cases := []struct {
		name  string
		nodes []string
		want  int64 // work of the last node
	}{
		// relu on [2,3]: 6 + 6·1.
		{"elementwise", []string{`{"id":0,"kind":"input","parents":[],"shape":[2,3]}`, `{"id":1,"kind":"relu","parents":[0],"shape":[2,3]}`}, 12},
		// matmul [4,5]·[5,4] ([4,5] transposed): parents 20 + 20, output 16 × k = 5.
		{"matmul", []string{`{"id":0,"kind":"input","parents":[],"shape":[4,5]}`, `{"id":1,"kind":"transpose","parents":[0],"shape":[5,4],"axis1":0,"axis2":1}`,
			`{"id":2,"kind":"matmul","parents":[0,1],"shape":[4,4]}`}, 40 + 16*5},
		// linear [3,7] → [3,2]: parent 21, output 6 × 7 inputs.
		{"linear", []string{`{"id":0,"kind":"input","parents":[],"shape":[3,7]}`, `{"id":1,"kind":"linear","parents":[0],"shape":[3,2]}`}, 21 + 6*7},
		// conv of 4 input channels in 2 groups, kernel 3, on [4,10] → [6,8]: 40 + 48 × (2·3).
		{"conv", []string{`{"id":0,"kind":"input","parents":[],"shape":[4,10]}`,
			`{"id":1,"kind":"conv","parents":[0],"shape":[6,8],"kernel":[3],"stride":[1],"padding":[0],"dilation":[1],"groups":2,"in_channels":4,"out_channels":6}`}, 40 + 48*6},
		// concat of the same [2] parent three times: 6 + 6.
		{"concat", []string{`{"id":0,"kind":"input","parents":[],"shape":[2]}`, `{"id":1,"kind":"concat","parents":[0,0,0],"shape":[6],"axis":0}`}, 12},
	}
	for _, c := range cases {
		g, err := DecodeGraph([]byte(doc(c.nodes...)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		last := &g.Nodes[len(g.Nodes)-1]
		var in []spec.Shape
		for _, p := range last.Parents {
			in = append(in, g.Nodes[p].Shape)
		}
		if got := DeclaredWork(last, in); got != c.want {
			t.Errorf("%s: work %d, want %d", c.name, got, c.want)
		}
		// The graph's total is the sum; one below it is refused, naming
		// the node at which the sum crosses the limit.
		var total int64
		for i := range g.Nodes {
			n := &g.Nodes[i]
			var in []spec.Shape
			for _, p := range n.Parents {
				in = append(in, g.Nodes[p].Shape)
			}
			total += DeclaredWork(n, in)
		}
		restore := limits.Set(limits.Limits{Work: total})
		if err := g.Check(); err != nil {
			t.Errorf("%s: at the limit: %v", c.name, err)
		}
		limits.Set(limits.Limits{Work: total - 1})
		err = g.Check()
		restore()
		if err == nil || !limits.IsLimit(err) || !strings.Contains(err.Error(), "over the work limit") {
			t.Errorf("%s: one below the limit: %v", c.name, err)
		}
	}
}

// TestGraphLimits: nodes, parents and graph elements are each refused one
// past their limit, with the error naming the limit.
func TestGraphLimits(t *testing.T) {
	defer limits.Set(limits.Limits{Nodes: 3, Parents: 2, GraphElements: 10})()
	relu := func(id int) string {
		return `{"id":` + string(rune('0'+id)) + `,"kind":"relu","parents":[` + string(rune('0'+id-1)) + `],"shape":[2]}`
	}
	cases := []struct{ name, doc, want string }{
		{"nodes at the limit", doc(in2, relu(1), relu(2)), ""},
		{"nodes", doc(in2, relu(1), relu(2), relu(3)), `field "nodes": the graph has 4 or more nodes: over the nodes limit 3`},
		{"parents at the limit", doc(in2, `{"id":1,"kind":"concat","parents":[0,0],"shape":[4],"axis":0}`), ""},
		{"parents", doc(in2, `{"id":1,"kind":"concat","parents":[0,0,0],"shape":[6],"axis":0}`), `node 1 (concat): field "parents": 3 or more parents: over the parents limit 2`},
		{"graph elements", doc(in2, `{"id":1,"kind":"concat","parents":[0,0],"shape":[4],"axis":0}`, `{"id":2,"kind":"concat","parents":[1,1],"shape":[8],"axis":0}`),
			`node 2 (concat): field "shape": the declared shapes of nodes 0…2 hold 14 elements: over the graph-elements limit 10`},
		{"span of an empty shape", doc(`{"id":0,"kind":"input","parents":[],"shape":[0,11]}`), "over the graph-elements limit 10"},
	}
	for _, c := range cases {
		_, err := DecodeGraph([]byte(c.doc))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !limits.IsLimit(err) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}
