// Package counterexample holds the one record of a case on which a law or
// a contract provably fails: the counterexample that every checker of the
// tree returns, whether it decided a local law of a primitive
// (obligations: adjointness ⟨jvp(x,dx), δ⟩ = ⟨dx, vjp(x,δ)⟩, linearity,
// zero preservation, the derivative), a graph-level law (obligations: the
// composition theorem, path sums, sweep and cross-path agreement, interval
// soundness; diffrun: every execution path of one IR graph agrees), a
// user's op under check.Find (which adds the seed and case that reproduce
// it), or a provider's kernel against the exact semantics within a proven
// rounding bound (refine).
//
// A Failure is a verdict "fails", so it carries what makes the verdict
// checkable by hand: the law and the oracle that decided it, the op, the
// element where the two sides differ, both sides as exact rationals (or
// the provider's encoding and the bound it exceeds), and the exact inputs.
// Its text is the one line the command line prints.
package counterexample

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// Failure is a counterexample: which law failed for which op, where, on
// which exact inputs. Four kinds share it, told apart by the fields set:
//
//   - a law's failure (Law and Oracle set, Provider ""): LHS ≠ RHS exactly
//     (oracle "rat") or as disjoint enclosures (the interval oracles), at
//     Element of the result, on Inputs (with Attrs, tangents Dx and
//     cotangent Delta where the law has them);
//   - a graph law's failure (Oracle "", Provider ""): the two Sides
//     compared over Scalar differ at Node (with its Op; −1 for the whole
//     graph) and Element, LHS ≠ RHS, on the Graph and its Inputs, Extra
//     holding further exact data;
//   - a refinement failure (Provider set): the provider's encoding Got of
//     Element in case Case (input kind Kind) breaks Law, the refinement
//     rule of the capsule (|Got − exact| = AbsError > Bound for the bound
//     rule), and Detail says why; Element −1 when the provider failed;
//   - an ill-formed case (Err set, Law ""): no law's verdict but a rule
//     that failed on data it should accept.
//
// Seed and Case locate the case that found it where a search drew it
// (check.Find; Case −1 under rapid, whose replay line locates it).
type Failure struct {
	// Law is the law (an obligation such as "adjointness") or the
	// refinement rule (such as "bound") that fails.
	Law string
	// Op is the primitive concerned.
	Op string
	// Oracle names how the law was decided ("rat", "interval", …).
	Oracle string
	// Element is the first differing element (row-major), or −1 for a
	// scalar law or a provider that failed outright.
	Element int
	// Inputs are the case's exact inputs, Attrs its attributes as printed
	// ("" when the op has none), Dx the tangents and Delta the cotangent
	// (nil / zero when the law has none).
	Inputs []spec.Tensor[spec.Rat]
	Attrs  string
	Dx     []spec.Tensor[spec.Rat]
	Delta  spec.Tensor[spec.Rat]
	// LHS and RHS are the two sides that differ; Detail says more (for a
	// refinement failure, the full reason).
	LHS, RHS string
	Detail   string

	// Node is the graph law's node (an entry id or an IR node id), −1 for
	// a law about the whole graph that could not be localized; Sides names
	// what was compared ("tape vs typed-graph"), Scalar the scalar it ran
	// over, Graph the generated graph as printed ("" when none), Extra
	// further exact data (tangents, seed), already printed.
	Node   int
	Sides  string
	Scalar string
	Graph  string
	Extra  string

	// Provider and Capsule are the kernel a refinement failure convicts,
	// Kind the family of its generated inputs, Got its binary32 encoding
	// of Element, AbsError and Bound |provider − exact| and the bound.
	Provider, Capsule string
	Kind              string
	Got               uint32
	AbsError, Bound   spec.Rat

	// Seed and Case locate the case in a seeded search (refine's Case is
	// the case index of its run).
	Seed uint64
	Case int

	// Err is the error of an ill-formed case (nil for a law's failure).
	Err error
}

// Error prints the counterexample on one line. A law's failure reads
//
//	adjointness fails for mul (oracle rat) at element 1: 3 ≠ 4 (detail); inputs (…) attrs {…} dx (…) δ …
//
// a refinement failure
//
//	refine: sum on provider fast_cpu (capsule fast_cpu.sum), case 3 (wide), element 0: reason
//
// a graph law's failure a first line with the place and both sides, then
// the graph, the inputs and the extra data,
//
//	cross-path fails at node 2 (exp) element 0 over f32 [tape vs typed-graph]: 1 ≠ 2
//	graph:
//	…
//	inputs: (…)
//
// and an ill-formed case its error.
func (f *Failure) Error() string {
	switch {
	case f.Provider != "":
		return f.refinement()
	case f.Law == "" && f.Err != nil:
		return f.Err.Error()
	case f.Oracle == "":
		return f.graph()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s fails for %s (oracle %s)", f.Law, f.Op, f.Oracle)
	if f.Element >= 0 {
		fmt.Fprintf(&b, " at element %d", f.Element)
	}
	fmt.Fprintf(&b, ": %s ≠ %s", f.LHS, f.RHS)
	if f.Detail != "" {
		fmt.Fprintf(&b, " (%s)", f.Detail)
	}
	if f.Inputs != nil {
		fmt.Fprintf(&b, "; inputs %s", FormatTensors(f.Inputs))
		if f.Attrs != "" {
			fmt.Fprintf(&b, " attrs %s", f.Attrs)
		}
	}
	if f.Dx != nil {
		fmt.Fprintf(&b, " dx %s", FormatTensors(f.Dx))
	}
	if f.Delta.Shape != nil {
		fmt.Fprintf(&b, " δ %s", f.Delta)
	}
	return b.String()
}

// graph prints a graph law's failure.
func (f *Failure) graph() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s fails", f.Law)
	if f.Node >= 0 {
		fmt.Fprintf(&b, " at node %d (%s)", f.Node, f.Op)
	}
	if f.Element >= 0 {
		fmt.Fprintf(&b, " element %d", f.Element)
	}
	if f.Scalar != "" {
		fmt.Fprintf(&b, " over %s", f.Scalar)
	}
	if f.Sides != "" {
		fmt.Fprintf(&b, " [%s]", f.Sides)
	}
	fmt.Fprintf(&b, ": %s ≠ %s", f.LHS, f.RHS)
	if f.Detail != "" {
		fmt.Fprintf(&b, " (%s)", f.Detail)
	}
	if f.Graph != "" {
		fmt.Fprintf(&b, "\ngraph:\n%s", f.Graph)
	}
	if f.Inputs != nil {
		fmt.Fprintf(&b, "\ninputs: %s", FormatTensors(f.Inputs))
	}
	if f.Extra != "" {
		fmt.Fprintf(&b, "\n%s", f.Extra)
	}
	return b.String()
}

// refinement prints a refinement failure: op, provider, capsule, case,
// element and the reason.
func (f *Failure) refinement() string {
	where := fmt.Sprintf("case %d (%s)", f.Case, f.Kind)
	if f.Element >= 0 {
		where += fmt.Sprintf(", element %d", f.Element)
	}
	return fmt.Sprintf("refine: %s on provider %s (capsule %s), %s: %s", f.Op, f.Provider, f.Capsule, where, f.Detail)
}

// Unwrap returns the error of an ill-formed case.
func (f *Failure) Unwrap() error { return f.Err }

// FormatTensors prints exact tensors as "(t1, t2, …)".
func FormatTensors(ts []spec.Tensor[spec.Rat]) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// TensorDiff returns the graph law's counterexample at the first element
// where lhs and rhs differ under same (the two sides compared over T, at
// node with op), or nil when they agree; differing shapes are element −1
// with the shapes as the two sides.
func TensorDiff[T spec.Scalar[T]](law, sides string, node int, op string, lhs, rhs spec.Tensor[T], same func(a, b T) bool) *Failure {
	i, ok := spec.FirstDiff(lhs, rhs, same)
	switch {
	case ok:
		return nil
	case i < 0:
		return &Failure{Law: law, Sides: sides, Scalar: spec.KindOf[T](), Node: node, Op: op, Element: -1,
			LHS: "shape " + lhs.Shape.String(), RHS: "shape " + rhs.Shape.String()}
	}
	return &Failure{Law: law, Sides: sides, Scalar: spec.KindOf[T](), Node: node, Op: op, Element: i,
		LHS: lhs.Data[i].String(), RHS: rhs.Data[i].String()}
}
