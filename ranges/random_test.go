package ranges

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// rng is a small deterministic stream for the graph generator.
type rng struct {
	seed uint64
	k    int
}

func (r *rng) intn(n int) int {
	r.k++
	return int(spec.UniformBits(r.seed, r.k) % uint32(n))
}

func (r *rng) rat() spec.Rat {
	num := int64(r.intn(17)) - 8
	den := []int64{1, 2, 3, 4, 5, 8, 10}[r.intn(7)]
	return spec.NewRat(num, den)
}

func (r *rng) ratTensor(s spec.Shape) *irsem.RatTensor {
	t := irsem.RatTensor{Shape: s.Clone(), Data: make([]spec.Rat, s.Size())}
	for i := range t.Data {
		t.Data[i] = r.rat()
	}
	return &t
}

// randomGraph draws a graph over values of shape [2,3]: elementwise ops,
// and shape excursions that come back to [2,3] (matmul by a constant,
// linear, reductions broadcast back, a permute reshaped back, losses
// broadcast back, softmax and layernorm along either axis).
func randomGraph(seed uint64, steps int) (*irsem.Graph, *irsem.Payload) {
	r := &rng{seed: seed}
	s23 := spec.Shape{2, 3}
	g := &irsem.Graph{}
	p := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	var pool []int
	add := func(k irsem.Kind, shape spec.Shape, parents ...int) int {
		id := len(g.Nodes)
		g.Nodes = append(g.Nodes, irsem.Node{ID: id, Parents: append([]int{}, parents...), Kind: k, Shape: shape.Clone()})
		return id
	}
	pick := func() int { return pool[r.intn(len(pool))] }
	pool = append(pool, add(irsem.Kind{Op: irsem.OpInput}, s23))
	unary := []irsem.Op{irsem.OpAbs, irsem.OpRelu, irsem.OpSqrt, irsem.OpTanh, irsem.OpSigmoid, irsem.OpExp,
		irsem.OpSin, irsem.OpCos, irsem.OpInv, irsem.OpLog, irsem.OpDetach}
	binary := []irsem.Op{irsem.OpAdd, irsem.OpSub, irsem.OpMulElem, irsem.OpMaxElem, irsem.OpMinElem}
	for len(pool) < steps {
		var id int
		switch c := r.intn(20); {
		case c < 6:
			id = add(irsem.Kind{Op: unary[r.intn(len(unary))]}, s23, pick())
		case c < 12:
			id = add(irsem.Kind{Op: binary[r.intn(len(binary))]}, s23, pick(), pick())
		case c == 12:
			k := add(irsem.Kind{Op: irsem.OpConst, ValueShape: spec.Shape{3, 3}}, spec.Shape{3, 3})
			p.Entries[k] = &irsem.Params{Value: r.ratTensor(spec.Shape{3, 3})}
			id = add(irsem.Kind{Op: irsem.OpMatmul}, s23, pick(), k)
		case c == 13:
			id = add(irsem.Kind{Op: irsem.OpLinear}, s23, pick())
			p.Entries[id] = &irsem.Params{W: r.ratTensor(spec.Shape{3, 3}), B: r.ratTensor(spec.Shape{3})}
		case c == 14:
			op := []irsem.Op{irsem.OpReduceSum, irsem.OpReduceMean}[r.intn(2)]
			red := add(irsem.Kind{Op: op, Axis: 0}, spec.Shape{3}, pick())
			id = add(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{3}, ToShape: s23}, s23, red)
		case c == 15:
			pm := add(irsem.Kind{Op: irsem.OpPermute, Perm: []int{1, 0}}, spec.Shape{3, 2}, pick())
			id = add(irsem.Kind{Op: irsem.OpReshape, InShape: spec.Shape{3, 2}, OutShape: s23}, s23, pm)
		case c == 16:
			var l int
			if r.intn(2) == 0 {
				l = add(irsem.Kind{Op: irsem.OpMSELoss}, spec.Shape{}, pick(), pick())
			} else {
				l = add(irsem.Kind{Op: irsem.OpSum}, spec.Shape{}, pick())
			}
			id = add(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{}, ToShape: s23}, s23, l)
		case c == 17:
			id = add(irsem.Kind{Op: irsem.OpSoftmax, Axis: r.intn(2)}, s23, pick())
		case c == 18:
			id = add(irsem.Kind{Op: irsem.OpLayerNorm, Axis: r.intn(2)}, s23, pick())
			if r.intn(2) == 0 {
				inner := s23[g.Nodes[id].Kind.Axis:]
				eps := spec.NewRat(1, 1000)
				p.Entries[id] = &irsem.Params{Gamma: r.ratTensor(inner), Beta: r.ratTensor(inner), Eps: &eps}
			}
		default:
			t := add(irsem.Kind{Op: irsem.OpTranspose, Axis1: 0, Axis2: 1}, spec.Shape{3, 2}, pick())
			c := add(irsem.Kind{Op: irsem.OpConcat, Axis: 1}, spec.Shape{3, 4}, t, t)
			f := add(irsem.Kind{Op: irsem.OpFlatten, InShape: spec.Shape{3, 4}}, spec.Shape{12}, c)
			h := add(irsem.Kind{Op: irsem.OpRandUniform, Seed: seed}, spec.Shape{12})
			m := add(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{12}, f, h)
			s := add(irsem.Kind{Op: irsem.OpReduceSum, Axis: 0}, spec.Shape{}, m)
			id = add(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{}, ToShape: s23}, s23, s)
		}
		pool = append(pool, id)
	}
	g.OutputID = len(g.Nodes) - 1
	return g, p
}

// legitimate reports whether a trace failure is one a rule is entitled to:
// an undefined or unbounded enclosure, not an internal or shape error.
func legitimate(err error) bool {
	var e *spec.NodeError
	if !errors.As(err, &e) || e.Node < 0 {
		return false
	}
	for _, s := range []string{"contains 0", "is not > 0", "requires x > 0", "not bounded within the binary32 range", "reaches below 0"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// TestSoundnessRandomGraphs is the soundness property over random graphs:
// every traced graph's binary32 values, exact values (when every tag is
// exact) and pointwise real enclosures lie inside the trace, and its
// certificate checks; every trace failure is a legitimate one. 800
// graphs with TLCHECK_EXHAUSTIVE set (CI), 200 by default, 60 under -short.
func TestSoundnessRandomGraphs(t *testing.T) {
	graphs := 200
	if exhaustive() {
		graphs = 800
	}
	if testing.Short() {
		graphs = 60
	}
	prof := backend.CheckedCPU()
	traced, failed, points := 0, 0, 0
	var tally [2]int // real-value comparisons, inconclusive ones
	for s := 0; s < graphs; s++ {
		seed := uint64(s)*104729 + 1
		g, p := randomGraph(seed, 4+s%12)
		if err := g.Check(); err != nil {
			t.Fatalf("seed %d: generated graph: %v", seed, err)
		}
		plan := mustPlan(t, g, prof)
		box := randomBox(spec.Shape{2, 3}, seed)
		trace, err := Trace(g, p, box, plan)
		if err != nil {
			if !legitimate(err) {
				t.Fatalf("seed %d: %v", seed, err)
			}
			failed++
			continue
		}
		traced++
		tg := testGraph{name: fmt.Sprintf("random %d", seed), g: g, p: p, inShape: spec.Shape{2, 3}}
		for k, x := range SamplePoints(box, 6, seed, 4) {
			evalPoint(t, tg, trace, x, fmt.Sprintf("point %d", k), &tally)
			points++
		}
		if s%10 == 0 {
			c, err := Produce(g, p, box, prof)
			if err != nil {
				t.Fatalf("seed %d: produce: %v", seed, err)
			}
			if _, err := CheckWith(c, Options{Exact: true, Samples: 4, Seed: seed}); err != nil {
				t.Fatalf("seed %d: check: %v", seed, err)
			}
		}
	}
	t.Logf("%d graphs traced, %d refused legitimately; %d points; %d of %d real-value comparisons inconclusive",
		traced, failed, points, tally[1], tally[0])
	if 4*tally[1] > tally[0] {
		t.Errorf("%d of %d real-value comparisons inconclusive", tally[1], tally[0])
	}
	if traced < graphs/2 {
		t.Errorf("only %d of %d random graphs traced", traced, graphs)
	}
}
