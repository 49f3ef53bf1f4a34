// Package obligations states and checks the local proof obligations of
// every primitive in the spec registry — adjointness ⟨jvp(x,dx), δ⟩ =
// ⟨dx, vjp(x,δ)⟩, linearity of the JVP in dx and of the VJP in δ, and zero
// preservation — exactly over Rat where the primitive has exact rational
// semantics, and with an interval oracle where it does not; every
// primitive with a derivative also owes the derivative obligation — its
// JVP rule against the derivative of its forward rule — decided for exact
// primitives over Dual[Rat] with == plus Clarke-set membership
// (CheckDerivativeExact, whose doc holds the theorem) and for the others
// by the derivative oracle below; and every primitive owes the fast-path
// obligation (FastPath: its F64 and F32 rules bit-identical to the generic
// rule). The same code serves the rapid harnesses (rapidtests/), the
// `tlcheck check` command and the certificates. The cases come from
// package casegen (instances, tangents, boxes and random graphs); this
// package holds the laws.
//
// An interval enclosure of infinite width decides nothing: a case that
// would be decided through one is inconclusive. A domain error over Rat
// on a primitive declared total over the rationals (Exact, not Partial)
// is a failure of that primitive, never a fallback to intervals.
//
// # Verdicts
//
// A check reports "fails" only with a proof that the rule is wrong (an
// exact inequality, or two disjoint enclosures of quantities the law says
// are equal), and "holds" only with a bound that is a theorem (exact
// equality, or overlapping enclosures: the two sides are within the sum of
// the enclosure widths). A case no oracle can decide soundly is
// inconclusive (OracleInconclusive): reported in Result.Oracles, neither a
// failure nor a decided case, and an obligation decided on no case does
// not hold.
//
// # The derivative oracle
//
// Adjointness and linearity cannot tell a consistently wrong derivative
// (the same wrong Jacobian in JVP and VJP) from a right one, so for a
// primitive f without exact rational semantics CheckDerivative compares
// the JVP rule with the derivative of the forward rule, at an exact case
// point x with tangent dx (rationals from the generators).
//
// Definitions. T(x, dx) is the tangent part of the forward rule evaluated
// over real dual numbers x + dx·ε with spec.Dual's rules: the chain rule
// of + − × ÷, exp, log, tanh, sin, cos, sqrt, and spec.Dual's conventions
// for the non-smooth choices (abs′(0) = 0, relu′(0) = 0, max/min ties
// average the tangents, clamp and sqrt as documented there), each choice
// decided on the real primal. Where every operation on the way is
// differentiable at its argument — for every Smooth primitive away from
// the branch points of its rule — T(x, dx) = f′(x)·dx by the chain rule;
// the max that shifts a softmax lane is not differentiable at a tie, but
// the lane's result does not depend on the shift, so any tangent of the
// shift, the tie average included, gives f′(x)·dx. At a kink of a
// non-smooth primitive T is the registry's convention, which is what its
// JVP must implement. J(x, dx) is the JVP rule evaluated over the reals.
// The obligation is J(x, dx) = T(x, dx).
//
// Enclosures. Both sides are evaluated over DualInterval, a spec.Dual
// over spec.Interval, from the enclosures [x] ∋ x and [dx] ∋ dx that
// spec.Interval.FromRat returns: D is the tangent part of the forward rule
// at [x] + [dx]·ε; J is the primal part of the JVP rule at [x], [dx] and
// the forward value's enclosure (tangent parts zero, so this is the JVP
// rule over intervals).
//
// Theorem. If neither evaluation recorded an undecided choice, then
// T(x, dx) ∈ D and J(x, dx) ∈ J, element by element. Hence D ∩ J = ∅ in
// some element proves J(x, dx) ≠ T(x, dx): the JVP rule is wrong there
// ("fails"); and D ∩ J ≠ ∅ in every element proves |J(x, dx) − T(x, dx)| ≤
// width(D) + width(J) element by element ("holds" within that bound).
//
// Proof, by induction along either evaluation: every input enclosure
// contains its real value; every spec.Interval operation applied to
// enclosures of reals returns an enclosure of the real result (the
// soundness statement of spec.Interval), and spec.Dual's tangent of each
// operation is a composition of such operations on enclosures of the real
// primal and tangent, so it encloses the real tangent. A choice (Compare,
// Max, Min, Abs, Relu, Sign, Step, Sqrt, Clamp) is either decided — exactly
// when both primals are exact rationals (the inputs and constants, see
// DualInterval), else by disjoint enclosures, in both cases the decision
// the reals take — or it is enclosed — Max/Min take the hull of the
// candidate tangents, Abs/Relu/Sign/Step multiply by the interval hull of
// the sign or step over the range — or it is recorded as undecided and
// the case is inconclusive. So the real evaluation and the interval
// evaluation take the same branches, or the interval one covers all of
// them, and every value of the real one lies in its enclosure. ∎
//
// What is trusted: spec.Interval's soundness, including its boundary on
// Go's math library (Exp, Log, Tanh, Sin, Cos within 2 ulps, widened by 4,
// plus the argument-reduction allowance of Sin/Cos); spec.Dual's tangent
// formulas (the textbook derivatives of the elementary functions); and the
// forward rule as the primitive's meaning (the cross-path obligations
// check it, this one does not). TestDerivativeEnclosesReference checks
// both enclosures against 256-bit references computed from the closed-form
// derivatives with series of its own.
//
// Inconclusive cases: an undecided choice in either evaluation, a domain
// error of an interval rule (an enclosure reaching outside log's domain),
// or an unbounded enclosure (division by an enclosure containing 0), where
// overlap proves nothing.
//
// Measure. Outcome.Measure of a case that holds is its worst relative
// resolution, max (width(D_k) + width(J_k)) / min|D_k| over the elements
// whose D_k excludes 0: the JVP rule is proven that close, relatively, to
// the derivative there, and a relative error of the rule much above the
// measure makes the enclosures disjoint. Measured over the generators'
// cases (tlcheck check --cases 20000, seeds 0–3): about 1e-14 typically,
// at most 4e-10 except gelu's 7e-5 (near a zero of gelu′), and no case
// inconclusive. So a 1 % error is caught on every element whose
// derivative is not 0 — tested by planting JVP·1.01 in every such
// primitive and a sign flip in tanh's JVP.
//
// This replaces an F64 central difference whose admissible gap relied on
// a Richardson estimate of the truncation error: an estimate, not a bound,
// which rejected correct log_softmax JVPs.
//
// # Interval enclosure
//
// The claim of spec.Interval is that an operation applied to enclosures
// of reals encloses the real result — for every point of the operand
// intervals, not only for the points the generators draw. Checked on
// point enclosures alone (FromRat of a generated rational) an operation
// that forgets a corner, loses 0 from |·| of a straddling interval or
// subtracts without swapping endpoints is invisible: at a point every
// corner coincides. So every primitive owes interval enclosure
// (CheckEnclosureOver) on a box B drawn around its generated input, each
// element a point, positive, negative, straddling 0, or touching 0 from
// either side (casegen.GenBoxElem; a primitive's domain limits the
// patterns), and a point P ∈ B at an endpoint or the midpoint of each
// element — the corners are where a dropped case shows. The verdicts:
//
//   - where the primitive's rational rule succeeds at P, f(P) ∉ F(B),
//     decided exactly, proves F unsound (P ∈ B and F(B) claims every
//     value over B);
//   - otherwise F([P]) and F(B) both claim f(P) (P ∈ [P] ⊆ B), so
//     disjoint enclosures prove one of them unsound — a fault of the
//     interval scalar either way;
//   - a rule that declines to enclose (a DomainError) makes the case
//     inconclusive.
//
// A case that holds found no contradiction at P: like every sampled
// property it is evidence, not a proof over B. The graph-level
// interval-soundness obligation does the same per node
// (CheckIntervalBoxOver): the exact value of every node at P lies in its
// enclosure over the box around the graph's input. Both run over any
// IntervalAlgebra, so a test's wrapper scalar with a planted fault goes
// through this code unchanged (rapidtests/interval_test.go); spec has no
// fault switch.
package obligations
