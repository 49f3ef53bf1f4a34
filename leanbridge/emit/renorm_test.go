package emit

import (
	"fmt"
	"math/big"
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/spec"
)

// A Go transcription of renorm as lean/Tlcheck/Spec.lean states it
// (Attr.rnLane, laneNorm, rnM, rnW, rnY, rnFwd, rnTaps; the JVP tapply of
// the taps, the VJP their transpose), evaluated exactly on the lines Emit
// writes, and compared with the registry's own Forward, JVP and VJP.

var renormLineRE = regexp.MustCompile(`^  \{ shapes := \[\[([0-9, ]*)\]\], xs := \[(.*)\], dxs := \[(.*)\], outShape := \[([0-9, ]*)\], delta := \[(.*)\], c := (mkRat \(?-?[0-9]+\)? [0-9]+), lo := .*, axis := (-?[0-9]+), axis2 := .*, lhs := (mkRat \(?-?[0-9]+\)? [0-9]+), rhs := (mkRat \(?-?[0-9]+\)? [0-9]+) \},?$`)

type rnCase struct {
	shape, outShape    []int
	x, dx, delta       vec
	c                  *big.Rat
	axis               int
	lhs, rhs           *big.Rat
	xsN, dxsN          int // how many inputs and tangents the line lists
	tieW               *big.Rat
	lanesOfL2Normalize bool // plant: l2_normalize's lanes instead of the sub-tensors
	ownSquare          bool // plant: w·yᵢ·yᵢ for w·yᵢ·yⱼ in the partials (not symmetric)
}

func readRenormCases(t *testing.T, src string) []rnCase {
	t.Helper()
	var out []rnCase
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "  {") {
			continue
		}
		m := renormLineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unreadable renorm case line %q", line)
		}
		c := rnCase{shape: readInts(t, m[1]), outShape: readInts(t, m[4]), delta: readVec(t, m[5]), c: readRat(t, m[6]),
			lhs: readRat(t, m[8]), rhs: readRat(t, m[9]), tieW: rat(1, 2)}
		fmt.Sscan(m[7], &c.axis)
		xs, dxs := splitTop(m[2]), splitTop(m[3])
		c.xsN, c.dxsN = len(xs), len(dxs)
		if len(xs) > 0 {
			c.x = readVec(t, xs[0])
		}
		if len(dxs) > 0 {
			c.dx = readVec(t, dxs[0])
		}
		out = append(out, c)
	}
	return out
}

// lane is Attr.rnLane: the sub-tensor of flat index i, every (p, r) of
// the [A, K, B] view at k = i / B % K, flat (p·K + k)·B + r.
func (c *rnCase) lane(i int) []int {
	ax := normAx(len(c.shape), c.axis)
	A, K, B := size(c.shape[:min(ax, len(c.shape))]), nthN(c.shape, ax), size(c.shape[min(ax+1, len(c.shape)):])
	var out []int
	if c.lanesOfL2Normalize {
		for k := 0; k < K; k++ {
			out = append(out, (ndiv(i, K*B)*K+k)*B+nmod(i, B))
		}
		return out
	}
	for p := 0; p < A; p++ {
		for r := 0; r < B; r++ {
			out = append(out, (p*K+nmod(ndiv(i, B), K))*B+r)
		}
	}
	return out
}

// taps is Attr.rnFwd and Attr.rnTaps: ν = ratSqrt of the sub-tensor's sum
// of squares, m = maxS ν c, w = maxDa ν c (tieW at the tie), y = c·x/m and
// the entries c·([i = j] − w·(xᵢ/m)(xⱼ/m))/m.
func (c *rnCase) taps() (n int, fwd vec, taps []wTap) {
	one, zero := rat(1, 1), rat(0, 1)
	mw := func(i int) (m, w *big.Rat) {
		s := rat(0, 1)
		for _, p := range c.lane(i) {
			s = add(s, mul(nthR(c.x, p), nthR(c.x, p)))
		}
		nu := ratSqrt(s)
		switch {
		case lt(nu, c.c):
			return c.c, zero
		case lt(c.c, nu):
			return nu, one
		}
		return nu, c.tieW
	}
	y := func(i int) *big.Rat { m, _ := mw(i); return ldiv(nthR(c.x, i), m) }
	n = size(c.shape)
	for i := 0; i < n; i++ {
		m, w := mw(i)
		fwd = append(fwd, mul(c.c, y(i)))
		for _, j := range c.lane(i) {
			kron := zero
			if i == j {
				kron = one
			}
			yj := y(j)
			if c.ownSquare {
				yj = y(i)
			}
			taps = append(taps, wTap{i, j, ldiv(mul(c.c, new(big.Rat).Sub(kron, mul(mul(w, y(i)), yj))), m)})
		}
	}
	return n, fwd, taps
}

// rnClaim is shapesOk and Claim of the case; nil when they hold.
func rnClaim(c *rnCase) error {
	if c.xsN != 1 || c.dxsN != 1 || len(c.x) != size(c.shape) || len(c.dx) != size(c.shape) {
		return fmt.Errorf("arity or sizes: %d inputs, %d tangents", c.xsN, c.dxsN)
	}
	n, fwd, taps := c.taps()
	if m := size(c.outShape); len(c.delta) != m || len(fwd) != m {
		return fmt.Errorf("δ has %d values, the forward %d, the output shape %v", len(c.delta), len(fwd), c.outShape)
	}
	lhs, rhs := mdot(tapply(n, taps, c.dx), c.delta), mdot(c.dx, tapplyT(n, taps, c.delta))
	if lhs.Cmp(c.lhs) != 0 || rhs.Cmp(c.rhs) != 0 || c.lhs.Cmp(c.rhs) != 0 {
		return fmt.Errorf("Lean's semantics give %s = %s, the case records %s = %s", lhs.RatString(), rhs.RatString(), c.lhs.RatString(), c.rhs.RatString())
	}
	return nil
}

func ratTensor(t *testing.T, shape []int, v vec) spec.Tensor[spec.Rat] {
	t.Helper()
	data := make([]spec.Rat, len(v))
	for j, q := range v {
		data[j] = spec.RatFromBig(q)
	}
	x, err := spec.NewTensor(spec.Shape(shape), data)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// rnAgainstRegistry compares the transcription's forward, JVP (the taps)
// and VJP (their transpose) with the registry's renorm on the case.
func rnAgainstRegistry(t *testing.T, c *rnCase) error {
	t.Helper()
	p, err := ratReg.Lookup("renorm")
	if err != nil {
		t.Fatal(err)
	}
	a := &spec.Attrs{Axis: c.axis, Maxnorm: c.c}
	x := ratTensor(t, c.shape, c.x)
	y, err := p.Forward(a, []spec.Tensor[spec.Rat]{x})
	if err != nil {
		return fmt.Errorf("the registry's forward: %v", err)
	}
	jv, err := p.JVP(a, []spec.Tensor[spec.Rat]{x}, y, []spec.Tensor[spec.Rat]{ratTensor(t, c.shape, c.dx)})
	if err != nil {
		return fmt.Errorf("the registry's JVP: %v", err)
	}
	vj, err := p.VJP(a, []spec.Tensor[spec.Rat]{x}, y, ratTensor(t, c.shape, c.delta))
	if err != nil {
		return fmt.Errorf("the registry's VJP: %v", err)
	}
	n, fwd, taps := c.taps()
	for _, cmp := range []struct {
		what       string
		mine, regs vec
	}{{"forward", fwd, bigs(y)}, {"JVP", tapply(n, taps, c.dx), bigs(jv)}, {"VJP", tapplyT(n, taps, c.delta), bigs(vj[0])}} {
		if !sameVec(cmp.mine, cmp.regs) {
			return fmt.Errorf("Lean's %s %v differs from the registry's %v", cmp.what, cmp.mine, cmp.regs)
		}
	}
	return nil
}

func bigs(x spec.Tensor[spec.Rat]) vec {
	out := make(vec, len(x.Data))
	for i, v := range x.Data {
		out[i] = v.Big()
	}
	return out
}

func renormModule(t *testing.T) string {
	t.Helper()
	r, err := Emit(certDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Modules {
		if m.Path == "Adjointness/renorm.lean" {
			return string(m.Bytes)
		}
	}
	t.Fatal("no Adjointness/renorm.lean emitted")
	return ""
}

// renormInstance is Norm.lean's renorm_instance: x = [3, 6; 4, 8] along
// axis 1 with c = 5 — the column (3, 4) at the tie ν = c, the column (6, 8)
// above it — with the all-ones tangent and cotangent.
func renormInstance() rnCase {
	ones := vec{rat(1, 1), rat(1, 1), rat(1, 1), rat(1, 1)}
	return rnCase{shape: []int{2, 2}, outShape: []int{2, 2}, x: vec{rat(3, 1), rat(6, 1), rat(4, 1), rat(8, 1)},
		dx: ones, delta: ones, c: rat(5, 1), axis: 1, xsN: 1, dxsN: 1, tieW: rat(1, 2)}
}

// TestRenormClaims: every emitted renorm case satisfies its claim,
// re-evaluated on the emitted text, and the transcription's forward, JVP
// and VJP are the registry's own on the same inputs, axis and maxnorm.
func TestRenormClaims(t *testing.T) {
	cases := readRenormCases(t, renormModule(t))
	if len(cases) == 0 {
		t.Fatal("no renorm case emitted")
	}
	for i := range cases {
		if err := rnClaim(&cases[i]); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
		if err := rnAgainstRegistry(t, &cases[i]); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

// TestRenormInstance: Norm.lean's renorm_instance by hand — y = [3, 3, 4, 4];
// the partials I − ½x̂x̂ᵀ on the tied column and ½(I − x̂x̂ᵀ) on the other,
// x̂ = (3/5, 4/5), in flat tap order; JVP and VJP at the ones
// [29/50, 2/25, 11/25, −3/50] — and the registry agrees.
func TestRenormInstance(t *testing.T) {
	c := renormInstance()
	_, fwd, taps := c.taps()
	if want := (vec{rat(3, 1), rat(3, 1), rat(4, 1), rat(4, 1)}); !sameVec(fwd, want) {
		t.Errorf("forward %v, want %v", fwd, want)
	}
	var got vec
	for _, e := range taps {
		got = append(got, e.w)
	}
	if want := (vec{rat(41, 50), rat(-6, 25), rat(8, 25), rat(-6, 25), rat(-6, 25), rat(17, 25), rat(-6, 25), rat(9, 50)}); !sameVec(got, want) {
		t.Errorf("partials %v, want %v", got, want)
	}
	want := vec{rat(29, 50), rat(2, 25), rat(11, 25), rat(-3, 50)}
	if jv, vj := tapply(4, taps, c.dx), tapplyT(4, taps, c.delta); !sameVec(jv, want) || !sameVec(vj, want) {
		t.Errorf("JVP %v, VJP %v, want both %v", jv, vj, want)
	}
	if err := rnAgainstRegistry(t, &c); err != nil {
		t.Error(err)
	}
}

// TestRenormCatchesPlantedFaults: a wrong rule or a wrong emitted
// attribute is caught — the tie weight 1 instead of ½ (against the
// registry at the hand instance's tie), l2_normalize's lanes instead of the
// sub-tensors (against the registry on the emitted cases), and an emitter
// that writes maxnorm with a digit appended or the axis as 0 (some case's
// claim false: the kernel would refuse).
func TestRenormCatchesPlantedFaults(t *testing.T) {
	c := renormInstance()
	c.tieW = rat(1, 1)
	if rnAgainstRegistry(t, &c) == nil {
		t.Error("the tie weight 1 instead of ½ agrees with the registry at the tie")
	}
	src := renormModule(t)
	caught := 0
	for _, c := range readRenormCases(t, src) {
		c.lanesOfL2Normalize = true
		if rnAgainstRegistry(t, &c) != nil {
			caught++
		}
	}
	if caught == 0 {
		t.Error("l2_normalize's lanes for the sub-tensors agree with the registry on every case")
	}
	for _, pl := range []struct {
		name string
		re   *regexp.Regexp
		repl string
	}{
		{"maxnorm with a digit 1 appended to its numerator", regexp.MustCompile(`c := mkRat ([0-9]+) ([0-9]+)`), "c := mkRat ${1}1 ${2}"},
		{"axis 0", regexp.MustCompile(`axis := -?[0-9]+,`), "axis := 0,"},
	} {
		caught := 0
		for _, c := range readRenormCases(t, pl.re.ReplaceAllString(src, pl.repl)) {
			if rnClaim(&c) != nil {
				caught++
			}
		}
		if caught == 0 {
			t.Errorf("the planted fault %q leaves every case's claim true", pl.name)
		}
	}
}

// TestRenormNoMaxnorm: a renorm certificate without maxnorm is one clear
// error, not c = 0 written silently.
func TestRenormNoMaxnorm(t *testing.T) {
	if _, _, _, _, _, err := leanAttrs("renorm", certificates.Attrs{Axis: 1}); err == nil || !strings.Contains(err.Error(), "maxnorm") {
		t.Errorf("leanAttrs(renorm) without maxnorm: %v", err)
	}
}

// TestRenormJacobianSymmetric mirrors Renorm.lean's renorm_jacobian_symm
// and renorm_zero_preserving on random shapes, axes, maxnorms and inputs
// (ties included): every tap (i, j, w) of the transcribed rnTaps has its
// transpose (j, i, w) — so i is in its own sub-tensor, the part Lean does
// not prove — and the forward of the zero tensor is zero. A planted
// partial w·yᵢ·yᵢ (for w·yᵢ·yⱼ) is caught as asymmetric.
func TestRenormJacobianSymmetric(t *testing.T) {
	r := rand.New(rand.NewSource(27))
	symmetric := func(c *rnCase) bool {
		_, _, taps := c.taps()
		w := map[[2]int]*big.Rat{}
		for _, e := range taps {
			w[[2]int{e.o, e.i}] = e.w
		}
		for k, v := range w {
			u, ok := w[[2]int{k[1], k[0]}]
			if !ok || u.Cmp(v) != 0 {
				return false
			}
		}
		return true
	}
	caught := 0
	for trial := 0; trial < 60; trial++ {
		rank := 1 + r.Intn(3)
		shape := make([]int, rank)
		for d := range shape {
			shape[d] = 1 + r.Intn(3)
		}
		x := make(vec, size(shape))
		for i := range x {
			x[i] = rat(int64(r.Intn(9)-4), 1)
		}
		c := rnCase{shape: shape, x: x, c: rat(int64(1+r.Intn(6)), 1), axis: r.Intn(rank), tieW: rat(1, 2)}
		if !symmetric(&c) {
			t.Fatalf("shape %v axis %d x %v: the partials are not symmetric", shape, c.axis, x)
		}
		zero := c
		zero.x = mzeros(size(shape))
		if _, fwd, _ := zero.taps(); !sameVec(fwd, mzeros(size(shape))) {
			t.Fatalf("shape %v: renorm of zero is %v", shape, fwd)
		}
		bad := c
		bad.ownSquare = true
		if !symmetric(&bad) {
			caught++
		}
	}
	if caught == 0 {
		t.Error("the planted partial w·yᵢ·yᵢ was never caught")
	}
}
