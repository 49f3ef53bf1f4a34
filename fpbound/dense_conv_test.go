package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/spec"
)

// convCase is one random conv (or conv_transpose) over ErrOf: x [lead,
// cin, n…], W [cout, cin/groups, k…] (conv_transpose: [cin,
// cout/groups, k…]), pads every begin then every end.
type convCase struct {
	transposed              bool
	lead, cin, cout, groups int
	n, k, s, d, op, pads    []int
	bias, zeros, pending    bool
	seed                    uint64
}

func (c convCase) String() string {
	kind := "conv"
	if c.transposed {
		kind = "conv_transpose"
	}
	return fmt.Sprintf("%s/L%d/C%d→%d/g%d/n%v/k%v/s%v/d%v/p%v/%d", kind, c.lead, c.cin, c.cout, c.groups, c.n, c.k, c.s, c.d, c.pads, c.seed)
}

func prodInts(xs []int) int {
	p := 1
	for _, x := range xs {
		p *= x
	}
	return p
}

// next advances the row-major multi-index i below ext; false after the last.
func next(i, ext []int) bool {
	for d := len(i) - 1; d >= 0; d-- {
		i[d]++
		if i[d] < ext[d] {
			return true
		}
		i[d] = 0
	}
	return false
}

func flat(i, ext []int) int {
	f := 0
	for d := range i {
		f = f*ext[d] + i[d]
	}
	return f
}

// outExtent is the spatial output extent, from ONNX's formulas.
func (c convCase) outExtent() []int {
	r := len(c.n)
	o := make([]int, r)
	for d := range o {
		if c.transposed {
			o[d] = (c.n[d]-1)*c.s[d] - c.pads[d] - c.pads[r+d] + c.d[d]*(c.k[d]-1) + c.op[d] + 1
		} else {
			o[d] = (c.n[d]+c.pads[d]+c.pads[r+d]-c.d[d]*(c.k[d]-1)-1)/c.s[d] + 1
		}
	}
	return o
}

// terms lists, for every output element in row-major order of [lead,
// cout, o…], the (x index, W index) pairs of its dot product, from the
// convolution's definition (independently of spec's relation index).
func (c convCase) terms() [][][2]int {
	r := len(c.n)
	ext, nsp, ksp := c.outExtent(), prodInts(c.n), prodInts(c.k)
	cg, cog := c.cin/c.groups, c.cout/c.groups
	var all [][][2]int
	for l := 0; l < c.lead; l++ {
		for co := 0; co < c.cout; co++ {
			q, cp := co/cog, co%cog
			o := make([]int, r)
			for {
				var ts [][2]int
				for ci := 0; ci < cg; ci++ {
					ch := q*cg + ci
					a := make([]int, r)
					for {
						pos, in := make([]int, r), true
						for d := 0; d < r; d++ {
							if c.transposed {
								num := o[d] + c.pads[d] - a[d]*c.d[d]
								pos[d] = num / c.s[d]
								in = in && num >= 0 && num%c.s[d] == 0 && pos[d] < c.n[d]
							} else {
								pos[d] = o[d]*c.s[d] - c.pads[d] + a[d]*c.d[d]
								in = in && pos[d] >= 0 && pos[d] < c.n[d]
							}
						}
						if in {
							wi := (co*cg+ci)*ksp + flat(a, c.k)
							if c.transposed {
								wi = (ch*cog+cp)*ksp + flat(a, c.k)
							}
							ts = append(ts, [2]int{(l*c.cin+ch)*nsp + flat(pos, c.n), wi})
						}
						if !next(a, c.k) {
							break
						}
					}
				}
				all = append(all, ts)
				if !next(o, ext) {
					break
				}
			}
		}
	}
	return all
}

// drawErr draws one input: a binary32 value, a third of them widened to an
// interval, with a small bound; exact zeros and pending sums on request.
func drawErr[F format](r *rand.Rand, zeros, pending bool) ErrOf[F] {
	lo := randF32(r, 4)
	hi := lo
	if r.IntN(3) == 0 {
		hi = lo + math.Abs(randF32(r, 0.01))
	}
	v := valueOf[F](spec.Interval{Lo: lo, Hi: hi}, math.Abs(randF32(r, 1e-6)))
	switch {
	case zeros && r.IntN(4) == 0:
		return ErrOf[F]{}
	case pending && r.IntN(4) == 0:
		return v.Add(valueOf[F](spec.Interval{Lo: 0.5, Hi: 0.5}, 1e-7))
	}
	return v
}

func pointErr[F format](r *rand.Rand) ErrOf[F] {
	v := randF32(r, 1)
	if r.IntN(10) == 0 {
		v = 0
	}
	return valueOf[F](spec.Interval{Lo: v, Hi: v}, 0)
}

// shapes gives the shapes of x and W: x is [lead, cin, n...]; W is
// [cout, cin/groups, k...], or [cin, cout/groups, k...] transposed.
func (c convCase) shapes() (xs, ws spec.Shape) {
	xs = append(spec.Shape{c.lead, c.cin}, c.n...)
	ws = append(spec.Shape{c.cout, c.cin / c.groups}, c.k...)
	if c.transposed {
		ws = append(spec.Shape{c.cin, c.cout / c.groups}, c.k...)
	}
	return xs, ws
}

// operands draws x, W and b as tensors.
func (c convCase) operands() (x, w, b spec.Tensor[Err]) {
	r := rand.New(rand.NewPCG(c.seed, 17))
	xs, ws := c.shapes()
	x = spec.Tensor[Err]{Shape: xs, Data: make([]Err, xs.Size())}
	for i := range x.Data {
		x.Data[i] = drawErr[binary32](r, c.zeros, c.pending)
	}
	w = spec.Tensor[Err]{Shape: ws, Data: make([]Err, ws.Size())}
	for i := range w.Data {
		w.Data[i] = pointErr[binary32](r)
	}
	b = spec.Tensor[Err]{Shape: spec.Shape{c.cout}, Data: make([]Err, c.cout)}
	for i := range b.Data {
		b.Data[i] = pointErr[binary32](r)
	}
	return x, w, b
}

// forward runs the registry's rule (the dense path where it applies).
func (c convCase) forward(t *testing.T, x, w, b spec.Tensor[Err]) spec.Tensor[Err] {
	t.Helper()
	name := "conv"
	if c.transposed {
		name = "conv_transpose"
	}
	p, err := spec.Default[Err]().Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	win := &spec.Window{Kernel: c.k, Stride: c.s, Pads: c.pads, Dilation: c.d, Groups: c.groups}
	if c.transposed {
		win.OutputPadding = c.op
	}
	xs := []spec.Tensor[Err]{x, w}
	if c.bias {
		xs = append(xs, b)
	}
	y, err := p.Forward(&spec.Attrs{Window: win}, xs)
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	return y
}

// denseViolations checks every output v against the fold of its terms:
// the theorem's per-term charges summed exactly (requiredTerms) must lie
// below v's bound and Σ|t|, v must count the fold's terms, its bound must
// be the fold's up to a relative 2⁻³⁰ (the float64 sums' rounding), and its
// enclosure must contain the exact value at the inputs' lower endpoints;
// and v must come from the dense path.
// It returns the first violation of each kind, by kind.
// Output i's bias is b[(i/spatial) % cout] (outputs are [lead, cout, o…]).
func denseViolations(y []Err, x, w []Err, b []Err, terms [][][2]int, spatial, cout int) map[string]string {
	bad := map[string]string{}
	note := func(kind, format string, args ...any) {
		if _, ok := bad[kind]; !ok {
			bad[kind] = fmt.Sprintf(format, args...)
		}
	}
	for i, ts := range terms {
		xs, ws := make([]Err, len(ts)), make([]Err, len(ts))
		ex := new(big.Rat)
		for k, p := range ts {
			xs[k], ws[k] = x[p[0]], w[p[1]]
			ex.Add(ex, new(big.Rat).Mul(rat(xs[k].close().x.Lo), rat(ws[k].x.Lo)))
		}
		var zero Err
		f := spec.FoldDot(zero, xs, ws)
		var bv *Err
		if b != nil {
			bv = &b[(i/spatial)%cout]
			f = f.Add(*bv)
			ex.Add(ex, rat(bv.x.Lo))
		}
		v := y[i]
		re, rs := requiredTerms(xs, ws, bv)
		if rat(v.e).Cmp(re) < 0 {
			note("bound", "output %d: bound %g below the required %s", i, v.e, re.FloatString(30))
		}
		if v.n >= 2 && rat(v.s).Cmp(rs) < 0 {
			note("sum", "output %d: Σ|t| %g below the required %s", i, v.s, rs.FloatString(30))
		}
		if v.id != 0 {
			// The fold's sums carry a fresh identity (Add); the dense
			// path's results carry none.
			note("not-dense", "output %d: computed by the fold (id %d)", i, v.id)
		}
		if v.n != f.n {
			note("terms", "output %d: %d terms, the fold counts %d", i, v.n, f.n)
		}
		if dv, fv := v.Bound(), f.Bound(); dv > fv*(1+math.Ldexp(1, -30)) {
			note("fold", "output %d: dense bound %g looser than the fold's %g", i, dv, fv)
		}
		if rat(v.x.Lo).Cmp(ex) > 0 || rat(v.x.Hi).Cmp(ex) < 0 {
			note("exact", "output %d: %v does not contain %s", i, v.x, ex.FloatString(20))
		}
	}
	return bad
}

func convCases() []convCase {
	one, two := []int{1, 1}, []int{2, 2}
	return []convCase{
		{lead: 1, cin: 3, cout: 8, groups: 1, n: []int{9, 9}, k: []int{3, 3}, s: one, d: one, pads: []int{1, 1, 1, 1}, bias: true, seed: 1},
		{lead: 2, cin: 4, cout: 6, groups: 2, n: []int{8, 7}, k: []int{3, 2}, s: two, d: one, pads: []int{1, 0, 2, 1}, bias: true, zeros: true, seed: 2},
		{lead: 1, cin: 6, cout: 6, groups: 6, n: []int{7, 7}, k: []int{3, 3}, s: one, d: two, pads: []int{2, 2, 2, 2}, pending: true, seed: 3},
		{lead: 1, cin: 5, cout: 4, groups: 1, n: []int{20}, k: []int{4}, s: []int{3}, d: []int{2}, pads: []int{3, 1}, bias: true, zeros: true, pending: true, seed: 4},
		{lead: 1, cin: 2, cout: 3, groups: 1, n: []int{4, 4, 4}, k: []int{2, 2, 2}, s: []int{1, 1, 1}, d: []int{1, 1, 1}, pads: []int{1, 0, 1, 0, 1, 0}, bias: true, seed: 5},
		{transposed: true, lead: 1, cin: 4, cout: 6, groups: 1, n: []int{5, 5}, k: []int{3, 3}, s: two, d: one, op: []int{1, 0}, pads: []int{1, 1, 0, 1}, bias: true, seed: 6},
		{transposed: true, lead: 2, cin: 4, cout: 4, groups: 2, n: []int{6}, k: []int{3}, s: []int{3}, d: []int{2}, op: []int{2}, pads: []int{0, 2}, zeros: true, pending: true, seed: 7},
	}
}

// TestConvDense: conv and conv_transpose over Err, which run on the dense
// path (LinearDense through spec's gather), give for every output the
// fold's term count, a bound above the theorem's charges summed exactly
// and within 2⁻³⁰ (relative) of the element-by-element fold's, and an
// enclosure of the exact value; padding, strides, dilation, groups, 1-D
// to 3-D, exact-zero and pending inputs.
func TestConvDense(t *testing.T) {
	for _, c := range convCases() {
		t.Run(c.String(), func(t *testing.T) {
			x, w, b := c.operands()
			y := c.forward(t, x, w, b)
			terms := c.terms()
			if len(y.Data) != len(terms) {
				t.Fatalf("%d outputs, the definition gives %d", len(y.Data), len(terms))
			}
			var bd []Err
			if c.bias {
				bd = b.Data
			}
			for kind, msg := range denseViolations(y.Data, x.Data, w.Data, bd, terms, prodInts(c.outExtent()), c.cout) {
				t.Errorf("%s: %s", kind, msg)
			}
		})
	}
}

// im2col is the gather table of a conv with one leading slice and one
// group, from the definition: src[o·kk + wi] = the input element that
// output position o's weight wi (of output channel 0) meets, −1 over the
// padding.
func im2col(c convCase) []int32 {
	terms := c.terms()
	sp, kk := prodInts(c.outExtent()), c.cin*prodInts(c.k)
	src := make([]int32, sp*kk)
	for i := range src {
		src[i] = -1
	}
	for o := 0; o < sp; o++ {
		for _, p := range terms[o] {
			src[o*kk+p[1]] = int32(p[0])
		}
	}
	return src
}

// TestConvDensePlanted plants a fault in the dense conv and checks that
// denseViolations catches it: the enclosure's radius dropped (the float64
// centre as a point misses the exact value), and the products' relative
// rounding term dropped (the bound falls below the theorem's charges).
func TestConvDensePlanted(t *testing.T) {
	c := convCases()[0]
	for _, tc := range []struct {
		pl   plant
		kind string
	}{{plantNone, ""}, {plantRadius, "exact"}, {plantRounding, "bound"}} {
		x, w, b := c.operands()
		sp, kk := prodInts(c.outExtent()), c.cin*prodInts(c.k)
		yt := make([]Err, sp*c.cout)
		if !linearDense(x.Data, im2col(c), w.Data, b.Data, yt, sp, c.cout, kk, true, tc.pl) {
			t.Fatal("the dense path did not apply")
		}
		y := make([]Err, len(yt)) // [o][co] → [co][o]
		for o := 0; o < sp; o++ {
			for co := 0; co < c.cout; co++ {
				y[co*sp+o] = yt[o*c.cout+co]
			}
		}
		bad := denseViolations(y, x.Data, w.Data, b.Data, c.terms(), sp, c.cout)
		if tc.pl == plantNone {
			for kind, msg := range bad {
				t.Errorf("unplanted: %s: %s", kind, msg)
			}
			continue
		}
		if _, ok := bad[tc.kind]; !ok {
			t.Errorf("plant %d: not caught (want a %q violation; got %v)", tc.pl, tc.kind, bad)
		}
	}
}

// denseOp reports the ops whose Err evaluation may take the dense path.
func denseOp(op irsem.Op) bool {
	switch op {
	case irsem.OpMatmul, irsem.OpLinear, irsem.OpConv, irsem.OpConvTranspose:
		return true
	}
	return false
}

// enclosedNodes evaluates g over Rat and over Err and checks, at every
// dense node, that each element's enclosure contains the exact value and
// that its bound is finite. It returns the number of dense nodes whose
// results came from the dense path (no identity: the fold's sums have one).
func enclosedNodes(t *testing.T, label string, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) (denseRan int, err error) {
	t.Helper()
	exact, err := irsem.DenoteAll(g, p, x)
	if err != nil {
		return 0, err
	}
	ev, err := irsem.DenoteAll(g, p, irsem.ConvertTensor[Err](x))
	if err != nil {
		t.Fatalf("%s: Err evaluation: %v", label, err)
	}
	for i := range exact {
		if !denseOp(g.Nodes[i].Kind.Op) {
			continue
		}
		ran := true
		for j, r := range exact[i].Data {
			v := ev[i].Data[j]
			if !v.x.Contains(r.Big()) {
				t.Fatalf("%s: node %d (%s) element %d: %v does not contain %s", label, i, g.Nodes[i].Kind.Op, j, v.x, r)
			}
			if math.IsInf(v.Bound(), 1) {
				t.Fatalf("%s: node %d (%s) element %d: no finite bound", label, i, g.Nodes[i].Kind.Op, j)
			}
			ran = ran && v.id == 0
		}
		if ran {
			denseRan++
		}
	}
	return denseRan, nil
}

// convGraph is a random graph of the dense ops on a [1, 3, h, h] input:
// conv 3→c (3×3, pad 1), relu, conv_transpose c→c (3×3, stride 2, pads
// 1, output padding 1), matmul by a constant on the right, then by one on
// the left, with random binary32 weights.
func convGraph(seed uint64, h, c int) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	r := newRand(seed)
	b := newBuilder(spec.Shape{1, 3, h, h})
	w1 := spec.Window{Kernel: []int{3, 3}, Stride: []int{1, 1}, Padding: []int{1, 1}, Dilation: []int{1, 1}, Groups: 1, InChannels: 3, OutChannels: c}
	x := b.node(irsem.Kind{Op: irsem.OpConv, Window: &w1}, spec.Shape{1, c, h, h}, 0)
	wt, bt := randTensor(r, spec.Shape{c, 3, 3, 3}, 0.3), randTensor(r, spec.Shape{c}, 0.1)
	b.p.Entries[x] = &irsem.Params{W: &wt, B: &bt}
	x = b.node(irsem.Kind{Op: irsem.OpRelu}, spec.Shape{1, c, h, h}, x)
	h2 := 2 * h
	w2 := spec.Window{Kernel: []int{3, 3}, Stride: []int{2, 2}, Pads: []int{1, 1, 1, 1}, Dilation: []int{1, 1}, OutputPadding: []int{1, 1}, Groups: 1, InChannels: c, OutChannels: c}
	x = b.node(irsem.Kind{Op: irsem.OpConvTranspose, Window: &w2}, spec.Shape{1, c, h2, h2}, x)
	wt2, bt2 := randTensor(r, spec.Shape{c, c, 3, 3}, 0.3), randTensor(r, spec.Shape{c}, 0.1)
	b.p.Entries[x] = &irsem.Params{W: &wt2, B: &bt2}
	right := b.konst(randTensor(r, spec.Shape{h2, 5}, 0.5))
	x = b.node(irsem.Kind{Op: irsem.OpMatmul}, spec.Shape{1, c, h2, 5}, x, right)
	left := b.konst(randTensor(r, spec.Shape{4, h2}, 0.5))
	b.node(irsem.Kind{Op: irsem.OpMatmul}, spec.Shape{1, c, 4, 5}, left, x)
	return b.g, b.p, randTensor(r, spec.Shape{1, 3, h, h}, 1)
}

// TestDenseGraphsEnclosed: on random graphs of conv, conv_transpose and
// matmul by constants (both sides), every
// element of every dense node's Err value encloses the exact Rat value
// with a finite bound, and every such node ran on the dense path.
func TestDenseGraphsEnclosed(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		g, p, x := convGraph(seed, 5+int(seed), 4)
		n, err := enclosedNodes(t, fmt.Sprintf("convGraph/%d", seed), g, p, x)
		if err != nil {
			t.Fatal(err)
		}
		if n != 4 {
			t.Errorf("convGraph/%d: %d of 4 dense nodes ran on the dense path", seed, n)
		}
	}
}

// TestBackendModelsDense: every ONNX backend test model under
// ../shared/onnx with a conv, conv_transpose, matmul or linear node and
// exact rational semantics: every element of those nodes' Err values
// encloses the exact value on the recorded input, with a finite bound.
// Models whose declared work exceeds 2²² run only with
// TLCHECK_EXHAUSTIVE=1. The test fails if fewer than 20 models had a node
// on the dense path.
func TestBackendModelsDense(t *testing.T) {
	dirs := backendModelDirs(t)
	l := limits.Current()
	l.GraphElements, l.Work = 1<<24, 1<<28
	defer limits.Set(l)()
	ran := 0
	for _, dir := range dirs {
		name := filepath.Base(dir)
		ins, _ := filepath.Glob(filepath.Join(dir, "test_data_set_0", "input_*.pb"))
		sort.Strings(ins)
		im, x, err := model.ImportPB(filepath.Join(dir, "model.onnx"), ins)
		if err != nil {
			continue // not importable: the onnx package's tests say why
		}
		hasDense := false
		for _, nd := range im.Graph.Nodes {
			hasDense = hasDense || denseOp(nd.Kind.Op)
		}
		if !hasDense {
			continue
		}
		if w := declaredWork(im.Graph); w > 1<<22 && os.Getenv("TLCHECK_EXHAUSTIVE") == "" {
			t.Logf("%s: declared work %d; checked only with TLCHECK_EXHAUSTIVE=1", name, w)
			continue
		}
		n, err := enclosedNodes(t, name, im.Graph, im.Payload, x)
		if err != nil {
			t.Logf("%s: no exact value: %v", name, err)
			continue
		}
		if n > 0 {
			ran++
		}
	}
	t.Logf("%d models with a node on the dense path", ran)
	if ran < 20 {
		t.Fatalf("only %d models had a node on the dense path", ran)
	}
}

// declaredWork is the graph's declared work (irsem.DeclaredWork summed).
func declaredWork(g *irsem.Graph) int64 {
	var w int64
	for i := range g.Nodes {
		var in []spec.Shape
		for _, p := range g.Nodes[i].Parents {
			in = append(in, g.Nodes[p].Shape)
		}
		w += irsem.DeclaredWork(&g.Nodes[i], in)
	}
	return w
}
