package fpbound

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// constMatmulGraph is the pattern of an imported transformer's projection
// (tools/models gpt2: node 31): tanh of x [8, 32] plus a bias (local
// errors), times a constant node W [32, 96] (a parent of the matmul, not a payload:
// its Jacobian would be 768 × 3072, past maxDense), permuted to [96, 8]
// (a node that only moves values), then tanh. It returns the graph and
// the ids of the matmul and the permute.
func constMatmulGraph(seed uint64) (*irsem.Graph, *irsem.Payload, irsem.RatTensor, int, int) {
	r := newRand(seed)
	b := newBuilder(spec.Shape{8, 32})
	x := b.node(irsem.Kind{Op: irsem.OpAdd}, spec.Shape{8, 32}, 0, b.konst(randTensor(r, spec.Shape{8, 32}, 0.1)))
	x = b.node(irsem.Kind{Op: irsem.OpTanh}, spec.Shape{8, 32}, x)
	w := b.konst(randTensor(r, spec.Shape{32, 96}, 1/math.Sqrt(32)))
	mm := b.node(irsem.Kind{Op: irsem.OpMatmul}, spec.Shape{8, 96}, x, w)
	pm := b.node(irsem.Kind{Op: irsem.OpPermute, Perm: []int{1, 0}}, spec.Shape{96, 8}, mm)
	b.node(irsem.Kind{Op: irsem.OpTanh}, spec.Shape{96, 8}, pm)
	return b.g, b.p, randTensor(r, spec.Shape{8, 32}, 1), mm, pm
}

// TestConstParentJacobian: the dense sweep runs through a matmul by a
// constant node (the Jacobian to the error-free constant is neither built
// nor counted against maxDense; before, the 768 × 3072 Jacobian made every
// later sweep fall back to the interval sweep, which spent the budget by
// the imported GPT-2's first block), a permute's sweep stops at its parent
// losing nothing (its bound is the parent's bound of the element it
// moves), and the bounds are sound against every float32 evaluator; a
// recorded value just outside an element's bound fails.
func TestConstParentJacobian(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		g, p, x, mm, pm := constMatmulGraph(seed)
		fo := map[int][]float64{}
		sweepSeen = func(j int, nodes []foNode, bound []float64) {
			fo[j] = append([]float64(nil), bound...)
		}
		// The matmul by the constant node: its Jacobian is read off the
		// weights (spec.LinearJac, InnerOut) bit for bit as the one-hot
		// VJP runs compute it.
		read, diff := 0, 0
		jacCompare = func(k int, li, vjp [][]float64) {
			read++
			for q := range li {
				for i := range li[q] {
					if math.Float64bits(li[q][i]) != math.Float64bits(vjp[q][i]) {
						diff++
						return
					}
				}
			}
		}
		sh, err := SharpBounds(g, p, x, Options{})
		sweepSeen, jacCompare = nil, nil
		if read == 0 || diff != 0 {
			t.Fatalf("seed %d: %d Jacobians read off the weights, %d differ from the VJP runs'", seed, read, diff)
		}
		if err != nil {
			t.Fatal(err)
		}
		if fo[mm] == nil {
			t.Fatalf("seed %d: no dense sweep from the matmul node %d", seed, mm)
		}
		if fo[pm] == nil {
			t.Fatalf("seed %d: no dense sweep from the permute node %d", seed, pm)
		}
		// permute [8, 96] → [96, 8]: element (c, r) is the matmul's (r, c).
		for c := 0; c < 96; c++ {
			for r := 0; r < 8; r++ {
				got, want := fo[pm][c*8+r], fo[mm][r*96+c]
				if !(got >= want) || !(got <= want*(1+1e-9)) {
					t.Fatalf("seed %d: permute element (%d, %d): bound %g, the matmul's (%d, %d) %g", seed, c, r, got, r, c, want)
				}
			}
		}
		rats, ivs := exactOf(g, p, x)
		for _, ev := range evaluations(t, g, p, x) {
			for i, s := range sh {
				if math.IsInf(s.FirstOrder, 1) {
					t.Fatalf("seed %d element %d: no first-order bound: %s", seed, i, s.FirstOrderReason)
				}
				if d := distTo(ev.out[i], i, rats, ivs); !(d <= s.Bound) {
					t.Fatalf("seed %d element %d, %s: |v̂ − x| = %g > bound %g", seed, i, ev.name, d, s.Bound)
				}
			}
		}
		// Just outside: the next float32 above exact.Hi + bound.
		for _, i := range []int{0, 17, len(sh) - 1} {
			s := sh[i]
			rec := float32(s.Exact.Hi + s.Bound)
			for float64(rec) <= s.Exact.Hi+s.Bound {
				rec = math.Nextafter32(rec, float32(math.Inf(1)))
			}
			if v := Judge(rec, s.Enclosure).Verdict; v != Fails {
				t.Errorf("seed %d element %d: %g just above exact %v + bound %g: %v, want FAILS", seed, i, rec, s.Exact, s.Bound, v)
			}
		}
	}
}

// TestToJacSelection: toJac's sel flag (every row at most one entry not
// the point 0) on Jacobians whose structure is known by construction.
func TestToJacSelection(t *testing.T) {
	pairs := func(rows, cols int, nz [][2]int) []float64 {
		p := make([]float64, 2*rows*cols)
		for _, e := range nz {
			p[2*(e[0]*cols+e[1])], p[2*(e[0]*cols+e[1])+1] = 1, 1
		}
		return p
	}
	for _, tc := range []struct {
		name       string
		rows, cols int
		nz         [][2]int
		sel, diag  bool
	}{
		{"slice 2 of 4", 2, 4, [][2]int{{0, 1}, {1, 3}}, true, false},
		{"broadcast 1 to 3", 3, 1, [][2]int{{0, 0}, {1, 0}, {2, 0}}, true, false},
		{"transpose 2×2", 4, 4, [][2]int{{0, 0}, {1, 2}, {2, 1}, {3, 3}}, true, false},
		{"diagonal", 3, 3, [][2]int{{0, 0}, {1, 1}, {2, 2}}, true, true},
		{"reduce 3 to 1", 1, 3, [][2]int{{0, 0}, {0, 1}, {0, 2}}, false, false},
		{"one full row", 2, 2, [][2]int{{0, 0}, {1, 0}, {1, 1}}, false, false},
	} {
		j := toJac(pairs(tc.rows, tc.cols, tc.nz), tc.rows, tc.cols)
		if j.sel != tc.sel || j.diag != tc.diag {
			t.Errorf("%s: sel %v diag %v, want %v %v", tc.name, j.sel, j.diag, tc.sel, tc.diag)
		}
	}
}
