package casegen

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// This file holds the random valid graph generators of the global
// obligations. They are constructive, in the manner of NNSmith: each step
// picks a primitive and then draws parents and attributes that satisfy the
// primitive's shape constraints as the graph grows, so every generated
// graph is well formed by construction (the tests assert it over
// thousands of seeds with irsem's Graph.Check). Every choice is drawn
// through a Source, so rapid can shrink a failing graph: the node count
// shrinks toward the minimum, the op choice toward the first (simplest)
// op of the table, a parent choice toward the most recent entry (or, for
// the second operand of a binary op, the first operand itself: x⊙x).

// GraphOptions restricts what the generators draw. The zero value draws
// graphs of 1 to 30 nodes over every primitive the generator knows.
type GraphOptions struct {
	// MinNodes and MaxNodes bound the size. For an IR graph they count
	// every node, the input included; for a typed recipe they count the
	// appended nodes (the context inputs come on top). Defaults 1 and 30.
	MinNodes, MaxNodes int
	// Inputs bounds the number of context inputs of a typed recipe
	// (default 3; IR graphs always have exactly one input).
	Inputs int
	// MaxRank and MaxExtent bound drawn shapes (defaults 3 and 3);
	// MaxElements bounds every entry's element count (default 27).
	MaxRank, MaxExtent, MaxElements int
	// MaxDegree bounds the polynomial degree of every entry in the inputs
	// (default 6), so that exact rationals stay small and float values
	// cannot overflow.
	MaxDegree int
	// Exact keeps to primitives with exact rational semantics and no
	// data-dependent failure over Rat (no division, inverse, square root,
	// transcendental functions): registry entries that are Exact and not
	// Partial.
	Exact bool
	// ZeroPreserving keeps to primitives whose VJP maps a zero cotangent
	// to zeros at every finite point of the forward domain (it drops inv,
	// div, exp and log, whose VJPs can produce 0·∞ = NaN over floats): the
	// registry's ZeroPreserving entries.
	ZeroPreserving bool
	// Polynomial keeps to polynomial primitives (no kinks, ties or
	// transcendental functions), for exact Hessians: the registry's
	// Polynomial entries.
	Polynomial bool
	// Lead, when positive, is the 1-based index of the graph in its run:
	// the wide generator's first step then places the primitive
	// rare[(Lead−1) mod len(rare)] (rare: the allowed primitives with no
	// place in the first stream), so that any len(rare) consecutive graphs
	// of a run contain every one of them whatever the registry's size
	// (a coverage guarantee, not a probability). The first stream
	// ignores it.
	Lead int
	// ScalarOutput appends a sum when the drawn result is not rank 0.
	ScalarOutput bool
	// LastResult makes the result the last entry instead of a drawn one.
	LastResult bool
	// KeepDead never prunes the entries the result does not depend on
	// (by default one graph in three is pruned).
	KeepDead bool
	// Ops, when not empty, is an allow-list of registry primitive names
	// (further restricted by the flags above). The first allowed op of the
	// generator's table is the fallback when a drawn op cannot be placed.
	Ops []string
}

func (o GraphOptions) withDefaults() GraphOptions {
	if o.MaxNodes <= 0 {
		o.MaxNodes = 30
	}
	if o.MinNodes <= 0 {
		o.MinNodes = 1
	}
	if o.MinNodes > o.MaxNodes {
		o.MinNodes = o.MaxNodes
	}
	if o.Inputs <= 0 {
		o.Inputs = 3
	}
	if o.MaxRank <= 0 {
		o.MaxRank = 3
	}
	if o.MaxExtent <= 0 {
		o.MaxExtent = 3
	}
	if o.MaxElements <= 0 {
		o.MaxElements = 27
	}
	if o.MaxDegree <= 0 {
		o.MaxDegree = 6
	}
	return o
}

// Step is one node of a Recipe: a registry primitive applied to earlier
// entries.
type Step struct {
	// Op is the registry primitive.
	Op string
	// Attrs are its attributes (never nil). A const step holds its value
	// in Attrs.Shape and Attrs.Values.
	Attrs *spec.Attrs
	// In lists the entries it reads, in argument order; duplicates are
	// meaningful (mul of [1, 1] is x⊙x).
	In []int
	// W and B are the weight and bias of a linear step of an IR recipe,
	// which the IR keeps in the payload; a typed recipe's linear step reads
	// them as entries instead (In = [x, W, b]).
	W, B *spec.Tensor[spec.Rat]
}

// Recipe is a generated graph, independent of any scalar: a context of
// input shapes, then steps. Its entries are numbered context first, then
// steps, exactly as a typedgraph.Graph numbers its entries, as a tape
// recorded from it numbers its nodes, and (for an IR recipe, whose context
// is the single input) as the IR graph numbers its nodes.
type Recipe struct {
	// IR marks a recipe drawn for the canonical IR: one context input,
	// only primitives with an IR tag, linear parameters in the steps.
	IR bool
	// Ctx holds the context input shapes.
	Ctx []spec.Shape
	// Steps holds the appended nodes.
	Steps []Step
	// Shapes holds the shape of every entry.
	Shapes []spec.Shape
	// Result is the entry whose value is the graph's result.
	Result int
}

// Len is the number of entries (context inputs plus steps).
func (r *Recipe) Len() int { return len(r.Shapes) }

// OpOf names the primitive of entry id ("input" for a context input).
func (r *Recipe) OpOf(id int) string {
	if id < len(r.Ctx) {
		return "input"
	}
	if k := id - len(r.Ctx); k >= 0 && k < len(r.Steps) {
		return r.Steps[k].Op
	}
	return "?"
}

// String prints the recipe one entry a line:
//
//	0: input -> [2]
//	1: mul [0 0] -> [2]
//	2: sum [1] -> []
//	result 2
func (r *Recipe) String() string {
	var b strings.Builder
	for i, s := range r.Ctx {
		fmt.Fprintf(&b, "  %d: input -> %v\n", i, s)
	}
	for k, st := range r.Steps {
		id := len(r.Ctx) + k
		fmt.Fprintf(&b, "  %d: %s %v", id, st.Op, st.In)
		if a := FormatAttrs(st.Attrs); a != "{}" {
			b.WriteString(" " + a)
		}
		if st.W != nil {
			fmt.Fprintf(&b, " W=%v b=%v", *st.W, *st.B)
		}
		fmt.Fprintf(&b, " -> %v\n", r.Shapes[id])
	}
	fmt.Fprintf(&b, "  result %d", r.Result)
	return b.String()
}

// Grouper is an optional capability of a Source: Group runs f, whose
// draws form one unit that a shrinker may delete as a whole (under rapid,
// one standalone group). The graph generators put each context input and
// each generated node in its own group, so that "delete this node and
// lower the node count by one" is a single shrink step.
type Grouper interface {
	Group(label string, f func())
}

// group runs f as one unit of draws when the source supports it.
func group(src Source, label string, f func()) {
	if gs, ok := src.(Grouper); ok {
		gs.Group(label, f)
		return
	}
	f()
}

// opFlags classify a generator op. They are derived from the registry
// (flagsOf), never stated here.
type opFlags uint8

const (
	fExact opFlags = 1 << iota // exact over Rat with no data-dependent failure
	fZP                        // zero-preserving VJP at every finite point
	fPoly                      // polynomial
	fIR                        // has a canonical IR tag
)

// flagsOf derives a primitive's generator flags from its registry facts.
func flagsOf(info *spec.OpInfo) opFlags {
	var f opFlags
	if info.Exact && !info.Partial {
		f |= fExact
	}
	if info.ZeroPreserving {
		f |= fZP
	}
	if info.Polynomial {
		f |= fPoly
	}
	if info.IR != nil {
		f |= fIR
	}
	return f
}

// genOp is one entry of the generator's op table: a registry primitive
// and how to place it. build appends one or more steps (a const operand,
// then the op) and reports false when the op cannot be placed now.
type genOp struct {
	name  string
	flags opFlags
	build func(g *gen) bool
}

// graphBuilders places the primitives whose graph steps need more than
// parents of equal shape: attributes, or shapes that must fit together.
// Every other primitive with a GenHint.Graph place is placed by
// elementwise from its registry facts alone.
var graphBuilders = map[string]func(g *gen) bool{
	"sum":          func(g *gen) bool { return g.sum() },
	"scale":        func(g *gen) bool { return g.scale() },
	"reduce_sum":   func(g *gen) bool { return g.reduce("reduce_sum") },
	"reduce_mean":  func(g *gen) bool { return g.reduce("reduce_mean") },
	"broadcast_to": func(g *gen) bool { return g.broadcast() },
	"reshape":      func(g *gen) bool { return g.reshape() },
	"permute":      func(g *gen) bool { return g.permute() },
	"transpose":    func(g *gen) bool { return g.transpose() },
	"flatten":      func(g *gen) bool { return g.flatten() },
	"concat":       func(g *gen) bool { return g.concat() },
	"slice":        func(g *gen) bool { return g.slice() },
	"matmul":       func(g *gen) bool { return g.matmul() },
	"linear":       func(g *gen) bool { return g.linear() },
	"const":        func(g *gen) bool { return g.constant() },
	"clamp":        func(g *gen) bool { return g.clamp() },
	"rand_uniform": func(g *gen) bool { return g.randUniform() },
	"softmax":      func(g *gen) bool { return g.axisOp("softmax") },
	"log_softmax":  func(g *gen) bool { return g.axisOp("log_softmax") },
}

type genTable struct {
	gen uint64
	ops []genOp
	err error
}

var genCache atomic.Pointer[genTable]

// genOps is the op table, derived from the registry: every primitive with
// a GenHint.Graph place, ordered by place, simplest first (shrinking moves
// op choices toward index 0). A primitive with a place needs either a
// structural builder or fixed arity 1 or 2 without attributes; a
// primitive that has neither makes the table an error.
func genOps() ([]genOp, error) {
	gn := spec.Generation()
	if t := genCache.Load(); t != nil && t.gen == gn {
		return t.ops, t.err
	}
	t := &genTable{gen: gn}
	infos := spec.Infos()
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].Gen.Graph < infos[j].Gen.Graph })
	for _, info := range infos {
		if info.Gen.Graph <= 0 {
			continue
		}
		op := genOp{name: info.Name, flags: flagsOf(info), build: graphBuilders[info.Name]}
		if op.build == nil {
			if !plainElementwise(info) {
				t.err = fmt.Errorf("graph generator: primitive %s has a graph place but no builder", info.Name)
				break
			}
			name, rule := info.Name, info.Gen
			if info.MinArity == 1 {
				op.build = func(g *gen) bool { return g.unary(name, rule) }
			} else {
				op.build = func(g *gen) bool { return g.binary(name, rule) }
			}
		}
		t.ops = append(t.ops, op)
	}
	genCache.Store(t)
	return t.ops, t.err
}

// GeneratorOps lists the primitives the graph generators can draw, in
// table order, with whether each can appear in an IR graph.
func GeneratorOps() (names []string, inIR []bool) {
	ops, _ := genOps()
	for _, op := range ops {
		names = append(names, op.name)
		inIR = append(inIR, op.flags&fIR != 0)
	}
	return names, inIR
}

// selectOps filters the table by the options.
func selectOps(o GraphOptions, ir bool) ([]genOp, error) {
	allow := map[string]bool{}
	for _, n := range o.Ops {
		allow[n] = true
	}
	ops, err := genOps()
	if err != nil {
		return nil, err
	}
	var out []genOp
	for _, op := range ops {
		switch {
		case ir && op.flags&fIR == 0,
			o.Exact && op.flags&fExact == 0,
			o.ZeroPreserving && op.flags&fZP == 0,
			o.Polynomial && op.flags&fPoly == 0,
			len(allow) > 0 && !allow[op.name]:
			continue
		}
		out = append(out, op)
	}
	return out, nil
}

// gen is the state of one generation.
type gen struct {
	src    Source
	o      GraphOptions
	ir     bool
	rc     *Recipe
	deg    []int                   // polynomial degree of every entry in the inputs
	target int                     // stop once the recipe has this many entries
	inputs []spec.Tensor[spec.Rat] // the context values, when drawn
	node   int                     // the entry id the current step will get (for labels)
}

func (g *gen) label(s string) string { return fmt.Sprintf("n%d.%s", g.node, s) }

func (g *gen) room() int { return g.target - g.rc.Len() }

func (g *gen) push(st Step, shape spec.Shape, deg int) {
	if st.Attrs == nil {
		st.Attrs = &spec.Attrs{}
	}
	g.rc.Steps = append(g.rc.Steps, st)
	g.rc.Shapes = append(g.rc.Shapes, shape.Clone())
	g.deg = append(g.deg, deg)
	g.node = g.rc.Len()
}

// pick draws one of the entries that satisfy ok, most recent first (so
// the simplest choice, 0, continues a chain). It returns -1 when none.
func (g *gen) pick(label string, ok func(id int) bool) int {
	var cands []int
	for id := g.rc.Len() - 1; id >= 0; id-- {
		if ok(id) {
			cands = append(cands, id)
		}
	}
	if len(cands) == 0 {
		return -1
	}
	return cands[g.src.Intn(len(cands), g.label(label))]
}

// pickWith draws a second operand: first the given entry itself (the
// duplicate-parent choice, at 0), then the others that satisfy ok, most
// recent first.
func (g *gen) pickWith(label string, first int, ok func(id int) bool) int {
	cands := []int{first}
	for id := g.rc.Len() - 1; id >= 0; id-- {
		if id != first && ok(id) {
			cands = append(cands, id)
		}
	}
	return cands[g.src.Intn(len(cands), g.label(label))]
}

func (g *gen) any(int) bool { return true }

func (g *gen) ranked(id int) bool { return len(g.rc.Shapes[id]) > 0 }

// elementwiseShape is the output shape of a one- or two-parent primitive
// whose parents have shape s, by the registry's shape rule (s for an
// elementwise op, [] for mse_loss).
func elementwiseShape(op string, n int, s spec.Shape) (spec.Shape, bool) {
	info, err := spec.Info(op)
	if err != nil {
		return nil, false
	}
	in := make([]spec.Shape, n)
	for i := range in {
		in[i] = s
	}
	out, err := info.InferShape(&spec.Attrs{}, in)
	return out, err == nil
}

// unary places a one-parent primitive without attributes; its degree is
// r.Combine(d, d) for a parent of degree d (square doubles it).
func (g *gen) unary(op string, r spec.GenHint) bool {
	x := g.pick("x", func(id int) bool { return r.Combine(g.deg[id], g.deg[id]) <= g.o.MaxDegree })
	if x < 0 {
		return false
	}
	out, ok := elementwiseShape(op, 1, g.rc.Shapes[x])
	if !ok {
		return false
	}
	g.push(Step{Op: op, In: []int{x}}, out, r.Combine(g.deg[x], g.deg[x]))
	return true
}

// binary places a two-parent primitive without attributes on two entries
// of equal shape (the same entry twice first).
func (g *gen) binary(op string, r spec.GenHint) bool {
	a := g.pick("a", func(id int) bool { return r.Combine(g.deg[id], g.deg[id]) <= g.o.MaxDegree })
	if a < 0 {
		return false
	}
	sa := g.rc.Shapes[a]
	b := g.pickWith("b", a, func(id int) bool {
		return g.rc.Shapes[id].Equal(sa) && r.Combine(g.deg[a], g.deg[id]) <= g.o.MaxDegree
	})
	out, ok := elementwiseShape(op, 2, sa)
	if !ok {
		return false
	}
	g.push(Step{Op: op, In: []int{a, b}}, out, r.Combine(g.deg[a], g.deg[b]))
	return true
}

func (g *gen) sum() bool {
	x := g.pick("x", g.any)
	g.push(Step{Op: "sum", In: []int{x}}, spec.Shape{}, g.deg[x])
	return true
}

func (g *gen) scale() bool {
	x := g.pick("x", g.any)
	c := GenRat(g.src, Any, g.label("c"))
	g.push(Step{Op: "scale", In: []int{x}, Attrs: &spec.Attrs{C: c.Big()}}, g.rc.Shapes[x], g.deg[x])
	return true
}

func (g *gen) clamp() bool {
	x := g.pick("x", g.any)
	lo, hi := GenRat(g.src, Any, g.label("lo")), GenRat(g.src, Any, g.label("hi"))
	if c, _ := lo.Compare(hi); c > 0 {
		lo, hi = hi, lo
	}
	g.push(Step{Op: "clamp", In: []int{x}, Attrs: &spec.Attrs{Lo: lo.Big(), Hi: hi.Big()}}, g.rc.Shapes[x], g.deg[x])
	return true
}

// axis draws an axis of a rank-r shape: non-negative for the IR, which
// has no negative axes; a typed recipe sometimes uses the negative
// spelling.
func (g *gen) axis(r int) int {
	ax := g.src.Intn(r, g.label("axis"))
	if !g.ir && g.src.Intn(2, g.label("axis.neg")) == 1 {
		ax -= r
	}
	return ax
}

func normAxis(ax, r int) int {
	if ax < 0 {
		return ax + r
	}
	return ax
}

func (g *gen) reduce(op string) bool {
	x := g.pick("x", g.ranked)
	if x < 0 {
		return false
	}
	s := g.rc.Shapes[x]
	ax := g.axis(len(s))
	n := normAxis(ax, len(s))
	out := append(s[:n:n].Clone(), s[n+1:]...)
	g.push(Step{Op: op, In: []int{x}, Attrs: &spec.Attrs{Axis: ax}}, out, g.deg[x])
	return true
}

func (g *gen) axisOp(op string) bool {
	x := g.pick("x", g.ranked)
	if x < 0 {
		return false
	}
	ax := g.axis(len(g.rc.Shapes[x]))
	g.push(Step{Op: op, In: []int{x}, Attrs: &spec.Attrs{Axis: ax}}, g.rc.Shapes[x], g.deg[x])
	return true
}

func (g *gen) broadcast() bool {
	x := g.pick("x", g.any)
	s := g.rc.Shapes[x]
	lead := g.src.Intn(g.o.MaxRank-len(s)+1, g.label("lead"))
	to := make(spec.Shape, 0, lead+len(s))
	for i := 0; i < lead; i++ {
		to = append(to, 1+g.src.Intn(g.o.MaxExtent, g.label("lead.dim")))
	}
	for _, d := range s {
		if d == 1 {
			d = 1 + g.src.Intn(g.o.MaxExtent, g.label("expand"))
		}
		to = append(to, d)
	}
	if to.Size() > g.o.MaxElements {
		to = s.Clone() // the identity broadcast is always valid
	}
	g.push(Step{Op: "broadcast_to", In: []int{x}, Attrs: &spec.Attrs{Shape: to}}, to, g.deg[x])
	return true
}

// shapesOfSize lists the shapes of rank ≤ maxRank with n elements: the
// rank-1 shape [n] first (the simplest), then [] when n = 1, then the
// shapes of rank ≥ 2.
func shapesOfSize(n, maxRank int) []spec.Shape {
	res := []spec.Shape{{n}}
	if n == 1 {
		res = append(res, spec.Shape{})
	}
	var rec func(prefix spec.Shape, rest int)
	rec = func(prefix spec.Shape, rest int) {
		if rest == 1 && len(prefix) >= 2 {
			res = append(res, prefix.Clone())
		}
		if len(prefix) == maxRank {
			return
		}
		for d := 1; d <= rest; d++ {
			if rest%d == 0 {
				rec(append(prefix[:len(prefix):len(prefix)], d), rest/d)
			}
		}
	}
	rec(spec.Shape{}, n)
	return res
}

func (g *gen) reshape() bool {
	x := g.pick("x", g.any)
	shapes := shapesOfSize(g.rc.Shapes[x].Size(), g.o.MaxRank)
	to := shapes[g.src.Intn(len(shapes), g.label("to"))]
	g.push(Step{Op: "reshape", In: []int{x}, Attrs: &spec.Attrs{Shape: to.Clone()}}, to, g.deg[x])
	return true
}

func (g *gen) permute() bool {
	x := g.pick("x", g.ranked)
	if x < 0 {
		return false
	}
	s := g.rc.Shapes[x]
	perm := make([]int, len(s))
	for i := range perm {
		perm[i] = i
	}
	for i := len(perm) - 1; i > 0; i-- {
		j := i - g.src.Intn(i+1, g.label("perm"))
		perm[i], perm[j] = perm[j], perm[i]
	}
	out := make(spec.Shape, len(s))
	for i, p := range perm {
		out[i] = s[p]
	}
	g.push(Step{Op: "permute", In: []int{x}, Attrs: &spec.Attrs{Perm: perm}}, out, g.deg[x])
	return true
}

func (g *gen) transpose() bool {
	x := g.pick("x", func(id int) bool { return len(g.rc.Shapes[id]) >= 2 })
	if x < 0 {
		return false
	}
	s := g.rc.Shapes[x]
	a1, a2 := g.src.Intn(len(s), g.label("axis1")), g.src.Intn(len(s), g.label("axis2"))
	out := s.Clone()
	out[a1], out[a2] = out[a2], out[a1]
	g.push(Step{Op: "transpose", In: []int{x}, Attrs: &spec.Attrs{Axis: a1, Axis2: a2}}, out, g.deg[x])
	return true
}

func (g *gen) flatten() bool {
	x := g.pick("x", g.ranked)
	if x < 0 {
		return false
	}
	s := g.rc.Shapes[x]
	ax := 0 // the IR's flatten collapses every axis
	if !g.ir {
		ax = g.src.Intn(len(s), g.label("axis"))
	}
	out := append(s[:ax:ax].Clone(), spec.Shape(s[ax:]).Size())
	g.push(Step{Op: "flatten", In: []int{x}, Attrs: &spec.Attrs{Axis: ax}}, out, g.deg[x])
	return true
}

func (g *gen) concat() bool {
	x := g.pick("x", g.ranked)
	if x < 0 {
		return false
	}
	s := g.rc.Shapes[x]
	ax := g.src.Intn(len(s), g.label("axis"))
	fits := func(id int) bool {
		t := g.rc.Shapes[id]
		if len(t) != len(s) {
			return false
		}
		for i := range t {
			if i != ax && t[i] != s[i] {
				return false
			}
		}
		return true
	}
	extra := 1 + g.src.Intn(2, g.label("parents"))
	if !g.ir && g.src.Intn(4, g.label("single")) == 3 {
		extra = 0 // the registry's concat also takes a single parent
	}
	in := []int{x}
	out := s.Clone()
	d := g.deg[x]
	for k := 0; k < extra; k++ {
		y := g.pickWith("y", x, fits)
		grown := out.Clone()
		grown[ax] += g.rc.Shapes[y][ax]
		if grown.Size() > g.o.MaxElements {
			break
		}
		in, out, d = append(in, y), grown, max(d, g.deg[y])
	}
	if g.ir && len(in) < 2 {
		return false
	}
	g.push(Step{Op: "concat", In: in, Attrs: &spec.Attrs{Axis: ax}}, out, d)
	return true
}

func (g *gen) slice() bool {
	x := g.pick("x", g.ranked)
	if x < 0 {
		return false
	}
	s := g.rc.Shapes[x]
	ax := g.src.Intn(len(s), g.label("axis"))
	start := g.src.Intn(s[ax], g.label("start"))
	end := start + 1 + g.src.Intn(s[ax]-start, g.label("len"))
	out := s.Clone()
	out[ax] = end - start
	g.push(Step{Op: "slice", In: []int{x}, Attrs: &spec.Attrs{Axis: ax, Start: start, End: end}}, out, g.deg[x])
	return true
}

// constTensor draws a rational tensor of shape s.
func (g *gen) constTensor(s spec.Shape, label string) spec.Tensor[spec.Rat] {
	return GenTensor(g.src, s, Any, g.label(label))
}

// pushConst appends a const step holding v and returns its entry id.
func (g *gen) pushConst(v spec.Tensor[spec.Rat]) int {
	vals := make([]*big.Rat, len(v.Data))
	for i, r := range v.Data {
		vals[i] = r.Big()
	}
	g.push(Step{Op: "const", Attrs: &spec.Attrs{Shape: v.Shape.Clone(), Values: vals}}, v.Shape, 0)
	return g.rc.Len() - 1
}

func (g *gen) drawShape(label string) spec.Shape {
	s := GenShape(g.src, 0, g.o.MaxRank, g.label(label))
	for s.Size() > g.o.MaxElements {
		s = s[:len(s)-1]
	}
	return s
}

func (g *gen) constant() bool {
	s := g.drawShape("shape")
	g.pushConst(g.constTensor(s, "value"))
	return true
}

func (g *gen) randUniform() bool {
	s := g.drawShape("shape")
	seed := uint64(g.src.Intn(1000, g.label("seed")))
	g.push(Step{Op: "rand_uniform", Attrs: &spec.Attrs{Shape: s, Seed: seed}}, s, 0)
	return true
}

func matmulShape(a, b spec.Shape) (spec.Shape, bool) {
	info, err := spec.Info("matmul")
	if err != nil {
		return nil, false
	}
	s, err := info.InferShape(&spec.Attrs{}, []spec.Shape{a, b})
	return s, err == nil
}

func (g *gen) matmul() bool {
	a := g.pick("a", func(id int) bool { return g.ranked(id) && g.deg[id] < g.o.MaxDegree })
	if a < 0 {
		return false
	}
	sa := g.rc.Shapes[a]
	fits := func(id int) bool {
		s, ok := matmulShape(sa, g.rc.Shapes[id])
		return ok && s.Size() <= g.o.MaxElements && g.deg[a]+g.deg[id] <= g.o.MaxDegree
	}
	// Choices: the existing operands (a itself first), then a new const
	// operand, when there is room for two nodes.
	var cands []int
	if fits(a) {
		cands = append(cands, a)
	}
	for id := g.rc.Len() - 1; id >= 0; id-- {
		if id != a && fits(id) {
			cands = append(cands, id)
		}
	}
	n := len(cands)
	if g.room() >= 2 {
		n++
	}
	if n == 0 {
		return false
	}
	c := g.src.Intn(n, g.label("b"))
	var b int
	if c < len(cands) {
		b = cands[c]
	} else {
		k := sa[len(sa)-1]
		bs := spec.Shape{k}
		if m := g.src.Intn(g.o.MaxExtent+1, g.label("b.cols")); m > 0 {
			bs = spec.Shape{k, m}
		}
		if s, ok := matmulShape(sa, bs); !ok || s.Size() > g.o.MaxElements || bs.Size() > g.o.MaxElements {
			bs = spec.Shape{k}
		}
		b = g.pushConst(g.constTensor(bs, "b.value"))
	}
	out, _ := matmulShape(sa, g.rc.Shapes[b])
	g.push(Step{Op: "matmul", In: []int{a, b}}, out, g.deg[a]+g.deg[b])
	return true
}

func (g *gen) linear() bool {
	x := g.pick("x", g.ranked)
	if x < 0 {
		return false
	}
	s := g.rc.Shapes[x]
	in := s[len(s)-1]
	out := 1 + g.src.Intn(g.o.MaxExtent, g.label("out"))
	ys := s.Clone()
	ys[len(ys)-1] = out
	if ys.Size() > g.o.MaxElements {
		return false
	}
	w := g.constTensor(spec.Shape{out, in}, "W")
	b := g.constTensor(spec.Shape{out}, "b")
	if g.ir {
		g.push(Step{Op: "linear", In: []int{x}, W: &w, B: &b}, ys, g.deg[x])
		return true
	}
	// A typed recipe reads W and b as entries: an existing entry of the
	// right shape (a parameter that receives a gradient) or a new const.
	if g.room() < 3 {
		return false
	}
	wi := g.pickOrNew("W.src", spec.Shape{out, in}, w, g.deg[x])
	bi := g.pickOrNew("b.src", spec.Shape{out}, b, g.deg[x]+g.deg[wi])
	g.push(Step{Op: "linear", In: []int{x, wi, bi}}, ys, max(g.deg[x]+g.deg[wi], g.deg[bi]))
	return true
}

// pickOrNew returns an existing entry of shape s (choices 1…) or appends a
// const holding v (choice 0), keeping the degree of the result ≤ the
// maximum given the other operand's degree d.
func (g *gen) pickOrNew(label string, s spec.Shape, v spec.Tensor[spec.Rat], d int) int {
	var cands []int
	for id := g.rc.Len() - 1; id >= 0; id-- {
		if g.rc.Shapes[id].Equal(s) && d+g.deg[id] <= g.o.MaxDegree {
			cands = append(cands, id)
		}
	}
	c := g.src.Intn(len(cands)+1, g.label(label))
	if c > 0 {
		return cands[c-1]
	}
	return g.pushConst(v)
}

// genRecipe draws a recipe: for the IR when ir, else a typed recipe; with
// withValues, also one exact value per context input.
func genRecipe(src Source, o GraphOptions, ir, withValues bool) (*Recipe, []spec.Tensor[spec.Rat], error) {
	o = o.withDefaults()
	ops, err := selectOps(o, ir)
	if err != nil {
		return nil, nil, err
	}
	if len(ops) == 0 {
		return nil, nil, fmt.Errorf("graph generator: no primitive satisfies the options")
	}
	g := &gen{src: src, o: o, ir: ir, rc: &Recipe{IR: ir}}
	nctx := 1
	if !ir {
		nctx = 1 + src.Intn(o.Inputs, "inputs")
	}
	for i := 0; i < nctx; i++ {
		var s spec.Shape
		// A context input's value is drawn with its shape, in the same
		// group, so that pruning or deleting an input does not shift the
		// values of the others.
		group(src, "ctx", func() {
			s = GenShape(src, 0, o.MaxRank, fmt.Sprintf("ctx%d.shape", i))
			for s.Size() > o.MaxElements {
				s = s[:len(s)-1]
			}
			if withValues {
				g.inputs = append(g.inputs, GenTensor(src, s, Any, fmt.Sprintf("x%d", i)))
			}
		})
		g.rc.Ctx = append(g.rc.Ctx, s)
		g.rc.Shapes = append(g.rc.Shapes, s.Clone())
		g.deg = append(g.deg, 1)
	}
	// The node budget: an IR graph counts its input.
	size := o.MinNodes + src.Intn(o.MaxNodes-o.MinNodes+1, "nodes")
	if ir {
		g.target = size
	} else {
		g.target = nctx + size
	}
	if o.ScalarOutput {
		g.target-- // room for the final sum
		if g.target < nctx {
			g.target = nctx
		}
	}
	g.node = g.rc.Len()
	for g.rc.Len() < g.target {
		placed := false
		group(src, "node", func() {
			k := src.Intn(len(ops), g.label("op"))
			placed = ops[k].build(g)
			// Fall back to the table's first placeable op.
			for j := 0; !placed && j < len(ops); j++ {
				placed = ops[j].build(g)
			}
		})
		if !placed {
			return nil, nil, fmt.Errorf("graph generator: no allowed primitive can be placed after entry %d", g.rc.Len()-1)
		}
	}
	g.rc.Result = g.rc.Len() - 1
	if !o.LastResult && g.rc.Len() > 1 && src.Intn(3, "result.kind") == 2 {
		g.rc.Result = g.rc.Len() - 1 - src.Intn(g.rc.Len(), "result")
	}
	// Dead code (nodes the result does not depend on, unused inputs) is
	// kept in two cases of three — the sweeps must skip it — and pruned
	// otherwise. Pruning is choice 0, so a shrunk counterexample holds
	// only what its result depends on.
	if !o.KeepDead && src.Intn(3, "dead") == 0 {
		g.prune()
	}
	if o.ScalarOutput && len(g.rc.Shapes[g.rc.Result]) != 0 {
		x := g.rc.Result
		g.push(Step{Op: "sum", In: []int{x}}, spec.Shape{}, g.deg[x])
		g.rc.Result = g.rc.Len() - 1
	}
	return g.rc, g.inputs, nil
}

// prune removes the entries the result does not depend on: nodes, and
// context inputs of a typed recipe (keeping at least one). An IR recipe
// keeps its input. Entries are renumbered in order.
func (g *gen) prune() {
	rc := g.rc
	live := make([]bool, rc.Len())
	live[rc.Result] = true
	for id := rc.Len() - 1; id >= len(rc.Ctx); id-- {
		if live[id] {
			for _, p := range rc.Steps[id-len(rc.Ctx)].In {
				live[p] = true
			}
		}
	}
	if g.ir {
		live[0] = true
	}
	anyCtx := false
	for i := range rc.Ctx {
		anyCtx = anyCtx || live[i]
	}
	if !anyCtx {
		live[0] = true
	}
	next := make([]int, rc.Len())
	out := &Recipe{IR: rc.IR}
	var deg []int
	var inputs []spec.Tensor[spec.Rat]
	for id := 0; id < rc.Len(); id++ {
		if !live[id] {
			continue
		}
		next[id] = out.Len()
		if id < len(rc.Ctx) {
			out.Ctx = append(out.Ctx, rc.Ctx[id])
			if g.inputs != nil {
				inputs = append(inputs, g.inputs[id])
			}
		} else {
			st := rc.Steps[id-len(rc.Ctx)]
			in := make([]int, len(st.In))
			for k, p := range st.In {
				in[k] = next[p]
			}
			st.In = in
			out.Steps = append(out.Steps, st)
		}
		out.Shapes = append(out.Shapes, rc.Shapes[id])
		deg = append(deg, g.deg[id])
	}
	out.Result = next[rc.Result]
	g.rc, g.deg = out, deg
	if g.inputs != nil {
		g.inputs = inputs
	}
}

// GenTypedRecipe draws a typed recipe (1 … Inputs context inputs, then
// MinNodes … MaxNodes nodes) whose primitives satisfy o. Build it with
// BuildTyped or record it with RecordTape.
func GenTypedRecipe(src Source, o GraphOptions) (*Recipe, error) {
	rc, _, err := genRecipe(src, o, false, false)
	return rc, err
}

// TypedCase is a generated typed recipe with exact context values (each
// drawn with its input's shape).
type TypedCase struct {
	Recipe *Recipe
	Inputs []spec.Tensor[spec.Rat]
}

// GenTyped draws a typed recipe and one exact value per context input.
func GenTyped(src Source, o GraphOptions) (*TypedCase, error) {
	rc, in, err := genRecipe(src, o, false, true)
	if err != nil {
		return nil, err
	}
	return &TypedCase{Recipe: rc, Inputs: in}, nil
}

// TypedSeed draws the typed recipe and inputs of seed: the same seed and
// options give the same case.
func TypedSeed(seed uint64, o GraphOptions) (*TypedCase, error) {
	return GenTyped(NewRandSource(seed), o)
}

// GenInputs draws one exact tensor per shape.
func GenInputs(src Source, shapes []spec.Shape, label string) []spec.Tensor[spec.Rat] {
	out := make([]spec.Tensor[spec.Rat], len(shapes))
	for i, s := range shapes {
		out[i] = GenTensor(src, s, Any, fmt.Sprintf("%s%d", label, i))
	}
	return out
}

// GraphCase is a generated canonical IR graph with its payload, an exact
// input, and the recipe it was emitted from (entry i of the recipe is
// node i of the graph).
type GraphCase struct {
	Recipe  *Recipe
	Graph   *irsem.Graph
	Payload *irsem.Payload
	Input   spec.Tensor[spec.Rat]
}

// GenGraph draws a well-formed canonical IR graph of MinNodes … MaxNodes
// nodes (the input included), its payload (linear weights and biases,
// const values) and an exact input.
func GenGraph(src Source, o GraphOptions) (*GraphCase, error) {
	rc, in, err := genRecipe(src, o, true, true)
	if err != nil {
		return nil, err
	}
	g, p, err := rc.IRGraph()
	if err != nil {
		return nil, err
	}
	return &GraphCase{Recipe: rc, Graph: g, Payload: p, Input: in[0]}, nil
}

// GraphSeed draws the IR graph of seed: the same seed gives the same
// graph, payload and input, so a command line or a certificate can name a
// generated graph by (options, seed).
func GraphSeed(seed uint64, o GraphOptions) (*GraphCase, error) {
	return GenGraph(NewRandSource(seed), o)
}

// IRGraph emits an IR recipe as a canonical IR graph and its payload:
// entry i becomes node i. It fails for a typed recipe, or for a step
// whose primitive has no IR tag.
func (r *Recipe) IRGraph() (*irsem.Graph, *irsem.Payload, error) {
	if !r.IR || len(r.Ctx) != 1 {
		return nil, nil, fmt.Errorf("recipe is not an IR recipe (one input, IR primitives)")
	}
	g := &irsem.Graph{InputID: 0, OutputID: r.Result}
	p := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	g.Nodes = append(g.Nodes, irsem.Node{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: r.Ctx[0].Clone()})
	for k, st := range r.Steps {
		id := k + 1
		info, err := spec.Info(st.Op)
		if err != nil || info.IR == nil {
			return nil, nil, spec.NewNodeError(id, "", "primitive "+st.Op+" has no IR tag", nil)
		}
		tag := irsem.Op(info.IR.Tag)
		kind := irsem.Kind{Op: tag}
		a := st.Attrs
		switch tag {
		default:
			if slices.Contains(info.IR.Attrs, irsem.AttrAxis) { // reduce_sum, reduce_mean, softmax, concat, …
				kind.Axis = a.Axis
			}
			kind.SetRegistryAttrs(a) // the superset tags' attributes (scale, clamp, slice, pad, …)
		case irsem.OpTranspose:
			kind.Axis1, kind.Axis2 = a.Axis, a.Axis2
		case irsem.OpPermute:
			kind.Perm = append([]int(nil), a.Perm...)
		case irsem.OpBroadcastTo:
			kind.FromShape, kind.ToShape = r.Shapes[st.In[0]].Clone(), a.Shape.Clone()
		case irsem.OpReshape:
			kind.InShape, kind.OutShape = r.Shapes[st.In[0]].Clone(), a.Shape.Clone()
		case "tile": // the IR spells the registry's Shape as out_shape
			kind.OutShape = a.Shape.Clone()
		case irsem.OpFlatten:
			kind.InShape = r.Shapes[st.In[0]].Clone()
		case irsem.OpRandUniform:
			kind.Seed = a.Seed
		case irsem.OpConst:
			kind.ValueShape = a.Shape.Clone()
			v := spec.Tensor[spec.Rat]{Shape: a.Shape.Clone(), Data: make([]spec.Rat, len(a.Values))}
			for i, x := range a.Values {
				v.Data[i] = spec.RatFromBig(x)
			}
			p.Entries[id] = &irsem.Params{Value: &v}
		case irsem.OpLinear:
			if st.W == nil || st.B == nil {
				return nil, nil, spec.NewNodeError(id, "", "linear step without W and b", nil)
			}
			w, b := st.W.Clone(), st.B.Clone()
			p.Entries[id] = &irsem.Params{W: &w, B: &b}
		}
		g.Nodes = append(g.Nodes, irsem.Node{ID: id, Parents: append([]int{}, st.In...), Kind: kind, Shape: r.Shapes[id].Clone()})
	}
	return g, p, nil
}

// FormatAttrs prints the attributes that are set.
func FormatAttrs(a *spec.Attrs) string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	if a.Axis != 0 {
		add("axis", fmt.Sprint(a.Axis))
	}
	if a.Axis2 != 0 {
		add("axis2", fmt.Sprint(a.Axis2))
	}
	if a.Shape != nil {
		add("shape", a.Shape.String())
	}
	if a.Perm != nil {
		add("perm", fmt.Sprint(a.Perm))
	}
	if a.Start != 0 || a.End != 0 {
		add("slice", fmt.Sprintf("%d:%d", a.Start, a.End))
	}
	for _, kv := range []struct {
		k string
		v *big.Rat
	}{{"c", a.C}, {"lo", a.Lo}, {"hi", a.Hi}, {"eps", a.Eps}, {"p", a.P}} {
		if kv.v != nil {
			add(kv.k, kv.v.RatString())
		}
	}
	if a.Seed != 0 {
		add("seed", fmt.Sprint(a.Seed))
	}
	return "{" + strings.Join(parts, " ") + "}"
}
