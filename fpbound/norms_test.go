package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// groupNormGraph is the imported torch GroupNorm pattern (tools/models
// unet: conv, reshape to [N, groups, ·], instance_norm, reshape back): a
// [1, 2, 5, 5] input, conv 2→4 (3×3, pad 1), reshape [1, 2, 50],
// instance_norm over the 50 values of each group (γ, β per group), reshape
// [1, 4, 5, 5]. It returns the graph and the ids of the conv, the first
// reshape and the norm.
func groupNormGraph(seed uint64) (*irsem.Graph, *irsem.Payload, irsem.RatTensor, [3]int) {
	r := newRand(seed)
	b := newBuilder(spec.Shape{1, 2, 5, 5})
	w := spec.Window{Kernel: []int{3, 3}, Stride: []int{1, 1}, Padding: []int{1, 1}, Dilation: []int{1, 1}, Groups: 1, InChannels: 2, OutChannels: 4}
	conv := b.node(irsem.Kind{Op: irsem.OpConv, Window: &w}, spec.Shape{1, 4, 5, 5}, 0)
	wt, bt := randTensor(r, spec.Shape{4, 2, 3, 3}, 0.3), randTensor(r, spec.Shape{4}, 0.1)
	b.p.Entries[conv] = &irsem.Params{W: &wt, B: &bt}
	rs := b.node(irsem.Kind{Op: irsem.OpReshape, InShape: spec.Shape{1, 4, 5, 5}, OutShape: spec.Shape{1, 2, 50}}, spec.Shape{1, 2, 50}, conv)
	nm := b.node(irsem.Kind{Op: irsem.OpInstanceNorm, Channels: 2}, spec.Shape{1, 2, 50}, rs)
	ga, be := randTensor(r, spec.Shape{2}, 1), randTensor(r, spec.Shape{2}, 0.1)
	eps := irsem.DefaultEps()
	b.p.Entries[nm] = &irsem.Params{Gamma: &ga, Beta: &be, Eps: &eps}
	b.node(irsem.Kind{Op: irsem.OpReshape, InShape: spec.Shape{1, 2, 50}, OutShape: spec.Shape{1, 4, 5, 5}}, spec.Shape{1, 4, 5, 5}, nm)
	return b.g, b.p, randTensor(r, spec.Shape{1, 2, 5, 5}, 1), [3]int{conv, rs, nm}
}

// lnAttentionGraph is a LayerNorm after attention, as transformers' ViT
// exports it (the norm decomposed: reduce_mean, sub, mul_elem(d, d),
// reduce_mean, + ε, sqrt, inv, mul): x [5, 8] (input), scores x·K [5, 5],
// softmax, values x·V with V's columns equal up to a relative δ (so each
// row of the attention output varies by about δ, below the rounding
// errors of its sums), a = softmax·values, then the norm of a's rows with
// ε = 10⁻¹² (ViT's layer_norm_eps).
func lnAttentionGraph(seed uint64, delta float64) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	r := newRand(seed)
	b := newBuilder(spec.Shape{5, 8})
	k := b.konst(randTensor(r, spec.Shape{8, 5}, 0.5))
	s := b.node(irsem.Kind{Op: irsem.OpMatmul}, spec.Shape{5, 5}, 0, k)
	p := b.node(irsem.Kind{Op: irsem.OpSoftmax, Axis: 1}, spec.Shape{5, 5}, s)
	vt := irsem.RatTensor{Shape: spec.Shape{8, 8}, Data: make([]spec.Rat, 64)}
	for i := 0; i < 8; i++ {
		c := r.NormFloat64()
		for j := 0; j < 8; j++ {
			vt.Data[i*8+j], _ = spec.RatFromFloat64(float64(float32(c * (1 + delta*r.NormFloat64()))))
		}
	}
	v := b.node(irsem.Kind{Op: irsem.OpMatmul}, spec.Shape{5, 8}, 0, b.konst(vt))
	a := b.node(irsem.Kind{Op: irsem.OpMatmul}, spec.Shape{5, 8}, p, v)
	mu := b.node(irsem.Kind{Op: irsem.OpReduceMean, Axis: 1}, spec.Shape{5}, a)
	mu = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: spec.Shape{5}, OutShape: spec.Shape{5, 1}}, spec.Shape{5, 1}, mu)
	mu = b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{5, 1}, ToShape: spec.Shape{5, 8}}, spec.Shape{5, 8}, mu)
	d := b.node(irsem.Kind{Op: irsem.OpSub}, spec.Shape{5, 8}, a, mu)
	sq := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{5, 8}, d, d)
	vr := b.node(irsem.Kind{Op: irsem.OpReduceMean, Axis: 1}, spec.Shape{5}, sq)
	et := irsem.RatTensor{Shape: spec.Shape{}, Data: []spec.Rat{spec.RatFromBig(big.NewRat(1, 1000000000000))}}
	e := b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{}, ToShape: spec.Shape{5}}, spec.Shape{5}, b.konst(et))
	vr = b.node(irsem.Kind{Op: irsem.OpAdd}, spec.Shape{5}, vr, e)
	sd := b.node(irsem.Kind{Op: irsem.OpSqrt}, spec.Shape{5}, vr)
	iv := b.node(irsem.Kind{Op: irsem.OpInv}, spec.Shape{5}, sd)
	iv = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: spec.Shape{5}, OutShape: spec.Shape{5, 1}}, spec.Shape{5, 1}, iv)
	iv = b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{5, 1}, ToShape: spec.Shape{5, 8}}, spec.Shape{5, 8}, iv)
	b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{5, 8}, d, iv)
	return b.g, b.p, randTensor(r, spec.Shape{5, 8}, 1)
}

// soundAndSharp checks the bounds sh of (g, p, x): every element of every
// float32 evaluator within its bound, and a value just outside the bound
// (the next float32 above exact.Hi + bound) FAILS. It returns the largest
// bound.
func soundAndSharp(t *testing.T, name string, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor, sh []Sharp) float64 {
	t.Helper()
	rats, ivs := exactOf(g, p, x)
	for _, ev := range evaluations(t, g, p, x) {
		for i, s := range sh {
			if d := distTo(ev.out[i], i, rats, ivs); !(d <= s.Bound) {
				t.Fatalf("%s element %d, %s: |v̂ − x| = %g > bound %g", name, i, ev.name, d, s.Bound)
			}
		}
	}
	worst := 0.0
	for i, s := range sh {
		worst = math.Max(worst, s.Bound)
		if math.IsInf(s.Bound, 1) || i%7 != 0 {
			continue
		}
		rec := float32(s.Exact.Hi + s.Bound)
		for float64(rec) <= s.Exact.Hi+s.Bound {
			rec = math.Nextafter32(rec, float32(math.Inf(1)))
		}
		if v := Judge(rec, s.Enclosure).Verdict; v != Fails {
			t.Errorf("%s element %d: %g just above exact %v + bound %g: %v, want FAILS", name, i, rec, s.Exact, s.Bound, v)
		}
	}
	return worst
}

// TestGroupNormClosesConv: the norm's formula reads each element of its
// input more than once (mean, variance, x − μ), counted over the reads
// algebra, so the conv's pending sum (fused into the reshape, a move that
// reads each element once) is also carried into the norm closed, and
// each local value of the norm is the smaller of the two (the nested sums
// charged γ_18 and γ_49, not γ_949 as one sum of 50·19 terms): the
// largest first-order bound is smaller than with the pending sums only,
// sound against every float32 evaluator, and a value just outside it
// FAILS.
func TestGroupNormClosesConv(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		g, p, x, ids := groupNormGraph(seed)
		apps, err := irsem.Applications(g, p)
		if err != nil {
			t.Fatal(err)
		}
		counts, ok := readCounts(g, apps, ids[2], ids[1])
		if !ok {
			t.Fatalf("seed %d: instance_norm's read counts unknown", seed)
		}
		for m, n := range counts {
			if n != 3 { // Σx for μ, x − μ for σ², x − μ for x̂
				t.Fatalf("seed %d: instance_norm reads element %d in %d slots, want 3", seed, m, n)
			}
		}
		if !rereadsAll(g, apps, ids[2], ids[1]) || rereadsAll(g, apps, ids[1], ids[0]) {
			t.Fatalf("seed %d: rereadsAll(norm, reshape) = %v, rereadsAll(reshape, conv) = %v; want true, false", seed,
				rereadsAll(g, apps, ids[2], ids[1]), rereadsAll(g, apps, ids[1], ids[0]))
		}
		sh, old := closingBothWays(t, g, p, x)
		newMax, oldMax := 0.0, 0.0
		for i := range sh {
			newMax, oldMax = math.Max(newMax, sh[i].FirstOrder), math.Max(oldMax, old[i].FirstOrder)
		}
		if !(newMax < oldMax) {
			t.Errorf("seed %d: largest first-order bound %g, fused into the norm %g: want smaller", seed, newMax, oldMax)
		}
		t.Logf("seed %d: largest first-order bound %.3g (fused into the norm: %.3g)", seed, newMax, oldMax)
		soundAndSharp(t, "groupnorm", g, p, x, sh)
	}
}

// closingBothWays returns SharpBounds of (g, p, x) with sums closed
// before a repeated read (the default) and without.
func closingBothWays(t *testing.T, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) (closed, fused []Sharp) {
	t.Helper()
	closed, err := SharpBounds(g, p, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeBeforeRereads = false
	defer func() { closeBeforeRereads = true }()
	fused, err = SharpBounds(g, p, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return closed, fused
}

// TestClosingNeverWorse: closing before a repeated read only ever takes
// the smaller of two bounds of one local error (doc.go, "Sums closed
// before a repeated read"), so no element's first-order bound exceeds the
// one with the pending sums only: on the GroupNorm graphs and on the
// GPT-2 stacks whose masked scores (s + finfo.min, read twice by softmax)
// made the bound of closing at the node itself +∞ (2 blocks: TestFigures
// then missed its planted fault; 6 blocks: TestFirstOrderBallBoxes).
func TestClosingNeverWorse(t *testing.T) {
	skipUnderRace(t)
	type tc struct {
		name    string
		g       *irsem.Graph
		p       *irsem.Payload
		x       irsem.RatTensor
		reduced bool // some element's bound must be strictly smaller
	}
	var cases []tc
	for _, seed := range []uint64{1, 2} {
		g, p, x, _ := groupNormGraph(seed)
		cases = append(cases, tc{fmt.Sprintf("groupnorm seed %d", seed), g, p, x, true})
	}
	for _, blocks := range []int{2} {
		n, err := nets.GPT2(uint64(300+blocks), 4, 8, 2, blocks, nets.Default, nets.FinfoMin)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tc{n.Name, n.Graph, n.Payload, n.Input, false})
	}
	for _, c := range cases {
		closed, fused := closingBothWays(t, c.g, c.p, c.x)
		less := false
		for i := range closed {
			if math.IsInf(closed[i].FirstOrder, 1) || closed[i].FirstOrder > fused[i].FirstOrder {
				t.Fatalf("%s element %d: first-order bound %g closing, %g fused", c.name, i, closed[i].FirstOrder, fused[i].FirstOrder)
			}
			less = less || closed[i].FirstOrder < fused[i].FirstOrder
		}
		if c.reduced && !less {
			t.Errorf("%s: no element's bound smaller closing", c.name)
		}
	}
}

// TestLayerNormSquareOfOneNode: in the decomposed layer norm the variance
// is mul_elem(d, d), one node in both parent slots. The first-order
// pass's forward boxes and local errors give both slots the same value
// (one id per element), so d·d is the square's range, never below 0, and
// σ² + ε stays ≥ ε > 0: the bound is finite where, with the slots
// independent intervals (the bound before), d·d of a box straddling 0
// reached below −ε and √ made it +∞. Sound against every float32
// evaluator, and a value just outside the bound FAILS.
func TestLayerNormSquareOfOneNode(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		g, p, x := lnAttentionGraph(seed, 1e-7)
		// Without the shared slots, the sign floors and Max's lower
		// bounds (box_sign.go), which rescue the square's box on their own.
		shareRepeatedSlots, signFloors, maxLowerBounds = false, false, false
		old, err := SharpBounds(g, p, x, Options{})
		shareRepeatedSlots, signFloors, maxLowerBounds = true, true, true
		if err != nil {
			t.Fatal(err)
		}
		sh, err := SharpBounds(g, p, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		oldInf, newInf := 0, 0
		for i := range sh {
			if math.IsInf(old[i].Bound, 1) {
				oldInf++
			}
			if math.IsInf(sh[i].Bound, 1) {
				newInf++
				t.Errorf("seed %d element %d: bound +∞: %s", seed, i, sh[i].FirstOrderReason)
			}
		}
		if oldInf == 0 {
			t.Errorf("seed %d: every bound was already finite without the shared slots (the test no longer shows the change)", seed)
		}
		worst := soundAndSharp(t, "layernorm", g, p, x, sh)
		t.Logf("seed %d: %d of %d bounds +∞ before, %d now; largest bound %.3g", seed, oldInf, len(sh), newInf, worst)
	}
}

// groupNormSigmoidGraph is groupNormGraph followed by SiLU as torch
// exports it, x·sigmoid(x) (so the norm's output has two children and is
// a closed value, as in the UNet's blocks), with the
// norm's β of the group of one element (the one nearest 0 in group 0)
// shifted, by a binary32 amount, so that the element's exact value is
// within a few float32 roundings of 0: its box, some 10⁻⁵ wide, straddles
// sigmoid's sign split. It returns the graph and that element.
func groupNormSigmoidGraph(t *testing.T, seed uint64) (*irsem.Graph, *irsem.Payload, irsem.RatTensor, int) {
	t.Helper()
	g, p, x, ids := groupNormGraph(seed)
	y, err := irsem.Denote(g, p, irsem.ConvertTensor[spec.Interval](x))
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for i := range 50 {
		if math.Abs(y.Data[i].Float64()) < math.Abs(y.Data[k].Float64()) {
			k = i
		}
	}
	beta := p.Entries[ids[2]].Beta
	b0, _ := beta.Data[0].Big().Float64()
	beta.Data[0], err = spec.RatFromFloat64(float64(float32(b0 - y.Data[k].Float64())))
	if err != nil {
		t.Fatal(err)
	}
	out, sh := g.OutputID, g.Nodes[g.OutputID].Shape
	g.Nodes = append(g.Nodes, irsem.Node{ID: out + 1, Parents: []int{out}, Kind: irsem.Kind{Op: irsem.OpSigmoid}, Shape: sh},
		irsem.Node{ID: out + 2, Parents: []int{out, out + 1}, Kind: irsem.Kind{Op: irsem.OpMulElem}, Shape: sh})
	g.OutputID = out + 2
	return g, p, x, k
}

// TestSigmoidSplitStraddled: an element of the GroupNorm's output whose
// box straddles 0, sigmoid's sign split. Without the split the local
// error of sigmoid is undecided there and no first-order bound exists
// (and the classic comparison is undecided too: the element has no
// bound); with it (doc.go, "Split primitives in the local errors") every
// element's bound is finite, every float32 evaluator is within it, and
// the next float32 above exact + bound FAILS.
func TestSigmoidSplitStraddled(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		g, p, x, k := groupNormSigmoidGraph(t, seed)
		splitLocal = false
		off, err := SharpBounds(g, p, x, Options{})
		splitLocal = true
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsInf(off[k].Bound, 1) {
			t.Fatalf("seed %d element %d: bound %g without the split: the box does not straddle 0 (reason %q)", seed, k, off[k].Bound, off[k].Reason)
		}
		sh, err := SharpBounds(g, p, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range sh {
			if math.IsInf(s.FirstOrder, 1) {
				t.Fatalf("seed %d element %d: first-order bound +∞ with the split: %s", seed, i, s.FirstOrderReason)
			}
		}
		worst := soundAndSharp(t, "groupnorm+sigmoid", g, p, x, sh)
		// The straddling element itself: just outside its bound FAILS.
		s := sh[k]
		rec := float32(s.Exact.Hi + s.Bound)
		for float64(rec) <= s.Exact.Hi+s.Bound {
			rec = math.Nextafter32(rec, float32(math.Inf(1)))
		}
		if v := Judge(rec, s.Enclosure).Verdict; v != Fails {
			t.Errorf("seed %d element %d: %g just above exact %v + bound %g: %v, want FAILS", seed, k, rec, s.Exact, s.Bound, v)
		}
		t.Logf("seed %d: straddling element %d (exact %.3g) bound %.3g (classic %.3g); largest bound %.3g; without the split: %s",
			seed, k, s.Exact.Float64(), s.Bound, s.Classic, worst, off[k].Reason)
	}
}
