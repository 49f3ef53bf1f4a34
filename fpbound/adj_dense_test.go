package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// adjOperands draws a conv case's operands over adj: x a box per element
// (a third points, a third exact zeros with the case's zeros, the rest
// intervals of random width, some wide), W binary32 points or, with
// ivWeights, a quarter of them the interval FromRat gives a non-dyadic
// p/q, and b likewise.
func adjOperands(c convCase, ivWeights bool) (x, w, b spec.Tensor[adj]) {
	r := rand.New(rand.NewPCG(c.seed, 29))
	xs, ws := c.shapes()
	x = spec.Tensor[adj]{Shape: xs, Data: make([]adj, xs.Size())}
	for i := range x.Data {
		x.Data[i] = drawAdj(r, c.zeros)
	}
	weight := func() adj {
		if ivWeights && r.IntN(4) == 0 {
			return adj{}.FromRat(big.NewRat(int64(r.IntN(2001)-1000), int64(3+2*r.IntN(500))))
		}
		v := randF32(r, 1)
		return adj{iv: spec.Interval{Lo: v, Hi: v}}
	}
	w = spec.Tensor[adj]{Shape: ws, Data: make([]adj, ws.Size())}
	for i := range w.Data {
		w.Data[i] = weight()
	}
	b = spec.Tensor[adj]{Shape: spec.Shape{c.cout}, Data: make([]adj, c.cout)}
	for i := range b.Data {
		b.Data[i] = weight()
	}
	return x, w, b
}

// drawAdj draws one box: a binary32 point, an exact zero (with zeros), or
// an interval whose width is up to 10⁻² or, one time in six, up to 2.
func drawAdj(r *rand.Rand, zeros bool) adj {
	lo := randF32(r, 4)
	switch k := r.IntN(6); {
	case zeros && k == 0:
		return adj{}
	case k <= 2:
		return adj{iv: spec.Interval{Lo: lo, Hi: lo}}
	case k == 5:
		return adj{iv: spec.Interval{Lo: lo, Hi: lo + math.Abs(randF32(r, 2))}}
	}
	return adj{iv: spec.Interval{Lo: lo, Hi: lo + math.Abs(randF32(r, 0.01))}}
}

// ratRange is the exact range [lo, hi] of Σ_k x_k·w_k (+ b) over the
// boxes: the terms are independent (no operand appears twice in one sum),
// so it is the sum of each product's range, the min and max of its four
// corner products, computed in big.Rat.
// It also keeps abs, the sum of the terms' largest magnitudes, and n, the
// number of terms.
type ratRange struct {
	lo, hi, abs *big.Rat
	n           *int
}

func newRange() ratRange { return ratRange{new(big.Rat), new(big.Rat), new(big.Rat), new(int)} }

func (s ratRange) addProduct(x, w spec.Interval) {
	*s.n++
	var lo, hi *big.Rat
	for _, a := range []float64{x.Lo, x.Hi} {
		for _, b := range []float64{w.Lo, w.Hi} {
			p := new(big.Rat).Mul(rat(a), rat(b))
			if lo == nil || p.Cmp(lo) < 0 {
				lo = p
			}
			if hi == nil || p.Cmp(hi) > 0 {
				hi = p
			}
		}
	}
	s.lo.Add(s.lo, lo)
	s.hi.Add(s.hi, hi)
	s.abs.Add(s.abs, new(big.Rat).Abs(lo))
	s.abs.Add(s.abs, new(big.Rat).Abs(hi))
}

func (s ratRange) addBox(b spec.Interval) {
	*s.n++
	s.abs.Add(s.abs, new(big.Rat).Abs(rat(b.Lo)))
	s.abs.Add(s.abs, new(big.Rat).Abs(rat(b.Hi)))
	s.lo.Add(s.lo, rat(b.Lo))
	s.hi.Add(s.hi, rat(b.Hi))
}

// widthStats compares enclosures y with the exact ranges and the fold's
// enclosures f: it returns the first element whose enclosure misses part
// of its exact range ("" when none), how many elements differ from the
// fold in some bit, the largest ratio of y's width to the fold's over the
// elements whose exact range is wide (at least 2⁻²⁰ of its magnitude: the
// width is the boxes', as in the first-order bound's forward pass), and
// over the narrow ones (points: the width is rounding alone, which the
// fold charges operation by operation, often 0 for a few binary32
// products, and the dense path a priori) the largest ratio of the width
// beyond the exact range to that a-priori charge 2·N·u·Σ|x||w|, N = terms
// the kernel's contraction length (C_in/groups·Πk for a conv, window
// positions over the padding included, plus the bias). abs bounds
// Σ|x||w| (up to a factor 2: each term's two extreme corners).
func widthStats(y, f []adj, ex []ratRange, terms int) (miss string, differ int, wide, narrow float64) {
	for i := range y {
		lo, hi := rat(y[i].iv.Lo), rat(y[i].iv.Hi)
		if lo.Cmp(ex[i].lo) > 0 || hi.Cmp(ex[i].hi) < 0 {
			if miss == "" {
				miss = fmt.Sprintf("element %d: %v misses part of the exact range [%s, %s]", i, y[i].iv,
					ex[i].lo.FloatString(25), ex[i].hi.FloatString(25))
			}
			continue
		}
		if y[i].iv != f[i].iv {
			differ++
		}
		exLo, _ := ex[i].lo.Float64()
		exHi, _ := ex[i].hi.Float64()
		mag := max(math.Abs(exLo), math.Abs(exHi))
		if exHi-exLo >= math.Ldexp(mag, -20) {
			floor := math.Ldexp(1, -1000)
			wide = max(wide, max(y[i].iv.Hi-y[i].iv.Lo, floor)/max(f[i].iv.Hi-f[i].iv.Lo, floor))
			continue
		}
		excess := new(big.Rat).Sub(ex[i].lo, lo)
		excess.Add(excess, new(big.Rat).Sub(hi, ex[i].hi))
		charge := new(big.Rat).Mul(ex[i].abs, big.NewRat(int64(terms), 1<<52))
		if charge.Sign() > 0 {
			r, _ := new(big.Rat).Quo(excess, charge).Float64()
			narrow = max(narrow, r)
		} else if excess.Sign() != 0 {
			narrow = math.Inf(1)
		}
	}
	return miss, differ, wide, narrow
}

// adjFold is the element fold of spec.Interval over the terms (adj's own
// Mul and Add, from 0, then the bias): the reference whose width the
// dense path is held to.
func adjFold(xs, ws []adj, b *adj) adj {
	var zero adj
	v := spec.FoldDot(zero, xs, ws)
	if b != nil {
		v = v.Add(*b)
	}
	return v
}

// adjConvCases are convCases plus a wide one large enough for the
// a-priori term to dominate (144 terms per output).
func adjConvCases() []convCase {
	return append(convCases(), convCase{lead: 1, cin: 16, cout: 12, groups: 1, n: []int{6, 6}, k: []int{3, 3},
		s: []int{1, 1}, d: []int{1, 1}, pads: []int{1, 1, 1, 1}, bias: true, zeros: true, seed: 8})
}

// TestAdjConvDenseForward: conv and conv_transpose over adj through the
// registry (the dense path) on random boxes — strides, pads, dilations,
// groups, bias, 1-D to 3-D, binary32 and interval weights — enclose the
// whole exact range of every output (computed in big.Rat from the
// convolution's definition), differ from the element fold (so the dense
// path ran), and are at most a small factor wider than the fold.
func TestAdjConvDenseForward(t *testing.T) {
	worstWide, worstNarrow := 0.0, 0.0
	for _, c := range adjConvCases() {
		for _, ivw := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/ivw=%v", c, ivw), func(t *testing.T) {
				x, w, b := adjOperands(c, ivw)
				y := adjConvForward(t, c, x, w, b)
				terms := c.terms()
				if len(y.Data) != len(terms) {
					t.Fatalf("%d outputs, the definition gives %d", len(y.Data), len(terms))
				}
				sp := prodInts(c.outExtent())
				f := make([]adj, len(terms))
				ex := make([]ratRange, len(terms))
				for i, ts := range terms {
					xs, ws := make([]adj, len(ts)), make([]adj, len(ts))
					ex[i] = newRange()
					for k, p := range ts {
						xs[k], ws[k] = x.Data[p[0]], w.Data[p[1]]
						ex[i].addProduct(xs[k].iv, ws[k].iv)
					}
					var bv *adj
					if c.bias {
						bv = &b.Data[(i/sp)%c.cout]
						ex[i].addBox(bv.iv)
					}
					f[i] = adjFold(xs, ws, bv)
				}
				n := c.cin / c.groups * prodInts(c.k)
				if c.bias {
					n++
				}
				miss, differ, wide, narrow := widthStats(y.Data, f, ex, n)
				if miss != "" {
					t.Fatal(miss)
				}
				if differ == 0 {
					t.Error("every output is the fold's bit for bit: the dense path did not run")
				}
				checkWidths(t, wide, narrow)
				worstWide, worstNarrow = max(worstWide, wide), max(worstNarrow, narrow)
			})
		}
	}
	t.Logf("largest width over the fold's on wide boxes: %.6g×; on points, largest excess over 2·N·u·Σ|x||w|: %.3g×", worstWide, worstNarrow)
}

// adjWideFactor bounds the dense enclosure's width relative to the
// fold's on wide boxes, adjNarrowFactor its excess width on points
// relative to the a-priori charge (see widthStats): 2ρ ≈ 2·g·F·Σ|x||w|,
// g ≈ N·u, F ≈ 1, with Σ|x||w| ≤ abs.
const (
	adjWideFactor   = 1.01
	adjNarrowFactor = 2.0
)

// checkWidths reports widths beyond adjWideFactor and adjNarrowFactor.
func checkWidths(t *testing.T, wide, narrow float64) {
	t.Helper()
	if wide > adjWideFactor {
		t.Errorf("an enclosure of a wide range is %.4g times the fold's width (at most %g)", wide, adjWideFactor)
	}
	if narrow > adjNarrowFactor {
		t.Errorf("an enclosure of a narrow range exceeds it by %.4g times the a-priori charge (at most %g)", narrow, adjNarrowFactor)
	}
}

// adjConvForward runs the registry's conv or conv_transpose over adj.
func adjConvForward(t *testing.T, c convCase, x, w, b spec.Tensor[adj]) spec.Tensor[adj] {
	t.Helper()
	p, err := spec.Default[adj]().Lookup(c.opName())
	if err != nil {
		t.Fatal(err)
	}
	xs := []spec.Tensor[adj]{x, w}
	if c.bias {
		xs = append(xs, b)
	}
	y, err := p.Forward(&spec.Attrs{Window: c.window()}, xs)
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	return y
}

func (c convCase) opName() string {
	if c.transposed {
		return "conv_transpose"
	}
	return "conv"
}

func (c convCase) window() *spec.Window {
	win := &spec.Window{Kernel: c.k, Stride: c.s, Pads: c.pads, Dilation: c.d, Groups: c.groups}
	if c.transposed {
		win.OutputPadding = c.op
	}
	return win
}

// TestAdjConvDenseVJP: the VJP in x of conv and conv_transpose over adj,
// through VJPNeed as the sweeps call it (x only) and through VJP (all
// parents), on random interval cotangents — a third exact zeros, as the
// sweeps' mostly one-hot ones — enclose the exact range of every
// Σ dy·W that the definition pairs with each input element, differ from
// the element fold, and are at most a small factor wider than it.
func TestAdjConvDenseVJP(t *testing.T) {
	worstWide, worstNarrow := 0.0, 0.0
	for _, c := range adjConvCases() {
		t.Run(c.String(), func(t *testing.T) {
			x, w, b := adjOperands(c, c.seed%2 == 0)
			y := adjConvForward(t, c, x, w, b)
			r := rand.New(rand.NewPCG(c.seed, 31))
			dy := spec.Tensor[adj]{Shape: y.Shape, Data: make([]adj, len(y.Data))}
			for i := range dy.Data {
				dy.Data[i] = drawAdj(r, true)
			}
			// The definition's pairs, grouped by input element.
			dys, ws := make([][]adj, len(x.Data)), make([][]adj, len(x.Data))
			for o, ts := range c.terms() {
				for _, p := range ts {
					dys[p[0]] = append(dys[p[0]], dy.Data[o])
					ws[p[0]] = append(ws[p[0]], w.Data[p[1]])
				}
			}
			f := make([]adj, len(x.Data))
			ex := make([]ratRange, len(x.Data))
			for i := range f {
				f[i] = adjFold(dys[i], ws[i], nil)
				ex[i] = newRange()
				for k := range dys[i] {
					ex[i].addProduct(dys[i][k].iv, ws[i][k].iv)
				}
			}
			p, err := spec.Default[adj]().Lookup(c.opName())
			if err != nil {
				t.Fatal(err)
			}
			xs := []spec.Tensor[adj]{x, w}
			need := []bool{true, false}
			if c.bias {
				xs, need = append(xs, b), append(need, false)
			}
			a := &spec.Attrs{Window: c.window()}
			masked, err := p.VJPNeed(a, xs, y, dy, need)
			if err != nil {
				t.Fatal(err)
			}
			all, err := p.VJP(a, xs, y, dy)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range [][]adj{masked[0].Data, all[0].Data} {
				miss, differ, wide, narrow := widthStats(got, f, ex, c.cout/c.groups*prodInts(c.k))
				if miss != "" {
					t.Fatal(miss)
				}
				if differ == 0 {
					t.Error("every element is the fold's bit for bit: the dense path did not run")
				}
				checkWidths(t, wide, narrow)
				worstWide, worstNarrow = max(worstWide, wide), max(worstNarrow, narrow)
			}
		})
	}
	t.Logf("largest width over the fold's on wide boxes: %.6g×; on points, largest excess over 2·N·u·Σ|x||w|: %.3g×", worstWide, worstNarrow)
}

// TestAdjDensePlanted plants radius errors in adj's dense kernel (through
// adjLinearDense's shrink, on convCases()[0] gathered by im2col) and
// checks that the exact-range test of TestAdjConvDenseForward catches
// them: on point boxes, where the radius is only the a-priori rounding
// term, dropping it (shrink 0); on interval boxes, dropping the radius and
// shrinking it by 2⁻ᵏ for every k up to adjShrinkCaught. It logs the
// smallest relative shrink caught (the sensitivity).
func TestAdjDensePlanted(t *testing.T) {
	c := convCases()[0]
	sp, kk := prodInts(c.outExtent()), c.cin*prodInts(c.k)
	src, terms := im2col(c), c.terms()
	// The operands and their exact ranges, once per kind of box; run then
	// only reruns the kernel with a planted shrink.
	type setup struct {
		x, w, b spec.Tensor[adj]
		ex      []ratRange
	}
	setups := map[bool]setup{}
	for _, points := range []bool{true, false} {
		x, w, b := adjOperands(c, false)
		if points {
			for i := range x.Data {
				x.Data[i].iv.Hi = x.Data[i].iv.Lo
			}
		}
		ex := make([]ratRange, len(terms))
		for i, ts := range terms {
			ex[i] = newRange()
			for _, p := range ts {
				ex[i].addProduct(x.Data[p[0]].iv, w.Data[p[1]].iv)
			}
			ex[i].addBox(b.Data[i/sp].iv)
		}
		setups[points] = setup{x, w, b, ex}
	}
	run := func(points bool, shrink float64) string {
		st := setups[points]
		yt := make([]adj, sp*c.cout)
		if !adjLinearDense(st.x.Data, src, st.w.Data, st.b.Data, yt, sp, c.cout, kk, true, shrink) {
			t.Fatal("the dense path did not apply")
		}
		y := make([]adj, len(yt)) // [o][co] → [co][o]
		for i := range y {
			y[i] = yt[(i%sp)*c.cout+i/sp]
		}
		miss, _, _, _ := widthStats(y, y, st.ex, kk+1) // widths are not compared here
		return miss
	}
	for _, points := range []bool{true, false} {
		if miss := run(points, 1); miss != "" {
			t.Fatalf("points %v, unplanted: %s", points, miss)
		}
		if run(points, 0) == "" {
			t.Errorf("points %v: the radius dropped (the float64 centre as a point) was not caught", points)
		}
	}
	smallest := 0
	for k := 1; k <= 52; k++ {
		if run(false, 1-math.Ldexp(1, -k)) == "" {
			break
		}
		smallest = k
	}
	if smallest < adjShrinkCaught {
		t.Errorf("a radius shrunk by 2^-%d was not caught (want every k up to %d)", smallest+1, adjShrinkCaught)
	}
	t.Logf("smallest relative radius shrink caught on interval boxes: 2^-%d", smallest)
}

// adjShrinkCaught is the k up to which TestAdjDensePlanted must catch a
// radius shrunk by 2⁻ᵏ on interval boxes.
const adjShrinkCaught = 20
