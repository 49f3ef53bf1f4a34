/-!
# Exact semantics of tlcheck's exact primitives

Tensors are flat `List Rat` in row-major order with an explicit shape
(`List Nat`, its element count `size`). Every function is structurally
recursive on `List`, so `decide +kernel` evaluates it on certificate data.

Binary list operations (`pmul`, `padd`) truncate to the shorter list; the
theorems of `Tlcheck.Adjoint` state the length hypotheses they need, and
the checkers of `Tlcheck.Check` require matching lengths before they
compare anything.

The conventions at kinks are the registry's (`spec` package, field
`Ties`): relu′(0) = 0, abs′(0) = 0, sqrt′(x) = 0 for x ≤ 0, clamp′ = 1 only strictly inside
(lo, hi), and max/min give a tie ½ to each side. Division by zero is
Lean's (`a / 0 = 0`); the registry never evaluates div or inv there
(its generator draws non-zero denominators), and the adjointness laws hold
for any partial derivatives, so they do not depend on it.
-/

namespace Tlcheck
set_option autoImplicit false

/-- Number of elements of a shape: the product of its extents. -/
def size : List Nat → Nat
  | [] => 1
  | n :: ns => n * size ns

/-- ⟨u, v⟩ = Σᵢ uᵢ·vᵢ over the common prefix. -/
def dot : List Rat → List Rat → Rat
  | a :: as, b :: bs => a * b + dot as bs
  | _, _ => 0

/-- Pointwise product uᵢ·vᵢ. -/
def pmul : List Rat → List Rat → List Rat
  | a :: as, b :: bs => a * b :: pmul as bs
  | _, _ => []

/-- Pointwise sum uᵢ + vᵢ. -/
def padd : List Rat → List Rat → List Rat
  | a :: as, b :: bs => (a + b) :: padd as bs
  | _, _ => []

/-- Scalar multiple c·uᵢ. -/
def smul (c : Rat) : List Rat → List Rat
  | [] => []
  | a :: as => c * a :: smul c as

/-- Σᵢ uᵢ, a right fold from 0. -/
def total : List Rat → Rat
  | [] => 0
  | a :: as => a + total as

/-- The zero tensor of u's length. -/
def zeros : List Rat → List Rat
  | [] => []
  | _ :: as => 0 :: zeros as

/-- d repeated once per element of u. -/
def bcast (d : Rat) : List Rat → List Rat
  | [] => []
  | _ :: as => d :: bcast d as

/-- Pointwise map of a scalar function. -/
def pmap (f : Rat → Rat) : List Rat → List Rat
  | [] => []
  | a :: as => f a :: pmap f as

/-- Pointwise map of a binary scalar function (truncating). -/
def pmap2 (f : Rat → Rat → Rat) : List Rat → List Rat → List Rat
  | a :: as, b :: bs => f a b :: pmap2 f as bs
  | _, _ => []

/-- relu(a) = max(a, 0). -/
def reluS (a : Rat) : Rat := if 0 < a then a else 0
/-- relu′(a), with relu′(0) = 0. -/
def reluD (a : Rat) : Rat := if 0 < a then 1 else 0
/-- |a|. -/
def absS (a : Rat) : Rat := if a < 0 then -a else a
/-- abs′(a) = sign(a), with abs′(0) = 0. -/
def absD (a : Rat) : Rat := if 0 < a then 1 else if a < 0 then -1 else 0
/-- sign(a) ∈ {−1, 0, 1}. -/
def signS (a : Rat) : Rat := if 0 < a then 1 else if a < 0 then -1 else 0
/-- sign′(a) = 0 everywhere, including the jump at 0 (the registry's convention). -/
def signD (_a : Rat) : Rat := 0
/-- shrink (ONNX Shrink with threshold l ≥ 0 and bias b): a − b above l,
a + b below −l, 0 between. -/
def shrinkS (l b a : Rat) : Rat := if l < a then a - b else if a < -l then a + b else 0
/-- shrink′(a): 1 strictly outside [−l, l], 0 inside and at ±l (the
registry's convention). -/
def shrinkD (l a : Rat) : Rat := if l < a then 1 else if a < -l then 1 else 0
/-- square′(a) = 2a. -/
def squareD (a : Rat) : Rat := 2 * a
/-- inv′(a) = −1/a². -/
def invD (a : Rat) : Rat := -(1 / (a * a))
/-- clamp(a) to [lo, hi]. -/
def clampS (lo hi a : Rat) : Rat := if a < lo then lo else if hi < a then hi else a
/-- clamp′(a): 1 strictly inside (lo, hi), else 0. -/
def clampD (lo hi a : Rat) : Rat := if lo < a then (if a < hi then 1 else 0) else 0
/-- max(a, b) and its partials: the winner 1, the loser 0, a tie ½ each. -/
def maxS (a b : Rat) : Rat := if a < b then b else a
def maxDa (a b : Rat) : Rat := if b < a then 1 else if a = b then 1 / 2 else 0
def maxDb (a b : Rat) : Rat := if a < b then 1 else if a = b then 1 / 2 else 0
/-- min(a, b) and its partials, with the same tie rule. -/
def minS (a b : Rat) : Rat := if b < a then b else a
def minDa (a b : Rat) : Rat := if a < b then 1 else if a = b then 1 / 2 else 0
def minDb (a b : Rat) : Rat := if b < a then 1 else if a = b then 1 / 2 else 0
/-- ∂(a/b)/∂a = 1/b, ∂(a/b)/∂b = −a/b². -/
def divDa (_a b : Rat) : Rat := 1 / b
def divDb (a b : Rat) : Rat := -(a / (b * b))

/-- ⌊√n⌋ by bisection: with lo² ≤ n < hi², halve [lo, hi) until
hi = lo + 1. Structural on the fuel f (for the kernel); each step halves
the interval, so from [0, n + 1) it stops after about log₂(n + 1) + 1
steps — the fuel n + 1 only bounds the recursion, the `if` stops it. -/
def isqrtBis (n : Nat) : Nat → Nat → Nat → Nat
  | 0, lo, _ => lo
  | f + 1, lo, hi =>
    if hi ≤ lo + 1 then lo
    else if (lo + hi) / 2 * ((lo + hi) / 2) ≤ n then isqrtBis n f ((lo + hi) / 2) hi
    else isqrtBis n f lo ((lo + hi) / 2)

/-- ⌊√n⌋, in O(log n) kernel steps. -/
def isqrt (n : Nat) : Nat := isqrtBis n (n + 1) 0 (n + 1)

/-- √q of a rational with a square numerator and denominator (the only
ones the registry's exact sqrt accepts: its generator draws them, and it
refuses others): √p / √q in lowest terms. On other rationals it is the
quotient of the integer square roots, a value the registry never claims. -/
def ratSqrt (q : Rat) : Rat := mkRat (isqrt q.num.toNat) (isqrt q.den)
/-- sqrt(max(a, 0)) and its derivative 1/(2√a) for a > 0, 0 for a ≤ 0. -/
def sqrtS (a : Rat) : Rat := if 0 < a then ratSqrt a else 0
def sqrtD (a : Rat) : Rat := if 0 < a then 1 / (2 * ratSqrt a) else 0

/-- mse_loss's divisor N: the element count, 1 when empty. -/
def mseN (n : Nat) : Rat := if n = 0 then 1 else (n : Rat)
/-- The residual x − y. -/
def resid (x y : List Rat) : List Rat := padd x (smul (-1) y)

/-- n zeros. -/
def zerosN : Nat → List Rat
  | 0 => []
  | n + 1 => 0 :: zerosN n

/-- Σₖ of the K consecutive chunks of length B of l (chunk k holds the
elements kB … kB + B − 1). -/
def sumChunks (B : Nat) : Nat → List Rat → List Rat
  | 0, _ => zerosN B
  | K + 1, l => padd (l.take B) (sumChunks B K (l.drop B))

/-- d repeated K times, concatenated. -/
def repChunks (d : List Rat) : Nat → List Rat
  | 0 => []
  | K + 1 => d ++ repChunks d K

/-- The sum over the middle axis of an [A, K, B] tensor, flat: A blocks of
K·B elements, each reduced to B. -/
def reduceAKB (K B : Nat) : Nat → List Rat → List Rat
  | 0, _ => []
  | A + 1, l => sumChunks B K (l.take (K * B)) ++ reduceAKB K B A (l.drop (K * B))

/-- Its adjoint: each output block of B elements repeated K times. -/
def bcastAKB (K B : Nat) : Nat → List Rat → List Rat
  | 0, _ => []
  | A + 1, d => repChunks (d.take B) K ++ bcastAKB K B A (d.drop B)

/-- Element j of a list, 0 past its end. -/
def nth : List Rat → Nat → Rat
  | [], _ => 0
  | a :: _, 0 => a
  | _ :: as, j + 1 => nth as j

/-- Element j of a list of naturals, 0 past its end. -/
def nthN : List Nat → Nat → Nat
  | [], _ => 0
  | a :: _, 0 => a
  | _ :: as, j + 1 => nthN as j

/-- The gather y_i = x_{g_i} (0 for an index past the end). -/
def gather (g : List Nat) (x : List Rat) : List Rat :=
  match g with
  | [] => []
  | j :: js => nth x j :: gather js x

/-- v with d added at position j (unchanged when j is past the end). -/
def addAt : List Rat → Nat → Rat → List Rat
  | [], _, _ => []
  | a :: as, 0, d => (a + d) :: as
  | a :: as, j + 1, d => a :: addAt as j d

/-- The adjoint of `gather g` into a tensor of n elements:
(scatter n g δ)_j = Σ_{i : gᵢ = j} δᵢ. -/
def scatter (n : Nat) : List Nat → List Rat → List Rat
  | j :: js, d :: ds => addAt (scatter n js ds) j d
  | _, _ => zerosN n

/-- [k, k + 1, …, k + n − 1], built front to back in n steps. -/
def uptoFrom : Nat → Nat → List Nat
  | _, 0 => []
  | k, n + 1 => k :: uptoFrom (k + 1) n

/-- [0, 1, …, n − 1] (linear: no append). -/
def upto (n : Nat) : List Nat := uptoFrom 0 n

/-- Row-major strides of a shape. -/
def strides : List Nat → List Nat
  | [] => []
  | _ :: ns => size ns :: strides ns

/-- The multi-index of flat index i in a shape. -/
def unflat : List Nat → Nat → List Nat
  | [], _ => []
  | _ :: ns, i => i / size ns :: unflat ns (i % size ns)

/-- Σₖ mₖ·wₖ. -/
def wsum : List Nat → List Nat → Nat
  | m :: ms, w :: ws => m * w + wsum ms ws
  | _, _ => 0

/-- The list with entry k replaced by v. -/
def setN : List Nat → Nat → Nat → List Nat
  | [], _, _ => []
  | _ :: ns, 0, v => v :: ns
  | n :: ns, k + 1, v => n :: setN ns k v

/-- The list with v added to entry k. -/
def bumpN : List Nat → Nat → Nat → List Nat
  | [], _, _ => []
  | n :: ns, 0, v => (n + v) :: ns
  | n :: ns, k + 1, v => n :: bumpN ns k v

/-! ## The window primitives (`Tlcheck.Window` proves their laws)

Sparse linear maps: -/

/-- One entry of a sparse linear map: output `o` receives `w · x[i]`. -/
structure Tap where
  o : Nat
  i : Nat
  w : Rat

/-- y = Σ over the entries of w · x[i], added at o, into m outputs (an
entry naming an output at or past m adds nothing; an input past the end
reads 0). -/
def tapply (m : Nat) : List Tap → List Rat → List Rat
  | [], _ => zerosN m
  | e :: es, x => addAt (tapply m es x) e.o (e.w * nth x e.i)

/-- The transpose into n inputs: x̄[i] receives w · δ[o] for every entry. -/
def tapplyT (n : Nat) : List Tap → List Rat → List Rat
  | [], _ => zerosN n
  | e :: es, d => addAt (tapplyT n es d) e.i (e.w * nth d e.o)

/-- One spatial axis: S small positions, B big positions, kernel k, stride
s, dilation dl, begin padding pb and end padding pe (pe only enters
avg_pool's divisor; the output extent is part of S or B, as the registry's
`planWin` computes it). -/
structure Axis where
  S : Nat
  B : Nat
  k : Nat
  s : Nat
  dl : Nat
  pb : Nat
  pe : Nat

/-- A triple of the relation: flat small, kernel and big positions. -/
structure Win where
  sm : Nat
  j : Nat
  bg : Nat

namespace Axis

/-- The triples of small position sm for kernel positions j, …, j + n − 1
whose big position is inside [0, B). -/
def kRow (g : Axis) (sm : Nat) : Nat → Nat → List Win
  | _, 0 => []
  | j, n + 1 =>
    if g.pb ≤ sm * g.s + j * g.dl ∧ sm * g.s + j * g.dl - g.pb < g.B then
      Win.mk sm j (sm * g.s + j * g.dl - g.pb) :: kRow g sm (j + 1) n
    else kRow g sm (j + 1) n

/-- The triples of small positions sm, …, sm + n − 1 (sm ascending, then j). -/
def rows (g : Axis) : Nat → Nat → List Win
  | _, 0 => []
  | sm, n + 1 => kRow g sm 0 g.k ++ rows g (sm + 1) n

/-- The relation of one axis. -/
def taps (g : Axis) : List Win := rows g 0 g.S

end Axis

/-- The small, kernel and big element counts of several axes. -/
def smallSize : List Axis → Nat
  | [] => 1
  | g :: gs => g.S * smallSize gs
def kernelSize : List Axis → Nat
  | [] => 1
  | g :: gs => g.k * kernelSize gs
def bigSize : List Axis → Nat
  | [] => 1
  | g :: gs => g.B * bigSize gs

/-- u after t in row-major order, the later axes' extents S, K, B. -/
def Win.cross (S K B : Nat) (t u : Win) : Win :=
  Win.mk (t.sm * S + u.sm) (t.j * K + u.j) (t.bg * B + u.bg)

/-- Every t of ts crossed with every u of us (t slowest). -/
def crossAll (S K B : Nat) (us : List Win) : List Win → List Win
  | [] => []
  | t :: ts => us.map (Win.cross S K B t) ++ crossAll S K B us ts

/-- The relation of several spatial axes, the first slowest (the
registry's row-major flat positions). -/
def winTaps : List Axis → List Win
  | [] => [Win.mk 0 0 0]
  | g :: gs => crossAll (smallSize gs) (kernelSize gs) (bigSize gs) (winTaps gs) g.taps

/-- A term of a bilinear map: output p receives W[q]·x[r]. -/
structure Mono where
  p : Nat
  q : Nat
  r : Nat

/-- The map x ↦ Σ W[q]·x[r] at fixed W, as taps. -/
def xTaps (w : List Rat) : List Mono → List Tap
  | [] => []
  | t :: ts => Tap.mk t.p t.r (nth w t.q) :: xTaps w ts

/-- The map W ↦ Σ W[q]·x[r] at fixed x, as taps. -/
def wTaps (x : List Rat) : List Mono → List Tap
  | [] => []
  | t :: ts => Tap.mk t.p t.q (nth x t.r) :: wTaps x ts

/-- A bilinear map with a bias: the element counts of y, x, W and b, the
terms, and the bias index of each output (its channel). -/
structure Bil where
  ySize : Nat
  xSize : Nat
  wSize : Nat
  bSize : Nat
  terms : List Mono
  bIdx : List Nat

/-- y = Σ_{(p, q, r)} W[q]·x[r] at p, plus b[bIdx p]. -/
def bilFwd (B : Bil) (x w b : List Rat) : List Rat :=
  padd (tapply B.ySize (xTaps w B.terms) x) (gather B.bIdx b)

/-- The JVP: W·dx + dW·x + db (the product rule, term by term). -/
def bilJvp (B : Bil) (x w dx dw db : List Rat) : List Rat :=
  padd (padd (tapply B.ySize (xTaps w B.terms) dx) (tapply B.ySize (wTaps x B.terms) dw)) (gather B.bIdx db)

/-- The VJP: the transposes of the two linear maps, and the bias's scatter. -/
def bilVjp (B : Bil) (x w δ : List Rat) : List (List Rat) :=
  [tapplyT B.xSize (xTaps w B.terms) δ, tapplyT B.wSize (wTaps x B.terms) δ, scatter B.bSize B.bIdx δ]

/-- f k ++ f (k + 1) ++ … ++ f (k + n − 1). -/
def forFrom {α : Type} (f : Nat → List α) : Nat → Nat → List α
  | _, 0 => []
  | k, n + 1 => f k ++ forFrom f (k + 1) n

/-- f 0 ++ … ++ f (n − 1). -/
def forN {α : Type} (n : Nat) (f : Nat → List α) : List α := forFrom f 0 n

/-- conv (the registry's, `spec/ops_window.go`): x of shape
[lead…, cin, in…], W of shape [cout, cin/groups, kernel…], b of shape
[cout], y of shape [lead…, cout, out…]; each axis's small side is the
output (`S` = out), its big side the input (`B` = in). `lead` is the
product of the axes before the channel axis. -/
structure Conv where
  lead : Nat
  cin : Nat
  cout : Nat
  groups : Nat
  axes : List Axis

namespace Conv
/-- Input and output channels per group. -/
def cg (c : Conv) : Nat := c.cin / c.groups
def cog (c : Conv) : Nat := c.cout / c.groups

/-- conv as a sum of products: output (l, co, o) receives
W[co, ch, j]·x[l, (co / cog)·cg + ch, i] for every channel ch < cg of co's
group and every triple (o, j, i) of the window relation. -/
def terms (c : Conv) : List Mono :=
  let ws := winTaps c.axes
  let S := smallSize c.axes
  let K := kernelSize c.axes
  let Bi := bigSize c.axes
  forN c.lead (fun l => forN c.cout (fun co => forN c.cg (fun ch =>
    ws.map (fun t => Mono.mk ((l * c.cout + co) * S + t.sm) ((co * c.cg + ch) * K + t.j)
      ((l * c.cin + co / c.cog * c.cg + ch) * Bi + t.bg)))))

/-- conv as a bilinear map with a bias: output p reads b[p / S mod cout]. -/
def bil (c : Conv) : Bil :=
  { ySize := c.lead * c.cout * smallSize c.axes, xSize := c.lead * c.cin * bigSize c.axes,
    wSize := c.cout * c.cg * kernelSize c.axes, bSize := c.cout, terms := c.terms,
    bIdx := (upto (c.lead * c.cout * smallSize c.axes)).map (fun p => p / smallSize c.axes % c.cout) }
end Conv

/-- conv_transpose (the registry's): x of shape [lead…, cin, in…], W of
shape [cin, cout/groups, kernel…], b of shape [cout], y of shape
[lead…, cout, out…]; each axis's small side is the input (`S` = in), its
big side the output (`B` = out, (in − 1)·s − pb − pe + dl·(k − 1) + 1 +
output_padding, as the registry's `planWin` computes it). -/
structure ConvT where
  lead : Nat
  cin : Nat
  cout : Nat
  groups : Nat
  axes : List Axis

namespace ConvT
def cg (c : ConvT) : Nat := c.cin / c.groups
def cog (c : ConvT) : Nat := c.cout / c.groups

/-- conv_transpose as a sum of products: output (l, co, bg) receives
x[l, ci, sm]·W[ci, co mod cog, j] for ci = (co / cog)·cg + ch, ch < cg, and
every triple (sm, j, bg) of the window relation — conv's relation read
from the other side. -/
def terms (c : ConvT) : List Mono :=
  let ws := winTaps c.axes
  let S := smallSize c.axes
  let K := kernelSize c.axes
  let Bo := bigSize c.axes
  forN c.lead (fun l => forN c.cout (fun co => forN c.cg (fun ch =>
    ws.map (fun t => Mono.mk ((l * c.cout + co) * Bo + t.bg)
      (((co / c.cog * c.cg + ch) * c.cog + co % c.cog) * K + t.j)
      ((l * c.cin + co / c.cog * c.cg + ch) * S + t.sm)))))

def bil (c : ConvT) : Bil :=
  { ySize := c.lead * c.cout * bigSize c.axes, xSize := c.lead * c.cin * smallSize c.axes,
    wSize := c.cin * c.cog * kernelSize c.axes, bSize := c.cout, terms := c.terms,
    bIdx := (upto (c.lead * c.cout * bigSize c.axes)).map (fun p => p / bigSize c.axes % c.cout) }
end ConvT

/-- A pool: `lead` independent slices (the product of the axes before the
spatial ones), each pooled over the spatial axes; each axis's small side
is the output, its big side the input. -/
structure Pool where
  lead : Nat
  axes : List Axis

/-- The number of triples of output position o. -/
def countSm (o : Nat) : List Win → Nat
  | [] => 0
  | t :: ts => (if t.sm = o then 1 else 0) + countSm o ts

/-- One axis: the kernel positions j < k of output o inside the padded
input, o·s + j·dl < B + pb + pe (count_include_pad's count). -/
def Axis.padCount (g : Axis) (o : Nat) : Nat :=
  ((upto g.k).filter (fun j => decide (o * g.s + j * g.dl < g.B + g.pb + g.pe))).length

/-- The product of the per-axis counts at a multi-index. -/
def padCountAll : List Axis → List Nat → Nat
  | g :: gs, o :: os => g.padCount o * padCountAll gs os
  | _, _ => 1

/-- The window values of output o of slice l, in the relation's order. -/
def window (x : List Rat) (Bi l o : Nat) : List Win → List Rat
  | [] => []
  | t :: ts => if t.sm = o then nth x (l * Bi + t.bg) :: window x Bi l o ts else window x Bi l o ts

/-- The maximum of a list: the left fold of `maxS` from its first element
(0 when empty; the registry refuses a window with no real element). -/
def maxL : List Rat → Rat
  | [] => 0
  | a :: as => as.foldl maxS a

/-- How many entries equal m. -/
def countEq (m : Rat) : List Rat → Nat
  | [] => 0
  | a :: as => (if a = m then 1 else 0) + countEq m as

namespace Pool
def outSize (q : Pool) : Nat := q.lead * smallSize q.axes
def inSize (q : Pool) : Nat := q.lead * bigSize q.axes

/-- The window relation of every slice as taps of weight f l t. -/
def taps (q : Pool) (f : Nat → Win → Rat) : List Tap :=
  let S := smallSize q.axes
  let Bi := bigSize q.axes
  let ws := winTaps q.axes
  forN q.lead (fun l => ws.map (fun t => Tap.mk (l * S + t.sm) (l * Bi + t.bg) (f l t)))

/-- avg_pool_nd without count_include_pad: the real positions of the window. -/
def divReal (q : Pool) (o : Nat) : Nat := countSm o (winTaps q.axes)
/-- avg_pool, and avg_pool_nd with count_include_pad: the positions inside
the padded input (for avg_pool, whose padding is below the kernel and
whose windows lie inside the padded input, the kernel size). -/
def divPad (q : Pool) (o : Nat) : Nat := padCountAll q.axes (unflat (q.axes.map Axis.S) o)

/-- The average pool with divisor D: weight 1/D(o) on every triple. -/
def avgTaps (q : Pool) (D : Nat → Nat) : List Tap := q.taps (fun _ t => 1 / (D t.sm : Rat))
def avgFwd (q : Pool) (D : Nat → Nat) (x : List Rat) : List Rat := tapply q.outSize (q.avgTaps D) x
def avgJvp (q : Pool) (D : Nat → Nat) (_x dx : List Rat) : List Rat := tapply q.outSize (q.avgTaps D) dx
def avgVjp (q : Pool) (D : Nat → Nat) (_x δ : List Rat) : List (List Rat) := [tapplyT q.inSize (q.avgTaps D) δ]

/-- The maximum of output o of slice l. -/
def winMax (q : Pool) (x : List Rat) (l o : Nat) : Rat := maxL (window x (bigSize q.axes) l o (winTaps q.axes))

/-- The max pool's tie rule: weight 1/t on each of the t window positions
attaining the maximum, 0 on the others. -/
def maxWeight (q : Pool) (x : List Rat) (l : Nat) (t : Win) : Rat :=
  if nth x (l * bigSize q.axes + t.bg) = q.winMax x l t.sm then
    1 / (countEq (q.winMax x l t.sm) (window x (bigSize q.axes) l t.sm (winTaps q.axes)) : Rat)
  else 0

def maxFwd (q : Pool) (x : List Rat) : List Rat :=
  (upto q.outSize).map (fun p => q.winMax x (p / smallSize q.axes) (p % smallSize q.axes))
def maxJvp (q : Pool) (x dx : List Rat) : List Rat := tapply q.outSize (q.taps (q.maxWeight x)) dx
def maxVjp (q : Pool) (x δ : List Rat) : List (List Rat) := [tapplyT q.inSize (q.taps (q.maxWeight x)) δ]
end Pool

/-- dropout at drop probability p with its recorded 0/1 keep mask:
x ⊙ mask / (1 − p) (p = 1: zeros, by Lean's 1 / 0 = 0). `Tlcheck.Dropout`
proves its laws. -/
def dropoutFwd (p : Rat) (mask x : List Rat) : List Rat := smul (1 / (1 - p)) (pmul mask x)
/-- Its JVP: the same linear map on the tangent. -/
def dropoutJvp (p : Rat) (mask _x dx : List Rat) : List Rat := dropoutFwd p mask dx
/-- Its VJP: the same map on the cotangent (the registry's reverse rule). -/
def dropoutVjp (p : Rat) (mask _x δ : List Rat) : List (List Rat) := [dropoutFwd p mask δ]

/-- An axis as the registry reads it: a negative axis counts from the end. -/
def normAxis (r : Nat) (a : Int) : Nat := if a < 0 then (a + r).toNat else a.toNat

/-- A primitive's attributes: the scale `c` (scale), the bounds `lo`, `hi`
(clamp), the axes (reductions, slice, transpose), the permutation
(permute), the slice bounds, the target shape (broadcast_to), the values
(const) — 0 or empty where a primitive has none — and the shape of the
first input. -/
structure Attr where
  c : Rat
  lo : Rat
  hi : Rat
  axis : Int
  shape : List Nat
  axis2 : Int
  perm : List Nat
  start : Nat
  stop : Nat
  toShape : List Nat
  values : List Rat
  shapes : List (List Nat)
  /-- The window geometry of conv, conv_transpose and the pools (the
  registry's `Window`): the kernel, the strides, the dilations (empty: all
  1), the pads (every begin, then every end; empty: all 0), the groups,
  whether an average pool divides by the positions inside the padded input
  (`avg_pool` always, `avg_pool_nd` with count_include_pad), and the output
  shape, whose spatial extents are the registry's `planWin`'s (ceil_mode and
  output_padding enter only through them). Defaults for every other
  primitive. -/
  kernel : List Nat := []
  stride : List Nat := []
  dilation : List Nat := []
  pads : List Nat := []
  groups : Nat := 1
  countPad : Bool := false
  outShape : List Nat := []
  /-- dropout's drop probability and its 0/1 keep mask, replayed by the
  emitter from the certificate's seed with the registry's own draw. -/
  p : Rat := 0
  mask : List Rat := []
  /-- ε of layer_norm, instance_norm and batch_norm_eval (the registry's
  default 1/100000 written out by the emitter when the certificate has
  none) and of l2_normalize (its default 0, written out likewise). -/
  eps : Rat := 0

namespace Attr
/-- The normalized axis. -/
def ax (a : Attr) : Nat := normAxis a.shape.length a.axis
/-- The elements before the axis (A), along it (K) and after it (B). -/
def dimA (a : Attr) : Nat := size (a.shape.take a.ax)
def dimK (a : Attr) : Nat := nthN a.shape a.ax
def dimB (a : Attr) : Nat := size (a.shape.drop (a.ax + 1))

/-- permute: output axis k is input axis perm[k]; the input flat index of
output element i. -/
def permShape (s p : List Nat) : List Nat := p.map (nthN s)
def permIdx (s p : List Nat) : List Nat :=
  (upto (size (permShape s p))).map (fun i => wsum (unflat (permShape s p) i) (p.map (nthN (strides s))))
def permuteIdx (a : Attr) : List Nat := permIdx a.shape a.perm
/-- transpose: the permutation swapping the two (normalized) axes. -/
def swapPerm (a : Attr) : List Nat :=
  let x := normAxis a.shape.length a.axis
  let y := normAxis a.shape.length a.axis2
  (upto a.shape.length).map (fun k => if k = x then y else if k = y then x else k)
def transposeIdx (a : Attr) : List Nat := permIdx a.shape a.swapPerm
/-- slice: elements start … stop − 1 along the axis. -/
def sliceShape (a : Attr) : List Nat := setN a.shape a.ax (a.stop - a.start)
def sliceIdx (a : Attr) : List Nat :=
  (upto (size a.sliceShape)).map (fun i => wsum (bumpN (unflat a.sliceShape i) a.ax a.start) (strides a.shape))
/-- broadcast_to: numpy broadcasting of shape to toShape, aligned on the
right; an extent 1 repeats. -/
def bcastIdx (a : Attr) : List Nat :=
  (upto (size a.toShape)).map (fun i =>
    wsum ((upto a.shape.length).map (fun d =>
      if nthN a.shape d = 1 then 0 else nthN (unflat a.toShape i) (a.toShape.length - a.shape.length + d)))
      (strides a.shape))

/-- tile (ONNX Tile, torch repeat; the registry's `tileMap`): the output
shape is `toShape` (the registry's attribute `Shape`), of the input's rank,
each extent a multiple of the input's; output coordinate d reads input
coordinate m[d] mod shape[d]. -/
def tileIdx (a : Attr) : List Nat :=
  (upto (size a.toShape)).map (fun i =>
    wsum ((upto a.shape.length).map (fun d => nthN (unflat a.toShape i) d % nthN a.shape d))
      (strides a.shape))

/-- gather (the registry's, constant indices along the axis; the indices
are the attribute `perm`, naturals below the axis extent): the output
[A, J, B] (J indices) reads the input [A, K, B] at index[j]: output flat
i = (p·J + j)·B + r reads (p·K + index[j])·B + r. -/
def gatherIdx (a : Attr) : List Nat :=
  (upto (a.dimA * (a.perm.length * a.dimB))).map (fun i =>
    (i / (a.perm.length * a.dimB) * a.dimK + nthN a.perm (i / a.dimB % a.perm.length)) * a.dimB + i % a.dimB)

/-- pad along one axis (the registry's `padSource`): output index o with
begin width b over an extent n reads input index o − b when that is in
[0, n); outside, mode 1 (reflect) mirrors without repeating the edge,
mode 2 (edge) repeats the edge, and mode 0 (constant) reads nothing. -/
def padSrc (mode : Int) (o b n : Nat) : Option Nat :=
  if b ≤ o ∧ o - b < n then some (o - b)
  else if mode = 1 then (if o < b then some (b - o) else some (2 * (n - 1) - (o - b)))
  else if mode = 2 then (if o < b then some 0 else some (n - 1))
  else none

/-- pad on every axis: the source multi-index, or none at a fill position. -/
def padSrcs (mode : Int) : List Nat → List Nat → List Nat → Option (List Nat)
  | o :: os, b :: bs, n :: ns =>
    match padSrc mode o b n, padSrcs mode os bs ns with
    | some i, some rest => some (i :: rest)
    | _, _ => none
  | _, _, _ => some []

/-- pad (the registry's): the widths are the attribute `perm` (every begin,
then every end), the mode `axis2` (0 constant, 1 reflect, 2 edge) and the
constant fill value `c`. The output shape: each extent plus its widths. -/
def padShape (a : Attr) : List Nat :=
  (upto a.shape.length).map (fun d => nthN a.shape d + nthN a.perm d + nthN a.perm (a.shape.length + d))
/-- The source of output element i: its input flat index, or `size shape`
(past the end: a gather reads 0 there, a scatter adds nothing) at a fill
position. -/
def padIdx (a : Attr) : List Nat :=
  (upto (size a.padShape)).map (fun i =>
    match padSrcs a.axis2 (unflat a.padShape i) (a.perm.take a.shape.length) a.shape with
    | some s => wsum s (strides a.shape)
    | none => size a.shape)
/-- The fill: `c` at the fill positions, 0 elsewhere. -/
def padFill (a : Attr) : List Rat :=
  (upto (size a.padShape)).map (fun i =>
    match padSrcs a.axis2 (unflat a.padShape i) (a.perm.take a.shape.length) a.shape with
    | some _ => 0
    | none => a.c)

/-- concat along the axis: the output shape (the first input's, with the
axis extents summed). -/
def concatShape (a : Attr) : List Nat :=
  setN a.shape a.ax ((a.shapes.map (fun s => nthN s a.ax)).foldr (· + ·) 0)
end Attr

/-- The flat concatenation of tensors. -/
def catAll : List (List Rat) → List Rat
  | [] => []
  | x :: xs => x ++ catAll xs

/-- The inverse split of a flat list by the element counts of shapes. -/
def splitBy : List (List Nat) → List Rat → List (List Rat)
  | [], _ => []
  | s :: ss, v => v.take (size s) :: splitBy ss (v.drop (size s))

/-- The element counts of shapes, summed. -/
def totalSize : List (List Nat) → Nat
  | [] => 0
  | s :: ss => size s + totalSize ss

/-- The flat index in `catAll` of output multi-index m, whose position
along the axis is p, among inputs of shapes ss starting at flat base. -/
def concatSrc (ax : Nat) (m : List Nat) : List (List Nat) → Nat → Nat → Nat
  | [], _, _ => 0
  | s :: ss, p, base =>
    if p < nthN s ax then base + wsum (setN m ax p) (strides s)
    else concatSrc ax m ss (p - nthN s ax) (base + size s)

/-- Element j of a list of shapes, [] past its end. -/
def nthL : List (List Nat) → Nat → List Nat
  | [], _ => []
  | a :: _, 0 => a
  | _ :: as, j + 1 => nthL as j

/-- scatter (ONNX ScatterElements, reduction none; the registry's
`ScatterTargets`): the data x has shape `shape`, the updates u the
indices' shape `shapes[1]`, the constant indices are the attribute `perm`
(naturals below the axis extent) and the axis `axis`. Update element e,
at multi-index m in the indices' shape, writes the data position with
m's coordinates except index[e] on the axis. -/
def Attr.scatterTgt (a : Attr) (e : Nat) : Nat :=
  wsum (setN (unflat (nthL a.shapes 1) e) a.ax (nthN a.perm e)) (strides a.shape)

/-- The targets of every update element, in row-major order. -/
def Attr.scatterTgts (a : Attr) : List Nat :=
  (upto (size (nthL a.shapes 1))).map a.scatterTgt

/-- The first update entry (counted from e) whose target is p, if any. -/
def findTgt (p : Nat) : List Nat → Nat → Option Nat
  | [], _ => none
  | t :: ts, e => if t = p then some e else findTgt p ts (e + 1)

/-- scatter as a gather from the concatenation x ++ u: output position p
reads u's element e (flat index size shape + e) when update e writes p,
else x's element p. (The registry refuses duplicate targets, so at most
one e writes p; `findTgt` takes the first.) -/
def Attr.scatterSrc (a : Attr) (p : Nat) : Nat :=
  match findTgt p a.scatterTgts 0 with
  | some e => size a.shape + e
  | none => p

/-- scatter's index list: one source per data position. -/
def Attr.scatterIdx (a : Attr) : List Nat :=
  (upto (size a.shape)).map a.scatterSrc

namespace Attr
/-- linear(x, W, b) with W of shape [m, n] and x of shape [n] or [B, n]:
the dimensions. -/
def linM (a : Attr) : Nat := nthN (nthL a.shapes 1) 0
def linN (a : Attr) : Nat := nthN (nthL a.shapes 1) 1
def linB (a : Attr) : Nat := size ((nthL a.shapes 0).take ((nthL a.shapes 0).length - 1))
/-- The [B, m, n] view: element t = (i·m + o)·n + j reads x[i, j], W[o, j];
output element i·m + o reads b[o]. -/
def linGx (a : Attr) : List Nat :=
  (upto (a.linB * a.linM * (a.linN * 1))).map (fun t => t / (a.linM * a.linN) * a.linN + t % a.linN)
def linGw (a : Attr) : List Nat :=
  (upto (a.linB * a.linM * (a.linN * 1))).map (fun t => t % (a.linM * a.linN))
def linGb (a : Attr) : List Nat := (upto (a.linB * a.linM * 1)).map (fun t => t % a.linM)
/-- The sizes of the three inputs. -/
def linSx (a : Attr) : Nat := size (nthL a.shapes 0)
def linSw (a : Attr) : Nat := size (nthL a.shapes 1)
def linSb (a : Attr) : Nat := size (nthL a.shapes 2)

end Attr

namespace Attr
/-- The number of spatial axes of a window primitive. -/
def winR (a : Attr) : Nat := a.kernel.length
/-- The first spatial axis of the input: the spatial axes end the shape. -/
def winSp (a : Attr) : Nat := a.shape.length - a.winR
/-- The dilation of spatial axis d, 1 when none is given. -/
def winDil (a : Attr) (d : Nat) : Nat := if a.dilation.length = 0 then 1 else nthN a.dilation d
/-- Spatial axis d of the relation: the input extent is the first input's,
the output extent the output shape's; the small side is the output when
`outSmall` (conv and the pools), the input otherwise (conv_transpose). -/
def winAxis (a : Attr) (outSmall : Bool) (d : Nat) : Axis :=
  { S := if outSmall then nthN a.outShape (a.winSp + d) else nthN a.shape (a.winSp + d),
    B := if outSmall then nthN a.shape (a.winSp + d) else nthN a.outShape (a.winSp + d),
    k := nthN a.kernel d, s := nthN a.stride d, dl := a.winDil d,
    pb := nthN a.pads d, pe := nthN a.pads (a.winR + d) }
/-- Every spatial axis, the first slowest. -/
def winAxes (a : Attr) (outSmall : Bool) : List Axis := (upto a.winR).map (a.winAxis outSmall)
/-- conv's geometry: x [lead…, cin, in…], W [cout, cin/groups, kernel…]. -/
def convG (a : Attr) : Conv :=
  { lead := size (a.shape.take (a.winSp - 1)), cin := nthN a.shape (a.winSp - 1),
    cout := nthN (nthL a.shapes 1) 0, groups := a.groups, axes := a.winAxes true }
/-- conv_transpose's geometry: x [lead…, cin, in…], W [cin, cout/groups, kernel…]. -/
def convTG (a : Attr) : ConvT :=
  { lead := size (a.shape.take (a.winSp - 1)), cin := nthN a.shape (a.winSp - 1),
    cout := nthN (nthL a.shapes 1) 1 * a.groups, groups := a.groups, axes := a.winAxes false }
/-- A pool's geometry: x [lead…, in…]. -/
def poolG (a : Attr) : Pool := { lead := size (a.shape.take a.winSp), axes := a.winAxes true }
/-- The average pools' divisor: the positions inside the padded input
(`countPad`) or the real ones. -/
def avgDiv (a : Attr) : Nat → Nat := if a.countPad then a.poolG.divPad else a.poolG.divReal
end Attr

/-- The last element of a list of naturals, 0 when empty. -/
def lastN (l : List Nat) : Nat := nthN l (l.length - 1)

/-- numpy broadcasting of two shapes, aligned on the right (an extent 1
takes the other's). -/
def bshape (p q : List Nat) : List Nat :=
  let r := max p.length q.length
  let p' := (upto (r - p.length)).map (fun _ => 1) ++ p
  let q' := (upto (r - q.length)).map (fun _ => 1) ++ q
  (upto r).map (fun d => if nthN p' d = 1 then nthN q' d else nthN p' d)

/-- The flat index in a tensor of shape s broadcast to shape t of the
element whose multi-index in t is m. -/
def bsrc (s t m : List Nat) : Nat :=
  wsum ((upto s.length).map (fun d =>
    if nthN s d = 1 then 0 else nthN m (t.length - s.length + d))) (strides s)

namespace Attr
/-- matmul(a, b), numpy semantics: a of shape [.., m, k] or [k] (read as
[1, k]), b of shape [.., k, n] or [k] (read as [k, 1]), the batch axes
broadcast. -/
def mmA (a : Attr) : List Nat :=
  if (nthL a.shapes 0).length = 1 then [1, nthN (nthL a.shapes 0) 0] else nthL a.shapes 0
def mmB (a : Attr) : List Nat :=
  if (nthL a.shapes 1).length = 1 then [nthN (nthL a.shapes 1) 0, 1] else nthL a.shapes 1
def mmM (a : Attr) : Nat := nthN a.mmA (a.mmA.length - 2)
def mmK (a : Attr) : Nat := lastN a.mmA
def mmN (a : Attr) : Nat := lastN a.mmB
def mmBatchA (a : Attr) : List Nat := a.mmA.take (a.mmA.length - 2)
def mmBatchB (a : Attr) : List Nat := a.mmB.take (a.mmB.length - 2)
def mmBatch (a : Attr) : List Nat := bshape a.mmBatchA a.mmBatchB
/-- The number of output elements: batch · m · n. -/
def mmOut (a : Attr) : Nat := size a.mmBatch * a.mmM * a.mmN
/-- The [batch, m, n, k] view: element t = ((β·m + i)·n + j)·k + l reads
a[β, i, l] and b[β, l, j]. -/
def mmGa (a : Attr) : List Nat :=
  (upto (a.mmOut * (a.mmK * 1))).map (fun t =>
    bsrc a.mmBatchA a.mmBatch (unflat a.mmBatch (t / (a.mmK * a.mmN * a.mmM))) * (a.mmM * a.mmK) +
      t / (a.mmK * a.mmN) % a.mmM * a.mmK + t % a.mmK)
def mmGb (a : Attr) : List Nat :=
  (upto (a.mmOut * (a.mmK * 1))).map (fun t =>
    bsrc a.mmBatchB a.mmBatch (unflat a.mmBatch (t / (a.mmK * a.mmN * a.mmM))) * (a.mmK * a.mmN) +
      t % a.mmK * a.mmN + t / a.mmK % a.mmN)

/-- concat as a gather from the concatenated inputs. -/
def concatIdx (a : Attr) : List Nat :=
  (upto (size a.concatShape)).map (fun i =>
    concatSrc a.ax (unflat a.concatShape i) a.shapes (nthN (unflat a.concatShape i) a.ax) 0)
end Attr

/-! ## The normalisations (`Tlcheck.Norm` proves their adjointness)

Each is, at fixed inputs, a linear map of its tangents given by one tap
list per input (`tapplyAll`), its VJP the transposes (`tapplyTAll`). The
square root is `ratSqrt`, exact on the square rationals the registry's
exact sqrt accepts (it refuses the others, so they are never certified). -/

/-- Σₖ tapply (tapsₖ) dxₖ into m outputs, over the common prefix. -/
def tapplyAll (m : Nat) : List (List Tap) → List (List Rat) → List Rat
  | es :: ess, dx :: dxs => padd (tapply m es dx) (tapplyAll m ess dxs)
  | _, _ => zerosN m

/-- The transposes, input k into nₖ elements. -/
def tapplyTAll : List Nat → List (List Tap) → List Rat → List (List Rat)
  | n :: ns, es :: ess, d => tapplyT n es d :: tapplyTAll ns ess d
  | _, _, _ => []

/-- Element k of a list of tensors, [] past its end. -/
def nthRL : List (List Rat) → Nat → List Rat
  | [], _ => []
  | a :: _, 0 => a
  | _ :: as, k + 1 => nthRL as k

/-- Element j of the optional parameter k (the inputs after x), d when
the parameter is absent (γ = 1, β = 0 as the registry defaults them). -/
def parOr (ps : List (List Rat)) (k : Nat) (d : Rat) (j : Nat) : Rat :=
  if k < ps.length then nth (nthRL ps k) j else d

/-- A lane's mean Σ xᵢ / K over its flat positions. -/
def laneMean (x : List Rat) (ps : List Nat) : Rat := total (gather ps x) / (ps.length : Rat)
/-- A lane's biased variance Σ (xᵢ − μ)² / K. -/
def laneVar (x : List Rat) (ps : List Nat) : Rat :=
  total (pmap (fun v => (v - laneMean x ps) * (v - laneMean x ps)) (gather ps x)) / (ps.length : Rat)
/-- s = 1 / sqrt(σ² + ε). -/
def laneInv (eps : Rat) (x : List Rat) (ps : List Nat) : Rat := 1 / ratSqrt (laneVar x ps + eps)
/-- x̂ at flat index i of the lane ps: (xᵢ − μ)·s. -/
def laneHat (eps : Rat) (x : List Rat) (ps : List Nat) (i : Nat) : Rat := (nth x i - laneMean x ps) * laneInv eps x ps
/-- A lane's 2-norm √(Σ xᵢ²) over its flat positions (`ratSqrt`: exact on the
square rationals); l2_normalize's and renorm's ν. -/
def laneNorm (x : List Rat) (ps : List Nat) : Rat := ratSqrt (total (pmap (fun v => v * v) (gather ps x)))

/-- A lane normalisation (layer_norm, instance_norm): n elements, the lane
(flat positions) of each flat index, and the index of its γ and β. -/
structure NormG where
  n : Nat
  lane : Nat → List Nat
  par : Nat → Nat

namespace NormG
def hat (q : NormG) (eps : Rat) (x : List Rat) (i : Nat) : Rat := laneHat eps x (q.lane i) i
/-- y = x̂·γ + β. -/
def fwd (q : NormG) (eps : Rat) (x : List Rat) (g b : Nat → Rat) : List Rat :=
  (upto q.n).map (fun i => q.hat eps x i * g (q.par i) + b (q.par i))
/-- ∂yᵢ/∂xⱼ = γ·s·([i = j] − 1/K − x̂ᵢ·x̂ⱼ/K) for j in i's lane of K. -/
def xTaps (q : NormG) (eps : Rat) (x : List Rat) (g : Nat → Rat) : List Tap :=
  forN q.n (fun i => (q.lane i).map (fun j =>
    Tap.mk i j (g (q.par i) * laneInv eps x (q.lane i) *
      ((if i = j then (1 : Rat) else 0) - 1 / ((q.lane i).length : Rat) -
        q.hat eps x i * q.hat eps x j / ((q.lane i).length : Rat)))))
/-- ∂yᵢ/∂γ = x̂ᵢ, ∂yᵢ/∂β = 1, at the parameter index of i. -/
def gTaps (q : NormG) (eps : Rat) (x : List Rat) : List Tap := (upto q.n).map (fun i => Tap.mk i (q.par i) (q.hat eps x i))
def bTaps (q : NormG) : List Tap := (upto q.n).map (fun i => Tap.mk i (q.par i) 1)
/-- The tap lists of x, γ and β. -/
def taps (q : NormG) (eps : Rat) (x : List Rat) (g : Nat → Rat) : List (List Tap) :=
  [q.xTaps eps x g, q.gTaps eps x, q.bTaps]
end NormG

namespace Attr
/-- layer_norm's lanes: along the axis, in the [A, K, B] view; γ, β by
the position along it. -/
def lnG (a : Attr) : NormG :=
  { n := size a.shape,
    lane := fun i => (upto a.dimK).map (fun k => (i / (a.dimK * a.dimB) * a.dimK + k) * a.dimB + i % a.dimB),
    par := fun i => i / a.dimB % a.dimK }
/-- instance_norm's spatial size S: x is [N, C, spatial…]. -/
def inS (a : Attr) : Nat := size (a.shape.drop 2)
/-- instance_norm's lanes: the S positions of each (n, c), the [N·C, S]
view; γ, β by the channel. -/
def inG (a : Attr) : NormG :=
  { n := size a.shape, lane := fun i => (upto a.inS).map (fun j => i / a.inS * a.inS + j),
    par := fun i => i / a.inS % nthN a.shape 1 }
/-- batch_norm_eval's channel of flat index i (the axis's extent C and
the elements after it). -/
def bnCh (a : Attr) (i : Nat) : Nat := i / size (a.shape.drop (a.ax + 1)) % nthN a.shape a.ax
/-- max(σ²_c, 0) + ε and its square root s_c (the inputs after x: μ, σ², γ, β). -/
def bnVpos (a : Attr) (ps : List (List Rat)) (c : Nat) : Rat := reluS (parOr ps 1 0 c) + a.eps
def bnStd (a : Attr) (ps : List (List Rat)) (c : Nat) : Rat := ratSqrt (a.bnVpos ps c)
/-- q = (x − μ_c)/s_c. -/
def bnQ (a : Attr) (x : List Rat) (ps : List (List Rat)) (i : Nat) : Rat :=
  (nth x i - parOr ps 0 0 (a.bnCh i)) / a.bnStd ps (a.bnCh i)
/-- y = q·γ_c + β_c. -/
def bnFwd (a : Attr) (x : List Rat) (ps : List (List Rat)) : List Rat :=
  (upto (size a.shape)).map (fun i => a.bnQ x ps i * parOr ps 2 1 (a.bnCh i) + parOr ps 3 0 (a.bnCh i))
/-- The partials of x, μ, σ², γ, β: γ/s, −γ/s, −q·γ·step(σ²)/(2(max(σ², 0) + ε)), q, 1
(the registry's, `spec/ops_channel_norm.go`). -/
def bnTaps (a : Attr) (x : List Rat) (ps : List (List Rat)) : List (List Tap) :=
  [(upto (size a.shape)).map (fun i => Tap.mk i i (parOr ps 2 1 (a.bnCh i) / a.bnStd ps (a.bnCh i))),
   (upto (size a.shape)).map (fun i => Tap.mk i (a.bnCh i) (-(parOr ps 2 1 (a.bnCh i) / a.bnStd ps (a.bnCh i)))),
   (upto (size a.shape)).map (fun i => Tap.mk i (a.bnCh i)
     (-(a.bnQ x ps i * parOr ps 2 1 (a.bnCh i) * reluD (parOr ps 1 0 (a.bnCh i))) /
       (a.bnVpos ps (a.bnCh i) + a.bnVpos ps (a.bnCh i)))),
   (upto (size a.shape)).map (fun i => Tap.mk i (a.bnCh i) (a.bnQ x ps i)),
   (upto (size a.shape)).map (fun i => Tap.mk i (a.bnCh i) 1)]
end Attr

/-- Π of a lane (the empty product is 1). Over `Rat` the registry's left
fold from 1 has the same value. -/
def prodL : List Rat → Rat
  | [] => 1
  | x :: xs => x * prodL xs

/-- The tap lists of the outputs, concatenated. -/
def joinTaps : List (List Tap) → List Tap
  | [] => []
  | t :: ts => t ++ joinTaps ts

namespace Attr
/-- reduce_prod along the axis (removed; the registry's `reduceProdPrim`):
output o of the [A, B] result, at p = o / B and r = o % B, is the product
of the lane x[p, j, r], j < K, of the [A, K, B] view; lane element j is
flat (p·K + j)·B + r. -/
def rpSrc (a : Attr) (o j : Nat) : Nat := (o / a.dimB * a.dimK + j) * a.dimB + o % a.dimB
def rpLane (a : Attr) (x : List Rat) (o : Nat) : List Rat := (upto a.dimK).map (fun j => nth x (a.rpSrc o j))
def rpFwd (a : Attr) (x : List Rat) : List Rat :=
  (upto (a.dimA * a.dimB)).map (fun o => prodL (a.rpLane x o))
/-- The partials: ∂y_o/∂x[p, j, r] = Π_{i≠j} lane_i = (Π_{i<j} lane_i)·(Π_{i>j} lane_i),
the registry's P_j·S_{j+1} (prefix and suffix products, exact with zeros). -/
def rpTaps (a : Attr) (x : List Rat) : List Tap :=
  joinTaps ((upto (a.dimA * a.dimB)).map (fun o => (upto a.dimK).map (fun j =>
    Tap.mk o (a.rpSrc o j) (prodL ((a.rpLane x o).take j) * prodL ((a.rpLane x o).drop (j + 1))))))
/-- l2_normalize (the registry's, `spec/ops_extra_norm.go`): along the
axis, on the lanes of the [A, K, B] view (`lnG`'s), ν = √(Σ_j x_j²) —
`ratSqrt`, exact on the square rationals, the only lanes whose norm the
registry's exact sqrt accepts and so the only ones it certifies —, the
divisor m = max(ν, ε) and y_i = x_i / m. -/
def l2Nu (a : Attr) (x : List Rat) (i : Nat) : Rat := laneNorm x (a.lnG.lane i)
def l2M (a : Attr) (x : List Rat) (i : Nat) : Rat := maxS (a.l2Nu x i) a.eps
/-- The max's weight on ν: 1 if ν > ε, ½ at the tie ν = ε, 0 below (`maxDa`,
the registry's max convention). -/
def l2W (a : Attr) (x : List Rat) (i : Nat) : Rat := maxDa (a.l2Nu x i) a.eps
def l2Y (a : Attr) (x : List Rat) (i : Nat) : Rat := nth x i / a.l2M x i
def l2Fwd (a : Attr) (x : List Rat) : List Rat := (upto (size a.shape)).map (fun i => a.l2Y x i)
/-- The partials ∂y_i/∂x_j = ([i = j] − w·y_i·y_j)/m for j in i's lane: the
registry's dy = (dx − w·(y·dx)·y)/m, entry by entry. -/
def l2Taps (a : Attr) (x : List Rat) : List Tap :=
  forN (size a.shape) (fun i => (a.lnG.lane i).map (fun j =>
    Tap.mk i j (((if i = j then (1 : Rat) else 0) - a.l2W x i * a.l2Y x i * a.l2Y x j) / a.l2M x i)))
/-- renorm (the registry's, `spec/ops_extra_renorm.go`; torch.renorm with
p = 2, c = maxnorm on `Attr.c`): the lane of flat index i is the
sub-tensor x[…, k, …] with k = i's index on the axis — in the [A, K, B]
view every (p, r), flat (p·K + k)·B + r, row-major as the registry's
`subTensorIndices`. Not l2_normalize's lanes (those fix p and r and run
over k), but the same rule on them: ν = ‖lane‖₂ (`laneNorm`, exact on the
square rationals), m = max(ν, c), y = c·x/m, the scale s = min(1, c/ν). -/
def rnLane (a : Attr) (i : Nat) : List Nat :=
  forN a.dimA (fun p => (upto a.dimB).map (fun r => (p * a.dimK + i / a.dimB % a.dimK) * a.dimB + r))
def rnNu (a : Attr) (x : List Rat) (i : Nat) : Rat := laneNorm x (a.rnLane i)
def rnM (a : Attr) (x : List Rat) (i : Nat) : Rat := maxS (a.rnNu x i) a.c
/-- The max's weight on ν: 1 if ν > c, ½ at the tie ν = c, 0 below (`maxDa`). -/
def rnW (a : Attr) (x : List Rat) (i : Nat) : Rat := maxDa (a.rnNu x i) a.c
/-- x/m: l2_normalize's output at ε = c on the sub-tensor. -/
def rnY (a : Attr) (x : List Rat) (i : Nat) : Rat := nth x i / a.rnM x i
def rnFwd (a : Attr) (x : List Rat) : List Rat := (upto (size a.shape)).map (fun i => a.c * a.rnY x i)
/-- The partials ∂yᵢ/∂xⱼ = c·([i = j] − w·(xᵢ/m)(xⱼ/m))/m for j in i's
sub-tensor: c times l2_normalize's partials at ε = c — the registry's
dy = c·(dx − w·p·x/m)/m = s·dx − w(c/ν)(x̂·dx)x̂, entry by entry. Symmetric
in i and j (i and j share a sub-tensor, so rnM, rnW agree), hence the
VJP is the same map (its transpose). -/
def rnTaps (a : Attr) (x : List Rat) : List Tap :=
  forN (size a.shape) (fun i => (a.rnLane i).map (fun j =>
    Tap.mk i j (a.c * ((if i = j then (1 : Rat) else 0) - a.rnW x i * a.rnY x i * a.rnY x j) / a.rnM x i)))
end Attr

/-! ## The rounding primitives round_f16, round_bf16, round_f32

The registry's exact rule (`spec/ops_round.go`, `FloatFormat.RoundRat`):
for x ≠ 0 with 2^e ≤ |x| < 2^(e+1), k = max(e, emin) − p + 1 (the quantum
of x's binade, the subnormal quantum below 2^emin) and
round_T(x) = sign(x)·n·2^k with n the natural number nearest |x|·2^−k, the
even one at a tie; round_T(0) = 0. When n·2^k ≥ 2^(emax+1) the conversion
overflows (IEEE 754 gives ±∞), which over the rationals the registry
refuses (a `DomainError`: the primitive is partial).

**Overflow in the `Rat` carrier.** ±∞ is no rational, and the registry
gives no rational value there, so neither does Lean: `roundQ` is `none` at
an overflow, `roundAll` is `none` for a tensor with an overflowing element,
and `Prim.fwd` of such a tensor is `[]` — a list whose length no
non-empty output shape has, so `shapesOk` (adjointness certificates) and
`Comp`'s recorded-value check refuse every case with an overflowing
element, as the registry refuses the evaluation. The derivative is 0
everywhere (`roundD`, the registry's rule: 0 between the jumps, 0 by
convention at them, as sign′(0) := 0), so the JVP and VJP are the diagonal
scaling by 0, sign's form. -/

/-- A binary floating-point format with gradual underflow: `prec`
significant bits (the implicit one included), least normal exponent
`emin`, greatest exponent `emax` (the registry's `FloatFormat`). -/
structure Fmt where
  prec : Nat
  emin : Int
  emax : Int

/-- binary16: p = 11, emin = −14, emax = 15 (Ω = 65520). -/
def Fmt.f16 : Fmt := { prec := 11, emin := -14, emax := 15 }
/-- bfloat16: p = 8, emin = −126, emax = 127. -/
def Fmt.bf16 : Fmt := { prec := 8, emin := -126, emax := 127 }
/-- binary32: p = 24, emin = −126, emax = 127. -/
def Fmt.f32 : Fmt := { prec := 24, emin := -126, emax := 127 }

/-- 2^k for an integer k, exactly (`mkRat`: GMP in the kernel). -/
def pow2 (k : Int) : Rat :=
  if 0 ≤ k then mkRat ((2 ^ k.toNat : Nat) : Int) 1 else mkRat 1 (2 ^ (-k).toNat)

/-- The number of binary digits of n (0 for 0), halving at most `fuel`
times; structural in the fuel. -/
def bitLenF : Nat → Nat → Nat
  | 0, _ => 0
  | f + 1, n => if n = 0 then 0 else bitLenF f (n / 2) + 1

/-- The number of binary digits of n: fuel n suffices (n has at most n
digits), and the recursion stops after that many halvings. -/
def bitLen (n : Nat) : Nat := bitLenF n n

/-- ⌊log₂ a⌋ for a > 0 with a = N/D in lowest terms: with bN, bD the bit
lengths, 2^(bN−bD−1) < a < 2^(bN−bD+1), so it is e = bN − bD, or e − 1
when a < 2^e (the registry computes it the same way). -/
def flog2 (a : Rat) : Int :=
  if a < pow2 ((bitLen a.num.toNat : Int) - (bitLen a.den : Int)) then
    (bitLen a.num.toNat : Int) - (bitLen a.den : Int) - 1
  else (bitLen a.num.toNat : Int) - (bitLen a.den : Int)

/-- The natural number nearest n/d (d > 0), the even one at a tie: with
q = n / d and r = n % d, q + 1 when 2r > d, q when 2r < d, and at 2r = d
whichever of q, q + 1 is even. -/
def rneNat (n d : Nat) : Nat :=
  if d < 2 * (n % d) then n / d + 1
  else if 2 * (n % d) = d then (if n / d % 2 = 1 then n / d + 1 else n / d)
  else n / d

/-- The quantum exponent of a > 0 in format f: k = max(⌊log₂ a⌋, emin) − p + 1. -/
def roundK (f : Fmt) (a : Rat) : Int := max (flog2 a) f.emin - (f.prec : Int) + 1

/-- |round_T(x)| for a = |x| > 0: n·2^k with n = `rneNat` of a·2^−k. -/
def roundMag (f : Fmt) (a : Rat) : Rat :=
  mkRat (rneNat (a * pow2 (-(roundK f a))).num.toNat (a * pow2 (-(roundK f a))).den : Int) 1 *
    pow2 (roundK f a)

/-- **round_T(x)** over the rationals: `some` of the registry's value,
`none` at an overflow (|round_T(x)| ≥ 2^(emax+1), i.e. |x| ≥ Ω). -/
def roundQ (f : Fmt) (x : Rat) : Option Rat :=
  if x = 0 then some 0
  else if x < 0 then
    (if pow2 (f.emax + 1) ≤ roundMag f (-x) then none else some (-(roundMag f (-x))))
  else
    (if pow2 (f.emax + 1) ≤ roundMag f x then none else some (roundMag f x))

/-- Cons onto an optional list: `none` if either part is. -/
def consOpt : Option Rat → Option (List Rat) → Option (List Rat)
  | some y, some ys => some (y :: ys)
  | _, _ => none

/-- round_T elementwise: `none` when any element overflows. -/
def roundAll (f : Fmt) : List Rat → Option (List Rat)
  | [] => some []
  | a :: as => consOpt (roundQ f a) (roundAll f as)

/-- The list held by an optional list, `[]` for `none`. -/
def optL : Option (List Rat) → List Rat
  | some y => y
  | none => []

/-- round_T's forward on a tensor: the rounded tensor, `[]` (no shape's
value) at an overflow. -/
def roundFwd (f : Fmt) (x : List Rat) : List Rat := optL (roundAll f x)

/-- round_T′ = 0 (piecewise constant; 0 at the jumps by the registry's convention). -/
def roundD (_a : Rat) : Rat := 0

/-! ## The cast to an integer type, trunc_int

The registry's exact rule (`spec/ops_trunc.go`): with the integer range
[lo, hi] as the attributes `lo`, `hi` (the emitter writes the
certificate's `lo`, `hi` into `Attr.lo`, `Attr.hi`),
trunc_int(x) = trunc(x) = sign(x)·⌊|x|⌋ when lo ≤ trunc(x) ≤ hi, and a
`DomainError` otherwise; a range with 0 < lo or hi < 0 is refused by the
registry's shape rule for every x. For x = N/D in lowest terms (D > 0,
`Rat.num`, `Rat.den`), ⌊|x|⌋ = |N| div D (`Int.natAbs`, `Nat` division,
so no `Int` division convention enters: `Int.div`/`Int.tdiv` changed names
across core versions), with the sign of N restored (`truncZ`). A domain
error is `none`, and a tensor with such an element has the forward `[]`,
as for the rounding casts: `shapesOk` and `Comp`'s recorded-value check
refuse every such case, as the registry refuses the evaluation. The
derivative is 0 everywhere (`truncD`: 0 between the integers, 0 by the
registry's convention at the jumps), so JVP and VJP are the diagonal
scaling by 0. -/

/-- trunc(x) ∈ ℤ: the sign of x.num times |x.num| div x.den. -/
def truncZ (x : Rat) : Int :=
  if x.num < 0 then -((x.num.natAbs / x.den : Nat) : Int) else ((x.num.natAbs / x.den : Nat) : Int)

/-- **trunc_int(x; lo, hi)** over the rationals: `none` when the range
leaves out 0 (the registry's shape rule) or trunc(x) ∉ [lo, hi] (its
domain error), else `some` trunc(x); 0 ↦ 0 inside every accepted range. -/
def truncQ (lo hi x : Rat) : Option Rat :=
  if 0 < lo then none
  else if hi < 0 then none
  else if x = 0 then some 0
  else if mkRat (truncZ x) 1 < lo then none
  else if hi < mkRat (truncZ x) 1 then none
  else some (mkRat (truncZ x) 1)

/-- trunc_int elementwise: `none` when any element is a domain error. -/
def truncAll (lo hi : Rat) : List Rat → Option (List Rat)
  | [] => some []
  | a :: as => consOpt (truncQ lo hi a) (truncAll lo hi as)

/-- trunc_int's forward on a tensor: the truncated tensor, `[]` (no
shape's value) at a domain error. -/
def truncFwd (lo hi : Rat) (x : List Rat) : List Rat := optL (truncAll lo hi x)

/-- trunc′ = 0 (piecewise constant; 0 at the jumps by the registry's convention). -/
def truncD (_a : Rat) : Rat := 0

/-- The exact primitives with a Lean semantics. The names are the
registry's (`tlcheck` op names); `reshape` and `flatten` are the identity
on the flat data (only the shape changes), `detach` stops the gradient. -/
inductive Prim where
  | add | sub | mul | div | max | min | neg | scale | square | inv | relu | abs | clamp | sqrt
  | sum | reduce_sum | reduce_mean | mse_loss | reshape | flatten | detach
  | permute | transpose | slice | broadcast_to | const | concat | linear | matmul | sign
  | gather | shrink | pad
  | conv | conv_transpose | max_pool | max_pool_nd | avg_pool | avg_pool_nd | dropout
  | layer_norm | instance_norm | batch_norm_eval
  | tile | scatter | reduce_prod | l2_normalize | renorm
  | rand_uniform | bernoulli_mask | keep_mask
  | round_f16 | round_bf16 | round_f32 | trunc_int
  deriving DecidableEq, Repr

namespace Prim

/-- Forward semantics on the inputs `xs` with attributes `a`. -/
def fwd : Prim → Attr → List (List Rat) → List Rat
  | .add, _, [x, y] => padd x y
  | .sub, _, [x, y] => padd x (smul (-1) y)
  | .mul, _, [x, y] => pmul x y
  | .div, _, [x, y] => pmap2 (fun a b => a / b) x y
  | .max, _, [x, y] => pmap2 maxS x y
  | .min, _, [x, y] => pmap2 minS x y
  | .neg, _, [x] => smul (-1) x
  | .scale, a, [x] => smul a.c x
  | .square, _, [x] => pmul x x
  | .inv, _, [x] => pmap (fun b => 1 / b) x
  | .clamp, a, [x] => pmap (clampS a.lo a.hi) x
  | .relu, _, [x] => pmap reluS x
  | .sqrt, _, [x] => pmap sqrtS x
  | .abs, _, [x] => pmap absS x
  | .sign, _, [x] => pmap signS x
  | .round_f16, _, [x] => roundFwd Fmt.f16 x
  | .round_bf16, _, [x] => roundFwd Fmt.bf16 x
  | .round_f32, _, [x] => roundFwd Fmt.f32 x
  | .trunc_int, a, [x] => truncFwd a.lo a.hi x
  | .shrink, a, [x] => pmap (shrinkS a.lo a.c) x
  | .gather, a, [x] => Tlcheck.gather a.gatherIdx x
  | .pad, a, [x] => padd (Tlcheck.gather a.padIdx x) a.padFill
  | .sum, _, [x] => [total x]
  | .reduce_sum, a, [x] => reduceAKB a.dimK a.dimB a.dimA x
  | .reduce_mean, a, [x] => smul (1 / (a.dimK : Rat)) (reduceAKB a.dimK a.dimB a.dimA x)
  | .mse_loss, _, [x, y] => [dot (resid x y) (resid x y) / mseN x.length]
  | .reshape, _, [x] => x
  | .flatten, _, [x] => x
  | .detach, _, [x] => x
  | .permute, a, [x] => Tlcheck.gather a.permuteIdx x
  | .transpose, a, [x] => Tlcheck.gather a.transposeIdx x
  | .slice, a, [x] => Tlcheck.gather a.sliceIdx x
  | .broadcast_to, a, [x] => Tlcheck.gather a.bcastIdx x
  | .tile, a, [x] => Tlcheck.gather a.tileIdx x
  | .scatter, a, xs => Tlcheck.gather a.scatterIdx (catAll xs)
  | .reduce_prod, a, [x] => a.rpFwd x
  | .l2_normalize, a, [x] => a.l2Fwd x
  | .renorm, a, [x] => a.rnFwd x
  | .const, a, [] => a.values
  | .rand_uniform, a, [] => a.values
  | .bernoulli_mask, a, [_] => a.values
  | .keep_mask, a, [_] => a.values
  | .concat, a, xs => Tlcheck.gather a.concatIdx (catAll xs)
  | .matmul, a, [x, y] => reduceAKB a.mmK 1 a.mmOut (pmul (Tlcheck.gather a.mmGa x) (Tlcheck.gather a.mmGb y))
  | .linear, a, [x, w, b] =>
    padd (reduceAKB a.linN 1 (a.linB * a.linM) (pmul (Tlcheck.gather a.linGx x) (Tlcheck.gather a.linGw w))) (Tlcheck.gather a.linGb b)
  | .conv, a, [x, w] => bilFwd a.convG.bil x w (zerosN a.convG.cout)
  | .conv, a, [x, w, b] => bilFwd a.convG.bil x w b
  | .conv_transpose, a, [x, w] => bilFwd a.convTG.bil x w (zerosN a.convTG.cout)
  | .conv_transpose, a, [x, w, b] => bilFwd a.convTG.bil x w b
  | .max_pool, a, [x] => a.poolG.maxFwd x
  | .max_pool_nd, a, [x] => a.poolG.maxFwd x
  | .avg_pool, a, [x] => a.poolG.avgFwd a.poolG.divPad x
  | .avg_pool_nd, a, [x] => a.poolG.avgFwd a.avgDiv x
  | .dropout, a, [x] => dropoutFwd a.p a.mask x
  | .layer_norm, a, x :: ps => a.lnG.fwd a.eps x (parOr ps 0 1) (parOr ps 1 0)
  | .instance_norm, a, x :: ps => a.inG.fwd a.eps x (parOr ps 0 1) (parOr ps 1 0)
  | .batch_norm_eval, a, x :: ps => a.bnFwd x ps
  | _, _, _ => []

/-- JVP: the tangent of the output for input tangents `dxs`. -/
def jvp : Prim → Attr → List (List Rat) → List (List Rat) → List Rat
  | .add, _, [_, _], [dx, dy] => padd dx dy
  | .sub, _, [_, _], [dx, dy] => padd dx (smul (-1) dy)
  | .mul, _, [x, y], [dx, dy] => padd (pmul y dx) (pmul x dy)
  | .div, _, [x, y], [dx, dy] => padd (pmul (pmap2 divDa x y) dx) (pmul (pmap2 divDb x y) dy)
  | .max, _, [x, y], [dx, dy] => padd (pmul (pmap2 maxDa x y) dx) (pmul (pmap2 maxDb x y) dy)
  | .min, _, [x, y], [dx, dy] => padd (pmul (pmap2 minDa x y) dx) (pmul (pmap2 minDb x y) dy)
  | .neg, _, [_], [dx] => smul (-1) dx
  | .scale, a, [_], [dx] => smul a.c dx
  | .square, _, [x], [dx] => pmul (pmap squareD x) dx
  | .inv, _, [x], [dx] => pmul (pmap invD x) dx
  | .clamp, a, [x], [dx] => pmul (pmap (clampD a.lo a.hi) x) dx
  | .relu, _, [x], [dx] => pmul (pmap reluD x) dx
  | .sqrt, _, [x], [dx] => pmul (pmap sqrtD x) dx
  | .abs, _, [x], [dx] => pmul (pmap absD x) dx
  | .sign, _, [x], [dx] => pmul (pmap signD x) dx
  | .round_f16, _, [x], [dx] => pmul (pmap roundD x) dx
  | .round_bf16, _, [x], [dx] => pmul (pmap roundD x) dx
  | .round_f32, _, [x], [dx] => pmul (pmap roundD x) dx
  | .trunc_int, _, [x], [dx] => pmul (pmap truncD x) dx
  | .shrink, a, [x], [dx] => pmul (pmap (shrinkD a.lo) x) dx
  | .gather, a, [_], [dx] => Tlcheck.gather a.gatherIdx dx
  | .pad, a, [_], [dx] => Tlcheck.gather a.padIdx dx
  | .sum, _, [_], [dx] => [total dx]
  | .reduce_sum, a, [_], [dx] => reduceAKB a.dimK a.dimB a.dimA dx
  | .reduce_mean, a, [_], [dx] => smul (1 / (a.dimK : Rat)) (reduceAKB a.dimK a.dimB a.dimA dx)
  | .mse_loss, _, [x, y], [dx, dy] => [2 / mseN x.length * dot (resid x y) (padd dx (smul (-1) dy))]
  | .reshape, _, [_], [dx] => dx
  | .flatten, _, [_], [dx] => dx
  | .detach, _, [_], [dx] => zeros dx
  | .permute, a, [_], [dx] => Tlcheck.gather a.permuteIdx dx
  | .transpose, a, [_], [dx] => Tlcheck.gather a.transposeIdx dx
  | .slice, a, [_], [dx] => Tlcheck.gather a.sliceIdx dx
  | .broadcast_to, a, [_], [dx] => Tlcheck.gather a.bcastIdx dx
  | .tile, a, [_], [dx] => Tlcheck.gather a.tileIdx dx
  | .scatter, a, _, dxs => Tlcheck.gather a.scatterIdx (catAll dxs)
  | .reduce_prod, a, [x], [dx] => tapply (a.dimA * a.dimB) (a.rpTaps x) dx
  | .l2_normalize, a, [x], [dx] => tapply (size a.shape) (a.l2Taps x) dx
  | .renorm, a, [x], [dx] => tapply (size a.shape) (a.rnTaps x) dx
  | .const, a, [], [] => zeros a.values
  | .rand_uniform, a, [], [] => zeros a.values
  | .bernoulli_mask, a, [_], [_] => zeros a.values
  | .keep_mask, a, [_], [_] => zeros a.values
  | .concat, a, _, dxs => Tlcheck.gather a.concatIdx (catAll dxs)
  | .matmul, a, [x, y], [dx, dy] =>
    reduceAKB a.mmK 1 a.mmOut
      (padd (pmul (Tlcheck.gather a.mmGa dx) (Tlcheck.gather a.mmGb y)) (pmul (Tlcheck.gather a.mmGa x) (Tlcheck.gather a.mmGb dy)))
  | .linear, a, [x, w, _], [dx, dw, db] =>
    padd (reduceAKB a.linN 1 (a.linB * a.linM)
        (padd (pmul (Tlcheck.gather a.linGx dx) (Tlcheck.gather a.linGw w)) (pmul (Tlcheck.gather a.linGx x) (Tlcheck.gather a.linGw dw))))
      (Tlcheck.gather a.linGb db)
  | .conv, a, [x, w], [dx, dw] => bilJvp a.convG.bil x w dx dw (zerosN a.convG.cout)
  | .conv, a, [x, w, _], [dx, dw, db] => bilJvp a.convG.bil x w dx dw db
  | .conv_transpose, a, [x, w], [dx, dw] => bilJvp a.convTG.bil x w dx dw (zerosN a.convTG.cout)
  | .conv_transpose, a, [x, w, _], [dx, dw, db] => bilJvp a.convTG.bil x w dx dw db
  | .max_pool, a, [x], [dx] => a.poolG.maxJvp x dx
  | .max_pool_nd, a, [x], [dx] => a.poolG.maxJvp x dx
  | .avg_pool, a, [x], [dx] => a.poolG.avgJvp a.poolG.divPad x dx
  | .avg_pool_nd, a, [x], [dx] => a.poolG.avgJvp a.avgDiv x dx
  | .dropout, a, [x], [dx] => dropoutJvp a.p a.mask x dx
  | .layer_norm, a, x :: ps, dxs => tapplyAll a.lnG.n ((a.lnG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)) dxs
  | .instance_norm, a, x :: ps, dxs => tapplyAll a.inG.n ((a.inG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)) dxs
  | .batch_norm_eval, a, x :: ps, dxs => tapplyAll (size a.shape) ((a.bnTaps x ps).take (ps.length + 1)) dxs
  | _, _, _, _ => []

/-- VJP: one cotangent contribution per input for the output cotangent δ. -/
def vjp : Prim → Attr → List (List Rat) → List Rat → List (List Rat)
  | .add, _, [_, _], δ => [δ, δ]
  | .sub, _, [_, _], δ => [δ, smul (-1) δ]
  | .mul, _, [x, y], δ => [pmul y δ, pmul x δ]
  | .div, _, [x, y], δ => [pmul (pmap2 divDa x y) δ, pmul (pmap2 divDb x y) δ]
  | .max, _, [x, y], δ => [pmul (pmap2 maxDa x y) δ, pmul (pmap2 maxDb x y) δ]
  | .min, _, [x, y], δ => [pmul (pmap2 minDa x y) δ, pmul (pmap2 minDb x y) δ]
  | .neg, _, [_], δ => [smul (-1) δ]
  | .scale, a, [_], δ => [smul a.c δ]
  | .square, _, [x], δ => [pmul (pmap squareD x) δ]
  | .inv, _, [x], δ => [pmul (pmap invD x) δ]
  | .clamp, a, [x], δ => [pmul (pmap (clampD a.lo a.hi) x) δ]
  | .relu, _, [x], δ => [pmul (pmap reluD x) δ]
  | .sqrt, _, [x], δ => [pmul (pmap sqrtD x) δ]
  | .abs, _, [x], δ => [pmul (pmap absD x) δ]
  | .sign, _, [x], δ => [pmul (pmap signD x) δ]
  | .round_f16, _, [x], δ => [pmul (pmap roundD x) δ]
  | .round_bf16, _, [x], δ => [pmul (pmap roundD x) δ]
  | .round_f32, _, [x], δ => [pmul (pmap roundD x) δ]
  | .trunc_int, _, [x], δ => [pmul (pmap truncD x) δ]
  | .shrink, a, [x], δ => [pmul (pmap (shrinkD a.lo) x) δ]
  | .gather, a, [_], δ => [Tlcheck.scatter (size a.shape) a.gatherIdx δ]
  | .pad, a, [_], δ => [Tlcheck.scatter (size a.shape) a.padIdx δ]
  | .sum, _, [x], d :: _ => [bcast d x]
  | .reduce_sum, a, [_], δ => [bcastAKB a.dimK a.dimB a.dimA δ]
  | .reduce_mean, a, [_], δ => [bcastAKB a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) δ)]
  | .mse_loss, _, [x, y], d :: _ =>
    [smul (2 / mseN x.length * d) (resid x y), smul (-(2 / mseN x.length * d)) (resid x y)]
  | .reshape, _, [_], δ => [δ]
  | .flatten, _, [_], δ => [δ]
  | .detach, _, [x], _ => [zeros x]
  | .permute, a, [_], δ => [Tlcheck.scatter (size a.shape) a.permuteIdx δ]
  | .transpose, a, [_], δ => [Tlcheck.scatter (size a.shape) a.transposeIdx δ]
  | .slice, a, [_], δ => [Tlcheck.scatter (size a.shape) a.sliceIdx δ]
  | .broadcast_to, a, [_], δ => [Tlcheck.scatter (size a.shape) a.bcastIdx δ]
  | .tile, a, [_], δ => [Tlcheck.scatter (size a.shape) a.tileIdx δ]
  | .scatter, a, _, δ => splitBy a.shapes (Tlcheck.scatter (totalSize a.shapes) a.scatterIdx δ)
  | .reduce_prod, a, [x], δ => [tapplyT (size a.shape) (a.rpTaps x) δ]
  | .bernoulli_mask, _, [x], _ => [zeros x]
  | .keep_mask, _, [x], _ => [zeros x]
  | .l2_normalize, a, [x], δ => [tapplyT (size a.shape) (a.l2Taps x) δ]
  | .renorm, a, [x], δ => [tapplyT (size a.shape) (a.rnTaps x) δ]
  | .concat, a, _, δ => splitBy a.shapes (Tlcheck.scatter (totalSize a.shapes) a.concatIdx δ)
  | .matmul, a, [x, y], δ =>
    [Tlcheck.scatter (size (nthL a.shapes 0)) a.mmGa (pmul (Tlcheck.gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut δ)),
      Tlcheck.scatter (size (nthL a.shapes 1)) a.mmGb (pmul (Tlcheck.gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut δ))]
  | .linear, a, [x, w, _], δ =>
    [Tlcheck.scatter a.linSx a.linGx (pmul (Tlcheck.gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) δ)),
      Tlcheck.scatter a.linSw a.linGw (pmul (Tlcheck.gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) δ)),
      Tlcheck.scatter a.linSb a.linGb δ]
  | .conv, a, [x, w], δ =>
    [tapplyT a.convG.bil.xSize (xTaps w a.convG.bil.terms) δ, tapplyT a.convG.bil.wSize (wTaps x a.convG.bil.terms) δ]
  | .conv, a, [x, w, _], δ => bilVjp a.convG.bil x w δ
  | .conv_transpose, a, [x, w], δ =>
    [tapplyT a.convTG.bil.xSize (xTaps w a.convTG.bil.terms) δ, tapplyT a.convTG.bil.wSize (wTaps x a.convTG.bil.terms) δ]
  | .conv_transpose, a, [x, w, _], δ => bilVjp a.convTG.bil x w δ
  | .max_pool, a, [x], δ => a.poolG.maxVjp x δ
  | .max_pool_nd, a, [x], δ => a.poolG.maxVjp x δ
  | .avg_pool, a, [x], δ => a.poolG.avgVjp a.poolG.divPad x δ
  | .avg_pool_nd, a, [x], δ => a.poolG.avgVjp a.avgDiv x δ
  | .dropout, a, [x], δ => dropoutVjp a.p a.mask x δ
  | .layer_norm, a, x :: ps, δ =>
    tapplyTAll (a.shapes.map size) ((a.lnG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)) δ
  | .instance_norm, a, x :: ps, δ =>
    tapplyTAll (a.shapes.map size) ((a.inG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)) δ
  | .batch_norm_eval, a, x :: ps, δ => tapplyTAll (a.shapes.map size) ((a.bnTaps x ps).take (ps.length + 1)) δ
  | _, _, _, _ => []

/-- Number of inputs. -/
def arity : Prim → Nat
  | .add | .sub | .mul | .div | .max | .min | .mse_loss | .matmul | .scatter => 2
  | .linear | .conv | .conv_transpose | .layer_norm | .instance_norm => 3
  | .batch_norm_eval => 5
  | .const | .rand_uniform => 0
  | _ => 1

/-- The number of inputs is right: concat takes one or more, conv and
conv_transpose two or three (the bias is optional), the others their
arity. -/
def arityOk : Prim → Nat → Bool
  | .concat, n => decide (1 ≤ n)
  | .conv, n => decide (2 ≤ n ∧ n ≤ 3)
  | .conv_transpose, n => decide (2 ≤ n ∧ n ≤ 3)
  | .layer_norm, n => decide (1 ≤ n ∧ n ≤ 3)
  | .batch_norm_eval, n => decide (3 ≤ n ∧ n ≤ 5)
  | p, n => decide (n = p.arity)

end Prim

/-- The empty list is not as long as a non-empty one (the absurd cases of
the length hypotheses in `Tlcheck.Adjoint` and `Tlcheck.Deriv`). -/
theorem nil_ne_cons_length {α : Type} (b : α) (bs : List α) :
    ([] : List α).length ≠ (b :: bs).length :=
  fun h => Nat.succ_ne_zero bs.length h.symm

/-- −(a + c) = −a + −c, by cancelling a + c (core has `Rat.add_right_cancel`). -/
theorem neg_add' (a c : Rat) : -(a + c) = -a + -c := by
  apply Rat.add_right_cancel (a + c)
  rw [Rat.neg_add_cancel, Rat.add_assoc, Rat.add_left_comm (-c) a c, Rat.neg_add_cancel c,
    Rat.add_zero, Rat.neg_add_cancel]

/-- a·(b·c) = b·(a·c), from `Rat.mul_assoc` and `Rat.mul_comm` (core has
no `Rat.mul_left_comm` in the stored `Init/Data/Rat/Lemmas.lean`). -/
theorem rmul_left_comm (a b c : Rat) : a * (b * c) = b * (a * c) := by
  rw [← Rat.mul_assoc a b c, Rat.mul_comm a b, Rat.mul_assoc b a c]

/-- Σₖ ⟨uₖ, vₖ⟩ over paired lists of tensors. -/
def dotAll : List (List Rat) → List (List Rat) → Rat
  | u :: us, v :: vs => dot u v + dotAll us vs
  | _, _ => 0

end Tlcheck
