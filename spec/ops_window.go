package spec

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/tlcheck/tlcheck/limits"
)

// The window primitives (conv, conv_transpose, max_pool, max_pool_nd,
// avg_pool, avg_pool_nd); the package doc's "Window primitives" section
// states their geometry and rules.

// Window is the static geometry of a window primitive (spec.Attrs.Window),
// the one window type of the module: the registry's rules, the IR's window
// tags (package irsem) and the certificates (package certificates, which
// encode it with the JSON names below) all hold a *Window.
//
// Each slice has one entry per spatial axis, except Pads, which has 2r:
// every begin, then every end (ONNX order). A nil Dilation means all 1, a
// nil Pads or OutputPadding all 0. Each primitive reads only the fields
// its Doc names and rejects a Window that sets another.
//
// Padding, InChannels and OutChannels are the IR's spelling only (the
// attributes padding, in_channels and out_channels of the window tags):
// Padding is the symmetric padding of conv, max_pool and avg_pool, one
// entry per spatial axis, which irsem turns into Pads = Padding ++ Padding
// before a rule runs; the channel counts are the parents' shapes there.
// The registry's rules read neither, and a certificate does not carry
// them.
type Window struct {
	Kernel   []int `json:"kernel"`
	Stride   []int `json:"stride"`
	Pads     []int `json:"pads,omitempty"`
	Dilation []int `json:"dilation,omitempty"`
	// OutputPadding is conv_transpose's extra extent at the end of each
	// spatial axis of the output.
	OutputPadding []int `json:"output_padding,omitempty"`
	// Groups is conv's and conv_transpose's channel group count (≥ 1).
	Groups int `json:"groups,omitempty"`
	// CeilMode rounds the pool output extent up (max_pool_nd,
	// avg_pool_nd).
	CeilMode bool `json:"ceil_mode,omitempty"`
	// CountIncludePad makes avg_pool_nd divide by the number of window
	// positions inside the padded input.
	CountIncludePad bool `json:"count_include_pad,omitempty"`

	// Padding, InChannels and OutChannels: the IR's spelling (above).
	Padding                 []int `json:"-"`
	InChannels, OutChannels int   `json:"-"`
}

// Clone returns a deep copy of the window.
func (w *Window) Clone() *Window {
	if w == nil {
		return nil
	}
	c := *w
	cp := func(xs []int) []int {
		if xs == nil {
			return nil
		}
		return append([]int{}, xs...)
	}
	c.Kernel, c.Stride, c.Pads, c.Dilation, c.OutputPadding = cp(w.Kernel), cp(w.Stride), cp(w.Pads), cp(w.Dilation), cp(w.OutputPadding)
	c.Padding = cp(w.Padding)
	return &c
}

// maxWindowInt bounds every integer of a window geometry, so that no
// extent arithmetic overflows.
const maxWindowInt = DefaultMaxElements

// winKind says which window primitive a geometry belongs to.
type winKind int

const (
	winConv winKind = iota
	winConvT
	winMaxPool   // TorchLean max_pool
	winMaxPoolND // ONNX MaxPool
	winAvgPool   // TorchLean avg_pool
	winAvgPoolND // ONNX AveragePool
)

func (k winKind) name() string {
	return [...]string{"conv", "conv_transpose", "max_pool", "max_pool_nd", "avg_pool", "avg_pool_nd"}[k]
}

func (k winKind) isConv() bool { return k == winConv || k == winConvT }
func (k winKind) isMax() bool  { return k == winMaxPool || k == winMaxPoolND }

// winGeom is a window geometry resolved against the parents' shapes.
type winGeom struct {
	kind winKind
	r    int
	// lead is the number of independent leading slices (the product of
	// the axes before the channel axis for convs, before the spatial axes
	// for pools).
	lead      int
	cin, cout int // convs: channel counts (pools: 1)
	groups    int
	// small and big are the spatial extents of the two sides of the
	// relation; in and out the input and output spatial extents.
	small, big []int
	k, s, d    []int
	pb, pe     []int
	out        Shape // output shape
}

// sizes
func (g *winGeom) smallSize() int { return prod(g.small) }
func (g *winGeom) bigSize() int   { return prod(g.big) }
func (g *winGeom) kSize() int     { return prod(g.k) }

func prod(xs []int) int {
	n := 1
	for _, x := range xs {
		n *= x
	}
	return n
}

func winInts(field string, xs []int, r, lo int) error {
	if len(xs) != r {
		return fmt.Errorf("window %s has %d entries, expected %d", field, len(xs), r)
	}
	for i, x := range xs {
		if x < lo || x > maxWindowInt {
			return fmt.Errorf("window %s entry %d is %d, outside [%d, %d]", field, i, x, lo, maxWindowInt)
		}
	}
	return nil
}

func ones(r int) []int {
	xs := make([]int, r)
	for i := range xs {
		xs[i] = 1
	}
	return xs
}

// planWin checks the window of a against the parents' shapes and
// resolves it.
func planWin(kind winKind, a *Attrs, in []Shape) (*winGeom, error) {
	w := a.Window
	if w == nil {
		return nil, fmt.Errorf("missing window geometry (Attrs.Window)")
	}
	r := len(w.Kernel)
	if r == 0 || r > MaxRank {
		return nil, fmt.Errorf("window kernel needs 1 to %d spatial axes, got %d", MaxRank, r)
	}
	// Fields the primitive does not read must be unset.
	stray := ""
	switch {
	case !kind.isConv() && w.Groups != 0:
		stray = "Groups"
	case kind != winConvT && w.OutputPadding != nil:
		stray = "OutputPadding"
	case (kind == winMaxPool || kind == winAvgPool) && w.Dilation != nil:
		stray = "Dilation"
	case kind != winMaxPoolND && kind != winAvgPoolND && w.CeilMode:
		stray = "CeilMode"
	case kind != winAvgPoolND && w.CountIncludePad:
		stray = "CountIncludePad"
	}
	if stray != "" {
		return nil, fmt.Errorf("%s takes no window %s", kind.name(), stray)
	}
	dil, pads, opad := w.Dilation, w.Pads, w.OutputPadding
	if dil == nil {
		dil = ones(r)
	}
	if pads == nil {
		pads = make([]int, 2*r)
	}
	if opad == nil {
		opad = make([]int, r)
	}
	for _, f := range []struct {
		name string
		xs   []int
		n    int
		lo   int
	}{{"kernel", w.Kernel, r, 1}, {"stride", w.Stride, r, 1}, {"pads", pads, 2 * r, 0}, {"dilation", dil, r, 1}, {"output_padding", opad, r, 0}} {
		if err := winInts(f.name, f.xs, f.n, f.lo); err != nil {
			return nil, err
		}
	}
	g := &winGeom{kind: kind, r: r, k: w.Kernel, s: w.Stride, d: dil, pb: pads[:r], pe: pads[r:], cin: 1, cout: 1, groups: 1}
	x := in[0]
	need := r
	if kind.isConv() {
		need = r + 1
	}
	if len(x) < need {
		return nil, fmt.Errorf("%s over %d spatial axes needs an input of rank ≥ %d, got %v", kind.name(), r, need, x)
	}
	sp := len(x) - r
	inSp := []int(x[sp:])
	g.lead = prod(x[:sp])
	var outSp []int
	if kind.isConv() {
		g.lead = prod(x[:sp-1])
		if w.Groups < 1 || w.Groups > maxWindowInt {
			return nil, fmt.Errorf("groups %d is outside [1, %d]", w.Groups, maxWindowInt)
		}
		g.groups, g.cin = w.Groups, x[sp-1]
		ws := in[1]
		if len(ws) != r+2 {
			return nil, fmt.Errorf("weight has shape %v, expected rank %d", ws, r+2)
		}
		if !Shape(ws[2:]).Equal(Shape(w.Kernel)) {
			return nil, fmt.Errorf("weight has shape %v, but the kernel is %v", ws, w.Kernel)
		}
		if g.cin%g.groups != 0 {
			return nil, fmt.Errorf("groups %d does not divide the %d input channels of %v", g.groups, g.cin, x)
		}
		if kind == winConv {
			g.cout = ws[0]
			if ws[1] != g.cin/g.groups {
				return nil, fmt.Errorf("weight has shape %v, expected [out_channels, %d, kernel…] for %d input channels in %d groups", ws, g.cin/g.groups, g.cin, g.groups)
			}
		} else {
			if ws[0] != g.cin {
				return nil, fmt.Errorf("weight has shape %v, expected [%d, out_channels/groups, kernel…]", ws, g.cin)
			}
			g.cout = ws[1] * g.groups
		}
		if g.cout%g.groups != 0 {
			return nil, fmt.Errorf("groups %d does not divide the %d output channels", g.groups, g.cout)
		}
		if len(in) > 2 && !in[2].Equal(Shape{g.cout}) {
			return nil, fmt.Errorf("bias has shape %v, expected [%d]", in[2], g.cout)
		}
	}
	outSp = make([]int, r)
	for d := 0; d < r; d++ {
		n, k, s, dl, pb, pe := inSp[d], w.Kernel[d], w.Stride[d], dil[d], pads[d], pads[r+d]
		e := dl*(k-1) + 1
		if kind == winConvT {
			if opad[d] >= s && opad[d] >= dl {
				return nil, fmt.Errorf("output_padding %d on spatial axis %d must be smaller than the stride %d or the dilation %d", opad[d], d, s, dl)
			}
			if n == 0 {
				outSp[d] = 0 // no input position, no window: an empty output
				continue
			}
			m := (n-1)*s - pb - pe + e + opad[d]
			if m < 1 {
				return nil, fmt.Errorf("conv_transpose output extent %d on spatial axis %d is not positive", m, d)
			}
			outSp[d] = m
			continue
		}
		if (kind == winMaxPool || kind == winAvgPool) && (pb >= k || pe >= k) {
			return nil, fmt.Errorf("padding %d on spatial axis %d must be smaller than the kernel %d", max(pb, pe), d, k)
		}
		span := n + pb + pe
		if span < e {
			return nil, fmt.Errorf("window %d on spatial axis %d exceeds the padded extent %d", e, d, span)
		}
		m := (span-e)/s + 1
		if w.CeilMode {
			m = (span-e+s-1)/s + 1
			if (m-1)*s >= n+pb {
				m--
			}
		}
		outSp[d] = m
	}
	if kind == winConvT {
		g.small, g.big = inSp, outSp
	} else {
		g.small, g.big = outSp, inSp
	}
	g.out = x[:sp].Clone()
	if kind.isConv() {
		g.out[sp-1] = g.cout
	}
	g.out = append(g.out, outSp...)
	if _, err := g.out.Check(0); err != nil {
		return nil, fmt.Errorf("output %w", err)
	}
	// The rules walk at most (window positions) · Πkernel relation
	// entries per channel pair; bound it by the work limit before any
	// table is built (an IR graph's declared work already counts it).
	work := uint64(1)
	for _, f := range append(append([]int{}, g.small...), w.Kernel...) {
		hi, lo := bits.Mul64(work, uint64(max(f, 1)))
		if work = lo; hi != 0 {
			work = math.MaxUint64
		}
	}
	if lim := limits.Current().Work; work > uint64(lim) {
		return nil, limits.Exceeded("work", lim, "%s window of %v positions × kernel %v exceeds the work limit", kind.name(), g.small, w.Kernel)
	}
	// A max pool window (and an average without count_include_pad) must
	// hold a real element.
	if kind.isMax() || (kind == winAvgPoolND && !w.CountIncludePad) {
		for d := 0; d < r; d++ {
			for o := 0; o < outSp[d]; o++ {
				if lo, hi := axisRange(o*g.s[d]-g.pb[d], g.k[d], g.d[d], inSp[d]); lo >= hi {
					return nil, fmt.Errorf("the window of output %d on spatial axis %d holds no element of the input (only padding)", o, d)
				}
			}
		}
	}
	return g, nil
}

// axisRange returns the kernel positions [lo, hi) along one axis whose
// input index base + j·dil lies in [0, n), for j in [0, k).
func axisRange(base, k, dil, n int) (lo, hi int) {
	if base < 0 {
		lo = (-base + dil - 1) / dil
	}
	if n-1-base < 0 {
		return lo, lo
	}
	hi = min((n-1-base)/dil+1, k)
	return lo, max(hi, lo)
}

// Relation keys: which coordinate of (small, j, big) a relIndex is
// grouped by.
const (
	keySmall = iota // per small position: (j, big) pairs, j row-major
	keyBig          // per big position: (j, small) pairs, j row-major
	keyJ            // per kernel position: (small, big) pairs, small row-major
)

// relIndex lists, for each flat index t of the key coordinate, the valid
// pairs of flat offsets of the two others: pairs start[t]..start[t+1] of
// a and b.
type relIndex struct {
	start []int
	a, b  []int
}

// index builds the N-D relation grouped by key.
func (g *winGeom) index(key int) *relIndex {
	r := g.r
	// Per axis: for each key value, its (u, v) pairs in ascending order of
	// the first coordinate listed for the key.
	type pair struct{ u, v int }
	tabs := make([][][]pair, r)
	keyExt := make([]int, r)
	uExt, vExt := make([]int, r), make([]int, r)
	for d := 0; d < r; d++ {
		S, B, k, s, dl, pb := g.small[d], g.big[d], g.k[d], g.s[d], g.d[d], g.pb[d]
		switch key {
		case keySmall:
			keyExt[d], uExt[d], vExt[d] = S, k, B
		case keyBig:
			keyExt[d], uExt[d], vExt[d] = B, k, S
		default:
			keyExt[d], uExt[d], vExt[d] = k, S, B
		}
		t := make([][]pair, keyExt[d])
		for sm := 0; sm < S; sm++ {
			for j := 0; j < k; j++ {
				bg := sm*s - pb + j*dl
				if bg < 0 || bg >= B {
					continue
				}
				switch key {
				case keySmall:
					t[sm] = append(t[sm], pair{j, bg})
				case keyBig:
					t[bg] = append(t[bg], pair{j, sm})
				default:
					t[j] = append(t[j], pair{sm, bg})
				}
			}
		}
		if key == keyBig { // sm ascending put j descending; list j ascending
			for _, l := range t {
				for i, k := 0, len(l)-1; i < k; i, k = i+1, k-1 {
					l[i], l[k] = l[k], l[i]
				}
			}
		}
		tabs[d] = t
	}
	uStr, vStr := stridesOfInts(uExt), stridesOfInts(vExt)
	n := prod(keyExt)
	idx := &relIndex{start: make([]int, 0, n+1)}
	kIdx := make([]int, r)
	pos := make([]int, r)
	for t := 0; t < n; t++ {
		idx.start = append(idx.start, len(idx.a))
		empty := false
		for d := 0; d < r; d++ {
			pos[d] = 0
			if len(tabs[d][kIdx[d]]) == 0 {
				empty = true
			}
		}
		if !empty {
			for {
				ua, vb := 0, 0
				for d := 0; d < r; d++ {
					p := tabs[d][kIdx[d]][pos[d]]
					ua += p.u * uStr[d]
					vb += p.v * vStr[d]
				}
				idx.a = append(idx.a, ua)
				idx.b = append(idx.b, vb)
				d := r - 1
				for ; d >= 0; d-- {
					pos[d]++
					if pos[d] < len(tabs[d][kIdx[d]]) {
						break
					}
					pos[d] = 0
				}
				if d < 0 {
					break
				}
			}
		}
		for d := r - 1; d >= 0; d-- {
			kIdx[d]++
			if kIdx[d] < keyExt[d] {
				break
			}
			kIdx[d] = 0
		}
	}
	idx.start = append(idx.start, len(idx.a))
	return idx
}

func stridesOfInts(xs []int) []int {
	st := make([]int, len(xs))
	acc := 1
	for i := len(xs) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= xs[i]
	}
	return st
}

// foldDot is the left fold 0 + xs[0]·ys[0] + xs[1]·ys[1] + … with the
// scalar's own Mul and Add: every inner product of the window rules goes
// through it, over the window gathered into scratch slices. It is
// FoldDot from 0: bit for bit that loop over the float scalars, and over
// Rat one exact fused sum of the same value, normalised once.
func foldDot[T Scalar[T]](xs, ys []T) T {
	var zero T
	return FoldDot(zero, xs, ys)
}

// convFwd is conv's forward rule (see the file comment); b may be nil.
func convFwd[T Scalar[T]](g *winGeom, x, w Tensor[T], b []T) Tensor[T] {
	y := zerosOf[T](g.out)
	if yd, ok := any(y.Data).([]Interval); ok && convFwdIv(g, any(x.Data).([]Interval), any(w.Data).([]Interval), any(b).([]Interval), yd, false) {
		return y
	}
	idx := g.index(keySmall)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	xs, ws := make([]T, 0, cg*K), make([]T, 0, cg*K)
	for l := 0; l < g.lead; l++ {
		for co := 0; co < g.cout; co++ {
			q := co / cog
			for o := 0; o < S; o++ {
				xs, ws = xs[:0], ws[:0]
				lo, hi := idx.start[o], idx.start[o+1]
				for ci := 0; ci < cg; ci++ {
					xb := (l*g.cin + q*cg + ci) * B
					wb := (co*cg + ci) * K
					for p := lo; p < hi; p++ {
						xs = append(xs, x.Data[xb+idx.b[p]])
						ws = append(ws, w.Data[wb+idx.a[p]])
					}
				}
				acc := foldDot(xs, ws)
				if b != nil {
					acc = acc.Add(b[co])
				}
				y.Data[(l*g.cout+co)*S+o] = acc
			}
		}
	}
	return y
}

// convBackX is conv's VJP in x: the transposed correlation of dy with W.
func convBackX[T Scalar[T]](g *winGeom, xShape Shape, w, dy Tensor[T]) Tensor[T] {
	dx := zerosOf[T](xShape)
	idx := g.index(keyBig)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	as, bs := make([]T, 0, cog*K), make([]T, 0, cog*K)
	for l := 0; l < g.lead; l++ {
		for c := 0; c < g.cin; c++ {
			q, ci := c/cg, c%cg
			for i := 0; i < B; i++ {
				as, bs = as[:0], bs[:0]
				lo, hi := idx.start[i], idx.start[i+1]
				for cp := 0; cp < cog; cp++ {
					co := q*cog + cp
					db := (l*g.cout + co) * S
					wb := (co*cg + ci) * K
					for p := lo; p < hi; p++ {
						as = append(as, dy.Data[db+idx.b[p]])
						bs = append(bs, w.Data[wb+idx.a[p]])
					}
				}
				dx.Data[(l*g.cin+c)*B+i] = foldDot(as, bs)
			}
		}
	}
	return dx
}

// convBackW is conv's VJP in W: the correlation of x with dy.
func convBackW[T Scalar[T]](g *winGeom, wShape Shape, x, dy Tensor[T]) Tensor[T] {
	dw := zerosOf[T](wShape)
	idx := g.index(keyJ)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	as, bs := make([]T, 0, g.lead*S), make([]T, 0, g.lead*S)
	for co := 0; co < g.cout; co++ {
		q := co / cog
		for ci := 0; ci < cg; ci++ {
			for j := 0; j < K; j++ {
				as, bs = as[:0], bs[:0]
				lo, hi := idx.start[j], idx.start[j+1]
				for l := 0; l < g.lead; l++ {
					db := (l*g.cout + co) * S
					xb := (l*g.cin + q*cg + ci) * B
					for p := lo; p < hi; p++ {
						as = append(as, dy.Data[db+idx.a[p]])
						bs = append(bs, x.Data[xb+idx.b[p]])
					}
				}
				dw.Data[(co*cg+ci)*K+j] = foldDot(as, bs)
			}
		}
	}
	return dw
}

// convTFwd is conv_transpose's forward rule; b may be nil.
func convTFwd[T Scalar[T]](g *winGeom, x, w Tensor[T], b []T) Tensor[T] {
	y := zerosOf[T](g.out)
	if yd, ok := any(y.Data).([]Interval); ok && convFwdIv(g, any(x.Data).([]Interval), any(w.Data).([]Interval), any(b).([]Interval), yd, true) {
		return y
	}
	idx := g.index(keyBig)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	xs, ws := make([]T, 0, cg*K), make([]T, 0, cg*K)
	for l := 0; l < g.lead; l++ {
		for co := 0; co < g.cout; co++ {
			q, cp := co/cog, co%cog
			for o := 0; o < B; o++ {
				xs, ws = xs[:0], ws[:0]
				lo, hi := idx.start[o], idx.start[o+1]
				for ci := 0; ci < cg; ci++ {
					c := q*cg + ci
					xb := (l*g.cin + c) * S
					wb := (c*cog + cp) * K
					for p := lo; p < hi; p++ {
						xs = append(xs, x.Data[xb+idx.b[p]])
						ws = append(ws, w.Data[wb+idx.a[p]])
					}
				}
				acc := foldDot(xs, ws)
				if b != nil {
					acc = acc.Add(b[co])
				}
				y.Data[(l*g.cout+co)*B+o] = acc
			}
		}
	}
	return y
}

// convTBackX is conv_transpose's VJP in x: a conv of dy with W.
func convTBackX[T Scalar[T]](g *winGeom, xShape Shape, w, dy Tensor[T]) Tensor[T] {
	dx := zerosOf[T](xShape)
	idx := g.index(keySmall)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	as, bs := make([]T, 0, cog*K), make([]T, 0, cog*K)
	for l := 0; l < g.lead; l++ {
		for c := 0; c < g.cin; c++ {
			q := c / cg
			for i := 0; i < S; i++ {
				as, bs = as[:0], bs[:0]
				lo, hi := idx.start[i], idx.start[i+1]
				for cp := 0; cp < cog; cp++ {
					db := (l*g.cout + q*cog + cp) * B
					wb := (c*cog + cp) * K
					for p := lo; p < hi; p++ {
						as = append(as, dy.Data[db+idx.b[p]])
						bs = append(bs, w.Data[wb+idx.a[p]])
					}
				}
				dx.Data[(l*g.cin+c)*S+i] = foldDot(as, bs)
			}
		}
	}
	return dx
}

// convTBackW is conv_transpose's VJP in W.
func convTBackW[T Scalar[T]](g *winGeom, wShape Shape, x, dy Tensor[T]) Tensor[T] {
	dw := zerosOf[T](wShape)
	idx := g.index(keyJ)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	as, bs := make([]T, 0, g.lead*S), make([]T, 0, g.lead*S)
	for c := 0; c < g.cin; c++ {
		q := c / cg
		for cp := 0; cp < cog; cp++ {
			co := q*cog + cp
			for j := 0; j < K; j++ {
				as, bs = as[:0], bs[:0]
				lo, hi := idx.start[j], idx.start[j+1]
				for l := 0; l < g.lead; l++ {
					xb := (l*g.cin + c) * S
					db := (l*g.cout + co) * B
					for p := lo; p < hi; p++ {
						as = append(as, x.Data[xb+idx.a[p]])
						bs = append(bs, dy.Data[db+idx.b[p]])
					}
				}
				dw.Data[(c*cog+cp)*K+j] = foldDot(as, bs)
			}
		}
	}
	return dw
}

// biasBack is db[co] = Σ_l Σ_o dy[l, co, o], a left fold from 0 in that
// order; per is the spatial size of the output.
func biasBack[T Scalar[T]](g *winGeom, dy Tensor[T], per int) Tensor[T] {
	db := zerosOf[T](Shape{g.cout})
	for co := 0; co < g.cout; co++ {
		var acc T
		for l := 0; l < g.lead; l++ {
			base := (l*g.cout + co) * per
			for o := 0; o < per; o++ {
				acc = acc.Add(dy.Data[base+o])
			}
		}
		db.Data[co] = acc
	}
	return db
}

// convContraction is the number of terms one output element of a conv or
// conv_transpose sums at most: in_channels/groups · Πkernel.
func convContraction(a *Attrs, in []Shape) int {
	if a == nil || a.Window == nil || len(in) == 0 {
		return 1
	}
	w := a.Window
	n := max(prod(w.Kernel), 1)
	if r := len(w.Kernel); len(in[0]) > r && w.Groups > 0 {
		n *= max(in[0][len(in[0])-r-1]/w.Groups, 1)
	}
	return n
}

// poolContraction is Πkernel, the window size.
func poolContraction(a *Attrs, _ []Shape) int {
	if a == nil || a.Window == nil {
		return 1
	}
	return max(prod(a.Window.Kernel), 1)
}

func convPrim[T Scalar[T]](kind winKind) *Prim[T] {
	info := &OpInfo{Name: kind.name(), MinArity: 2, MaxArity: 3, Attrs: []string{"Window"}, Exact: true, Smooth: true,
		ZeroPreserving: true, Polynomial: true, Accumulates: true, Contraction: convContraction,
		Shape: func(a *Attrs, in []Shape) (Shape, error) {
			g, err := planWin(kind, a, in)
			if err != nil {
				return nil, err
			}
			return g.out, nil
		}}
	fwd, backX, backW := convFwd[T], convBackX[T], convBackW[T]
	if kind == winConv {
		info.Doc = "grouped, strided, dilated, padded convolution of x [L…, C, n…] with W [C_out, C/groups, k…] plus optional b [C_out]; Window: Kernel, Stride, Pads, Dilation, Groups"
		info.IR = &IRForm{Tag: "conv", MinArity: 1, MaxArity: 1,
			Attrs:  []string{"kernel", "stride", "padding", "dilation", "groups", "in_channels", "out_channels"},
			Params: []string{"W", "b"}, Required: []string{"W"},
			Doc: "grouped convolution over the trailing spatial axes, channel axis just before them (NCHW for 2-D); symmetric padding; W [out_channels, in_channels/groups, kernel…], b [out_channels] optional"}
	} else {
		fwd, backX, backW = convTFwd[T], convTBackX[T], convTBackW[T]
		info.Doc = "transposed convolution (the adjoint of conv in x) of x [L…, C, n…] with W [C, C_out/groups, k…] plus optional b [C_out]; Window: Kernel, Stride, Pads, Dilation, OutputPadding, Groups"
		info.IR = &IRForm{Tag: "conv_transpose", MinArity: 1, MaxArity: 1, Superset: true,
			Attrs:  []string{"kernel", "stride", "pads", "dilation", "output_padding", "groups", "in_channels", "out_channels"},
			Params: []string{"W", "b"}, Required: []string{"W"},
			Doc: "ONNX ConvTranspose over the trailing spatial axes (explicit pads begin/end, output_padding); W [in_channels, out_channels/groups, kernel…], b [out_channels] optional"}
	}
	plan := func(a *Attrs, xs []Tensor[T]) (*winGeom, error) {
		in := make([]Shape, len(xs))
		for i := range xs {
			in[i] = xs[i].Shape
		}
		return planWin(kind, a, in)
	}
	bias := func(xs []Tensor[T]) []T {
		if len(xs) > 2 {
			return xs[2].Data
		}
		return nil
	}
	return &Prim[T]{
		OpInfo: info,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			g, err := plan(a, xs)
			if err != nil {
				return Tensor[T]{}, err
			}
			return fwd(g, xs[0], xs[1], bias(xs)), nil
		},
		JVP: func(a *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			g, err := plan(a, xs)
			if err != nil {
				return Tensor[T]{}, err
			}
			// conv(x, dW) + db, then + conv(dx, W).
			return AddT(fwd(g, xs[0], dxs[1], bias(dxs)), fwd(g, dxs[0], xs[1], nil))
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			g, err := plan(a, xs)
			if err != nil {
				return nil, err
			}
			per := g.smallSize()
			if kind == winConvT {
				per = g.bigSize()
			}
			out := []Tensor[T]{backX(g, xs[0].Shape, xs[1], dy), backW(g, xs[1].Shape, xs[0], dy)}
			if len(xs) > 2 {
				out = append(out, biasBack(g, dy, per))
			}
			return out, nil
		},
	}
}

// windowPrims lists the window primitives.
func windowPrims[T Scalar[T]]() []*Prim[T] {
	return []*Prim[T]{convPrim[T](winConv), convPrim[T](winConvT),
		poolPrim[T](winMaxPool), poolPrim[T](winMaxPoolND), poolPrim[T](winAvgPool), poolPrim[T](winAvgPoolND)}
}
