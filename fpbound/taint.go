package fpbound

import (
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// taintedNodes evaluates g over Err node by node, as the classic
// evaluation does, and reports which nodes' classic values rest on an
// undecided comparison (doc.go, "Undecided classic comparisons"): a node
// whose own formula met one, or a descendant of such a node. The caller
// holds evalMu with the ulps set, as for the classic evaluation. A nil
// result with a nil error means the evaluation met no undecided
// comparison.
func taintedNodes[F format](g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, reg *spec.Registry[ErrOf[F]]) ([]bool, error) {
	tainted := make([]bool, len(g.Nodes))
	any := false
	_, err := denoteAllWith(g, p, irsem.ConvertTensor[ErrOf[F]](input), reg, func(i int, run func() error) error {
		for _, q := range g.Nodes[i].Parents {
			tainted[i] = tainted[i] || tainted[q]
		}
		before := undecided.Load()
		if err := run(); err != nil {
			return err
		}
		if undecided.Load() != before {
			tainted[i] = true
		}
		any = any || tainted[i]
		return nil
	})
	if err != nil || !any {
		return nil, err
	}
	return tainted, nil
}

// indexTaint sets out[m] for every element m of node nd (pad, slice,
// gather or conv_transpose, its first parent's marks in) that reads a
// marked element of its first parent (elemTaint): pad and gather through
// the registry's index map (spec.PadMap, spec.GatherMap; a fill position
// reads nothing), slice through its window, conv_transpose through its
// geometry (every channel of the lead at the spatial positions that
// reach the output position; other parents — W from the payload — are
// not nodes). It reports false where the node's attributes do not fit
// its shapes (the caller then marks every element).
func indexTaint(c *irsem.Graph, nd *irsem.Node, in []bool, out []bool) bool {
	if in == nil {
		return true
	}
	if len(nd.Parents) != 1 && nd.Kind.Op != irsem.OpConvTranspose {
		return false
	}
	xs := c.Nodes[nd.Parents[0]].Shape
	if len(in) != xs.Size() || len(out) != nd.Shape.Size() {
		return false
	}
	var src []int
	switch nd.Kind.Op {
	case irsem.OpPad:
		src = spec.PadMap(&spec.Attrs{Widths: nd.Kind.Widths, Mode: nd.Kind.Mode}, xs)
	case irsem.OpGather:
		src = spec.GatherMap(&spec.Attrs{Axis: nd.Kind.Axis, IndicesShape: nd.Kind.IndicesShape, Indices: nd.Kind.Indices}, xs)
	case irsem.OpSlice:
		ax := nd.Kind.Axis
		if ax < 0 {
			ax += len(xs)
		}
		if ax < 0 || ax >= len(xs) || len(nd.Shape) != len(xs) || nd.Kind.Start < 0 || nd.Kind.End-nd.Kind.Start != nd.Shape[ax] || nd.Kind.End > xs[ax] {
			return false
		}
		inner := spec.Shape(xs[ax+1:]).Size()
		src = make([]int, len(out))
		for m := range src {
			outer, rest := m/(nd.Shape[ax]*inner), m%(nd.Shape[ax]*inner)
			src[m] = (outer*xs[ax]+nd.Kind.Start+rest/inner)*inner + rest%inner
		}
	case irsem.OpConvTranspose:
		return convTransposeTaint(nd, xs, in, out)
	}
	if len(src) != len(out) {
		return false
	}
	for m, s := range src {
		out[m] = s >= 0 && s < len(in) && in[s]
	}
	return true
}

// convTransposeTaint is indexTaint for conv_transpose: x [lead…, C_in,
// n…] → [lead…, C_out, no…]; input spatial position i adds to output
// position i·s + j·dl − p_begin (each axis, j < k).
func convTransposeTaint(nd *irsem.Node, xs spec.Shape, in, out []bool) bool {
	w := nd.Kind.Window
	if w == nil || len(w.Kernel) == 0 {
		return false
	}
	r := len(w.Kernel)
	if len(xs) < r+1 || len(nd.Shape) != len(xs) {
		return false
	}
	lead := spec.Shape(xs[:len(xs)-r-1]).Size()
	cin, cout := xs[len(xs)-r-1], nd.Shape[len(xs)-r-1]
	n, no := xs[len(xs)-r:], nd.Shape[len(xs)-r:]
	N, NO := spec.Shape(n).Size(), spec.Shape(no).Size()
	at := func(v []int, d, def int) int {
		if v == nil {
			return def
		}
		return v[d]
	}
	// any channel of lead l marked at spatial position i
	pos := make([]bool, lead*N)
	for l := 0; l < lead; l++ {
		for ch := 0; ch < cin; ch++ {
			for i := 0; i < N; i++ {
				pos[l*N+i] = pos[l*N+i] || in[(l*cin+ch)*N+i]
			}
		}
	}
	reach := make([]bool, lead*NO)
	yi := make([]int, r)
	for l := 0; l < lead; l++ {
		for i := 0; i < N; i++ {
			if !pos[l*N+i] {
				continue
			}
			for d, rem := r-1, i; d >= 0; d-- {
				yi[d], rem = rem%n[d], rem/n[d]
			}
			// every kernel offset: the output positions i·s + j·dl − p
			K := spec.Shape(w.Kernel).Size()
			for j := 0; j < K; j++ {
				flat, ok := 0, true
				off := make([]int, r)
				for d, rem := r-1, j; d >= 0; d-- {
					off[d], rem = rem%w.Kernel[d], rem/w.Kernel[d]
				}
				for d := 0; d < r; d++ {
					pb := 0
					if w.Padding != nil {
						pb = w.Padding[d]
					} else if w.Pads != nil {
						pb = w.Pads[d]
					}
					y := yi[d]*at(w.Stride, d, 1) + off[d]*at(w.Dilation, d, 1) - pb
					ok = ok && y >= 0 && y < no[d]
					flat = flat*no[d] + y
				}
				if ok {
					reach[l*NO+flat] = true
				}
			}
		}
	}
	for l := 0; l < lead; l++ {
		for co := 0; co < cout; co++ {
			copy(out[(l*cout+co)*NO:(l*cout+co+1)*NO], reach[l*NO:(l+1)*NO])
		}
	}
	return true
}

// linearTaint: linear's output row r reads its input's row r (elemTaint).
func linearTaint(c *irsem.Graph, nd *irsem.Node, in, out []bool) {
	ps := c.Nodes[nd.Parents[0]].Shape
	o, i := nd.Shape[len(nd.Shape)-1], ps[len(ps)-1]
	for r := 0; r < len(out)/o; r++ {
		row := false
		for k := 0; k < i; k++ {
			row = row || in[r*i+k]
		}
		for k := 0; k < o; k++ {
			out[r*o+k] = row
		}
	}
}

// reduceTaint: reduce_sum's element reads the elements it sums
// (elemTaint).
func reduceTaint(c *irsem.Graph, nd *irsem.Node, in, out []bool) {
	ps := c.Nodes[nd.Parents[0]].Shape
	ext, inner := ps[nd.Kind.Axis], spec.Shape(ps[nd.Kind.Axis+1:]).Size()
	for m := range out {
		outer, k := m/inner, m%inner
		for r := 0; r < ext; r++ {
			out[m] = out[m] || in[(outer*ext+r)*inner+k]
		}
	}
}
