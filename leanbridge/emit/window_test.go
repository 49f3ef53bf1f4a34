package emit

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// A Go transcription of the window primitives as lean/Tlcheck/Spec.lean
// states them (Axis, winTaps, Conv.terms, ConvT.terms, Pool, the
// geometry Attr.winAxes/convG/convTG/poolG read from the emitted
// fields), evaluated over exact rationals on the very lines Emit writes:
// the claim each `decide +kernel` asserts (shapesOk, and lhs = ⟨jvp, δ⟩,
// rhs = Σₖ⟨dxₖ, vjpₖ⟩, lhs = rhs) re-evaluated here. Lean's Nat
// arithmetic is kept: a − b is 0 below 0, a / 0 = 0 and a % 0 = a; Lean's
// 1/0 = 0 on Rat.

type wAxis struct{ S, B, k, s, dl, pb, pe int }
type wWin struct{ sm, j, bg int }

func nsub(a, b int) int { return max(a-b, 0) }
func ndiv(a, b int) int {
	if b == 0 {
		return 0
	}
	return a / b
}
func nmod(a, b int) int {
	if b == 0 {
		return a
	}
	return a % b
}

// taps is Axis.taps: sm ascending, then j; kept where pb ≤ sm·s + j·dl
// and the big position sm·s + j·dl − pb is below B.
func (g wAxis) taps() []wWin {
	var out []wWin
	for sm := 0; sm < g.S; sm++ {
		for j := 0; j < g.k; j++ {
			if pos := sm*g.s + j*g.dl; g.pb <= pos && pos-g.pb < g.B {
				out = append(out, wWin{sm, j, pos - g.pb})
			}
		}
	}
	return out
}

func axSizes(gs []wAxis) (S, K, B int) {
	S, K, B = 1, 1, 1
	for _, g := range gs {
		S, K, B = S*g.S, K*g.k, B*g.B
	}
	return
}

// winTaps is the relation of several axes, the first slowest.
func winTaps(gs []wAxis) []wWin {
	if len(gs) == 0 {
		return []wWin{{}}
	}
	S, K, B := axSizes(gs[1:])
	rest := winTaps(gs[1:])
	var out []wWin
	for _, t := range gs[0].taps() {
		for _, u := range rest {
			out = append(out, wWin{t.sm*S + u.sm, t.j*K + u.j, t.bg*B + u.bg})
		}
	}
	return out
}

// wCase is one emitted window case, read back from its Lean line.
type wCase struct {
	shapes                        [][]int
	xs, dxs                       []vec
	outShape                      []int
	delta                         vec
	lhs, rhs                      *big.Rat
	kernel, stride, dilation, pad []int
	groups                        int
	countPad                      bool
}

var windowLineRE = regexp.MustCompile(`^  \{ shapes := \[(.*)\], xs := \[(.*)\], dxs := \[(.*)\], outShape := \[([0-9, ]*)\], delta := \[(.*)\], c := .*, lhs := (mkRat \(?-?[0-9]+\)? [0-9]+), rhs := (mkRat \(?-?[0-9]+\)? [0-9]+), kernel := \[([0-9, ]*)\], stride := \[([0-9, ]*)\], dilation := \[([0-9, ]*)\], pads := \[([0-9, ]*)\], groups := ([0-9]+), countPad := (true|false) \},?$`)

func readWindowCases(t *testing.T, src string) []wCase {
	t.Helper()
	var out []wCase
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "  {") {
			continue
		}
		m := windowLineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unreadable window case line %q", line)
		}
		c := wCase{outShape: readInts(t, m[4]), delta: readVec(t, m[5]), lhs: readRat(t, m[6]), rhs: readRat(t, m[7]),
			kernel: readInts(t, m[8]), stride: readInts(t, m[9]), dilation: readInts(t, m[10]), pad: readInts(t, m[11]),
			countPad: m[13] == "true"}
		fmt.Sscan(m[12], &c.groups)
		c.shapes, c.xs, c.dxs = readOperands(t, m[1], m[2], m[3])
		out = append(out, c)
	}
	return out
}

// axes is Attr.winAxes outSmall.
func (c *wCase) axes(outSmall bool) []wAxis {
	r, shape := len(c.kernel), c.shapes[0]
	sp := nsub(len(shape), r)
	var out []wAxis
	for d := 0; d < r; d++ {
		in, o := nthN(shape, sp+d), nthN(c.outShape, sp+d)
		g := wAxis{S: o, B: in, k: nthN(c.kernel, d), s: nthN(c.stride, d), dl: 1, pb: nthN(c.pad, d), pe: nthN(c.pad, r+d)}
		if !outSmall {
			g.S, g.B = in, o
		}
		if len(c.dilation) != 0 {
			g.dl = nthN(c.dilation, d)
		}
		out = append(out, g)
	}
	return out
}

// sp is Attr.winSp.
func (c *wCase) sp() int { return nsub(len(c.shapes[0]), len(c.kernel)) }

type wTap struct {
	o, i int
	w    *big.Rat
}

func nthR(x vec, i int) *big.Rat {
	if i < len(x) {
		return x[i]
	}
	return rat(0, 1)
}

func tapply(m int, es []wTap, x vec) vec {
	y := mzeros(m)
	for _, e := range es {
		if e.o < m {
			y[e.o] = add(y[e.o], mul(e.w, nthR(x, e.i)))
		}
	}
	return y
}

func tapplyT(n int, es []wTap, d vec) vec {
	y := mzeros(n)
	for _, e := range es {
		if e.i < n {
			y[e.i] = add(y[e.i], mul(e.w, nthR(d, e.o)))
		}
	}
	return y
}

// bil is Tlcheck.Bil: the terms (p, q, r) and the bias index.
type bil struct {
	ySize, xSize, wSize, bSize int
	terms                      [][3]int
	bIdx                       []int
}

func (b *bil) xTaps(w vec) []wTap {
	var out []wTap
	for _, t := range b.terms {
		out = append(out, wTap{t[0], t[2], nthR(w, t[1])})
	}
	return out
}

func (b *bil) wTaps(x vec) []wTap {
	var out []wTap
	for _, t := range b.terms {
		out = append(out, wTap{t[0], t[1], nthR(x, t[2])})
	}
	return out
}

// convBil is Attr.convG's Conv.bil (transposed: Attr.convTG's ConvT.bil).
func (c *wCase) convBil(transposed bool) *bil {
	sp := c.sp()
	lead, cin := size(c.shapes[0][:min(nsub(sp, 1), len(c.shapes[0]))]), nthN(c.shapes[0], nsub(sp, 1))
	var w []int
	if len(c.shapes) > 1 {
		w = c.shapes[1]
	}
	cout := nthN(w, 0)
	if transposed {
		cout = nthN(w, 1) * c.groups
	}
	cg, cog := ndiv(cin, c.groups), ndiv(cout, c.groups)
	gs := c.axes(!transposed)
	ws := winTaps(gs)
	S, K, B := axSizes(gs)
	b := &bil{bSize: cout}
	for l := 0; l < lead; l++ {
		for co := 0; co < cout; co++ {
			for ch := 0; ch < cg; ch++ {
				ci := ndiv(co, cog)*cg + ch
				for _, t := range ws {
					if transposed {
						b.terms = append(b.terms, [3]int{(l*cout+co)*B + t.bg, ((ci)*cog+nmod(co, cog))*K + t.j, (l*cin+ci)*S + t.sm})
					} else {
						b.terms = append(b.terms, [3]int{(l*cout+co)*S + t.sm, (co*cg+ch)*K + t.j, (l*cin+ci)*B + t.bg})
					}
				}
			}
		}
	}
	per := S
	b.ySize, b.xSize, b.wSize = lead*cout*S, lead*cin*B, cout*cg*K
	if transposed {
		per = B
		b.ySize, b.xSize, b.wSize = lead*cout*B, lead*cin*S, cin*cog*K
	}
	for p := 0; p < b.ySize; p++ {
		b.bIdx = append(b.bIdx, nmod(ndiv(p, per), cout))
	}
	return b
}

// pool is Attr.poolG with its tap lists.
type pool struct {
	lead int
	gs   []wAxis
	ws   []wWin
}

func (c *wCase) pool() *pool {
	gs := c.axes(true)
	return &pool{lead: size(c.shapes[0][:min(c.sp(), len(c.shapes[0]))]), gs: gs, ws: winTaps(gs)}
}

func (q *pool) sizes() (out, in int) {
	S, _, B := axSizes(q.gs)
	return q.lead * S, q.lead * B
}

func (q *pool) taps(f func(l int, t wWin) *big.Rat) []wTap {
	S, _, B := axSizes(q.gs)
	var out []wTap
	for l := 0; l < q.lead; l++ {
		for _, t := range q.ws {
			out = append(out, wTap{l*S + t.sm, l*B + t.bg, f(l, t)})
		}
	}
	return out
}

// divisor is Pool.divPad (padded) or Pool.divReal.
func (q *pool) divisor(o int, padded bool) int {
	if !padded {
		n := 0
		for _, t := range q.ws {
			if t.sm == o {
				n++
			}
		}
		return n
	}
	var ext []int
	for _, g := range q.gs {
		ext = append(ext, g.S)
	}
	n := 1
	for d, od := range unflat(ext, o) {
		g, cnt := q.gs[d], 0
		for j := 0; j < g.k; j++ {
			if od*g.s+j*g.dl < g.B+g.pb+g.pe {
				cnt++
			}
		}
		n *= cnt
	}
	return n
}

func (q *pool) avgTaps(padded bool) []wTap {
	return q.taps(func(_ int, t wWin) *big.Rat {
		if d := q.divisor(t.sm, padded); d != 0 {
			return rat(1, int64(d))
		}
		return rat(0, 1)
	})
}

// window and winMax are Lean's window and maxL (a left fold of maxS).
func (q *pool) window(x vec, l, o int) vec {
	_, _, B := axSizes(q.gs)
	var out vec
	for _, t := range q.ws {
		if t.sm == o {
			out = append(out, nthR(x, l*B+t.bg))
		}
	}
	return out
}

func (q *pool) winMax(x vec, l, o int) *big.Rat {
	w := q.window(x, l, o)
	if len(w) == 0 {
		return rat(0, 1)
	}
	m := w[0]
	for _, a := range w[1:] {
		if lt(m, a) {
			m = a
		}
	}
	return m
}

func (q *pool) maxTaps(x vec) []wTap {
	_, _, B := axSizes(q.gs)
	return q.taps(func(l int, t wWin) *big.Rat {
		m := q.winMax(x, l, t.sm)
		if nthR(x, l*B+t.bg).Cmp(m) != 0 {
			return rat(0, 1)
		}
		n := 0
		for _, a := range q.window(x, l, t.sm) {
			if a.Cmp(m) == 0 {
				n++
			}
		}
		return rat(1, int64(n))
	})
}

// windowEval is Prim.fwd, Prim.jvp and Prim.vjp of a window primitive on
// a case.
func windowEval(op string, c *wCase) (fwd, jv vec, vj []vec) {
	switch op {
	case "conv", "conv_transpose":
		b := c.convBil(op == "conv_transpose")
		if len(c.xs) < 2 || len(c.dxs) < 2 {
			return nil, nil, nil
		}
		x, w, dx, dw := c.xs[0], c.xs[1], c.dxs[0], c.dxs[1]
		bias, db := mzeros(b.bSize), mzeros(b.bSize)
		if len(c.xs) == 3 {
			bias, db = c.xs[2], c.dxs[2]
		}
		fwd = mpadd(tapply(b.ySize, b.xTaps(w), x), mgather(b.bIdx, bias))
		jv = mpadd(mpadd(tapply(b.ySize, b.xTaps(w), dx), tapply(b.ySize, b.wTaps(x), dw)), mgather(b.bIdx, db))
		vj = []vec{tapplyT(b.xSize, b.xTaps(w), c.delta), tapplyT(b.wSize, b.wTaps(x), c.delta)}
		if len(c.xs) == 3 {
			vj = append(vj, mscatter(b.bSize, b.bIdx, c.delta))
		}
	default:
		q := c.pool()
		out, in := q.sizes()
		var es []wTap
		if strings.HasPrefix(op, "max") {
			S, _, _ := axSizes(q.gs)
			for p := 0; p < out; p++ {
				fwd = append(fwd, q.winMax(c.xs[0], ndiv(p, S), nmod(p, S)))
			}
			es = q.maxTaps(c.xs[0])
		} else {
			es = q.avgTaps(op == "avg_pool" || c.countPad)
			fwd = tapply(out, es, c.xs[0])
		}
		jv, vj = tapply(out, es, c.dxs[0]), []vec{tapplyT(in, es, c.delta)}
	}
	return fwd, jv, vj
}

// windowClaim is shapesOk and Claim of the case, as the kernel evaluates
// them; nil when they hold.
func windowClaim(op string, c *wCase) error {
	arityOK := len(c.xs) == 1
	if op == "conv" || op == "conv_transpose" {
		arityOK = len(c.xs) == 2 || len(c.xs) == 3
	}
	if !arityOK || len(c.shapes) != len(c.xs) || len(c.dxs) != len(c.xs) {
		return fmt.Errorf("arity: %d inputs, %d shapes, %d tangents", len(c.xs), len(c.shapes), len(c.dxs))
	}
	for k := range c.xs {
		if len(c.xs[k]) != size(c.shapes[k]) || len(c.dxs[k]) != size(c.shapes[k]) {
			return fmt.Errorf("input %d: %d values, %d tangent values for shape %v", k, len(c.xs[k]), len(c.dxs[k]), c.shapes[k])
		}
	}
	fwd, jv, vj := windowEval(op, c)
	if n := size(c.outShape); len(c.delta) != n || len(fwd) != n {
		return fmt.Errorf("δ has %d values, the forward %d, the output shape %v", len(c.delta), len(fwd), c.outShape)
	}
	rhs := rat(0, 1)
	for k := range c.dxs {
		if k < len(vj) {
			rhs = add(rhs, mdot(c.dxs[k], vj[k]))
		}
	}
	if lhs := mdot(jv, c.delta); lhs.Cmp(c.lhs) != 0 || rhs.Cmp(c.rhs) != 0 || c.lhs.Cmp(c.rhs) != 0 {
		return fmt.Errorf("Lean's semantics give %s = %s, the case records %s = %s", lhs.RatString(), rhs.RatString(), c.lhs.RatString(), c.rhs.RatString())
	}
	return nil
}

// windowModules emits the gate's certificates and returns the window
// modules' sources by op.
func windowModules(t *testing.T) map[string]string {
	t.Helper()
	r, err := Emit(certDir(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range r.Modules {
		op := strings.TrimSuffix(strings.TrimPrefix(m.Path, "Adjointness/"), ".lean")
		if windowOps[op] {
			out[op] = string(m.Bytes)
		}
	}
	if len(out) != len(windowOps) {
		t.Fatalf("%d window modules emitted, want %d", len(out), len(windowOps))
	}
	return out
}

// TestWindowClaims: every emitted case of the six window primitives
// satisfies the claim its `decide +kernel` asserts, re-evaluated on the
// emitted text; and the transcription's forward is the registry's own
// (spec's Forward on the same inputs and window), so the transcription
// is checked against an independent implementation, not against itself.
func TestWindowClaims(t *testing.T) {
	mods := windowModules(t)
	for op, src := range mods {
		cases := readWindowCases(t, src)
		if len(cases) == 0 {
			t.Fatalf("%s: no cases", op)
		}
		p, err := ratReg.Lookup(op)
		if err != nil {
			t.Fatal(err)
		}
		for i := range cases {
			c := &cases[i]
			if err := windowClaim(op, c); err != nil {
				t.Errorf("%s case %d: %v", op, i, err)
				continue
			}
			if strings.HasPrefix(op, "max") {
				// The tie rule's weights (Pool.maxWeight) sum to 1 over
				// every output's window: 1/t on each of the t maxima.
				q := c.pool()
				out, _ := q.sizes()
				sums := mzeros(out)
				for _, e := range q.maxTaps(c.xs[0]) {
					sums[e.o] = add(sums[e.o], e.w)
				}
				for o, s := range sums {
					if s.Cmp(rat(1, 1)) != 0 {
						t.Errorf("%s case %d output %d: the tie weights sum to %s", op, i, o, s.RatString())
					}
				}
			}
			w := &spec.Window{Kernel: c.kernel, Stride: c.stride, Dilation: c.dilation, Pads: c.pad, CountIncludePad: c.countPad}
			if op == "conv" || op == "conv_transpose" {
				w.Groups = c.groups
			}
			// The registry's output extents: ceil_mode and output_padding
			// are not emitted (Lean reads the extents from outShape), so
			// try them both ways and require one to give outShape.
			fwd, _, _ := windowEval(op, c)
			var got spec.Tensor[spec.Rat]
			matched := false
			for _, variant := range windowVariants(op, w, len(c.kernel)) {
				var xs []spec.Tensor[spec.Rat]
				for k := range c.xs {
					data := make([]spec.Rat, len(c.xs[k]))
					for j, v := range c.xs[k] {
						data[j] = spec.RatFromBig(v)
					}
					x, err := spec.NewTensor(spec.Shape(c.shapes[k]), data)
					if err != nil {
						t.Fatal(err)
					}
					xs = append(xs, x)
				}
				y, err := p.Forward(&spec.Attrs{Window: variant}, xs)
				if err == nil && spec.Shape(c.outShape).Equal(y.Shape) {
					got, matched = y, true
					break
				}
			}
			if !matched {
				t.Errorf("%s case %d: no window variant gives the output shape %v", op, i, c.outShape)
				continue
			}
			for j := range fwd {
				if fwd[j].Cmp(got.Data[j].Big()) != 0 {
					t.Errorf("%s case %d: Lean's forward element %d is %s, the registry's %s", op, i, j, fwd[j].RatString(), got.Data[j].Big().RatString())
					break
				}
			}
		}
	}
}

// windowVariants are the geometries the emitted fields leave open:
// ceil_mode (max_pool_nd, avg_pool_nd) and output_padding below the
// stride or the dilation (conv_transpose).
func windowVariants(op string, w *spec.Window, r int) []*spec.Window {
	switch op {
	case "max_pool_nd", "avg_pool_nd":
		c := w.Clone()
		c.CeilMode = true
		return []*spec.Window{w, c}
	case "conv_transpose":
		out := []*spec.Window{}
		var rec func(d int, cur []int)
		rec = func(d int, cur []int) {
			if d == r {
				c := w.Clone()
				c.OutputPadding = append([]int(nil), cur...)
				out = append(out, c)
				return
			}
			for op := 0; op < max(w.Stride[d], nthN(w.Dilation, d), 1); op++ {
				rec(d+1, append(cur, op))
			}
		}
		rec(0, nil)
		return out
	}
	return []*spec.Window{w}
}

// TestWindowClaimsCatchPlantedGeometry: an emitter that writes a wrong
// window index makes the claim false in at least one case of every
// module the fault changes — the kernel would refuse the module.
func TestWindowClaimsCatchPlantedGeometry(t *testing.T) {
	mods := windowModules(t)
	field := func(name string) *regexp.Regexp { return regexp.MustCompile(name + ` := \[([0-9, ]*)\]`) }
	edit := func(name string, f func([]string) []string) func(string) string {
		re := field(name)
		return func(line string) string {
			return re.ReplaceAllStringFunc(line, func(s string) string {
				body := re.FindStringSubmatch(s)[1]
				var xs []string
				if body != "" {
					xs = strings.Split(body, ", ")
				}
				return name + " := [" + strings.Join(f(xs), ", ") + "]"
			})
		}
	}
	plants := []struct {
		name string
		edit func(string) string
		ops  []string // where the fault must be caught
	}{
		{"pads end before begin", edit("pads", func(xs []string) []string {
			r := len(xs) / 2
			return append(append([]string{}, xs[r:]...), xs[:r]...)
		}), []string{"conv", "conv_transpose", "max_pool_nd", "avg_pool_nd"}}, // max_pool's and avg_pool's pads are symmetric
		{"stride of axis 0 plus one", edit("stride", func(xs []string) []string {
			var s int
			fmt.Sscan(xs[0], &s)
			return append([]string{fmt.Sprint(s + 1)}, xs[1:]...)
		}), []string{"conv", "conv_transpose", "max_pool", "max_pool_nd", "avg_pool", "avg_pool_nd"}},
		{"dilation dropped", edit("dilation", func([]string) []string { return nil }), []string{"conv", "conv_transpose", "max_pool_nd", "avg_pool_nd"}},
		{"kernel axes reversed", edit("kernel", func(xs []string) []string {
			out := make([]string, len(xs))
			for i, x := range xs {
				out[len(xs)-1-i] = x
			}
			return out
		}), []string{"conv", "conv_transpose", "max_pool", "max_pool_nd", "avg_pool", "avg_pool_nd"}},
		{"groups 1", func(line string) string {
			return regexp.MustCompile(`groups := [0-9]+`).ReplaceAllString(line, "groups := 1")
		}, []string{"conv", "conv_transpose"}},
	}
	for _, pl := range plants {
		for _, op := range pl.ops {
			lines := strings.Split(mods[op], "\n")
			for i, l := range lines {
				if strings.HasPrefix(l, "  {") {
					lines[i] = pl.edit(l)
				}
			}
			caught := 0
			for _, c := range readWindowCases(t, strings.Join(lines, "\n")) {
				if windowClaim(op, &c) != nil {
					caught++
				}
			}
			if caught == 0 {
				t.Errorf("%s: the planted fault %q leaves every case's claim true", op, pl.name)
			}
		}
	}
}

// TestLeanWindowRejects: a window geometry Lean would read differently
// from the registry is refused with the field named, never repaired.
func TestLeanWindowRejects(t *testing.T) {
	for _, tc := range []struct {
		w    *spec.Window
		want string
	}{
		{nil, "window: missing"},
		{&spec.Window{}, "kernel 0"},
		{&spec.Window{Kernel: []int{2}, Stride: []int{1, 1}}, "stride 2"},
		{&spec.Window{Kernel: []int{2}, Stride: []int{1}, Pads: []int{1}}, "pads 1"},
		{&spec.Window{Kernel: []int{2}, Stride: []int{1}, Dilation: []int{1, 1}}, "dilation 2"},
		{&spec.Window{Kernel: []int{2}, Stride: []int{-1}}, "field stride element 0 is negative"},
		{&spec.Window{Kernel: []int{2, 2}, Stride: []int{1, 1}, Pads: []int{0, 0, 0, -1}}, "field pads element 3 is negative"},
		{&spec.Window{Kernel: []int{2}, Stride: []int{1}, Groups: -1}, "negative groups"},
	} {
		_, err := leanWindow(tc.w)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %q", tc.w, err, tc.want)
		}
	}
	if s, err := leanWindow(&spec.Window{Kernel: []int{3, 1}, Stride: []int{1, 2}, Pads: []int{0, 2, 2, 0}}); err != nil ||
		s != ", kernel := [3, 1], stride := [1, 2], dilation := [], pads := [0, 2, 2, 0], groups := 1, countPad := false" {
		t.Errorf("a pool's window: %q, %v", s, err)
	}
	if _, err := leanEps("layer_norm", "x"); err == nil {
		t.Error("ε \"x\" accepted")
	}
	if s, err := leanEps("layer_norm", ""); err != nil || s != ", eps := mkRat 1 100000" {
		t.Errorf("the default ε: %q, %v (the registry's is %s)", s, err, spec.DefaultNormEps().RatString())
	}
	if s, err := leanEps("l2_normalize", ""); err != nil || s != ", eps := mkRat 0 1" {
		t.Errorf("l2_normalize's default ε: %q, %v (the registry's is 0)", s, err)
	}
}
