package onnx

// maskedPad folds Pad (opset ≥ 11, mode constant) of a float constant
// when the constant or the pad value holds −∞ — the Attention function
// body pads its short additive mask with −∞ (the keys beyond the mask are
// masked). The result is a constant carrying −∞ as the mask flag (see
// import_mask.go): element o of the output is the input element at o − b
// (b the begin pads) when that lies inside the input, else the pad value,
// −∞ included; this is the operator's definition for constant mode and
// involves no arithmetic, so the fold is exact. done is false when
// neither operand holds −∞ (the ordinary import follows), and also for
// the cases the fold does not cover — negative pads, an integer or
// computed input — which then meet the ordinary import and its refusal of
// −∞. The optional axes input (opset 18) names the axes the pads are for.
func (c *nctx) maskedPad(mode string) (done bool, err error) {
	if c.b.opset < 11 || len(c.n.Inputs) < 2 {
		return false, nil
	}
	v, err := c.in(0)
	if err != nil || !v.isK || v.isInt() {
		return false, err
	}
	var pv *value
	if c.present(2) {
		if pv, err = c.in(2); err != nil {
			return true, err
		}
	}
	padNinf := pv != nil && firstTrue(pv.ninf) >= 0
	if firstTrue(v.ninf) < 0 && !padNinf {
		return false, nil
	}
	if mode != "constant" {
		return true, c.errf(attrField("mode"), "%q padding of a value holding −∞ is not supported (constant is)", mode)
	}
	pads, err := c.constInts(1)
	if err != nil {
		return true, err
	}
	r := len(v.shape)
	full := pads.ints
	if c.present(3) {
		av, err := c.constInts(3)
		if err != nil {
			return true, err
		}
		if len(pads.ints) != 2*len(av.ints) {
			return true, c.errf(c.inField(1), "%d pads for %d axes", len(pads.ints), len(av.ints))
		}
		full = make([]int64, 2*r)
		for j, a := range av.ints {
			ax, err := normAxis(a, r)
			if err != nil {
				return true, c.errf(c.inField(3), "%v", err)
			}
			full[ax], full[r+ax] = pads.ints[j], pads.ints[len(av.ints)+j]
		}
	}
	if len(full) != 2*r {
		return true, c.errf(c.inField(1), "%d entries for rank %d (need %d)", len(full), r, 2*r)
	}
	var fill xnum
	if pv != nil {
		if !pv.isK || pv.isInt() || pv.shape.Size() != 1 {
			return true, c.errf(c.inField(2), "must be a constant float scalar")
		}
		fill = xnum{r: pv.exact()[0], ninf: padNinf}
	}
	out := v.shape.Clone()
	for d := 0; d < r; d++ {
		b, e := full[d], full[r+d]
		if b < 0 || e < 0 {
			return false, nil
		}
		if b > int64(1<<20) || e > int64(1<<20) {
			return true, c.errf(c.inField(1), "pad %d/%d on axis %d", b, e, d)
		}
		out[d] = v.shape[d] + int(b) + int(e)
	}
	n, err := out.Check(0)
	if err != nil {
		return true, c.errf(c.inField(1), "%v", err)
	}
	src := elems(v, v.shape)
	xs := make([]xnum, n)
	inStr, idx := v.shape.Strides(), make([]int, r)
	for o := range xs {
		at, inside := 0, true
		for d := 0; d < r; d++ {
			k := idx[d] - int(full[d])
			if k < 0 || k >= v.shape[d] {
				inside = false
				break
			}
			at += k * inStr[d]
		}
		if inside {
			xs[o] = src[at]
		} else {
			xs[o] = fill
		}
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < out[d] {
				break
			}
			idx[d] = 0
		}
	}
	w, err := c.fromXnums(out, v.dt, xs)
	if err != nil {
		return true, err
	}
	c.outValue(0, w)
	return true, nil
}
