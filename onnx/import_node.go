package onnx

import (
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// nctx is the context of one ONNX node's import: argument access,
// attribute access with the node's error location, and output binding.
type nctx struct {
	b    *imp
	n    *Node
	seen map[string]bool // attributes read or allowed
}

// opImporter imports one ONNX op type.
type opImporter func(c *nctx) error

// importers maps each supported default-domain op type to its importer;
// the package doc's "Importing" section documents each mapping.
var importers = map[string]opImporter{}

func init() {
	for _, t := range []map[string]opImporter{elementwiseOps(), shapeOps(), reduceOps(), nnOps(), foldOps(), reduce2Ops(), transformerOps(), extraOps(), zooOps(), quantizeOps()} {
		for k, v := range t {
			importers[k] = v
		}
	}
}

// SupportedOps lists the default-domain op types the importer maps, sorted.
func SupportedOps() []string {
	m := map[string]bool{}
	for k := range importers {
		m[k] = true
	}
	return sortedKeys(m)
}

// markUsed marks every value the nodes read, those of their subgraphs
// (If branches) included, and every subgraph output.
func markUsed(used map[string]bool, nodes []*Node) {
	for _, n := range nodes {
		if n == nil {
			continue
		}
		for _, in := range n.Inputs {
			used[in] = true
		}
		for _, a := range n.Attrs {
			if a == nil || a.G == nil {
				continue
			}
			markUsed(used, a.G.Nodes)
			for _, o := range a.G.Outputs {
				if o != nil {
					used[o.Name] = true
				}
			}
		}
	}
}

func (b *imp) consumed() map[string]bool {
	if b.used == nil {
		b.used = map[string]bool{}
		markUsed(b.used, b.m.Graph.Nodes)
		for _, o := range b.m.Graph.Outputs {
			if o != nil {
				b.used[o.Name] = true
			}
		}
	}
	return b.used
}

func (b *imp) importNode(n *Node) error {
	c := &nctx{b: b, n: n, seen: map[string]bool{}}
	names := map[string]bool{}
	for i, a := range n.Attrs {
		if a == nil {
			return c.errf(fmt.Sprintf("attribute %d", i), "nil attribute")
		}
		if names[a.Name] {
			return c.errf(fmt.Sprintf("attribute %s", limits.Quote(a.Name)), "given twice")
		}
		names[a.Name] = true
	}
	for i, o := range n.Outputs {
		if o == "" {
			continue
		}
		if _, dup := b.vals[o]; dup {
			return c.errf(fmt.Sprintf("output %d (%s)", i, limits.Quote(o)), "the value is already defined (a graph is in SSA form; this may be a cycle)")
		}
	}
	switch n.Domain {
	case "", "ai.onnx":
	case trainingDomain:
		if n.OpType == "Gradient" {
			return c.gradient()
		}
		return c.errf("op_type", "op %s of domain %s is not supported", limits.Quote(n.OpType), trainingDomain)
	default:
		return c.errf("domain", "domain %s is not supported (only the default domain)", limits.Quote(n.Domain))
	}
	f, ok := importers[n.OpType]
	if !ok {
		return c.errf("op_type", "unknown or unsupported op type %s", limits.Quote(n.OpType))
	}
	if !c.foldIEEE(f) {
		if err := f(c); err != nil {
			return err
		}
	}
	c.propagateKnown()
	for _, a := range n.Attrs {
		if !c.seen[a.Name] {
			return c.errf(fmt.Sprintf("attribute %s", limits.Quote(a.Name)), "not supported for %s at opset %d (it would be ignored)", n.OpType, b.opset)
		}
	}
	return b.checkValueInfo(c)
}

// checkValueInfo compares the shapes the importer inferred for a node's
// outputs with the graph's value_info where it states them: a file whose
// own shape annotations disagree with the operator semantics is refused
// rather than imported with a meaning its writer did not intend.
func (b *imp) checkValueInfo(c *nctx) error {
	if b.info == nil {
		b.info = map[string]*ValueInfo{}
		for _, vi := range b.m.Graph.ValueInfo {
			if vi != nil {
				b.info[vi.Name] = vi
			}
		}
	}
	for i, o := range c.n.Outputs {
		vi, ok := b.info[o]
		v, done := b.vals[o]
		if o == "" || !ok || !done || v.grad {
			continue
		}
		if err := matchDims(vi, v.shape); err != nil {
			return c.errf(fmt.Sprintf("output %d (%s)", i, limits.Quote(o)), "value_info: %v", err)
		}
		if vi.ElemType != Undefined && vi.ElemType.IsFloat() != v.dt.IsFloat() {
			return c.errf(fmt.Sprintf("output %d (%s)", i, limits.Quote(o)), "value_info declares element type %s, the importer computes %s", vi.ElemType, v.dt)
		}
	}
	return nil
}

func (c *nctx) errf(field, format string, args ...any) error {
	return &ImportError{Node: c.n.Where(), Field: field, Err: fmt.Errorf(format, args...)}
}

func (c *nctx) wrap(field string, err error) error {
	var ie *ImportError
	if errors.As(err, &ie) {
		return err
	}
	return &ImportError{Node: c.n.Where(), Field: field, Err: err}
}

func attrField(name string) string { return "attribute " + limits.Quote(name) }

func (c *nctx) inField(i int) string {
	name := ""
	if i < len(c.n.Inputs) {
		name = c.n.Inputs[i]
	}
	return fmt.Sprintf("input %d (%s)", i, limits.Quote(name))
}

// allow marks attributes as understood without reading them (legacy
// hints such as consumed_inputs, or momentum in inference).
func (c *nctx) allow(names ...string) {
	for _, n := range names {
		c.seen[n] = true
	}
}

// arity checks the number of inputs (absent trailing ones included).
func (c *nctx) arity(lo, hi int) error {
	k := len(c.n.Inputs)
	for k > 0 && c.n.Inputs[k-1] == "" {
		k--
	}
	if k < lo || (hi >= 0 && k > hi) {
		if hi == lo {
			return c.errf("input", "%s takes %d inputs, got %d", c.n.OpType, lo, k)
		}
		if hi < 0 {
			return c.errf("input", "%s takes at least %d inputs, got %d", c.n.OpType, lo, k)
		}
		return c.errf("input", "%s takes %d to %d inputs, got %d", c.n.OpType, lo, hi, k)
	}
	return nil
}

// present reports whether optional input i is given.
func (c *nctx) present(i int) bool { return i < len(c.n.Inputs) && c.n.Inputs[i] != "" }

// in returns input i, which must be present.
func (c *nctx) in(i int) (*value, error) {
	if !c.present(i) {
		return nil, c.errf(c.inField(i), "missing")
	}
	v, ok := c.b.vals[c.n.Inputs[i]]
	if !ok {
		return nil, c.errf(c.inField(i), "no earlier node, initializer or graph input produces it")
	}
	if isNarrowType(v.dt) || v.undef != nil {
		if c.n.OpType == "Cast" && i == 0 || c.n.OpType == "CastLike" && i <= 1 {
			return v, nil // minifloat.go
		}
		if c.n.OpType == "QuantizeLinear" && i != 1 || c.n.OpType == "DequantizeLinear" {
			return v, nil // quantize.go
		}
		return nil, c.errf(c.inField(i), "element type %s: only Cast, CastLike, QuantizeLinear (its zero point) and DequantizeLinear read it (the graph computes nothing in it)", v.dt)
	}
	if j, x, ok := firstNonreal(v.nonreal); ok {
		return nil, c.errf(c.inField(i), "holds %v at element %d (an IEEE special value folded at import): only a graph output may hold one, no node computes with it", x, j)
	}
	if v.mask01 && !c.readsMask(i) {
		return nil, c.errf(c.inField(i), "computed from the model's inputs: %s of a comparison of computed data is data-dependent (only a Where's condition reads one)", c.n.OpType)
	}
	// An Identity of a computed integer is an alias (outValue copies
	// truncInt): its elements are the integer's, judged exactly as a graph
	// output or read by a Cast or DequantizeLinear (quantize_computed.go);
	// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice, Gather (its
	// data) and Concat (every input one) move or select its elements and
	// round nothing (ops_shape.go, keepInt), as Clip with constant bounds
	// does (ops_elementwise.go); Max, Min (every input one, or a constant
	// integer), ReduceMax and ReduceMin select one of its elements
	// (quantize_select.go, branch quant38); it is also a Q/DQ zero point
	// (quantize_params.go).
	if v.truncInt && !(i == 0 && (c.n.OpType == "Cast" || c.n.OpType == "CastLike" || c.n.OpType == "DequantizeLinear" || c.n.OpType == "Identity" || intMoves[c.n.OpType] || intSelects[c.n.OpType]) || c.n.OpType == "Concat" || c.n.OpType == "Max" || c.n.OpType == "Min") &&
		!(i == 2 && (c.n.OpType == "QuantizeLinear" || c.n.OpType == "DequantizeLinear")) {
		return nil, c.errf(c.inField(i), "computed from the model's inputs: %s of an integer computed from float data is not imported (only Cast, DequantizeLinear, Identity and the moves Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Slice, Gather, Clip (constant bounds) of it, Max, Min, ReduceMax, ReduceMin of it, a Q/DQ zero point, or a graph output)", c.n.OpType)
	}
	if !(i == 1 && (c.n.OpType == "Gemm" || c.n.OpType == "Conv" || c.n.OpType == "ConvTranspose")) {
		// Every reader but a weight's (which hands the plane to the
		// payload, weightTensor, or reads the rationals through ratTensor)
		// sees the rationals, as before: charged here (exactBudget).
		if err := c.b.exactOf(v); err != nil {
			return nil, c.wrap(c.inField(i), err)
		}
	}
	return v, nil
}

// float returns input i as a float value and its IR node.
func (c *nctx) float(i int) (*value, int, error) {
	v, err := c.in(i)
	if err != nil {
		return nil, 0, err
	}
	if !v.dt.IsFloat() {
		return nil, 0, c.errf(c.inField(i), "element type %s, %s needs a float tensor", v.dt.String(), c.n.OpType)
	}
	id, err := c.b.ir(v)
	if err != nil {
		return nil, 0, c.wrap(c.inField(i), err)
	}
	return v, id, nil
}

// constFloat returns input i, which must be a float constant (an
// initializer, a Constant's output or folded).
func (c *nctx) constFloat(i int) (*value, error) {
	v, err := c.in(i)
	if err != nil {
		return nil, err
	}
	if !v.isK || !v.dt.IsFloat() {
		return nil, c.errf(c.inField(i), "must be a constant float tensor (an initializer or a Constant)")
	}
	return v, nil
}

// constInts returns input i, which must be a constant integer tensor.
func (c *nctx) constInts(i int) (*value, error) {
	v, err := c.in(i)
	if err != nil {
		return nil, err
	}
	if !v.isK || v.isInt() == false {
		return nil, c.errf(c.inField(i), "must be a constant integer tensor (an initializer, a Constant or a bound input); computed shapes are not supported")
	}
	return v, nil
}

// out binds output i to IR node id of the given shape and element type.
func (c *nctx) out(i int, id int, shape spec.Shape, dt DataType) {
	if i >= len(c.n.Outputs) || c.n.Outputs[i] == "" {
		return
	}
	name := c.n.Outputs[i]
	c.b.vals[name] = &value{name: name, shape: shape.Clone(), dt: dt, id: id, init: -1, where: c.n.Where()}
}

// outValue binds output i to a value (an alias, or a folded constant).
func (c *nctx) outValue(i int, v *value) {
	if i >= len(c.n.Outputs) || c.n.Outputs[i] == "" {
		return
	}
	name := c.n.Outputs[i]
	w := *v
	w.name, w.where = name, c.n.Where()
	if v.isK && v.id < 0 {
		w.init = -1 // a copy of a constant materialises on its own…
		if v.init >= 0 {
			c.b.vals[name] = v // …but an alias of an initializer is the initializer
			return
		}
	}
	c.b.vals[name] = &w
}

// outputs checks that at most k outputs are declared, or that the extra
// ones are never used.
// oneOutput is the prologue of an op with lo to hi inputs (hi < 0:
// unbounded) whose only supported output is the first: arity, then
// outputs(1, …).
func (c *nctx) oneOutput(lo, hi int) error {
	if err := c.arity(lo, hi); err != nil {
		return err
	}
	return c.outputs(1, "a second output")
}

// outputUsed reports whether output i is given and consumed.
func (c *nctx) outputUsed(i int) bool {
	return i < len(c.n.Outputs) && c.n.Outputs[i] != "" && c.b.consumed()[c.n.Outputs[i]]
}

func (c *nctx) outputs(k int, what string) error {
	if len(c.n.Outputs) == 0 || c.n.Outputs[0] == "" {
		return c.errf("output 0", "missing")
	}
	used := c.b.consumed()
	for i := k; i < len(c.n.Outputs); i++ {
		if o := c.n.Outputs[i]; o != "" && used[o] {
			return c.errf(fmt.Sprintf("output %d (%s)", i, limits.Quote(o)), "%s is not supported (the output is used)", what)
		}
	}
	return nil
}

func (c *nctx) attr(name string, t AttrType) (*Attribute, error) {
	c.seen[name] = true
	a := c.n.Attr(name)
	if a == nil {
		return nil, nil
	}
	if a.Type != t && a.Type != 0 {
		return nil, c.errf(attrField(name), "attribute of type %s, expected %s", attrTypeName(a.Type), attrTypeName(t))
	}
	return a, nil
}

func attrTypeName(t AttrType) string {
	switch t {
	case AttrFloat:
		return "FLOAT"
	case AttrInt:
		return "INT"
	case AttrString:
		return "STRING"
	case AttrTensor:
		return "TENSOR"
	case AttrGraph:
		return "GRAPH"
	case AttrFloats:
		return "FLOATS"
	case AttrInts:
		return "INTS"
	case AttrStrings:
		return "STRINGS"
	}
	return fmt.Sprintf("type %d", int32(t))
}

// attrInt reads an INT attribute, def when absent.
func (c *nctx) attrInt(name string, def int64) (int64, error) {
	a, err := c.attr(name, AttrInt)
	if a == nil || err != nil {
		return def, err
	}
	return a.I, nil
}

// attrBool reads an INT attribute that must be 0 or 1.
func (c *nctx) attrBool(name string, def bool) (bool, error) {
	d := int64(0)
	if def {
		d = 1
	}
	v, err := c.attrInt(name, d)
	if err != nil {
		return false, err
	}
	if v != 0 && v != 1 {
		return false, c.errf(attrField(name), "%d, expected 0 or 1", v)
	}
	return v == 1, nil
}

// attrRat reads a FLOAT attribute as the exact value of the float32.
func (c *nctx) attrRat(name string, def float32) (spec.Rat, error) {
	a, err := c.attr(name, AttrFloat)
	if err != nil {
		return spec.Rat{}, err
	}
	f := def
	if a != nil {
		f = a.F
	}
	r, err := ratOf(f)
	if err != nil {
		return spec.Rat{}, c.errf(attrField(name), "%v", err)
	}
	return r, nil
}

// attrInts reads an INTS attribute; ok is false when it is absent.
func (c *nctx) attrInts(name string) (xs []int64, ok bool, err error) {
	a, err := c.attr(name, AttrInts)
	if a == nil || err != nil {
		return nil, false, err
	}
	return a.Ints, true, nil
}

// attrString reads a STRING attribute, def when absent.
func (c *nctx) attrString(name, def string) (string, error) {
	a, err := c.attr(name, AttrString)
	if a == nil || err != nil {
		return def, err
	}
	return string(a.S), nil
}

// forbidAfter refuses an attribute an opset has removed, or marks it read.
func (c *nctx) legacy(name string, before int64) error {
	if c.n.Attr(name) == nil {
		return nil
	}
	if c.b.opset >= before {
		return c.errf(attrField(name), "not an attribute of %s at opset %d", c.n.OpType, c.b.opset)
	}
	c.seen[name] = true
	return nil
}

// ints64 converts int64s to ints, each within [lo, hi].
func (c *nctx) toInts(field string, xs []int64, lo, hi int64) ([]int, error) {
	out := make([]int, len(xs))
	for i, x := range xs {
		if x < lo || x > hi {
			return nil, c.errf(field, "entry %d is %d, outside [%d, %d]", i, x, lo, hi)
		}
		out[i] = int(x)
	}
	return out, nil
}

// gradient records a Gradient node (ai.onnx.preview.training).
func (c *nctx) gradient() error {
	a, err := c.attr("xs", AttrStrings)
	if err != nil {
		return err
	}
	if a == nil || len(a.Strings) == 0 {
		return c.errf(attrField("xs"), "missing")
	}
	y, err := c.attrString("y", "")
	if err != nil {
		return err
	}
	if y == "" {
		return c.errf(attrField("y"), "missing")
	}
	c.seen["zs"] = true
	if c.n.Attr("zs") != nil {
		return c.errf(attrField("zs"), "not supported")
	}
	gs := GradientSpec{Node: c.n.Where(), Of: y}
	if len(c.n.Outputs) != len(a.Strings) {
		return c.errf("output", "%d outputs for %d xs", len(c.n.Outputs), len(a.Strings))
	}
	for j, s := range a.Strings {
		x := string(s)
		k := -1
		for i, in := range c.b.im.Inputs {
			if in.Name == x {
				k = i
			}
		}
		if k < 0 {
			return c.errf(attrField("xs"), "entry %d (%s) is not a float graph input", j, limits.Quote(x))
		}
		gs.WRT = append(gs.WRT, x)
		gs.WRTInputs = append(gs.WRTInputs, k)
	}
	for i, o := range c.n.Outputs {
		if o == "" {
			return c.errf(fmt.Sprintf("output %d", i), "missing")
		}
		in := c.b.im.Inputs[gs.WRTInputs[i]]
		c.b.vals[o] = &value{name: o, shape: in.Shape.Clone(), dt: in.DataType, id: -1, init: -1, grad: true, where: c.n.Where()}
		gs.Outputs = append(gs.Outputs, o)
		gs.OutputIndex = append(gs.OutputIndex, -1)
	}
	for _, a := range c.n.Attrs {
		if !c.seen[a.Name] {
			return c.errf(attrField(a.Name), "not supported for Gradient")
		}
	}
	c.b.im.Gradients = append(c.b.im.Gradients, gs)
	return nil
}

// intMoves are the ops that read a computed integer (value.truncInt) as
// data (input 0) and only move or select its elements (keepInt; Clip
// selects x or a constant integer bound).
var intMoves = map[string]bool{"Reshape": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true,
	"Transpose": true, "Slice": true, "Gather": true, "Clip": true}

// intSelects are the reductions that read a computed integer as input 0
// and select one of its elements (quantize_select.go).
var intSelects = map[string]bool{"ReduceMax": true, "ReduceMin": true}
