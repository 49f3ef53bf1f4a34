package onnx

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// trainingDomain is the domain of the Gradient operator.
const trainingDomain = "ai.onnx.preview.training"

// value is one ONNX value during import: its static shape and element
// type, and either the IR node computing it (id ≥ 0) or, for a
// compile-time constant (initializer, Constant, bound input, folded shape
// arithmetic), its exact elements, materialised as a const node on first
// use as data.
type value struct {
	name  string
	shape spec.Shape
	dt    DataType
	id    int        // IR node id, -1 while not materialised
	rats  []spec.Rat // float constant: exact elements (row-major); nil while plane holds them
	// plane holds a float initializer's elements as decoded (binary32 for
	// FLOAT, FLOAT16, BFLOAT16; binary64 for DOUBLE), every one finite,
	// until a reader needs the rationals (exact, which derives rats from
	// it): a linear or conv weight never does (weightTensor hands the
	// plane to the payload), so its 32-byte spec.Rat a weight is never made.
	plane *irsem.Plane
	// bud is the import's onnx-value-bytes account that exact charges
	// when it converts plane (exactBudget); nil for a value without one.
	bud  *exactBudget
	ints []int64 // integer constant: elements
	isK  bool    // a compile-time constant
	init int     // index into Imported.Initializers, -1 otherwise
	grad bool    // an output of a Gradient node (no IR value)
	// ninf marks the elements that are −∞ (nil when none): an additive
	// attention mask. rats (or the IR node) hold 0 there; see irFinite.
	ninf []bool
	// known is the value's elements in every evaluation on the recorded
	// inputs, for a computed value that ops which never round derive from
	// constants and recorded inputs (known.go); nil otherwise.
	known *value
	// nonreal holds the elements of a float constant whose value is NaN
	// or ±∞ in every IEEE 754 evaluation (ONNX's identity of an empty
	// ReduceMax, the fmod of an infinity), by row-major index; rats hold 0
	// there. No node reads such a value (nctx.in refuses it, naming the
	// element): only a graph output holds it, judged by the special
	// (Imported.Analyze), the IR computing its finite part.
	nonreal map[int]float64
	// approx encloses each element of constant arithmetic (fold_ieee.go)
	// that has no IR node until lazy gives it one (nil otherwise).
	approx *approxK
	lazy   func() (int, error)
	noIR   string // why a value with known elements has no IR node ("" otherwise)
	where  string // the ONNX node that produced it ("" for graph inputs, initializers)
	input  bool   // a float graph input
	// mask01: a comparison of computed data, the IR 0/1 mask that only a
	// Where consumes (import_datacmp.go).
	mask01 bool
	// truncInt: an integer value computed from float data, the IR node of
	// a trunc_int (import_cast.go), which only a Cast or a graph output
	// reads.
	truncInt bool
	// undef marks the elements of a cast into a float 8, float 4 or
	// sub-byte integer type (minifloat.go) that ONNX leaves undefined (nil
	// when none): a graph output's recorded value there is not judged.
	undef []bool
	// castExact: a float constant a cast of minifloat.go made; as a graph
	// output it is compared exactly (Imported.Exact), NaN and ±∞ included.
	castExact bool
}

func (v *value) isInt() bool { return !v.dt.IsFloat() }

// imp is the state of one import.
type imp struct {
	m      *Model
	o      Options
	path   string
	opset  int64
	nodes  []irsem.Node
	pay    map[int]*irsem.Params
	origin []string
	vals   map[string]*value
	im     *Imported
	where  string                // Where() of the ONNX node being imported
	outID  int                   // the IR output node
	used   map[string]bool       // value names consumed by a node or a graph output
	info   map[string]*ValueInfo // the graph's value_info by name
	params map[string]int        // symbolic input dimensions bound from Options.Shapes
	bud    *exactBudget          // onnx-value-bytes: the decoded values and the exact values made of them
}

func importModel(m *Model, o Options, path string) (im *Imported, err error) {
	b := &imp{m: m, o: o, path: path, pay: map[int]*irsem.Params{}, vals: map[string]*value{}}
	defer func() {
		if e, ok := err.(*ImportError); ok && e.Path == "" && path != "" {
			e.Path = path
		}
	}()
	if m == nil || m.Graph == nil {
		return nil, &ImportError{Err: errors.New("the model has no graph")}
	}
	for _, op := range m.Opsets {
		if op.Domain != "" && op.Domain != "ai.onnx" && op.Domain != trainingDomain {
			return nil, &ImportError{Field: "opset_import", Err: fmt.Errorf("domain %s is not supported (only the default domain and %s)", limits.Quote(op.Domain), trainingDomain)}
		}
	}
	v, ok := m.Opset("")
	if !ok {
		return nil, &ImportError{Field: "opset_import", Err: errors.New("no opset of the default domain")}
	}
	if v < 1 || v > maxOpset {
		return nil, &ImportError{Field: "opset_import", Err: fmt.Errorf("default-domain opset %d is not supported (1…%d)", v, maxOpset)}
	}
	b.opset = v
	b.im = &Imported{Opset: v}
	if b.bud, err = newExactBudget(m); err != nil {
		return nil, &ImportError{Err: err}
	}
	if err := b.initializers(); err != nil {
		return nil, err
	}
	if err := b.inputs(); err != nil {
		return nil, err
	}
	for _, n := range m.Graph.Nodes {
		if err := b.importFlat(n); err != nil {
			return nil, err
		}
		if err := b.bud.check(n.Where()); err != nil {
			return nil, err
		}
	}
	b.where = ""
	if err := b.outputs(); err != nil {
		return nil, err
	}
	if err := b.bud.check(""); err != nil {
		return nil, err
	}
	return b.finish()
}

// maxOpset is the newest default-domain opset whose semantics the
// importer implements. An opset that does not re-version an op leaves its
// semantics unchanged (the ONNX versioning rule), so the newer opsets are
// admitted after checking the ops the importer maps that they re-version
// (onnx 1.23.2's schemas, opsets 22–28): opset 22 only widened types to
// bfloat16; 23 added Attention, RMSNormalization and RotaryEmbedding
// (imported) and 4-bit types; 24 and 25 re-versioned Cast, CastLike,
// Constant, ConstantOfShape, Flatten, Identity, Pad, Reshape, Shape, Size,
// Squeeze, Transpose and Unsqueeze for new element types only (refused as
// types), and Attention for the nonpad_kv_seqlen input (refused: Attention
// takes at most six inputs here); 27 gave Range a stash_type attribute for
// float16/bfloat16 (read and ignored: the importer computes exactly); 28
// let Mod with fmod = 0 take floats (A − floor(A/B)·B, the formula the
// importer folds), gave Cast float8 saturation rules (refused types) and
// re-versioned Einsum, ReduceLogSum and ReduceLogSumExp with unchanged
// text (bfloat16 added for Einsum).
const maxOpset = 28

func (b *imp) errf(field, format string, args ...any) error {
	return &ImportError{Node: b.where, Field: field, Err: fmt.Errorf(format, args...)}
}

func (b *imp) initializers() error {
	seen := map[string]bool{}
	for i, t := range b.m.Graph.Initializers {
		if t == nil {
			return &ImportError{Field: fmt.Sprintf("initializer %d", i), Err: errors.New("nil tensor")}
		}
		field := fmt.Sprintf("initializer %q", t.Name)
		if t.Name == "" {
			return &ImportError{Field: fmt.Sprintf("initializer %d", i), Err: errors.New("has no name")}
		}
		if seen[t.Name] {
			return &ImportError{Field: field, Err: errors.New("defined twice")}
		}
		seen[t.Name] = true
		v, err := tensorValue(t, b.bud)
		if err != nil {
			return &ImportError{Field: field, Err: err}
		}
		v.init = len(b.im.Initializers)
		b.im.Initializers = append(b.im.Initializers, InitRef{Name: t.Name, Shape: v.shape.Clone()})
		b.vals[t.Name] = v
	}
	return nil
}

// tensorValue makes a constant value of a tensor: exact rationals for a
// float tensor (held as its decoded plane until a reader needs them, when
// every element is finite; else converted now, charged to bud first),
// integers for an integer one.
func tensorValue(t *Tensor, bud *exactBudget) (*value, error) {
	s, err := dimsShape(t.Dims)
	if err != nil {
		return nil, err
	}
	v := &value{name: t.Name, shape: s, dt: t.DataType, id: -1, isK: true, init: -1}
	switch {
	case t.DataType.IsFloat():
		if pl, ok := floatPlane(t, s); ok {
			v.plane, v.bud = pl, bud
			break
		}
		if err := bud.charge(t.Len(), t.Name); err != nil {
			return nil, err
		}
		rs, ninf, err := tensorRatsNinf(t)
		if err != nil {
			return nil, err
		}
		v.ninf = ninf
		if len(rs) != s.Size() {
			return nil, fmt.Errorf("shape %v needs %d values, the tensor holds %d", s, s.Size(), len(rs))
		}
		v.rats = rs
	case t.DataType.IsMini():
		if err := bud.charge(t.Len(), t.Name); err != nil {
			return nil, err
		}
		if err := miniTensorValue(t, v); err != nil {
			return nil, err
		}
	case t.DataType == Int64 || t.DataType == Int32 || t.DataType == Int16 || t.DataType == Int8 ||
		t.DataType == Uint8 || t.DataType == Uint16 || t.DataType == Uint32 || t.DataType == Uint64 || t.DataType == Bool ||
		t.DataType.IsSubByteInt():
		var xs []int64
		if t.Int64 != nil {
			xs = append([]int64(nil), t.Int64...)
			for i, x := range xs {
				if t.DataType == Uint64 && x < 0 {
					return nil, fmt.Errorf("element %d is %d: a UINT64 of 2^63 or more is beyond the importer's int64 values", i, t.Uint64At(i))
				}
			}
		} else {
			xs = make([]int64, len(t.Int32))
			for i, x := range t.Int32 {
				xs[i] = int64(x)
			}
		}
		if len(xs) != s.Size() {
			return nil, fmt.Errorf("shape %v needs %d values, the tensor holds %d", s, s.Size(), len(xs))
		}
		v.ints = xs
	default:
		return nil, fmt.Errorf("element type %s is not supported", t.DataType.String())
	}
	return v, nil
}

func (b *imp) inputs() error {
	ins := RuntimeInputs(b.m)
	type fin struct {
		v  *value
		io IOValue
	}
	var fl []fin
	for k, vi := range ins {
		field := fmt.Sprintf("graph input %q", vi.Name)
		if vi.Name == "" {
			return &ImportError{Field: fmt.Sprintf("graph input %d", k), Err: errors.New("has no name")}
		}
		if _, dup := b.vals[vi.Name]; dup {
			return &ImportError{Field: field, Err: errors.New("defined twice")}
		}
		if vi.ElemType.IsFloat() {
			if _, ok := b.o.Bind[vi.Name]; ok {
				return &ImportError{Field: field, Err: errors.New("a float input cannot be bound (Options.Bind is for integer inputs)")}
			}
			s, err := b.inputShape(vi)
			if err != nil {
				return err
			}
			v := &value{name: vi.Name, shape: s, dt: vi.ElemType, id: -1, init: -1, input: true}
			b.vals[vi.Name] = v
			fl = append(fl, fin{v, IOValue{Name: vi.Name, Index: k, Shape: s.Clone(), DataType: vi.ElemType}})
			continue
		}
		t, ok := b.o.Bind[vi.Name]
		if !ok || t == nil {
			return &ImportError{Field: field, Err: fmt.Errorf("an input of element type %s must be bound at import (Options.Bind)", vi.ElemType.String())}
		}
		if t.DataType.IsFloat() || (t.DataType != vi.ElemType && !(isIndexType(t.DataType) && isIndexType(vi.ElemType))) {
			return &ImportError{Field: field, Err: fmt.Errorf("bound tensor of element type %s, the input is %s", t.DataType.String(), vi.ElemType.String())}
		}
		v, err := tensorValue(t, b.bud)
		if err != nil {
			return &ImportError{Field: field, Err: err}
		}
		if err := matchDims(vi, v.shape); err != nil {
			return &ImportError{Field: field, Err: err}
		}
		v.name = vi.Name
		b.vals[vi.Name] = v
	}
	bound := map[string]bool{}
	for k := range b.o.Bind {
		bound[k] = true
	}
	for _, vi := range ins {
		delete(bound, vi.Name)
	}
	if extra := sortedKeys(bound); len(extra) > 0 {
		return &ImportError{Field: fmt.Sprintf("Options.Bind %q", extra[0]), Err: errors.New("the model has no runtime input of that name")}
	}
	// The IR input.
	switch len(fl) {
	case 0:
		b.emitRaw(irsem.Kind{Op: irsem.OpInput}, spec.Shape{0}, nil, "")
	case 1:
		fl[0].v.id = b.emitRaw(irsem.Kind{Op: irsem.OpInput}, fl[0].v.shape, nil, "")
		b.im.Inputs = []IOValue{fl[0].io}
	default:
		total := 0
		for _, f := range fl {
			total += f.v.shape.Size()
		}
		if _, err := (spec.Shape{total}).Check(0); err != nil {
			return &ImportError{Field: "graph inputs", Err: err}
		}
		in := b.emitRaw(irsem.Kind{Op: irsem.OpInput}, spec.Shape{total}, nil, "")
		off := 0
		for i := range fl {
			f := &fl[i]
			n := f.v.shape.Size()
			id, err := b.slice(in, spec.Shape{total}, 0, off, off+n)
			if err != nil {
				return &ImportError{Field: fmt.Sprintf("graph input %q", f.v.name), Err: err}
			}
			f.v.id = b.reshape(id, spec.Shape{n}, f.v.shape)
			f.io.Offset = off
			off += n
			b.im.Inputs = append(b.im.Inputs, f.io)
		}
	}
	return nil
}

func isIndexType(d DataType) bool { return d == Int64 || d == Int32 }

// inputShape is a float input's static shape: its ValueInfo's extents,
// symbolic or missing ones taken from Options.Shapes.
func (b *imp) inputShape(vi *ValueInfo) (spec.Shape, error) {
	field := fmt.Sprintf("graph input %q", vi.Name)
	given, hasGiven := b.o.Shapes[vi.Name]
	if !vi.HasShape {
		if !hasGiven {
			return nil, &ImportError{Field: field, Err: errors.New("has no shape in the model; give it (Options.Shapes)")}
		}
		if _, err := given.Check(0); err != nil {
			return nil, &ImportError{Field: field, Err: err}
		}
		return given.Clone(), nil
	}
	s := make(spec.Shape, len(vi.Shape))
	for i, d := range vi.Shape {
		switch {
		case d.Known():
			if d.Value > int64(spec.DefaultMaxElements) {
				return nil, &ImportError{Field: field, Err: fmt.Errorf("dimension %d is %d", i, d.Value)}
			}
			s[i] = int(d.Value)
		case hasGiven:
			if len(given) != len(vi.Shape) {
				return nil, &ImportError{Field: field, Err: fmt.Errorf("given shape %v has rank %d, the model's input has rank %d", given, len(given), len(vi.Shape))}
			}
			s[i] = given[i]
			if d.Param != "" {
				if b.params == nil {
					b.params = map[string]int{}
				}
				if v, seen := b.params[d.Param]; seen && v != s[i] {
					return nil, &ImportError{Field: field, Err: fmt.Errorf("dimension %d (%s) is %d, another input binds %s to %d", i, limits.Quote(d.Param), s[i], limits.Quote(d.Param), v)}
				}
				b.params[d.Param] = s[i]
			}
		default:
			if d.Param == "" {
				return nil, &ImportError{Field: field, Err: fmt.Errorf("dimension %d is unknown; give the input's shape (Options.Shapes)", i)}
			}
			return nil, &ImportError{Field: field, Err: fmt.Errorf("dimension %d is symbolic (%s); give the input's shape (Options.Shapes)", i, limits.Quote(d.Param))}
		}
	}
	if hasGiven && !given.Equal(s) {
		return nil, &ImportError{Field: field, Err: fmt.Errorf("given shape %v differs from the graph's input shape %v", given, dimsString(vi.Shape))}
	}
	if _, err := s.Check(0); err != nil {
		return nil, &ImportError{Field: field, Err: err}
	}
	return s, nil
}

func dimsString(ds []Dim) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		if d.Param != "" {
			parts[i] = d.Param
		} else {
			parts[i] = fmt.Sprint(d.Value)
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// matchDims checks a shape against a ValueInfo's fixed extents.
func matchDims(vi *ValueInfo, s spec.Shape) error {
	if vi == nil || !vi.HasShape {
		return nil
	}
	if len(vi.Shape) != len(s) {
		return fmt.Errorf("shape %v, the graph declares %s", s, dimsString(vi.Shape))
	}
	for i, d := range vi.Shape {
		if d.Known() && d.Value != int64(s[i]) {
			return fmt.Errorf("shape %v, the graph declares %s", s, dimsString(vi.Shape))
		}
	}
	return nil
}

func (b *imp) outputs() error {
	g := b.m.Graph
	var outs []*value
	var idx []int
	for k, vi := range g.Outputs {
		if vi == nil {
			return &ImportError{Field: fmt.Sprintf("graph output %d", k), Err: errors.New("nil")}
		}
		field := fmt.Sprintf("graph output %q", vi.Name)
		v, ok := b.vals[vi.Name]
		if !ok {
			return &ImportError{Field: field, Err: errors.New("no node, initializer or input produces it")}
		}
		if v.grad {
			for gi := range b.im.Gradients {
				gs := &b.im.Gradients[gi]
				for j, o := range gs.Outputs {
					if o == vi.Name {
						gs.OutputIndex[j] = k
					}
				}
			}
			continue
		}
		if !v.dt.IsFloat() && v.isK && v.ints != nil {
			if err := matchDims(vi, v.shape); err != nil {
				return &ImportError{Node: v.where, Field: field, Err: err}
			}
			b.im.Exact = append(b.im.Exact, ExactOutput{Name: vi.Name, Index: k, Shape: v.shape.Clone(), DataType: v.dt, Values: append([]int64(nil), v.ints...),
				Undefined: v.undef})
			continue
		}
		if (v.dt.IsMini() || v.castExact) && v.isK && v.ints == nil {
			if err := matchDims(vi, v.shape); err != nil {
				return &ImportError{Node: v.where, Field: field, Err: err}
			}
			b.im.Exact = append(b.im.Exact, miniExact(vi.Name, k, v))
			continue
		}
		if !v.dt.IsFloat() && !v.truncInt {
			return &ImportError{Field: field, Err: fmt.Errorf("element type %s: only float outputs and integer or boolean outputs decided at import (constants) can be imported; this one is computed from the float inputs", v.dt.String())}
		}
		if vi.ElemType != 0 && !vi.ElemType.IsFloat() && vi.ElemType != v.dt {
			return &ImportError{Field: field, Err: fmt.Errorf("declared element type %s: only float outputs can be imported", vi.ElemType.String())}
		}
		if err := matchDims(vi, v.shape); err != nil {
			return &ImportError{Node: v.where, Field: field, Err: err}
		}
		outs = append(outs, v)
		idx = append(idx, k)
	}
	if len(outs) == 0 && len(b.im.Exact) == 0 {
		return &ImportError{Field: "graph outputs", Err: errors.New("the graph has no float output to import")}
	}
	out := -1
	if len(outs) == 0 {
		// Only exact outputs: the IR computes nothing; its output is its
		// input.
		out = 0
	} else if len(outs) == 1 {
		id, err := b.irOut(outs[0])
		if err != nil {
			return err
		}
		out = id
		b.im.Outputs = []IOValue{{Name: outs[0].name, Index: idx[0], Shape: outs[0].shape.Clone(), DataType: outs[0].dt}}
	} else {
		var parts []int
		off := 0
		for i, v := range outs {
			id, err := b.irOut(v)
			if err != nil {
				return err
			}
			n := v.shape.Size()
			parts = append(parts, b.reshape(id, v.shape, spec.Shape{n}))
			b.im.Outputs = append(b.im.Outputs, IOValue{Name: v.name, Index: idx[i], Shape: v.shape.Clone(), DataType: v.dt, Offset: off})
			off += n
		}
		out = b.emitRaw(irsem.Kind{Op: irsem.OpConcat}, spec.Shape{off}, parts, "")
	}
	for gi := range b.im.Gradients {
		gs := &b.im.Gradients[gi]
		gs.OfOutput = -1
		for i, o := range b.im.Outputs {
			if o.Name == gs.Of {
				gs.OfOutput = i
			}
		}
		if gs.OfOutput < 0 {
			return &ImportError{Node: gs.Node, Field: `attribute "y"`, Err: fmt.Errorf("%q is not a float graph output (the gradient of a graph output only)", gs.Of)}
		}
	}
	b.outID = out
	return nil
}

func (b *imp) finish() (*Imported, error) {
	g := &irsem.Graph{InputID: 0, OutputID: b.outID, Nodes: b.nodes}
	p := &irsem.Payload{Entries: b.pay}
	if err := g.Check(); err != nil {
		return nil, b.irError(err)
	}
	if err := irsem.CheckPayload(g, p); err != nil {
		return nil, b.irError(err)
	}
	b.im.Graph, b.im.Payload, b.im.Origin = g, p, b.origin
	b.im.shapes = make(map[string]spec.Shape, len(b.vals))
	b.im.dtypes = make(map[string]DataType, len(b.vals))
	seen := map[DataType]bool{}
	for name, v := range b.vals {
		if !v.grad {
			b.im.shapes[name] = v.shape
			b.im.dtypes[name] = v.dt
		}
		if v.where != "" && !v.isK && !v.grad && v.dt.IsFloat() && (v.lazy == nil || v.id >= 0) {
			seen[v.dt] = true // (an enclosed value never used as IR data computes nothing)
		}
		if v.where != "" && v.isK && v.dt.IsFloat() {
			if b.im.consts == nil {
				b.im.consts = map[string]map[int]float64{}
			}
			b.im.consts[name] = v.nonreal // nil: every element a real
		}
	}
	for _, dt := range []DataType{Float, Float16, Double, BFloat16} {
		if seen[dt] {
			b.im.Computed = append(b.im.Computed, dt)
		}
	}
	b.im.Types = b.nodeTypes()
	return b.im, nil
}

// nodeTypes is Imported.Types: per IR node, the float types of its
// evidence — the values bound to the node (an alias through a widening
// Cast adds the wider type, so a node read as both is not DOUBLE alone),
// every float value its ONNX node (origin) produces, and for the IR input
// the float graph inputs — the one type when there is one, else 0. An
// ONNX node's IR nodes all compute in its type: the ONNX type rules give
// a node's float operands and results one type (T), a Cast excepted,
// whose narrowing IR node (round_f32) yields its output's type and whose
// widening makes no node.
func (b *imp) nodeTypes() []DataType {
	byOrigin := map[string]DataType{}
	note := func(m map[string]DataType, k string, dt DataType) {
		if old, ok := m[k]; ok && old != dt {
			m[k] = 0 // several types
			return
		}
		m[k] = dt
	}
	types := make([]DataType, len(b.nodes))
	seen := make([]bool, len(b.nodes))
	mark := func(id int, dt DataType) {
		if id < 0 || id >= len(types) {
			return
		}
		switch {
		case !seen[id]:
			types[id], seen[id] = dt, true
		case types[id] != dt:
			types[id] = 0
		}
	}
	for _, v := range b.vals {
		if v.grad || !v.dt.IsFloat() {
			continue
		}
		if v.where != "" {
			note(byOrigin, v.where, v.dt)
		}
		mark(v.id, v.dt)
	}
	for _, in := range b.im.Inputs {
		if in.DataType.IsFloat() {
			mark(0, in.DataType)
		}
	}
	for id, o := range b.origin {
		if o == "" {
			continue
		}
		dt, ok := byOrigin[o]
		if !ok {
			types[id] = 0 // no float value: not known to be one type
			seen[id] = true
			continue
		}
		mark(id, dt)
	}
	return types
}

// irError attributes an irsem check failure (a bug of the mapping, or an
// input the IR's own checks refuse) to the ONNX node it came from.
func (b *imp) irError(err error) error {
	var e *irsem.Error
	if errors.As(err, &e) && e.Node >= 0 && e.Node < len(b.origin) {
		return &ImportError{Node: b.origin[e.Node], Field: "IR", Err: err}
	}
	return &ImportError{Field: "IR", Err: err}
}

// emitRaw appends an IR node and returns its id.
func (b *imp) emitRaw(k irsem.Kind, shape spec.Shape, parents []int, origin string) int {
	id := len(b.nodes)
	b.nodes = append(b.nodes, irsem.Node{ID: id, Parents: append([]int(nil), parents...), Kind: k, Shape: shape.Clone()})
	b.origin = append(b.origin, origin)
	return id
}

// emit appends an IR node for the ONNX node being imported.
func (b *imp) emit(k irsem.Kind, shape spec.Shape, parents ...int) int {
	return b.emitRaw(k, shape, parents, b.where)
}

// emitP appends an IR node with a payload entry.
func (b *imp) emitP(k irsem.Kind, shape spec.Shape, p *irsem.Params, parents ...int) int {
	id := b.emit(k, shape, parents...)
	b.pay[id] = p
	return id
}

// use records that payload field of node id holds initializer v's value.
func (b *imp) use(v *value, id int, field string) {
	if v != nil && v.init >= 0 {
		r := &b.im.Initializers[v.init]
		r.Uses = append(r.Uses, ParamUse{Node: id, Field: field})
	}
}

// floatPlane is t's elements as an irsem.Plane, when t is a FLOAT,
// FLOAT16, BFLOAT16 or DOUBLE tensor of s.Size() elements all finite;
// ok is false otherwise (then tensorRatsNinf decides: −∞ as a mask, NaN
// and +∞ refused, a size mismatch refused — as before). The decoded slice
// is shared, not copied (a decoded tensor is read-only).
func floatPlane(t *Tensor, s spec.Shape) (*irsem.Plane, bool) {
	var pl *irsem.Plane
	var err error
	switch {
	case t.DataType == Double && t.Float64 != nil:
		pl, err = irsem.NewPlane64(s, t.Float64[:len(t.Float64):len(t.Float64)])
	case t.DataType != Double && t.Float32 != nil:
		pl, err = irsem.NewPlane32(s, t.Float32[:len(t.Float32):len(t.Float32)])
	default:
		return nil, false
	}
	return pl, err == nil && pl.Len() > 0
}

// exact returns v's rationals, deriving them from v.plane the first time
// a reader needs them (then kept in v.rats, as an eagerly converted value
// holds them; the plane is dropped from v).
//
// The conversion is charged to v.bud (exactBudget.note); a reader that can
// refuse converts through imp.exactOf instead, which charges first.
func (v *value) exact() []spec.Rat {
	if v.rats == nil && v.plane != nil {
		v.bud.note(v.plane.Len(), v.name)
		v.rats = v.plane.Rats().Data
		v.plane = nil
	}
	return v.rats
}

// weightTensor sets p's W to v's value: v's plane when it still has one
// (no rationals made), else its rationals (ratTensor).
func weightTensor(p *irsem.Params, v *value, shape spec.Shape) {
	if v.rats == nil && v.plane != nil && v.plane.Shape().Equal(shape) {
		p.SetWeightPlane(v.plane)
		return
	}
	p.W = ratTensor(v, shape)
}

// ratTensor is a float constant's value as a payload tensor. Its
// elements are v's own rationals, not a copy: a payload and the
// importer's values are read-only once built (no importer step writes
// into a value's rats after making it, and a spec.Rat is immutable), and
// a copy doubled the importer's peak memory on a large model (32 bytes
// per weight: 1.95 GB more for AlexNet's 61 M weights).
func ratTensor(v *value, shape spec.Shape) *irsem.RatTensor {
	t := irsem.RatTensor{Shape: shape.Clone()}
	if len(v.exact()) > 0 { // an empty value stays nil, as the copy made it
		t.Data = v.rats[:len(v.rats):len(v.rats)]
	}
	return &t
}

// ir returns the IR node computing v, materialising a float constant as
// a const node (one per constant, shared by all its uses).
func (b *imp) ir(v *value) (int, error) {
	if i := firstTrue(v.ninf); i >= 0 {
		return 0, b.errf("", "%q holds −∞ (element %d): a −∞ value is imported only as an additive mask (Add, Where) that a Softmax over the last axis consumes", v.name, i)
	}
	return b.irFinite(v)
}

// irOut is ir for a graph output: a constant holding NaN or ±∞ decided
// at import (value.nonreal) is materialised with 0 there, the elements
// judged by their specials (Imported.Analyze), never by the IR.
//
// A value holding −∞ where an additive mask blocks (value.ninf) is
// materialised as its finite part too: its −∞ elements (scores plus the
// mask) are −∞ wherever the runtime's finite part is finite (a
// constant's always), which Analyze marks (Special.Masked) and compare
// decides only where the finite part's bound is finite.
func (b *imp) irOut(v *value) (int, error) {
	if v.nonreal != nil || firstTrue(v.ninf) >= 0 {
		if firstTrue(v.ninf) >= 0 {
			if b.im.masked == nil {
				b.im.masked = map[string][]bool{}
			}
			b.im.masked[v.name] = v.ninf
		}
		return b.irFinite(v)
	}
	return b.ir(v)
}

// irFinite is ir without the −∞ check: the IR node of v's finite part
// (0 at the elements ninf marks).
func (b *imp) irFinite(v *value) (int, error) {
	if v.id >= 0 {
		return v.id, nil
	}
	if v.lazy != nil {
		id, err := v.lazy()
		if err != nil {
			return 0, err
		}
		v.id = id
		return id, nil
	}
	if v.grad {
		return 0, b.errf("", "%q is an output of a Gradient node, which the IR does not compute", v.name)
	}
	if v.noIR != "" {
		return 0, b.errf("", "%q: %s", v.name, v.noIR)
	}
	if !v.isK {
		return 0, b.errf("", "value %q has no IR node (internal error)", v.name)
	}
	if v.isInt() {
		return 0, b.errf("", "integer tensor %q is used as float data (only as shapes, axes, indices)", v.name)
	}
	where := v.where // "" for an initializer: its const node belongs to no one ONNX node
	if err := b.exactOf(v); err != nil {
		return 0, &ImportError{Node: b.where, Field: fmt.Sprintf("%q", v.name), Err: err}
	}
	id := b.emitRaw(irsem.Kind{Op: irsem.OpConst, ValueShape: v.shape.Clone()}, v.shape, nil, where)
	b.pay[id] = &irsem.Params{Value: ratTensor(v, v.shape)}
	b.use(v, id, irsem.ParamValue)
	v.id = id
	return id, nil
}

// constScalar emits a const node holding r, broadcast to shape.
func (b *imp) constScalar(r spec.Rat, shape spec.Shape) int {
	t := irsem.RatTensor{Shape: spec.Shape{}, Data: []spec.Rat{r}}
	id := b.emitP(irsem.Kind{Op: irsem.OpConst}, spec.Shape{}, &irsem.Params{Value: &t})
	return b.broadcast(id, spec.Shape{}, shape)
}

// broadcast emits broadcast_to from → to unless the shapes are equal.
func (b *imp) broadcast(id int, from, to spec.Shape) int {
	if from.Equal(to) {
		return id
	}
	return b.emit(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: from.Clone(), ToShape: to.Clone()}, to, id)
}

// reshape emits reshape from → to unless the shapes are equal.
func (b *imp) reshape(id int, from, to spec.Shape) int {
	if from.Equal(to) {
		return id
	}
	return b.emitRaw(irsem.Kind{Op: irsem.OpReshape, InShape: from.Clone(), OutShape: to.Clone()}, to, []int{id}, b.where)
}

// broadcastShapes is ONNX's multidirectional (numpy) broadcast of shapes.
func broadcastShapes(ss ...spec.Shape) (spec.Shape, error) {
	r := 0
	for _, s := range ss {
		r = max(r, len(s))
	}
	out := make(spec.Shape, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range ss {
		off := r - len(s)
		for i, d := range s {
			o := &out[off+i]
			switch {
			case d == *o || d == 1:
			case *o == 1:
				*o = d
			default:
				return nil, fmt.Errorf("shapes %v cannot be broadcast together (axis %d: %d vs %d)", ss, off+i-r, *o, d)
			}
		}
	}
	return out, nil
}

// normAxis maps an ONNX axis (negative counts from the end) into [0, r).
func normAxis(a int64, r int) (int, error) {
	if a < 0 {
		a += int64(r)
	}
	if a < 0 || a >= int64(r) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", a, r)
	}
	return int(a), nil
}

// prod is the product of extents.
func prod(s []int) int {
	p := 1
	for _, d := range s {
		p *= d
	}
	return p
}

// ratOf is the exact value of a float32 attribute.
func ratOf(f float32) (spec.Rat, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return spec.Rat{}, fmt.Errorf("%v is not a finite number", f)
	}
	return spec.RatFromFloat64(float64(f))
}

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
