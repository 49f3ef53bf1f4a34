package emit

import (
	"fmt"
	"math/big"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The Go transcription of lean/Tlcheck/Local.lean: fit, fitAll and
// primLens, the lens through which Comp.lean's toNode reads a node's
// tangents and cotangent. Lean's theorem lens_adjoint says that for every
// node, every cotangent δ and every list of tangents dxs (any lengths)
//
//	⟨δ, fit out (jvp (fitAll ins dxs))⟩ = Σₖ ⟨(fitAll ins (vjp (fit out δ)))ₖ, dxsₖ⟩,
//
// which discharges Graph.LocallyAdjoint for every graph over Prim; the
// checker's lensOk demands that a recorded node's lens lengths are its
// inputs' and its value's, so that on the certified tangents the lens is
// the identity.

// fitV is Local.lean's fit: the first n entries of l, zero-padded to n.
func fitV(n int, l vec) vec {
	out := make(vec, n)
	for i := range out {
		if i < len(l) {
			out[i] = l[i]
		} else {
			out[i] = rat(0, 1)
		}
	}
	return out
}

// fitAllV is fitAll: the k-th tensor fitted to ns[k] ([] past the end).
func fitAllV(ns []int, ds []vec) []vec {
	out := make([]vec, len(ns))
	for k, n := range ns {
		var d vec
		if k < len(ds) {
			d = ds[k]
		}
		out[k] = fitV(n, d)
	}
	return out
}

// dotAllV is Spec.lean's dotAll: Σₖ ⟨uₖ, vₖ⟩ over the common prefix.
func dotAllV(us, vs []vec) *big.Rat {
	s := rat(0, 1)
	for k := 0; k < len(us) && k < len(vs); k++ {
		s = add(s, mdot(us[k], vs[k]))
	}
	return s
}

// leanLens transcribes primLens: the input lengths and the output length
// of a node of prim at attributes a, input values xs and value v, and
// whether it is a lens other than Lens.none (no inputs, length 0).
func leanLens(prim string, a mattr, xs []vec, v vec) (ins []int, out int, ok bool) {
	n := func(i int) int { return len(xs[i]) }
	one := func(in, o int) ([]int, int, bool) { return []int{in}, o, true }
	switch ar := len(xs); {
	case (prim == "add" || prim == "sub") && ar == 2:
		return []int{n(0), n(0)}, n(0), true
	case (prim == "mul" || prim == "div" || prim == "max" || prim == "min") && ar == 2 && n(0) == n(1):
		return []int{n(0), n(0)}, n(0), true
	case ar == 1 && oneOf(prim, "neg", "scale", "square", "inv", "relu", "abs", "clamp", "sqrt", "sign", "shrink", "round_f16", "round_bf16", "round_f32", "trunc_int",
		"reshape", "flatten", "detach", "dropout"):
		return one(n(0), len(v))
	case ar == 1 && oneOf(prim, "bernoulli_mask", "keep_mask"):
		return one(n(0), len(a.values))
	case ar == 0 && oneOf(prim, "const", "rand_uniform"):
		return []int{}, len(a.values), true
	case prim == "sum" && ar == 1:
		return one(n(0), 1)
	case prim == "mse_loss" && ar == 2:
		return []int{n(0), n(0)}, 1, true
	case ar == 1 && oneOf(prim, "reduce_sum", "reduce_mean"):
		A, K, B := a.dims()
		return one(A*(K*B), A*B)
	case prim == "reduce_prod" && ar == 1:
		A, _, B := a.dims()
		return one(size(a.shape), A*B)
	case ar == 1 && oneOf(prim, "permute", "transpose", "slice", "broadcast_to", "tile", "gather", "pad"):
		return one(size(a.shape), len(v))
	case ar >= 1 && oneOf(prim, "layer_norm", "instance_norm") && min(3, ar) == len(a.shapes):
		for _, s := range a.shapes {
			ins = append(ins, size(s))
		}
		return ins, size(a.shape), true
	case ar >= 1 && prim == "batch_norm_eval" && min(5, ar) == len(a.shapes):
		for _, s := range a.shapes {
			ins = append(ins, size(s))
		}
		return ins, size(a.shape), true
	case ar == 1 && oneOf(prim, "l2_normalize", "renorm"):
		return one(size(a.shape), size(a.shape))
	case oneOf(prim, "concat", "scatter"):
		for _, s := range a.shapes {
			ins = append(ins, size(s))
		}
		return ins, len(v), true
	case prim == "matmul" && ar == 2:
		return []int{size(shapeAt(a.shapes, 0)), size(shapeAt(a.shapes, 1))}, a.mmOut(), true
	case prim == "linear" && ar == 3:
		x0, w := shapeAt(a.shapes, 0), shapeAt(a.shapes, 1)
		b := size(x0[:max(len(x0)-1, 0)])
		return []int{size(x0), size(w), size(shapeAt(a.shapes, 2))}, b * nthN(w, 0), true
	case (prim == "conv" || prim == "conv_transpose") && (ar == 2 || ar == 3) && a.win != nil:
		y, x, w, bs := a.convSizes(prim == "conv_transpose")
		if ar == 2 {
			return []int{x, w}, y, true
		}
		return []int{x, w, bs}, y, true
	case ar == 1 && oneOf(prim, "max_pool", "max_pool_nd", "avg_pool", "avg_pool_nd") && a.win != nil:
		lead, S, B := a.poolSizes()
		return one(lead*B, lead*S)
	}
	return []int{}, 0, false
}

func oneOf(s string, set ...string) bool {
	for _, t := range set {
		if s == t {
			return true
		}
	}
	return false
}

// mmOut is Attr.mmOut: batch · m · n, a 1-D operand read as [1, k] / [k, 1].
func (a mattr) mmOut() int {
	sa, sb := shapeAt(a.shapes, 0), shapeAt(a.shapes, 1)
	if len(sa) == 1 {
		sa = []int{1, sa[0]}
	}
	if len(sb) == 1 {
		sb = []int{sb[0], 1}
	}
	ba, bb := sa[:max(len(sa)-2, 0)], sb[:max(len(sb)-2, 0)]
	return size(bshape(ba, bb)) * nthN(sa, len(sa)-2) * nthN(sb, len(sb)-1)
}

// winSp is Attr.winSp (natural subtraction).
func (a mattr) winSp() int { return max(len(a.shape)-len(a.win.kernel), 0) }

// poolSizes is Attr.poolG's lead and Π S, Π B (small side the output).
func (a mattr) poolSizes() (lead, S, B int) {
	sp := a.winSp()
	S, B = 1, 1
	for d := range a.win.kernel {
		S *= nthN(a.win.outShape, sp+d)
		B *= nthN(a.shape, sp+d)
	}
	return size(a.shape[:min(sp, len(a.shape))]), S, B
}

// convSizes is Conv.bil's / ConvT.bil's ySize, xSize, wSize and bSize.
func (a mattr) convSizes(transpose bool) (y, x, w, b int) {
	sp := a.winSp()
	c1 := max(sp-1, 0)
	lead, cin := size(a.shape[:min(c1, len(a.shape))]), nthN(a.shape, c1)
	in, out, K := 1, 1, 1
	for d, k := range a.win.kernel {
		in *= nthN(a.shape, sp+d)
		out *= nthN(a.win.outShape, sp+d)
		K *= k
	}
	ndiv := func(p, q int) int {
		if q == 0 {
			return 0
		}
		return p / q
	}
	g := a.win.groups
	if !transpose {
		cout := nthN(shapeAt(a.shapes, 1), 0)
		return lead * cout * out, lead * cin * in, cout * ndiv(cin, g) * K, cout
	}
	cout := nthN(shapeAt(a.shapes, 1), 1) * g
	return lead * cout * out, lead * cin * in, cin * ndiv(cout, g) * K, cout
}

// lensOkV is Comp.lean's lensOk: the lens reads the inputs and the output
// at their recorded lengths.
func lensOkV(ins []int, out int, xs []vec, v vec) bool {
	if len(ins) != len(xs) || out != len(v) {
		return false
	}
	for k := range xs {
		if ins[k] != len(xs[k]) {
			return false
		}
	}
	return true
}

// lensMaps is toNode's JVP and VJP of a node through its lens: fit out
// (jvp (fitAll ins dxs)) and fitAll ins (vjp (fit out δ)); Lens.none maps
// everything to [] (and the empty list of contributions).
func lensMaps(rule func(string, mattr, []vec, []vec, vec) (vec, []vec), prim string, a mattr, xs []vec, v vec, dxs []vec, d vec) (vec, []vec) {
	ins, out, ok := leanLens(prim, a, xs, v)
	if !ok {
		return vec{}, nil
	}
	jv, vj := rule(prim, a, xs, fitAllV(ins, dxs), fitV(out, d))
	return fitV(out, jv), fitAllV(ins, vj)
}

// lensSides are the two sides of lens_adjoint at one node.
func lensSides(rule func(string, mattr, []vec, []vec, vec) (vec, []vec), prim string, a mattr, xs []vec, v vec, dxs []vec, d vec) (*big.Rat, *big.Rat) {
	jv, vj := lensMaps(rule, prim, a, xs, v, dxs, d)
	return mdot(d, jv), dotAllV(vj, dxs)
}

// allCompCases are the emitted composition cases: the gate's and the two
// example models'.
func allCompCases(t *testing.T) []readCase {
	t.Helper()
	r, err := Emit(certDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var cases []readCase
	for _, m := range r.Modules {
		if m.Path == "Composition.lean" {
			cases = append(cases, readComp(t, string(m.Bytes))...)
		}
	}
	for _, name := range []string{"quad", "mlp"} {
		cs, _ := modelComp(t, modelDir(t, name, name))
		cases = append(cases, cs...)
	}
	return cases
}

func randVec(r *rand.Rand, n int) vec {
	out := make(vec, n)
	for i := range out {
		out[i] = rat(int64(r.Intn(9)-4), int64(r.Intn(3)+1))
	}
	return out
}

// TestLensAdjointAnyLength checks lens_adjoint numerically at every node
// of every emitted composition case, for tangents and cotangents of random
// lengths (shorter, equal and longer than the lens's): the identity that
// discharges LocallyAdjoint over listPairing. Every recorded node's lens
// is at its recorded lengths (lensOk). Planted faults: a VJP whose two
// contributions are swapped (mul, max, min, sub) breaks the identity, and
// a lens one element too long for an output breaks lensOk.
func TestLensAdjointAnyLength(t *testing.T) {
	cases := allCompCases(t)
	if len(cases) == 0 {
		t.Fatal("no composition cases")
	}
	swapped := func(op string, a mattr, xs, dxs []vec, d vec) (vec, []vec) {
		jv, vj := jvpVJP(op, a, xs, dxs, d)
		if len(vj) == 2 && (op == "mul" || op == "max" || op == "min" || op == "sub") {
			vj = []vec{vj[1], vj[0]}
		}
		return jv, vj
	}
	r := rand.New(rand.NewSource(27))
	nodes, caught := 0, map[string]bool{}
	for ci, c := range cases {
		for k, nd := range c.nodes {
			var xs []vec
			for _, p := range nd.parents {
				if p == 0 {
					xs = append(xs, c.x)
				} else {
					xs = append(xs, c.nodes[p-1].value)
				}
			}
			ins, out, ok := leanLens(nd.prim, nd.attr, xs, nd.value)
			if !ok || !lensOkV(ins, out, xs, nd.value) {
				t.Errorf("case %d node %d (%s): lens %v→%d (ok %v) for inputs of lengths %v and a value of %d", ci, k+1, nd.prim, ins, out, ok, lens(xs), len(nd.value))
			}
			if nd.prim == "reduce_sum" || nd.prim == "sum" || nd.prim == "matmul" {
				if lensOkV(ins, out+1, xs, nd.value) {
					t.Errorf("case %d node %d: a lens one too long passes lensOk", ci, k+1)
				}
				caught["lens"] = true
			}
			nodes++
			for trial := 0; trial < 6; trial++ {
				var dxs []vec
				for j := 0; j < len(xs)+r.Intn(2); j++ {
					dxs = append(dxs, randVec(r, max(len(safeAt(xs, j))+r.Intn(5)-2, 0)))
				}
				d := randVec(r, max(len(nd.value)+r.Intn(5)-2, 0))
				if l, rr := lensSides(jvpVJP, nd.prim, nd.attr, xs, nd.value, dxs, d); l.Cmp(rr) != 0 {
					t.Errorf("case %d node %d (%s): ⟨δ, jvp⟩ = %s, Σ⟨vjp, dx⟩ = %s at dx lengths %v, δ length %d", ci, k+1, nd.prim, l.RatString(), rr.RatString(), lens(dxs), len(d))
				}
				if l, rr := lensSides(swapped, nd.prim, nd.attr, xs, nd.value, dxs, d); l.Cmp(rr) != 0 {
					caught[nd.prim] = true
				}
			}
		}
	}
	if nodes == 0 {
		t.Fatal("no nodes checked")
	}
	for _, p := range []string{"mul", "sub", "lens"} {
		if !caught[p] {
			t.Errorf("planted fault (%s) not caught", p)
		}
	}
}

func lens(xs []vec) []int {
	var out []int
	for _, x := range xs {
		out = append(out, len(x))
	}
	return out
}

func safeAt(xs []vec, j int) vec {
	if j < len(xs) {
		return xs[j]
	}
	return nil
}

// TestLensNoneAndFit: fit and fitAll as Local.lean states them (fit_id,
// length_fit, dot_fit, dotAll_fitAll), checked on random lists, and an
// arity the primitive's JVP does not match gets Lens.none.
func TestLensNoneAndFit(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for trial := 0; trial < 200; trial++ {
		n := r.Intn(5)
		u, v := randVec(r, r.Intn(6)), randVec(r, r.Intn(6))
		if len(fitV(n, u)) != n {
			t.Fatalf("length_fit: %d", len(fitV(n, u)))
		}
		if mdot(fitV(n, u), v).Cmp(mdot(u, fitV(n, v))) != 0 {
			t.Fatalf("dot_fit fails at n=%d, %v, %v", n, u, v)
		}
		if !sameVec(fitV(len(u), u), u) {
			t.Fatalf("fit_id fails at %v", u)
		}
		var ns []int
		var W, D []vec
		for k := 0; k < r.Intn(4); k++ {
			ns = append(ns, r.Intn(4))
		}
		for k := 0; k < r.Intn(5); k++ {
			W = append(W, randVec(r, r.Intn(5)))
		}
		for k := 0; k < r.Intn(5); k++ {
			D = append(D, randVec(r, r.Intn(5)))
		}
		if dotAllV(fitAllV(ns, W), D).Cmp(dotAllV(fitAllV(ns, D), W)) != 0 {
			t.Fatalf("dotAll_fitAll fails at %v", ns)
		}
	}
	for _, c := range []struct {
		prim string
		xs   []vec
	}{{"add", []vec{{rat(1, 1)}}}, {"mul", []vec{{rat(1, 1)}, {rat(1, 1), rat(2, 1)}}}, {"relu", nil}, {"const", []vec{{rat(1, 1)}}}} {
		if ins, out, ok := leanLens(c.prim, mattr{}, c.xs, nil); ok || len(ins) != 0 || out != 0 {
			t.Errorf("%s at %d inputs: lens %v→%d, want Lens.none", c.prim, len(c.xs), ins, out)
		}
	}
}

// paramJVP is Prim.jvp and Prim.vjp of the primitives a composition writes
// with ε, maxnorm or a mask (comp.go's normLines): the normalisations as
// tapplyAll/tapplyTAll over norm_test.go's transcribed taps (taken to the
// inputs present), l2_normalize's and renorm's single tap list
// (norm_test.go, renorm_test.go), dropout as smul (1/(1 − p)) (pmul mask ·).
// It reports false for every other primitive.
func (a mattr) paramJVP(op string, xs, dxs []vec, d vec) (jv vec, vj []vec, ok bool) {
	if len(xs) == 0 || len(dxs) < len(xs) {
		return nil, nil, false
	}
	switch {
	case op == "dropout" && len(xs) == 1:
		k := rat(0, 1)
		if a.p != nil {
			if q := new(big.Rat).Sub(rat(1, 1), a.p); q.Sign() != 0 {
				k = new(big.Rat).Inv(q)
			}
		}
		return msmul(k, mpmul(a.mask, dxs[0])), []vec{msmul(k, mpmul(a.mask, d))}, true
	case op == "renorm" && len(xs) == 1:
		c := rnCase{shape: a.shape, x: xs[0], c: a.c, axis: a.axis, tieW: rat(1, 2)}
		n, _, taps := c.taps()
		return tapply(n, taps, dxs[0]), []vec{tapplyT(size(a.shape), taps, d)}, true
	case normOps[op] && a.eps != nil:
		c := nCase{shapes: a.shapes, xs: xs, axis: a.axis, eps: a.eps}
		if len(c.shapes) == 0 {
			c.shapes = [][]int{a.shape}
		}
		n, _, taps := c.normTaps(op)
		if op == "l2_normalize" {
			return tapply(n, taps[0], dxs[0]), []vec{tapplyT(size(a.shape), taps[0], d)}, true
		}
		taps = taps[:min(len(xs), len(taps))]
		jv = mzeros(n)
		for k := range taps {
			jv = mpadd(jv, tapply(n, taps[k], dxs[k]))
			vj = append(vj, tapplyT(size(shapeAt(a.shapes, k)), taps[k], d))
		}
		return jv, vj, true
	}
	return nil, nil, false
}

// compModel certifies a one-input graph (with its payload, if any) at x
// and returns its emitted ModelComposition cases.
func compModel(t *testing.T, graph, payload, x string) []readCase {
	t.Helper()
	g, err := irsem.DecodeGraph([]byte(graph))
	if err != nil {
		t.Fatal(err)
	}
	var p *irsem.Payload
	if payload != "" {
		if p, err = irsem.DecodePayload([]byte(payload)); err != nil {
			t.Fatal(err)
		}
	}
	in, err := irsem.DecodeTensor([]byte(x))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := certificates.ModelSuite(&certificates.Model{Name: "norm", Graph: g, Payload: p, Input: in}, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "certs")
	if _, err := s.Certify(dir, certificates.Options{Seed: 0, Cases: 2}); err != nil {
		t.Fatal(err)
	}
	cases, skipped := modelComp(t, dir)
	if len(cases) != 2 {
		t.Fatalf("%d cases emitted (skipped %v), want 2", len(cases), skipped)
	}
	return cases
}

// TestCompositionNorms: a model with a normalisation or renorm node becomes
// a ModelComposition whose every case the Go transcription of the sweeps
// (through the lenses, with norm_test.go's and renorm_test.go's taps)
// finds true: layernorm (γ, β and ε from the payload, γ and β as constant
// leaves before Prim.layer_norm), batch_norm_eval (μ, σ², and the default
// γ = 1, β = 0 as leaves), instance_norm, l2_normalize (ε an attribute)
// and renorm (maxnorm as c). The data make every σ² + ε and every norm a
// square rational, the only ones the registry certifies exactly. Planted
// faults: a wrong ε, a wrong γ leaf, a wrong axis and a wrong maxnorm
// each make a case false, and a wrong rule (the VJP's first contribution
// doubled) breaks lens_adjoint at the node.
func TestCompositionNorms(t *testing.T) {
	type plant struct {
		name string
		f    func(c *readCase, k int)
	}
	shift := func(v *big.Rat) *big.Rat { return add(v, rat(5, 1)) } // σ² + ε from 4 to 9: ratSqrt 2 → 3
	cases := []struct {
		name, graph, payload, x, prim string
		plants                        []plant
	}{
		{"layernorm", `{"format": "tlcheck.ir.v1", "input_id": 0, "output_id": 2, "nodes": [
  {"id": 0, "kind": "input", "parents": [], "shape": [2, 2]},
  {"id": 1, "kind": "layernorm", "parents": [0], "shape": [2, 2], "axis": 1},
  {"id": 2, "kind": "relu", "parents": [1], "shape": [2, 2]}]}`,
			`{"format": "tlcheck.payload.v1", "entries": {"1": {"gamma": {"shape": [2], "values": ["2", "1/2"]}, "beta": {"shape": [2], "values": ["1", "-1"]}, "eps": "3"}}}`,
			`{"shape": [2, 2], "values": ["1", "-1", "3", "1"]}`, "layer_norm",
			[]plant{{"ε", func(c *readCase, k int) { c.nodes[k].attr.eps = shift(c.nodes[k].attr.eps) }},
				{"γ", func(c *readCase, k int) { c.nodes[k-2].value = vec{rat(3, 1), rat(1, 2)} }}}},
		{"batch_norm_eval", `{"format": "tlcheck.ir.v1", "input_id": 0, "output_id": 1, "nodes": [
  {"id": 0, "kind": "input", "parents": [], "shape": [1, 2, 2]},
  {"id": 1, "kind": "batch_norm_eval", "parents": [0], "shape": [1, 2, 2], "channel_axis": 1, "channels": 2}]}`,
			`{"format": "tlcheck.payload.v1", "entries": {"1": {"mean": {"shape": [2], "values": ["0", "1"]}, "var": {"shape": [2], "values": ["1", "6"]}, "eps": "3"}}}`,
			`{"shape": [1, 2, 2], "values": ["1", "-2", "1/2", "3"]}`, "batch_norm_eval",
			[]plant{{"ε", func(c *readCase, k int) { c.nodes[k].attr.eps = shift(c.nodes[k].attr.eps) }}}},
		{"instance_norm", `{"format": "tlcheck.ir.v1", "input_id": 0, "output_id": 1, "nodes": [
  {"id": 0, "kind": "input", "parents": [], "shape": [1, 2, 2]},
  {"id": 1, "kind": "instance_norm", "parents": [0], "shape": [1, 2, 2], "channels": 2}]}`,
			`{"format": "tlcheck.payload.v1", "entries": {"1": {"gamma": {"shape": [2], "values": ["1", "2"]}, "beta": {"shape": [2], "values": ["0", "1/3"]}, "eps": "3"}}}`,
			`{"shape": [1, 2, 2], "values": ["1", "-1", "3", "1"]}`, "instance_norm",
			[]plant{{"ε", func(c *readCase, k int) { c.nodes[k].attr.eps = shift(c.nodes[k].attr.eps) }}}},
		{"l2_normalize", `{"format": "tlcheck.ir.v1", "input_id": 0, "output_id": 1, "nodes": [
  {"id": 0, "kind": "input", "parents": [], "shape": [2, 2]},
  {"id": 1, "kind": "l2_normalize", "parents": [0], "shape": [2, 2], "axis": 1, "eps": "1"}]}`, "",
			`{"shape": [2, 2], "values": ["3", "4", "6", "-8"]}`, "l2_normalize",
			[]plant{{"axis", func(c *readCase, k int) { c.nodes[k].attr.axis = 0 }}}},
		{"renorm", `{"format": "tlcheck.ir.v1", "input_id": 0, "output_id": 1, "nodes": [
  {"id": 0, "kind": "input", "parents": [], "shape": [2, 2]},
  {"id": 1, "kind": "renorm", "parents": [0], "shape": [2, 2], "axis": 0, "maxnorm": "2"}]}`, "",
			`{"shape": [2, 2], "values": ["3", "4", "0", "1"]}`, "renorm",
			[]plant{{"maxnorm", func(c *readCase, k int) { c.nodes[k].attr.c = rat(1, 1) }}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := compModel(t, tc.graph, tc.payload, tc.x)
			for i, c := range cs {
				k := -1
				for j, nd := range c.nodes {
					if nd.prim == tc.prim {
						k = j
					}
				}
				if k < 0 {
					t.Fatalf("case %d: no Prim.%s node", i, tc.prim)
				}
				if err := compHolds(c); err != nil {
					t.Errorf("case %d: %v", i, err)
				}
				// A planted wrong rule: the VJP's first contribution doubled
				// (a VJP that is not the JVP's transpose) breaks lens_adjoint
				// at the node's recorded inputs.
				var xs []vec
				for _, q := range c.nodes[k].parents {
					if q == 0 {
						xs = append(xs, c.x)
					} else {
						xs = append(xs, c.nodes[q-1].value)
					}
				}
				doubled := func(op string, a mattr, xs, dxs []vec, d vec) (vec, []vec) {
					jv, vj := jvpVJP(op, a, xs, dxs, d)
					if len(vj) > 0 {
						vj = append([]vec{msmul(rat(2, 1), vj[0])}, vj[1:]...)
					}
					return jv, vj
				}
				nd := c.nodes[k]
				rg := rand.New(rand.NewSource(int64(i)))
				var dxs []vec
				for _, x := range xs {
					dxs = append(dxs, randVec(rg, len(x)))
				}
				d := randVec(rg, len(nd.value))
				if l, r := lensSides(jvpVJP, nd.prim, nd.attr, xs, nd.value, dxs, d); l.Cmp(r) != 0 {
					t.Errorf("case %d: lens_adjoint fails at the recorded inputs: %s ≠ %s", i, l.RatString(), r.RatString())
				}
				if l, r := lensSides(doubled, nd.prim, nd.attr, xs, nd.value, dxs, d); l.Cmp(r) == 0 {
					t.Errorf("case %d: a doubled VJP contribution leaves lens_adjoint true", i)
				}
				for _, p := range tc.plants {
					bad := c
					bad.nodes = append([]readNode(nil), c.nodes...)
					p.f(&bad, k)
					if compHolds(bad) == nil {
						t.Errorf("case %d: a wrong %s leaves the case true", i, p.name)
					}
				}
			}
		})
	}
}

// TestNormLinesDropout: dropout has no IR tag, so no composition holds
// one; normLines still writes it from a registry step, with the keep mask
// leanDropout replays from the seed (the adjointness emitter's).
func TestNormLinesDropout(t *testing.T) {
	st := &irsem.Step{Prim: "dropout", Attrs: &spec.Attrs{P: big.NewRat(1, 2), Seed: 7},
		Args: []irsem.Arg{{Source: irsem.ArgParent, Shape: spec.Shape{2, 2}}}}
	var got string
	line := func(prim string, parents []int, value []string, attr string) error {
		got = prim + " " + fmt.Sprint(parents) + " " + attr
		return nil
	}
	if _, err := normLines(line, func() int { return 1 }, st, 0, []string{"0", "0", "0", "0"}); err != nil {
		t.Fatal(err)
	}
	want, err := leanDropout(certificates.Attrs{P: "1/2", Seed: 7}, certificates.Tensor{Shape: []int{2, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "dropout [0] ") || !strings.HasSuffix(got, want+" }") {
		t.Errorf("dropout written as %q, want the mask %q", got, want)
	}
}

// paramFwd is Prim.fwd of the primitives paramJVP transcribes: the
// forwards norm_test.go's and renorm_test.go's transcriptions return
// with their taps, and dropout's smul (1/(1 − p)) (pmul mask x).
func (a mattr) paramFwd(op string, xs []vec) (vec, bool) {
	if len(xs) == 0 {
		return nil, false
	}
	switch {
	case op == "dropout" && len(xs) == 1:
		jv, _, ok := a.paramJVP(op, xs, xs, nil)
		return jv, ok
	case op == "renorm" && len(xs) == 1:
		c := rnCase{shape: a.shape, x: xs[0], c: a.c, axis: a.axis, tieW: rat(1, 2)}
		_, fwd, _ := c.taps()
		return fwd, true
	case normOps[op] && a.eps != nil:
		c := nCase{shapes: a.shapes, xs: xs, axis: a.axis, eps: a.eps}
		_, fwd, _ := c.normTaps(op)
		return fwd, true
	}
	return nil, false
}
