package irsem

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// Limits on what a graph may declare. A document that exceeds one is
// rejected by the decoder and by Graph.Check with an error naming the node
// and field; none of them can make the engine allocate without bound. The
// limits in force are limits.Current() (package limits documents each one
// and how to raise it); the constants here are the wire format's hard
// bounds.
const (
	// MaxNodes bounds node ids on the wire; the node count of a graph is
	// bounded by limits.Current().Nodes, at most MaxNodes.
	MaxNodes = 1 << 20
	// MaxTotalElements bounds limits.GraphElements: the sum of the spans
	// (spec.Shape.Span) of every node's declared shape, which bounds the
	// size of a value table.
	MaxTotalElements = 1 << 28
	// MaxAttrInt bounds the integer window attributes (kernel, stride,
	// padding, dilation, groups, channel counts).
	MaxAttrInt = spec.DefaultMaxElements
)

// nodeLimit is the node count in force: limits.Current().Nodes, at most
// MaxNodes.
func nodeLimit() int { return min(limits.Current().Nodes, MaxNodes) }

// DeclaredWork is the work node n declares given its parents' shapes in:
// Σ parent elements + output elements × the number of terms one output
// element sums (the registry's Contraction for matmul and linear; for
// conv and conv_transpose in_channels/groups × kernel elements (the
// registry's Contraction of those primitives), for pools the kernel
// elements; 1 otherwise). It bounds the scalar operations the node's rule
// performs, as package limits states; saturates at math.MaxInt64.
func DeclaredWork(n *Node, in []spec.Shape) int64 {
	var elems uint64
	for _, s := range in {
		elems += uint64(s.Span())
	}
	terms := uint64(1)
	if w := n.Kind.Window; w != nil {
		for _, k := range w.Kernel {
			terms = satMul(terms, uint64(max(k, 1)))
		}
		if w.Groups > 0 { // conv, conv_transpose
			terms = satMul(terms, uint64(max(w.InChannels/w.Groups, 1)))
		}
	} else if o, ok := lookup(n.Kind.Op); ok && o.Prim != "" {
		if info, err := spec.Info(o.Prim); err == nil && info.Contraction != nil {
			terms = uint64(max(info.Contraction(primAttrs(n), in), 1))
		}
	}
	w := satMul(uint64(n.Shape.Span()), terms)
	if w += elems; w < elems || w > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(w)
}

// satAdd renders an overflowed (negative) work sum as the largest int64.
func satAdd(w int64) int64 {
	if w < 0 {
		return math.MaxInt64
	}
	return w
}

// satMul is a·b, saturating at the largest uint64.
func satMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// Node is one node of the canonical IR: its id (equal to its index in
// Graph.Nodes), its parents (node ids, all smaller than ID; duplicates are
// allowed and meaningful), its operation and its declared output shape.
// Parameters do not live here but in a Payload keyed by node id.
type Node struct {
	ID      int
	Parents []int
	Kind    Kind
	// Shape is the declared output shape (TorchLean's outShape).
	Shape spec.Shape
}

// Graph is the canonical IR: NN.IR.Graph. It has no scalar type, so the
// same value is interpreted over spec.Rat, spec.F32, spec.F64, or any other
// spec.Scalar without being rewritten. InputID names the (single) input
// node and OutputID the node whose value is the graph's result.
type Graph struct {
	InputID  int
	OutputID int
	Nodes    []Node
}

// Clone returns a deep copy of the graph.
func (g *Graph) Clone() *Graph {
	c := &Graph{InputID: g.InputID, OutputID: g.OutputID, Nodes: make([]Node, len(g.Nodes))}
	for i, n := range g.Nodes {
		c.Nodes[i] = Node{ID: n.ID, Parents: cloneInts(n.Parents), Kind: n.Kind.Clone(), Shape: cloneShape(n.Shape)}
	}
	return c
}

// Equal reports whether two graphs are the same: same ids, parents, kinds
// and declared shapes (nil slices equal empty ones).
func (g *Graph) Equal(h *Graph) bool {
	if g == nil || h == nil {
		return g == h
	}
	if g.InputID != h.InputID || g.OutputID != h.OutputID || len(g.Nodes) != len(h.Nodes) {
		return false
	}
	for i := range g.Nodes {
		a, b := &g.Nodes[i], &h.Nodes[i]
		if a.ID != b.ID || !intsEqual(a.Parents, b.Parents) || !intsEqual(a.Shape, b.Shape) || !a.Kind.Equal(b.Kind) {
			return false
		}
	}
	return true
}

// parentCycleMsg explains a parent id that is not smaller than the node's.
func parentCycleMsg(p, id int) string {
	if p == id {
		return fmt.Sprintf("parent %d is not < id %d (a node cannot depend on itself: a cycle)", p, id)
	}
	return fmt.Sprintf("parent %d is not < id %d (edges must point to earlier nodes; a later parent would allow a cycle)", p, id)
}

// Check verifies that the graph is well formed and its declared shapes are
// the inferred ones: nodes[i].ID = i; every tag is known and sets only its
// own attributes; every parent count is within the tag's arity; every
// parent id is < the node's id (so the graph is acyclic); every declared
// shape is valid, within spec.DefaultMaxElements, and equal to the shape
// inferred from the parents' declared shapes and the attributes; there is
// exactly one input node, at InputID; OutputID names a node. The first
// failure is returned as an *Error naming the node, its tag and the field.
func (g *Graph) Check() error {
	if g == nil {
		return docErrf("", "nil graph")
	}
	if len(g.Nodes) == 0 {
		return docErrf("nodes", "the graph has no nodes")
	}
	lim := limits.Current()
	if max := nodeLimit(); len(g.Nodes) > max {
		return &Error{Node: -1, Field: "nodes", Elem: -1, Err: limits.Exceeded("nodes", int64(max), "the graph has %d nodes", len(g.Nodes))}
	}
	var total, work int64
	inputs := 0
	in := make([]spec.Shape, 0, 4)
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.ID != i {
			return nodeErrf(i, "", "id", "nodes[%d] has id %d (each id must equal its index)", i, n.ID)
		}
		info, ok := lookup(n.Kind.Op)
		if !ok {
			return nodeErrf(i, "", "kind", "unknown op tag %s", limits.Quote(string(n.Kind.Op)))
		}
		op := info.Op
		if k := len(n.Parents); k < info.MinArity || (info.MaxArity >= 0 && k > info.MaxArity) {
			return nodeErrf(i, op, "parents", "%s", info.arityMsg(k))
		}
		if len(n.Parents) > lim.Parents {
			return &Error{Node: i, Op: string(op), Field: "parents", Elem: -1, Err: limits.Exceeded("parents", int64(lim.Parents), "%d parents", len(n.Parents))}
		}
		for _, p := range n.Parents {
			if p < 0 {
				return nodeErrf(i, op, "parents", "parent %d is not a node id", p)
			}
			if p >= i {
				return nodeErrf(i, op, "parents", "%s", parentCycleMsg(p, i))
			}
		}
		if f := n.Kind.strayAttr(info); f != "" {
			return nodeErrf(i, op, f, "%s takes no %q attribute", op, f)
		}
		if _, err := n.Shape.Check(0); err != nil {
			return &Error{Node: i, Op: string(op), Field: "shape", Elem: -1, Err: err}
		}
		if total += int64(n.Shape.Span()); total > min(lim.GraphElements, MaxTotalElements) {
			return &Error{Node: i, Op: string(op), Field: "shape", Elem: -1, Err: limits.Exceeded("graph-elements", min(lim.GraphElements, MaxTotalElements), "the declared shapes of nodes 0…%d hold %d elements", i, total)}
		}
		in = in[:0]
		for _, p := range n.Parents {
			in = append(in, g.Nodes[p].Shape)
		}
		want, err := inferShape(n, info, in)
		if err != nil {
			return wrapNode(i, op, "", err)
		}
		if !want.Equal(n.Shape) {
			return nodeErrf(i, op, "shape", "declared %v, inferred %v", n.Shape, want)
		}
		if work += DeclaredWork(n, in); work > lim.Work || work < 0 {
			return &Error{Node: i, Op: string(op), Elem: -1, Err: limits.Exceeded("work", lim.Work, "nodes 0…%d declare %d scalar operations", i, satAdd(work))}
		}
		if op == OpInput {
			inputs++
		}
	}
	if g.InputID < 0 || g.InputID >= len(g.Nodes) {
		return docErrf("input_id", "%d is not a node id (the graph has %d nodes)", g.InputID, len(g.Nodes))
	}
	if op := g.Nodes[g.InputID].Kind.Op; op != OpInput {
		return docErrf("input_id", "node %d is a %s node, not an input", g.InputID, op)
	}
	if inputs != 1 {
		return docErrf("nodes", "the graph has %d input nodes; exactly one (input_id %d) is allowed", inputs, g.InputID)
	}
	if g.OutputID < 0 || g.OutputID >= len(g.Nodes) {
		return docErrf("output_id", "%d is not a node id (the graph has %d nodes)", g.OutputID, len(g.Nodes))
	}
	return nil
}

// fieldErrf is an error about one attribute field; Check attributes it to
// the node.
func fieldErrf(field, format string, args ...any) error { return docErrf(field, format, args...) }

// checkAxis requires 0 ≤ axis < rank (the wire's axes are natural numbers).
func checkAxis(field string, axis, rank int) error {
	if axis < 0 || axis >= rank {
		return fieldErrf(field, "axis %d out of range for rank %d", axis, rank)
	}
	return nil
}

// primAttrs builds the registry attributes of a node whose tag maps to a
// registry primitive. Payload-dependent fields (const values, layer-norm
// ε) are filled in by the evaluator.
func primAttrs(n *Node) *spec.Attrs {
	k := &n.Kind
	a := &spec.Attrs{}
	if o, ok := lookup(k.Op); ok {
		registryAttrs(k, o, a)
	}
	// The attributes only the IR spells, and what a tag takes from the
	// node itself.
	switch k.Op {
	case OpTranspose:
		a.Axis = k.Axis1
	case OpBroadcastTo:
		a.Shape = shapeOrScalar(k.ToShape)
	case OpReshape, "tile":
		a.Shape = shapeOrScalar(k.OutShape)
	case OpRandUniform:
		a.Shape = n.Shape
	case OpConst:
		a.Shape = shapeOrScalar(k.ValueShape)
	case OpLayerNorm:
		a.Axis = 1 // the evaluator works on the [outer, inner] view
	case OpBatchNormEval:
		a.Axis = k.ChannelAxis
	case OpBernoulliMask:
		a.Shape = n.Shape.Clone()
	}
	if isWindowOp(k.Op) {
		a.Window = specWindow(k.Op, k.Window)
	}
	return a
}

// isWindowOp reports whether op is a window tag (its geometry in
// Kind.Window).
func isWindowOp(op Op) bool {
	switch op {
	case OpConv, OpConvTranspose, OpMaxPool, OpMaxPoolND, OpAvgPool, OpAvgPoolND:
		return true
	}
	return false
}

// specWindow is the registry geometry of a window tag: the symmetric
// padding of conv, max_pool and avg_pool becomes Pads = padding ++
// padding; the channel counts are the parents' shapes there.
func specWindow(op Op, w *spec.Window) *spec.Window {
	if w == nil {
		return nil
	}
	sw := &spec.Window{Kernel: cloneInts(w.Kernel), Stride: cloneInts(w.Stride), Pads: cloneInts(w.Pads)}
	if w.Padding != nil {
		sw.Pads = append(cloneInts(w.Padding), w.Padding...)
	}
	switch op {
	case OpConv, OpConvTranspose:
		sw.Dilation, sw.Groups = cloneInts(w.Dilation), w.Groups
		if op == OpConvTranspose {
			sw.OutputPadding = cloneInts(w.OutputPadding)
		}
	case OpMaxPoolND, OpAvgPoolND:
		sw.Dilation, sw.CeilMode = cloneInts(w.Dilation), w.CeilMode
		sw.CountIncludePad = op == OpAvgPoolND && w.CountIncludePad
	}
	return sw
}

func shapeOrScalar(s spec.Shape) spec.Shape {
	if s == nil {
		return spec.Shape{}
	}
	return s
}

// registryShape asks the registry primitive prim for the output shape.
func registryShape(prim string, a *spec.Attrs, in []spec.Shape, field string) (spec.Shape, error) {
	info, err := spec.Info(prim)
	if err != nil {
		return nil, err // unreachable: the tag table names registered primitives
	}
	s, err := info.InferShape(a, in)
	if err != nil {
		return nil, &Error{Node: -1, Field: field, Elem: -1, Err: err}
	}
	return s, nil
}

// linearShape is linear's output shape: the input x with its last axis
// the declared shape d's; x and d must agree on the other axes.
func linearShape(x, d spec.Shape) (spec.Shape, error) {
	if len(x) == 0 {
		return nil, fieldErrf("parents", "linear needs an input of rank ≥ 1, got %v", x)
	}
	if len(d) != len(x) || !spec.Shape(d[:len(d)-1]).Equal(x[:len(x)-1]) {
		return nil, fieldErrf("shape", "linear maps the last axis of its input %v and keeps the others; declared %v", x, d)
	}
	out := x.Clone()
	out[len(out)-1] = d[len(d)-1]
	return out, nil
}

// maskedShape is hard_masked_softmax's output shape: its input's x, which
// the mask m must have, with one entry per element.
func maskedShape(m *HardMask, x spec.Shape) (spec.Shape, error) {
	if m == nil {
		return nil, fieldErrf(AttrMask, "missing")
	}
	ms := shapeOrScalar(m.Shape)
	size, err := ms.Check(0)
	if err != nil {
		return nil, &Error{Node: -1, Field: AttrMask, Elem: -1, Err: err}
	}
	if !ms.Equal(x) {
		return nil, fieldErrf(AttrMask, "mask shape %v is not the input's shape %v", ms, x)
	}
	if len(m.Allowed) != size {
		return nil, fieldErrf(AttrMask, "mask of shape %v needs %d entries, got %d", ms, size, len(m.Allowed))
	}
	return x, nil
}

// inferShape computes a node's output shape from its parents' declared
// shapes and its attributes, or explains why they are incompatible.
func inferShape(n *Node, o *TagInfo, in []spec.Shape) (spec.Shape, error) {
	k := &n.Kind
	switch k.Op {
	case OpInput, OpRandUniform:
		return n.Shape, nil
	case OpConst:
		vs := shapeOrScalar(k.ValueShape)
		if _, err := vs.Check(0); err != nil {
			return nil, &Error{Node: -1, Field: AttrValueShape, Elem: -1, Err: err}
		}
		return vs, nil
	case OpBernoulliMask:
		if len(in[0]) != 0 {
			return nil, fieldErrf("parents", "the keep-probability parent %d must be a scalar (shape []), got %v", n.Parents[0], in[0])
		}
		return n.Shape, nil
	case OpSafeLog:
		if len(in[1]) != 0 {
			return nil, fieldErrf("parents", "the ε parent %d must be a scalar (shape []), got %v", n.Parents[1], in[1])
		}
		return in[0], nil
	case OpLinear:
		return linearShape(in[0], n.Shape)
	case OpTranspose:
		if err := checkAxis(AttrAxis1, k.Axis1, len(in[0])); err != nil {
			return nil, err
		}
		if err := checkAxis(AttrAxis2, k.Axis2, len(in[0])); err != nil {
			return nil, err
		}
	case OpPermute:
		return registryShape(o.Prim, primAttrs(n), in, AttrPerm)
	case OpBroadcastTo:
		if !in[0].Equal(shapeOrScalar(k.FromShape)) {
			return nil, fieldErrf(AttrFromShape, "from_shape %v is not the parent's shape %v", shapeOrScalar(k.FromShape), in[0])
		}
		if _, err := shapeOrScalar(k.ToShape).Check(0); err != nil {
			return nil, &Error{Node: -1, Field: AttrToShape, Elem: -1, Err: err}
		}
		return registryShape(o.Prim, primAttrs(n), in, AttrToShape)
	case OpReshape:
		if !in[0].Equal(shapeOrScalar(k.InShape)) {
			return nil, fieldErrf(AttrInShape, "in_shape %v is not the parent's shape %v", shapeOrScalar(k.InShape), in[0])
		}
		return registryShape(o.Prim, primAttrs(n), in, AttrOutShape)
	case OpFlatten:
		if !in[0].Equal(shapeOrScalar(k.InShape)) {
			return nil, fieldErrf(AttrInShape, "in_shape %v is not the parent's shape %v", shapeOrScalar(k.InShape), in[0])
		}
	case OpLayerNorm:
		if err := checkAxis(AttrAxis, k.Axis, len(in[0])); err != nil {
			return nil, err
		}
		if spec.Shape(in[0][k.Axis:]).Size() == 0 {
			return nil, fieldErrf(AttrAxis, "the normalized suffix %v of %v is empty", spec.Shape(in[0][k.Axis:]), in[0])
		}
		return in[0], nil
	case OpBatchNormEval:
		if err := checkAxis(AttrChannelAxis, k.ChannelAxis, len(in[0])); err != nil {
			return nil, err
		}
		if in[0][k.ChannelAxis] != k.Channels {
			return nil, fieldErrf(AttrChannels, "channels %d, but axis %d of the input %v has extent %d", k.Channels, k.ChannelAxis, in[0], in[0][k.ChannelAxis])
		}
		return in[0], nil
	case OpInstanceNorm:
		if len(in[0]) < 3 || in[0][1] != k.Channels {
			return nil, fieldErrf(AttrChannels, "channels %d, but the input %v is not [N, %d, spatial…]", k.Channels, in[0], k.Channels)
		}
		return registryShape(o.Prim, primAttrs(n), []spec.Shape{in[0], {k.Channels}, {k.Channels}}, "parents")
	case OpHardMaskedSoftmax:
		return maskedShape(k.Mask, in[0])
	case OpConv, OpConvTranspose, OpMaxPool, OpMaxPoolND, OpAvgPool, OpAvgPoolND:
		return windowShape(n, o, in[0])
	}
	if o.hasAttr(AttrAxis) && len(in) > 0 { // reduce_sum, reduce_mean, softmax, concat, …
		if err := checkAxis(AttrAxis, k.Axis, len(in[0])); err != nil {
			return nil, err
		}
	}
	field := "parents"
	if k.Op == OpReduceMean { // an empty axis is the registry's shape error, on the axis field
		field = AttrAxis
	}
	return registryShape(o.Prim, primAttrs(n), in, field)
}

func checkInts(field string, xs []int, r, lo int) error {
	if len(xs) != r {
		return fieldErrf(field, "%d entries, expected one per spatial axis (%d)", len(xs), r)
	}
	for i, x := range xs {
		if x < lo || x > MaxAttrInt {
			return fieldErrf(field, "entry %d is %d, outside [%d, %d]", i, x, lo, MaxAttrInt)
		}
	}
	return nil
}

// paramShapes returns the payload tensor shapes W and b of a conv or
// conv_transpose node from its window attributes: conv W [out_channels,
// in_channels/groups, kernel…], conv_transpose W [in_channels,
// out_channels/groups, kernel…], b [out_channels] for both. The window
// must have passed Graph.Check.
func paramShapes(op Op, w *spec.Window) (W, b spec.Shape) {
	W = spec.Shape{w.OutChannels, w.InChannels / max(w.Groups, 1)}
	if op == OpConvTranspose {
		W = spec.Shape{w.InChannels, w.OutChannels / max(w.Groups, 1)}
	}
	return append(W, w.Kernel...), spec.Shape{w.OutChannels}
}

// windowShape checks a window tag's attributes field by field against
// the input shape x, then takes the output shape from the registry
// primitive (for conv and conv_transpose with the payload shapes its
// attributes imply). Output extent per spatial axis, floor mode: (n + pb +
// pe − (d(k−1)+1))/s + 1 (d = 1 for max_pool and avg_pool, pb = pe =
// padding); spec.Window states ceil mode and conv_transpose.
func windowShape(n *Node, o *TagInfo, x spec.Shape) (spec.Shape, error) {
	op, w := n.Kind.Op, n.Kind.Window
	if w == nil {
		return nil, fieldErrf(AttrKernel, "missing")
	}
	r := len(w.Kernel)
	if r == 0 {
		return nil, fieldErrf(AttrKernel, "needs at least one spatial axis")
	}
	if err := checkInts(AttrKernel, w.Kernel, r, 1); err != nil {
		return nil, err
	}
	if err := checkInts(AttrStride, w.Stride, r, 1); err != nil {
		return nil, err
	}
	pads := w.Padding
	if o.hasAttr(AttrPadding) {
		if err := checkInts(AttrPadding, w.Padding, r, 0); err != nil {
			return nil, err
		}
		pads = append(cloneInts(w.Padding), w.Padding...)
	} else {
		if len(w.Pads) != 2*r {
			return nil, fieldErrf(AttrPads, "%d entries, expected two per spatial axis (%d): every begin, then every end", len(w.Pads), 2*r)
		}
		if err := checkInts(AttrPads, w.Pads, 2*r, 0); err != nil {
			return nil, err
		}
		pads = w.Pads
	}
	if o.hasAttr(AttrDilation) {
		if err := checkInts(AttrDilation, w.Dilation, r, 1); err != nil {
			return nil, err
		}
	}
	if o.hasAttr(AttrOutputPadding) {
		if err := checkInts(AttrOutputPadding, w.OutputPadding, r, 0); err != nil {
			return nil, err
		}
	}
	conv := o.hasAttr(AttrGroups)
	in := []spec.Shape{x}
	if conv {
		for _, f := range []struct {
			name string
			v    int
		}{{AttrGroups, w.Groups}, {AttrInChannels, w.InChannels}, {AttrOutChannels, w.OutChannels}} {
			if f.v < 1 || f.v > MaxAttrInt {
				return nil, fieldErrf(f.name, "%d is outside [1, %d]", f.v, MaxAttrInt)
			}
		}
		if w.InChannels%w.Groups != 0 || w.OutChannels%w.Groups != 0 {
			return nil, fieldErrf(AttrGroups, "groups %d must divide in_channels %d and out_channels %d", w.Groups, w.InChannels, w.OutChannels)
		}
		if len(x) < r+1 {
			return nil, fieldErrf("parents", "%s over %d spatial axes needs an input of rank ≥ %d, got %v", op, r, r+1, x)
		}
		if c := x[len(x)-r-1]; c != w.InChannels {
			return nil, fieldErrf(AttrInChannels, "in_channels %d, but the channel axis %d of the input %v has extent %d", w.InChannels, len(x)-r-1, x, c)
		}
		ws, bs := paramShapes(op, w)
		if _, err := ws.Check(0); err != nil {
			return nil, &Error{Node: -1, Field: AttrKernel, Elem: -1, Err: fmt.Errorf("weight %w", err)}
		}
		in = append(in, ws, bs)
	} else if len(x) < r {
		return nil, fieldErrf("parents", "%s over %d spatial axes needs an input of rank ≥ %d, got %v", op, r, r, x)
	}
	if op != OpConvTranspose {
		for d := 0; d < r; d++ {
			nn, k, pb, pe := x[len(x)-r+d], w.Kernel[d], pads[d], pads[r+d]
			eff := k
			if o.hasAttr(AttrDilation) {
				eff = w.Dilation[d]*(k-1) + 1
			}
			if (op == OpMaxPool || op == OpAvgPool) && pb >= k {
				return nil, fieldErrf(AttrPadding, "padding %d on spatial axis %d must be smaller than the kernel %d", pb, d, k)
			}
			if nn+pb+pe < eff {
				if op == OpConv || op == OpMaxPool || op == OpAvgPool {
					return nil, fieldErrf(AttrKernel, "window %d on spatial axis %d exceeds the padded extent %d", eff, d, nn+pb+pe)
				}
				return nil, fieldErrf(AttrKernel, "window %d on spatial axis %d exceeds the padded extent %d (pads %d + %d)", eff, d, nn+pb+pe, pb, pe)
			}
		}
	}
	field := AttrKernel
	if !o.hasAttr(AttrPadding) {
		field = AttrPads
	}
	return registryShape(o.Prim, primAttrs(n), in, field)
}
