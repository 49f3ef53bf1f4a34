package fpbound

import (
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
