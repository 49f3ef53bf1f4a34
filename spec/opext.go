package spec

import (
	"fmt"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
)

// Registered elementwise primitives.
//
// Go has no generic function values, so a rule written once cannot be
// stored and later run over Rat, F32, F64, Binary32, Interval and nested
// Dual[...] alike. An elementwise primitive added with RegisterElementwise
// therefore states its rules as data: an Expr over the Scalar methods,
// built from X (the input element), Y (the forward output, for derivative
// rules), rational constants and the operations + − × ÷, neg, abs, relu,
// step, sign, max, min, sqrt, exp, log, tanh, sin and cos. The registry
// evaluates the expression generically for every scalar it instantiates,
// so the one entry serves every execution path: the tape, the typed graph
// (whose nodes run the registry's rules), the IR (when the entry has an
// IR form), the obligations (whose generic generators draw it from its
// GenHint), the certificates and the providers' reference capsules.
//
// The forward rule is y = F(x) elementwise; the derivative rule
// D(x, y) = f′(x) gives the diagonal Jacobian, so JVP(x, dx) = D ⊙ dx and
// VJP(x, δ) = D ⊙ δ, exactly the construction of the built-in unary
// primitives. Over Dual[T] the expression is evaluated with Dual
// arithmetic, so forward-over-reverse derivatives of a registered op are
// exact where its operations are.

// Expr is a scalar expression in X and Y. The zero Expr is invalid; build
// expressions with X, Y, Num and the methods.
type Expr struct{ n *exprNode }

type exprNode struct {
	op   string // "x", "y", "const", or an operation name
	args []*exprNode
	c    *big.Rat // const: the value (never shared with a scalar: FromRat copies)
}

// X is the input element.
func X() Expr { return Expr{&exprNode{op: "x"}} }

// Y is the forward output at the input element; only derivative rules may
// use it.
func Y() Expr { return Expr{&exprNode{op: "y"}} }

// Num is the exact rational constant num/den (den ≠ 0; a zero den gives
// an invalid expression that RegisterElementwise rejects).
func Num(num, den int64) Expr {
	if den == 0 {
		return Expr{&exprNode{op: "invalid"}}
	}
	return Expr{&exprNode{op: "const", c: big.NewRat(num, den)}}
}

func (e Expr) un(op string) Expr { return Expr{&exprNode{op: op, args: []*exprNode{e.n}}} }
func (e Expr) bin(op string, f Expr) Expr {
	return Expr{&exprNode{op: op, args: []*exprNode{e.n, f.n}}}
}

// Add is e + f.
func (e Expr) Add(f Expr) Expr { return e.bin("add", f) }

// Sub is e − f.
func (e Expr) Sub(f Expr) Expr { return e.bin("sub", f) }

// Mul is e · f.
func (e Expr) Mul(f Expr) Expr { return e.bin("mul", f) }

// Div is e / f (an error over Rat where f is an exact zero).
func (e Expr) Div(f Expr) Expr { return e.bin("div", f) }

// Max is max(e, f).
func (e Expr) Max(f Expr) Expr { return e.bin("max", f) }

// Min is min(e, f).
func (e Expr) Min(f Expr) Expr { return e.bin("min", f) }

// Neg is −e.
func (e Expr) Neg() Expr { return e.un("neg") }

// Abs is |e|.
func (e Expr) Abs() Expr { return e.un("abs") }

// Relu is max(e, 0).
func (e Expr) Relu() Expr { return e.un("relu") }

// Step is 1 where e > 0, else 0.
func (e Expr) Step() Expr { return e.un("step") }

// Sign is −1, 0 or 1.
func (e Expr) Sign() Expr { return e.un("sign") }

// Sqrt is √e (an error over Rat for a non-square).
func (e Expr) Sqrt() Expr { return e.un("sqrt") }

// Exp is e^e (no exact rational semantics).
func (e Expr) Exp() Expr { return e.un("exp") }

// Log is ln e (no exact rational semantics).
func (e Expr) Log() Expr { return e.un("log") }

// Tanh is tanh e (no exact rational semantics).
func (e Expr) Tanh() Expr { return e.un("tanh") }

// Sin is sin e (no exact rational semantics).
func (e Expr) Sin() Expr { return e.un("sin") }

// Cos is cos e (no exact rational semantics).
func (e Expr) Cos() Expr { return e.un("cos") }

// exprArity is the number of arguments of each operation.
var exprArity = map[string]int{
	"x": 0, "y": 0, "const": 0,
	"add": 2, "sub": 2, "mul": 2, "div": 2, "max": 2, "min": 2,
	"neg": 1, "abs": 1, "relu": 1, "step": 1, "sign": 1,
	"sqrt": 1, "exp": 1, "log": 1, "tanh": 1, "sin": 1, "cos": 1,
}

// String is the canonical spelling: add(x,mul(3,y)), constants as p/q.
func (e Expr) String() string {
	var b strings.Builder
	writeExpr(&b, e.n)
	return b.String()
}

func writeExpr(b *strings.Builder, n *exprNode) {
	switch {
	case n == nil:
		b.WriteString("<nil>")
	case n.op == "const":
		b.WriteString(n.c.RatString())
	case len(n.args) == 0:
		b.WriteString(n.op)
	default:
		b.WriteString(n.op + "(")
		for i, a := range n.args {
			if i > 0 {
				b.WriteByte(',')
			}
			writeExpr(b, a)
		}
		b.WriteByte(')')
	}
}

// exprUses reports which operations and variables an expression uses,
// or an error naming the first malformed node.
func exprUses(n *exprNode, uses map[string]bool) error {
	if n == nil {
		return fmt.Errorf("empty expression")
	}
	k, ok := exprArity[n.op]
	if !ok {
		return fmt.Errorf("unknown operation %q", n.op)
	}
	if len(n.args) != k {
		return fmt.Errorf("%s takes %d arguments, got %d", n.op, k, len(n.args))
	}
	uses[n.op] = true
	for _, a := range n.args {
		if err := exprUses(a, uses); err != nil {
			return err
		}
	}
	return nil
}

// polyDegree is the degree in x of a polynomial expression (one built from
// x, constants, +, −, × and neg): an upper bound, exact unless terms
// cancel.
func polyDegree(n *exprNode) int {
	switch n.op {
	case "x":
		return 1
	case "const":
		return 0
	case "mul":
		return polyDegree(n.args[0]) + polyDegree(n.args[1])
	case "add", "sub":
		return max(polyDegree(n.args[0]), polyDegree(n.args[1]))
	}
	return polyDegree(n.args[0]) // neg
}

// evalExpr evaluates n at input x with forward output y, over any scalar.
func evalExpr[T Scalar[T]](n *exprNode, x, y T) (T, error) {
	switch n.op {
	case "x":
		return x, nil
	case "y":
		return y, nil
	case "const":
		return x.FromRat(n.c), nil
	}
	a, err := evalExpr(n.args[0], x, y)
	if err != nil {
		return a, err
	}
	if len(n.args) == 2 {
		b, err := evalExpr(n.args[1], x, y)
		if err != nil {
			return b, err
		}
		switch n.op {
		case "add":
			return a.Add(b), nil
		case "sub":
			return a.Sub(b), nil
		case "mul":
			return a.Mul(b), nil
		case "div":
			return a.Div(b)
		case "max":
			return a.Max(b), nil
		case "min":
			return a.Min(b), nil
		}
	}
	switch n.op {
	case "neg":
		return a.Neg(), nil
	case "abs":
		return a.Abs(), nil
	case "relu":
		return a.Relu(), nil
	case "step":
		return a.Step(), nil
	case "sign":
		return a.Sign(), nil
	case "sqrt":
		return a.Sqrt()
	case "exp":
		return a.Exp()
	case "log":
		return a.Log()
	case "tanh":
		return a.Tanh()
	case "sin":
		return a.Sin()
	case "cos":
		return a.Cos()
	}
	return a, fmt.Errorf("unknown operation %q", n.op) // unreachable after validation
}

// ElementwiseOp is a unary elementwise primitive stated as data, for
// RegisterElementwise.
type ElementwiseOp struct {
	// Info holds the primitive's facts: Name and Doc, and Exact, Smooth,
	// Ties, Partial, ZeroPreserving, Polynomial, IR, Gen and Providers as
	// for any primitive (each documented on OpInfo). Registration sets the
	// arity to 1, the shape rule to "same shape" and Rule; Attrs, Shape,
	// NoGrad, Linear, Accumulates and Rule must be left zero.
	Info OpInfo
	// F is the forward rule y = F(x); it may not use Y.
	F Expr
	// D is the derivative rule f′(x), in X and Y.
	D Expr
}

var (
	extMu      sync.Mutex
	extensions []ElementwiseOp
	generation atomic.Uint64
)

// Generation counts the primitives added by RegisterElementwise. Packages
// that cache a table derived from Infos key it by Generation, so that a
// registration reaches them.
func Generation() uint64 { return generation.Load() }

// transcendental are the Expr operations without exact rational
// semantics.
var transcendental = []string{"exp", "log", "tanh", "sin", "cos"}

// RegisterElementwise adds a unary elementwise primitive to the reference
// registry of every scalar: the one place a new elementwise op is
// written. It is meant for init functions and TestMain, before the
// registry is used concurrently: it is safe against concurrent
// registrations, but not against concurrent use of Default or Infos. It
// drops the cached registries (a later Default builds them with the new
// primitive; registries obtained earlier keep their old contents) and
// advances Generation.
//
// It checks the entry and rejects, naming the field: an empty or unsafe
// name or IR tag (the certificate alphabet is [a-z0-9_]), a name, IR tag
// or graph place already taken, set fields that registration owns, an IR
// form with attributes, payload or another arity, providers (none has a
// kernel for it), a malformed expression,
// F using Y, Exact with a transcendental operation, Polynomial with an
// operation other than + − × neg and constants or without Exact, a
// Gen.Power other than the forward rule's degree (registration computes
// it for a Polynomial op), Ties set on a smooth op or missing on a
// non-smooth one, ZeroPreserving with a derivative that divides or uses
// exp or log, or Partial unset although an Exact rule divides or takes a
// square root.
func RegisterElementwise(op ElementwiseOp) error {
	op, err := checkElementwise(op)
	if err != nil {
		return err
	}
	info := op.Info
	name := info.Name
	var bad badField = func(field, format string, args ...any) error {
		return fmt.Errorf("spec: RegisterElementwise %s: field %s: %s", name, field, fmt.Sprintf(format, args...))
	}
	extMu.Lock()
	defer extMu.Unlock()
	taken := make([]*OpInfo, 0, 64)
	for _, p := range builtinPrims[F64]() {
		taken = append(taken, p.OpInfo)
	}
	for i := range extensions {
		taken = append(taken, &extensions[i].Info)
	}
	for _, o := range taken {
		if o.Name == name {
			return bad("Name", "primitive %q is already registered", name)
		}
		if info.IR != nil && o.IR != nil && o.IR.Tag == info.IR.Tag {
			return bad("IR.Tag", "tag %q is already the IR form of %s", info.IR.Tag, o.Name)
		}
		if info.Gen.Graph > 0 && o.Gen.Graph == info.Gen.Graph {
			return bad("Gen.Graph", "graph place %d is already %s's", info.Gen.Graph, o.Name)
		}
	}
	extensions = append(extensions, op)
	registries.Clear()
	generation.Add(1)
	return nil
}

// checkElementwise checks an entry on its own (RegisterElementwise also
// checks it against the registered ones) and returns it completed with
// Rule and, for a Polynomial op, Gen.Power.
func checkElementwise(op ElementwiseOp) (ElementwiseOp, error) {
	info := op.Info
	name := info.Name
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return op, fmt.Errorf("spec: RegisterElementwise: Name %q must be non-empty [a-z0-9_]", name)
	}
	var bad badField = func(field, format string, args ...any) error {
		return fmt.Errorf("spec: RegisterElementwise %s: field %s: %s", name, field, fmt.Sprintf(format, args...))
	}
	switch {
	case len(info.Attrs) > 0:
		return op, bad("Attrs", "a registered elementwise op takes no attributes")
	case info.Shape != nil:
		return op, bad("Shape", "the shape rule is set by registration")
	case info.NoGrad, info.Linear, info.Accumulates:
		return op, bad("NoGrad/Linear/Accumulates", "must be false for a registered elementwise op")
	case info.Rule != "":
		return op, bad("Rule", "is set by registration")
	case info.MinArity != 0 || info.MaxArity != 0:
		return op, bad("MinArity/MaxArity", "the arity is 1, set by registration")
	}
	fu, du := map[string]bool{}, map[string]bool{}
	if err := exprUses(op.F.n, fu); err != nil {
		return op, bad("F", "%v", err)
	}
	if err := exprUses(op.D.n, du); err != nil {
		return op, bad("D", "%v", err)
	}
	if fu["y"] {
		return op, bad("F", "the forward rule may not use Y")
	}
	if info.Smooth == (info.Ties != "") {
		return op, bad("Ties", "a non-smooth op states its tie convention and a smooth one has none (Smooth %v, Ties %q)", info.Smooth, info.Ties)
	}
	if info.ZeroPreserving {
		for _, u := range []string{"div", "exp", "log"} {
			if du[u] {
				return op, bad("ZeroPreserving", "the derivative uses %s, which reaches ∞ at finite inputs over floats (∞·0 = NaN)", u)
			}
		}
	}
	if info.Exact {
		for _, t := range transcendental {
			if fu[t] || du[t] {
				return op, bad("Exact", "the rules use %s, which has no exact rational semantics", t)
			}
		}
		if !info.Partial && (fu["div"] || du["div"] || fu["sqrt"] || du["sqrt"]) {
			return op, bad("Partial", "an exact rule that divides or takes a square root may fail on data; set Partial")
		}
	}
	if err := checkPolynomial(&op, fu, bad); err != nil {
		return op, err
	}
	if err := checkElementwiseIR(info.IR, bad); err != nil {
		return op, err
	}
	if len(info.Providers) > 0 {
		return op, bad("Providers", "no provider has a kernel for a registered op; the reference provider runs it")
	}
	op.Info.Rule = "f(x)=" + op.F.String() + ";df(x,y)=" + op.D.String()
	return op, nil
}

// A badField reports a field of an entry that RegisterElementwise refuses.
type badField func(field, format string, args ...any) error

// checkPolynomial checks a Polynomial entry — Exact, not Partial, a
// forward rule of x, constants, +, −, × and negation only — and sets its
// Gen.Power to the forward rule's degree; fu is the set the forward rule
// uses. Only a Polynomial entry may state Gen.Power.
func checkPolynomial(op *ElementwiseOp, fu map[string]bool, bad badField) error {
	info := op.Info
	if !info.Polynomial {
		if info.Gen.Power != 0 {
			return bad("Gen.Power", "only a Polynomial op has a degree")
		}
		return nil
	}
	if !info.Exact || info.Partial {
		return bad("Polynomial", "a polynomial op is Exact and not Partial")
	}
	for u := range fu {
		switch u {
		case "x", "const", "add", "sub", "mul", "neg":
		default:
			return bad("Polynomial", "the forward rule uses %s", u)
		}
	}
	d := polyDegree(op.F.n)
	if info.Gen.Power != 0 && info.Gen.Power != d {
		return bad("Gen.Power", "%d, but the forward rule has degree %d", info.Gen.Power, d)
	}
	op.Info.Gen.Power = d
	return nil
}

// checkElementwiseIR checks a registered elementwise op's IR tag, when it
// has one: a [a-z0-9_] name, no attributes or payload, one parent.
func checkElementwiseIR(ir *IRForm, bad badField) error {
	if ir == nil {
		return nil
	}
	switch {
	case ir.Tag == "" || strings.Trim(ir.Tag, "abcdefghijklmnopqrstuvwxyz0123456789_") != "":
		return bad("IR.Tag", "tag %q must be non-empty [a-z0-9_]", ir.Tag)
	case len(ir.Attrs) > 0 || len(ir.Params) > 0 || len(ir.Required) > 0:
		return bad("IR.Attrs/Params", "the tag of a registered elementwise op has no attributes or payload")
	case !(ir.MinArity == 0 && ir.MaxArity == 0) && !(ir.MinArity == 1 && ir.MaxArity == 1):
		return bad("IR.MinArity/MaxArity", "the tag takes the primitive's one parent")
	}
	return nil
}

// cloneInfo copies an entry's facts so that every scalar's registry holds
// its own (no slice is shared).
func cloneInfo(o *OpInfo) *OpInfo {
	c := *o
	c.Attrs = append([]string(nil), o.Attrs...)
	c.Providers = append([]string(nil), o.Providers...)
	if o.IR != nil {
		ir := *o.IR
		ir.Attrs = append([]string(nil), o.IR.Attrs...)
		ir.Params = append([]string(nil), o.IR.Params...)
		ir.Required = append([]string(nil), o.IR.Required...)
		c.IR = &ir
	}
	return &c
}

// extPrims instantiates the registered elementwise primitives over T.
func extPrims[T Scalar[T]]() []*Prim[T] {
	extMu.Lock()
	ops := append([]ElementwiseOp(nil), extensions...)
	extMu.Unlock()
	out := make([]*Prim[T], 0, len(ops))
	for i := range ops {
		f, d := ops[i].F.n, ops[i].D.n
		out = append(out, unaryPrim[T](cloneInfo(&ops[i].Info),
			func(_ *Attrs, x T) (T, error) { return evalExpr(f, x, x) },
			func(_ *Attrs, x, y T) (T, error) { return evalExpr(d, x, y) }))
	}
	return out
}

// allPrims lists every primitive: the built-in ones in the order of the
// semantics table, then the registered elementwise ones in registration
// order.
func allPrims[T Scalar[T]]() []*Prim[T] {
	return append(builtinPrims[T](), extPrims[T]()...)
}
