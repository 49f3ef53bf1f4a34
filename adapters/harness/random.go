package harness

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/spec"
)

// MaxRandom is the largest number of random cases one request may ask
// for (tlcheck adapters … --random N).
const MaxRandom = 100000

// RandomCases returns n random DAG cases drawn from seed: case i is
// "rand-<seed>-<i>", drawn from its own PCG stream (seed, i), so it does
// not depend on n and the list is the same on every run.
//
// Each case is a small DAG (1–3 inputs, 2–7 nodes, the last one the
// output) over registry primitives: elementwise unary and binary
// primitives, matmul, sum, reduce_sum/reduce_mean, transpose, reshape,
// softmax/log_softmax, broadcast_to, concat and slice. Arguments favour
// the newest value and a value read twice, so fan-out and shared leaves
// are common. Every node's shape is the registry's (Prim.Apply checks its
// shape rule); a draw that breaks it is redrawn. Inputs are vectors and
// matrices with extents 1–4 and values k/4, |k| ≤ 12, with zeros and
// repeated values (kinks and ties) on purpose; the cotangent is a
// nonzero dyadic of the output's shape.
//
// The draw keeps every value in a known range, decided over
// fpbound.Err64 enclosures of the exact values, node by node: exp only of
// values within [−6, 6]; log, sqrt and inv only of values ≥ 1/8, and div
// only by such a value; every value within [−64, 64]. So the reference's
// bounds are finite and nothing overflows.
//
// Tangents (the adjoint obligation) are given only where the function is
// provably differentiable at the case's point: no relu or abs argument
// whose enclosure contains 0, no clamp argument whose enclosure meets a
// bound, no max or min whose arguments' enclosures meet, and no value
// computed past a comparison the enclosures could not decide (smooth).
// Elsewhere Tangents is nil: at a kink or tie the identity holds only
// along smooth directions, which a random tangent is not.
func RandomCases(seed uint64, n int) []Case {
	out := make([]Case, 0, max(n, 0))
	for i := 0; i < n; i++ {
		out = append(out, randomCase(seed, i))
	}
	return out
}

// value is one value of a graph being drawn: its shape and the
// enclosures of its exact elements; uncertain once a comparison on the
// way could not be decided (the enclosure may then follow the wrong
// branch).
type value struct {
	shape     spec.Shape
	lo, hi    []float64
	uncertain bool
}

func (v value) min() float64 {
	m := math.Inf(1)
	for _, x := range v.lo {
		m = math.Min(m, x)
	}
	return m
}

func (v value) maxAbs() float64 {
	m := 0.0
	for k := range v.lo {
		m = math.Max(m, math.Max(math.Abs(v.lo[k]), math.Abs(v.hi[k])))
	}
	return m
}

// evaluator evaluates a graph node by node over fpbound.Err64.
type evaluator struct {
	reg  *spec.Registry[fpbound.Err64]
	ts   []spec.Tensor[fpbound.Err64]
	vals []value
}

func newEvaluator(xs []spec.Tensor[spec.Rat]) *evaluator {
	ev := &evaluator{reg: spec.Default[fpbound.Err64]()}
	for _, x := range xs {
		t := toB[fpbound.Err64](x)
		ev.ts = append(ev.ts, t)
		ev.vals = append(ev.vals, enclose(t, false))
	}
	return ev
}

func enclose(t spec.Tensor[fpbound.Err64], uncertain bool) value {
	v := value{shape: t.Shape.Clone(), lo: make([]float64, len(t.Data)), hi: make([]float64, len(t.Data)), uncertain: uncertain}
	for k, e := range t.Data {
		iv := e.Exact()
		v.lo[k], v.hi[k] = iv.Lo, iv.Hi
		if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
			v.lo[k], v.hi[k] = math.Inf(-1), math.Inf(1)
		}
	}
	return v
}

// apply evaluates node n over the values so far; it does not append.
func (ev *evaluator) apply(n Node) (spec.Tensor[fpbound.Err64], value, error) {
	p, err := ev.reg.Lookup(n.Op)
	if err != nil {
		return spec.Tensor[fpbound.Err64]{}, value{}, err
	}
	a := n.Attrs
	if a == nil {
		a = &spec.Attrs{}
	}
	ins := make([]spec.Tensor[fpbound.Err64], len(n.Args))
	unc := false
	for k, arg := range n.Args {
		if arg < 0 || arg >= len(ev.ts) {
			return spec.Tensor[fpbound.Err64]{}, value{}, fmt.Errorf("argument %d out of range", arg)
		}
		ins[k] = ev.ts[arg]
		unc = unc || ev.vals[arg].uncertain
	}
	var y spec.Tensor[fpbound.Err64]
	und, err := fpbound.Evaluate(fpbound.Options{ULPs: ULPs}, func() error {
		var err error
		y, err = p.Apply(a, ins)
		return err
	})
	if err != nil {
		return y, value{}, err
	}
	return y, enclose(y, unc || und > 0), nil
}

func (ev *evaluator) push(t spec.Tensor[fpbound.Err64], v value) {
	ev.ts = append(ev.ts, t)
	ev.vals = append(ev.vals, v)
}

// meets reports whether the enclosure [lo, hi] contains c.
func meets(lo, hi, c float64) bool { return lo <= c && c <= hi }

// kinkAt reports whether node n, over argument values args, may sit on a
// kink or tie: a relu or abs argument whose enclosure contains 0, a clamp
// argument whose enclosure meets a bound, max or min arguments whose
// enclosures meet, or an argument whose enclosure is uncertain.
func kinkAt(n Node, args []value) bool {
	for _, a := range args {
		if a.uncertain {
			return true
		}
	}
	switch n.Op {
	case "relu", "abs":
		for k := range args[0].lo {
			if meets(args[0].lo[k], args[0].hi[k], 0) {
				return true
			}
		}
	case "clamp":
		lo, hi := ratFloat(n.Attrs.Lo), ratFloat(n.Attrs.Hi)
		for k := range args[0].lo {
			if meets(args[0].lo[k], args[0].hi[k], lo) || meets(args[0].lo[k], args[0].hi[k], hi) {
				return true
			}
		}
	case "max", "min":
		a, b := args[0], args[1]
		for k := range a.lo {
			if a.lo[k] <= b.hi[k] && b.lo[k] <= a.hi[k] {
				return true
			}
		}
	}
	return false
}

func ratFloat(r *big.Rat) float64 {
	if r == nil {
		return 0
	}
	f, _ := r.Float64()
	return f
}

// smoothAt reports whether every node of g that the output depends on is
// provably off its kinks and ties at xs (kinkAt), so that the function is
// differentiable there and any tangent is a valid direction for the
// adjoint obligation.
func smoothAt(g Graph, xs []spec.Tensor[spec.Rat]) bool {
	if g.Check() != nil || len(xs) != g.Inputs {
		return false
	}
	live := g.Live()
	ev := newEvaluator(xs)
	for j, n := range g.Nodes {
		t, v, err := ev.apply(n)
		if err != nil {
			return false
		}
		if live[g.Inputs+j] {
			args := make([]value, len(n.Args))
			for k, a := range n.Args {
				args[k] = ev.vals[a]
			}
			if kinkAt(n, args) {
				return false
			}
		}
		ev.push(t, v)
	}
	return true
}

// drawer draws one random case.
type drawer struct {
	r  *rand.Rand
	ev *evaluator
	g  Graph
}

// dyadic is k/4.
func dyadic(k int) spec.Rat { return spec.NewRat(int64(k), 4) }

// drawInputs draws 1–3 inputs over two extents d1, d2 ∈ [1, 4]: vectors
// and matrices, often of one shape, with zeros and repeated values.
func (d *drawer) drawInputs() []spec.Tensor[spec.Rat] {
	d1, d2 := 1+d.r.IntN(4), 1+d.r.IntN(4)
	shapes := []spec.Shape{{d1}, {d1, d2}, {d2, d1}, {d2}}
	n := 1 + d.r.IntN(3)
	xs := make([]spec.Tensor[spec.Rat], n)
	for i := range xs {
		s := shapes[d.r.IntN(len(shapes))]
		if i > 0 && d.r.IntN(2) == 0 {
			s = xs[0].Shape
		}
		t, _ := spec.Zeros[spec.Rat](s.Clone())
		for k := range t.Data {
			switch p := d.r.IntN(20); {
			case p < 3: // a zero: the kink of relu and abs
			case p < 7 && (k > 0 || i > 0): // a repeated value: a tie
				if i > 0 && k < len(xs[0].Data) && d.r.IntN(2) == 0 {
					t.Data[k] = xs[0].Data[k]
				} else if k > 0 {
					t.Data[k] = t.Data[d.r.IntN(k)]
				} else {
					t.Data[k] = dyadic(d.r.IntN(25) - 12)
				}
			default:
				t.Data[k] = dyadic(d.r.IntN(25) - 12)
			}
		}
		xs[i] = t
	}
	return xs
}

// pick returns a value index: the newest value half the time, else
// one no node reads yet (so that few nodes are dead and the inputs are
// shared), else any.
func (d *drawer) pick() int {
	n := len(d.ev.vals)
	switch p := d.r.IntN(10); {
	case p < 4:
		return n - 1
	case p < 8:
		if i := d.pickWhere(func(i int) bool { return i >= d.g.Inputs && !d.used(i) }); i >= 0 {
			return i
		}
		if i := d.pickWhere(func(i int) bool { return !d.used(i) }); i >= 0 {
			return i
		}
	}
	return d.r.IntN(n)
}

// used reports whether a node reads value i.
func (d *drawer) used(i int) bool {
	for _, n := range d.g.Nodes {
		for _, a := range n.Args {
			if a == i {
				return true
			}
		}
	}
	return false
}

// pickWhere returns a value index satisfying ok (the newest such half the
// time), or −1.
func (d *drawer) pickWhere(ok func(int) bool) int {
	var cands []int
	for i := range d.ev.vals {
		if ok(i) {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return -1
	}
	if d.r.IntN(2) == 0 {
		return cands[len(cands)-1]
	}
	return cands[d.r.IntN(len(cands))]
}

var (
	randUnary    = []string{"neg", "square", "abs", "relu", "sigmoid", "tanh", "exp", "sin", "cos", "softplus", "scale", "clamp"}
	randPositive = []string{"log", "sqrt", "inv"}
	randBinary   = []string{"add", "sub", "mul", "max", "min", "div"}
	randShape    = []string{"matmul", "reduce_sum", "reduce_mean", "transpose", "reshape", "softmax", "log_softmax", "broadcast_to", "concat", "slice"}
	randScales   = [][2]int64{{-3, 2}, {-1, 1}, {1, 2}, {2, 1}, {3, 4}}
)

// positive reports whether value i is certainly ≥ 1/8 everywhere.
func (d *drawer) positive(i int) bool { return positive(d.ev.vals[i]) }

func positive(v value) bool { return !v.uncertain && len(v.lo) > 0 && v.min() >= 0.125 }

// inRange reports whether node n over argument values args keeps the
// draw's ranges: exp only of certain values within [−6, 6], log, sqrt
// and inv only of certain values ≥ 1/8, div only by such a value.
func inRange(n Node, args []value) bool {
	switch n.Op {
	case "exp":
		return !args[0].uncertain && args[0].maxAbs() <= 6
	case "log", "sqrt", "inv":
		return positive(args[0])
	case "div":
		return positive(args[1])
	}
	return true
}

// randomValid reports whether every node of g keeps the draw's ranges at
// xs (inRange, and every value finite within [−64, 64]): the shrinker's
// smaller graphs must stay inside the domain the random cases are drawn
// from (bypassing exp before a log would not).
func randomValid(g Graph, xs []spec.Tensor[spec.Rat]) bool {
	if g.Check() != nil || len(xs) != g.Inputs {
		return false
	}
	ev := newEvaluator(xs)
	for _, n := range g.Nodes {
		args := make([]value, len(n.Args))
		for k, a := range n.Args {
			args[k] = ev.vals[a]
		}
		if !inRange(n, args) {
			return false
		}
		t, v, err := ev.apply(n)
		if err != nil || len(v.lo) == 0 || v.maxAbs() > 64 {
			return false
		}
		ev.push(t, v)
	}
	return true
}

// drawNode draws one node over the values so far (nil when the draw does
// not fit; the caller redraws). last says it is the output node.
func (d *drawer) drawNode(last bool) []Node {
	switch c := d.r.IntN(20); {
	case c < 8:
		return d.drawUnary()
	case c < 10:
		return d.drawPositive()
	case c < 15:
		return d.drawBinary()
	case c < 19 || !last:
		return d.drawShape()
	default:
		return node("sum", nil, d.pick())
	}
}

// node is the one node op(args) with attributes a.
func node(op string, a *spec.Attrs, args ...int) []Node {
	return []Node{{Op: op, Attrs: a, Args: args}}
}

// drawUnary draws an elementwise unary op (exp only of a certain value
// of magnitude ≤ 6).
func (d *drawer) drawUnary() []Node {
	r := d.r
	op := randUnary[r.IntN(len(randUnary))]
	x := d.pick()
	switch op {
	case "exp":
		if v := d.ev.vals[x]; v.uncertain || v.maxAbs() > 6 {
			return nil
		}
	case "scale":
		s := randScales[r.IntN(len(randScales))]
		return node(op, &spec.Attrs{C: big.NewRat(s[0], s[1])}, x)
	case "clamp":
		lo := int64(-r.IntN(3))         // −1/2, −1/4, 0
		hi := lo + 1 + int64(r.IntN(4)) // up to 1
		return node(op, &spec.Attrs{Lo: big.NewRat(lo, 4), Hi: big.NewRat(hi, 4)}, x)
	}
	return node(op, nil, x)
}

// drawPositive draws an op defined on positive values only, of a
// positive value or, when none is drawn, of exp(y).
func (d *drawer) drawPositive() []Node {
	r := d.r
	op := randPositive[r.IntN(len(randPositive))]
	x := d.pickWhere(d.positive)
	if x < 0 {
		// exp(y) is positive; its logarithm, root or inverse then is
		// defined and smooth.
		y := d.pickWhere(func(i int) bool { v := d.ev.vals[i]; return !v.uncertain && v.maxAbs() <= 2 })
		if y < 0 {
			return nil
		}
		e := len(d.ev.vals)
		return []Node{{Op: "exp", Args: []int{y}}, {Op: op, Args: []int{e}}}
	}
	return node(op, nil, x)
}

// drawBinary draws an elementwise binary op on two values of one shape,
// preferring an unused second operand (div: of a positive divisor).
func (d *drawer) drawBinary() []Node {
	r := d.r
	op := randBinary[r.IntN(len(randBinary))]
	x := d.pick()
	s := d.ev.vals[x].shape
	if op == "div" {
		y := d.pickWhere(func(i int) bool { return d.positive(i) && d.ev.vals[i].shape.Equal(s) })
		if y < 0 {
			return nil
		}
		return node(op, nil, x, y)
	}
	y := x
	if r.IntN(4) != 0 {
		y = d.pickWhere(func(i int) bool { return i != x && !d.used(i) && d.ev.vals[i].shape.Equal(s) })
		if y < 0 || r.IntN(3) == 0 {
			y = d.pickWhere(func(i int) bool { return i != x && d.ev.vals[i].shape.Equal(s) })
		}
		if y < 0 {
			y = x
		}
	}
	if r.IntN(2) == 0 {
		x, y = y, x
	}
	return node(op, nil, x, y)
}

// drawShape draws a shape or reduction op that fits the drawn operand.
func (d *drawer) drawShape() []Node {
	r := d.r
	op := randShape[r.IntN(len(randShape))]
	x := d.pick()
	s := d.ev.vals[x].shape
	switch op {
	case "matmul":
		if s.Rank() != 2 {
			return nil
		}
		y := d.pickWhere(func(i int) bool { t := d.ev.vals[i].shape; return t.Rank() == 2 && t[0] == s[1] })
		if y < 0 {
			return nil
		}
		return node(op, nil, x, y)
	case "reduce_sum", "reduce_mean", "softmax", "log_softmax":
		if s.Rank() == 0 {
			return nil
		}
		return node(op, &spec.Attrs{Axis: r.IntN(s.Rank())}, x)
	case "transpose":
		return node(op, &spec.Attrs{Axis: 0, Axis2: 1}, x)
	case "reshape":
		size := s.Size()
		var targets []spec.Shape
		for a := 1; a <= size; a++ {
			if size%a == 0 {
				targets = append(targets, spec.Shape{a, size / a})
			}
		}
		targets = append(targets, spec.Shape{size})
		t := targets[r.IntN(len(targets))]
		if t.Equal(s) {
			return nil
		}
		return node(op, &spec.Attrs{Shape: t}, x)
	case "broadcast_to":
		m := 2 + r.IntN(2)
		var t spec.Shape
		switch s.Rank() {
		case 0:
			t = spec.Shape{m}
		case 1:
			t = spec.Shape{m, s[0]}
		case 2:
			t = s.Clone()
			ones := []int{}
			for k, e := range s {
				if e == 1 {
					ones = append(ones, k)
				}
			}
			if len(ones) == 0 {
				return nil
			}
			t[ones[r.IntN(len(ones))]] = m
		default:
			return nil
		}
		return node(op, &spec.Attrs{Shape: t}, x)
	case "concat":
		if s.Rank() == 0 {
			return nil
		}
		ax := r.IntN(s.Rank())
		y := d.pickWhere(func(i int) bool {
			t := d.ev.vals[i].shape
			if t.Rank() != s.Rank() {
				return false
			}
			for k := range t {
				if k != ax && t[k] != s[k] {
					return false
				}
			}
			return true
		})
		if y < 0 {
			return nil
		}
		return node(op, &spec.Attrs{Axis: ax}, x, y)
	case "slice":
		if s.Rank() == 0 {
			return nil
		}
		ax := r.IntN(s.Rank())
		if s[ax] < 2 {
			return nil
		}
		start := r.IntN(s[ax] - 1)
		end := start + 1 + r.IntN(s[ax]-start-1)
		return node(op, &spec.Attrs{Axis: ax, Start: start, End: end}, x)
	}
	return nil
}

// accept evaluates the drawn nodes and appends them if every value stays
// within the draw's ranges (finite, |v| ≤ 64).
func (d *drawer) accept(nodes []Node) bool {
	save := len(d.ev.vals)
	for _, nd := range nodes {
		args := make([]value, len(nd.Args))
		for k, a := range nd.Args {
			args[k] = d.ev.vals[a]
		}
		if !inRange(nd, args) {
			d.ev.ts, d.ev.vals = d.ev.ts[:save], d.ev.vals[:save]
			return false
		}
		t, v, err := d.ev.apply(nd)
		if err != nil || len(v.lo) == 0 || v.maxAbs() > 64 {
			d.ev.ts, d.ev.vals = d.ev.ts[:save], d.ev.vals[:save]
			return false
		}
		d.ev.push(t, v)
	}
	d.g.Nodes = append(d.g.Nodes, nodes...)
	return true
}

func randomCase(seed uint64, i int) Case {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	for {
		d := &drawer{r: r}
		xs := d.drawInputs()
		d.ev = newEvaluator(xs)
		d.g = Graph{Inputs: len(xs)}
		target := 2 + r.IntN(6)
		for tries := 0; len(d.g.Nodes) < target && tries < 200; tries++ {
			nodes := d.drawNode(len(d.g.Nodes)+1 >= target)
			if nodes == nil || len(d.g.Nodes)+len(nodes) > 7 {
				continue
			}
			d.accept(nodes)
		}
		// The nodes the output does not read are dropped, and so are
		// the inputs it does not read.
		c := compact(Case{Name: fmt.Sprintf("rand-%d-%d", seed, i), DAG: true, Graph: d.g, Xs: xs, random: true})
		if len(c.Graph.Nodes) < 2 {
			continue
		}
		xs = c.Xs
		out := d.ev.vals[len(d.ev.vals)-1]
		c.Cot, _ = spec.Zeros[spec.Rat](out.shape.Clone())
		for k := range c.Cot.Data {
			v := r.IntN(16) - 8
			if v >= 0 {
				v++
			}
			c.Cot.Data[k] = dyadic(v)
		}
		tans := make([]spec.Tensor[spec.Rat], len(xs))
		for k, x := range xs {
			tans[k], _ = spec.Zeros[spec.Rat](x.Shape.Clone())
			for e := range tans[k].Data {
				tans[k].Data[e] = dyadic(r.IntN(13) - 6)
			}
		}
		if smoothAt(c.Graph, xs) {
			c.Tangents = tans
		}
		return c
	}
}

// GraphString prints g as one line: "v1 = exp(x0); v2 = mul(v1, x0)",
// inputs x0…, node j as v<j+1>, attributes in brackets; the output is the
// last.
func GraphString(g Graph) string {
	name := func(a int) string {
		if a < g.Inputs {
			return fmt.Sprintf("x%d", a)
		}
		return fmt.Sprintf("v%d", a-g.Inputs+1)
	}
	parts := make([]string, len(g.Nodes))
	for j, n := range g.Nodes {
		args := make([]string, len(n.Args))
		for k, a := range n.Args {
			args[k] = name(a)
		}
		parts[j] = fmt.Sprintf("v%d = %s%s(%s)", j+1, n.Op, attrString(n.Op, n.Attrs), strings.Join(args, ", "))
	}
	return strings.Join(parts, "; ")
}

func attrString(op string, a *spec.Attrs) string {
	if a == nil {
		return ""
	}
	switch op {
	case "scale":
		return "[c=" + a.C.RatString() + "]"
	case "clamp":
		return "[" + a.Lo.RatString() + ", " + a.Hi.RatString() + "]"
	case "reduce_sum", "reduce_mean", "softmax", "log_softmax", "concat":
		return fmt.Sprintf("[axis=%d]", a.Axis)
	case "transpose":
		return fmt.Sprintf("[%d,%d]", a.Axis, a.Axis2)
	case "reshape", "broadcast_to":
		return fmt.Sprintf("%v", []int(a.Shape))
	case "slice":
		return fmt.Sprintf("[axis=%d, %d:%d]", a.Axis, a.Start, a.End)
	}
	return ""
}
