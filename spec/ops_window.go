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
// resolves it: the window's own fields (winParams), the input's rank, the
// conv channel and group rules (convChannels), the output spatial extents
// (winOutExtents), the output shape, the work bound (winWorkBound) and,
// for max pools and averages without count_include_pad, that every window
// holds an input element (poolWindowsHoldInput).
func planWin(kind winKind, a *Attrs, in []Shape) (*winGeom, error) {
	w := a.Window
	if w == nil {
		return nil, fmt.Errorf("missing window geometry (Attrs.Window)")
	}
	dil, pads, opad, err := winParams(kind, w)
	if err != nil {
		return nil, err
	}
	r := len(w.Kernel)
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
	if kind.isConv() {
		g.lead = prod(x[:sp-1])
		if err := g.convChannels(w, in); err != nil {
			return nil, err
		}
	}
	outSp, err := winOutExtents(kind, w, inSp, dil, pads, opad)
	if err != nil {
		return nil, err
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
	if err := winWorkBound(kind, g.small, w.Kernel); err != nil {
		return nil, err
	}
	if kind.isMax() || (kind == winAvgPoolND && !w.CountIncludePad) {
		if err := g.poolWindowsHoldInput(inSp, outSp); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// winParams checks the window's own fields for kind and returns the
// dilation, pads and output padding with their defaults filled in: the
// kernel has r = len(Kernel) spatial axes, 1 ≤ r ≤ MaxRank; the fields
// kind does not read are unset (Groups outside the convs, OutputPadding
// outside conv_transpose, Dilation for max_pool and avg_pool, CeilMode
// outside max_pool_nd and avg_pool_nd, CountIncludePad outside
// avg_pool_nd); kernel, stride and dilation (default all 1) have r entries
// in [1, maxWindowInt], pads (default 2r zeros, every begin then every
// end) and output_padding (default r zeros) entries in [0, maxWindowInt].
func winParams(kind winKind, w *Window) (dil, pads, opad []int, err error) {
	r := len(w.Kernel)
	if r == 0 || r > MaxRank {
		return nil, nil, nil, fmt.Errorf("window kernel needs 1 to %d spatial axes, got %d", MaxRank, r)
	}
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
		return nil, nil, nil, fmt.Errorf("%s takes no window %s", kind.name(), stray)
	}
	dil, pads, opad = w.Dilation, w.Pads, w.OutputPadding
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
			return nil, nil, nil, err
		}
	}
	return dil, pads, opad, nil
}

// convChannels applies a conv's or conv_transpose's channel and group
// rules to g, whose r spatial axes end the input in[0] after its channel
// axis, and sets g.groups, g.cin and g.cout. Groups is in
// [1, maxWindowInt]; the weight in[1] has rank r+2 and the kernel as its
// spatial extents; groups divides the cin input channels. conv's weight is
// [cout, cin/groups, kernel…]; conv_transpose's is
// [cin, cout/groups, kernel…], so cout = weight[1]·groups. groups divides
// cout, and a bias in[2], when present, is [cout].
func (g *winGeom) convChannels(w *Window, in []Shape) error {
	x, ws, r := in[0], in[1], g.r
	if w.Groups < 1 || w.Groups > maxWindowInt {
		return fmt.Errorf("groups %d is outside [1, %d]", w.Groups, maxWindowInt)
	}
	g.groups, g.cin = w.Groups, x[len(x)-r-1]
	if len(ws) != r+2 {
		return fmt.Errorf("weight has shape %v, expected rank %d", ws, r+2)
	}
	if !Shape(ws[2:]).Equal(Shape(w.Kernel)) {
		return fmt.Errorf("weight has shape %v, but the kernel is %v", ws, w.Kernel)
	}
	if g.cin%g.groups != 0 {
		return fmt.Errorf("groups %d does not divide the %d input channels of %v", g.groups, g.cin, x)
	}
	if g.kind == winConv {
		g.cout = ws[0]
		if ws[1] != g.cin/g.groups {
			return fmt.Errorf("weight has shape %v, expected [out_channels, %d, kernel…] for %d input channels in %d groups", ws, g.cin/g.groups, g.cin, g.groups)
		}
	} else {
		if ws[0] != g.cin {
			return fmt.Errorf("weight has shape %v, expected [%d, out_channels/groups, kernel…]", ws, g.cin)
		}
		g.cout = ws[1] * g.groups
	}
	if g.cout%g.groups != 0 {
		return fmt.Errorf("groups %d does not divide the %d output channels", g.groups, g.cout)
	}
	if len(in) > 2 && !in[2].Equal(Shape{g.cout}) {
		return fmt.Errorf("bias has shape %v, expected [%d]", in[2], g.cout)
	}
	return nil
}

// winOutExtents returns the output spatial extents of kind over the input
// spatial extents inSp, axis by axis, with the dilation, pads (every
// begin, then every end) and output padding already defaulted: a
// conv_transpose axis by convTExtent, any other by slideExtent.
func winOutExtents(kind winKind, w *Window, inSp, dil, pads, opad []int) ([]int, error) {
	r := len(inSp)
	outSp := make([]int, r)
	for d := 0; d < r; d++ {
		var err error
		if kind == winConvT {
			outSp[d], err = convTExtent(d, inSp[d], w.Kernel[d], w.Stride[d], dil[d], pads[d], pads[r+d], opad[d])
		} else {
			outSp[d], err = slideExtent(kind, d, inSp[d], w.Kernel[d], w.Stride[d], dil[d], pads[d], pads[r+d], w.CeilMode)
		}
		if err != nil {
			return nil, err
		}
	}
	return outSp, nil
}

// convTExtent returns conv_transpose's output extent on spatial axis d of
// input extent n, kernel k, stride s, dilation dl, pads pb (begin) and pe
// (end) and output padding op: (n−1)·s − pb − pe + dl·(k−1) + 1 + op,
// which must be positive, or 0 for an empty input. op must be smaller than
// s or dl.
func convTExtent(d, n, k, s, dl, pb, pe, op int) (int, error) {
	if op >= s && op >= dl {
		return 0, fmt.Errorf("output_padding %d on spatial axis %d must be smaller than the stride %d or the dilation %d", op, d, s, dl)
	}
	if n == 0 {
		return 0, nil // no input position, no window: an empty output
	}
	m := (n-1)*s - pb - pe + dl*(k-1) + 1 + op
	if m < 1 {
		return 0, fmt.Errorf("conv_transpose output extent %d on spatial axis %d is not positive", m, d)
	}
	return m, nil
}

// slideExtent returns the output extent, on spatial axis d, of a conv or
// pool window of kernel k and dilation dl (extent e = dl·(k−1) + 1) slid
// with stride s over an input extent n padded by pb (begin) and pe (end):
// ⌊(n + pb + pe − e)/s⌋ + 1, where e must not exceed the padded extent.
// With ceilMode it rounds up instead, less the last window when that one
// starts in the end padding. max_pool's and avg_pool's pads must be
// smaller than the kernel.
func slideExtent(kind winKind, d, n, k, s, dl, pb, pe int, ceilMode bool) (int, error) {
	if (kind == winMaxPool || kind == winAvgPool) && (pb >= k || pe >= k) {
		return 0, fmt.Errorf("padding %d on spatial axis %d must be smaller than the kernel %d", max(pb, pe), d, k)
	}
	e := dl*(k-1) + 1
	span := n + pb + pe
	if span < e {
		return 0, fmt.Errorf("window %d on spatial axis %d exceeds the padded extent %d", e, d, span)
	}
	m := (span-e)/s + 1
	if ceilMode {
		m = (span-e+s-1)/s + 1
		if (m-1)*s >= n+pb {
			m--
		}
	}
	return m, nil
}

// winWorkBound checks the rules' work against the work limit before any
// table is built: they walk at most (window positions) · Πkernel relation
// entries per channel pair, the product of the extents small (the
// smaller side of the relation) and kernel, saturating at MaxUint64. An
// IR graph's declared work already counts it.
func winWorkBound(kind winKind, small, kernel []int) error {
	work := uint64(1)
	for _, f := range append(append([]int{}, small...), kernel...) {
		hi, lo := bits.Mul64(work, uint64(max(f, 1)))
		if work = lo; hi != 0 {
			work = math.MaxUint64
		}
	}
	if lim := limits.Current().Work; work > uint64(lim) {
		return limits.Exceeded("work", lim, "%s window of %v positions × kernel %v exceeds the work limit", kind.name(), small, kernel)
	}
	return nil
}

// poolWindowsHoldInput checks that the window of every output position,
// on every spatial axis, holds a real input element and not only padding:
// output o's window on axis d starts at input index o·stride − pb (begin
// pad) and takes kernel positions dilation apart within the input extent
// inSp[d]; outSp are the output extents. A max pool, and an average
// without count_include_pad, needs it.
func (g *winGeom) poolWindowsHoldInput(inSp, outSp []int) error {
	for d := 0; d < g.r; d++ {
		for o := 0; o < outSp[d]; o++ {
			if lo, hi := axisRange(o*g.s[d]-g.pb[d], g.k[d], g.d[d], inSp[d]); lo >= hi {
				return fmt.Errorf("the window of output %d on spatial axis %d holds no element of the input (only padding)", o, d)
			}
		}
	}
	return nil
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
	if denseConv(g, x.Data, w.Data, b, y.Data, false) {
		return y
	}
	if yd, ok := any(y.Data).([]F32); ok {
		convFwdF32(g, any(x.Data).([]F32), any(w.Data).([]F32), any(b).([]F32), yd)
		return y
	}
	convFwdFold(g, x, w, b, y)
	return y
}

// convFwdFold is convFwd's element fold: each output element is FoldDot
// of its window's terms (ci outer, window positions inner), plus the bias.
func convFwdFold[T Scalar[T]](g *winGeom, x, w Tensor[T], b []T, y Tensor[T]) {
	idx := g.index(keySmall)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	// Output rows (l, co) on par's pool (parRows): each row's elements are
	// its own folds, written by the one chunk that holds the row.
	parRows[T](g.lead*g.cout, S*cg*K, func(r0, r1 int) {
		xs, ws := make([]T, 0, cg*K), make([]T, 0, cg*K)
		for r := r0; r < r1; r++ {
			l, co := r/g.cout, r%g.cout
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
				y.Data[r*S+o] = acc
			}
		}
	})
}

// convBackX is conv's VJP in x: the transposed correlation of dy with W.
func convBackX[T Scalar[T]](g *winGeom, xShape Shape, w, dy Tensor[T]) Tensor[T] {
	dx := zerosOf[T](xShape)
	if denseConvBackX(g, w.Data, dy.Data, dx.Data, false) {
		return dx
	}
	idx := g.index(keyBig)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	// Input-gradient rows (l, c) on par's pool, as convFwd's output rows.
	parRows[T](g.lead*g.cin, cog*S*K, func(r0, r1 int) {
		as, bs := make([]T, 0, cog*K), make([]T, 0, cog*K)
		for r := r0; r < r1; r++ {
			l, c := r/g.cin, r%g.cin
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
				dx.Data[r*B+i] = foldDot(as, bs)
			}
		}
	})
	return dx
}

// convBackW is conv's VJP in W: the correlation of x with dy.
func convBackW[T Scalar[T]](g *winGeom, wShape Shape, x, dy Tensor[T]) Tensor[T] {
	dw := zerosOf[T](wShape)
	idx := g.index(keyJ)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	// Weight rows (co, ci) on par's pool, as convFwd's output rows.
	parRows[T](g.cout*cg, K*g.lead*S, func(r0, r1 int) {
		as, bs := make([]T, 0, g.lead*S), make([]T, 0, g.lead*S)
		for r := r0; r < r1; r++ {
			co, ci := r/cg, r%cg
			q := co / cog
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
				dw.Data[r*K+j] = foldDot(as, bs)
			}
		}
	})
	return dw
}

// convTFwd is conv_transpose's forward rule; b may be nil.
func convTFwd[T Scalar[T]](g *winGeom, x, w Tensor[T], b []T) Tensor[T] {
	y := zerosOf[T](g.out)
	if yd, ok := any(y.Data).([]Interval); ok && convFwdIv(g, any(x.Data).([]Interval), any(w.Data).([]Interval), any(b).([]Interval), yd, true) {
		return y
	}
	if denseConv(g, x.Data, w.Data, b, y.Data, true) {
		return y
	}
	idx := g.index(keyBig)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	// Output rows (l, co) on par's pool, as convFwd's.
	parRows[T](g.lead*g.cout, S*cg*K, func(r0, r1 int) {
		xs, ws := make([]T, 0, cg*K), make([]T, 0, cg*K)
		for r := r0; r < r1; r++ {
			l, co := r/g.cout, r%g.cout
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
				y.Data[r*B+o] = acc
			}
		}
	})
	return y
}

// convTBackX is conv_transpose's VJP in x: a conv of dy with W.
func convTBackX[T Scalar[T]](g *winGeom, xShape Shape, w, dy Tensor[T]) Tensor[T] {
	dx := zerosOf[T](xShape)
	if denseConvBackX(g, w.Data, dy.Data, dx.Data, true) {
		return dx
	}
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
		VJPMasked: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T], need []bool) ([]Tensor[T], error) {
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
			out := make([]Tensor[T], 2, 3)
			if needs(need, 0) {
				out[0] = backX(g, xs[0].Shape, xs[1], dy)
			}
			if needs(need, 1) {
				out[1] = backW(g, xs[1].Shape, xs[0], dy)
			}
			if len(xs) > 2 {
				out = append(out, Tensor[T]{})
				if needs(need, 2) {
					out[2] = biasBack(g, dy, per)
				}
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
