package onnx

import "github.com/tlcheck/tlcheck/spec"

// The ONNX mappings added for the real-model zoo (tools/models):
//
//	GatherElements [11]  with constant indices (negatives normalised):
//	                     output[p] = data[p with p[axis] replaced by
//	                     indices[p]], the indices shaped like the output and
//	                     of data's rank, no wider than data off the axis;
//	                     on an integer constant folded, else the registry's
//	                     gather of the flat indices from data reshaped to
//	                     one axis. transformers' BERT embeddings build
//	                     their token-type ids this way (a gather on two
//	                     constants). Computed indices are refused.
func zooOps() map[string]opImporter {
	return map[string]opImporter{
		"GatherElements": importGatherElements,
	}
}

func importGatherElements(c *nctx) error {
	v, iv, ax, err := gatherOperands(c)
	if err != nil {
		return err
	}
	flat, err := gatherElementsIndex(c, v.shape, iv, ax)
	if err != nil {
		return err
	}
	out := iv.shape.Clone()
	if v.isInt() {
		if !v.isK {
			return c.errf(c.inField(0), "integer tensor is not a constant")
		}
		xs := make([]int64, len(flat))
		for i, k := range flat {
			xs[i] = v.ints[k]
		}
		c.outValue(0, intConst(out, xs))
		return nil
	}
	x, err := c.b.ir(v)
	if err != nil {
		return c.wrap(c.inField(0), err)
	}
	n := spec.Shape{v.shape.Size()}
	id, _, err := c.b.gather(c.b.reshape(x, v.shape, n), n, 0, flat, out)
	if err != nil {
		return c.wrap("", err)
	}
	c.out(0, id, out, v.dt)
	return nil
}

// gatherElementsIndex is the row-major flat index into data (shape s) of
// each element of GatherElements' output along axis ax.
func gatherElementsIndex(c *nctx, s spec.Shape, iv *value, ax int) ([]int, error) {
	if len(iv.shape) != len(s) {
		return nil, c.errf(c.inField(1), "rank %d, the data's is %d", len(iv.shape), len(s))
	}
	for d := range s {
		if d != ax && iv.shape[d] > s[d] {
			return nil, c.errf(c.inField(1), "axis %d has extent %d, wider than the data's %d", d, iv.shape[d], s[d])
		}
	}
	if _, err := iv.shape.Check(0); err != nil {
		return nil, c.errf(c.inField(1), "%v", err)
	}
	stride := make([]int, len(s))
	for d, m := len(s)-1, 1; d >= 0; d-- {
		stride[d], m = m, m*s[d]
	}
	idx, err := c.indicesWithin(iv, s[ax])
	if err != nil {
		return nil, err
	}
	flat := make([]int, len(idx))
	pos := make([]int, len(s))
	for i, k := range idx {
		f := 0
		for d := range s {
			if d == ax {
				f += k * stride[d]
			} else {
				f += pos[d] * stride[d]
			}
		}
		flat[i] = f
		for d := len(pos) - 1; d >= 0; d-- { // next position in the output, row-major
			if pos[d]++; pos[d] < iv.shape[d] {
				break
			}
			pos[d] = 0
		}
	}
	return flat, nil
}
