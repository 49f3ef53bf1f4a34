package casegen

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// PlantRedundancy returns a copy of g (and p) with rewrite opportunities
// planted after some nodes: a duplicate of the node (CSE), x·1, 1·x, x+0,
// x−0, −(−x), scale(x, 1), reshape to x's own shape, and — unless exact
// is set — log(softmax(x)). Every motif but log∘softmax has x's value, so
// the later readers of x read the motif instead; log∘softmax hangs off
// the graph (compared node by node). Node i of g is node Map[i] of the
// result.
func PlantRedundancy(src Source, g *irsem.Graph, p *irsem.Payload, exact bool) (*irsem.Graph, *irsem.Payload, []int) {
	out := &irsem.Graph{}
	op := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	alias := make([]int, len(g.Nodes)) // what later readers of node i read
	where := make([]int, len(g.Nodes)) // where node i itself went
	emit := func(n irsem.Node, pr *irsem.Params) int {
		n.ID = len(out.Nodes)
		out.Nodes = append(out.Nodes, n)
		if pr != nil {
			op.Entries[n.ID] = pr
		}
		return n.ID
	}
	constOf := func(s spec.Shape, v int64) int {
		t, _ := spec.Zeros[spec.Rat](s)
		for i := range t.Data {
			t.Data[i] = spec.NewRat(v, 1)
		}
		return emit(irsem.Node{Kind: irsem.Kind{Op: irsem.OpConst, ValueShape: s.Clone()}, Shape: s.Clone(), Parents: []int{}}, &irsem.Params{Value: &t})
	}
	motifs := 8
	if exact {
		motifs = 7
	}
	for i, n := range g.Nodes {
		m := n
		m.Kind = n.Kind.Clone()
		m.Shape = n.Shape.Clone()
		m.Parents = make([]int, len(n.Parents))
		for k, q := range n.Parents {
			m.Parents[k] = alias[q]
		}
		var pr *irsem.Params
		if p != nil && p.Entries != nil {
			pr = p.Entries[i]
		}
		j := emit(m, pr)
		where[i], alias[i] = j, j
		if src.Intn(3, fmt.Sprintf("plant%d", i)) != 0 {
			continue
		}
		s := m.Shape
		switch src.Intn(motifs, fmt.Sprintf("plant%d.motif", i)) {
		case 0:
			if n.Kind.Op != irsem.OpInput {
				d := m
				d.Parents = append([]int{}, m.Parents...)
				alias[i] = emit(d, pr)
			}
		case 1:
			c := constOf(s, 1)
			if src.Intn(2, fmt.Sprintf("plant%d.side", i)) == 0 {
				alias[i] = emit(irsem.Node{Kind: irsem.Kind{Op: "mul_elem"}, Parents: []int{j, c}, Shape: s.Clone()}, nil)
			} else {
				alias[i] = emit(irsem.Node{Kind: irsem.Kind{Op: "mul_elem"}, Parents: []int{c, j}, Shape: s.Clone()}, nil)
			}
		case 2:
			c := constOf(s, 0)
			alias[i] = emit(irsem.Node{Kind: irsem.Kind{Op: "add"}, Parents: []int{j, c}, Shape: s.Clone()}, nil)
		case 3:
			c := constOf(s, 0)
			alias[i] = emit(irsem.Node{Kind: irsem.Kind{Op: "sub"}, Parents: []int{j, c}, Shape: s.Clone()}, nil)
		case 4:
			a := emit(irsem.Node{Kind: irsem.Kind{Op: "neg"}, Parents: []int{j}, Shape: s.Clone()}, nil)
			alias[i] = emit(irsem.Node{Kind: irsem.Kind{Op: "neg"}, Parents: []int{a}, Shape: s.Clone()}, nil)
		case 5:
			alias[i] = emit(irsem.Node{Kind: irsem.Kind{Op: "scale", C: spec.NewRat(1, 1)}, Parents: []int{j}, Shape: s.Clone()}, nil)
		case 6:
			alias[i] = emit(irsem.Node{Kind: irsem.Kind{Op: irsem.OpReshape, InShape: s.Clone(), OutShape: s.Clone()}, Parents: []int{j}, Shape: s.Clone()}, nil)
		default:
			if len(s) > 0 {
				sm := emit(irsem.Node{Kind: irsem.Kind{Op: "softmax", Axis: len(s) - 1}, Parents: []int{j}, Shape: s.Clone()}, nil)
				emit(irsem.Node{Kind: irsem.Kind{Op: "log"}, Parents: []int{sm}, Shape: s.Clone()}, nil)
			}
		}
	}
	out.InputID, out.OutputID = where[g.InputID], alias[g.OutputID]
	return out, op, where
}

// SingularBranch appends to a typed recipe a branch that no path to the
// result crosses: s = sub(a, a) (an exact zero) and inv(s) (1/0, +Inf
// over floats), where a is the k-th entry (mod their number) of the
// recipe that requires a gradient on an eager tape (a context input or a
// node depending on one without a detach or const in between). It
// returns the new recipe and the ids of a and s.
func SingularBranch(rc *Recipe, k int) (*Recipe, int, int) {
	rg := make([]bool, rc.Len())
	var cands []int
	for id := range rg {
		if id < len(rc.Ctx) {
			rg[id] = true
		} else {
			st := rc.Steps[id-len(rc.Ctx)]
			if info, err := spec.Info(st.Op); err == nil {
				reads := make([]bool, len(st.In))
				for j, p := range st.In {
					reads[j] = rg[p]
				}
				rg[id] = spec.RequiresGrad(info, reads...)
			}
		}
		if rg[id] {
			cands = append(cands, id)
		}
	}
	a := cands[((k%len(cands))+len(cands))%len(cands)]
	out := &Recipe{IR: rc.IR, Ctx: rc.Ctx, Result: rc.Result,
		Steps:  append(append([]Step(nil), rc.Steps...), Step{Op: "sub", Attrs: &spec.Attrs{}, In: []int{a, a}}),
		Shapes: append(append([]spec.Shape(nil), rc.Shapes...), rc.Shapes[a])}
	s := out.Len() - 1
	out.Steps = append(out.Steps, Step{Op: "inv", Attrs: &spec.Attrs{}, In: []int{s}})
	out.Shapes = append(out.Shapes, rc.Shapes[a])
	return out, a, s
}
