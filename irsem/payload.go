package irsem

import (
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
type Params struct {
	Value       *RatTensor
	W, B        *RatTensor
	Gamma, Beta *RatTensor
	Mean, Var   *RatTensor
	Eps         *spec.Rat
}

// Payload holds the parameters of a graph, keyed by node id, as exact
// rationals (TorchLean's Payload; tlcheck.payload.v1 on the wire). A nil
// *Payload is an empty one.
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
			s, t := *f.get(x), *f.get(y)
			if (s == nil) != (t == nil) || (s != nil && !spec.SameTensor(*s, *t)) {
				return false
			}
		}
		if (x.Eps == nil) != (y.Eps == nil) || (x.Eps != nil && !x.Eps.Same(*y.Eps)) {
			return false
		}
	}
	return true
}

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
		if err := expectParam(id, op, ParamW, e.W, spec.Shape{out, in}); err != nil {
			return err
		}
		return expectParam(id, op, ParamB, e.B, spec.Shape{out})
	case OpConv, OpConvTranspose:
		ws, bs := paramShapes(op, k.Window)
		if _, err := ws.Check(0); err != nil {
			return &Error{Node: id, Op: string(op), Elem: -1, Msg: "payload \"W\"", Err: err}
		}
		if err := expectParam(id, op, ParamW, e.W, ws); err != nil {
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

// ConvertTensor converts an exact tensor to T element by element with
// FromRat; the result shares nothing with t.
func ConvertTensor[T spec.Scalar[T]](t RatTensor) spec.Tensor[T] {
	return spec.Convert(t, ratConverter[T]())
}
