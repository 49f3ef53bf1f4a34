package typedgraph

import (
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

// Ops is the operation interface a model program is written against once.
type Ops[T spec.Scalar[T], R any] interface {
	Apply(op string, a *spec.Attrs, args ...R) (R, error) // one primitive from the registry
	Detach(x R) (R, error)
	Const(name string, v spec.Tensor[T]) (R, error)
}

// Program is a model program over the scalar T written against Ops: given
// the interpreter and one reference per input, it returns the reference of
// its result. The same function value runs under Eager (R = tape.Ref) and
// under Builder (R = Var) when it is generic in R; write it as a generic
// Go function and instantiate it for each interpreter.
//
// A traced program's graph does not depend on the scalar (the Builder
// computes nothing, so control flow cannot depend on values), which is why
// the higher-order transforms trace a Program over T and then Rebuild the
// recorded graph over spec.Dual[T] instead of asking for a second
// instantiation of the program.
type Program[T spec.Scalar[T], R any] func(o Ops[T, R], inputs []R) (R, error)

// ---------------------------------------------------------------------
// Convenience functions: each is one Apply of a registry primitive.

func rat(c *big.Rat) *big.Rat {
	if c == nil {
		return nil
	}
	return new(big.Rat).Set(c)
}

// Add is a+b (shapes must agree).
func Add[T spec.Scalar[T], R any](o Ops[T, R], a, b R) (R, error) { return o.Apply("add", nil, a, b) }

// Sub is a−b.
func Sub[T spec.Scalar[T], R any](o Ops[T, R], a, b R) (R, error) { return o.Apply("sub", nil, a, b) }

// Mul is a⊙b.
func Mul[T spec.Scalar[T], R any](o Ops[T, R], a, b R) (R, error) { return o.Apply("mul", nil, a, b) }

// Div is a/b elementwise.
func Div[T spec.Scalar[T], R any](o Ops[T, R], a, b R) (R, error) { return o.Apply("div", nil, a, b) }

// Max is the elementwise maximum (ties split the gradient 0.5/0.5).
func Max[T spec.Scalar[T], R any](o Ops[T, R], a, b R) (R, error) { return o.Apply("max", nil, a, b) }

// Min is the elementwise minimum (ties split the gradient 0.5/0.5).
func Min[T spec.Scalar[T], R any](o Ops[T, R], a, b R) (R, error) { return o.Apply("min", nil, a, b) }

// Neg is −x.
func Neg[T spec.Scalar[T], R any](o Ops[T, R], x R) (R, error) { return o.Apply("neg", nil, x) }

// Scale is c·x for an exact rational c.
func Scale[T spec.Scalar[T], R any](o Ops[T, R], c *big.Rat, x R) (R, error) {
	return o.Apply("scale", &spec.Attrs{C: rat(c)}, x)
}

// Square is x⊙x.
func Square[T spec.Scalar[T], R any](o Ops[T, R], x R) (R, error) { return o.Apply("square", nil, x) }

// Abs is |x| (abs'(0) = 0).
func Abs[T spec.Scalar[T], R any](o Ops[T, R], x R) (R, error) { return o.Apply("abs", nil, x) }

// Sqrt is sqrt(max(x, 0)).
func Sqrt[T spec.Scalar[T], R any](o Ops[T, R], x R) (R, error) { return o.Apply("sqrt", nil, x) }

// Relu is max(x, 0) (relu'(0) = 0).
func Relu[T spec.Scalar[T], R any](o Ops[T, R], x R) (R, error) { return o.Apply("relu", nil, x) }

// Clamp is clamp(x, lo, hi).
func Clamp[T spec.Scalar[T], R any](o Ops[T, R], x R, lo, hi *big.Rat) (R, error) {
	return o.Apply("clamp", &spec.Attrs{Lo: rat(lo), Hi: rat(hi)}, x)
}

// Sigmoid is 1/(1+e^−x).
func Sigmoid[T spec.Scalar[T], R any](o Ops[T, R], x R) (R, error) { return o.Apply("sigmoid", nil, x) }

// Tanh is tanh x.
func Tanh[T spec.Scalar[T], R any](o Ops[T, R], x R) (R, error) { return o.Apply("tanh", nil, x) }

// Exp is e^x.
func Exp[T spec.Scalar[T], R any](o Ops[T, R], x R) (R, error) { return o.Apply("exp", nil, x) }

// Log is ln x (raw: it rejects x ≤ 0; see SafeLog).
func Log[T spec.Scalar[T], R any](o Ops[T, R], x R) (R, error) { return o.Apply("log", nil, x) }

// SafeLog is log(softplus(x) + eps).
func SafeLog[T spec.Scalar[T], R any](o Ops[T, R], x R, eps *big.Rat) (R, error) {
	return o.Apply("safe_log", &spec.Attrs{Eps: rat(eps)}, x)
}

// Sum reduces every element to a scalar.
func Sum[T spec.Scalar[T], R any](o Ops[T, R], x R) (R, error) { return o.Apply("sum", nil, x) }

// ReduceSum sums along axis (the axis is removed).
func ReduceSum[T spec.Scalar[T], R any](o Ops[T, R], x R, axis int) (R, error) {
	return o.Apply("reduce_sum", &spec.Attrs{Axis: axis}, x)
}

// ReduceMean averages along axis (the axis is removed).
func ReduceMean[T spec.Scalar[T], R any](o Ops[T, R], x R, axis int) (R, error) {
	return o.Apply("reduce_mean", &spec.Attrs{Axis: axis}, x)
}

// MatMul is torch.matmul(a, b).
func MatMul[T spec.Scalar[T], R any](o Ops[T, R], a, b R) (R, error) {
	return o.Apply("matmul", nil, a, b)
}

// Linear is x·Wᵀ + b over the last axis of x, with W of shape [out, in] and
// b of shape [out].
func Linear[T spec.Scalar[T], R any](o Ops[T, R], x, w, b R) (R, error) {
	return o.Apply("linear", nil, x, w, b)
}

// Reshape gives x the shape s (same element count).
func Reshape[T spec.Scalar[T], R any](o Ops[T, R], x R, s spec.Shape) (R, error) {
	return o.Apply("reshape", &spec.Attrs{Shape: s.Clone()}, x)
}

// Flatten collapses the axes from axis onward into one.
func Flatten[T spec.Scalar[T], R any](o Ops[T, R], x R, axis int) (R, error) {
	return o.Apply("flatten", &spec.Attrs{Axis: axis}, x)
}

// Permute rearranges axes: output axis i is input axis perm[i].
func Permute[T spec.Scalar[T], R any](o Ops[T, R], x R, perm []int) (R, error) {
	return o.Apply("permute", &spec.Attrs{Perm: append([]int(nil), perm...)}, x)
}

// Transpose swaps axes a1 and a2.
func Transpose[T spec.Scalar[T], R any](o Ops[T, R], x R, a1, a2 int) (R, error) {
	return o.Apply("transpose", &spec.Attrs{Axis: a1, Axis2: a2}, x)
}

// BroadcastTo expands x to the shape s (numpy rules).
func BroadcastTo[T spec.Scalar[T], R any](o Ops[T, R], x R, s spec.Shape) (R, error) {
	return o.Apply("broadcast_to", &spec.Attrs{Shape: s.Clone()}, x)
}

// Concat joins xs along axis.
func Concat[T spec.Scalar[T], R any](o Ops[T, R], axis int, xs ...R) (R, error) {
	return o.Apply("concat", &spec.Attrs{Axis: axis}, xs...)
}

// Slice keeps elements start … end−1 along axis.
func Slice[T spec.Scalar[T], R any](o Ops[T, R], x R, axis, start, end int) (R, error) {
	return o.Apply("slice", &spec.Attrs{Axis: axis, Start: start, End: end}, x)
}

// Softmax is the max-shifted softmax along axis.
func Softmax[T spec.Scalar[T], R any](o Ops[T, R], x R, axis int) (R, error) {
	return o.Apply("softmax", &spec.Attrs{Axis: axis}, x)
}

// LogSoftmax is the stable log-softmax along axis.
func LogSoftmax[T spec.Scalar[T], R any](o Ops[T, R], x R, axis int) (R, error) {
	return o.Apply("log_softmax", &spec.Attrs{Axis: axis}, x)
}

// MSE is mse_loss(pred, target) = Σ(pred−target)²/N.
func MSE[T spec.Scalar[T], R any](o Ops[T, R], pred, target R) (R, error) {
	return o.Apply("mse_loss", nil, pred, target)
}

// ---------------------------------------------------------------------
// The eager interpreter.

// Eager is the eager interpreter of Ops: a reference is a tape.Ref into
// Session, and every operation executes at once and appends one node.
type Eager[T spec.Scalar[T]] struct {
	// Session is the recording the operations append to.
	Session *tape.Session[T]
	// Select, when set, is consulted before each primitive application
	// (Apply) with the primitive's name; an error aborts the operation
	// before anything is recorded. The backend plugs kernel-capsule
	// selection in here. Detach and Const append tape nodes without a
	// kernel and do not consult it.
	Select func(op string) error
}

// NewEager returns an eager interpreter over a new session recording with
// reg (nil: the reference registry).
func NewEager[T spec.Scalar[T]](reg *spec.Registry[T]) *Eager[T] {
	if reg == nil {
		reg = spec.Default[T]()
	}
	return &Eager[T]{Session: tape.NewSession[T](reg)}
}

// Apply selects (when Select is set) and records the primitive op.
func (e *Eager[T]) Apply(op string, a *spec.Attrs, args ...tape.Ref) (tape.Ref, error) {
	if e.Session == nil {
		return tape.Ref{}, fmt.Errorf("eager %s: no session", op)
	}
	if e.Select != nil {
		if err := e.Select(op); err != nil {
			return tape.Ref{}, fmt.Errorf("eager %s: selection: %w", op, err)
		}
	}
	return e.Session.Apply(op, a, args...)
}

// Detach records a stop-gradient node.
func (e *Eager[T]) Detach(x tape.Ref) (tape.Ref, error) {
	if e.Session == nil {
		return tape.Ref{}, fmt.Errorf("eager detach: no session")
	}
	return e.Session.Detach(x)
}

// Const records a constant leaf.
func (e *Eager[T]) Const(name string, v spec.Tensor[T]) (tape.Ref, error) {
	if e.Session == nil {
		return tape.Ref{}, fmt.Errorf("eager const %q: no session", name)
	}
	return e.Session.Const(name, v)
}

// RunEager records one parameter leaf per input (named x0, x1, …) in e's
// session and runs prog on them. It returns the result's reference and the
// inputs' references. A panic inside prog is reported as an error.
func RunEager[T spec.Scalar[T]](e *Eager[T], prog Program[T, tape.Ref], inputs ...spec.Tensor[T]) (tape.Ref, []tape.Ref, error) {
	if e == nil || e.Session == nil {
		return tape.Ref{}, nil, fmt.Errorf("run eager: no session")
	}
	if prog == nil {
		return tape.Ref{}, nil, fmt.Errorf("run eager: nil program")
	}
	refs := make([]tape.Ref, len(inputs))
	for i, v := range inputs {
		r, err := e.Session.Param(fmt.Sprintf("x%d", i), v)
		if err != nil {
			return tape.Ref{}, nil, fmt.Errorf("run eager: input %d: %w", i, err)
		}
		refs[i] = r
	}
	out, err := runProgram[T, tape.Ref](prog, e, refs)
	if err != nil {
		return tape.Ref{}, nil, fmt.Errorf("run eager: %w", err)
	}
	return out, refs, nil
}

// runProgram calls a user program, turning a panic inside it (a program
// indexing past its inputs, say) into an error.
func runProgram[T spec.Scalar[T], R any](prog Program[T, R], o Ops[T, R], in []R) (out R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("program panicked: %v", p)
		}
	}()
	return prog(o, in)
}

// ---------------------------------------------------------------------
// The graph interpreter.

// builderTag identifies a Builder; its address is unique while the
// builder lives.
type builderTag struct{ _ byte }

// Var is an SSA variable of a Builder: an entry of the graph being
// recorded (a context input or a node). The zero Var is invalid.
type Var struct {
	owner *builderTag
	id    int
}

// ID is the graph entry id the variable names.
func (v Var) ID() int { return v.id }

// Builder is the graph interpreter of Ops: a reference is a Var, and every
// operation records a node (with its shape inferred from the registry) and
// computes nothing. Declare the context with Input first, run the program,
// and call Finish with the result.
type Builder[T spec.Scalar[T]] struct {
	g        *Graph[T]
	me       *builderTag
	finished bool
}

// NewBuilder returns a builder recording with reg (nil: the reference
// registry).
func NewBuilder[T spec.Scalar[T]](reg *spec.Registry[T]) *Builder[T] {
	g, _ := New[T](reg)
	return &Builder[T]{g: g, me: &builderTag{}}
}

func (b *Builder[T]) usable(what string) error {
	if b == nil || b.g == nil {
		return fmt.Errorf("%s: nil builder", what)
	}
	if b.finished {
		return fmt.Errorf("%s: builder already finished", what)
	}
	return nil
}

// check accepts a variable only if it belongs to this builder.
func (b *Builder[T]) check(v Var, what string, arg int) error {
	if v.owner == nil {
		return fmt.Errorf("%s argument %d: uninitialised variable", what, arg)
	}
	if v.owner != b.me {
		return fmt.Errorf("%s argument %d: variable belongs to a different builder", what, arg)
	}
	if v.id < 0 || v.id >= b.g.Len() {
		return &IDError{ID: v.id, CtxLen: b.g.Len(), Node: b.g.Len(), Op: what, Arg: arg}
	}
	return nil
}

// Input declares the next context input, of shape s, and returns its
// variable. Every input must be declared before the first operation.
func (b *Builder[T]) Input(name string, s spec.Shape) (Var, error) {
	if err := b.usable("input"); err != nil {
		return Var{}, err
	}
	if err := b.g.addInput(name, s); err != nil {
		return Var{}, err
	}
	return Var{owner: b.me, id: b.g.CtxLen() - 1}, nil
}

// Apply records the primitive op over args; the output shape is the
// primitive's inferred shape.
func (b *Builder[T]) Apply(op string, a *spec.Attrs, args ...Var) (Var, error) {
	if err := b.usable(op); err != nil {
		return Var{}, err
	}
	ids := make([]int, len(args))
	for j, v := range args {
		if err := b.check(v, op, j); err != nil {
			return Var{}, err
		}
		ids[j] = v.id
	}
	id, err := b.g.AppendInferred(op, a, ids)
	if err != nil {
		return Var{}, err
	}
	return Var{owner: b.me, id: id}, nil
}

// Detach records a stop-gradient node (the registry's detach primitive).
func (b *Builder[T]) Detach(x Var) (Var, error) { return b.Apply("detach", nil, x) }

// Const records a constant node (see Graph.AppendConst).
func (b *Builder[T]) Const(name string, v spec.Tensor[T]) (Var, error) {
	if err := b.usable("const"); err != nil {
		return Var{}, err
	}
	id, err := b.g.AppendConst(name, v)
	if err != nil {
		return Var{}, err
	}
	return Var{owner: b.me, id: id}, nil
}

// Shape returns the shape of a recorded variable.
func (b *Builder[T]) Shape(v Var) (spec.Shape, error) {
	if b == nil || b.g == nil {
		return nil, fmt.Errorf("shape: nil builder")
	}
	if err := b.check(v, "shape", 0); err != nil {
		return nil, err
	}
	return b.g.Shape(v.id)
}

// Finish selects result as the graph's result and returns the graph. The
// builder cannot record anything afterwards.
func (b *Builder[T]) Finish(result Var) (*Graph[T], error) {
	if err := b.usable("finish"); err != nil {
		return nil, err
	}
	if err := b.check(result, "finish", 0); err != nil {
		return nil, err
	}
	if err := b.g.SetResult(result.id); err != nil {
		return nil, err
	}
	b.finished = true
	return b.g, nil
}

// Trace runs prog under a fresh Builder with one context input per shape
// (named x0, x1, …) and returns the recorded graph, its result set to the
// program's result. A panic inside prog is reported as an error.
func Trace[T spec.Scalar[T]](reg *spec.Registry[T], prog Program[T, Var], shapes ...spec.Shape) (*Graph[T], error) {
	if prog == nil {
		return nil, fmt.Errorf("trace: nil program")
	}
	b := NewBuilder[T](reg)
	vars := make([]Var, len(shapes))
	for i, s := range shapes {
		v, err := b.Input(fmt.Sprintf("x%d", i), s)
		if err != nil {
			return nil, fmt.Errorf("trace: %w", err)
		}
		vars[i] = v
	}
	out, err := runProgram[T, Var](prog, b, vars)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	g, err := b.Finish(out)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return g, nil
}

// Compile-time checks that both interpreters implement Ops.
var (
	_ Ops[spec.Rat, tape.Ref] = (*Eager[spec.Rat])(nil)
	_ Ops[spec.Rat, Var]      = (*Builder[spec.Rat])(nil)
)
