package rewrite

import (
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// gb builds small IR graphs by hand.
type gb struct {
	g *irsem.Graph
	p *irsem.Payload
}

func newGB(s spec.Shape) *gb {
	b := &gb{g: &irsem.Graph{}, p: &irsem.Payload{Entries: map[int]*irsem.Params{}}}
	b.add(irsem.Kind{Op: irsem.OpInput}, s)
	return b
}

func (b *gb) add(k irsem.Kind, s spec.Shape, parents ...int) int {
	id := len(b.g.Nodes)
	if parents == nil {
		parents = []int{}
	}
	b.g.Nodes = append(b.g.Nodes, irsem.Node{ID: id, Parents: parents, Kind: k, Shape: s.Clone()})
	b.g.OutputID = id
	return id
}

func (b *gb) constant(s spec.Shape, vals ...int64) int {
	t, _ := spec.Zeros[spec.Rat](s)
	for i := range t.Data {
		t.Data[i] = spec.NewRat(vals[i%len(vals)], 1)
	}
	id := b.add(irsem.Kind{Op: irsem.OpConst, ValueShape: s.Clone()}, s)
	b.p.Entries[id] = &irsem.Params{Value: &t}
	return id
}

func ratVec(vals ...int64) spec.Tensor[spec.Rat] {
	t, _ := spec.Zeros[spec.Rat](spec.Shape{len(vals)})
	for i, v := range vals {
		t.Data[i] = spec.NewRat(v, 1)
	}
	return t
}

// TestRulesFire: each rule fires on its pattern, the optimised graph is
// well formed, and every kept node has the value of the node it stands
// for, over Rat (independently: the unoptimised graph's own denotation).
func TestRulesFire(t *testing.T) {
	s := spec.Shape{3}
	x := ratVec(-2, 0, 5)
	cases := []struct {
		rule  string
		build func(b *gb)
	}{
		{"mul-one", func(b *gb) { c := b.constant(s, 1); b.add(irsem.Kind{Op: "mul_elem"}, s, 0, c) }},
		{"mul-one", func(b *gb) { c := b.constant(s, 1); b.add(irsem.Kind{Op: "mul_elem"}, s, c, 0) }},
		{"scale-one", func(b *gb) { b.add(irsem.Kind{Op: "scale", C: spec.NewRat(1, 1)}, s, 0) }},
		{"add-zero", func(b *gb) { c := b.constant(s, 0); b.add(irsem.Kind{Op: "add"}, s, 0, c) }},
		{"sub-zero", func(b *gb) { c := b.constant(s, 0); b.add(irsem.Kind{Op: "sub"}, s, 0, c) }},
		{"neg-neg", func(b *gb) { n := b.add(irsem.Kind{Op: "neg"}, s, 0); b.add(irsem.Kind{Op: "neg"}, s, n) }},
		{"reshape-identity", func(b *gb) {
			b.add(irsem.Kind{Op: irsem.OpReshape, InShape: s.Clone(), OutShape: s.Clone()}, s, 0)
		}},
		{"cse", func(b *gb) {
			r1 := b.add(irsem.Kind{Op: "relu"}, s, 0)
			r2 := b.add(irsem.Kind{Op: "relu"}, s, 0)
			b.add(irsem.Kind{Op: "sub"}, s, r1, r2)
		}},
	}
	for _, c := range cases {
		b := newGB(s)
		c.build(b)
		res, err := Optimize(b.g, b.p)
		if err != nil {
			t.Fatalf("%s: %v", c.rule, err)
		}
		fired := false
		for _, a := range res.Applied {
			fired = fired || a.Rule.Name == c.rule
		}
		if !fired {
			t.Errorf("%s: did not fire (applied %v)", c.rule, res.Applied)
			continue
		}
		if err := res.Graph.Check(); err != nil {
			t.Fatalf("%s: optimised graph: %v", c.rule, err)
		}
		want, err := irsem.DenoteAll(b.g, b.p, x)
		if err != nil {
			t.Fatal(err)
		}
		got, err := irsem.DenoteAll(res.Graph, res.Payload, x)
		if err != nil {
			t.Fatal(err)
		}
		for i, j := range res.Map {
			for k := range want[i].Data {
				if !want[i].Data[k].Same(got[j].Data[k]) {
					t.Errorf("%s: node %d element %d: %v, optimised %v", c.rule, i, k, want[i].Data[k], got[j].Data[k])
				}
			}
		}
		if len(res.Graph.Nodes) >= len(b.g.Nodes) && c.rule != "cse" {
			// the replaced node is gone (the const it read stays, dead)
			t.Errorf("%s: %d nodes after, %d before", c.rule, len(res.Graph.Nodes), len(b.g.Nodes))
		}
	}
}

// TestLogSoftmaxRule: log(softmax(x)) becomes one log_softmax node, and
// the two enclosures over intervals overlap (the real functions agree).
func TestLogSoftmaxRule(t *testing.T) {
	s := spec.Shape{2, 3}
	b := newGB(s)
	sm := b.add(irsem.Kind{Op: "softmax", Axis: 1}, s, 0)
	b.add(irsem.Kind{Op: "log"}, s, sm)
	res, err := Optimizer{DropDead: true}.Optimize(b.g, b.p)
	if err != nil {
		t.Fatal(err)
	}
	out := res.Graph.Nodes[res.Graph.OutputID]
	if out.Kind.Op != "log_softmax" || out.Kind.Axis != 1 || len(res.Graph.Nodes) != 2 {
		t.Fatalf("optimised graph %+v", res.Graph.Nodes)
	}
	if res.Exact() || res.Bits() {
		t.Errorf("log-softmax declared exact or bit-identical")
	}
	x, _ := spec.Zeros[spec.Interval](s)
	for i := range x.Data {
		x.Data[i] = irsem.FromRat[spec.Interval](spec.NewRat(int64(i)-2, 1))
	}
	a, err := irsem.Denote(b.g, b.p, x)
	if err != nil {
		t.Fatal(err)
	}
	c, err := irsem.Denote(res.Graph, res.Payload, x)
	if err != nil {
		t.Fatal(err)
	}
	for k := range a.Data {
		if a.Data[k].Hi < c.Data[k].Lo || c.Data[k].Hi < a.Data[k].Lo {
			t.Errorf("element %d: %v vs %v disjoint", k, a.Data[k], c.Data[k])
		}
	}
}

// TestCSEByFullIdentity: nodes that differ in the op, an attribute or a
// payload value are never merged, even when every node hashes alike
// (the structural comparison decides); identical ones are.
func TestCSEByFullIdentity(t *testing.T) {
	s := spec.Shape{2, 2}
	b := newGB(s)
	a := b.add(irsem.Kind{Op: "softmax", Axis: 1}, s, 0)
	l := b.add(irsem.Kind{Op: "log_softmax", Axis: 1}, s, 0)
	a0 := b.add(irsem.Kind{Op: "softmax", Axis: 0}, s, 0)
	c1 := b.constant(s, 1, 2)
	c2 := b.constant(s, 1, 3)
	a2 := b.add(irsem.Kind{Op: "softmax", Axis: 1}, s, 0)
	for _, opt := range []Optimizer{{}, {Hash: func(*irsem.Node, *irsem.Params) uint64 { return 7 }}} {
		res, err := opt.Optimize(b.g, b.p)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Map
		if m[a] == m[l] || m[a] == m[a0] || m[c1] == m[c2] {
			t.Errorf("distinct nodes merged: map %v", m)
		}
		if m[a2] != m[a] {
			t.Errorf("identical softmax nodes not merged: map %v", m)
		}
	}
}

// TestHashSeesEveryField: the default hash differs for nodes that differ
// only in the op (the gorgonia bug class), an attribute or a payload
// value.
func TestHashSeesEveryField(t *testing.T) {
	base := irsem.Node{Parents: []int{0}, Kind: irsem.Kind{Op: "softmax", Axis: 1}, Shape: spec.Shape{2, 2}}
	other := []irsem.Node{
		{Parents: []int{0}, Kind: irsem.Kind{Op: "log_softmax", Axis: 1}, Shape: spec.Shape{2, 2}},
		{Parents: []int{0}, Kind: irsem.Kind{Op: "softmax", Axis: 0}, Shape: spec.Shape{2, 2}},
		{Parents: []int{1}, Kind: irsem.Kind{Op: "softmax", Axis: 1}, Shape: spec.Shape{2, 2}},
	}
	h := Hash(&base, nil)
	for _, o := range other {
		if Hash(&o, nil) == h {
			t.Errorf("hash of %+v equals that of %+v", o, base)
		}
	}
	v1, v2 := ratVec(1, 2), ratVec(1, 3)
	c := irsem.Node{Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpConst, ValueShape: spec.Shape{2}}, Shape: spec.Shape{2}}
	if Hash(&c, &irsem.Params{Value: &v1}) == Hash(&c, &irsem.Params{Value: &v2}) {
		t.Errorf("const hash ignores the payload")
	}
}
