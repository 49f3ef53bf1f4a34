package spec

import (
	"fmt"
	"strings"
)

// This file holds the types of the per-op facts that OpInfo carries
// besides its rules: how the primitive appears in the canonical IR, how
// the obligation generators draw it, and which providers implement it.
// Every other package derives its per-op tables from these fields (see
// the README's "Packages" section for the list).

// Domain constrains the values a generator draws for one parent of a
// primitive, so that an exact rule is defined on the draw.
type Domain int

// The domains.
const (
	// DomainAny is any small rational.
	DomainAny Domain = iota
	// DomainPositive is strictly positive (raw log).
	DomainPositive
	// DomainSquare is the square of a small rational (so sqrt is exact
	// over Rat).
	DomainSquare
	// DomainNonZero excludes exact zero (divisors, inv).
	DomainNonZero
)

// String names the domain.
func (d Domain) String() string {
	switch d {
	case DomainAny:
		return "any"
	case DomainPositive:
		return "positive"
	case DomainSquare:
		return "square"
	case DomainNonZero:
		return "nonzero"
	}
	return fmt.Sprintf("domain(%d)", int(d))
}

// DegreeRule says how a primitive combines the polynomial degrees of its
// parents, for generators that bound the degree of polynomial programs.
type DegreeRule int

// The degree rules.
const (
	// DegreeMax: the larger parent degree (a unary op keeps its parent's
	// degree): add, sub, max, min, every linear op.
	DegreeMax DegreeRule = iota
	// DegreeSum: the sum of the parent degrees (mul, matmul, div).
	DegreeSum
	// DegreeDouble: twice the larger parent degree (square, mse_loss).
	DegreeDouble
)

// Combine returns the degree of the output for parent degrees a and b (a
// unary op passes its parent's degree as both).
func (r DegreeRule) Combine(a, b int) int {
	switch r {
	case DegreeSum:
		return a + b
	case DegreeDouble:
		return 2 * max(a, b)
	}
	return max(a, b)
}

// String names the rule.
func (r DegreeRule) String() string {
	switch r {
	case DegreeMax:
		return "max"
	case DegreeSum:
		return "sum"
	case DegreeDouble:
		return "double"
	}
	return fmt.Sprintf("degree(%d)", int(r))
}

// GenHint tells the obligation generators how to draw an application of
// the primitive. A primitive with fixed arity 1 or 2 and no attributes is
// drawn generically from these hints alone (equal parent shapes of rank ≤
// 3); the others also need a structural generator in package obligations,
// and a test there requires one for each.
type GenHint struct {
	// Domain constrains the values of one parent: the last parent of a
	// binary primitive (the divisor), the only parent of a unary one.
	Domain Domain
	// Degree combines the parents' polynomial degrees (meaningful for
	// Polynomial primitives; others pass their parent's degree on).
	Degree DegreeRule
	// Power, when positive, says that the primitive is unary and its
	// output a polynomial of degree Power in its input, so a parent of
	// degree d gives degree Power·d; it overrides Degree.
	// RegisterElementwise computes it from a Polynomial forward rule.
	Power int
	// Graph is the primitive's place in the random-graph generator's op
	// table, simplest first (shrinking moves an op choice toward the
	// first); 0 keeps the primitive out of random graphs. Places are
	// distinct.
	Graph int
}

// Combine returns the output degree for parent degrees a and b (a unary
// op passes its parent's degree as both): Power·max(a, b) when Power is
// set, else the Degree rule.
func (h GenHint) Combine(a, b int) int {
	if h.Power > 0 {
		return h.Power * max(a, b)
	}
	return h.Degree.Combine(a, b)
}

// IRForm is how a primitive appears in the canonical IR
// (torchlean.ir.v1): its tag and the tag's own arity, wire attributes and
// payload parameters, which may differ from the primitive's (linear reads
// W and b from the payload; safe_log takes ε as a second parent).
type IRForm struct {
	// Tag is the IR tag.
	Tag string
	// MinArity and MaxArity bound the tag's parent count (MaxArity -1:
	// unbounded). Both zero in an entry mean the primitive's own arity;
	// the registry fills them in when it is built.
	MinArity, MaxArity int
	// Attrs lists the wire attribute fields of the tag, in canonical
	// order; each is an IR attribute declared in AttrSpecs.
	Attrs []string
	// Params lists the payload parameters the tag accepts, and Required
	// the subset that must be present.
	Params, Required []string
	// Doc describes the tag; "" means the primitive's Doc.
	Doc string
	// Superset marks a tag of tlcheck's own IR superset, one that
	// TorchLean's torchlean.ir.v1 does not have (added for imported
	// models: conv_transpose, pad, gather, …). A graph that uses one is a
	// tlcheck.ir.v1 document; exporting it as torchlean.ir.v1 is refused
	// by name (package irsem).
	Superset bool
}

// ProviderFastCPU names the fast float32 CPU provider in OpInfo.Providers.
const ProviderFastCPU = "fast_cpu"

// LinearJac is OpInfo.LinearIn: the output y is linear in parent X with
// the Jacobian read off parent Matrix. With x = parent X viewed as rows ×
// inner (inner its last axis), y as rows × out and M = parent Matrix as
// the row-major out × inner matrix,
//
//	y[r, j] = Σ_k M[j, k]·x[r, k] + (terms free of x),
//
// so ∂y[r, j]/∂x[r′, k] = [r = r′]·M[j, k]: the Jacobian with respect to x
// is block diagonal, each of its rows blocks M itself, and it depends on
// no parent but Matrix. The VJP rule's contribution to X for the one-hot
// cotangent e_{r,j} is then row (r, j) of that Jacobian (over Rat exactly;
// over a scalar whose 0·v and 0 + v are exact, such as fpbound's interval
// adjoints, M[j, k]·1 entry for entry).
//
// InnerOut: Matrix is instead the row-major inner × out matrix (y = x·M,
// M[k, j] the coefficient of x[r, k] in y[r, j]), and the fact holds only
// where Matrix has at most two axes (a 1-D Matrix is inner × 1): a
// batched Matrix is not one block repeated.
type LinearJac struct {
	X, Matrix int
	InnerOut  bool
}

// fill completes an entry's IR form from the primitive's own facts.
func (f *IRForm) fill(o *OpInfo) {
	if f.MinArity == 0 && f.MaxArity == 0 {
		f.MinArity, f.MaxArity = o.MinArity, o.MaxArity
	}
	if f.Doc == "" {
		f.Doc = o.Doc
	}
}

// factString is the canonical spelling of an entry's facts for
// RegistryHash: every field that a consumer derives a table from.
func (o *OpInfo) factString() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%d|%d|%s|exact=%t|nograd=%t|linear=%t|smooth=%t|partial=%t|zp=%t|poly=%t|acc=%t|ties=%q",
		o.Name, o.MinArity, o.MaxArity, strings.Join(o.Attrs, ","), o.Exact, o.NoGrad, o.Linear, o.Smooth,
		o.Partial, o.ZeroPreserving, o.Polynomial, o.Accumulates, o.Ties)
	if o.IR != nil {
		fmt.Fprintf(&b, "|ir=%s,%d,%d,%s,%s,%s,superset=%t", o.IR.Tag, o.IR.MinArity, o.IR.MaxArity,
			strings.Join(o.IR.Attrs, ","), strings.Join(o.IR.Params, ","), strings.Join(o.IR.Required, ","), o.IR.Superset)
	}
	fmt.Fprintf(&b, "|gen=%s,%s,%d,%d|providers=%s", o.Gen.Domain, o.Gen.Degree, o.Gen.Power, o.Gen.Graph, strings.Join(o.Providers, ","))
	if o.Rule != "" {
		fmt.Fprintf(&b, "|rule=%s", o.Rule)
	}
	return b.String()
}

// HasProvider reports whether the named non-reference provider implements
// the primitive.
func (o *OpInfo) HasProvider(name string) bool {
	for _, p := range o.Providers {
		if p == name {
			return true
		}
	}
	return false
}

// IRTag returns the primitive's IR tag, or "" when it has none.
func (o *OpInfo) IRTag() string {
	if o.IR == nil {
		return ""
	}
	return o.IR.Tag
}
