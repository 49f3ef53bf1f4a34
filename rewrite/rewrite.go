// Package rewrite is tlcheck's optimising path: a graph transform over the
// canonical IR (irsem.Graph) that does what real engines' graph
// optimisers do — common-subexpression elimination, algebraic
// simplification and dead-node elimination — so that the obligations can
// cross-check the optimised graph against the unoptimised one (package
// obligations, obligation "rewrite").
//
// # Common-subexpression elimination
//
// Two nodes are the same computation when they have the same tag, the
// same static attributes (irsem.Kind.Equal: every field, the tag
// included), the same parents in the same order (after earlier merges),
// the same declared shape, and equal payload entries (const values,
// linear/conv weights, normalisation statistics, compared element by
// element with ==). Nodes are hash-consed: a node's hash (Optimizer.Hash;
// FNV-64a of its full identity by default) selects a bucket, and a node
// is merged into a bucket member only when Optimizer.Same says they are
// the same computation (structural comparison by default). A hash is a
// bucket, never an identity: the bug class this guards against is
// gorgonia's, whose CSE keyed nodes by a hash that ignored the op kind and
// so merged softmax with log_softmax. The input node is never merged.
//
// Exactness of CSE: every tag's denotation is a function of its parents'
// values, its attributes and its payload (rand_uniform and bernoulli_mask
// included: their stream is keyed by the seed attribute), and evaluation
// is deterministic, so the merged node has the same value as the node it
// replaces over every scalar, bit for bit.
//
// # Algebraic rewrites
//
// Each rule replaces a node by an existing node or a new one. "Exact"
// means the two sides are equal as functions over the rationals (so over
// Rat the values are ==); "bits" means equal bit for bit in IEEE
// arithmetic for every input (round-to-nearest, NaN payloads aside);
// otherwise the float results may differ by rounding, and the
// cross-check compares enclosures.
//
//	rule               before                    after          exact  bits
//	mul-one            mul_elem(x, 1) / (1, x)   x              yes    yes  (x·1 = x in IEEE, NaN and ±0 included)
//	scale-one          scale(x, c = 1)           x              yes    yes  (same)
//	add-zero           add(x, 0) / (0, x)        x              yes    no   ((−0) + (+0) = +0: the sign of a zero changes)
//	sub-zero           sub(x, 0)                 x              yes    yes  (x − (+0) = x, −0 included)
//	neg-neg            neg(neg(x))               x              yes    yes  (negation is exact)
//	reshape-identity   reshape(x) to x's shape   x              yes    yes
//	transpose-identity transpose(x, a, a)        x              yes    yes
//	log-softmax        log(softmax(x, a))        log_softmax(x, a)  —  no   (softmax has no rational semantics; the
//	                                                                          real functions are equal, the roundings differ)
//
// Constants 0 and 1 are const nodes whose every payload value is that
// rational and whose shape equals x's (no broadcasting rewrite is
// attempted). A rule applies only where the replaced node's declared
// shape equals its replacement's.
//
// # Dead nodes
//
// With Optimizer.DropDead, nodes the output does not depend on are
// removed (the input is kept). Removing a node changes no remaining value.
package rewrite

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Rule describes one algebraic rewrite and its exactness (see the package
// doc's table).
type Rule struct {
	// Name names the rule.
	Name string
	// Exact: the two sides are equal over the rationals.
	Exact bool
	// Bits: the two sides are equal bit for bit in IEEE arithmetic.
	Bits bool
}

// CSE is the pseudo-rule of a common-subexpression merge: exact and bit
// for bit.
var CSE = Rule{Name: "cse", Exact: true, Bits: true}

var rules = []Rule{
	{"mul-one", true, true},
	{"scale-one", true, true},
	{"add-zero", true, false},
	{"sub-zero", true, true},
	{"neg-neg", true, true},
	{"reshape-identity", true, true},
	{"transpose-identity", true, true},
	{"log-softmax", false, false},
}

// Rules lists the algebraic rules, in the order they are tried.
func Rules() []Rule { return slices.Clone(rules) }

func ruleNamed(name string) Rule {
	for _, r := range rules {
		if r.Name == name {
			return r
		}
	}
	return CSE
}

// Applied is one rewrite that fired: the rule and the node of the input
// graph it replaced.
type Applied struct {
	Rule Rule
	Node int
}

// Result is an optimised graph.
type Result struct {
	Graph   *irsem.Graph
	Payload *irsem.Payload
	// Map sends every node of the input graph to the node of Graph that
	// holds its value (-1 for a node removed as dead).
	Map []int
	// Applied lists the rewrites that fired, in node order.
	Applied []Applied
}

// Exact reports whether every rewrite that fired is exact over the
// rationals; Bits whether every one is bit-identical.
func (r *Result) Exact() bool {
	for _, a := range r.Applied {
		if !a.Rule.Exact {
			return false
		}
	}
	return true
}

// Bits reports whether every rewrite that fired is bit-identical in IEEE
// arithmetic.
func (r *Result) Bits() bool {
	for _, a := range r.Applied {
		if !a.Rule.Bits {
			return false
		}
	}
	return true
}

// Optimizer configures Optimize. The zero value hashes by the full
// identity and compares structurally.
type Optimizer struct {
	// Hash buckets a node for CSE (nil: Identity hash). The node's
	// parents are already renumbered into the optimised graph; p is its
	// payload entry (nil when none).
	Hash func(n *irsem.Node, p *irsem.Params) uint64
	// Same decides that two nodes of one bucket are the same computation
	// (nil: SameNode).
	Same func(a *irsem.Node, pa *irsem.Params, b *irsem.Node, pb *irsem.Params) bool
	// NoCSE and NoAlgebra switch the two passes off.
	NoCSE, NoAlgebra bool
	// DropDead removes the nodes the output does not depend on.
	DropDead bool
}

// Hash is the default CSE hash: FNV-64a of the tag, the parents, the
// shape, the attributes in their canonical wire spelling
// (irsem.Kind.AppendAttrs, so a new attribute is hashed with no edit
// here) and the payload values.
func Hash(n *irsem.Node, p *irsem.Params) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%v|%v|", n.Kind.Op, n.Parents, n.Shape)
	h.Write(n.Kind.AppendAttrs(nil))
	if p != nil {
		// W through Weight: a plane's rationals, derived for this hash
		// only, hash as the rationals they are.
		for _, t := range []*irsem.RatTensor{p.Value, p.Weight(), p.B, p.Gamma, p.Beta, p.Mean, p.Var} {
			if t == nil {
				h.Write([]byte{0})
				continue
			}
			fmt.Fprintf(h, "%v:", t.Shape)
			for _, x := range t.Data {
				h.Write([]byte(x.String()))
				h.Write([]byte{','})
			}
		}
		if p.Eps != nil {
			h.Write([]byte(p.Eps.String()))
		}
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(n.Parents)))
	h.Write(b[:])
	return h.Sum64()
}

// SameNode is the default structural comparison: the same tag and
// attributes (Kind.Equal), parents, shape and payload entry.
func SameNode(a *irsem.Node, pa *irsem.Params, b *irsem.Node, pb *irsem.Params) bool {
	return a.Kind.Equal(b.Kind) && slices.Equal(a.Parents, b.Parents) && a.Shape.Equal(b.Shape) && sameParams(pa, pb)
}

func sameTensor(a, b *irsem.RatTensor) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !a.Shape.Equal(b.Shape) || len(a.Data) != len(b.Data) {
		return false
	}
	for i := range a.Data {
		if !a.Data[i].Same(b.Data[i]) {
			return false
		}
	}
	return true
}

func sameParams(a, b *irsem.Params) bool {
	if a == nil || b == nil {
		return a == b
	}
	if (a.Eps == nil) != (b.Eps == nil) || (a.Eps != nil && !a.Eps.Same(*b.Eps)) {
		return false
	}
	return sameTensor(a.Value, b.Value) && a.SameWeight(b) && sameTensor(a.B, b.B) &&
		sameTensor(a.Gamma, b.Gamma) && sameTensor(a.Beta, b.Beta) && sameTensor(a.Mean, b.Mean) && sameTensor(a.Var, b.Var)
}

// Optimize applies the optimiser to g with the default configuration.
func Optimize(g *irsem.Graph, p *irsem.Payload) (*Result, error) {
	return Optimizer{}.Optimize(g, p)
}

// builder holds the optimised graph under construction.
type builder struct {
	g   *irsem.Graph
	p   *irsem.Payload
	res *Result
}

func (b *builder) node(id int) *irsem.Node { return &b.g.Nodes[id] }

func (b *builder) params(id int) *irsem.Params {
	if b.p == nil || b.p.Entries == nil {
		return nil
	}
	return b.p.Entries[id]
}

// constAll reports whether node id is a const whose every value is v.
func (b *builder) constAll(id int, v spec.Rat) bool {
	n := b.node(id)
	pr := b.params(id)
	if n.Kind.Op != irsem.OpConst || pr == nil || pr.Value == nil {
		return false
	}
	for _, x := range pr.Value.Data {
		if !x.Same(v) {
			return false
		}
	}
	return true
}

// algebra returns the node of the optimised graph that replaces n (whose
// parents are already renumbered), or -1, with the rule that fired.
func (b *builder) algebra(n *irsem.Node) (int, string, *irsem.Node) {
	zero, one := spec.NewRat(0, 1), spec.NewRat(1, 1)
	ps := n.Parents
	fits := func(id int) bool { return b.node(id).Shape.Equal(n.Shape) }
	switch n.Kind.Op {
	case "mul_elem":
		if b.constAll(ps[1], one) && fits(ps[0]) {
			return ps[0], "mul-one", nil
		}
		if b.constAll(ps[0], one) && fits(ps[1]) {
			return ps[1], "mul-one", nil
		}
	case "scale":
		if n.Kind.C.Same(one) && fits(ps[0]) {
			return ps[0], "scale-one", nil
		}
	case "add":
		if b.constAll(ps[1], zero) && fits(ps[0]) {
			return ps[0], "add-zero", nil
		}
		if b.constAll(ps[0], zero) && fits(ps[1]) {
			return ps[1], "add-zero", nil
		}
	case "sub":
		if b.constAll(ps[1], zero) && fits(ps[0]) {
			return ps[0], "sub-zero", nil
		}
	case "neg":
		if in := b.node(ps[0]); in.Kind.Op == "neg" && fits(in.Parents[0]) {
			return in.Parents[0], "neg-neg", nil
		}
	case irsem.OpReshape:
		if fits(ps[0]) {
			return ps[0], "reshape-identity", nil
		}
	case irsem.OpTranspose:
		if n.Kind.Axis1 == n.Kind.Axis2 && fits(ps[0]) {
			return ps[0], "transpose-identity", nil
		}
	case "log":
		if in := b.node(ps[0]); in.Kind.Op == "softmax" {
			k := irsem.Kind{Op: "log_softmax", Axis: in.Kind.Axis}
			return -1, "log-softmax", &irsem.Node{Parents: []int{in.Parents[0]}, Kind: k, Shape: n.Shape.Clone()}
		}
	}
	return -1, "", nil
}

// Optimize returns the optimised graph. g must pass irsem's checks; the
// result does too (its nodes are g's nodes, renumbered, and the rules'
// replacements).
func (o Optimizer) Optimize(g *irsem.Graph, p *irsem.Payload) (*Result, error) {
	hash, same := o.Hash, o.Same
	if hash == nil {
		hash = Hash
	}
	if same == nil {
		same = SameNode
	}
	b := &builder{g: &irsem.Graph{}, p: &irsem.Payload{Entries: map[int]*irsem.Params{}}, res: &Result{Map: make([]int, len(g.Nodes))}}
	buckets := map[uint64][]int{}
	var inPayload func(id int) *irsem.Params
	inPayload = func(id int) *irsem.Params {
		if p == nil || p.Entries == nil {
			return nil
		}
		return p.Entries[id]
	}
	// add appends n (parents renumbered) with payload entry pr, or returns
	// the bucket member it merges into.
	add := func(n irsem.Node, pr *irsem.Params, old int) int {
		var h uint64
		if !o.NoCSE && n.Kind.Op != irsem.OpInput {
			h = hash(&n, pr)
			for _, id := range buckets[h] {
				if same(&n, pr, b.node(id), b.params(id)) {
					b.res.Applied = append(b.res.Applied, Applied{Rule: CSE, Node: old})
					return id
				}
			}
		}
		id := len(b.g.Nodes)
		n.ID = id
		b.g.Nodes = append(b.g.Nodes, n)
		if pr != nil {
			b.p.Entries[id] = pr
		}
		if !o.NoCSE && n.Kind.Op != irsem.OpInput {
			buckets[h] = append(buckets[h], id)
		}
		return id
	}
	for i := range g.Nodes {
		n := g.Nodes[i]
		if n.ID != i {
			return nil, fmt.Errorf("rewrite: node %d has id %d", i, n.ID)
		}
		m := irsem.Node{Kind: n.Kind.Clone(), Shape: n.Shape.Clone(), Parents: make([]int, len(n.Parents))}
		for k, q := range n.Parents {
			if q < 0 || q >= i {
				return nil, fmt.Errorf("rewrite: node %d (%s): parent %d is not an earlier node", i, n.Kind.Op, q)
			}
			m.Parents[k] = b.res.Map[q]
		}
		if !o.NoAlgebra {
			if to, rule, repl := b.algebra(&m); rule != "" {
				b.res.Applied = append(b.res.Applied, Applied{Rule: ruleNamed(rule), Node: i})
				if repl != nil {
					to = add(*repl, nil, i)
				}
				b.res.Map[i] = to
				continue
			}
		}
		b.res.Map[i] = add(m, inPayload(i), i)
	}
	b.g.InputID, b.g.OutputID = b.res.Map[g.InputID], b.res.Map[g.OutputID]
	if o.DropDead {
		b.dropDead()
	}
	if len(b.p.Entries) == 0 && p == nil {
		b.p = nil
	}
	b.res.Graph, b.res.Payload = b.g, b.p
	return b.res, nil
}

// dropDead removes the nodes neither the output nor the input is, and the
// output does not depend on, renumbering the rest and the map.
func (b *builder) dropDead() {
	live := make([]bool, len(b.g.Nodes))
	live[b.g.OutputID], live[b.g.InputID] = true, true
	for id := len(b.g.Nodes) - 1; id >= 0; id-- {
		if live[id] && id != b.g.InputID {
			for _, q := range b.g.Nodes[id].Parents {
				live[q] = true
			}
		}
	}
	next := make([]int, len(b.g.Nodes))
	ng := &irsem.Graph{}
	np := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	for id, n := range b.g.Nodes {
		if !live[id] {
			next[id] = -1
			continue
		}
		next[id] = len(ng.Nodes)
		m := n
		m.ID = next[id]
		m.Parents = make([]int, len(n.Parents))
		for k, q := range n.Parents {
			m.Parents[k] = next[q]
		}
		ng.Nodes = append(ng.Nodes, m)
		if pr := b.params(id); pr != nil {
			np.Entries[m.ID] = pr
		}
	}
	ng.InputID, ng.OutputID = next[b.g.InputID], next[b.g.OutputID]
	for i, to := range b.res.Map {
		b.res.Map[i] = next[to]
	}
	b.g, b.p = ng, np
}
