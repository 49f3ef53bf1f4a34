package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Attrs are the static attributes of one primitive application. Each
// primitive reads only the fields its OpInfo.Attrs lists; the rest stay
// zero. AttrSpecs declares every field: its name in the encodings, its
// type, its default and its meaning. Constants are exact rationals so that a rule over Rat is exact and
// a rule over a float scalar rounds each constant once.
type Attrs struct {
	Axis   int      // reduce_sum, reduce_mean, softmax, log_softmax, layer_norm, concat, slice, gather; batch_norm_eval: the channel axis
	Axis2  int      // transpose: the second axis
	Shape  Shape    // reshape, flatten, broadcast_to: target shape; const, rand_uniform, keep_mask: value shape
	Perm   []int    // permute
	Start  int      // slice: first index on Axis
	End    int      // slice: one past the last index on Axis
	C      *big.Rat // scale: the factor; quant_int: the scale
	Lo, Hi *big.Rat // clamp bounds
	Eps    *big.Rat // safe_log, layer_norm, batch_norm_eval, instance_norm: epsilon
	P      *big.Rat // bernoulli_mask, dropout: drop probability
	Seed   uint64   // rand_uniform, bernoulli_mask, keep_mask, dropout: the draw
	Values []*big.Rat
	// Window is the geometry of conv, conv_transpose and the pools
	// (ops_window.go).
	Window *Window

	// The attributes of the primitives added for imported models (issue
	// 11): pad, gather, lrn, shrink.
	Widths       []int    // pad: 2·rank naturals, every axis's begin width, then every end width
	Mode         string   // pad: "constant", "reflect" or "edge"
	Value        *big.Rat // pad: the fill value of constant mode (0 when nil)
	Indices      []int    // gather: the constant indices, row-major over IndicesShape
	IndicesShape Shape    // gather: the indices' shape
	Size         int      // lrn: the channel window
	Alpha, Beta  *big.Rat // lrn: y = x/(bias + alpha/size·Σx²)^beta
	Bias         *big.Rat // lrn: bias; shrink: bias; quant_int: the zero point
	Lambd        *big.Rat // shrink: the threshold λ
	Mask         []bool   // hard_masked_softmax: true where the entry takes part, row-major over the input
	Maxnorm      *big.Rat // renorm: the bound c on each sub-tensor's 2-norm (c ≥ 0)
}

// Clone returns a deep copy of the attributes.
func (a *Attrs) Clone() *Attrs {
	if a == nil {
		return &Attrs{}
	}
	b := *a
	b.Shape = a.Shape.Clone()
	b.Perm = append([]int(nil), a.Perm...)
	cp := func(r *big.Rat) *big.Rat {
		if r == nil {
			return nil
		}
		return new(big.Rat).Set(r)
	}
	b.C, b.Lo, b.Hi, b.Eps, b.P = cp(a.C), cp(a.Lo), cp(a.Hi), cp(a.Eps), cp(a.P)
	b.Widths, b.Indices = append([]int(nil), a.Widths...), append([]int(nil), a.Indices...)
	b.IndicesShape = a.IndicesShape.Clone()
	b.Mask = append([]bool(nil), a.Mask...)
	b.Value, b.Alpha, b.Beta, b.Bias, b.Lambd, b.Maxnorm = cp(a.Value), cp(a.Alpha), cp(a.Beta), cp(a.Bias), cp(a.Lambd), cp(a.Maxnorm)
	if a.Values != nil {
		b.Values = make([]*big.Rat, len(a.Values))
		for i, v := range a.Values {
			b.Values[i] = cp(v)
		}
	}
	b.Window = a.Window.Clone()
	return &b
}

// OpInfo is the scalar-independent description of a primitive.
type OpInfo struct {
	Name     string
	MinArity int // fewest parents
	MaxArity int // most parents; -1 for unbounded
	// Attrs lists the attribute fields the primitive reads, by Attrs field
	// name, for documentation and for the IR importer; each is declared in
	// AttrSpecs (the registry refuses to build otherwise).
	Attrs []string
	// Shape computes the output shape from the attributes and the parent
	// shapes, or explains why they are incompatible.
	Shape func(a *Attrs, in []Shape) (Shape, error)
	// Exact is true when the forward, JVP and VJP rules have exact
	// rational semantics (they may still fail on particular data, such as
	// a division by zero or the square root of a non-square).
	Exact bool
	// NoGrad marks primitives whose VJP and JVP are zero by definition:
	// constants, stop-gradient and random draws.
	NoGrad bool
	// Linear marks primitives whose forward is linear in their inputs
	// jointly (so their JVP is the forward applied to the tangents).
	Linear bool
	// Smooth is false for primitives with kinks or ties (relu, abs, max,
	// clamp, ...), where the derivative follows the documented tie
	// conventions.
	Smooth bool
	// Ties states the derivative convention at the kinks and ties of a
	// primitive that is not Smooth (relu′(0) = 0, max/min 0.5/0.5, …); ""
	// for smooth primitives.
	Ties string
	// HullsUndecided marks a primitive that is not Smooth but continuous
	// (Lipschitz), whose forward rule never branches on a comparison over
	// an Encloser scalar and whose VJP rule, where an order it compares
	// cannot be decided over such a scalar, returns the join of what every
	// outcome the real order could give yields (max_pool, max_pool_nd:
	// poolTies). Over an Encloser, that VJP on a box then encloses every
	// Clarke Jacobian of the primitive at the box's points, as abs, relu
	// and clamp do through Step and Sign (fpbound's doc, "Max-pool ties
	// on boxes").
	HullsUndecided bool
	// Partial marks rules that may fail on particular finite data even
	// over a scalar that has every operation they use: division by an
	// exact zero, the square root of a non-square over Rat, log of x ≤ 0,
	// a zero variance. A primitive that is Exact and not Partial is total
	// over Rat.
	Partial bool
	// ZeroPreserving means the VJP maps δ = 0 to exact zeros wherever the
	// rules are defined: over Rat wherever they succeed, and over floats
	// because no local derivative has a pole at a finite point or
	// overflows before the forward value does. inv, div and log are not
	// (poles at 0, where 1/0 = ∞ and ∞·0 = NaN), nor exp (its derivative
	// is its value, ∞ from x ≈ 89 in binary32), nor layer_norm (1/σ at
	// σ = ε = 0). The graph generators draw zero-preserving graphs with
	// it. It classifies the rules; it is not a verdict over the whole
	// float range: at |x| near the overflow threshold an intermediate
	// result can still overflow (gelu's x³, mse_loss's ŷ − y).
	ZeroPreserving bool
	// Polynomial means every output element is a polynomial with exact
	// rational coefficients (taken from the attributes) in the parents'
	// elements; such a primitive is Exact and not Partial. Random draws
	// (rand_uniform, bernoulli_mask, dropout) are not Polynomial: their
	// coefficients are functions of a seed.
	Polynomial bool
	// Accumulates means an output element sums a data-dependent number of
	// terms (reductions, matmul, linear, the loss, softmax, the
	// normalisation), so a kernel for it needs a reduction policy: the
	// registry's own rules are left folds from zero.
	Accumulates bool
	// LinearIn, when set, states that the output is linear in one parent
	// with a local Jacobian read off another (LinearJac): a consumer may
	// take that Jacobian from the parent's values instead of running VJP
	// once per output element. It is not in RegistryHash's facts: it
	// derives no table, only a shortcut that TestLinearInEqualsVJP checks
	// against the VJP rule.
	LinearIn *LinearJac
	// Elementwise states that the local Jacobian to every parent is
	// diagonal: every parent has the output's shape and output element i
	// reads element i of each parent alone, y_i = F(x_{0,i}, x_{1,i}, …),
	// so ∂y_i/∂x_{t,m} = 0 for m ≠ i and the VJP's contribution to parent t
	// of the cotangent δ is ∂y_i/∂x_{t,i}·δ_i element by element. It is
	// derived from the primitive's definition, not stated by hand: the
	// frames unaryPrim and binaryPrim, whose Forward is Map or Zip of a
	// scalar rule (Unary, Binary), set it, and only they. A consumer may
	// then read the diagonal from one VJP run with the cotangent of ones
	// instead of one run per output element. Like LinearIn it derives no
	// table and is not in RegistryHash's facts; TestElementwiseDiagonalVJP
	// checks it against the VJP rule on random inputs.
	Elementwise bool
	// IR is the primitive's form in the canonical IR; nil when the IR has
	// no tag for it.
	IR *IRForm
	// Gen holds the obligation generators' hints.
	Gen GenHint
	// Providers lists the providers other than the reference one that
	// implement a kernel for the primitive (ProviderFastCPU). The
	// reference provider runs every primitive, and the declared CUDA
	// catalog has a capsule for every primitive.
	Providers []string
	// Contraction is the number of terms one output element sums, from
	// the attributes and the parent shapes, for the declared work of a node
	// (package limits: work = (parent elements + output elements) ×
	// contraction); nil means 1. Set for matmul and linear (the inner
	// dimension, the last axis of the first parent); the other
	// accumulating rules sum at most their parents' elements, which the
	// work already counts.
	Contraction func(a *Attrs, in []Shape) int
	// Rule is the canonical spelling of the forward and derivative
	// expressions of a primitive added with RegisterElementwise; "" for
	// the built-in primitives, whose rules are Go code.
	Rule string
	// Doc is a one-line description.
	Doc string
}

// Prim is a primitive instantiated over the scalar T: its forward rule and
// its JVP and VJP reference rules. Every execution path takes its rules
// from a Registry of Prims.
type Prim[T Scalar[T]] struct {
	*OpInfo
	// Forward computes the output from the parents.
	Forward func(a *Attrs, xs []Tensor[T]) (Tensor[T], error)
	// JVP maps parent tangents dxs (one per parent, each of its parent's
	// shape) to the output tangent. y is the forward output at xs.
	JVP func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error)
	// VJP maps an output cotangent dy to one contribution per parent, each
	// of its parent's shape. y is the forward output at xs.
	VJP func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error)
	// VJPMasked, when set, is VJP restricted to the parents t with
	// need[t] (len(need) = len(xs)): their contributions are VJP's, computed
	// by the same operations in the same order, and the others are returned
	// with nil Data. Only the heavy products set it (linear, matmul, conv,
	// conv_transpose), whose VJP computes a weight's contribution that a
	// caller propagating to the input alone (fpbound's sweep) never reads.
	// A Prim that replaces VJP must replace or clear it too; VJPNeed is the
	// one entry point.
	VJPMasked func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T], need []bool) ([]Tensor[T], error)
	// Unary and Binary are the scalar rules an elementwise primitive is
	// built from (at most one is set; nil for every other primitive), so
	// that a planned kernel can run the registry's own scalar operations
	// instead of a second copy of them. They describe the reference
	// rule: a fault planted by replacing Forward, JVP or VJP (Override)
	// does not change them, so only the reference registry's own
	// primitives may be executed through them.
	Unary  *UnaryRule[T]
	Binary *BinaryRule[T]
}

// VJPNeed is VJPMasked where the primitive has one, else VJP with the
// contributions of the parents t without need[t] dropped (nil Data).
func (p *Prim[T]) VJPNeed(a *Attrs, xs []Tensor[T], y, dy Tensor[T], need []bool) ([]Tensor[T], error) {
	if p.VJPMasked != nil {
		return p.VJPMasked(a, xs, y, dy, need)
	}
	dxs, err := p.VJP(a, xs, y, dy)
	if err != nil {
		return nil, err
	}
	return masked(dxs, need), nil
}

// masked drops the contributions of the parents without need (the
// VJPMasked of a rule whose fast path computes them all).
func masked[T Scalar[T]](dxs []Tensor[T], need []bool) []Tensor[T] {
	for t := range dxs {
		if t < len(need) && !need[t] {
			dxs[t] = Tensor[T]{}
		}
	}
	return dxs
}

// needs reports need[t], true past the end of need.
func needs(need []bool, t int) bool { return t >= len(need) || need[t] }

// CheckArity reports whether n parents suit the primitive.
func (o *OpInfo) CheckArity(n int) error {
	if n < o.MinArity || (o.MaxArity >= 0 && n > o.MaxArity) {
		switch {
		case o.MaxArity < 0:
			return fmt.Errorf("%s takes at least %d parents, got %d", o.Name, o.MinArity, n)
		case o.MinArity == o.MaxArity:
			return fmt.Errorf("%s takes %d parents, got %d", o.Name, o.MinArity, n)
		default:
			return fmt.Errorf("%s takes %d to %d parents, got %d", o.Name, o.MinArity, o.MaxArity, n)
		}
	}
	return nil
}

// InferShape checks the arity and computes the output shape.
func (o *OpInfo) InferShape(a *Attrs, in []Shape) (Shape, error) {
	if a == nil {
		a = &Attrs{}
	}
	if err := o.CheckArity(len(in)); err != nil {
		return nil, err
	}
	s, err := o.Shape(a, in)
	if err != nil {
		return nil, namePrim(o.Name, err)
	}
	if _, err := s.Check(0); err != nil {
		return nil, fmt.Errorf("%s: output %w", o.Name, err)
	}
	return s, nil
}

// Registry is a table of primitives over one scalar. Default returns the
// shared reference registry; New returns a private copy that a test may
// Override (for example, to plant a deliberately wrong VJP and check that
// the harnesses catch it).
type Registry[T Scalar[T]] struct {
	prims map[string]*Prim[T]
	names []string
}

// registries caches one reference registry per scalar type; it is the only
// package-level mutable state, guarded by its sync.Map.
var registries sync.Map // reflect.Type -> any (*Registry[T])

// Default returns the reference registry for T. Callers must not Override
// it; use New for a private copy.
func Default[T Scalar[T]]() *Registry[T] {
	key := reflect.TypeFor[T]()
	if r, ok := registries.Load(key); ok {
		return r.(*Registry[T])
	}
	r, _ := registries.LoadOrStore(key, build[T]())
	return r.(*Registry[T])
}

// New returns a fresh copy of the reference registry for T.
func New[T Scalar[T]]() *Registry[T] {
	d := Default[T]()
	r := &Registry[T]{prims: make(map[string]*Prim[T], len(d.prims)), names: append([]string(nil), d.names...)}
	for k, v := range d.prims {
		c := *v
		r.prims[k] = &c
	}
	return r
}

// Lookup returns the primitive called name.
func (r *Registry[T]) Lookup(name string) (*Prim[T], error) {
	p, ok := r.prims[name]
	if !ok {
		return nil, fmt.Errorf("unknown primitive %q", name)
	}
	return p, nil
}

// Names lists the primitives in registration order.
func (r *Registry[T]) Names() []string { return append([]string(nil), r.names...) }

// Override replaces (or adds) a primitive. It is meant for tests that
// plant faults in a private registry from New.
func (r *Registry[T]) Override(p *Prim[T]) {
	if _, ok := r.prims[p.Name]; !ok {
		r.names = append(r.names, p.Name)
	}
	r.prims[p.Name] = p
}

// Infos returns the scalar-independent descriptions of every primitive,
// in registration order.
func Infos() []*OpInfo {
	r := Default[F64]()
	out := make([]*OpInfo, 0, len(r.names))
	for _, n := range r.names {
		out = append(out, r.prims[n].OpInfo)
	}
	return out
}

// Info returns the description of the named primitive.
func Info(name string) (*OpInfo, error) {
	p, err := Default[F64]().Lookup(name)
	if err != nil {
		return nil, err
	}
	return p.OpInfo, nil
}

// RegistryHash is a SHA-256 over the registry's scalar-independent
// description (names, arities, attributes, flags, IR forms, generator
// hints, providers and the expressions of registered elementwise ops), so
// that a certificate can name the rule set it was produced with.
func RegistryHash() string { return RegistryHashWith() }

// RegistryHashWith is RegistryHash over the reference registry extended
// by the primitives extra (a user's own, registered into a private copy
// from New): the same SHA-256 over every entry's facts sorted by name, so
// RegistryHashWith() is RegistryHash() and a certificate of a user's
// primitive names the extended rule set it was produced with. The facts
// are the OpInfo fields RegistryHash covers; a rule's Go code is not
// hashed (a verifier recomputes the rules' results instead).
func RegistryHashWith(extra ...*OpInfo) string {
	var b strings.Builder
	infos := append(Infos(), extra...)
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	for _, o := range infos {
		b.WriteString(o.factString())
		b.WriteByte('\n')
	}
	h := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(h[:])
}

// Apply runs a primitive's forward rule after checking arity and shapes:
// the parents must have the shapes the rule accepts, and the result must
// have the inferred shape.
func (p *Prim[T]) Apply(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
	if a == nil {
		a = &Attrs{}
	}
	in := make([]Shape, len(xs))
	for i, x := range xs {
		in[i] = x.Shape
	}
	want, err := p.InferShape(a, in)
	if err != nil {
		return Tensor[T]{}, err
	}
	y, err := p.Forward(a, xs)
	if err != nil {
		return Tensor[T]{}, namePrim(p.Name, err)
	}
	if !y.Shape.Equal(want) || len(y.Data) != want.Size() {
		return Tensor[T]{}, fmt.Errorf("%s: forward produced shape %v, expected %v", p.Name, y.Shape, want)
	}
	return y, nil
}

// build instantiates every primitive over T, in the order of the
// semantics table.
func build[T Scalar[T]]() *Registry[T] {
	r := &Registry[T]{prims: map[string]*Prim[T]{}}
	for _, p := range allPrims[T]() {
		if _, dup := r.prims[p.Name]; dup {
			panic("spec: duplicate primitive " + p.Name) // programming error, caught by tests
		}
		if err := checkAttrs(p.OpInfo); err != nil {
			panic(err) // programming error, caught by tests
		}
		if p.IR != nil {
			p.IR.fill(p.OpInfo)
		}
		guard(p)
		r.prims[p.Name] = p
		r.names = append(r.names, p.Name)
	}
	return r
}

// guard makes a primitive's rules total: a call with the wrong number of
// parents or tangents is an error, and a rule that would index outside a
// malformed tensor (a caller that bypassed Apply's shape checks) returns
// an error instead of panicking. Errors are values, also for misuse.
func guard[T Scalar[T]](p *Prim[T]) {
	fwd, jvp, vjp := p.Forward, p.JVP, p.VJP
	name, info := p.Name, p.OpInfo
	recovered := func(what string, err *error) {
		if r := recover(); r != nil {
			*err = fmt.Errorf("%s %s: malformed arguments (%v)", name, what, r)
		}
	}
	arity := func(what string, n int) error {
		if err := info.CheckArity(n); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	p.Forward = func(a *Attrs, xs []Tensor[T]) (y Tensor[T], err error) {
		if err := arity("forward", len(xs)); err != nil {
			return y, err
		}
		if a == nil {
			a = &Attrs{}
		}
		defer recovered("forward", &err)
		if y, err = fwd(a, xs); err != nil {
			return y, err
		}
		return y, checkRatBits("forward", y)
	}
	p.JVP = func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (t Tensor[T], err error) {
		if err := arity("jvp", len(xs)); err != nil {
			return t, err
		}
		if len(dxs) != len(xs) {
			return t, fmt.Errorf("%s jvp: %d tangents for %d parents", name, len(dxs), len(xs))
		}
		if a == nil {
			a = &Attrs{}
		}
		defer recovered("jvp", &err)
		if t, err = jvp(a, xs, y, dxs); err != nil {
			return t, err
		}
		return t, checkRatBits("jvp", t)
	}
	p.VJP = func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) (g []Tensor[T], err error) {
		if err := arity("vjp", len(xs)); err != nil {
			return nil, err
		}
		if a == nil {
			a = &Attrs{}
		}
		defer recovered("vjp", &err)
		if g, err = vjp(a, xs, y, dy); err != nil {
			return g, err
		}
		return g, checkRatBits("vjp", g...)
	}
}

// namePrim attributes a primitive's failure to it: the result is an
// unlocated NodeError naming the primitive as its op ("name: err"; an
// element's failure keeps its index), which the caller that knows the node
// locates with AtNode.
func namePrim(name string, err error) error {
	if e, ok := err.(*NodeError); ok && e.Node < 0 && e.Op == "" {
		c := *e
		c.Op = name
		return &c
	}
	return &NodeError{Node: -1, Op: name, Elem: -1, Err: err}
}
