import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Graph
import Tlcheck.Local

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
its arity is right, its recorded value is `Prim.fwd` of its parents'
values (so the derivative coefficients the JVPs and VJPs read are the
forward's own), its lens (`primLens`, `Local.lean`) reads its inputs and
output at their recorded lengths (`lensOk`), and the recorded sides are
the two sides of `Graph.rev_adjoint` for the seed `c` (the cotangent at
the output, zero elsewhere) and the tangent `e` (dx at the input, zero
elsewhere), computed by `Graph.fwd` and `Graph.rev` themselves over the
nodes built from `Prim.jvp` and `Prim.vjp` through the lens
(`CompCase.graph`, `SideClaim`):

    lhs = Σ_{i < 1 + |g|} ⟨c i, fwd g 1 e i⟩,   rhs = Σ_{i < 1} ⟨rev c i, e i⟩.

The kernel evaluates only these two sides. That they are equal is not
evaluated: **`LocallyAdjoint` is discharged once for all graphs over
`Prim`** (`graph_locallyAdjoint`: every node `toNode` builds is locally
adjoint over `listPairing` for every cotangent and every list of
tangents, by `lens_adjoint` (`Local.lean`) from the per-primitive theorems), so
`Graph.rev_adjoint` gives ⟨reverse c, e⟩ = ⟨c, forward e⟩ for **every**
seed and tangent of an accepted case (`comp_adjoint_all`,
`checkComps_adjoint`), and `checkComp_sound` derives lhs = rhs from it.
`checkComps_sound` turns the kernel's `decide` into `CompClaim` (the two
sides and their equality) for every recorded case.

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

/-- The lens of a recorded node (`Tlcheck.Local`): its primitive's at its
attributes, its parents' values `val` and its own recorded value. -/
def lensOf (val : Nat → List Rat) (n : CNode) : Lens n.prim n.attr (n.parents.map val) :=
  primLens n.prim n.attr (n.parents.map val) n.value

/-- A recorded node's VJP through its lens, with `listPairing`'s zero
normalised: the zero cotangent `[]` (an unreached node's) gives no
contributions (`[]`, which `Graph.push` adds as nothing), any other
cotangent δ the lens's contributions `fitAll ins (vjp (fit out δ))`. The
two agree as tangents: the lens's contributions at `[]` are zero lists
(every VJP here is linear), which pair with everything to 0 — what
`node_adjoint`'s `[]` arm shows directly (both sides 0). -/
def lensVjp (val : Nat → List Rat) (n : CNode) : List Rat → List (List Rat)
  | [] => []
  | d :: ds => fitAll (lensOf val n).ins (n.prim.vjp n.attr (n.parents.map val) (fit (lensOf val n).out (d :: ds)))

/-- The node of `Tlcheck.Graph` for a recorded node: `Prim.jvp` and
`Prim.vjp` read at the parents' values `val`, through the node's lens
(tangents fitted to the lens's input lengths, the cotangent and the
output to its output length; the identity on tangents of those lengths,
`lens_id`), the zero cotangent `[]` sent to no contributions (`lensVjp`). -/
def toNode (val : Nat → List Rat) (n : CNode) : Graph.Node (List Rat) where
  parents := n.parents
  jvp := fun dxs => fit (lensOf val n).out (n.prim.jvp n.attr (n.parents.map val) (fitAll (lensOf val n).ins dxs))
  vjp := lensVjp val n

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

/-- The node's lens reads its inputs and its output at their recorded
lengths. -/
def lensOk (val : Nat → List Rat) (n : CNode) : Bool :=
  decide ((lensOf val n).ins = (n.parents.map val).map List.length) && decide ((lensOf val n).out = n.value.length)

/-- Node n at index s: parents before it, the right arity, its value the
forward of its parents' values, and its lens at the recorded lengths. -/
def nodeOk (val : Nat → List Rat) (s : Nat) (n : CNode) : Bool :=
  parentsBelow s n.parents &&
    (n.prim.arityOk n.parents.length &&
      (decide (n.value = n.prim.fwd n.attr (n.parents.map val)) && lensOk val n))

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

/-- What the checker evaluates: the recorded sides are the two sides of
`Graph.rev_adjoint` at the case's seed and tangent. Their equality is not
evaluated: it follows from the whole-graph theorem (`checkComp_sound`). -/
abbrev SideClaim (k : CompCase) : Prop :=
  k.lhs = Graph.sumTo (fun i => dot (k.seed i) (Graph.fwd k.graph 1 k.tangent i)) (1 + k.graph.length) ∧
    k.rhs = Graph.sumTo (fun i => dot (Graph.rev listPairing k.graph 1 k.seed i) (k.tangent i)) 1

/-- The shapes: the output index is a node, dx has the input's length and
the cotangent the output's. -/
def compShapesOk (k : CompCase) : Bool :=
  decide (k.out < 1 + k.nodes.length) &&
    (decide (k.dx.length = k.x.length) && decide (k.cot.length = (k.val k.out).length))

/-- The case's graph and shapes (everything but the claim). -/
def compOk (k : CompCase) : Bool := nodesOk k.val k.nodes 1 && compShapesOk k

/-- The checker of one case. -/
def checkComp (k : CompCase) : Bool := compOk k && decide (SideClaim k)

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
        (n.prim.arityOk n.parents.length &&
          (decide (n.value = n.prim.fwd n.attr (n.parents.map val)) && lensOk val n)) h1
    show (∀ p ∈ n.parents, p < s) ∧ Graph.WellFormed (ns.map (toNode val)) (s + 1)
    exact ⟨parentsBelow_sound s n.parents hp, nodesOk_wf val ns (s + 1) h2⟩

/-- Σₖ ⟨uₖ, vₖ⟩ over `listPairing` is `dotAll`. -/
theorem pairAll_list : ∀ us vs : List (List Rat), Graph.pairAll listPairing us vs = dotAll us vs
  | [], _ => rfl
  | _ :: _, [] => rfl
  | u :: us, v :: vs => by
    show dot u v + Graph.pairAll listPairing us vs = dot u v + dotAll us vs
    rw [pairAll_list us vs]

/-- Every recorded node is locally adjoint over `listPairing`, for every
cotangent and every list of tangents (any lengths): `lens_adjoint` at the
node's lens. -/
theorem node_adjoint (val : Nat → List Rat) (n : CNode) :
    ∀ (δ : List Rat) (dxs : List (List Rat)),
      listPairing.pair δ ((toNode val n).jvp dxs) = Graph.pairAll listPairing ((toNode val n).vjp δ) dxs
  | [], dxs => by
    show dot [] (fit (lensOf val n).out (Prim.jvp n.prim n.attr (n.parents.map val) (fitAll (lensOf val n).ins dxs))) =
      Graph.pairAll listPairing [] dxs
    exact (dot_nil_left (fit (lensOf val n).out (Prim.jvp n.prim n.attr (n.parents.map val) (fitAll (lensOf val n).ins dxs)))).trans
      (rfl : (0 : Rat) = Graph.pairAll listPairing [] dxs)
  | d :: ds, dxs => by
    show dot (d :: ds) (fit (lensOf val n).out (Prim.jvp n.prim n.attr (n.parents.map val) (fitAll (lensOf val n).ins dxs))) =
      Graph.pairAll listPairing
        (fitAll (lensOf val n).ins (Prim.vjp n.prim n.attr (n.parents.map val) (fit (lensOf val n).out (d :: ds)))) dxs
    rw [pairAll_list]
    exact lens_adjoint (lensOf val n) (d :: ds) dxs

/-- **`LocallyAdjoint` discharged once for every graph over `Prim`**: the
nodes `toNode` builds from any recorded nodes, at any values, satisfy
`Graph.LocallyAdjoint listPairing` — from the per-primitive theorems
through `primLens`, with no hypothesis. -/
theorem graph_locallyAdjoint (val : Nat → List Rat) :
    ∀ ns : List CNode, Graph.LocallyAdjoint listPairing (ns.map (toNode val))
  | [] => True.intro
  | n :: ns => by
    show (∀ (δ : List Rat) (dxs : List (List Rat)), dxs.length = (toNode val n).parents.length →
        listPairing.pair δ ((toNode val n).jvp dxs) = Graph.pairAll listPairing ((toNode val n).vjp δ) dxs) ∧
      Graph.LocallyAdjoint listPairing (ns.map (toNode val))
    exact And.intro (fun δ dxs _ => node_adjoint val n δ dxs) (graph_locallyAdjoint val ns)

/-- A case's graph is locally adjoint. -/
theorem comp_locallyAdjoint (k : CompCase) : Graph.LocallyAdjoint listPairing k.graph :=
  graph_locallyAdjoint k.val k.nodes

/-- A node's VJP maps the zero cotangent `[]` to no contributions. -/
theorem toNode_vjp_nil (val : Nat → List Rat) (n : CNode) : (toNode val n).vjp listPairing.zero = [] := rfl

/-- **`ZeroPreserving` discharged once for every graph over `Prim`**: at
the zero cotangent `[]` every node `toNode` builds has no contribution
(`lensVjp`), so every contribution it has there is `[]` — with no
hypothesis. -/
theorem graph_zeroPreserving (val : Nat → List Rat) :
    ∀ ns : List CNode, Graph.ZeroPreserving listPairing (ns.map (toNode val))
  | [] => True.intro
  | n :: ns => by
    show (∀ u ∈ (toNode val n).vjp listPairing.zero, u = listPairing.zero) ∧
      Graph.ZeroPreserving listPairing (ns.map (toNode val))
    refine And.intro (fun u hu => ?_) (graph_zeroPreserving val ns)
    rw [toNode_vjp_nil val n] at hu
    first
      | nomatch hu
      | cases hu

/-- A case's graph is zero-preserving. -/
theorem comp_zeroPreserving (k : CompCase) : Graph.ZeroPreserving listPairing k.graph :=
  graph_zeroPreserving k.val k.nodes

/-- **The bridge.** On a case whose graph the checker accepts, local
adjointness of its nodes gives, by `Graph.rev_adjoint`, the composition
identity ⟨reverse c, e⟩ = ⟨c, forward e⟩ for every seed c and every input
tangent e. -/
theorem comp_adjoint (k : CompCase) (hw : nodesOk k.val k.nodes 1 = true)
    (hl : Graph.LocallyAdjoint listPairing k.graph) (c e : Nat → List Rat) :
    Graph.sumTo (fun i => dot (Graph.rev listPairing k.graph 1 c i) (e i)) 1 =
      Graph.sumTo (fun i => dot (c i) (Graph.fwd k.graph 1 e i)) (1 + k.graph.length) :=
  Graph.rev_adjoint listPairing k.graph 1 c e (nodesOk_wf k.val k.nodes 1 hw) hl

/-- The same with the local adjointness discharged (`comp_locallyAdjoint`):
only the well-formedness the checker tests remains. -/
theorem comp_adjoint_all (k : CompCase) (hw : nodesOk k.val k.nodes 1 = true) (c e : Nat → List Rat) :
    Graph.sumTo (fun i => dot (Graph.rev listPairing k.graph 1 c i) (e i)) 1 =
      Graph.sumTo (fun i => dot (c i) (Graph.fwd k.graph 1 e i)) (1 + k.graph.length) :=
  comp_adjoint k hw (comp_locallyAdjoint k) c e

theorem checkComp_wf (k : CompCase) (h : checkComp k = true) : nodesOk k.val k.nodes 1 = true :=
  band_left (nodesOk k.val k.nodes 1) (compShapesOk k) (band_left (compOk k) (decide (SideClaim k)) h)

/-- A case the checker accepts: the kernel evaluated its two recorded
sides (`SideClaim`); their equality is `comp_adjoint_all` at the case's
seed and tangent, not an evaluation. -/
theorem checkComp_sound (k : CompCase) (h : checkComp k = true) : CompClaim k := by
  have hs : SideClaim k := of_decide_eq_true (band_right (compOk k) (decide (SideClaim k)) h)
  have hadj := comp_adjoint_all k (checkComp_wf k h) k.seed k.tangent
  exact ⟨hs.1, hs.2, hs.1.trans (hadj.symm.trans hs.2.symm)⟩

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

/-- The composition identity of a case for **every** seed c and input
tangent e: ⟨reverse c, e⟩ = ⟨c, forward e⟩ over the case's graph. -/
abbrev CompAdjoint (k : CompCase) : Prop :=
  ∀ c e : Nat → List Rat,
    Graph.sumTo (fun i => dot (Graph.rev listPairing k.graph 1 c i) (e i)) 1 =
      Graph.sumTo (fun i => dot (c i) (Graph.fwd k.graph 1 e i)) (1 + k.graph.length)

/-- Every case of an accepted certificate satisfies the composition
identity for **every** seed and tangent, not only the recorded ones. -/
theorem checkComps_adjoint : ∀ ks : List CompCase, checkComps ks = true → ∀ k ∈ ks, CompAdjoint k
  | [], _, _, hk => by
    first
      | nomatch hk
      | cases hk
  | k :: ks, h, k', hk => by
    have h1 : checkComp k = true := band_left (checkComp k) (checkComps ks) h
    have h2 : checkComps ks = true := band_right (checkComp k) (checkComps ks) h
    cases hk with
    | head => exact comp_adjoint_all k (checkComp_wf k h1)
    | tail _ hk' => exact checkComps_adjoint ks h2 k' hk'

/-- The same through `Graph.backprop_correct`: the sweep that skips nodes
whose cotangent is `[]` (`List.isEmpty`: an unreached node) computes the
same input gradient, for every graph over `Prim` the checker accepts —
zero preservation is `comp_zeroPreserving`, not a hypothesis. -/
theorem comp_backprop (k : CompCase) (hw : nodesOk k.val k.nodes 1 = true) (c e : Nat → List Rat) :
    Graph.sumTo (fun i => dot (Graph.revSkip listPairing List.isEmpty k.graph 1 c i) (e i)) 1 =
      Graph.sumTo (fun i => dot (c i) (Graph.fwd k.graph 1 e i)) (1 + k.graph.length) :=
  Graph.backprop_correct listPairing k.graph 1 c e (nodesOk_wf k.val k.nodes 1 hw) (comp_locallyAdjoint k)
    (comp_zeroPreserving k) List.isEmpty isEmpty_nil
where
  isEmpty_nil : ∀ v : List Rat, v.isEmpty = true → v = listPairing.zero
    | [], _ => rfl
    | _ :: _, h => by
      first
        | nomatch h
        | cases h

end Tlcheck
