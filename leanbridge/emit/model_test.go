package emit

import (
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
)

// A transcription of lean/Tlcheck/Spec.lean and Check.lean's shapesOk and
// Claim into Go (truncating list operations, Lean's a/0 = 0), run on the
// emitted certificates: an estimate, made here without Lean, that
// `decide +kernel` will find every emitted case true. It is not the
// kernel's verdict, and it follows the Lean source only as long as the two
// are kept in step.

type vec = []*big.Rat

func rat(n, d int64) *big.Rat    { return big.NewRat(n, d) }
func add(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
func mul(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }
func neg(a *big.Rat) *big.Rat    { return new(big.Rat).Neg(a) }
func div(a, b *big.Rat) *big.Rat {
	if b.Sign() == 0 {
		return rat(0, 1)
	}
	return new(big.Rat).Quo(a, b)
}
func lt(a, b *big.Rat) bool { return a.Cmp(b) < 0 }

func mdot(a, b vec) *big.Rat {
	s := rat(0, 1)
	for i := 0; i < len(a) && i < len(b); i++ {
		s = add(s, mul(a[i], b[i]))
	}
	return s
}
func zip(f func(a, b *big.Rat) *big.Rat, a, b vec) vec {
	var out vec
	for i := 0; i < len(a) && i < len(b); i++ {
		out = append(out, f(a[i], b[i]))
	}
	return out
}
func pmap(f func(a *big.Rat) *big.Rat, a vec) vec {
	out := make(vec, len(a))
	for i := range a {
		out[i] = f(a[i])
	}
	return out
}
func msmul(c *big.Rat, a vec) vec { return pmap(func(x *big.Rat) *big.Rat { return mul(c, x) }, a) }
func mzeros(n int) vec            { return pmap(func(*big.Rat) *big.Rat { return rat(0, 1) }, make(vec, n)) }
func mpadd(a, b vec) vec          { return zip(add, a, b) }
func mpmul(a, b vec) vec          { return zip(mul, a, b) }
func ind(b bool) *big.Rat {
	if b {
		return rat(1, 1)
	}
	return rat(0, 1)
}
func tie(win, eq bool) *big.Rat {
	switch {
	case win:
		return rat(1, 1)
	case eq:
		return rat(1, 2)
	}
	return rat(0, 1)
}
func size(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}
func take(l vec, n int) vec { return l[:min(n, len(l))] }
func drop(l vec, n int) vec { return l[min(n, len(l)):] }
func sumChunks(b, k int, l vec) vec {
	if k == 0 {
		return mzeros(b)
	}
	return mpadd(take(l, b), sumChunks(b, k-1, drop(l, b)))
}
func reduceAKB(k, b, a int, l vec) vec {
	if a == 0 {
		return nil
	}
	return append(append(vec{}, sumChunks(b, k, take(l, k*b))...), reduceAKB(k, b, a-1, drop(l, k*b))...)
}
func bcastAKB(k, b, a int, d vec) vec {
	if a == 0 {
		return nil
	}
	var out vec
	for i := 0; i < k; i++ {
		out = append(out, take(d, b)...)
	}
	return append(out, bcastAKB(k, b, a-1, drop(d, b))...)
}

type mattr struct {
	c, lo, hi   *big.Rat
	axis, axis2 int
	shape, perm []int
	start, stop int
	toShape     []int
	values      vec
	shapes      [][]int
	win         *wCase   // a pool node's window fields (comp_test.go)
	eps         *big.Rat // a normalisation's ε (comp_test.go)
	p           *big.Rat // dropout's drop probability (comp_test.go)
	mask        vec      // dropout's replayed keep mask (comp_test.go)
}

func nthN(l []int, j int) int {
	if j < 0 || j >= len(l) {
		return 0
	}
	return l[j]
}
func mstrides(s []int) []int {
	out := make([]int, len(s))
	for i := range s {
		out[i] = size(s[i+1:])
	}
	return out
}
func unflat(s []int, i int) []int {
	out := make([]int, len(s))
	for k := range s {
		t := size(s[k+1:])
		if t == 0 {
			out[k] = 0 // Lean's Nat division by 0
		} else {
			out[k] = i / t
			i %= t
		}
	}
	return out
}
func wsum(m, w []int) int {
	s := 0
	for i := 0; i < len(m) && i < len(w); i++ {
		s += m[i] * w[i]
	}
	return s
}
func normAx(r, a int) int {
	if a < 0 {
		return max(a+r, 0)
	}
	return a
}
func permIdx(s, p []int) []int {
	o := make([]int, len(p))
	w := make([]int, len(p))
	st := mstrides(s)
	for k, q := range p {
		o[k], w[k] = nthN(s, q), nthN(st, q)
	}
	g := make([]int, size(o))
	for i := range g {
		g[i] = wsum(unflat(o, i), w)
	}
	return g
}

// index is the gather index list of an index-map primitive (Attr.permuteIdx …).
func (a mattr) index(op string) ([]int, bool) {
	switch op {
	case "permute":
		return permIdx(a.shape, a.perm), true
	case "transpose":
		x, y := normAx(len(a.shape), a.axis), normAx(len(a.shape), a.axis2)
		p := make([]int, len(a.shape))
		for k := range p {
			switch k {
			case x:
				p[k] = y
			case y:
				p[k] = x
			default:
				p[k] = k
			}
		}
		return permIdx(a.shape, p), true
	case "slice":
		ax := normAx(len(a.shape), a.axis)
		o := append([]int{}, a.shape...)
		if ax < len(o) {
			o[ax] = max(a.stop-a.start, 0)
		}
		g := make([]int, size(o))
		for i := range g {
			m := unflat(o, i)
			if ax < len(m) {
				m[ax] += a.start
			}
			g[i] = wsum(m, mstrides(a.shape))
		}
		return g, true
	case "concat":
		ax := normAx(len(a.shape), a.axis)
		o := append([]int{}, a.shape...)
		tot := 0
		for _, s := range a.shapes {
			tot += nthN(s, ax)
		}
		if ax < len(o) {
			o[ax] = tot
		}
		g := make([]int, size(o))
		for i := range g {
			m := unflat(o, i)
			p, base := nthN(m, ax), 0
			for _, s := range a.shapes {
				if p < nthN(s, ax) {
					mm := append([]int{}, m...)
					if ax < len(mm) {
						mm[ax] = p
					}
					g[i] = base + wsum(mm, mstrides(s))
					break
				}
				p -= nthN(s, ax)
				base += size(s)
			}
		}
		return g, true
	case "pad": // widths, mode and fill are Attr.perm, axis2 and c; a fill position reads size(shape)
		r := len(a.shape)
		o := make([]int, r)
		for d := range o {
			o[d] = nthN(a.shape, d) + nthN(a.perm, d) + nthN(a.perm, r+d)
		}
		g := make([]int, size(o))
		for i := range g {
			m, src, fill := unflat(o, i), make([]int, r), false
			for d := range src {
				j := m[d] - nthN(a.perm, d) // the registry's padSource, written out
				n := a.shape[d]
				switch {
				case j >= 0 && j < n:
					src[d] = j
				case a.axis2 == 1 && j < 0:
					src[d] = -j
				case a.axis2 == 1:
					src[d] = 2*(n-1) - j
				case a.axis2 == 2 && j < 0:
					src[d] = 0
				case a.axis2 == 2:
					src[d] = n - 1
				default:
					fill = true
				}
			}
			if g[i] = wsum(src, mstrides(a.shape)); fill {
				g[i] = size(a.shape)
			}
		}
		return g, true
	case "gather": // the indices are Attr.perm
		A, K, B := a.dims()
		J := len(a.perm)
		g := make([]int, A*J*B)
		for i := range g {
			g[i] = (sdiv(i, J*B)*K+nthN(a.perm, smod(sdiv(i, B), J)))*B + smod(i, B)
		}
		return g, true
	case "scatter": // Attr.scatterIdx: a gather from x ++ u
		return scatterIdx(a.shape, shapeAt(a.shapes, 1), normAx(len(a.shape), a.axis), a.perm), true
	case "tile": // Attr.tileIdx: output coordinate d reads m[d] mod shape[d] (Lean's n % 0 = n)
		return tileIdx(a.shape, a.toShape), true
	case "broadcast_to":
		g := make([]int, size(a.toShape))
		off := len(a.toShape) - len(a.shape)
		for i := range g {
			m := unflat(a.toShape, i)
			src := make([]int, len(a.shape))
			for d := range src {
				if a.shape[d] != 1 {
					src[d] = nthN(m, off+d)
				}
			}
			g[i] = wsum(src, mstrides(a.shape))
		}
		return g, true
	}
	return nil, false
}

func (a mattr) dims() (int, int, int) {
	ax := a.axis
	if ax < 0 {
		ax = max(ax+len(a.shape), 0)
	}
	k := 0
	if ax < len(a.shape) {
		k = a.shape[ax]
	}
	return size(a.shape[:min(ax, len(a.shape))]), k, size(a.shape[min(ax+1, len(a.shape)):])
}

// partials gives, per input, the pointwise factor of the elementwise
// primitives (jvp = Σₖ fₖ⊙dxₖ, vjp δ = (fₖ⊙δ)ₖ).
func partials(op string, a mattr, xs []vec) ([]vec, bool) {
	one := func(f func(x *big.Rat) *big.Rat) []vec { return []vec{pmap(f, xs[0])} }
	two := func(f, g func(x, y *big.Rat) *big.Rat) []vec {
		return []vec{zip(f, xs[0], xs[1]), zip(g, xs[0], xs[1])}
	}
	switch op {
	case "mul":
		return []vec{xs[1], xs[0]}, true
	case "div":
		return two(func(_, y *big.Rat) *big.Rat { return div(rat(1, 1), y) }, func(x, y *big.Rat) *big.Rat { return neg(div(x, mul(y, y))) }), true
	case "max":
		return two(func(x, y *big.Rat) *big.Rat { return tie(lt(y, x), x.Cmp(y) == 0) }, func(x, y *big.Rat) *big.Rat { return tie(lt(x, y), x.Cmp(y) == 0) }), true
	case "min":
		return two(func(x, y *big.Rat) *big.Rat { return tie(lt(x, y), x.Cmp(y) == 0) }, func(x, y *big.Rat) *big.Rat { return tie(lt(y, x), x.Cmp(y) == 0) }), true
	case "square":
		return one(func(x *big.Rat) *big.Rat { return mul(rat(2, 1), x) }), true
	case "inv":
		return one(func(x *big.Rat) *big.Rat { return neg(div(rat(1, 1), mul(x, x))) }), true
	case "relu":
		return one(func(x *big.Rat) *big.Rat { return ind(lt(rat(0, 1), x)) }), true
	case "abs":
		return one(func(x *big.Rat) *big.Rat {
			if lt(rat(0, 1), x) {
				return rat(1, 1)
			}
			if lt(x, rat(0, 1)) {
				return rat(-1, 1)
			}
			return rat(0, 1)
		}), true
	case "sqrt":
		return one(func(x *big.Rat) *big.Rat {
			if !lt(rat(0, 1), x) {
				return rat(0, 1)
			}
			// ratSqrt: the integer square roots of numerator and denominator.
			r := new(big.Rat).SetFrac(new(big.Int).Sqrt(x.Num()), new(big.Int).Sqrt(x.Denom()))
			return div(rat(1, 1), mul(rat(2, 1), r))
		}), true
	case "clamp":
		return one(func(x *big.Rat) *big.Rat { return ind(lt(a.lo, x) && lt(x, a.hi)) }), true
	case "sign", "round_f16", "round_bf16", "round_f32", "trunc_int": // sign′ = round′ = trunc′ = 0 (roundD, truncD)
		return one(func(*big.Rat) *big.Rat { return rat(0, 1) }), true
	case "shrink": // the threshold λ is Attr.lo
		return one(func(x *big.Rat) *big.Rat { return ind(lt(a.lo, x) || lt(x, neg(a.lo))) }), true
	}
	return nil, false
}

func mgather(g []int, x vec) vec {
	out := make(vec, len(g))
	for i, j := range g {
		if j < len(x) {
			out[i] = x[j]
		} else {
			out[i] = rat(0, 1)
		}
	}
	return out
}
func mscatter(n int, g []int, d vec) vec {
	out := mzeros(n)
	for i, j := range g {
		if i < len(d) && j < n {
			out[j] = add(out[j], d[i])
		}
	}
	return out
}

// linear is Attr.linGx/linGw/linGb and the [B, m, n] formulation of
// Tlcheck.Prim.linear.
func (a mattr) linear(xs, dxs []vec, d vec) (vec, []vec) {
	nthS := func(j int) []int {
		if j < len(a.shapes) {
			return a.shapes[j]
		}
		return nil
	}
	m, n := nthN(nthS(1), 0), nthN(nthS(1), 1)
	xsh := nthS(0)
	b := size(xsh[:max(len(xsh)-1, 0)])
	var gx, gw, gb []int
	for t := 0; t < b*m*n; t++ {
		q, r := 0, 0
		if m*n != 0 {
			q, r = t/(m*n), t%(m*n)
		} else {
			r = t
		}
		tn := t
		if n != 0 {
			tn = t % n
		}
		gx, gw = append(gx, q*n+tn), append(gw, r)
	}
	for t := 0; t < b*m; t++ {
		if m != 0 {
			gb = append(gb, t%m)
		} else {
			gb = append(gb, t)
		}
	}
	p := mpadd(mpmul(mgather(gx, dxs[0]), mgather(gw, xs[1])), mpmul(mgather(gx, xs[0]), mgather(gw, dxs[1])))
	jv := mpadd(reduceAKB(n, 1, b*m, p), mgather(gb, dxs[2]))
	e := bcastAKB(n, 1, b*m, d)
	return jv, []vec{
		mscatter(size(nthS(0)), gx, mpmul(mgather(gw, xs[1]), e)),
		mscatter(size(nthS(1)), gw, mpmul(mgather(gx, xs[0]), e)),
		mscatter(size(nthS(2)), gb, d),
	}
}

func bshape(p, q []int) []int {
	r := max(len(p), len(q))
	pad := func(s []int) []int {
		out := make([]int, r-len(s))
		for i := range out {
			out[i] = 1
		}
		return append(out, s...)
	}
	pp, qq := pad(p), pad(q)
	out := make([]int, r)
	for d := range out {
		if pp[d] == 1 {
			out[d] = qq[d]
		} else {
			out[d] = pp[d]
		}
	}
	return out
}
func bsrc(s, t, m []int) int {
	src := make([]int, len(s))
	for d := range s {
		if s[d] != 1 {
			src[d] = nthN(m, len(t)-len(s)+d)
		}
	}
	return wsum(src, mstrides(s))
}
func sdiv(a, b int) int {
	if b == 0 {
		return 0
	}
	return a / b
}
func smod(a, b int) int {
	if b == 0 {
		return a
	}
	return a % b
}

// matmul is Attr.mmGa/mmGb and the [batch, m, n, k] formulation of
// Tlcheck.Prim.matmul.
func (a mattr) matmul(xs, dxs []vec, d vec) (vec, []vec) {
	sa, sb := a.shapes[0], a.shapes[1]
	ma, mb := sa, sb
	if len(sa) == 1 {
		ma = []int{1, sa[0]}
	}
	if len(sb) == 1 {
		mb = []int{sb[0], 1}
	}
	m, k, n := nthN(ma, len(ma)-2), nthN(ma, len(ma)-1), nthN(mb, len(mb)-1)
	ba, bb := ma[:len(ma)-2], mb[:len(mb)-2]
	batch := bshape(ba, bb)
	out := size(batch) * m * n
	var ga, gb []int
	for t := 0; t < out*k; t++ {
		beta := unflat(batch, sdiv(t, k*n*m))
		ga = append(ga, bsrc(ba, batch, beta)*(m*k)+smod(sdiv(t, k*n), m)*k+smod(t, k))
		gb = append(gb, bsrc(bb, batch, beta)*(k*n)+smod(t, k)*n+smod(sdiv(t, k), n))
	}
	p := mpadd(mpmul(mgather(ga, dxs[0]), mgather(gb, xs[1])), mpmul(mgather(ga, xs[0]), mgather(gb, dxs[1])))
	jv := reduceAKB(k, 1, out, p)
	e := bcastAKB(k, 1, out, d)
	return jv, []vec{
		mscatter(size(sa), ga, mpmul(mgather(gb, xs[1]), e)),
		mscatter(size(sb), gb, mpmul(mgather(ga, xs[0]), e)),
	}
}

// sides is ⟨jvp, δ⟩ and Σₖ⟨dxₖ, vjpₖ⟩ as Tlcheck.Prim computes them.
func sides(op string, a mattr, xs, dxs []vec, d vec) (*big.Rat, *big.Rat) {
	jv, vj := jvpVJP(op, a, xs, dxs, d)
	r := rat(0, 1)
	for k := range dxs {
		if k < len(vj) {
			r = add(r, mdot(dxs[k], vj[k]))
		}
	}
	return mdot(jv, d), r
}

// jvpVJP is Prim.jvp a xs dxs and Prim.vjp a xs d.
func jvpVJP(op string, a mattr, xs, dxs []vec, d vec) (jv vec, vj []vec) {
	if pj, pv, ok := a.paramJVP(op, xs, dxs, d); ok {
		return pj, pv
	}
	if a.win != nil {
		_, jv, vj = windowEval(op, a.poolCase(xs, dxs, d))
	} else if op == "linear" {
		jv, vj = a.linear(xs, dxs, d)
	} else if op == "matmul" {
		jv, vj = a.matmul(xs, dxs, d)
	} else if g, ok := a.index(op); ok {
		var cat vec
		for _, dx := range dxs {
			cat = append(cat, dx...)
		}
		n := size(a.shape)
		if op == "concat" || op == "scatter" {
			n = len(cat)
		}
		for _, j := range g {
			if j < len(cat) {
				jv = append(jv, cat[j])
			} else {
				jv = append(jv, rat(0, 1))
			}
		}
		sc := mzeros(n)
		for i, j := range g {
			if i < len(d) && j < len(sc) {
				sc[j] = add(sc[j], d[i])
			}
		}
		vj = []vec{sc}
		if op == "concat" || op == "scatter" {
			vj = nil
			for _, s := range a.shapes {
				k := min(size(s), len(sc))
				vj, sc = append(vj, sc[:k]), sc[k:]
			}
		}
	} else if fs, ok := partials(op, a, xs); ok {
		for k, f := range fs {
			if k == 0 {
				jv = mpmul(f, dxs[0])
			} else {
				jv = mpadd(jv, mpmul(f, dxs[k]))
			}
			vj = append(vj, mpmul(f, d))
		}
	} else {
		m1 := rat(-1, 1)
		switch op {
		case "add":
			jv, vj = mpadd(dxs[0], dxs[1]), []vec{d, d}
		case "sub":
			jv, vj = mpadd(dxs[0], msmul(m1, dxs[1])), []vec{d, msmul(m1, d)}
		case "neg":
			jv, vj = msmul(m1, dxs[0]), []vec{msmul(m1, d)}
		case "scale":
			jv, vj = msmul(a.c, dxs[0]), []vec{msmul(a.c, d)}
		case "sum":
			s := rat(0, 1)
			for _, v := range dxs[0] {
				s = add(s, v)
			}
			jv = vec{s}
			if len(d) > 0 { // Lean's `d :: _` arm; an empty δ falls through to []
				vj = []vec{pmap(func(*big.Rat) *big.Rat { return d[0] }, xs[0])}
			}
		case "reduce_sum", "reduce_mean":
			A, K, B := a.dims()
			k := rat(1, 1)
			if op == "reduce_mean" {
				k = div(rat(1, 1), rat(int64(K), 1))
			}
			jv, vj = msmul(k, reduceAKB(K, B, A, dxs[0])), []vec{bcastAKB(K, B, A, msmul(k, d))}
		case "mse_loss":
			n := int64(max(len(xs[0]), 1))
			r := mpadd(xs[0], msmul(m1, xs[1]))
			s := div(rat(2, 1), rat(n, 1))
			jv = vec{mul(s, mdot(r, mpadd(dxs[0], msmul(m1, dxs[1]))))}
			if len(d) > 0 {
				k := mul(s, d[0])
				vj = []vec{msmul(k, r), msmul(neg(k), r)}
			}
		case "reshape", "flatten":
			jv, vj = dxs[0], []vec{d}
		case "const", "rand_uniform":
			jv = mzeros(len(a.values))
		case "bernoulli_mask", "keep_mask": // the seeded draws: zero tangent, zero contribution
			jv, vj = mzeros(len(a.values)), []vec{mzeros(len(xs[0]))}
		case "detach":
			jv, vj = mzeros(len(dxs[0])), []vec{mzeros(len(xs[0]))}
		}
	}
	return jv, vj
}

func TestLeanSpecModel(t *testing.T) {
	dir := certDir(t)
	parse := func(t certificates.Tensor) vec {
		out := make(vec, len(t.Values))
		for i, v := range t.Values {
			out[i], _ = new(big.Rat).SetString(v)
		}
		return out
	}
	r0 := func(s string) *big.Rat {
		if s == "" {
			s = "0"
		}
		v, _ := new(big.Rat).SetString(s)
		return v
	}
	for _, op := range Covered {
		if windowOps[op] || normOps[op] || drawOps[op] || op == "dropout" || op == "reduce_prod" || op == "renorm" { // transcribed from the emitted modules in window_test.go, norm_test.go, dropout_test.go, idxops_test.go, renorm_test.go
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "adjointness", op+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var f certificates.AdjointnessFile
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatal(err)
		}
		for i, c := range f.Cases {
			var xs, dxs []vec
			for k := range c.Inputs {
				xs, dxs = append(xs, parse(c.Inputs[k])), append(dxs, parse(c.Dx[k]))
			}
			a := mattr{c: r0(c.Attrs.C), lo: r0(c.Attrs.Lo), hi: r0(c.Attrs.Hi), axis: c.Attrs.Axis, axis2: c.Attrs.Axis2,
				perm: c.Attrs.Perm, start: c.Attrs.Start, stop: c.Attrs.End, toShape: c.Attrs.Shape}
			switch op { // the emitter's mapping onto Attr's fields, written out again
			case "gather", "scatter":
				a.perm = c.Attrs.Indices
			case "shrink":
				a.c, a.lo = r0(c.Attrs.Bias), r0(c.Attrs.Lambd)
				if c.Attrs.Lambd == "" {
					a.lo = rat(1, 2)
				}
			case "pad":
				a.perm, a.c = c.Attrs.Widths, r0(c.Attrs.Value)
				a.axis2 = map[string]int{"": 0, "constant": 0, "reflect": 1, "edge": 2}[c.Attrs.Mode]
			}
			for _, in := range c.Inputs {
				a.shapes = append(a.shapes, in.Shape)
			}
			for _, v := range c.Attrs.Values {
				a.values = append(a.values, r0(v))
			}
			if len(c.Inputs) > 0 {
				a.shape = c.Inputs[0].Shape
			}
			// shapesOk: arity, every tensor of its shape's size, δ and the
			// forward output of the output shape's size.
			arity := 1
			switch op {
			case "const":
				arity = 0
			case "add", "sub", "mul", "div", "max", "min", "mse_loss", "matmul", "scatter":
				arity = 2
			case "linear":
				arity = 3
			}
			fwd := 0
			if g, ok := a.index(op); ok {
				fwd = len(g)
			} else {
				switch op {
				case "sum", "mse_loss":
					fwd = 1
				case "const":
					fwd = len(a.values)
				case "linear":
					jv, _ := a.linear(xs, xs, vec{})
					fwd = len(jv)
				case "matmul":
					jv, _ := a.matmul(xs, xs, vec{})
					fwd = len(jv)
				case "reduce_sum", "reduce_mean":
					A, _, B := a.dims()
					fwd = A * B
				case "round_f16", "round_bf16", "round_f32": // roundFwd: [] at an overflow
					y, ok := leanRoundAll(leanFmtOf(op), xs[0])
					fwd = len(y)
					if !ok {
						fwd = 0
					}
				case "trunc_int": // truncFwd: [] at a domain error
					y, ok := leanTruncAll(a.lo, a.hi, xs[0], lTruncZ)
					fwd = len(y)
					if !ok {
						fwd = 0
					}
				default:
					fwd = len(xs[0])
					if arity == 2 {
						fwd = min(len(xs[0]), len(xs[1]))
					}
				}
			}
			if op == "concat" {
				arity = len(xs)
			}
			ok := len(xs) == arity && fwd == size(c.Delta.Shape) && len(c.Delta.Values) == size(c.Delta.Shape)
			for k := range c.Inputs {
				ok = ok && len(xs[k]) == size(c.Inputs[k].Shape) && len(dxs[k]) == size(c.Inputs[k].Shape)
			}
			if !ok {
				t.Errorf("%s case %d: shapesOk would be false", op, i)
			}
			l, r := sides(op, a, xs, dxs, parse(c.Delta))
			if l.Cmp(r0(c.LHS)) != 0 || r.Cmp(r0(c.RHS)) != 0 {
				t.Errorf("%s case %d: the Lean semantics give %s, %s; the certificate %s, %s", op, i, l.RatString(), r.RatString(), c.LHS, c.RHS)
			}
		}
	}
}
