package emit

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// A Go transcription of the normalisations as lean/Tlcheck/Spec.lean
// states them (laneMean, laneVar, laneInv, NormG and its taps,
// Attr.lnG/inG/bnTaps, tapplyAll/tapplyTAll), evaluated exactly on the
// lines Emit writes: the claim each `decide +kernel` asserts, re-evaluated.

var normLineRE = regexp.MustCompile(`^  \{ shapes := \[(.*)\], xs := \[(.*)\], dxs := \[(.*)\], outShape := \[([0-9, ]*)\], delta := \[(.*)\], c := .*, axis := (-?[0-9]+), axis2 := .*, lhs := (mkRat \(?-?[0-9]+\)? [0-9]+), rhs := (mkRat \(?-?[0-9]+\)? [0-9]+), eps := (mkRat [0-9]+ [0-9]+) \},?$`)

type nCase struct {
	shapes        [][]int
	xs, dxs       []vec
	outShape      []int
	delta         vec
	axis          int
	lhs, rhs, eps *big.Rat
}

func readNormCases(t *testing.T, src string) []nCase {
	t.Helper()
	var out []nCase
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "  {") {
			continue
		}
		m := normLineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unreadable normalisation case line %q", line)
		}
		c := nCase{outShape: readInts(t, m[4]), delta: readVec(t, m[5]), lhs: readRat(t, m[7]), rhs: readRat(t, m[8]), eps: readRat(t, m[9])}
		fmt.Sscan(m[6], &c.axis)
		c.shapes, c.xs, c.dxs = readOperands(t, m[1], m[2], m[3])
		out = append(out, c)
	}
	return out
}

// ratSqrt is Spec.lean's: ⌊√num⌋ / ⌊√den⌋ (a negative numerator reads 0).
func ratSqrt(q *big.Rat) *big.Rat {
	n := new(big.Int).Set(q.Num())
	if n.Sign() < 0 {
		n.SetInt64(0)
	}
	d := new(big.Int).Sqrt(q.Denom())
	if d.Sign() == 0 {
		return rat(0, 1)
	}
	return new(big.Rat).SetFrac(new(big.Int).Sqrt(n), d)
}

// ldiv is Lean's division on Rat: a / 0 = 0.
func ldiv(a, b *big.Rat) *big.Rat {
	if b.Sign() == 0 {
		return rat(0, 1)
	}
	return new(big.Rat).Quo(a, b)
}

func laneMean(x vec, ps []int) *big.Rat {
	s := rat(0, 1)
	for _, p := range ps {
		s = add(s, nthR(x, p))
	}
	return ldiv(s, rat(int64(len(ps)), 1))
}

func laneInv(eps *big.Rat, x vec, ps []int) *big.Rat {
	m, v := laneMean(x, ps), rat(0, 1)
	for _, p := range ps {
		d := new(big.Rat).Sub(nthR(x, p), m)
		v = add(v, mul(d, d))
	}
	return ldiv(rat(1, 1), ratSqrt(add(ldiv(v, rat(int64(len(ps)), 1)), eps)))
}

func laneHat(eps *big.Rat, x vec, ps []int, i int) *big.Rat {
	return mul(new(big.Rat).Sub(nthR(x, i), laneMean(x, ps)), laneInv(eps, x, ps))
}

// parOr is Spec.lean's: parameter k of the inputs after x, d when absent.
func parOr(ps []vec, k int, d *big.Rat, j int) *big.Rat {
	if k < len(ps) {
		return nthR(ps[k], j)
	}
	return d
}

// normG is Tlcheck.NormG: the lane and parameter index of a flat index.
type normG struct {
	n    int
	lane func(i int) []int
	par  func(i int) int
}

func (c *nCase) normG(op string) normG {
	shape := c.shapes[0]
	if op == "instance_norm" {
		S := size(shape[min(2, len(shape)):])
		return normG{size(shape), func(i int) []int {
			var out []int
			for j := 0; j < S; j++ {
				out = append(out, ndiv(i, S)*S+j)
			}
			return out
		}, func(i int) int { return nmod(ndiv(i, S), nthN(shape, 1)) }}
	}
	ax := normAx(len(shape), c.axis)
	K, B := nthN(shape, ax), size(shape[min(ax+1, len(shape)):])
	return normG{size(shape), func(i int) []int {
		var out []int
		for k := 0; k < K; k++ {
			out = append(out, (ndiv(i, K*B)*K+k)*B+nmod(i, B))
		}
		return out
	}, func(i int) int { return nmod(ndiv(i, B), K) }}
}

// normTaps is NormG.taps (layer_norm, instance_norm) or Attr.bnTaps, and
// the forward.
func (c *nCase) normTaps(op string) (n int, fwd vec, taps [][]wTap) {
	x, ps := c.xs[0], c.xs[1:]
	one, zero := rat(1, 1), rat(0, 1)
	if op == "batch_norm_eval" {
		shape := c.shapes[0]
		ax := normAx(len(shape), c.axis)
		ch := func(i int) int { return nmod(ndiv(i, size(shape[min(ax+1, len(shape)):])), nthN(shape, ax)) }
		vpos := func(k int) *big.Rat {
			v := parOr(ps, 1, zero, k)
			if v.Sign() < 0 {
				v = zero
			}
			return add(v, c.eps)
		}
		std := func(k int) *big.Rat { return ratSqrt(vpos(k)) }
		q := func(i int) *big.Rat { return ldiv(new(big.Rat).Sub(nthR(x, i), parOr(ps, 0, zero, ch(i))), std(ch(i))) }
		n = size(shape)
		taps = make([][]wTap, 5)
		for i := 0; i < n; i++ {
			k := ch(i)
			g := parOr(ps, 2, one, k)
			fwd = append(fwd, add(mul(q(i), g), parOr(ps, 3, zero, k)))
			step := zero
			if parOr(ps, 1, zero, k).Sign() > 0 {
				step = one
			}
			taps[0] = append(taps[0], wTap{i, i, ldiv(g, std(k))})
			taps[1] = append(taps[1], wTap{i, k, neg(ldiv(g, std(k)))})
			taps[2] = append(taps[2], wTap{i, k, ldiv(neg(mul(mul(q(i), g), step)), add(vpos(k), vpos(k)))})
			taps[3] = append(taps[3], wTap{i, k, q(i)})
			taps[4] = append(taps[4], wTap{i, k, one})
		}
		return n, fwd, taps
	}
	if op == "l2_normalize" {
		return c.l2Taps()
	}
	q := c.normG(op)
	taps = make([][]wTap, 3)
	for i := 0; i < q.n; i++ {
		ln, p := q.lane(i), q.par(i)
		g, K := parOr(ps, 0, one, p), rat(int64(len(ln)), 1)
		hi := laneHat(c.eps, x, ln, i)
		fwd = append(fwd, add(mul(hi, g), parOr(ps, 1, zero, p)))
		for _, j := range ln {
			kron := zero
			if i == j {
				kron = one
			}
			w := new(big.Rat).Sub(new(big.Rat).Sub(kron, ldiv(one, K)), ldiv(mul(hi, laneHat(c.eps, x, ln, j)), K))
			taps[0] = append(taps[0], wTap{i, j, mul(mul(g, laneInv(c.eps, x, ln)), w)})
		}
		taps[1] = append(taps[1], wTap{i, p, hi})
		taps[2] = append(taps[2], wTap{i, p, one})
	}
	return q.n, fwd, taps
}

// l2Taps is Attr.l2Taps and Attr.l2Fwd: on lnG's lanes, ν = ratSqrt of
// the lane's sum of squares, m = maxS ν ε, w = maxDa ν ε, y = x/m, and the
// entries ([i = j] − w·yᵢ·yⱼ)/m.
func (c *nCase) l2Taps() (n int, fwd vec, taps [][]wTap) {
	x, q := c.xs[0], c.normG("l2_normalize")
	one, zero := rat(1, 1), rat(0, 1)
	mw := func(i int) (m, w *big.Rat) {
		s := rat(0, 1)
		for _, p := range q.lane(i) {
			s = add(s, mul(nthR(x, p), nthR(x, p)))
		}
		nu := ratSqrt(s)
		switch {
		case lt(nu, c.eps):
			return c.eps, zero
		case lt(c.eps, nu):
			return nu, one
		}
		return nu, rat(1, 2)
	}
	y := func(i int) *big.Rat { m, _ := mw(i); return ldiv(nthR(x, i), m) }
	taps = make([][]wTap, 1)
	for i := 0; i < q.n; i++ {
		m, w := mw(i)
		fwd = append(fwd, y(i))
		for _, j := range q.lane(i) {
			kron := zero
			if i == j {
				kron = one
			}
			taps[0] = append(taps[0], wTap{i, j, ldiv(new(big.Rat).Sub(kron, mul(mul(w, y(i)), y(j))), m)})
		}
	}
	return q.n, fwd, taps
}

// normArity is Prim.arityOk's range of input counts per normalisation.
var normArity = map[string][2]int{"layer_norm": {1, 3}, "instance_norm": {3, 3}, "batch_norm_eval": {3, 5}, "l2_normalize": {1, 1}}

// normClaim is shapesOk and Claim of the case; nil when they hold.
func normClaim(op string, c *nCase) error {
	lo, hi := normArity[op][0], normArity[op][1]
	if len(c.xs) < lo || len(c.xs) > hi || len(c.shapes) != len(c.xs) || len(c.dxs) != len(c.xs) {
		return fmt.Errorf("arity: %d inputs", len(c.xs))
	}
	for k := range c.xs {
		if len(c.xs[k]) != size(c.shapes[k]) || len(c.dxs[k]) != size(c.shapes[k]) {
			return fmt.Errorf("input %d: sizes", k)
		}
	}
	n, fwd, taps := c.normTaps(op)
	taps = taps[:min(len(taps), len(c.xs))]
	if m := size(c.outShape); len(c.delta) != m || len(fwd) != m {
		return fmt.Errorf("δ has %d values, the forward %d, the output shape %v", len(c.delta), len(fwd), c.outShape)
	}
	jv := mzeros(n)
	for k := range taps {
		jv = mpadd(jv, tapply(n, taps[k], c.dxs[k]))
	}
	rhs := rat(0, 1)
	for k := range taps {
		rhs = add(rhs, mdot(c.dxs[k], tapplyT(size(c.shapes[k]), taps[k], c.delta)))
	}
	if lhs := mdot(jv, c.delta); lhs.Cmp(c.lhs) != 0 || rhs.Cmp(c.rhs) != 0 || c.lhs.Cmp(c.rhs) != 0 {
		return fmt.Errorf("Lean's semantics give %s = %s, the case records %s = %s", lhs.RatString(), rhs.RatString(), c.lhs.RatString(), c.rhs.RatString())
	}
	return nil
}

func normModules(t *testing.T) map[string]string {
	t.Helper()
	r, err := Emit(certDir(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range r.Modules {
		if op := strings.TrimSuffix(strings.TrimPrefix(m.Path, "Adjointness/"), ".lean"); normOps[op] {
			out[op] = string(m.Bytes)
		}
	}
	if len(out) != len(normOps) {
		t.Fatalf("%d normalisation modules emitted, want %d", len(out), len(normOps))
	}
	return out
}

// TestNormClaims: every emitted case of layer_norm, instance_norm,
// batch_norm_eval and l2_normalize satisfies its claim, re-evaluated on the emitted text,
// and the transcription's forward is the registry's own Forward on the
// same inputs, axis and ε (an independent implementation).
func TestNormClaims(t *testing.T) {
	for op, src := range normModules(t) {
		p, err := ratReg.Lookup(op)
		if err != nil {
			t.Fatal(err)
		}
		cases := readNormCases(t, src)
		for i := range cases {
			c := &cases[i]
			if err := normClaim(op, c); err != nil {
				t.Errorf("%s case %d: %v", op, i, err)
				continue
			}
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
			y, err := p.Forward(&spec.Attrs{Axis: c.axis, Eps: c.eps}, xs)
			if err != nil {
				t.Fatalf("%s case %d: the registry's forward: %v", op, i, err)
			}
			n, fwd, taps := c.normTaps(op)
			for j := range fwd {
				if j >= len(y.Data) || fwd[j].Cmp(y.Data[j].Big()) != 0 {
					t.Errorf("%s case %d: Lean's forward element %d differs from the registry's", op, i, j)
					break
				}
			}
			// The JVP through the taps is the registry's own JVP.
			var dxs []spec.Tensor[spec.Rat]
			for k := range c.dxs {
				data := make([]spec.Rat, len(c.dxs[k]))
				for j, v := range c.dxs[k] {
					data[j] = spec.RatFromBig(v)
				}
				dx, err := spec.NewTensor(spec.Shape(c.shapes[k]), data)
				if err != nil {
					t.Fatal(err)
				}
				dxs = append(dxs, dx)
			}
			jv, err := p.JVP(&spec.Attrs{Axis: c.axis, Eps: c.eps}, xs, y, dxs)
			if err != nil {
				t.Fatalf("%s case %d: the registry's JVP: %v", op, i, err)
			}
			mine := mzeros(n)
			for k := range taps[:min(len(taps), len(c.dxs))] {
				mine = mpadd(mine, tapply(n, taps[k], c.dxs[k]))
			}
			for j := range mine {
				if j >= len(jv.Data) || mine[j].Cmp(jv.Data[j].Big()) != 0 {
					t.Errorf("%s case %d: the taps' JVP element %d differs from the registry's", op, i, j)
					break
				}
			}
		}
	}
}

// TestNormClaimsCatchPlantedFaults: an emitter that writes a wrong ε or a
// wrong axis makes some case's claim false — the kernel would refuse.
func TestNormClaimsCatchPlantedFaults(t *testing.T) {
	mods := normModules(t)
	plants := []struct {
		name string
		re   *regexp.Regexp
		repl string
		ops  []string
	}{
		{"ε with a digit 1 appended to its numerator", regexp.MustCompile(`eps := mkRat ([0-9]+) ([0-9]+)`), "eps := mkRat ${1}1 ${2}", []string{"layer_norm", "instance_norm", "batch_norm_eval", "l2_normalize"}},
		{"axis 0", regexp.MustCompile(`axis := -?[0-9]+,`), "axis := 0,", []string{"layer_norm", "batch_norm_eval", "l2_normalize"}},
	}
	for _, pl := range plants {
		for _, op := range pl.ops {
			caught := 0
			for _, c := range readNormCases(t, pl.re.ReplaceAllString(mods[op], pl.repl)) {
				if normClaim(op, &c) != nil {
					caught++
				}
			}
			if caught == 0 {
				t.Errorf("%s: the planted fault %q leaves every case's claim true", op, pl.name)
			}
		}
	}
}

// TestL2NormalizeInstance: Norm.lean's l2_normalize_instance, by the
// transcription: the lane [3, 4] (ν = 5) maps to [3/5, 4/5] with partials
// [16, −12; −12, 9]/125 at ε = 0 and, at the tie ε = 5 (weight ½),
// [41/250, −6/125; −6/125, 17/125].
func TestL2NormalizeInstance(t *testing.T) {
	for _, tc := range []struct {
		eps  *big.Rat
		want vec
	}{
		{rat(0, 1), vec{rat(16, 125), rat(-12, 125), rat(-12, 125), rat(9, 125)}},
		{rat(5, 1), vec{rat(41, 250), rat(-6, 125), rat(-6, 125), rat(17, 125)}},
	} {
		c := &nCase{shapes: [][]int{{2}}, xs: []vec{{rat(3, 1), rat(4, 1)}}, axis: -1, eps: tc.eps}
		_, fwd, taps := c.l2Taps()
		if tc.eps.Sign() == 0 && !sameVec(fwd, vec{rat(3, 5), rat(4, 5)}) {
			t.Errorf("ε = 0: forward %v", fwd)
		}
		var got vec
		for _, e := range taps[0] {
			got = append(got, e.w)
		}
		if !sameVec(got, tc.want) {
			t.Errorf("ε = %s: partials %v, want %v", tc.eps.RatString(), got, tc.want)
		}
	}
}

// TestNormVJPLinear mirrors Norm.lean's tapplyTAll_linear and the
// <norm>_vjp_linear theorems: on every emitted normalisation case, the
// transcribed VJP (the taps' transposes) is linear in δ and maps zero to
// zeros (δ and a second cotangent δ' of one length, k = −3/2), and it is
// the registry's own VJP at δ. A planted affine rule (the VJP plus 1 in
// every entry) fails the laws.
func TestNormVJPLinear(t *testing.T) {
	vjpOf := func(c *nCase, op string, d vec) []vec {
		_, _, taps := c.normTaps(op)
		taps = taps[:min(len(taps), len(c.xs))]
		out := make([]vec, len(taps))
		for k := range taps {
			out[k] = tapplyT(size(c.shapes[k]), taps[k], d)
		}
		return out
	}
	affine := func(c *nCase, op string, d vec) []vec {
		out := vjpOf(c, op, d)
		for k := range out {
			for j := range out[k] {
				out[k][j] = add(out[k][j], rat(1, 1))
			}
		}
		return out
	}
	laws := func(c *nCase, op string, v func(*nCase, string, vec) []vec) bool {
		d1 := c.delta
		d2 := make(vec, len(d1))
		for j := range d1 {
			d2[j] = add(d1[len(d1)-1-j], rat(int64(j%3), 2))
		}
		k := rat(-3, 2)
		a, b, s, z := v(c, op, d1), v(c, op, d2), v(c, op, mpadd(d1, d2)), v(c, op, mzeros(len(d1)))
		ks := v(c, op, msmul(k, d1))
		for i := range a {
			if !sameVec(s[i], mpadd(a[i], b[i])) || !sameVec(ks[i], msmul(k, a[i])) || !sameVec(z[i], mzeros(len(a[i]))) {
				return false
			}
		}
		return true
	}
	for op, src := range normModules(t) {
		p, err := ratReg.Lookup(op)
		if err != nil {
			t.Fatal(err)
		}
		planted := 0
		for i, c := range readNormCases(t, src) {
			if !laws(&c, op, vjpOf) {
				t.Errorf("%s case %d: the transcribed VJP is not linear in δ", op, i)
			}
			if !laws(&c, op, affine) {
				planted++
			}
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
			a := &spec.Attrs{Axis: c.axis, Eps: c.eps}
			y, err := p.Forward(a, xs)
			if err != nil {
				t.Fatal(err)
			}
			data := make([]spec.Rat, len(c.delta))
			for j, v := range c.delta {
				data[j] = spec.RatFromBig(v)
			}
			dy, err := spec.NewTensor(y.Shape, data)
			if err != nil {
				t.Fatal(err)
			}
			g, err := p.VJP(a, xs, y, dy)
			if err != nil {
				t.Fatal(err)
			}
			mine := vjpOf(&c, op, c.delta)
			for k := range mine {
				got := make(vec, len(g[k].Data))
				for j := range got {
					got[j] = g[k].Data[j].Big()
				}
				if !sameVec(mine[k], got) {
					t.Errorf("%s case %d: the transcribed VJP of input %d differs from the registry's", op, i, k)
				}
			}
		}
		if planted == 0 {
			t.Errorf("%s: the planted affine VJP passes the linearity laws on every case", op)
		}
	}
}
