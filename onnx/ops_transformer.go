package onnx

import (
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
	"math"
)

// The ops of exported transformers and of newer exporters, each by
// decomposition into registry primitives following the operator's own
// definition (its function body, or the formula of its text):
//
//	LayerNormalization  [17]  over the axes from axis (default −1) on: μ = mean(x), d = x − μ,
//	                          σ² = mean(d·d), y = d · (1/√(σ² + ε)) ⊙ scale + B (ε default 1e-5,
//	                          its float32 value); outputs Mean = μ and InvStdDev = 1/√(σ² + ε), shaped
//	                          X.shape[:axis] followed by ones
//	RMSNormalization    [23]  y = x / √(mean(x·x) + ε) ⊙ scale over the axes from axis
//	GroupNormalization  [18]  the rows of [N·G, (C/G)·spatial] normalised as LayerNormalization,
//	                          scale and bias per group [G] (opset 18; each channel takes its group's)
//	                          or per channel [C] (opset 21)
//	Erf                 [9]   the registry's erf
//	HardSwish           [14]  x ⊙ clamp(x/6 + 1/2, 0, 1) (α = 1/6 exactly, the operator's text)
//	Gelu                [20]  approximate = "tanh": the registry's gelu (√(2/π) as its float64
//	                          value, 0.044715); "none": x·(1 + erf(x/√2))/2 with the registry's erf
//	CumSum              [11]  along the constant axis: folded on a constant; on a computed value the
//	                          axis moved last and a matmul with the constant 0/1 triangular matrix
//	                          (exclusive and reverse choose the triangle), exact sums
//	RotaryEmbedding     [23]  on [B, S, H, D] (a 4-D input [B, H, S, D] permuted, a 3-D [B, S, H·D]
//	                          reshaped with num_heads): the first rotary_embedding_dim (default D) of
//	                          each head split in halves x₁, x₂ (interleaved: even and odd positions),
//	                          real = cos⊙x₁ − sin⊙x₂, imag = sin⊙x₁ + cos⊙x₂, written back in the same
//	                          layout; cos and sin are the caches gathered at the constant position_ids
//	                          (or given per position when position_ids is absent)
//	Attention       [23-25]  Q, K, V 4-D [B, H, L, E] or 3-D [B, L, H·E] (q_num_heads, kv_num_heads);
//	                          K and V after the past_key / past_value concatenation (outputs
//	                          present_key, present_value); grouped heads repeat each K/V head;
//	                          scores = scale·(Q·Kᵀ), scale default 1/√E (the exact value: the scale
//	                          node is 1/√E over the reals, not a rounded constant); softcap c > 0:
//	                          c·tanh(scores/c); then the mask (a constant boolean attn_mask: −∞ where
//	                          false; a float one added; a mask shorter than the keys padded with
//	                          −∞; the structural mask of attnFrame: is_causal, the opset-25 window
//	                          left_window_size/right_window_size and the opset-24 padding input
//	                          nonpad_kv_seqlen, a constant or recorded INT64 [B]), softmax over
//	                          the keys (hard_masked_softmax where −∞ occurs), times V; a row
//	                          masked entirely is a zero row (the operator's fully-masked-row
//	                          guard: a selection of 0, no arithmetic). The qk_matmul_output
//	                          output by qk_matmul_output_mode: 0 the scaled scores, 1 after the
//	                          softcap, 2 after the mask too (refused when the mask puts −∞ in it),
//	                          3 the softmax after the guard.
func transformerOps() map[string]opImporter {
	return map[string]opImporter{
		"LayerNormalization": importLayerNorm, "RMSNormalization": importRMSNorm, "GroupNormalization": importGroupNorm,
		"HardSwish": importHardSwish, "Gelu": importGelu, "CumSum": importCumSum,
		"RotaryEmbedding": importRotary, "Attention": importAttention, "Erf": unaryOp(opErf), "Einsum": importEinsum, "Resize": importResize, "ScatterND": importScatterND,
	}
}

// normRows normalises each row of x [m, n]: d = x − mean (x itself for
// rms), v = mean(d·d), and d·(1/√(v + ε)) (layer) or d/√(v + ε) (rms).
func (b *imp) normRows(x, m, n int, eps spec.Rat, rms bool) int {
	y, _, _ := b.normRowsStats(x, m, n, eps, rms)
	return y
}

// normRowsStats is normRows with the row means [m] (x itself's node for
// rms, unused) and the reciprocal standard deviations [m].
func (b *imp) normRowsStats(x, m, n int, eps spec.Rat, rms bool) (y, mean, inv int) {
	s := spec.Shape{m, n}
	col := spec.Shape{m, 1}
	d := x
	mean = -1
	if !rms {
		mean = b.emit(irsem.Kind{Op: irsem.OpReduceMean, Axis: 1}, spec.Shape{m}, x)
		d = b.binary(irsem.OpSub, x, b.broadcast(b.reshape(mean, spec.Shape{m}, col), col, s), s)
	}
	sq := b.binary(irsem.OpMulElem, d, d, s)
	v := b.emit(irsem.Kind{Op: irsem.OpReduceMean, Axis: 1}, spec.Shape{m}, sq)
	sd := b.unary(irsem.OpSqrt, b.addConst(v, spec.Shape{m}, eps), spec.Shape{m})
	if rms {
		return b.div(d, b.broadcast(b.reshape(sd, spec.Shape{m}, col), col, s), s), mean, -1
	}
	inv = b.unary(irsem.OpInv, sd, spec.Shape{m})
	return b.binary(irsem.OpMulElem, d, b.broadcast(b.reshape(inv, spec.Shape{m}, col), col, s), s), mean, inv
}

// affine multiplies y (shape s) by input i and adds input j (when
// present), each broadcast unidirectionally to s.
func (c *nctx) affine(y int, s spec.Shape, i, j int) (int, error) {
	for k, in := range []int{i, j} {
		if in < 0 || !c.present(in) {
			continue
		}
		p, pid, err := c.float(in)
		if err != nil {
			return 0, err
		}
		bs, err := broadcastShapes(s, p.shape)
		if err != nil || !bs.Equal(s) {
			return 0, c.errf(c.inField(in), "shape %v does not broadcast to %v", p.shape, s)
		}
		pb := c.b.broadcast(pid, p.shape, s)
		if k == 0 {
			y = c.b.binary(irsem.OpMulElem, y, pb, s)
		} else {
			y = c.b.binary(irsem.OpAdd, y, pb, s)
		}
	}
	return y, nil
}

// normFromAxis reads axis and epsilon and normalises the float input 0
// over the axes from axis on.
func (c *nctx) normFromAxis(rms bool) (*value, int, error) {
	axis, err := c.attrInt("axis", -1)
	if err != nil {
		return nil, 0, err
	}
	eps, err := c.attrRat("epsilon", 1e-5)
	if err != nil {
		return nil, 0, err
	}
	if _, err := c.attrInt("stash_type", 1); err != nil { // the precision of a float evaluation; the reference is exact
		return nil, 0, err
	}
	v, x, err := c.float(0)
	if err != nil {
		return nil, 0, err
	}
	s := v.shape
	ax, err := normAxis(axis, len(s))
	if err != nil {
		return nil, 0, c.errf(attrField("axis"), "%v", err)
	}
	m, n := prod(s[:ax]), prod(s[ax:])
	if n == 0 {
		return nil, 0, c.errf(c.inField(0), "shape %v: the normalised axes from %d hold no element", s, ax)
	}
	y, mean, inv := c.b.normRowsStats(c.b.reshape(x, s, spec.Shape{m, n}), m, n, eps, rms)
	if !rms {
		// LayerNormalization's Mean and InvStdDev: shape X.shape[:axis]
		// followed by ones.
		st := s.Clone()
		for i := ax; i < len(st); i++ {
			st[i] = 1
		}
		c.out(1, c.b.reshape(mean, spec.Shape{m}, st), st, v.dt)
		c.out(2, c.b.reshape(inv, spec.Shape{m}, st), st, v.dt)
	}
	return v, c.b.reshape(y, spec.Shape{m, n}, s), nil
}

func importLayerNorm(c *nctx) error {
	if err := c.arity(2, 3); err != nil {
		return err
	}
	if err := c.outputs(3, "a fourth output"); err != nil {
		return err
	}
	v, y, err := c.normFromAxis(false)
	if err != nil {
		return err
	}
	bias := -1
	if c.present(2) {
		bias = 2
	}
	if y, err = c.affine(y, v.shape, 1, bias); err != nil {
		return err
	}
	c.out(0, y, v.shape, v.dt)
	return nil
}

func importRMSNorm(c *nctx) error {
	if err := c.oneOutput(2, 2); err != nil {
		return err
	}
	v, y, err := c.normFromAxis(true)
	if err != nil {
		return err
	}
	if y, err = c.affine(y, v.shape, 1, -1); err != nil {
		return err
	}
	c.out(0, y, v.shape, v.dt)
	return nil
}

func importGroupNorm(c *nctx) error {
	if err := c.oneOutput(3, 3); err != nil {
		return err
	}
	g64, err := c.attrInt("num_groups", 0)
	if err != nil {
		return err
	}
	eps, err := c.attrRat("epsilon", 1e-5)
	if err != nil {
		return err
	}
	if c.b.opset >= 21 {
		if _, err := c.attrInt("stash_type", 1); err != nil {
			return err
		}
	}
	v, x, err := c.float(0)
	if err != nil {
		return err
	}
	s := v.shape
	if len(s) < 3 {
		return c.errf(c.inField(0), "shape %v, expected [N, C, spatial…]", s)
	}
	ch := s[1]
	if g64 < 1 || g64 > int64(ch) || int64(ch)%g64 != 0 {
		return c.errf(attrField("num_groups"), "%d does not divide the %d channels", g64, ch)
	}
	g := int(g64)
	m, n := s[0]*g, (ch/g)*prod(s[2:])
	if n == 0 {
		return c.errf(c.inField(0), "shape %v: a group holds no element", s)
	}
	y := c.b.reshape(c.b.normRows(c.b.reshape(x, s, spec.Shape{m, n}), m, n, eps, false), spec.Shape{m, n}, s)
	per := spec.Shape{ch}
	for i := 2; i < len(s); i++ {
		per = append(per, 1)
	}
	for k, in := range []int{1, 2} {
		p, pid, err := c.float(in)
		if err != nil {
			return err
		}
		want := ch
		if c.b.opset < 21 {
			want = g
		}
		if len(p.shape) != 1 || p.shape[0] != want {
			return c.errf(c.inField(in), "shape %v, expected [%d] at opset %d", p.shape, want, c.b.opset)
		}
		if want != ch { // one value per group: channel c takes group c/(C/G)'s
			idx := make([]int, ch)
			for i := range idx {
				idx[i] = i / (ch / g)
			}
			if pid, _, err = c.b.gather(pid, p.shape, 0, idx, spec.Shape{ch}); err != nil {
				return c.wrap("", err)
			}
		}
		pb := c.b.broadcast(c.b.reshape(pid, spec.Shape{ch}, per), per, s)
		if k == 0 {
			y = c.b.binary(irsem.OpMulElem, y, pb, s)
		} else {
			y = c.b.binary(irsem.OpAdd, y, pb, s)
		}
	}
	c.out(0, y, s, v.dt)
	return nil
}

// importHardSwish: x ⊙ clamp(x/6 + 1/2, 0, 1).
func importHardSwish(c *nctx) error {
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	s := v.shape
	zero, one := spec.Rat{}, spec.NewRat(1, 1)
	hs := c.b.clamp(c.b.addConst(c.b.scale(x, s, spec.NewRat(1, 6)), s, spec.NewRat(1, 2)), s, &zero, &one)
	c.out(0, c.b.binary(irsem.OpMulElem, x, hs, s), s, v.dt)
	return nil
}

// importGelu: approximate "tanh" is the registry's gelu; "none" (the
// default) is x·(1 + erf(x/√2))/2 with the registry's erf.
func importGelu(c *nctx) error {
	approx, err := c.attrString("approximate", "none")
	if err != nil {
		return err
	}
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	s := v.shape
	switch approx {
	case "tanh":
		c.out(0, c.b.unary(irsem.OpGelu, x, s), s, v.dt)
	case "none":
		id, err := c.b.geluErf(x, s)
		if err != nil {
			return c.wrap("", err)
		}
		c.out(0, id, s, v.dt)
	default:
		return c.errf(attrField("approximate"), "%q, expected \"none\" or \"tanh\"", approx)
	}
	return nil
}

// geluErf is x·(1 + erf(x/√2))/2: x/√2 is x·(1/√2) with 1/√2 the exact
// real (inv of sqrt of the constant 2).
func (b *imp) geluErf(x int, s spec.Shape) (int, error) {
	if err := available(opErf, "onnx"); err != nil {
		return 0, err
	}
	rs2 := b.unary(irsem.OpInv, b.unary(irsem.OpSqrt, b.constScalar(spec.NewRat(2, 1), s), s), s)
	e := b.unary(opErf, b.binary(irsem.OpMulElem, x, rs2, s), s)
	h := b.scale(b.addConst(e, s, spec.NewRat(1, 1)), s, spec.NewRat(1, 2))
	return b.binary(irsem.OpMulElem, x, h, s), nil
}

// importCumSum: cumulative sums along a constant axis.
func importCumSum(c *nctx) error {
	if err := c.oneOutput(2, 2); err != nil {
		return err
	}
	excl, err := c.attrBool("exclusive", false)
	if err != nil {
		return err
	}
	rev, err := c.attrBool("reverse", false)
	if err != nil {
		return err
	}
	av, err := c.constInts(1)
	if err != nil {
		return err
	}
	if len(av.ints) != 1 {
		return c.errf(c.inField(1), "shape %v, expected one axis", av.shape)
	}
	v, err := c.in(0)
	if err != nil {
		return err
	}
	s := v.shape
	ax, err := normAxis(av.ints[0], len(s))
	if err != nil {
		return c.errf(c.inField(1), "%v", err)
	}
	n := s[ax]
	// in(i, j): does input position i enter output position j?
	in := func(i, j int) bool {
		switch {
		case !rev && !excl:
			return i <= j
		case !rev:
			return i < j
		case !excl:
			return i >= j
		}
		return i > j
	}
	if v.isK {
		if firstTrue(v.ninf) >= 0 {
			return c.errf(c.inField(0), "CumSum of a value holding −∞")
		}
		xs := elems(v, s)
		outer, inner := prod(s[:ax]), prod(s[ax+1:])
		out := make([]xnum, len(xs))
		for o := 0; o < outer; o++ {
			for k := 0; k < inner; k++ {
				for j := 0; j < n; j++ {
					acc := spec.Rat{}
					for i := 0; i < n; i++ {
						if in(i, j) {
							acc = acc.Add(xs[(o*n+i)*inner+k].r)
						}
					}
					out[(o*n+j)*inner+k] = xnum{r: acc}
				}
			}
		}
		w, err := c.fromXnums(s, v.dt, out)
		if err != nil {
			return err
		}
		c.outValue(0, w)
		return nil
	}
	if !v.dt.IsFloat() {
		return c.errf(c.inField(0), "integer tensor is not a constant")
	}
	if n > maxProdFold {
		return c.errf(c.inField(0), "axis of extent %d; CumSum of a computed value is written as an %d×%d matrix, at most %d", n, n, n, maxProdFold)
	}
	x, err := c.b.ir(v)
	if err != nil {
		return c.wrap(c.inField(0), err)
	}
	r := len(s)
	perm := make([]int, 0, r)
	inv := make([]int, r)
	for i := 0; i < r; i++ {
		if i != ax {
			perm = append(perm, i)
		}
	}
	perm = append(perm, ax)
	for i, p := range perm {
		inv[p] = i
	}
	p, ps := c.b.permute(x, s, perm)
	t := make([]spec.Rat, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if in(i, j) {
				t[i*n+j] = spec.NewRat(1, 1)
			}
		}
	}
	tri := c.b.constTensor(spec.Shape{n, n}, t)
	m := c.b.binary(irsem.OpMatmul, p, tri, ps)
	id, _ := c.b.permute(m, ps, inv)
	c.out(0, id, s, v.dt)
	return nil
}

// constTensor emits a const node holding data of shape s.
func (b *imp) constTensor(s spec.Shape, data []spec.Rat) int {
	t := irsem.RatTensor{Shape: s.Clone(), Data: data}
	return b.emitP(irsem.Kind{Op: irsem.OpConst, ValueShape: s.Clone()}, s, &irsem.Params{Value: &t})
}

// lastSlice is x[..., lo:hi] of shape s.
func (b *imp) lastSlice(x int, s spec.Shape, lo, hi int) (int, spec.Shape, error) {
	id, err := b.slice(x, s, len(s)-1, lo, hi)
	out := s.Clone()
	out[len(s)-1] = hi - lo
	return id, out, err
}

// importRotary: RotaryEmbedding (opset 23).
func importRotary(c *nctx) error {
	if err := c.oneOutput(3, 4); err != nil {
		return err
	}
	inter, err := c.attrBool("interleaved", false)
	if err != nil {
		return err
	}
	heads, err := c.attrInt("num_heads", 0)
	if err != nil {
		return err
	}
	rdim, err := c.attrInt("rotary_embedding_dim", 0)
	if err != nil {
		return err
	}
	v, x, err := c.float(0)
	if err != nil {
		return err
	}
	s := v.shape
	var w spec.Shape // [B, S, H, D]
	switch len(s) {
	case 4:
		x, w = c.b.permute(x, s, []int{0, 2, 1, 3})
	case 3:
		if heads < 1 || int64(s[2])%heads != 0 {
			return c.errf(attrField("num_heads"), "%d does not divide the hidden size %d of a 3-D input", heads, s[2])
		}
		w = spec.Shape{s[0], s[1], int(heads), s[2] / int(heads)}
		x = c.b.reshape(x, s, w)
	default:
		return c.errf(c.inField(0), "shape %v, expected rank 3 or 4", s)
	}
	d := w[3]
	rd := d
	if rdim != 0 {
		rd = int(rdim)
	}
	if rd < 2 || rd > d || rd%2 != 0 {
		return c.errf(attrField("rotary_embedding_dim"), "%d for heads of size %d (an even number ≤ the head size)", rd, d)
	}
	half := rd / 2
	cs := spec.Shape{w[0], w[1], half}
	var caches [2]int
	for k := range caches {
		cv, cid, err := c.float(k + 1)
		if err != nil {
			return err
		}
		if c.present(3) {
			pv, err := c.constInts(3)
			if err != nil {
				return err
			}
			if !pv.shape.Equal(spec.Shape{w[0], w[1]}) || len(cv.shape) != 2 || cv.shape[1] != half {
				return c.errf(c.inField(k+1), "cache of shape %v with position_ids of shape %v, expected [max_position, %d] and [%d, %d]", cv.shape, pv.shape, half, w[0], w[1])
			}
			idx := make([]int, len(pv.ints))
			for i, p := range pv.ints {
				if p < 0 || p >= int64(cv.shape[0]) {
					return c.errf(c.inField(3), "element %d is %d, outside [0, %d)", i, p, cv.shape[0])
				}
				idx[i] = int(p)
			}
			if cid, _, err = c.b.gather(cid, cv.shape, 0, idx, pv.shape); err != nil {
				return c.wrap("", err)
			}
		} else if !cv.shape.Equal(cs) {
			return c.errf(c.inField(k+1), "shape %v, expected %v", cv.shape, cs)
		}
		c4 := spec.Shape{w[0], w[1], 1, half}
		caches[k] = c.b.broadcast(c.b.reshape(cid, cs, c4), c4, spec.Shape{w[0], w[1], w[2], half})
	}
	cos, sin := caches[0], caches[1]
	rot, rs, err := c.b.lastSlice(x, w, 0, rd)
	if err != nil {
		return c.wrap("", err)
	}
	hs := spec.Shape{w[0], w[1], w[2], half}
	var x1, x2 int
	if inter {
		ev, od := make([]int, half), make([]int, half)
		for i := range ev {
			ev[i], od[i] = 2*i, 2*i+1
		}
		if x1, _, err = c.b.gather(rot, rs, 3, ev, spec.Shape{half}); err != nil {
			return c.wrap("", err)
		}
		if x2, _, err = c.b.gather(rot, rs, 3, od, spec.Shape{half}); err != nil {
			return c.wrap("", err)
		}
	} else {
		if x1, _, err = c.b.lastSlice(rot, rs, 0, half); err != nil {
			return c.wrap("", err)
		}
		if x2, _, err = c.b.lastSlice(rot, rs, half, rd); err != nil {
			return c.wrap("", err)
		}
	}
	mul := func(a, b int) int { return c.b.binary(irsem.OpMulElem, a, b, hs) }
	real := c.b.binary(irsem.OpSub, mul(cos, x1), mul(sin, x2), hs)
	imag := c.b.binary(irsem.OpAdd, mul(sin, x1), mul(cos, x2), hs)
	var out int
	if inter {
		h5 := spec.Shape{w[0], w[1], w[2], half, 1}
		cat, cs5 := c.b.concat([]int{c.b.reshape(real, hs, h5), c.b.reshape(imag, hs, h5)}, []spec.Shape{h5, h5}, 4)
		out = c.b.reshape(cat, cs5, rs)
	} else {
		out, _ = c.b.concat([]int{real, imag}, []spec.Shape{hs, hs}, 3)
	}
	if rd < d {
		pass, ps, err := c.b.lastSlice(x, w, rd, d)
		if err != nil {
			return c.wrap("", err)
		}
		out, _ = c.b.concat([]int{out, pass}, []spec.Shape{rs, ps}, 3)
	}
	if len(s) == 4 {
		out, _ = c.b.permute(out, w, []int{0, 2, 1, 3})
	} else {
		out = c.b.reshape(out, w, s)
	}
	c.out(0, out, s, v.dt)
	return nil
}

// heads4 brings an Attention operand to [B, H, L, E]: itself when 4-D,
// a 3-D [B, L, H·E] reshaped and permuted.
func (c *nctx) heads4(i int, heads int64, name string) (*value, int, spec.Shape, error) {
	v, x, err := c.float(i)
	if err != nil {
		return nil, 0, nil, err
	}
	s := v.shape
	switch len(s) {
	case 4:
		return v, x, s, nil
	case 3:
		if heads < 1 || int64(s[2])%heads != 0 {
			return nil, 0, nil, c.errf(attrField(name), "%d does not divide the hidden size %d of input %d", heads, s[2], i)
		}
		w := spec.Shape{s[0], s[1], int(heads), s[2] / int(heads)}
		id, ws := c.b.permute(c.b.reshape(x, s, w), w, []int{0, 2, 1, 3})
		return v, id, ws, nil
	}
	return nil, 0, nil, c.errf(c.inField(i), "shape %v, expected rank 3 or 4", s)
}

// importAttention: Attention (opset 23).
func importAttention(c *nctx) error {
	maxIn := 6
	if c.b.opset >= 24 {
		maxIn = 7 // nonpad_kv_seqlen
	}
	if err := c.arity(3, maxIn); err != nil {
		return err
	}
	if err := c.outputs(4, "a fifth output"); err != nil {
		return err
	}
	at, err := attentionAttrs(c)
	if err != nil {
		return err
	}
	qv, q, qs, err := c.heads4(0, at.qh, "q_num_heads")
	if err != nil {
		return err
	}
	_, k, ks, err := c.heads4(1, at.kvh, "kv_num_heads")
	if err != nil {
		return err
	}
	_, vv, vs, err := c.heads4(2, at.kvh, "kv_num_heads")
	if err != nil {
		return err
	}
	bsz, hq, l, e := qs[0], qs[1], qs[2], qs[3]
	if ks[0] != bsz || vs[0] != bsz || ks[1] != vs[1] || ks[3] != e || ks[2] != vs[2] {
		return c.errf("input", "Q %v, K %v, V %v (as [B, H, L, E]) do not fit together", qs, ks, vs)
	}
	past := 0
	if c.present(4) != c.present(5) {
		return c.errf("input", "past_key and past_value must be given together")
	}
	if c.present(4) {
		if k, ks, vv, vs, past, err = c.attentionPast(k, ks, vv, vs, bsz, e); err != nil {
			return err
		}
	}
	c.out(1, k, ks, qv.dt)
	c.out(2, vv, vs, qv.dt)
	hk := ks[1]
	if hk < 1 || hq%hk != 0 {
		return c.errf("input", "%d query heads for %d key/value heads", hq, hk)
	}
	if hk != hq { // grouped-query attention: head h reads K/V head h/(hq/hk)
		idx := make([]int, hq)
		for i := range idx {
			idx[i] = i / (hq / hk)
		}
		if k, ks, err = c.b.gather(k, ks, 1, idx, spec.Shape{hq}); err != nil {
			return c.wrap("", err)
		}
		if vv, vs, err = c.b.gather(vv, vs, 1, idx, spec.Shape{hq}); err != nil {
			return c.wrap("", err)
		}
	}
	sl := ks[2]
	kt, _ := c.b.permute(k, ks, []int{0, 1, 3, 2})
	ss := spec.Shape{bsz, hq, l, sl}
	raw, scores, err := c.attentionScores(at, c.b.binary(irsem.OpMatmul, q, kt, ss), ss, e)
	if err != nil {
		return err
	}
	qk := map[int64]int{0: raw, 1: scores} // qk_matmul_output by mode
	ninf, masked := make([]bool, ss.Size()), false
	if c.present(3) {
		if scores, ninf, err = c.attentionMask(scores, ss); err != nil {
			return err
		}
		masked = true
	}
	frame, err := c.attentionFrame(at, bsz, l, sl, past)
	if err != nil {
		return err
	}
	if frame.blocks(ninf, hq) {
		masked = true
	}
	qk[2] = scores
	var probs int
	if masked && firstTrue(ninf) >= 0 {
		if probs, err = c.guardedSoftmax(scores, ss, ninf); err != nil {
			return err
		}
	} else {
		probs = c.b.emit(irsem.Kind{Op: irsem.OpSoftmax, Axis: 3}, ss, scores)
	}
	qk[3] = probs
	if at.qkMode == 2 {
		// The masked scores: their finite part, −∞ where the mask
		// blocks (a graph output judges it; import_build.go irOut).
		c.outMasked(3, qk[2], ss, qv.dt, ninf)
	} else {
		c.out(3, qk[at.qkMode], ss, qv.dt)
	}
	ys := spec.Shape{bsz, hq, l, vs[3]}
	y := c.b.binary(irsem.OpMatmul, probs, vv, ys)
	if len(qv.shape) == 3 {
		p, ps := c.b.permute(y, ys, []int{0, 2, 1, 3})
		os := spec.Shape{bsz, l, hq * vs[3]}
		c.out(0, c.b.reshape(p, ps, os), os, qv.dt)
		return nil
	}
	c.out(0, y, ys, qv.dt)
	return nil
}

// attention holds Attention's attributes: is_causal, the head counts
// (0 for 4-D operands), scale (nil for 1/√E) and softcap (0 for none).
type attention struct {
	causal  bool
	qh, kvh int64
	qkMode  int64 // qk_matmul_output_mode
	scale   *Attribute
	softcap spec.Rat
	// left, right: the sliding window (opset 25; −1 unbounded)
	left, right int64
}

// attentionAttrs reads Attention's attributes.
func attentionAttrs(c *nctx) (attention, error) {
	var at attention
	var err error
	if at.causal, err = c.attrBool("is_causal", false); err != nil {
		return at, err
	}
	if at.qh, err = c.attrInt("q_num_heads", 0); err != nil {
		return at, err
	}
	if at.kvh, err = c.attrInt("kv_num_heads", 0); err != nil {
		return at, err
	}
	if at.qkMode, err = c.attrInt("qk_matmul_output_mode", 0); err != nil {
		return at, err
	}
	if at.qkMode < 0 || at.qkMode > 3 {
		return at, c.errf(attrField("qk_matmul_output_mode"), "%d is not a mode (0 to 3)", at.qkMode)
	}
	if _, err := c.attrInt("softmax_precision", 0); err != nil { // the precision of a float evaluation
		return at, err
	}
	if at.scale, err = c.attr("scale", AttrFloat); err != nil {
		return at, err
	}
	at.left, at.right = -1, -1
	if c.b.opset >= 25 { // the window attributes exist from opset 25
		for _, w := range []struct {
			name string
			v    *int64
		}{{"left_window_size", &at.left}, {"right_window_size", &at.right}} {
			if *w.v, err = c.attrInt(w.name, -1); err != nil {
				return at, err
			}
			if *w.v < -1 {
				return at, c.errf(attrField(w.name), "%d (−1 or a non-negative count)", *w.v)
			}
		}
	}
	at.softcap, err = c.attrRat("softcap", 0)
	return at, err
}

// attentionPast prepends past_key and past_value (inputs 4 and 5) to K
// and V along the sequence axis, and returns them with the past length.
func (c *nctx) attentionPast(k int, ks spec.Shape, vv int, vs spec.Shape, bsz, e int) (int, spec.Shape, int, spec.Shape, int, error) {
	pk, pkid, err := c.float(4)
	if err != nil {
		return 0, nil, 0, nil, 0, err
	}
	pv, pvid, err := c.float(5)
	if err != nil {
		return 0, nil, 0, nil, 0, err
	}
	if len(pk.shape) != 4 || pk.shape[0] != bsz || pk.shape[1] != ks[1] || pk.shape[3] != e || len(pv.shape) != 4 || pv.shape[2] != pk.shape[2] || pv.shape[1] != vs[1] || pv.shape[3] != vs[3] || pv.shape[0] != bsz {
		return 0, nil, 0, nil, 0, c.errf(c.inField(4), "past_key %v / past_value %v do not fit K %v, V %v", pk.shape, pv.shape, ks, vs)
	}
	k, ks = c.b.concat([]int{pkid, k}, []spec.Shape{pk.shape, ks}, 2)
	vv, vs = c.b.concat([]int{pvid, vv}, []spec.Shape{pv.shape, vs}, 2)
	return k, ks, vv, vs, pk.shape[2], nil
}

// attentionScores scales the scores Q·Kᵀ (shape ss, head size e) by the
// scale attribute or 1/√e (raw), then applies the softcap c·tanh(x/c).
func (c *nctx) attentionScores(at attention, scores int, ss spec.Shape, e int) (raw, capped int, err error) {
	if at.scale != nil {
		sc, err := c.attrRat("scale", 0)
		if err != nil {
			return 0, 0, err
		}
		scores = c.b.scale(scores, ss, sc)
	} else {
		rs := c.b.unary(irsem.OpInv, c.b.unary(irsem.OpSqrt, c.b.constScalar(spec.NewRat(int64(e), 1), ss), ss), ss)
		scores = c.b.binary(irsem.OpMulElem, scores, rs, ss)
	}
	raw = scores
	if !at.softcap.IsZero() {
		if cmpRat(at.softcap, spec.Rat{}) < 0 {
			return 0, 0, c.errf(attrField("softcap"), "negative")
		}
		inv, _ := spec.NewRat(1, 1).Div(at.softcap)
		scores = c.b.scale(c.b.unary(irsem.OpTanh, c.b.scale(scores, ss, inv), ss), ss, at.softcap)
	}
	return raw, scores, nil
}

// attentionMask applies attn_mask (input 3) to the scores of shape ss: a
// constant boolean mask blocks where it is false; a float mask is added
// (its −∞ block). Keys past the mask's last axis are blocked. It returns
// the scores and the blocked elements.
func (c *nctx) attentionMask(scores int, ss spec.Shape) (int, []bool, error) {
	sl := ss[3]
	mv, err := c.in(3)
	if err != nil {
		return 0, nil, err
	}
	ms := mv.shape
	if len(ms) == 0 || ms[len(ms)-1] > sl {
		return 0, nil, c.errf(c.inField(3), "shape %v for %d keys", ms, sl)
	}
	full := ms.Clone()
	full[len(ms)-1] = sl
	bs, err := broadcastShapes(full, ss)
	if err != nil || !bs.Equal(ss) {
		return 0, nil, c.errf(c.inField(3), "shape %v does not broadcast to the scores %v", ms, ss)
	}
	padded := func(m []bool) []bool { // pad the key axis with "blocked"
		out := make([]bool, full.Size())
		n, fn := ms[len(ms)-1], sl
		for r := 0; r < full.Size()/fn; r++ {
			for j := 0; j < fn; j++ {
				out[r*fn+j] = j >= n || (m != nil && m[r*n+j])
			}
		}
		return bcast(out, full, ss)
	}
	if !mv.dt.IsFloat() {
		if !mv.isK {
			return 0, nil, c.errf(c.inField(3), "a boolean mask computed from the model's inputs is data-dependent")
		}
		blocked := make([]bool, len(mv.ints))
		for i, x := range mv.ints {
			blocked[i] = x == 0
		}
		return scores, padded(blocked), nil
	}
	fid, err := c.b.irFinite(mv)
	if err != nil {
		return 0, nil, c.wrap(c.inField(3), err)
	}
	ninf := mv.ninf
	if raw, ok := c.rawInput(3); ok && mv.ninf == nil {
		// A recorded mask input holding −∞: blocked there, as a constant
		// mask's −∞ is (Analyze's maskInputs lets the elements pass).
		for j, x := range raw {
			if math.IsInf(x, -1) {
				if ninf == nil {
					ninf = make([]bool, len(raw))
				}
				ninf[j] = true
			}
		}
		if ninf != nil {
			if c.b.im.maskInputs == nil {
				c.b.im.maskInputs = map[string]string{}
			}
			c.b.im.maskInputs[c.n.Where()] = c.n.Inputs[3]
		}
	}
	if ms[len(ms)-1] < sl {
		fid, _, err = c.b.pad(fid, ms, padWidths(ms, sl), "constant", spec.Rat{})
		if err != nil {
			return 0, nil, c.wrap("", err)
		}
	}
	scores = c.b.binary(irsem.OpAdd, scores, c.b.broadcast(fid, full, ss), ss)
	return scores, padded(ninf), nil
}

// attnFrame is Attention's structural mask over the scores [B, H, L, S]:
// the causal frontier, the sliding window (opset 25) and the padding of
// nonpad_kv_seqlen (opset 24), all relative to the per-batch offset
// (ONNX's operator text): offset = past_sequence_length with past_key,
// nonpad_kv_seqlen[b] − L with nonpad_kv_seqlen, else 0. Query i of batch
// b sits at p = offset(b) + i and key j is blocked iff
//
//	causal and j > p, or left ≥ 0 and p − j > left, or
//	right ≥ 0 and j − p > right, or nonpad given and j ≥ nonpad[b].
type attnFrame struct {
	causal      bool
	left, right int64   // −1: unbounded
	nonpad      []int64 // nil when not given
	past        int64
	l, sl       int
}

// attentionFrame reads nonpad_kv_seqlen (input 6) for a batch of bsz, l
// queries and sl keys (past of them from past_key).
func (c *nctx) attentionFrame(at attention, bsz, l, sl, past int) (attnFrame, error) {
	f := attnFrame{causal: at.causal, left: at.left, right: at.right, past: int64(past), l: l, sl: sl}
	if !c.present(6) {
		return f, nil
	}
	if c.present(4) {
		return f, c.errf(c.inField(6), "nonpad_kv_seqlen is not used together with past_key and past_value")
	}
	nv, err := c.constInts(6)
	if err != nil {
		return f, err
	}
	if len(nv.shape) != 1 || nv.shape[0] != bsz {
		return f, c.errf(c.inField(6), "shape %v, expected [%d] (the batch size)", nv.shape, bsz)
	}
	for b, n := range nv.ints {
		if n < 0 || n > int64(sl) {
			return f, c.errf(c.inField(6), "element %d is %d, not a count of the %d keys", b, n, sl)
		}
	}
	f.nonpad = nv.ints
	return f, nil
}

// blocked reports whether key j is hidden from query i of batch b.
func (f attnFrame) blocked(b, i, j int) bool {
	off := f.past
	if f.nonpad != nil {
		off = f.nonpad[b] - int64(f.l)
	}
	p, jj := off+int64(i), int64(j)
	switch {
	case f.causal && jj > p:
		return true
	case f.left >= 0 && p-jj > f.left:
		return true
	case f.right >= 0 && jj-p > f.right:
		return true
	}
	return f.nonpad != nil && jj >= f.nonpad[b]
}

// blocks marks in ninf (over [B, hq, L, S]) the elements the frame blocks
// and reports whether the frame masks at all.
func (f attnFrame) blocks(ninf []bool, hq int) bool {
	if !f.causal && f.left < 0 && f.right < 0 && f.nonpad == nil {
		return false
	}
	for o := range ninf {
		b, i, j := o/(hq*f.l*f.sl), (o/f.sl)%f.l, o%f.sl
		if f.blocked(b, i, j) {
			ninf[o] = true
		}
	}
	return true
}

// guardedSoftmax emits the softmax over the last axis of the scores
// (shape ss) with the blocked elements ninf excluded (ONNX: exp(−∞) = 0),
// and the fully-masked-row guard of the operator text: a row blocked
// entirely is a zero row. That row's softmax is taken over all its
// elements (any finite value) and then replaced by zeros with a selection,
// so it is exactly 0 with no arithmetic.
func (c *nctx) guardedSoftmax(scores int, ss spec.Shape, ninf []bool) (int, error) {
	sl := ss[3]
	allowed := make([]bool, len(ninf))
	keep := make([]bool, len(ninf))
	empty := false
	for r := 0; r < len(allowed)/sl; r++ {
		row := ninf[r*sl : (r+1)*sl]
		full := true
		for _, m := range row {
			full = full && m
		}
		for j, m := range row {
			allowed[r*sl+j] = !m || full
			keep[r*sl+j] = !full
		}
		empty = empty || full
	}
	if err := available(irsem.OpHardMaskedSoftmax, "main"); err != nil {
		return 0, c.wrap("", err)
	}
	p := c.b.emit(irsem.Kind{Op: irsem.OpHardMaskedSoftmax, Mask: &irsem.HardMask{Shape: ss.Clone(), Allowed: allowed}}, ss, scores)
	if !empty {
		return p, nil
	}
	id, err := c.b.selectIR(keep, ss, p, c.b.constScalar(spec.Rat{}, ss))
	if err != nil {
		return 0, c.wrap("", err)
	}
	return id, nil
}

// padWidths pads the last axis of s to extent n at its end.
func padWidths(s spec.Shape, n int) []int {
	w := make([]int, 2*len(s))
	w[2*len(s)-1] = n - s[len(s)-1]
	return w
}

// opErf is the registry's erf tag.
const opErf irsem.Op = "erf"
