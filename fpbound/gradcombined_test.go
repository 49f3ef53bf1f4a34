package fpbound

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// declCase is a one-node graph (input [in] → op [out]) at a seeded
// input and cotangent, with some input elements exactly 0 (relu's kink).
func declCase(op irsem.Op, in, out int, seed uint64) (*irsem.Graph, *irsem.Payload, irsem.RatTensor, irsem.RatTensor) {
	r := rand.New(rand.NewPCG(seed, 3))
	rat := func() spec.Rat {
		if r.IntN(5) == 0 {
			return spec.Rat{}
		}
		return spec.NewRat(int64(r.IntN(201)-100), int64(1+r.IntN(64)))
	}
	vec := func(n int) irsem.RatTensor {
		t := irsem.RatTensor{Shape: spec.Shape{n}, Data: make([]spec.Rat, n)}
		for i := range t.Data {
			t.Data[i] = rat()
		}
		return t
	}
	g := &irsem.Graph{Nodes: []irsem.Node{{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: spec.Shape{in}}}}
	p := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	shape := spec.Shape{in}
	if op == irsem.OpLinear {
		shape = spec.Shape{out}
		w := irsem.RatTensor{Shape: spec.Shape{out, in}, Data: make([]spec.Rat, out*in)}
		for i := range w.Data {
			w.Data[i] = rat()
		}
		b := vec(out)
		p.Entries[1] = &irsem.Params{W: &w, B: &b}
	}
	g.Nodes = append(g.Nodes, irsem.Node{ID: 1, Parents: []int{0}, Kind: irsem.Kind{Op: op}, Shape: shape})
	g.OutputID = 1
	return g, p, vec(in), vec(shape.Size())
}

// checkDeclVJP checks the declarative VJP of op (declVJPs) against the
// registry's Go VJP (irgrad's tape over spec.Default) on a one-node
// graph: over spec.Rat, element for element equal, where op is exact
// over Rat (linear, relu); over spec.Interval, overlapping enclosures of
// width below 10⁻¹² (tanh, whose value is not rational). The relu
// mask's box is the interval evaluation of the forward node.
func checkDeclVJP(op irsem.Op, seed uint64) error {
	g, p, x, dy := declCase(op, 6, 4, seed)
	fwd, err := irsem.DenoteAll[spec.Interval](g, p, irsem.ConvertTensor[spec.Interval](x))
	if err != nil {
		return err
	}
	boxes := make([]fwdBox, len(g.Nodes))
	for j, v := range fwd {
		boxes[j] = fwdBox{box: v.Data, x: v.Data}
	}
	c, cp, reason := combinedGraph(g, p, dy, boxes)
	if reason != "" {
		return fmt.Errorf("%s: no combined graph: %s", op, reason)
	}
	if err := c.Check(); err != nil {
		return fmt.Errorf("%s: the combined graph: %v", op, err)
	}
	if op != irsem.OpTanh {
		want, _, err := irgrad.GradWith[spec.Rat](g, p, irsem.ConvertTensor[spec.Rat](x), &dy, irgrad.PathTape, irgrad.LowerOptions{})
		if err != nil {
			return err
		}
		got, err := irsem.Denote[spec.Rat](c, cp, irsem.ConvertTensor[spec.Rat](x))
		if err != nil {
			return err
		}
		for k := range want.Input.Data {
			if got.Data[k].Big().Cmp(want.Input.Data[k].Big()) != 0 {
				return fmt.Errorf("%s seed %d: input-gradient element %d: declarative %v, registry %v", op, seed, k, got.Data[k], want.Input.Data[k])
			}
		}
		return nil
	}
	dyI := irsem.ConvertTensor[spec.Interval](dy)
	want, _, err := irgrad.GradWith[spec.Interval](g, p, irsem.ConvertTensor[spec.Interval](x), &dyI, irgrad.PathTape, irgrad.LowerOptions{})
	if err != nil {
		return err
	}
	got, err := irsem.Denote[spec.Interval](c, cp, irsem.ConvertTensor[spec.Interval](x))
	if err != nil {
		return err
	}
	for k, w := range want.Input.Data {
		h := got.Data[k]
		if w.Hi-w.Lo > 1e-12 || h.Hi-h.Lo > 1e-12 || h.Hi < w.Lo || w.Hi < h.Lo {
			return fmt.Errorf("%s seed %d: input-gradient element %d: declarative %v, registry %v (disjoint or too wide to tell)", op, seed, k, h, w)
		}
	}
	return nil
}

// TestDeclVJPMatchesRegistry: every declarative VJP of the table agrees
// with the registry's VJP (checkDeclVJP) on seeded points, and a wrong
// rule — linear reading W for Wᵀ, tanh's 1 + y·y, relu's mask negated —
// is caught by the same check.
func TestDeclVJPMatchesRegistry(t *testing.T) {
	for op := range declVJPs {
		for seed := uint64(1); seed <= 5; seed++ {
			if err := checkDeclVJP(op, seed); err != nil {
				t.Error(err)
			}
		}
	}
	wrong := map[irsem.Op]declRule{
		irsem.OpLinear: func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, _ fwdBox) (int, string) {
			zero := filledRat(spec.Shape{e.W.Shape[1]}, spec.Rat{})
			w := *e.W
			w.Shape = spec.Shape{e.W.Shape[1], e.W.Shape[0]} // the bytes of W read as Wᵀ
			dx := b.node(irsem.Kind{Op: irsem.OpLinear}, zero.Shape, dy)
			b.cp.Entries[dx] = &irsem.Params{W: &w, B: &zero}
			return dx, ""
		},
		irsem.OpTanh: func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) (int, string) {
			sq := b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, nd.ID, nd.ID)
			d := b.node(irsem.Kind{Op: irsem.OpAdd}, nd.Shape, b.constant(filledRat(nd.Shape, spec.NewRat(1, 1))), sq)
			return b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, d), ""
		},
		irsem.OpRelu: func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, box fwdBox) (int, string) {
			m := filledRat(nd.Shape, spec.Rat{})
			for k, iv := range box.box {
				if iv.Hi <= 0 {
					m.Data[k] = spec.NewRat(1, 1)
				}
			}
			return b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, b.constant(m)), ""
		},
	}
	for op, rule := range wrong {
		saved := declVJPs[op]
		declVJPs[op] = rule
		err := checkDeclVJP(op, 1)
		t.Logf("%s, wrong rule: %v", op, err)
		if err == nil {
			t.Errorf("%s: a wrong declarative VJP passed the check", op)
		}
		declVJPs[op] = saved
	}
}

// TestGradCombinedSound: on ReLU and tanh MLPs (width 8, depths 1 to 16,
// seeds 1–3) the combined bound exists for every input-gradient element,
// every float32 gradient of the test's own evaluator (four orders, with
// and without FMA) holds against the combined enclosure alone and against
// GradEnclosure's least of the three, the float32 values just outside
// each of them fail; a planted relative error of 10⁻³ in the largest
// element fails.
func TestGradCombinedSound(t *testing.T) {
	depths := []int{1, 4, 8, 16}
	if testing.Short() {
		depths = []int{1, 16}
	}
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, depth := range depths {
			for seed := uint64(1); seed <= 3; seed++ {
				gc := newGradCase(t, act, 8, depth, seed, false)
				if gc.comb == nil {
					t.Fatalf("%s depth %d seed %d: no combined bound: %s", act, depth, seed, gc.combReason)
				}
				for _, o := range orders {
					got := flat32s(mlpGrad32(gc.ls, gc.x, gc.c, o))
					for i, en := range gc.comb {
						for _, e := range []Enclosure{en, gc.sharp[i].Enclosure} {
							if el := Judge(got[i], e); el.Verdict != Holds {
								t.Errorf("%s depth %d seed %d %s: input-gradient element %d = %g is %v against %v ± %g", act, depth, seed, o.name, i, got[i], el.Verdict, e.Exact, e.Bound)
							}
						}
					}
				}
				for i, en := range gc.comb {
					if math.IsInf(en.Bound, 1) {
						t.Errorf("%s depth %d seed %d: element %d: combined bound +∞: %s", act, depth, seed, i, en.Reason)
						continue
					}
					for _, e := range []Enclosure{en, gc.sharp[i].Enclosure} {
						for _, v := range justOutside(e) {
							if el := Judge(v, e); el.Verdict != Fails {
								t.Errorf("%s depth %d seed %d: element %d: %g just outside %v ± %g is %v", act, depth, seed, i, v, e.Exact, e.Bound, el.Verdict)
							}
						}
					}
				}
				got := flat32s(mlpGrad32(gc.ls, gc.x, gc.c, orders[0]))
				k := largestInput(gc, len(gc.x))
				if el := Judge(float32(float64(got[k])*(1+1e-3)), gc.sharp[k].Enclosure); el.Verdict != Fails {
					t.Errorf("%s depth %d seed %d: a planted 10⁻³ in element %d is %v (bound %g, exact %v)", act, depth, seed, k, el.Verdict, gc.sharp[k].Bound, gc.sharp[k].Exact)
				}
			}
		}
	}
}

// TestCombinedGraphNilPayload: a graph read without a payload (relu
// alone, compare-grad --graph without --payload) builds its combined
// graph instead of failing on the missing entries.
func TestCombinedGraphNilPayload(t *testing.T) {
	g, _, x, dy := declCase(irsem.OpRelu, 3, 3, 1)
	fwd, err := irsem.DenoteAll[spec.Interval](g, nil, irsem.ConvertTensor[spec.Interval](x))
	if err != nil {
		t.Fatal(err)
	}
	boxes := []fwdBox{{box: fwd[0].Data}, {box: fwd[1].Data}}
	if c, _, reason := combinedGraph(g, nil, dy, boxes); c == nil {
		t.Fatalf("no combined graph: %s", reason)
	}
}
