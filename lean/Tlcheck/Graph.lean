import Tlcheck.Spec

/-!
# The whole-graph theorem: local adjointness composes

TorchLean's central autograd result (`backprop_correct`) is that the local
adjointness laws of the primitives compose: on a well-formed graph (every
node's parents come before it), the reverse sweep with accumulation
computes the adjoint of the forward tangent sweep. This module states and
proves it over any carrier `V` of tangents with an addition, a zero and a
rational pairing that is additive in its first argument (`Pairing`), and
then that the sweep which skips nodes whose cotangent is zero equals the
full sweep when every VJP maps zero to zeros (zero preservation).

A graph is a list of nodes; the node at position k gets index `s + k`,
where the first `s` indices are the graph's inputs. Tangents and
cotangents are total maps `Nat → V`, so no index can fall off a list.

* `fwd g s e`: the forward tangent sweep: node `s + k` gets
  `jvp (its parents' tangents)`, in order.
* `rev P g s c`: the reverse sweep: the last node first, each node's
  cotangent pushed through its VJP and added into its parents'.
* `rev_adjoint`: for every seed cotangent `c` on all nodes and every input
  tangent `e`,

      Σ_{i < s} ⟨rev c, e⟩ᵢ = Σ_{i < s + |g|} ⟨c, fwd e⟩ᵢ,

  i.e. ⟨reverse c, v⟩ = ⟨c, forward v⟩, given `WellFormed g s` and
  `LocallyAdjoint P g` (⟨δ, jvp dxs⟩ = Σₖ ⟨vjp δ, dxs⟩ₖ at every node).
* `revSkip_eq`: the sweep that skips a node whose cotangent a zero test
  `z` accepts equals `rev`, given `ZeroPreserving P g`.

No `sorry`, no `grind`; `funext` (from `Quot.sound`) in `push_zeros`.
-/

namespace Tlcheck
set_option autoImplicit false

/-- What the sweeps need of the tangent carrier: an addition, a zero and a
rational pairing, additive in its first argument, with a + 0 = a. -/
structure Pairing (V : Type) where
  add : V → V → V
  zero : V
  pair : V → V → Rat
  pair_add : ∀ a b c : V, pair (add a b) c = pair a c + pair b c
  pair_zero : ∀ c : V, pair zero c = 0
  add_zero : ∀ a : V, add a zero = a

/-- Scalars: ⟨a, b⟩ = a·b. -/
def ratPairing : Pairing Rat where
  add := fun a b => a + b
  zero := 0
  pair := fun a b => a * b
  pair_add := fun a b c => Rat.add_mul a b c
  pair_zero := fun c => Rat.zero_mul c
  add_zero := fun a => Rat.add_zero a

namespace Graph

/-- A node: the indices of its parents, its JVP (parent tangents to its
tangent) and its VJP (its cotangent to one contribution per parent). -/
structure Node (V : Type) where
  parents : List Nat
  jvp : List V → V
  vjp : V → List V

variable {V : Type}

/-- Σ_{i<n} f i. -/
def sumTo (f : Nat → Rat) : Nat → Rat
  | 0 => 0
  | n + 1 => sumTo f n + f n

/-- Σₖ ⟨uₖ, vₖ⟩ over the common prefix. -/
def pairAll (P : Pairing V) : List V → List V → Rat
  | u :: us, v :: vs => P.pair u v + pairAll P us vs
  | _, _ => 0

/-- env with index k set to x. -/
def upd (env : Nat → V) (k : Nat) (x : V) : Nat → V := fun i => if i = k then x else env i

/-- The forward tangent sweep from index s. -/
def fwd : List (Node V) → Nat → (Nat → V) → (Nat → V)
  | [], _, e => e
  | n :: ns, s, e => fwd ns (s + 1) (upd e s (n.jvp (n.parents.map e)))

/-- Add contributions us into the entries ps (accumulation). -/
def push (P : Pairing V) : List Nat → List V → (Nat → V) → (Nat → V)
  | p :: ps, u :: us, a => push P ps us (upd a p (P.add (a p) u))
  | _, _, a => a

/-- The reverse sweep with accumulation: the later nodes first, then the
node at s pushes its cotangent through its VJP into its parents. -/
def rev (P : Pairing V) : List (Node V) → Nat → (Nat → V) → (Nat → V)
  | [], _, c => c
  | n :: ns, s, c => push P n.parents (n.vjp (rev P ns (s + 1) c s)) (rev P ns (s + 1) c)

/-- The same sweep, skipping a node whose cotangent the test z calls zero
(an unreached node). -/
def revSkip (P : Pairing V) (z : V → Bool) : List (Node V) → Nat → (Nat → V) → (Nat → V)
  | [], _, c => c
  | n :: ns, s, c =>
    if z (revSkip P z ns (s + 1) c s) then revSkip P z ns (s + 1) c
    else push P n.parents (n.vjp (revSkip P z ns (s + 1) c s)) (revSkip P z ns (s + 1) c)

/-- Parents before children: every parent of the node at index s is < s. -/
def WellFormed : List (Node V) → Nat → Prop
  | [], _ => True
  | n :: ns, s => (∀ p ∈ n.parents, p < s) ∧ WellFormed ns (s + 1)

/-- Local adjointness of every node: ⟨δ, jvp dxs⟩ = Σₖ ⟨vjp δ, dxs⟩ₖ. -/
def LocallyAdjoint (P : Pairing V) : List (Node V) → Prop
  | [] => True
  | n :: ns =>
    (∀ (δ : V) (dxs : List V), dxs.length = n.parents.length →
      P.pair δ (n.jvp dxs) = pairAll P (n.vjp δ) dxs) ∧ LocallyAdjoint P ns

/-- Zero preservation: every VJP maps the zero cotangent to zeros. -/
def ZeroPreserving (P : Pairing V) : List (Node V) → Prop
  | [] => True
  | n :: ns => (∀ u ∈ n.vjp P.zero, u = P.zero) ∧ ZeroPreserving P ns

theorem sumTo_congr (f g : Nat → Rat) : ∀ n : Nat, (∀ i, i < n → f i = g i) → sumTo f n = sumTo g n
  | 0, _ => rfl
  | n + 1, h => by
    show sumTo f n + f n = sumTo g n + g n
    rw [sumTo_congr f g n (fun i hi => h i (by omega)), h n (by omega)]

/-- Adding u at entry p < n adds ⟨u, e p⟩ to the pairing below n. -/
theorem sumTo_upd_add (P : Pairing V) (a e : Nat → V) (u : V) (p : Nat) :
    ∀ n : Nat, p < n →
      sumTo (fun i => P.pair (upd a p (P.add (a p) u) i) (e i)) n =
        sumTo (fun i => P.pair (a i) (e i)) n + P.pair u (e p)
  | 0, hp => absurd hp (by omega)
  | n + 1, hp => by
    show sumTo (fun i => P.pair (upd a p (P.add (a p) u) i) (e i)) n +
        P.pair (upd a p (P.add (a p) u) n) (e n) =
      sumTo (fun i => P.pair (a i) (e i)) n + P.pair (a n) (e n) + P.pair u (e p)
    by_cases hnp : n = p
    · have hbelow : sumTo (fun i => P.pair (upd a p (P.add (a p) u) i) (e i)) n =
          sumTo (fun i => P.pair (a i) (e i)) n :=
        sumTo_congr _ _ n (fun i hi => by
          show P.pair (if i = p then P.add (a p) u else a i) (e i) = P.pair (a i) (e i)
          rw [if_neg (fun h => Nat.ne_of_lt hi (h.trans hnp.symm))])
      have hat : upd a p (P.add (a p) u) n = P.add (a p) u := by
        show (if n = p then P.add (a p) u else a n) = P.add (a p) u
        rw [if_pos hnp]
      rw [hbelow, hat, P.pair_add, hnp, Rat.add_assoc]
    · have hlt : p < n := by omega
      have hat : upd a p (P.add (a p) u) n = a n := by
        show (if n = p then P.add (a p) u else a n) = a n
        rw [if_neg hnp]
      rw [sumTo_upd_add P a e u p n hlt, hat, Rat.add_assoc, Rat.add_assoc,
        Rat.add_comm (P.pair u (e p)) (P.pair (a n) (e n))]

/-- Pushing us into the entries ps (all below n) adds Σₖ ⟨uₖ, e pₖ⟩. -/
theorem push_pair (P : Pairing V) : ∀ (ps : List Nat) (us : List V) (a e : Nat → V) (n : Nat),
    (∀ p ∈ ps, p < n) →
    sumTo (fun i => P.pair (push P ps us a i) (e i)) n =
      sumTo (fun i => P.pair (a i) (e i)) n + pairAll P us (ps.map e)
  | [], [], a, e, n, _ => by
    show sumTo (fun i => P.pair (a i) (e i)) n = sumTo (fun i => P.pair (a i) (e i)) n + 0
    rw [Rat.add_zero]
  | [], _ :: _, a, e, n, _ => by
    show sumTo (fun i => P.pair (a i) (e i)) n = sumTo (fun i => P.pair (a i) (e i)) n + 0
    rw [Rat.add_zero]
  | _ :: _, [], a, e, n, _ => by
    show sumTo (fun i => P.pair (a i) (e i)) n = sumTo (fun i => P.pair (a i) (e i)) n + 0
    rw [Rat.add_zero]
  | p :: ps, u :: us, a, e, n, hps => by
    show sumTo (fun i => P.pair (push P ps us (upd a p (P.add (a p) u)) i) (e i)) n =
      sumTo (fun i => P.pair (a i) (e i)) n + (P.pair u (e p) + pairAll P us (ps.map e))
    rw [push_pair P ps us (upd a p (P.add (a p) u)) e n (fun q hq => hps q (List.Mem.tail p hq)),
      sumTo_upd_add P a e u p n (hps p (List.Mem.head ps)), Rat.add_assoc]

/-- **The whole-graph theorem.** On a well-formed, locally adjoint graph,
the reverse sweep is the adjoint of the forward sweep: for every cotangent
seed c on all nodes and every tangent e on the inputs (indices < s),
Σ_{i<s} ⟨rev c, e⟩ᵢ = Σ_{i<s+|g|} ⟨c, fwd e⟩ᵢ. -/
theorem rev_adjoint (P : Pairing V) : ∀ (g : List (Node V)) (s : Nat) (c e : Nat → V),
    WellFormed g s → LocallyAdjoint P g →
    sumTo (fun i => P.pair (rev P g s c i) (e i)) s =
      sumTo (fun i => P.pair (c i) (fwd g s e i)) (s + g.length)
  | [], _, _, _, _, _ => rfl
  | n :: ns, s, c, e, hw, hl => by
    have ih := rev_adjoint P ns (s + 1) c (upd e s (n.jvp (n.parents.map e))) hw.2 hl.2
    have hlen : s + (n :: ns).length = s + 1 + ns.length := by
      rw [List.length_cons]
      omega
    have hbelow : sumTo (fun i => P.pair (rev P ns (s + 1) c i) (upd e s (n.jvp (n.parents.map e)) i)) s =
        sumTo (fun i => P.pair (rev P ns (s + 1) c i) (e i)) s :=
      sumTo_congr _ _ s (fun i hi => by
        show P.pair (rev P ns (s + 1) c i) (if i = s then n.jvp (n.parents.map e) else e i) =
          P.pair (rev P ns (s + 1) c i) (e i)
        rw [if_neg (Nat.ne_of_lt hi)])
    have hat : upd e s (n.jvp (n.parents.map e)) s = n.jvp (n.parents.map e) := by
      show (if s = s then n.jvp (n.parents.map e) else e s) = n.jvp (n.parents.map e)
      rw [if_pos (rfl : s = s)]
    have hadj := hl.1 (rev P ns (s + 1) c s) (n.parents.map e) (by rw [List.length_map])
    show sumTo (fun i => P.pair (push P n.parents (n.vjp (rev P ns (s + 1) c s)) (rev P ns (s + 1) c) i) (e i)) s =
      sumTo (fun i => P.pair (c i) (fwd ns (s + 1) (upd e s (n.jvp (n.parents.map e))) i)) (s + (n :: ns).length)
    rw [push_pair P n.parents (n.vjp (rev P ns (s + 1) c s)) (rev P ns (s + 1) c) e s hw.1, hlen, ← ih]
    show _ = sumTo (fun i => P.pair (rev P ns (s + 1) c i) (upd e s (n.jvp (n.parents.map e)) i)) s +
      P.pair (rev P ns (s + 1) c s) (upd e s (n.jvp (n.parents.map e)) s)
    rw [hbelow, hat, hadj]

/-- Pushing zeros changes nothing (a + 0 = a). -/
theorem push_zeros (P : Pairing V) : ∀ (ps : List Nat) (us : List V) (a : Nat → V),
    (∀ u ∈ us, u = P.zero) → push P ps us a = a
  | [], [], _, _ => rfl
  | [], _ :: _, _, _ => rfl
  | _ :: _, [], _, _ => rfl
  | p :: ps, u :: us, a, hz => by
    show push P ps us (upd a p (P.add (a p) u)) = a
    have hu : u = P.zero := hz u (List.Mem.head us)
    have hupd : upd a p (P.add (a p) u) = a := by
      funext i
      show (if i = p then P.add (a p) u else a i) = a i
      by_cases hi : i = p
      · rw [if_pos hi, hu, P.add_zero, hi]
      · rw [if_neg hi]
    rw [hupd]
    exact push_zeros P ps us a (fun v hv => hz v (List.Mem.tail u hv))

/-- **Skipping unreached nodes is sound under zero preservation**: the
sweep that skips every node whose cotangent is zero equals the full sweep. -/
theorem revSkip_eq (P : Pairing V) (z : V → Bool) (hz : ∀ v, z v = true → v = P.zero) :
    ∀ (g : List (Node V)) (s : Nat) (c : Nat → V), ZeroPreserving P g → revSkip P z g s c = rev P g s c
  | [], _, _, _ => rfl
  | n :: ns, s, c, hzp => by
    have ih := revSkip_eq P z hz ns (s + 1) c hzp.2
    show (if z (revSkip P z ns (s + 1) c s) = true then revSkip P z ns (s + 1) c
        else push P n.parents (n.vjp (revSkip P z ns (s + 1) c s)) (revSkip P z ns (s + 1) c)) =
      push P n.parents (n.vjp (rev P ns (s + 1) c s)) (rev P ns (s + 1) c)
    rw [ih]
    by_cases h : z (rev P ns (s + 1) c s) = true
    · rw [if_pos h, hz _ h, push_zeros P n.parents (n.vjp P.zero) (rev P ns (s + 1) c) hzp.1]
    · rw [if_neg h]

/-- The composition corollary: with the seed c zero off the outputs, the
input gradient the reverse sweep returns pairs with any input tangent e
exactly as the seed pairs with the forward tangents. -/
theorem backprop_correct (P : Pairing V) (g : List (Node V)) (s : Nat) (c e : Nat → V)
    (hw : WellFormed g s) (hl : LocallyAdjoint P g) (hz : ZeroPreserving P g)
    (z : V → Bool) (hzt : ∀ v, z v = true → v = P.zero) :
    sumTo (fun i => P.pair (revSkip P z g s c i) (e i)) s =
      sumTo (fun i => P.pair (c i) (fwd g s e i)) (s + g.length) := by
  rw [revSkip_eq P z hzt g s c hz]
  exact rev_adjoint P g s c e hw hl

end Graph
end Tlcheck
