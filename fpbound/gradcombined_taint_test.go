package fpbound

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// taintNet is x [1, 2, 5, 5] → pad 1 on both spatial axes → conv 3×3
// (no padding, 2 → 3 channels) → relu → slice columns [0, 4) → conv 3×3
// padding 1 (3 → 2) → [1, 2, 5, 4], seeded rationals; its reverse pass
// runs through conv_transpose, pad (slice's VJP), the relu mask and
// slice (pad's VJP).
func taintNet(seed uint64) (*irsem.Graph, *irsem.Payload, irsem.RatTensor, irsem.RatTensor) {
	r := rand.New(rand.NewPCG(seed, 7))
	tensor := func(s spec.Shape) irsem.RatTensor {
		t := irsem.RatTensor{Shape: s.Clone(), Data: make([]spec.Rat, s.Size())}
		for i := range t.Data {
			t.Data[i] = spec.NewRat(int64(r.IntN(201)-100), int64(1+r.IntN(64)))
		}
		return t
	}
	nd := func(id int, op irsem.Kind, s spec.Shape, ps ...int) irsem.Node {
		return irsem.Node{ID: id, Parents: ps, Kind: op, Shape: s}
	}
	g := &irsem.Graph{Nodes: []irsem.Node{
		nd(0, irsem.Kind{Op: irsem.OpInput}, spec.Shape{1, 2, 5, 5}),
		nd(1, irsem.Kind{Op: irsem.OpPad, Widths: []int{0, 0, 1, 1, 0, 0, 1, 1}, Mode: spec.PadConstant}, spec.Shape{1, 2, 7, 7}, 0),
		nd(2, irsem.Kind{Op: irsem.OpConv, Window: convWin([]int{3, 3}, []int{1, 1}, []int{0, 0}, []int{1, 1}, 1, 2, 3)}, spec.Shape{1, 3, 5, 5}, 1),
		nd(3, irsem.Kind{Op: irsem.OpRelu}, spec.Shape{1, 3, 5, 5}, 2),
		nd(4, irsem.Kind{Op: irsem.OpSlice, Axis: 3, Start: 0, End: 4}, spec.Shape{1, 3, 5, 4}, 3),
		nd(5, irsem.Kind{Op: irsem.OpConv, Window: convWin([]int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, 1, 3, 2)}, spec.Shape{1, 2, 5, 4}, 4),
	}, OutputID: 5}
	w1, b1, w2, b2 := tensor(spec.Shape{3, 2, 3, 3}), tensor(spec.Shape{3}), tensor(spec.Shape{2, 3, 3, 3}), tensor(spec.Shape{2})
	p := &irsem.Payload{Entries: map[int]*irsem.Params{2: {W: &w1, B: &b1}, 5: {W: &w2, B: &b2}}}
	return g, p, tensor(spec.Shape{1, 2, 5, 5}), tensor(spec.Shape{1, 2, 5, 4})
}

// TestElemTaintReach (vjp36): a relu kink in one corner of a conv stack
// taints only the input-gradient elements it can reach. On taintNet with
// the relu box of element (channel 1, row 0, column 0) widened over 0
// (the boxes elsewhere the interval evaluation's), elemTaint's marks are
// checked against the combined graph itself: evaluated over spec.Rat
// with the undecided mask element 0 and then 1, every input-gradient
// element that changes is marked (the marks are sound), and the marks
// are exactly the input elements the first conv's window at the kink
// reads — every channel, rows 0–1, columns col−1 … col+1 within the
// input — nothing beyond (before vjp36 pad, slice and conv_transpose
// marked every element). With the kink at column 4, which slice drops,
// the marks stay (mask·0 still reads the mask element: elemTaint's
// conservative rule for a zero weight) though no value changes.
func TestElemTaintReach(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		for _, col := range []int{0, 4} {
			g, p, x, dy := taintNet(seed)
			fwd, err := irsem.DenoteAll[spec.Interval](g, p, irsem.ConvertTensor[spec.Interval](x))
			if err != nil {
				t.Fatal(err)
			}
			boxes := make([]fwdBox, len(g.Nodes))
			for j, v := range fwd {
				boxes[j] = fwdBox{box: append([]spec.Interval{}, v.Data...), x: v.Data}
			}
			k := (1*5+0)*5 + col // channel 1, row 0, column col of the relu's [1, 3, 5, 5]
			boxes[3].box[k] = spec.Interval{Lo: -1, Hi: 1}
			b, cot, reason := reverseNodes(g, p, dy, boxes)
			if reason != "" {
				t.Fatal(reason)
			}
			b.c.OutputID = cot[g.InputID]
			marks := elemTaint(b.c, b.cp, b.taint)
			var mask int
			for id := range b.taint {
				mask = id
			}
			eval := func(v spec.Rat) []spec.Rat {
				c := *b.cp.Entries[mask].Value
				c.Data = append([]spec.Rat{}, c.Data...)
				c.Data[k] = v
				saved := b.cp.Entries[mask]
				b.cp.Entries[mask] = &irsem.Params{Value: &c}
				defer func() { b.cp.Entries[mask] = saved }()
				got, err := irsem.Denote[spec.Rat](b.c, b.cp, irsem.ConvertTensor[spec.Rat](x))
				if err != nil {
					t.Fatal(err)
				}
				return got.Data
			}
			a0, a1 := eval(spec.Rat{}), eval(spec.NewRat(1, 1))
			n := 0
			for m := range a0 {
				ch, row, cl := m/25, (m/5)%5, m%5
				want := row <= 1 && cl >= col-1 && cl <= col+1 && cl < 5
				marked := marks != nil && marks[m]
				if a0[m].Big().Cmp(a1[m].Big()) != 0 && !marked {
					t.Errorf("seed %d col %d: element %d (channel %d, %d, %d) depends on the undecided mask element but is not marked", seed, col, m, ch, row, cl)
				}
				if marked != want {
					t.Errorf("seed %d col %d: element %d (channel %d, %d, %d): marked %v, want %v", seed, col, m, ch, row, cl, marked, want)
				}
				if marked {
					n++
				}
			}
			t.Logf("seed %d, kink at column %d: %d of %d input-gradient elements marked", seed, col, n, len(a0))
		}
	}
}

// TestGradCombinedBNPool (vjp36): x [1, 2, 6, 6] → batch_norm_eval →
// relu → max_pool 3×3 stride 2 padding 1 (ResNet's stem) → [1, 2, 3, 3],
// seeded dyadic data, β ≥ 8 so every relu is decided above 0 (relu is
// there because batch_norm_eval's pending sum fuses into a single
// consumer: a max pool reading it directly has no box to decide from). The combined bound exists; the test's own float32
// gradient — forward in float32, the cotangent routed to each window's
// float32 maximiser and summed over overlapping windows in increasing
// and in decreasing output order, then fl(fl(dx·γ)/s), s =
// fl(sqrt(fl(σ² + ε))) — holds on every input-gradient element against
// the combined enclosure; the float32 just outside each fails; the
// smallest planted relative error caught in the largest element is
// logged.
func TestGradCombinedBNPool(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		dyad := func(s spec.Shape, lo, n, den int) irsem.RatTensor {
			v := irsem.RatTensor{Shape: s.Clone(), Data: make([]spec.Rat, s.Size())}
			for i := range v.Data {
				v.Data[i] = spec.NewRat(int64(lo+r.IntN(n)), int64(den))
			}
			return v
		}
		mean, vr, gm, be := dyad(spec.Shape{2}, -32, 64, 64), dyad(spec.Shape{2}, 16, 64, 32), dyad(spec.Shape{2}, -64, 128, 64), dyad(spec.Shape{2}, 512, 64, 64)
		eps := spec.NewRat(1, 1024)
		g := &irsem.Graph{Nodes: []irsem.Node{
			{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: spec.Shape{1, 2, 6, 6}},
			{ID: 1, Parents: []int{0}, Kind: irsem.Kind{Op: irsem.OpBatchNormEval, ChannelAxis: 1, Channels: 2}, Shape: spec.Shape{1, 2, 6, 6}},
			{ID: 2, Parents: []int{1}, Kind: irsem.Kind{Op: irsem.OpRelu}, Shape: spec.Shape{1, 2, 6, 6}},
			{ID: 3, Parents: []int{2}, Kind: irsem.Kind{Op: irsem.OpMaxPool, Window: &spec.Window{Kernel: []int{3, 3}, Stride: []int{2, 2}, Padding: []int{1, 1}}}, Shape: spec.Shape{1, 2, 3, 3}},
		}, OutputID: 3}
		p := &irsem.Payload{Entries: map[int]*irsem.Params{1: {Mean: &mean, Var: &vr, Gamma: &gm, Beta: &be, Eps: &eps}}}
		x, dy := dyad(spec.Shape{1, 2, 6, 6}, -512, 1024, 128), dyad(spec.Shape{1, 2, 3, 3}, -256, 512, 128)
		gb, err := GradErrSharp(g, p, x, dy, Options{}, false)
		if err != nil {
			t.Fatal(err)
		}
		if gb.Combined == nil {
			t.Fatalf("seed %d: no combined bound: %s", seed, gb.CombinedReason)
		}
		f := func(v spec.Rat) float32 { f, _ := v.Big().Float32(); return f }
		// float32 forward: y = fl(fl(fl(x − μ)/s)·γ) + β)
		s32 := make([]float32, 2)
		for c := range s32 {
			s32[c] = float32(math.Sqrt(float64(f(vr.Data[c]) + f(eps))))
		}
		y := make([]float32, 72)
		for i := range y {
			c := i / 36
			y[i] = max((f(x.Data[i])-f(mean.Data[c]))/s32[c]*f(gm.Data[c])+f(be.Data[c]), 0)
		}
		for _, rev := range []bool{false, true} {
			d1 := make([]float32, 72)
			for oo := 0; oo < 18; oo++ {
				o := oo
				if rev {
					o = 17 - oo
				}
				c, oy, ox := o/9, (o/3)%3, o%3
				best := -1
				for ky := 0; ky < 3; ky++ {
					for kx := 0; kx < 3; kx++ {
						py, px := oy*2-1+ky, ox*2-1+kx
						if py < 0 || py >= 6 || px < 0 || px >= 6 {
							continue
						}
						if i := c*36 + py*6 + px; best < 0 || y[i] > y[best] {
							best = i
						}
					}
				}
				d1[best] += f(dy.Data[o])
			}
			worst := 0
			for i, e := range gb.Combined {
				c := i / 36
				if y[i] <= 0 {
					t.Fatalf("seed %d: element %d: relu not above 0", seed, i)
				}
				v := d1[i] * f(gm.Data[c]) / s32[c]
				if !combinedHolds(v, e) {
					t.Errorf("seed %d rev %v: element %d: float32 %v outside %v ± %g", seed, rev, i, v, e.Exact, e.Bound)
				}
				for _, w := range []float32{math.Nextafter32(float32(e.Exact.Lo-e.Bound), float32(math.Inf(-1))), math.Nextafter32(float32(e.Exact.Hi+e.Bound), float32(math.Inf(1)))} {
					if float64(w) < e.Exact.Lo-e.Bound || float64(w) > e.Exact.Hi+e.Bound {
						continue
					}
					t.Errorf("seed %d: element %d: float32 %v just outside holds", seed, i, w)
				}
				if math.Abs(float64(v)) > math.Abs(float64(d1[worst]*f(gm.Data[worst/36])/s32[worst/36])) {
					worst = i
				}
			}
			e := gb.Combined[worst]
			v := float64(d1[worst] * f(gm.Data[worst/36]) / s32[worst/36])
			caught := "none"
			for k := 9; k >= 1; k-- {
				p := float32(v * (1 + math.Pow(10, -float64(k))))
				if !combinedHolds(p, e) {
					caught = fmt.Sprintf("1e-%d", k)
					break
				}
			}
			if caught == "none" {
				t.Errorf("seed %d: no planted relative error up to 10⁻¹ caught in element %d", seed, worst)
			}
			t.Logf("seed %d rev %v: largest element %d = %.4g, combined bound %.3g: planted relative error caught %s", seed, rev, worst, v, e.Bound, caught)
		}
	}
}

// combinedHolds: v lies within e.Bound of e.Exact.
func combinedHolds(v float32, e Enclosure) bool {
	return float64(v) >= e.Exact.Lo-e.Bound && float64(v) <= e.Exact.Hi+e.Bound
}
