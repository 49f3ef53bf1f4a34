import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Graph

/-!
# Composition certificates, checked by the sweeps of `Tlcheck.Graph`

A composition certificate records, for an exact IR graph, the input x, a
tangent dx of the input, a cotangent of the output and the two sides

    lhs = ⟨JVP(x; dx), cotangent⟩,   rhs = ⟨dx, VJP(x; cotangent)⟩.

`tlcheck lean emit` writes each case as a `CompCase`: the nodes after the
input (index 0), each a covered primitive of `Tlcheck.Prim` with its
attributes, its parents and its recorded value; a constant leaf (the IR's
`const`, `rand_uniform`, a payload value) is the primitive `const` with its
value as the attribute `values`, so it has no parents and a zero tangent.

`checkComp` accepts a case only if every node's parents come before it,
its arity is right and its recorded value is `Prim.fwd` of its parents'
values (so the derivative coefficients the JVPs and VJPs read are the
forward's own), and the recorded sides are the two sides of
`Graph.rev_adjoint` for the seed `c` (the cotangent at the output, zero
elsewhere) and the tangent `e` (dx at the input, zero elsewhere), computed
by `Graph.fwd` and `Graph.rev` themselves over the nodes built from
`Prim.jvp` and `Prim.vjp` (`CompCase.graph`):

    lhs = Σ_{i < 1 + |g|} ⟨c i, fwd g 1 e i⟩,   rhs = Σ_{i < 1} ⟨rev c i, e i⟩.

`checkComps_sound` turns the kernel's `decide` into that claim for every
recorded case (`CompClaim`). `comp_adjoint` is the bridge to the whole-graph
theorem: on a case the checker accepts, `Graph.rev_adjoint` gives the same
identity for **every** seed and tangent, given local adjointness of the
nodes (`Graph.LocallyAdjoint`), which `Tlcheck.Adjoint` proves per
primitive on lists of matching lengths; discharging it over
`listPairing` (lists of any lengths) is not done here.

Tangents and cotangents are lists read as finitely supported sequences
(`vadd` keeps the longer list's tail; the zero is `[]`), which makes
`listPairing` a `Pairing` with no length invariant.
-/

namespace Tlcheck
set_option autoImplicit false

/-- x + y on lists read as finitely supported sequences (a missing entry
is 0): the sum on the common prefix, then the longer list's tail. -/
def vadd : List Rat → List Rat → List Rat
  | a :: as, b :: bs => (a + b) :: vadd as bs
  | [], bs => bs
  | a :: as, [] => a :: as

theorem vadd_nil : ∀ a : List Rat, vadd a [] = a
  | [] => rfl
  | _ :: _ => rfl

theorem dot_nil_left : ∀ c : List Rat, dot [] c = 0
  | [] => rfl
  | _ :: _ => rfl

/-- ⟨x + y, z⟩ = ⟨x, z⟩ + ⟨y, z⟩ for lists of any lengths. -/
theorem dot_vadd : ∀ a b c : List Rat, dot (vadd a b) c = dot a c + dot b c
  | [], b, c => by
    show dot b c = dot [] c + dot b c
    rw [dot_nil_left c, Rat.zero_add]
  | x :: xs, [], c => by
    show dot (x :: xs) c = dot (x :: xs) c + dot [] c
    rw [dot_nil_left c, Rat.add_zero]
  | _ :: _, _ :: _, [] => by
    show (0 : Rat) = 0 + 0
    rw [Rat.add_zero]
  | x :: xs, y :: ys, z :: zs => by
    show (x + y) * z + dot (vadd xs ys) zs = (x * z + dot xs zs) + (y * z + dot ys zs)
    rw [dot_vadd xs ys zs]
    first
      | rw [Rat.add_mul, Rat.add_assoc (x * z) (y * z) (dot xs zs + dot ys zs),
          Rat.add_assoc (x * z) (dot xs zs) (y * z + dot ys zs),
          Rat.add_left_comm (y * z) (dot xs zs) (dot ys zs)]
      | grind

/-- Lists of rationals as tangents: `vadd`, the zero `[]`, the pairing `dot`. -/
def listPairing : Pairing (List Rat) where
  add := vadd
  zero := []
  pair := dot
  pair_add := dot_vadd
  pair_zero := dot_nil_left
  add_zero := vadd_nil

/-- One node of a composition case after the input: a primitive, its
attributes, its parents (indices, the input is 0) and its recorded value. -/
structure CNode where
  prim : Prim
  attr : Attr
  parents : List Nat
  value : List Rat

/-- One recorded case: the input x, the nodes after it (node k has index
k + 1), the output index, the tangent dx of the input, the cotangent of
the output and the two recorded sides. -/
structure CompCase where
  x : List Rat
  nodes : List CNode
  out : Nat
  dx : List Rat
  cot : List Rat
  lhs : Rat
  rhs : Rat

/-- Element j of a list of tensors, [] past its end. -/
def nthV : List (List Rat) → Nat → List Rat
  | [], _ => []
  | a :: _, 0 => a
  | _ :: as, j + 1 => nthV as j

/-- The node of `Tlcheck.Graph` for a recorded node, its JVP and VJP read
at the parents' values `val`. -/
def toNode (val : Nat → List Rat) (n : CNode) : Graph.Node (List Rat) where
  parents := n.parents
  jvp := fun dxs => n.prim.jvp n.attr (n.parents.map val) dxs
  vjp := fun δ => n.prim.vjp n.attr (n.parents.map val) δ

namespace CompCase
/-- The value of index i: the input at 0, node k's recorded value at k + 1. -/
def val (k : CompCase) (i : Nat) : List Rat := nthV (k.x :: k.nodes.map CNode.value) i
/-- The graph the sweeps run on. -/
def graph (k : CompCase) : List (Graph.Node (List Rat)) := k.nodes.map (toNode k.val)
/-- The seed: the cotangent at the output, zero elsewhere. -/
def seed (k : CompCase) : Nat → List Rat := Graph.upd (fun _ => ([] : List Rat)) k.out k.cot
/-- The input tangent: dx at the input, zero elsewhere. -/
def tangent (k : CompCase) : Nat → List Rat := Graph.upd (fun _ => ([] : List Rat)) 0 k.dx
end CompCase

/-- Every parent is below s. -/
def parentsBelow (s : Nat) : List Nat → Bool
  | [] => true
  | p :: ps => decide (p < s) && parentsBelow s ps

/-- Node n at index s: parents before it, the right arity, and its value
the forward of its parents' values. -/
def nodeOk (val : Nat → List Rat) (s : Nat) (n : CNode) : Bool :=
  parentsBelow s n.parents &&
    (n.prim.arityOk n.parents.length && decide (n.value = n.prim.fwd n.attr (n.parents.map val)))

/-- Every node from index s on. -/
def nodesOk (val : Nat → List Rat) : List CNode → Nat → Bool
  | [], _ => true
  | n :: ns, s => nodeOk val s n && nodesOk val ns (s + 1)

/-- What a composition case claims: the recorded sides are the two sides
of `Graph.rev_adjoint` at the case's seed and tangent, and are equal. An
`abbrev`, so that `decide` finds its instance (`Rat` equalities). -/
abbrev CompClaim (k : CompCase) : Prop :=
  k.lhs = Graph.sumTo (fun i => dot (k.seed i) (Graph.fwd k.graph 1 k.tangent i)) (1 + k.graph.length) ∧
    k.rhs = Graph.sumTo (fun i => dot (Graph.rev listPairing k.graph 1 k.seed i) (k.tangent i)) 1 ∧
    k.lhs = k.rhs

/-- The shapes: the output index is a node, dx has the input's length and
the cotangent the output's. -/
def compShapesOk (k : CompCase) : Bool :=
  decide (k.out < 1 + k.nodes.length) &&
    (decide (k.dx.length = k.x.length) && decide (k.cot.length = (k.val k.out).length))

/-- The case's graph and shapes (everything but the claim). -/
def compOk (k : CompCase) : Bool := nodesOk k.val k.nodes 1 && compShapesOk k

/-- The checker of one case. -/
def checkComp (k : CompCase) : Bool := compOk k && decide (CompClaim k)

/-- The checker of a certificate's cases. -/
def checkComps : List CompCase → Bool
  | [] => true
  | k :: ks => checkComp k && checkComps ks

theorem band_left : ∀ a b : Bool, (a && b) = true → a = true
  | true, _, _ => rfl
  | false, _, h => by
    first
      | nomatch h
      | cases h

theorem band_right : ∀ a b : Bool, (a && b) = true → b = true
  | true, _, h => h
  | false, _, h => by
    first
      | nomatch h
      | cases h

theorem parentsBelow_sound (s : Nat) : ∀ ps : List Nat, parentsBelow s ps = true → ∀ p ∈ ps, p < s
  | [], _, _, hp => by
    first
      | nomatch hp
      | cases hp
  | q :: qs, h, p, hp => by
    have hq : decide (q < s) = true := band_left (decide (q < s)) (parentsBelow s qs) h
    have hqs : parentsBelow s qs = true := band_right (decide (q < s)) (parentsBelow s qs) h
    cases hp with
    | head => exact of_decide_eq_true hq
    | tail _ hp' => exact parentsBelow_sound s qs hqs p hp'

/-- The checker's node test gives `Graph.WellFormed`. -/
theorem nodesOk_wf (val : Nat → List Rat) : ∀ (ns : List CNode) (s : Nat),
    nodesOk val ns s = true → Graph.WellFormed (ns.map (toNode val)) s
  | [], _, _ => True.intro
  | n :: ns, s, h => by
    have h1 : nodeOk val s n = true := band_left (nodeOk val s n) (nodesOk val ns (s + 1)) h
    have h2 : nodesOk val ns (s + 1) = true := band_right (nodeOk val s n) (nodesOk val ns (s + 1)) h
    have hp : parentsBelow s n.parents = true :=
      band_left (parentsBelow s n.parents)
        (n.prim.arityOk n.parents.length && decide (n.value = n.prim.fwd n.attr (n.parents.map val))) h1
    show (∀ p ∈ n.parents, p < s) ∧ Graph.WellFormed (ns.map (toNode val)) (s + 1)
    exact ⟨parentsBelow_sound s n.parents hp, nodesOk_wf val ns (s + 1) h2⟩

theorem checkComp_sound (k : CompCase) (h : checkComp k = true) : CompClaim k :=
  of_decide_eq_true (band_right (compOk k) (decide (CompClaim k)) h)

theorem checkComp_wf (k : CompCase) (h : checkComp k = true) : nodesOk k.val k.nodes 1 = true :=
  band_left (nodesOk k.val k.nodes 1) (compShapesOk k) (band_left (compOk k) (decide (CompClaim k)) h)

theorem checkComps_sound : ∀ ks : List CompCase, checkComps ks = true → ∀ k ∈ ks, CompClaim k
  | [], _, _, hk => by
    first
      | nomatch hk
      | cases hk
  | k :: ks, h, k', hk => by
    have h1 : checkComp k = true := band_left (checkComp k) (checkComps ks) h
    have h2 : checkComps ks = true := band_right (checkComp k) (checkComps ks) h
    cases hk with
    | head => exact checkComp_sound k h1
    | tail _ hk' => exact checkComps_sound ks h2 k' hk'

/-- **The bridge.** On a case whose graph the checker accepts, local
adjointness of its nodes gives, by `Graph.rev_adjoint`, the composition
identity ⟨reverse c, e⟩ = ⟨c, forward e⟩ for every seed c and every input
tangent e — the recorded case (`CompClaim`) is its instance at the
certificate's seed and tangent, which the kernel evaluates. -/
theorem comp_adjoint (k : CompCase) (hw : nodesOk k.val k.nodes 1 = true)
    (hl : Graph.LocallyAdjoint listPairing k.graph) (c e : Nat → List Rat) :
    Graph.sumTo (fun i => dot (Graph.rev listPairing k.graph 1 c i) (e i)) 1 =
      Graph.sumTo (fun i => dot (c i) (Graph.fwd k.graph 1 e i)) (1 + k.graph.length) :=
  Graph.rev_adjoint listPairing k.graph 1 c e (nodesOk_wf k.val k.nodes 1 hw) hl

/-- The same through `Graph.backprop_correct`: the sweep that skips nodes
whose cotangent is `[]` computes the same input gradient, given zero
preservation over `listPairing` as well. -/
theorem comp_backprop (k : CompCase) (hw : nodesOk k.val k.nodes 1 = true)
    (hl : Graph.LocallyAdjoint listPairing k.graph) (hz : Graph.ZeroPreserving listPairing k.graph)
    (c e : Nat → List Rat) :
    Graph.sumTo (fun i => dot (Graph.revSkip listPairing List.isEmpty k.graph 1 c i) (e i)) 1 =
      Graph.sumTo (fun i => dot (c i) (Graph.fwd k.graph 1 e i)) (1 + k.graph.length) :=
  Graph.backprop_correct listPairing k.graph 1 c e (nodesOk_wf k.val k.nodes 1 hw) hl hz List.isEmpty
    isEmpty_nil
where
  isEmpty_nil : ∀ v : List Rat, v.isEmpty = true → v = listPairing.zero
    | [], _ => rfl
    | _ :: _, h => by
      first
        | nomatch h
        | cases h

end Tlcheck
