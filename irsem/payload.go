package irsem

import (
	"fmt"
	"math"
	"sort"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// RatTensor is a tensor of exact rationals: how payload parameters and
// command-line inputs are stored before an evaluation converts them to its
// scalar with T.FromRat.
type RatTensor = spec.Tensor[spec.Rat]

// Params is one payload entry: the parameters of one node. Which fields a
// tag reads is listed in its TagInfo.Params (Required must be present); the
// rest must be nil.
//
//	const            Value (shape value_shape)
//	linear           W [out,in], B [out]
//	conv             W [out_channels, in_channels/groups, kernel…], B [out_channels] (optional)
//	conv_transpose   W [in_channels, out_channels/groups, kernel…], B [out_channels] (optional)
//	layernorm        Gamma, Beta (the normalized suffix shape), Eps — each optional: γ=1, β=0, ε=1/100000
//	batch_norm_eval  Mean, Var [channels]; Gamma, Beta [channels] and Eps optional as for layernorm
//	instance_norm    Gamma, Beta [channels] (required), Eps optional (1/100000)
//
// W has two storages: the exact rationals in the field W, or (for a float
// initializer decoded by the ONNX importer) an IEEE plane set with
// SetWeightPlane, every element of which is a finite binary32 or binary64
// value and so an exact dyadic rational; the field W is nil then. Read W
// through Weight (the rationals, derived from the plane when it is one),
// WeightPlane (the plane, nil when W is held as rationals), WeightShape or
// HasWeight — never through the field alone, which is nil for a plane.
// The payload is the same either way (Equal, its JSON document, every
// evaluation): only its memory differs (4 or 8 bytes a weight instead of a
// 32-byte spec.Rat).
type Params struct {
	Value       *RatTensor
	W, B        *RatTensor
	Gamma, Beta *RatTensor
	Mean, Var   *RatTensor
	Eps         *spec.Rat

	wPlane *Plane // W as an IEEE plane (SetWeightPlane); W is nil then
}

// Plane is a tensor of finite IEEE values held as decoded: binary32
// (ONNX FLOAT, FLOAT16 and BFLOAT16 all widen to it exactly) or binary64
// (DOUBLE). Element i denotes the exact rational value of its float (a
// dyadic m·2^e), Rat(i); a Plane is read-only once made.
type Plane struct {
	shape spec.Shape
	f32   []float32 // binary32 storage, or nil
	f64   []float64 // binary64 storage, or nil
}

// NewPlane32 makes a binary32 plane of shape s holding d (not copied:
// the caller must not write d afterwards). Every element must be finite.
func NewPlane32(s spec.Shape, d []float32) (*Plane, error) {
	if len(d) != s.Size() {
		return nil, fmt.Errorf("plane of shape %v needs %d values, got %d", s, s.Size(), len(d))
	}
	for i, f := range d {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("element %d is %v, not a finite number", i, f)
		}
	}
	if d == nil {
		d = []float32{}
	}
	return &Plane{shape: s.Clone(), f32: d}, nil
}

// NewPlane64 is NewPlane32 for a binary64 plane.
func NewPlane64(s spec.Shape, d []float64) (*Plane, error) {
	if len(d) != s.Size() {
		return nil, fmt.Errorf("plane of shape %v needs %d values, got %d", s, s.Size(), len(d))
	}
	for i, f := range d {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("element %d is %v, not a finite number", i, f)
		}
	}
	if d == nil {
		d = []float64{}
	}
	return &Plane{shape: s.Clone(), f64: d}, nil
}

// Shape is the plane's shape (shared: do not modify).
func (p *Plane) Shape() spec.Shape { return p.shape }

// Len is the number of elements.
func (p *Plane) Len() int {
	if p.f64 != nil {
		return len(p.f64)
	}
	return len(p.f32)
}

// Float32s returns the binary32 storage, or nil for a binary64 plane.
func (p *Plane) Float32s() []float32 { return p.f32 }

// Float64At is element i as a float64: exactly its value (a binary32
// widens to binary64 exactly).
func (p *Plane) Float64At(i int) float64 {
	if p.f64 != nil {
		return p.f64[i]
	}
	return float64(p.f32[i])
}

// Float64s returns every element as a float64, exactly: the binary64
// storage itself (read-only), or a fresh widening of the binary32 one.
func (p *Plane) Float64s() []float64 {
	if p.f64 != nil {
		return p.f64
	}
	w := make([]float64, len(p.f32))
	for i, f := range p.f32 {
		w[i] = float64(f)
	}
	return w
}

// Rat is element i's exact value (spec.RatFromFloat64 of its finite
// float, which NewPlane32 / NewPlane64 checked).
func (p *Plane) Rat(i int) spec.Rat {
	r, err := spec.RatFromFloat64(p.Float64At(i))
	if err != nil {
		panic("irsem: a plane holds a non-finite value: " + err.Error()) // excluded by NewPlane32/64
	}
	return r
}

// Rats derives the exact tensor, 32 bytes an element: a fresh tensor the
// caller owns (nothing keeps it).
func (p *Plane) Rats() RatTensor {
	t := RatTensor{Shape: p.shape.Clone(), Data: make([]spec.Rat, p.Len())}
	for i := range t.Data {
		t.Data[i] = p.Rat(i)
	}
	return t
}

// SetWeightPlane stores W as the plane w (W's rationals are dropped).
func (e *Params) SetWeightPlane(w *Plane) {
	e.W, e.wPlane = nil, w
}

// WeightPlane is W's plane, or nil when W is held as rationals or absent.
func (e *Params) WeightPlane() *Plane {
	if e == nil || e.W != nil {
		return nil
	}
	return e.wPlane
}

// HasWeight reports whether the entry sets W, in either storage.
func (e *Params) HasWeight() bool { return e != nil && (e.W != nil || e.wPlane != nil) }

// WeightShape is W's shape (nil when absent; shared, do not modify).
func (e *Params) WeightShape() spec.Shape {
	switch {
	case e == nil:
		return nil
	case e.W != nil:
		return e.W.Shape
	case e.wPlane != nil:
		return e.wPlane.shape
	}
	return nil
}

// Weight is W's exact tensor: the field itself, or derived from the plane
// (a fresh tensor, 32 bytes a weight, that the caller holds only while it
// needs it); nil when absent.
func (e *Params) Weight() *RatTensor {
	switch {
	case e == nil:
		return nil
	case e.W != nil:
		return e.W
	case e.wPlane != nil:
		t := e.wPlane.Rats()
		return &t
	}
	return nil
}

// Exact returns the entry with every tensor held as rationals: e itself
// when it holds no plane, else a copy with W derived (see Weight). For a
// reader that needs the rationals of one entry for a while.
func (e *Params) Exact() *Params {
	if e == nil || e.W != nil || e.wPlane == nil {
		return e
	}
	c := *e
	c.W, c.wPlane = e.Weight(), nil
	return &c
}

// Payload holds the parameters of a graph, keyed by node id, as exact
// rationals (TorchLean's Payload; tlcheck.payload.v1 on the wire). A nil
// *Payload is an empty one. A weight W may be stored as the IEEE plane it
// was decoded from (Params, SetWeightPlane): its value is still the exact
// rational of each float, derived where a reader needs it.
type Payload struct {
	Entries map[int]*Params
}

// DefaultEps returns the ε used when a layernorm or batch_norm_eval entry
// has none: spec.DefaultNormEps, 1/100000 (TorchLean's normalization
// epsilon, and the registry's layer_norm default).
func DefaultEps() spec.Rat { return spec.RatFromBig(spec.DefaultNormEps()) }

// Entry returns node id's parameters, or nil.
func (p *Payload) Entry(id int) *Params {
	if p == nil || p.Entries == nil {
		return nil
	}
	return p.Entries[id]
}

// IDs lists the node ids that have entries, ascending.
func (p *Payload) IDs() []int {
	if p == nil {
		return nil
	}
	ids := make([]int, 0, len(p.Entries))
	for id := range p.Entries {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// paramField is one named tensor slot of Params, in canonical order.
type paramField struct {
	name string
	get  func(*Params) **RatTensor
}

// allParamNames lists every payload parameter name in canonical order.
var allParamNames = []string{ParamValue, ParamW, ParamB, ParamGamma, ParamBeta, ParamMean, ParamVar, ParamEps}

var tensorParams = []paramField{
	{ParamValue, func(p *Params) **RatTensor { return &p.Value }},
	{ParamW, func(p *Params) **RatTensor { return &p.W }},
	{ParamB, func(p *Params) **RatTensor { return &p.B }},
	{ParamGamma, func(p *Params) **RatTensor { return &p.Gamma }},
	{ParamBeta, func(p *Params) **RatTensor { return &p.Beta }},
	{ParamMean, func(p *Params) **RatTensor { return &p.Mean }},
	{ParamVar, func(p *Params) **RatTensor { return &p.Var }},
}

// has reports whether the entry sets the named parameter.
func (e *Params) has(name string) bool {
	if e == nil {
		return false
	}
	if name == ParamEps {
		return e.Eps != nil
	}
	if name == ParamW {
		return e.HasWeight()
	}
	for _, f := range tensorParams {
		if f.name == name {
			return *f.get(e) != nil
		}
	}
	return false
}

// Equal reports whether two payloads hold the same entries with the same
// shapes and exactly equal values.
func (p *Payload) Equal(q *Payload) bool {
	a, b := p.IDs(), q.IDs()
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
		x, y := p.Entries[a[i]], q.Entries[b[i]]
		if x == nil {
			x = &Params{}
		}
		if y == nil {
			y = &Params{}
		}
		for _, f := range tensorParams {
			if f.name == ParamW {
				continue
			}
			s, t := *f.get(x), *f.get(y)
			if (s == nil) != (t == nil) || (s != nil && !spec.SameTensor(*s, *t)) {
				return false
			}
		}
		if !sameWeight(x, y) {
			return false
		}
		if (x.Eps == nil) != (y.Eps == nil) || (x.Eps != nil && !x.Eps.Same(*y.Eps)) {
			return false
		}
	}
	return true
}

// sameWeight reports whether two entries' W are both absent or have the
// same shape and exactly equal elements, whatever their storage. Two
// planes are compared as floats (x == y: equal values, ±0 alike, as the
// rationals are; a plane holds no NaN), a plane and rationals element by
// element through the plane's exact value, without deriving a tensor.
func sameWeight(x, y *Params) bool {
	if x == nil {
		x = &Params{}
	}
	if y == nil {
		y = &Params{}
	}
	if x.HasWeight() != y.HasWeight() {
		return false
	}
	if !x.HasWeight() {
		return true
	}
	if !x.WeightShape().Equal(y.WeightShape()) {
		return false
	}
	px, py := x.WeightPlane(), y.WeightPlane()
	switch {
	case px == nil && py == nil:
		return spec.SameTensor(*x.W, *y.W)
	case px != nil && py != nil:
		if px.Len() != py.Len() {
			return false
		}
		for i := 0; i < px.Len(); i++ {
			if px.Float64At(i) != py.Float64At(i) {
				return false
			}
		}
		return true
	case px == nil:
		px, py, x, y = py, px, y, x
	}
	// px is a plane, y holds rationals.
	if px.Len() != len(y.W.Data) {
		return false
	}
	for i := range y.W.Data {
		if !px.Rat(i).Same(y.W.Data[i]) {
			return false
		}
	}
	return true
}

// SameWeight reports whether e and f hold the same W (both absent, or the
// same shape and exactly equal elements), whatever their storage.
func (e *Params) SameWeight(f *Params) bool { return sameWeight(e, f) }

// expectShape checks one parameter's shape.
func expectParam(id int, op Op, name string, t *RatTensor, want spec.Shape) error {
	if t == nil {
		return nil
	}
	if !t.Shape.Equal(want) || len(t.Data) != want.Size() {
		return nodeErrf(id, op, "", "payload %q has shape %v, expected %v", name, t.Shape, want)
	}
	return nil
}

// expectWeight is expectParam for W, in either storage.
func expectWeight(id int, op Op, e *Params, want spec.Shape) error {
	if p := e.WeightPlane(); p != nil {
		if !p.shape.Equal(want) || p.Len() != want.Size() {
			return nodeErrf(id, op, "", "payload %q has shape %v, expected %v", ParamW, p.shape, want)
		}
		return nil
	}
	return expectParam(id, op, ParamW, e.W, want)
}

// CheckPayload verifies p against g (which must pass Check): every entry
// names a node of g whose tag takes parameters; every entry sets only its
// tag's parameters and all required ones; every tag that needs an entry
// (const, linear, conv, conv_transpose, batch_norm_eval) has one; every tensor has the
// shape the node demands. Errors name the node and tag, e.g.
//
//	node 4 (linear): missing linear payload for node 4
//	node 4 (linear): payload entry missing "W"
//	node 4 (linear): payload "W" has shape [3,2], expected [8,2]
func CheckPayload(g *Graph, p *Payload) error {
	for _, id := range p.IDs() {
		if id < 0 || id >= len(g.Nodes) {
			return nodeErrf(id, "", "", "payload entry for a node the graph does not have (it has %d nodes)", len(g.Nodes))
		}
		n := &g.Nodes[id]
		info, _ := lookup(n.Kind.Op)
		e := p.Entries[id]
		if len(info.Params) == 0 {
			return nodeErrf(id, n.Kind.Op, "", "%s takes no payload entry", n.Kind.Op)
		}
		for _, name := range allParamNames {
			if e.has(name) && !info.hasParam(name) {
				return nodeErrf(id, n.Kind.Op, "", "payload %s is not a parameter of %s", limits.Quote(name), n.Kind.Op)
			}
		}
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		info, _ := lookup(n.Kind.Op)
		if len(info.Params) == 0 {
			continue
		}
		e := p.Entry(i)
		if e == nil {
			if len(info.Required) > 0 {
				return nodeErrf(i, n.Kind.Op, "", "missing %s payload for node %d", n.Kind.Op, i)
			}
			continue
		}
		for _, r := range info.Required {
			if !e.has(r) {
				return nodeErrf(i, n.Kind.Op, "", "payload entry missing %q", r)
			}
		}
		if err := checkParamShapes(g, n, e); err != nil {
			return err
		}
	}
	return nil
}

func checkParamShapes(g *Graph, n *Node, e *Params) error {
	id, op, k := n.ID, n.Kind.Op, &n.Kind
	switch op {
	case OpConst:
		return expectParam(id, op, ParamValue, e.Value, shapeOrScalar(k.ValueShape))
	case OpLinear:
		x := g.Nodes[n.Parents[0]].Shape
		out, in := n.Shape[len(n.Shape)-1], x[len(x)-1]
		if err := expectWeight(id, op, e, spec.Shape{out, in}); err != nil {
			return err
		}
		return expectParam(id, op, ParamB, e.B, spec.Shape{out})
	case OpConv, OpConvTranspose:
		ws, bs := paramShapes(op, k.Window)
		if _, err := ws.Check(0); err != nil {
			return &Error{Node: id, Op: string(op), Elem: -1, Msg: "payload \"W\"", Err: err}
		}
		if err := expectWeight(id, op, e, ws); err != nil {
			return err
		}
		return expectParam(id, op, ParamB, e.B, bs)
	case OpLayerNorm:
		suffix := g.Nodes[n.Parents[0]].Shape[k.Axis:]
		if err := expectParam(id, op, ParamGamma, e.Gamma, suffix); err != nil {
			return err
		}
		return expectParam(id, op, ParamBeta, e.Beta, suffix)
	case OpInstanceNorm:
		c := spec.Shape{k.Channels}
		if err := expectParam(id, op, ParamGamma, e.Gamma, c); err != nil {
			return err
		}
		return expectParam(id, op, ParamBeta, e.Beta, c)
	case OpBatchNormEval:
		c := spec.Shape{k.Channels}
		for _, f := range []struct {
			name string
			t    *RatTensor
		}{{ParamMean, e.Mean}, {ParamVar, e.Var}, {ParamGamma, e.Gamma}, {ParamBeta, e.Beta}} {
			if err := expectParam(id, op, f.name, f.t, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// FromRat converts an exact rational to T (rounding to nearest for float
// scalars, enclosing for intervals). Over spec.Rat the value is reused, not
// copied: Rat has value semantics.
//
// For the IEEE scalars (spec.F32, spec.F64, spec.Binary32) a rational p/q
// with |p|, q ≤ 2^24 is converted as FromInt(p).Div(FromInt(q)): both
// operands are exact and the division rounds once to nearest, so the result
// is the correctly rounded FromRat value, computed without big.Rat's slow
// general rounding.
func FromRat[T spec.Scalar[T]](r spec.Rat) T {
	return ratConverter[T]()(r)
}

// ratConverter returns FromRat for T with the dispatch on T done once:
// asking a zero T for its dynamic type or for SmallFracer boxes it (one
// heap allocation of a T per question, which for fpbound's ErrOf was
// half the cost of converting a payload), so ConvertTensor asks once per
// tensor instead of twice per element. Every branch returns what FromRat
// returned before, element for element.
func ratConverter[T spec.Scalar[T]]() func(spec.Rat) T {
	var z T
	switch any(z).(type) {
	case spec.Rat:
		return func(r spec.Rat) T { return any(r).(T) }
	case spec.F32:
		return ieeeConverter(z, func(f float64) T { return any(spec.F32(float32(f))).(T) })
	case spec.F64:
		return ieeeConverter(z, func(f float64) T { return any(spec.F64(f)).(T) })
	case spec.Binary32:
		return ieeeConverter(z, func(f float64) T { return any(spec.Binary32FromFloat32(float32(f))).(T) })
	}
	if f, ok := any(z).(SmallFracer[T]); ok {
		return func(r spec.Rat) T {
			if p, q, ok := r.SmallFrac(); ok {
				if v, ok := f.FromSmallFrac(p, q); ok {
					return v
				}
			}
			return z.FromRat(r.Big())
		}
	}
	return func(r spec.Rat) T { return z.FromRat(r.Big()) }
}

// ieeeConverter is FromRat for an IEEE scalar T (zero value z): a small
// fraction p/q with |p|, q ≤ 2^24 as one correctly rounded division of
// exact operands; a dyadic p/2^e with |p| < 2^53, exact in binary64, by
// one rounding of that float64 to T (round); anything else through
// big.Rat.
func ieeeConverter[T spec.Scalar[T]](z T, round func(float64) T) func(spec.Rat) T {
	return func(r spec.Rat) T {
		if p, q, ok := r.SmallFrac(); ok {
			if p >= -exactInt && p <= exactInt && q <= exactInt {
				// Both exact in every IEEE scalar: one correctly
				// rounded division.
				if v, err := z.FromInt(p).Div(z.FromInt(q)); err == nil {
					return v
				}
			}
			if q&(q-1) == 0 && p > -1<<53 && p < 1<<53 {
				// A dyadic p/2^e (every binary32 value is one): exact
				// in binary64, then one rounding to the scalar.
				return round(float64(p) / float64(q))
			}
		}
		return z.FromRat(r.Big())
	}
}

// SmallFracer is implemented by a scalar defined above this package that
// converts a small fraction without a big.Rat: FromSmallFrac(p, q), for
// p/q in lowest terms with q > 0, must return exactly FromRat(p/q), or
// report false (then FromRat runs). It is called on the zero value.
// Model weights are such fractions (every binary32 value is a dyadic
// p/2^e), so converting a payload no longer allocates one big.Rat per
// weight.
type SmallFracer[T any] interface {
	FromSmallFrac(p, q int64) (T, bool)
}

// exactInt bounds the integers every IEEE scalar holds exactly (binary32
// has a 24-bit significand).
const exactInt = 1 << 24

// ConvertPlane converts a plane to T element by element with FromRat of
// each element's exact value (Plane.Rat), as ConvertTensor(p.Rats())
// would, without holding the rationals.
func ConvertPlane[T spec.Scalar[T]](p *Plane) spec.Tensor[T] {
	conv := ratConverter[T]()
	out := spec.Tensor[T]{Shape: p.shape.Clone(), Data: make([]T, p.Len())}
	for i := range out.Data {
		out.Data[i] = conv(p.Rat(i))
	}
	return out
}

// ConvertTensor converts an exact tensor to T element by element with
// FromRat; the result shares nothing with t.
func ConvertTensor[T spec.Scalar[T]](t RatTensor) spec.Tensor[T] {
	return spec.Convert(t, ratConverter[T]())
}
