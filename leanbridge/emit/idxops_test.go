package emit

import (
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/spec"
)

// idxLineRE reads an emitted index-map case back: shapes, xs, dxs,
// outShape, delta, perm, toShape, lhs, rhs.
var idxLineRE = regexp.MustCompile(`^  \{ shapes := \[(.*)\], xs := \[(.*)\], dxs := \[(.*)\], outShape := \[([0-9, ]*)\], delta := \[(.*)\], c := .*, axis := (-?[0-9]+), axis2 := -?[0-9]+, perm := \[([0-9, ]*)\], start := [0-9]+, stop := [0-9]+, toShape := \[([0-9, ]*)\], values := \[.*\], lhs := (mkRat \(?-?[0-9]+\)? [0-9]+), rhs := (mkRat \(?-?[0-9]+\)? [0-9]+) \},?$`)

// idxCase is one emitted case of tile or scatter, read from its Lean line.
type idxCase struct {
	shapes             [][]int
	xs, dxs            []vec
	delta              vec
	out, perm, toShape []int
	axis               int
	lhs, rhs           *big.Rat
}

func readIdxCases(t *testing.T, src string) []idxCase {
	t.Helper()
	var out []idxCase
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "  {") {
			continue
		}
		m := idxLineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unreadable case line %q", line)
		}
		var c idxCase
		c.shapes, c.xs, c.dxs = readOperands(t, m[1], m[2], m[3])
		c.out, c.delta = readInts(t, m[4]), readVec(t, "["+m[5]+"]")
		c.axis = atoiT(t, m[6])
		c.perm, c.toShape = readInts(t, m[7]), readInts(t, m[8])
		c.lhs, c.rhs = readRat(t, m[9]), readRat(t, m[10])
		out = append(out, c)
	}
	return out
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	r, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("not an integer: %q", s)
	}
	return int(r.Int64())
}

// tileIdx is Attr.tileIdx transcribed: output i (multi-index m in the
// output shape) reads wsum (m[d] mod shape[d])_d (strides shape); Lean's
// n % 0 = n.
func tileIdx(shape, out []int) []int {
	g := make([]int, size(out))
	for i := range g {
		m := unflat(out, i)
		src := make([]int, len(shape))
		for d := range src {
			if shape[d] == 0 {
				src[d] = nthN(m, d)
			} else {
				src[d] = nthN(m, d) % shape[d]
			}
		}
		g[i] = wsum(src, mstrides(shape))
	}
	return g
}

// emittedModule returns the emitted module text of op and its certificate.
func emittedModule(t *testing.T, op string) (string, *certificates.AdjointnessFile) {
	t.Helper()
	dir := certDir(t)
	r, err := Emit(dir)
	if err != nil {
		t.Fatal(err)
	}
	var src string
	for _, m := range r.Modules {
		if m.Path == "Adjointness/"+op+".lean" {
			src = string(m.Bytes)
		}
	}
	if src == "" {
		t.Fatalf("no %s module emitted", op)
	}
	data, err := os.ReadFile(filepath.Join(dir, "adjointness", op+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f certificates.AdjointnessFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return src, &f
}

// gatherClaim is shapesOk and Claim of a one-input gather primitive
// (fwd = jvp = gather g, vjp = [scatter (size shape) g δ]) on an emitted case.
func gatherClaim(c idxCase, g []int) bool {
	if len(c.xs) != 1 || len(c.dxs) != 1 || len(c.shapes) != 1 {
		return false
	}
	n := size(c.shapes[0])
	if len(c.xs[0]) != n || len(c.dxs[0]) != n || len(c.delta) != size(c.out) || len(g) != size(c.out) {
		return false
	}
	l, r := mdot(mgather(g, c.dxs[0]), c.delta), mdot(c.dxs[0], mscatter(n, g, c.delta))
	return l.Cmp(c.lhs) == 0 && r.Cmp(c.rhs) == 0 && c.lhs.Cmp(c.rhs) == 0
}

// registryForward is spec's own forward of op over Rat on the case's inputs.
func registryForward(t *testing.T, op string, a *spec.Attrs, shapes [][]int, xs []vec) vec {
	t.Helper()
	p, err := ratReg.Lookup(op)
	if err != nil {
		t.Fatal(err)
	}
	var ins []spec.Tensor[spec.Rat]
	for k := range xs {
		data := make([]spec.Rat, len(xs[k]))
		for j, v := range xs[k] {
			data[j] = spec.RatFromBig(v)
		}
		x, err := spec.NewTensor(spec.Shape(shapes[k]), data)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, x)
	}
	y, err := p.Forward(a, ins)
	if err != nil {
		t.Fatalf("%s: the registry refuses an emitted case: %v", op, err)
	}
	out := make(vec, len(y.Data))
	for j, v := range y.Data {
		out[j] = v.Big()
	}
	return out
}

// TestTileEmitted: every emitted tile case, read back from the module
// text, has shapesOk and Claim true under the transcription of
// Attr.tileIdx; the transcribed forward (gather along tileIdx) equals the
// registry's own forward on the same input; and a planted wrong tile
// index (one entry moved to the next input element, or the coordinate
// reduced modulo the wrong axis's extent) makes some claim or forward
// comparison fail.
func TestTileEmitted(t *testing.T) {
	src, f := emittedModule(t, "tile")
	cases := readIdxCases(t, src)
	if len(cases) != len(f.Cases) || len(cases) == 0 {
		t.Fatalf("%d cases emitted, the certificate has %d", len(cases), len(f.Cases))
	}
	agrees := func(c idxCase, g []int) bool {
		want := registryForward(t, "tile", &spec.Attrs{Shape: spec.Shape(c.toShape)}, c.shapes, c.xs)
		return gatherClaim(c, g) && sameVec(mgather(g, c.xs[0]), want)
	}
	moved, swapped := 0, 0
	for i, c := range cases {
		if !sameInts(c.toShape, c.out) {
			t.Errorf("case %d: toShape %v, the output shape %v", i, c.toShape, c.out)
		}
		g := tileIdx(c.shapes[0], c.toShape)
		if !agrees(c, g) {
			t.Errorf("case %d: the claim or the forward disagrees at the transcribed index list", i)
		}
		if len(g) > 0 && size(c.shapes[0]) > 1 {
			bad := append([]int(nil), g...)
			bad[len(bad)/2] = (bad[len(bad)/2] + 1) % size(c.shapes[0])
			if !agrees(c, bad) {
				moved++
			}
		}
		if s := c.shapes[0]; len(s) >= 2 && s[0] != s[len(s)-1] {
			rev := make([]int, len(s)) // the extents reversed: coordinates reduced modulo the wrong axis
			for d := range s {
				rev[d] = s[len(s)-1-d]
			}
			bad := make([]int, len(g))
			for j := range bad {
				m := unflat(c.toShape, j)
				src := make([]int, len(s))
				for d := range src {
					src[d] = nthN(m, d) % max(rev[d], 1)
				}
				bad[j] = wsum(src, mstrides(s))
			}
			if !sameInts(bad, g) && !agrees(c, bad) {
				swapped++
			}
		}
	}
	if moved == 0 || swapped == 0 {
		t.Errorf("planted tile faults caught: %d moved entries, %d wrong moduli (want some of each)", moved, swapped)
	}
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// shapeAt is nthL: shape j of a list, [] past its end.
func shapeAt(ss [][]int, j int) []int {
	if j < len(ss) {
		return ss[j]
	}
	return nil
}

// scatterTargets is Attr.scatterTgts transcribed: update e (multi-index m
// in the indices' shape is) writes the data position m with index[e] on
// the axis, flat in the data's shape.
func scatterTargets(shape, is []int, ax int, idx []int) []int {
	t := make([]int, size(is))
	for e := range t {
		m := unflat(is, e)
		if ax < len(m) {
			m[ax] = nthN(idx, e)
		}
		t[e] = wsum(m, mstrides(shape))
	}
	return t
}

// scatterIdx is Attr.scatterIdx transcribed: data position p reads
// size(shape) + e for the first update e writing p, else p.
func scatterIdx(shape, is []int, ax int, idx []int) []int {
	return scatterIdxOf(size(shape), scatterTargets(shape, is, ax, idx))
}

func scatterIdxOf(n int, t []int) []int {
	g := make([]int, n)
	for p := range g {
		g[p] = p
		for e, q := range t {
			if q == p {
				g[p] = n + e
				break
			}
		}
	}
	return g
}

// scatterClaim is shapesOk and Claim of Prim.scatter on an emitted case
// along the source list g: jvp = gather g (dx ++ du), vjp = the scatter of
// δ into size x + size u entries, split by the two shapes.
func scatterClaim(c idxCase, g []int) bool {
	if len(c.xs) != 2 || len(c.dxs) != 2 || len(c.shapes) != 2 {
		return false
	}
	for k := range c.xs {
		if len(c.xs[k]) != size(c.shapes[k]) || len(c.dxs[k]) != size(c.shapes[k]) {
			return false
		}
	}
	if len(g) != size(c.out) || len(c.delta) != size(c.out) {
		return false
	}
	cat := append(append(vec(nil), c.dxs[0]...), c.dxs[1]...)
	sc := mscatter(len(cat), g, c.delta)
	n := len(c.dxs[0])
	l := mdot(mgather(g, cat), c.delta)
	r := add(mdot(c.dxs[0], sc[:n]), mdot(c.dxs[1], sc[n:]))
	return l.Cmp(c.lhs) == 0 && r.Cmp(c.rhs) == 0 && c.lhs.Cmp(c.rhs) == 0
}

// TestScatterEmitted: every emitted scatter case, read back from the
// module text, has shapesOk and Claim true under the transcription of
// Attr.scatterIdx; the transcribed forward (a gather from x ++ u) equals
// the registry's own forward; the VJP's two parts are the registry's rule
// written out (x's cotangent δ with the written positions zeroed, u's δ
// at the targets); and a planted scatter that writes one position off
// (every target moved by one along the flat data) disagrees with the
// registry's forward on some case.
func TestScatterEmitted(t *testing.T) {
	src, f := emittedModule(t, "scatter")
	cases := readIdxCases(t, src)
	if len(cases) != len(f.Cases) || len(cases) == 0 {
		t.Fatalf("%d cases emitted, the certificate has %d", len(cases), len(f.Cases))
	}
	off := 0
	for i, c := range cases {
		if len(c.shapes) != 2 {
			t.Fatalf("case %d: %d shapes", i, len(c.shapes))
		}
		ax := normAx(len(c.shapes[0]), c.axis)
		tg := scatterTargets(c.shapes[0], c.shapes[1], ax, c.perm)
		g := scatterIdxOf(size(c.shapes[0]), tg)
		if !scatterClaim(c, g) {
			t.Errorf("case %d: shapesOk or the claim is false at the transcribed index list", i)
		}
		cat := append(append(vec(nil), c.xs[0]...), c.xs[1]...)
		want := registryForward(t, "scatter", &spec.Attrs{Axis: c.axis, IndicesShape: spec.Shape(c.shapes[1]), Indices: c.perm}, c.shapes, c.xs)
		if !sameVec(mgather(g, cat), want) {
			t.Errorf("case %d: the transcribed forward %v, the registry's %v", i, mgather(g, cat), want)
		}
		// The registry's VJP rule, written out: ḡ_x = δ with the written
		// positions zeroed, ḡ_u[e] = δ[t(e)].
		sc := mscatter(len(cat), g, c.delta)
		gx, gu := append(vec(nil), c.delta...), make(vec, len(tg))
		for e, p := range tg {
			gu[e], gx[p] = c.delta[p], rat(0, 1)
		}
		n := size(c.shapes[0])
		if !sameVec(sc[:n], gx) || !sameVec(sc[n:], gu) {
			t.Errorf("case %d: the scatter of δ is not the registry's VJP rule", i)
		}
		if len(tg) > 0 && n > 1 {
			moved := make([]int, len(tg))
			for e, p := range tg {
				moved[e] = (p + 1) % n
			}
			if !sameVec(mgather(scatterIdxOf(n, moved), cat), want) {
				off++
			}
		}
	}
	if off == 0 {
		t.Error("a scatter writing one position off agrees with the registry on every case")
	}
}

// rpTap is one entry of Attr.rpTaps: output o, input i, weight w.
type rpTap struct {
	o, i int
	w    *big.Rat
}

func prodOf(l vec) *big.Rat {
	p := rat(1, 1)
	for _, v := range l {
		p = mul(p, v)
	}
	return p
}

// rpEval transcribes Prim.reduce_prod: the [A, K, B] view of the axis
// (mattr.dims), output o's lane x[(o/B·K + j)·B + o%B], its product, and
// the taps whose weight is partial(lane, j) — Spec.lean's prefix times
// suffix product, or a planted rule.
func rpEval(shape []int, axis int, x vec, partial func(lane vec, j int) *big.Rat) (fwd vec, taps []rpTap) {
	A, K, B := mattr{shape: shape, axis: axis}.dims()
	for o := 0; o < A*B; o++ {
		lane, src := make(vec, K), make([]int, K)
		for j := range lane {
			src[j] = (sdiv(o, B)*K+j)*B + smod(o, B)
			lane[j] = rat(0, 1)
			if src[j] < len(x) {
				lane[j] = x[src[j]]
			}
		}
		fwd = append(fwd, prodOf(lane))
		for j := range lane {
			taps = append(taps, rpTap{o, src[j], partial(lane, j)})
		}
	}
	return fwd, taps
}

func rpPartial(lane vec, j int) *big.Rat { return mul(prodOf(lane[:j]), prodOf(lane[j+1:])) }

// rpClaim is shapesOk and Claim of Prim.reduce_prod at the taps.
func rpClaim(c idxCase, fwd vec, taps []rpTap) bool {
	if len(c.xs) != 1 || len(c.dxs) != 1 || len(c.shapes) != 1 {
		return false
	}
	n, m := size(c.shapes[0]), size(c.out)
	if len(c.xs[0]) != n || len(c.dxs[0]) != n || len(c.delta) != m || len(fwd) != m {
		return false
	}
	jv, vj := mzeros(m), mzeros(n)
	for _, e := range taps {
		if e.o < m && e.i < n {
			jv[e.o] = add(jv[e.o], mul(e.w, c.dxs[0][e.i]))
			vj[e.i] = add(vj[e.i], mul(e.w, c.delta[e.o]))
		}
	}
	l, r := mdot(jv, c.delta), mdot(c.dxs[0], vj)
	return l.Cmp(c.lhs) == 0 && r.Cmp(c.rhs) == 0 && c.lhs.Cmp(c.rhs) == 0
}

// TestReduceProdEmitted: every emitted reduce_prod case, read back from
// the module text, has shapesOk and Claim true under the transcription of
// Attr.rpFwd and Attr.rpTaps; the transcribed forward equals the
// registry's own; the JVP through the taps equals the registry's JVP; and
// planted partials (the prefix product alone, dropping the suffix; and
// y / x_j, which is 0/0 — here 0 — at a zero) make some claim false.
func TestReduceProdEmitted(t *testing.T) {
	src, f := emittedModule(t, "reduce_prod")
	cases := readIdxCases(t, src)
	if len(cases) != len(f.Cases) || len(cases) == 0 {
		t.Fatalf("%d cases emitted, the certificate has %d", len(cases), len(f.Cases))
	}
	p, err := ratReg.Lookup("reduce_prod")
	if err != nil {
		t.Fatal(err)
	}
	prefix, quotient := 0, 0
	for i, c := range cases {
		fwd, taps := rpEval(c.shapes[0], c.axis, c.xs[0], rpPartial)
		if !rpClaim(c, fwd, taps) {
			t.Errorf("case %d: shapesOk or the claim is false under the transcription", i)
		}
		a := &spec.Attrs{Axis: c.axis}
		if want := registryForward(t, "reduce_prod", a, c.shapes, c.xs); !sameVec(fwd, want) {
			t.Errorf("case %d: the transcribed forward %v, the registry's %v", i, fwd, want)
		}
		toT := func(v vec) spec.Tensor[spec.Rat] {
			data := make([]spec.Rat, len(v))
			for j := range v {
				data[j] = spec.RatFromBig(v[j])
			}
			x, err := spec.NewTensor(spec.Shape(c.shapes[0]), data)
			if err != nil {
				t.Fatal(err)
			}
			return x
		}
		y, err := p.Forward(a, []spec.Tensor[spec.Rat]{toT(c.xs[0])})
		if err != nil {
			t.Fatal(err)
		}
		jv, err := p.JVP(a, []spec.Tensor[spec.Rat]{toT(c.xs[0])}, y, []spec.Tensor[spec.Rat]{toT(c.dxs[0])})
		if err != nil {
			t.Fatal(err)
		}
		mine := mzeros(len(fwd))
		for _, e := range taps {
			mine[e.o] = add(mine[e.o], mul(e.w, c.dxs[0][e.i]))
		}
		for j := range mine {
			if mine[j].Cmp(jv.Data[j].Big()) != 0 {
				t.Errorf("case %d: the taps' JVP element %d is %s, the registry's %s", i, j, mine[j].RatString(), jv.Data[j].Big().RatString())
				break
			}
		}
		if _, bad := rpEval(c.shapes[0], c.axis, c.xs[0], func(l vec, j int) *big.Rat { return prodOf(l[:j]) }); !rpClaim(c, fwd, bad) {
			prefix++
		}
		if _, bad := rpEval(c.shapes[0], c.axis, c.xs[0], func(l vec, j int) *big.Rat {
			if l[j].Sign() == 0 {
				return rat(0, 1)
			}
			return div(prodOf(l), l[j])
		}); !rpClaim(c, fwd, bad) {
			quotient++
		}
	}
	if prefix == 0 || quotient == 0 {
		t.Errorf("planted partials caught: %d without the suffix, %d as y/x_j (which differs only where a lane has a zero); want some of each", prefix, quotient)
	}
}
