package onnx

import "github.com/tlcheck/tlcheck/limits"

// exactBudget is onnx-value-bytes' account during one import. The decoder
// charges a model's tensors their decoded size only (useValues); the
// importer starts the account at that size (modelValueBytes) and charges
// exactBytes an element, before converting, wherever it turns a decoded
// float tensor into exact values: a float tensor that cannot be held as a
// plane (NaN, ±∞, the float 8 and float 4 types: tensorValue), and a plane
// the first time a reader other than a linear, conv or conv_transpose
// weight needs its rationals (imp.exactOf). So the limit bounds the decoded
// values plus the exact values made of them, as it did when every float
// was charged 36 bytes at decode — a charge the new one never exceeds, and
// which is paid now only for what is converted (a weight held as its plane
// costs 4 or 8 bytes: VGG-19's 143.7 M weights 0.57 GB, not 5.2 GB).
//
// value.exact converts a plane without a place to refuse; a reader that
// reaches it before exactOf (none does: nctx.in converts every input a
// node reads but a weight, and irFinite a constant it materialises)
// charges through the value's budget (note), and importModel refuses the
// model once the node is imported if that took the account past the limit.
type exactBudget struct {
	lim  int64
	used int64
	err  error // the first conversion past the limit that could not be refused (note)
}

// newExactBudget is the account of an import of m. A model whose decoded
// values already exceed the limit (one built by code: Decode refuses such
// a file) is refused.
func newExactBudget(m *Model) (*exactBudget, error) {
	e := &exactBudget{lim: limits.Current().ONNXValueBytes, used: modelValueBytes(m)}
	if e.used > e.lim {
		return nil, limits.Exceeded("onnx-value-bytes", e.lim, "the tensor values take more than %d bytes decoded (%d)", e.lim, e.used)
	}
	return e, nil
}

// charge adds n exact values of the tensor named what, refusing them when
// the account would exceed the limit.
func (e *exactBudget) charge(n int, what string) error {
	if e == nil {
		return nil
	}
	e.used += int64(n) * exactBytes
	if e.used > e.lim {
		return limits.Exceeded("onnx-value-bytes", e.lim, "the tensor values take more than %d bytes: converting %s to exact values (%d elements, %d bytes each) on top of the model's decoded values and the exact values already made", e.lim, limits.Quote(what), n, exactBytes)
	}
	return nil
}

// note is charge for a conversion that cannot be refused where it is
// made: the first error is kept for importModel.
func (e *exactBudget) note(n int, what string) {
	if err := e.charge(n, what); err != nil && e.err == nil {
		e.err = err
	}
}

// check returns the error note kept, as an import error of node where.
func (e *exactBudget) check(where string) error {
	if e == nil || e.err == nil {
		return nil
	}
	return &ImportError{Node: where, Err: e.err}
}

// modelValueBytes is what m's tensors took decoded (useValues without
// exact values): every initializer and TENSOR attribute, in the main
// graph and in the subgraphs of its GRAPH attributes.
func modelValueBytes(m *Model) int64 {
	if m == nil {
		return 0
	}
	return graphValueBytes(m.Graph, 0)
}

func graphValueBytes(g *Graph, depth int) int64 {
	if g == nil || depth > maxGraphDepth {
		return 0
	}
	var n int64
	for _, t := range g.Initializers {
		n += tensorValueBytes(t)
	}
	for _, nd := range g.Nodes {
		if nd == nil {
			continue
		}
		for _, a := range nd.Attrs {
			if a == nil {
				continue
			}
			n += tensorValueBytes(a.T) + graphValueBytes(a.G, depth+1)
		}
	}
	return n
}

func tensorValueBytes(t *Tensor) int64 {
	if t == nil {
		return 0
	}
	return int64(t.Len()) * valueBytes(t.DataType)
}

// exactOf converts v's plane to its rationals, charging them first
// (exactBudget); a value without a plane is left as it is.
func (b *imp) exactOf(v *value) error {
	if v.rats != nil || v.plane == nil {
		return nil
	}
	if err := b.bud.charge(v.plane.Len(), v.name); err != nil {
		return err
	}
	v.rats = v.plane.Rats().Data
	v.plane = nil
	return nil
}
