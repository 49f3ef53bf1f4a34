package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// varianceGraph is an imported layer norm's divisor, √(mean((x − μ)²) +
// ε), over the rows of x (ε = 10⁻¹², transformers' ViT): row 0 is
// constant (variance exactly 0, every float32 evaluation's too), row 1
// within a few ulps of constant (variance ~10⁻¹⁴ of x²), the others
// random. It returns the graph, the input, and the ids of the square,
// the variance, the variance plus ε and the root.
func varianceGraph(seed uint64, eps *big.Rat) (*irsem.Graph, *irsem.Payload, irsem.RatTensor, []int) {
	const rows, n = 4, 8
	r := newRand(seed)
	x := randTensor(r, spec.Shape{rows, n}, 2)
	c := float32(1 + r.Float64())
	for i := range n {
		x.Data[i], _ = spec.RatFromFloat64(float64(c))
		v := c
		for range i % 3 {
			v = math.Nextafter32(v, 2*c)
		}
		x.Data[n+i], _ = spec.RatFromFloat64(float64(v))
	}
	b := newBuilder(spec.Shape{rows, n})
	mu := b.node(irsem.Kind{Op: irsem.OpReduceMean, Axis: 1}, spec.Shape{rows}, 0)
	mu = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: spec.Shape{rows}, OutShape: spec.Shape{rows, 1}}, spec.Shape{rows, 1}, mu)
	mu = b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{rows, 1}, ToShape: spec.Shape{rows, n}}, spec.Shape{rows, n}, mu)
	d := b.node(irsem.Kind{Op: irsem.OpSub}, spec.Shape{rows, n}, 0, mu)
	sq := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{rows, n}, d, d)
	vr := b.node(irsem.Kind{Op: irsem.OpReduceMean, Axis: 1}, spec.Shape{rows}, sq)
	et := irsem.RatTensor{Shape: spec.Shape{}, Data: []spec.Rat{spec.RatFromBig(eps)}}
	e := b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{}, ToShape: spec.Shape{rows}}, spec.Shape{rows}, b.konst(et))
	ve := b.node(irsem.Kind{Op: irsem.OpAdd}, spec.Shape{rows}, vr, e)
	sd := b.node(irsem.Kind{Op: irsem.OpSqrt}, spec.Shape{rows}, ve)
	return b.g, b.p, x, []int{sq, vr, ve, sd}
}

// nodeValues is every float32 evaluator's (evaluations: the four
// summation orders, with and without fused products, and spec.F32)
// values of node k of g: g cut at k.
func nodeValues(t *testing.T, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor, k int) []evaluation {
	t.Helper()
	c := &irsem.Graph{Nodes: g.Nodes[:k+1], OutputID: k}
	cp := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	for id, e := range p.Entries {
		if id <= k {
			cp.Entries[id] = e
		}
	}
	evs := evaluations(t, c, cp, x)
	if len(evs) < 12 {
		_, err := irsem.Denote(c, cp, irsem.ConvertTensor[spec.F32](x))
		t.Fatalf("node %d: %d evaluators ran (%v)", k, len(evs), err)
	}
	return evs
}

// boxViolations lists every evaluator's value at a node of ids outside
// that node's box (a fused node's box holds a virtual value, no runtime
// one: it is skipped).
func boxViolations(t *testing.T, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor, ids []int, boxes []fwdBox) []string {
	t.Helper()
	var bad []string
	for _, k := range ids {
		if boxes[k].fused {
			continue
		}
		for _, ev := range nodeValues(t, g, p, x, k) {
			for m, v := range ev.out {
				if b := boxes[k].box[m]; !(float64(v) >= b.Lo && float64(v) <= b.Hi) {
					bad = append(bad, fmt.Sprintf("node %d element %d, %s: %g outside [%g, %g]", k, m, ev.name, v, b.Lo, b.Hi))
				}
			}
		}
	}
	return bad
}

// TestSignFloorBoxes (package doc, "Sign floors of the boxes"): on the
// layer-norm divisor with a constant row, the boxes of the square, the
// variance and the root hold every float32 evaluator's value (soundness,
// the zero-variance row included); the floors make every root's box
// finite and bounded away from 0 where without them the variance's box
// reaches below 0 and the root's is the whole line; and a box whose
// lower end is raised to the next float above the least computed
// variance (a clamp that cuts one real value) is caught by the same
// check (the planted fault).
func TestSignFloorBoxes(t *testing.T) {
	// ε = 10⁻¹² as ViT; 10⁻²⁴ below the zero row's variance box's
	// widening below 0, as ViT's last layer norm's row 0 (3·10⁻⁵ against
	// 10⁻¹²): without the floors its root's box reaches below 0.
	for _, c := range []struct {
		seed uint64
		eps  *big.Rat
	}{{1, big.NewRat(1, 1e12)}, {2, big.NewRat(1, 1e12)}, {1, new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil))}, {3, new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil))}} {
		seed, tiny := c.seed, c.eps.Cmp(big.NewRat(1, 1e12)) < 0
		g, p, x, ids := varianceGraph(seed, c.eps)
		sq, vr, sd := ids[0], ids[1], ids[3]
		o := Options{SweepWork: 1 << 12}
		signFloors = false
		off, reason, err := forwardBoxes[binary32](g, p, x, o, DefaultULPs)
		signFloors = true
		if err != nil || reason != "" {
			t.Fatalf("seed %d without floors: %v %s", seed, err, reason)
		}
		boxes, reason, err := forwardBoxes[binary32](g, p, x, o, DefaultULPs)
		if err != nil || reason != "" {
			t.Fatalf("seed %d: %v %s", seed, err, reason)
		}
		if off[vr].box[0].Lo >= 0 || (tiny && !(off[sd].box[0].Lo < 0)) {
			t.Errorf("seed %d: without floors the zero row's variance box %v, root box %v (the test no longer shows the change)", seed, off[vr].box[0], off[sd].box[0])
		}
		for m, b := range boxes[sd].box {
			if !(b.Lo > 0) || math.IsInf(b.Hi, 1) {
				t.Errorf("seed %d row %d: root box %v, want finite and above 0", seed, m, b)
			}
		}
		for m, b := range boxes[sq].box {
			if b.Lo < 0 {
				t.Errorf("seed %d element %d: square box %v reaches below 0", seed, m, b)
			}
		}
		if bad := boxViolations(t, g, p, x, ids, boxes); len(bad) > 0 {
			t.Fatalf("seed %d: %d values outside their boxes, first %s", seed, len(bad), bad[0])
		}
		// The planted fault: the zero row's variance box cut just above
		// the least value an evaluator computes there.
		least := math.Inf(1)
		for _, ev := range nodeValues(t, g, p, x, vr) {
			least = min(least, float64(ev.out[0]))
		}
		planted := append([]fwdBox(nil), boxes...)
		pb := append([]spec.Interval(nil), boxes[vr].box...)
		pb[0].Lo = math.Nextafter(least, math.Inf(1))
		planted[vr].box = pb
		if bad := boxViolations(t, g, p, x, []int{vr}, planted); len(bad) == 0 {
			t.Errorf("seed %d: the variance box cut at %g (least computed %g) is not caught", seed, pb[0].Lo, least)
		}
		t.Logf("seed %d: zero row: variance box %v (without floors %v), root box %v (without %v); least computed variance %g",
			seed, boxes[vr].box[0], off[vr].box[0], boxes[sd].box[0], off[sd].box[0], least)
	}
}
