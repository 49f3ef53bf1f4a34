package onnx

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// nnOps: matrix products, convolutions, pools and normalisations.
func nnOps() map[string]opImporter {
	return map[string]opImporter{
		"MatMul": importMatMul, "Gemm": importGemm,
		"Conv": importConv, "ConvTranspose": importConvTranspose,
		"MaxPool": poolOp(true), "AveragePool": poolOp(false), "GlobalAveragePool": importGlobalAveragePool,
		"BatchNormalization": importBatchNorm, "InstanceNormalization": importInstanceNorm, "LRN": importLRN,
	}
}

// matmulShape is numpy matmul's result shape (1-D operands promoted and
// their axis removed again, batch axes broadcast).
func matmulShape(a, b spec.Shape) (spec.Shape, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, fmt.Errorf("matmul of a scalar (%v, %v)", a, b)
	}
	pa, pb := a, b
	if len(a) == 1 {
		pa = spec.Shape{1, a[0]}
	}
	if len(b) == 1 {
		pb = spec.Shape{b[0], 1}
	}
	if pa[len(pa)-1] != pb[len(pb)-2] {
		return nil, fmt.Errorf("inner extents differ: %v · %v", a, b)
	}
	batch, err := broadcastShapes(pa[:len(pa)-2], pb[:len(pb)-2])
	if err != nil {
		return nil, err
	}
	out := batch.Clone()
	if len(a) > 1 {
		out = append(out, pa[len(pa)-2])
	}
	if len(b) > 1 {
		out = append(out, pb[len(pb)-1])
	}
	return out, nil
}

func importMatMul(c *nctx) error {
	if err := c.oneOutput(2, 2); err != nil {
		return err
	}
	a, ia, err := c.float(0)
	if err != nil {
		return err
	}
	bv, ib, err := c.float(1)
	if err != nil {
		return err
	}
	s, err := matmulShape(a.shape, bv.shape)
	if err != nil {
		return c.errf("input", "%v", err)
	}
	if _, err := s.Check(0); err != nil {
		return c.errf("input", "%v", err)
	}
	c.out(0, c.b.binary(irsem.OpMatmul, ia, ib, s), s, a.dt)
	return nil
}

// importGemm: Y = α·A′·B′ + β·C, A′ = Aᵀ when transA, B′ = Bᵀ when transB.
// With B and C initializers, transB = 1, α = β = 1 and C of shape [N] (or
// absent: b = 0) it is linear with W = B, b = C (after a permute of A when
// transA); otherwise permute, matmul, scale and a broadcast add.
func importGemm(c *nctx) error {
	if c.b.opset < 11 {
		if err := c.arity(3, 3); err != nil {
			return err
		}
	} else if err := c.arity(2, 3); err != nil {
		return err
	}
	if err := c.outputs(1, "a second output"); err != nil {
		return err
	}
	alpha, err := c.attrRat("alpha", 1)
	if err != nil {
		return err
	}
	beta, err := c.attrRat("beta", 1)
	if err != nil {
		return err
	}
	tA, err := c.attrBool("transA", false)
	if err != nil {
		return err
	}
	tB, err := c.attrBool("transB", false)
	if err != nil {
		return err
	}
	if c.b.opset < 7 {
		if _, err := c.attrBool("broadcast", false); err != nil {
			return err
		}
	}
	a, ia, err := c.float(0)
	if err != nil {
		return err
	}
	bv, err := c.in(1)
	if err != nil {
		return err
	}
	if len(a.shape) != 2 || len(bv.shape) != 2 {
		return c.errf("input", "Gemm needs 2-D A and B, got %v and %v", a.shape, bv.shape)
	}
	if !bv.dt.IsFloat() {
		return c.errf(c.inField(1), "element type %s, Gemm needs a float tensor", bv.dt.String())
	}
	sa := a.shape
	if tA {
		ia, sa = c.b.permute(ia, a.shape, []int{1, 0})
	}
	m, k := sa[0], sa[1]
	kb, n := bv.shape[0], bv.shape[1]
	if tB {
		kb, n = n, kb
	}
	if kb != k {
		return c.errf("input", "inner extents differ: A′ %v, B′ [%d,%d]", sa, kb, n)
	}
	var cv *value
	if c.present(2) {
		if cv, err = c.in(2); err != nil {
			return err
		}
		if !cv.dt.IsFloat() {
			return c.errf(c.inField(2), "element type %s, Gemm needs a float tensor", cv.dt.String())
		}
		if err := spec.BroadcastShape(cv.shape, spec.Shape{m, n}); err != nil {
			return c.errf(c.inField(2), "%v", err)
		}
	}
	one := spec.NewRat(1, 1)
	out := spec.Shape{m, n}
	if bv.isK && tB && alpha.Same(one) && (cv == nil || (cv.isK && beta.Same(one) && len(cv.shape) == 1 && cv.shape[0] == n)) {
		p := &irsem.Params{}
		weightTensor(p, bv, bv.shape)
		if cv != nil {
			p.B = ratTensor(cv, cv.shape)
		} else {
			z := irsem.RatTensor{Shape: spec.Shape{n}, Data: make([]spec.Rat, n)}
			p.B = &z
		}
		id := c.b.emitP(irsem.Kind{Op: irsem.OpLinear}, out, p, ia)
		c.b.use(bv, id, irsem.ParamW)
		if cv != nil {
			c.b.use(cv, id, irsem.ParamB)
		}
		c.out(0, id, out, a.dt)
		return nil
	}
	ib, err := c.b.ir(bv)
	if err != nil {
		return c.wrap(c.inField(1), err)
	}
	if tB {
		ib, _ = c.b.permute(ib, bv.shape, []int{1, 0})
	}
	y := c.b.scale(c.b.binary(irsem.OpMatmul, ia, ib, out), out, alpha)
	if cv != nil && !beta.IsZero() {
		ic, err := c.b.ir(cv)
		if err != nil {
			return c.wrap(c.inField(2), err)
		}
		y = c.b.binary(irsem.OpAdd, y, c.b.scale(c.b.broadcast(ic, cv.shape, out), out, beta), out)
	}
	c.out(0, y, out, a.dt)
	return nil
}

// geometry is a checked convolution or pooling window in ONNX terms.
type geometry struct {
	kernel, stride, dilation []int
	pads                     []int // 2·r: begins, then ends
	out                      []int // output spatial extents
}

// windowGeometry reads strides, dilations, pads and auto_pad for r
// spatial axes of extents in, and computes the output extents (ceil for
// pools with ceil_mode: the last window must start inside the input or
// the begin padding, as in PyTorch and ONNX's reference).
func (c *nctx) windowGeometry(kernel []int, in []int, withDilation, ceil bool) (*geometry, error) {
	r := len(kernel)
	g := &geometry{kernel: kernel}
	read := func(name string, n int, def, lo int64) ([]int, error) {
		xs, ok, err := c.attrInts(name)
		if err != nil {
			return nil, err
		}
		if !ok {
			out := make([]int, n)
			for i := range out {
				out[i] = int(def)
			}
			return out, nil
		}
		if len(xs) != n {
			return nil, c.errf(attrField(name), "%d entries, expected %d", len(xs), n)
		}
		return c.toInts(attrField(name), xs, lo, int64(irsem.MaxAttrInt))
	}
	var err error
	if g.stride, err = read("strides", r, 1, 1); err != nil {
		return nil, err
	}
	if withDilation {
		if g.dilation, err = read("dilations", r, 1, 1); err != nil {
			return nil, err
		}
	} else {
		g.dilation = make([]int, r)
		for i := range g.dilation {
			g.dilation[i] = 1
		}
	}
	autoPad, err := c.attrString("auto_pad", "NOTSET")
	if err != nil {
		return nil, err
	}
	g.out = make([]int, r)
	switch autoPad {
	case "NOTSET":
		if g.pads, err = read("pads", 2*r, 0, 0); err != nil {
			return nil, err
		}
	case "VALID", "SAME_UPPER", "SAME_LOWER":
		if c.n.Attr("pads") != nil {
			return nil, c.errf(attrField("pads"), "given with auto_pad %s", autoPad)
		}
		g.pads = make([]int, 2*r)
		if autoPad != "VALID" {
			for d := 0; d < r; d++ {
				eff := g.dilation[d]*(kernel[d]-1) + 1
				o := (in[d] + g.stride[d] - 1) / g.stride[d]
				total := max(0, (o-1)*g.stride[d]+eff-in[d])
				small := total / 2
				if autoPad == "SAME_UPPER" {
					g.pads[d], g.pads[r+d] = small, total-small
				} else {
					g.pads[d], g.pads[r+d] = total-small, small
				}
			}
		}
	default:
		return nil, c.errf(attrField("auto_pad"), "%q is not supported (NOTSET, VALID, SAME_UPPER, SAME_LOWER)", autoPad)
	}
	for d := 0; d < r; d++ {
		eff := g.dilation[d]*(kernel[d]-1) + 1
		span := in[d] + g.pads[d] + g.pads[r+d] - eff
		if span < 0 {
			return nil, c.errf(attrField("kernel_shape"), "window %d on spatial axis %d exceeds the padded extent %d", eff, d, in[d]+g.pads[d]+g.pads[r+d])
		}
		o := span/g.stride[d] + 1
		if ceil {
			o = (span+g.stride[d]-1)/g.stride[d] + 1
			if (o-1)*g.stride[d] >= in[d]+g.pads[d] {
				o--
			}
		}
		g.out[d] = o
	}
	return g, nil
}

func (g *geometry) symmetric() bool {
	r := len(g.kernel)
	for d := 0; d < r; d++ {
		if g.pads[d] != g.pads[r+d] {
			return false
		}
	}
	return true
}

func ones(xs []int) bool {
	for _, x := range xs {
		if x != 1 {
			return false
		}
	}
	return true
}

// kernelShape reads kernel_shape (required when want is nil) and checks it
// against want (a weight's spatial extents).
func (c *nctx) kernelShape(r int, want []int) ([]int, error) {
	xs, ok, err := c.attrInts("kernel_shape")
	if err != nil {
		return nil, err
	}
	if !ok {
		if want == nil {
			return nil, c.errf(attrField("kernel_shape"), "missing")
		}
		return append([]int(nil), want...), nil
	}
	if r >= 0 && len(xs) != r {
		return nil, c.errf(attrField("kernel_shape"), "%d entries for %d spatial axes", len(xs), r)
	}
	k, err := c.toInts(attrField("kernel_shape"), xs, 1, int64(irsem.MaxAttrInt))
	if err != nil {
		return nil, err
	}
	if want != nil {
		for i := range k {
			if k[i] != want[i] {
				return nil, c.errf(attrField("kernel_shape"), "%v, the weight's spatial extents are %v", k, want)
			}
		}
	}
	return k, nil
}

// convOperands reads the operands Conv and ConvTranspose share: the float
// input X (its value and IR node), the constant weight W and the optional
// constant bias B (nil when absent), after checking 2–3 inputs and a
// single output.
func convOperands(c *nctx) (v *value, x int, w, bias *value, err error) {
	if err = c.oneOutput(2, 3); err != nil {
		return
	}
	if v, x, err = c.float(0); err != nil {
		return
	}
	if w, err = c.constFloat(1); err != nil {
		return
	}
	if c.present(2) {
		bias, err = c.constFloat(2)
	}
	return
}

// importConv: conv with W (and b) from the payload; symmetric pads become
// conv's padding, asymmetric ones a constant-zero pad node before a conv
// without padding.
func importConv(c *nctx) error {
	v, x, w, bias, err := convOperands(c)
	if err != nil {
		return err
	}
	if len(w.shape) < 3 {
		return c.errf(c.inField(1), "weight of shape %v, expected [M, C/group, k…]", w.shape)
	}
	r := len(w.shape) - 2
	s := v.shape
	if len(s) != r+2 {
		return c.errf(c.inField(0), "input of shape %v for a %d-D convolution (expected [N, C, %d spatial])", s, r, r)
	}
	group, err := c.attrInt("group", 1)
	if err != nil {
		return err
	}
	ch, m := s[1], w.shape[0]
	if group < 1 || int64(ch)%group != 0 || int64(m)%group != 0 || int64(w.shape[1])*group != int64(ch) {
		return c.errf(attrField("group"), "group %d with %d input channels and a weight of shape %v", group, ch, w.shape)
	}
	if bias != nil && (len(bias.shape) != 1 || bias.shape[0] != m) {
		return c.errf(c.inField(2), "bias of shape %v, expected [%d]", bias.shape, m)
	}
	k, err := c.kernelShape(r, w.shape[2:])
	if err != nil {
		return err
	}
	g, err := c.windowGeometry(k, s[2:], true, false)
	if err != nil {
		return err
	}
	pad := make([]int, r)
	if g.symmetric() {
		copy(pad, g.pads[:r])
	} else {
		widths := make([]int, 2*len(s))
		for d := 0; d < r; d++ {
			widths[2+d], widths[len(s)+2+d] = g.pads[d], g.pads[r+d]
		}
		if x, s, err = c.b.pad(x, s, widths, "constant", spec.Rat{}); err != nil {
			return c.wrap(attrField("pads"), err)
		}
	}
	out := spec.Shape{s[0], m}
	out = append(out, g.out...)
	if _, err := out.Check(0); err != nil {
		return c.errf("", "%v", err)
	}
	p := &irsem.Params{}
	weightTensor(p, w, w.shape)
	if bias != nil {
		p.B = ratTensor(bias, bias.shape)
	}
	win := &spec.Window{Kernel: k, Stride: g.stride, Padding: pad, Dilation: g.dilation, Groups: int(group), InChannels: ch, OutChannels: m}
	id := c.b.emitP(irsem.Kind{Op: irsem.OpConv, Window: win}, out, p, x)
	c.b.use(w, id, irsem.ParamW)
	if bias != nil {
		c.b.use(bias, id, irsem.ParamB)
	}
	c.out(0, id, out, v.dt)
	return nil
}

// importConvTranspose: conv_transpose with W [C, M/group, k…] (and b)
// from the payload. Output extent per axis: (n−1)·s − pb − pe +
// d·(k−1) + 1 + output_padding. With output_shape (or auto_pad SAME_*,
// which asks for n·s) the pads are derived as the operator specifies:
// total = s·(n−1) + output_padding + d·(k−1) + 1 − output_shape, split
// begin = total − total/2, end = total/2, except SAME_UPPER: begin =
// total/2.
func importConvTranspose(c *nctx) error {
	v, x, w, bias, err := convOperands(c)
	if err != nil {
		return err
	}
	if len(w.shape) < 3 {
		return c.errf(c.inField(1), "weight of shape %v, expected [C, M/group, k…]", w.shape)
	}
	r := len(w.shape) - 2
	s := v.shape
	if len(s) != r+2 {
		return c.errf(c.inField(0), "input of shape %v for a %d-D transposed convolution (expected [N, C, %d spatial])", s, r, r)
	}
	group, err := c.attrInt("group", 1)
	if err != nil {
		return err
	}
	ch := s[1]
	if group < 1 || w.shape[0] != ch || int64(ch)%group != 0 {
		return c.errf(attrField("group"), "group %d with %d input channels and a weight of shape %v", group, ch, w.shape)
	}
	m := w.shape[1] * int(group)
	if bias != nil && (len(bias.shape) != 1 || bias.shape[0] != m) {
		return c.errf(c.inField(2), "bias of shape %v, expected [%d]", bias.shape, m)
	}
	k, err := c.kernelShape(r, w.shape[2:])
	if err != nil {
		return err
	}
	win := &spec.Window{Kernel: k, Groups: int(group), InChannels: ch, OutChannels: m}
	if win.Stride, err = c.attrIntsOr("strides", r, 1, 1); err != nil {
		return err
	}
	if win.Dilation, err = c.attrIntsOr("dilations", r, 1, 1); err != nil {
		return err
	}
	if win.OutputPadding, err = c.attrIntsOr("output_padding", r, 0, 0); err != nil {
		return err
	}
	if win.Pads, err = c.convTransposePads(s[2:], win); err != nil {
		return err
	}
	out := spec.Shape{s[0], m}
	for d := 0; d < r; d++ {
		e := win.Dilation[d]*(k[d]-1) + 1
		n := (s[2+d]-1)*win.Stride[d] - win.Pads[d] - win.Pads[r+d] + e + win.OutputPadding[d]
		if s[2+d] == 0 {
			n = 0
		} else if n < 1 {
			return c.errf(attrField("pads"), "output extent %d on spatial axis %d is not positive", n, d)
		}
		out = append(out, n)
	}
	if _, err := out.Check(0); err != nil {
		return c.errf("", "%v", err)
	}
	if err := available(irsem.OpConvTranspose, "winops"); err != nil {
		return c.wrap("", err)
	}
	p := &irsem.Params{}
	weightTensor(p, w, w.shape)
	if bias != nil {
		p.B = ratTensor(bias, bias.shape)
	}
	id := c.b.emitP(irsem.Kind{Op: irsem.OpConvTranspose, Window: win}, out, p, x)
	c.b.use(w, id, irsem.ParamW)
	if bias != nil {
		c.b.use(bias, id, irsem.ParamB)
	}
	c.out(0, id, out, v.dt)
	return nil
}

// attrIntsOr reads the ints attribute name, which must have n entries,
// each in [lo, irsem.MaxAttrInt]; absent, it is n copies of def.
func (c *nctx) attrIntsOr(name string, n int, def, lo int64) ([]int, error) {
	xs, ok, err := c.attrInts(name)
	if err != nil || !ok {
		out := make([]int, n)
		for i := range out {
			out[i] = int(def)
		}
		return out, err
	}
	if len(xs) != n {
		return nil, c.errf(attrField(name), "%d entries, expected %d", len(xs), n)
	}
	return c.toInts(attrField(name), xs, lo, int64(irsem.MaxAttrInt))
}

// convTransposePads returns ConvTranspose's pads (begins, then ends) for
// the spatial extents sp and the window's kernel, strides, dilations and
// output padding: the pads attribute, zero for auto_pad VALID, or derived
// from output_shape or auto_pad SAME_* (see importConvTranspose).
func (c *nctx) convTransposePads(sp spec.Shape, win *spec.Window) ([]int, error) {
	r := len(sp)
	autoPad, err := c.attrString("auto_pad", "NOTSET")
	if err != nil {
		return nil, err
	}
	oshape, hasOut, err := c.attrInts("output_shape")
	if err != nil {
		return nil, err
	}
	if hasOut && len(oshape) == r+2 {
		oshape = oshape[2:]
	}
	if hasOut && len(oshape) != r {
		return nil, c.errf(attrField("output_shape"), "%d entries for %d spatial axes", len(oshape), r)
	}
	switch autoPad {
	case "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER":
	default:
		return nil, c.errf(attrField("auto_pad"), "%q is not supported (NOTSET, VALID, SAME_UPPER, SAME_LOWER)", autoPad)
	}
	if !hasOut && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
		oshape = make([]int64, r)
		for d := range oshape {
			oshape[d] = int64(sp[d]) * int64(win.Stride[d])
		}
		hasOut = true
	}
	switch {
	case hasOut:
		if c.n.Attr("pads") != nil {
			c.seen["pads"] = true
			return nil, c.errf(attrField("pads"), "given with output_shape or auto_pad %s", autoPad)
		}
		pads := make([]int, 2*r)
		for d := 0; d < r; d++ {
			total := int64(win.Stride[d])*int64(sp[d]-1) + int64(win.OutputPadding[d]) + int64(win.Dilation[d]*(win.Kernel[d]-1)+1) - oshape[d]
			if total < 0 {
				return nil, c.errf(attrField("output_shape"), "extent %d on spatial axis %d exceeds the full transposed convolution", oshape[d], d)
			}
			half := int(total / 2)
			if autoPad == "SAME_UPPER" {
				pads[d], pads[r+d] = half, int(total)-half
			} else {
				pads[d], pads[r+d] = int(total)-half, half
			}
		}
		return pads, nil
	case autoPad == "VALID":
		return make([]int, 2*r), nil
	}
	return c.attrIntsOr("pads", 2*r, 0, 0)
}

// poolOp: MaxPool and AveragePool. The TorchLean tags max_pool and
// avg_pool where their meaning is the ONNX op's (symmetric pads smaller
// than the kernel, no dilation, no ceil_mode; avg_pool with pads only
// when count_include_pad = 1); otherwise max_pool_nd and avg_pool_nd.
func poolOp(isMax bool) opImporter {
	return func(c *nctx) error {
		if err := c.arity(1, 1); err != nil {
			return err
		}
		what := "a second output"
		if isMax {
			what = "the Indices output"
		}
		if err := c.outputs(1, what); err != nil {
			return err
		}
		v, x, err := c.float(0)
		if err != nil {
			return err
		}
		k, err := c.kernelShape(-1, nil)
		if err != nil {
			return err
		}
		r := len(k)
		s := v.shape
		if len(s) != r+2 {
			return c.errf(c.inField(0), "input of shape %v for a %d-D pool (expected [N, C, %d spatial])", s, r, r)
		}
		ceil := false
		if c.b.opset >= 10 {
			if ceil, err = c.attrBool("ceil_mode", false); err != nil {
				return err
			}
		}
		includePad := false
		if !isMax && c.b.opset >= 7 {
			if includePad, err = c.attrBool("count_include_pad", false); err != nil {
				return err
			}
		}
		if isMax && c.b.opset >= 8 {
			so, err := c.attrInt("storage_order", 0)
			if err != nil {
				return err
			}
			if so != 0 {
				return c.errf(attrField("storage_order"), "%d: only 0 (row major) is supported", so)
			}
		}
		withDil := (isMax && c.b.opset >= 10) || (!isMax && c.b.opset >= 19)
		g, err := c.windowGeometry(k, s[2:], withDil, ceil)
		if err != nil {
			return err
		}
		out := append(s[:2:2].Clone(), g.out...)
		if _, err := out.Check(0); err != nil {
			return c.errf("", "%v", err)
		}
		zeroPad := true
		padSmall := true
		for d := 0; d < r; d++ {
			zeroPad = zeroPad && g.pads[d] == 0 && g.pads[r+d] == 0
			padSmall = padSmall && g.pads[d] < k[d]
		}
		floorSame := true // ceil mode gives the floor extents
		for d := 0; d < r; d++ {
			span := s[2+d] + g.pads[d] + g.pads[r+d] - g.dilation[d]*(k[d]-1) - 1
			floorSame = floorSame && span/g.stride[d]+1 == g.out[d]
		}
		torch := ones(g.dilation) && floorSame && g.symmetric() && padSmall && (isMax || zeroPad || includePad)
		var id int
		if torch {
			op := irsem.OpAvgPool
			if isMax {
				op = irsem.OpMaxPool
			}
			win := &spec.Window{Kernel: k, Stride: g.stride, Padding: append([]int(nil), g.pads[:r]...)}
			id = c.b.emit(irsem.Kind{Op: op, Window: win}, out, x)
		} else {
			op := irsem.OpAvgPoolND
			if isMax {
				op = irsem.OpMaxPoolND
			}
			if err := available(op, "winops"); err != nil {
				return c.wrap("", err)
			}
			win := &spec.Window{Kernel: k, Stride: g.stride, Pads: g.pads, Dilation: g.dilation, CeilMode: ceil, CountIncludePad: includePad && !isMax}
			id = c.b.emit(irsem.Kind{Op: op, Window: win}, out, x)
		}
		c.out(0, id, out, v.dt)
		return nil
	}
}

// importGlobalAveragePool: reshape [N, C, spatial…] → [N, C, S], the
// mean along axis 2, reshape → [N, C, 1, …].
func importGlobalAveragePool(c *nctx) error {
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	s := v.shape
	if len(s) < 3 {
		return c.errf(c.inField(0), "input of shape %v, expected [N, C, spatial…]", s)
	}
	sp := prod(s[2:])
	if sp == 0 {
		return c.errf(c.inField(0), "input of shape %v has no spatial elements to average", s)
	}
	flat := spec.Shape{s[0], s[1], sp}
	id := c.b.reshape(x, s, flat)
	id = c.b.emit(irsem.Kind{Op: irsem.OpReduceMean, Axis: 2}, spec.Shape{s[0], s[1]}, id)
	out := s.Clone()
	for i := 2; i < len(out); i++ {
		out[i] = 1
	}
	c.out(0, c.b.reshape(id, spec.Shape{s[0], s[1]}, out), out, v.dt)
	return nil
}

// importBatchNorm: inference batch normalisation, batch_norm_eval over
// axis 1 with scale, B, mean and var (initializers) as gamma, beta, mean,
// var and ε the float32 epsilon's exact value.
func importBatchNorm(c *nctx) error {
	if err := c.arity(5, 5); err != nil {
		return err
	}
	if err := c.legacy("consumed_inputs", 6); err != nil {
		return err
	}
	c.allow("momentum") // the running statistics' update rate: training only
	if c.b.opset < 7 {
		test, err := c.attrBool("is_test", false)
		if err != nil {
			return err
		}
		if !test {
			return c.errf(attrField("is_test"), "0 (training mode); only inference is supported")
		}
	}
	if c.b.opset < 9 {
		sp, err := c.attrBool("spatial", true)
		if err != nil {
			return err
		}
		if !sp {
			return c.errf(attrField("spatial"), "0 (per-activation statistics) is not supported")
		}
	}
	if c.b.opset >= 14 {
		tm, err := c.attrBool("training_mode", false)
		if err != nil {
			return err
		}
		if tm {
			return c.errf(attrField("training_mode"), "1; only inference is supported")
		}
	}
	if err := c.outputs(1, "a training-mode statistics output"); err != nil {
		return err
	}
	eps, err := c.attrRat("epsilon", 1e-5)
	if err != nil {
		return err
	}
	v, x, err := c.float(0)
	if err != nil {
		return err
	}
	s := v.shape
	if len(s) < 2 {
		return c.errf(c.inField(0), "input of shape %v, expected [N, C, …]", s)
	}
	ch := s[1]
	ps := make([]*value, 4)
	for i := range ps {
		if ps[i], err = c.constFloat(i + 1); err != nil {
			return err
		}
		if len(ps[i].shape) != 1 || ps[i].shape[0] != ch {
			return c.errf(c.inField(i+1), "shape %v, expected [%d]", ps[i].shape, ch)
		}
	}
	p := &irsem.Params{Gamma: ratTensor(ps[0], ps[0].shape), Beta: ratTensor(ps[1], ps[1].shape),
		Mean: ratTensor(ps[2], ps[2].shape), Var: ratTensor(ps[3], ps[3].shape), Eps: &eps}
	id := c.b.emitP(irsem.Kind{Op: irsem.OpBatchNormEval, ChannelAxis: 1, Channels: ch}, s, p, x)
	for i, f := range []string{irsem.ParamGamma, irsem.ParamBeta, irsem.ParamMean, irsem.ParamVar} {
		c.b.use(ps[i], id, f)
	}
	c.out(0, id, s, v.dt)
	return nil
}

// importInstanceNorm: instance_norm over the spatial axes per (n, c),
// scale and B (initializers) as gamma and beta, ε the float32 epsilon.
func importInstanceNorm(c *nctx) error {
	if err := c.arity(3, 3); err != nil {
		return err
	}
	if err := c.legacy("consumed_inputs", 6); err != nil {
		return err
	}
	if err := c.outputs(1, "a second output"); err != nil {
		return err
	}
	eps, err := c.attrRat("epsilon", 1e-5)
	if err != nil {
		return err
	}
	v, x, err := c.float(0)
	if err != nil {
		return err
	}
	s := v.shape
	if len(s) < 3 {
		return c.errf(c.inField(0), "input of shape %v, expected [N, C, spatial…]", s)
	}
	ch := s[1]
	ps := make([]*value, 2)
	for i := range ps {
		if ps[i], err = c.constFloat(i + 1); err != nil {
			return err
		}
		if len(ps[i].shape) != 1 || ps[i].shape[0] != ch {
			return c.errf(c.inField(i+1), "shape %v, expected [%d]", ps[i].shape, ch)
		}
	}
	if err := available(irsem.OpInstanceNorm, "regops"); err != nil {
		return c.wrap("", err)
	}
	p := &irsem.Params{Gamma: ratTensor(ps[0], ps[0].shape), Beta: ratTensor(ps[1], ps[1].shape), Eps: &eps}
	id := c.b.emitP(irsem.Kind{Op: irsem.OpInstanceNorm, Channels: ch}, s, p, x)
	c.b.use(ps[0], id, irsem.ParamGamma)
	c.b.use(ps[1], id, irsem.ParamBeta)
	c.out(0, id, s, v.dt)
	return nil
}

// importLRN: lrn over axis 1 with size (required), alpha (1e-4), beta
// (0.75) and bias (1), each float32 attribute's exact value.
func importLRN(c *nctx) error {
	alpha, err := c.attrRat("alpha", 1e-4)
	if err != nil {
		return err
	}
	beta, err := c.attrRat("beta", 0.75)
	if err != nil {
		return err
	}
	bias, err := c.attrRat("bias", 1)
	if err != nil {
		return err
	}
	sa, err := c.attr("size", AttrInt)
	if err != nil {
		return err
	}
	if sa == nil {
		return c.errf(attrField("size"), "missing")
	}
	if sa.I < 1 || sa.I > int64(irsem.MaxAttrInt) {
		return c.errf(attrField("size"), "%d, expected a positive integer", sa.I)
	}
	v, x, err := c.unaryIn()
	if err != nil {
		return err
	}
	if len(v.shape) < 2 {
		return c.errf(c.inField(0), "input of shape %v, expected [N, C, …]", v.shape)
	}
	if err := available(irsem.OpLRN, "regops"); err != nil {
		return c.wrap("", err)
	}
	k := irsem.Kind{Op: irsem.OpLRN, Size: int(sa.I), Alpha: alpha, Beta: beta, Bias: bias}
	c.out(0, c.b.emit(k, v.shape, x), v.shape, v.dt)
	return nil
}
