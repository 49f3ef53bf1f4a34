// Package emit turns a certificate directory into Lean modules that
// the kernel checks: for each adjointness certificate of a primitive the
// Lean project gives a semantics (Covered), a module
// Tlcheck.Certs.Adjointness.<op> holding the recorded cases as AdjCase
// literals of exact rationals (mkRat p q) and one theorem
//
//	theorem cert : checkAll Prim.<op> cases = true := by decide +kernel
//	theorem cert_ok : ∀ k ∈ cases, Claim Prim.<op> k := checkAll_sound Prim.<op> cases cert
//
// and an index module Tlcheck.Certs.All importing them all. The theorem,
// with Tlcheck.Check.checkAll_sound, gives for every case that the
// recorded sides are ⟨jvp x dx, δ⟩ and Σₖ⟨dxₖ, vjp x δₖ⟩ as Lean's
// Tlcheck.Spec computes them, and that they are equal: a second,
// kernel-checked recomputation of what tlcheck verify re-derives.
//
// Composition certificates (the gate's composition.json and a user
// model's model_composition.json) become Tlcheck.Certs.Composition and
// Tlcheck.Certs.ModelComposition: each case a CompCase literal (the nodes
// after the input with their primitive, attributes, parents and value
// — irsem.DenoteAll's, which the kernel re-checks against Prim.fwd — the
// input, dx, the cotangent and the two sides) and
//
//	theorem cert : checkComps cases = true := by decide +kernel
//	theorem cert_ok : ∀ k ∈ cases, CompClaim k := checkComps_sound cases cert
//	theorem cert_all : ∀ k ∈ cases, CompAdjoint k := checkComps_adjoint cases cert
//
// where CompClaim says the recorded sides are the two sides of
// Tlcheck.Graph.rev_adjoint at the case's seed and tangent, computed by
// Graph.fwd and Graph.rev over nodes built from Prim.jvp and Prim.vjp
// (each read through its lens, Tlcheck.Local.primLens, whose lengths the
// checker demands are the recorded ones), and that they are equal — the
// kernel evaluates the two sides, and the equality follows from
// Graph.rev_adjoint with local adjointness discharged for every graph
// over Prim (Comp.graph_locallyAdjoint); Comp.checkComps_adjoint gives
// the identity for every seed and tangent, and Comp.comp_backprop the
// same for the sweep that skips unreached nodes (zero preservation
// discharged for every graph over Prim, Comp.graph_zeroPreserving).
// Constant leaves (const, rand_uniform) are Prim.const with their value;
// the window nodes carry the geometry irsem.Applications gives them, and
// conv's W and b become constant leaves before it, as linear's do; the
// normalisations and renorm are written from irsem's application of the
// node (normLines): γ, β, μ, σ² (the payload's, or the registry's
// defaults) as constant leaves before the primitive, ε as eps, maxnorm as
// c, layernorm read at its [outer, inner] view (the reshapes around it do
// not move the flat data). A certificate with a node Lean has no
// semantics for, or a graph over MaxCompNodes or the caps, is skipped
// with the reason.
//
// The window primitives (conv, conv_transpose, the four pools) carry the
// registry's Window attribute as the AdjCase fields kernel, stride,
// dilation, pads, groups and countPad (leanWindow); Lean reads the lead,
// channel and spatial extents from the shapes and the output shape
// (Tlcheck.Attr.convG, convTG, poolG), so ceil_mode and output_padding
// enter only through the output extents the registry computed.
//
// dropout's certificates record the seed, not the mask: the emitter
// replays the registry's own draw into the AdjCase fields p and mask
// (leanDropout), and Lean checks the claim at that mask.
//
// The normalisations (layer_norm, instance_norm, batch_norm_eval,
// l2_normalize) carry ε as the AdjCase field eps (the registry's default
// when the certificate has none: 1/100000, and 0 for l2_normalize); Lean's
// ratSqrt is exact on the square rationals the registry's exact sqrt
// accepts, the only ones it certifies (for l2_normalize, the lanes of
// rational norm). renorm carries maxnorm as c (leanAttrs) and the axis;
// its certified instances are the sub-tensors of rational norm.
//
// The seeded draws (rand_uniform, bernoulli_mask, keep_mask) record the
// seed too: the emitter replays the draw with the registry's own forward
// (leanDraw) into the AdjCase field values, which Lean reads as the
// forward; the tangent and the contributions are zero.
//
// Not emitted, and why: adjointness certificates of primitives outside
// Covered (the interval-oracle primitives: Lean has no exact semantics
// for them); refinement and range (binary32 and
// interval claims over floats, which Lean core cannot compute in the
// kernel).
//
// Emit checks what it reads (the manifest's SHA-256 of each file, the
// format, strict JSON, canonical rationals, shapes against value counts)
// but does not re-derive the claims: that is tlcheck verify's part and,
// for what is emitted, the Lean kernel's. Names reach Lean only from a
// closed list (Covered, the two composition module names) and the rationals only as digits: anything else
// is rejected, never escaped. The bytes are a function of the directory.
package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/spec"
)

// Covered lists the registry primitives whose adjointness certificates
// are emitted, each the name of a constructor of Tlcheck.Prim
// (lean/Tlcheck/Spec.lean).
var Covered = []string{"abs", "add", "avg_pool", "avg_pool_nd", "batch_norm_eval", "bernoulli_mask", "broadcast_to", "clamp", "concat", "const", "conv", "conv_transpose", "detach", "div", "dropout", "flatten", "gather", "instance_norm", "inv", "keep_mask", "l2_normalize", "layer_norm", "linear", "matmul", "max", "max_pool", "max_pool_nd", "min", "mse_loss", "mul", "neg", "pad", "permute", "rand_uniform", "reduce_mean", "reduce_prod", "reduce_sum", "relu", "renorm", "reshape", "round_bf16", "round_f16", "round_f32", "scale", "scatter", "shrink", "sign", "slice", "sqrt", "square", "sub", "sum", "tile", "transpose", "trunc_int"}

// windowOps are the covered primitives that read the registry's window
// geometry (spec.Window), written as Tlcheck.Attr's kernel, stride,
// dilation, pads, groups and countPad fields.
var windowOps = map[string]bool{"conv": true, "conv_transpose": true, "max_pool": true, "max_pool_nd": true, "avg_pool": true, "avg_pool_nd": true}

// poolOps are the window primitives without parameters, which
// compositions also emit (their geometry from irsem.Applications).
var poolOps = map[string]bool{"max_pool": true, "max_pool_nd": true, "avg_pool": true, "avg_pool_nd": true}

// normOps are the covered normalisations, which read ε (Tlcheck.Attr.eps).
var normOps = map[string]bool{"layer_norm": true, "instance_norm": true, "batch_norm_eval": true, "l2_normalize": true}

// leanEps renders op's ε as the Lean field eps (a leading ", "): the
// certificate's, or the registry's default when it records none, as the
// registry reads it — spec.DefaultNormEps for the mean-and-variance norms,
// 0 for l2_normalize (spec's l2Lanes).
func leanEps(op, e string) (string, error) {
	if e == "" {
		e = spec.DefaultNormEps().RatString()
		if op == "l2_normalize" {
			e = "0"
		}
	}
	r, err := Rat(e)
	if err != nil {
		return "", err
	}
	return ", eps := " + r, nil
}

// ratReg is the registry whose bernoulli_mask replays dropout's draw.
var ratReg = spec.Default[spec.Rat]()

// drawOps are the covered seeded draws. Their certificates record the
// seed (and shape and p), not the draw; Lean reads the draw as the data
// Attr.values (Prim.rand_uniform, bernoulli_mask, keep_mask).
var drawOps = map[string]bool{"rand_uniform": true, "bernoulli_mask": true, "keep_mask": true}

// leanDraw replays a seeded draw with the registry's own forward on the
// case's inputs and recorded attributes (seed, shape, p) — never a second
// copy of the generator — and renders it as a Lean list of rationals.
func leanDraw(op string, c *certificates.AdjointCase) (string, error) {
	p, err := ratReg.Lookup(op)
	if err != nil {
		return "", err
	}
	a := &spec.Attrs{Seed: c.Attrs.Seed, Shape: spec.Shape(c.Attrs.Shape)}
	if c.Attrs.P != "" {
		pv, ok := new(big.Rat).SetString(c.Attrs.P)
		if !ok {
			return "", fmt.Errorf("p: %q is not a rational", limitStr(c.Attrs.P))
		}
		a.P = pv
	}
	var xs []spec.Tensor[spec.Rat]
	for k, in := range c.Inputs {
		data := make([]spec.Rat, len(in.Values))
		for i, v := range in.Values {
			r, ok := new(big.Rat).SetString(v)
			if !ok {
				return "", fmt.Errorf("inputs[%d].values[%d]: %q is not a rational", k, i, limitStr(v))
			}
			data[i] = spec.RatFromBig(r)
		}
		x, err := spec.NewTensor(spec.Shape(in.Shape), data)
		if err != nil {
			return "", fmt.Errorf("inputs[%d]: %v", k, err)
		}
		xs = append(xs, x)
	}
	y, err := p.Forward(a, xs)
	if err != nil {
		return "", fmt.Errorf("replaying the draw: %v", err)
	}
	vs := make([]string, len(y.Data))
	for i, v := range y.Data {
		vs[i] = v.Big().RatString()
	}
	return rats(vs)
}

// leanDropout renders dropout's drop probability and keep mask as the
// Lean fields p and mask (a leading ", "). The certificate records the
// seed, not the mask: the mask is the registry's own draw, replayed by its
// bernoulli_mask forward on the input's shape (element i kept when
// spec.UniformRat(seed, i) ≥ p, the draw dropoutApply uses), never a
// second copy of the generator.
func leanDropout(a certificates.Attrs, x certificates.Tensor) (string, error) {
	pv, ok := new(big.Rat).SetString(a.P)
	if a.P == "" || !ok {
		return "", fmt.Errorf("p: %q is not a rational", limitStr(a.P))
	}
	p, err := Rat(a.P)
	if err != nil {
		return "", fmt.Errorf("p: %v", err)
	}
	bm, err := ratReg.Lookup("bernoulli_mask")
	if err != nil {
		return "", err
	}
	z, err := spec.Zeros[spec.Rat](spec.Shape(x.Shape))
	if err != nil {
		return "", fmt.Errorf("inputs[0]: %v", err)
	}
	m, err := bm.Forward(&spec.Attrs{P: pv, Seed: a.Seed}, []spec.Tensor[spec.Rat]{z})
	if err != nil {
		return "", fmt.Errorf("replaying the mask: %v", err)
	}
	mask := make([]string, len(m.Data))
	for i, v := range m.Data {
		mask[i] = "mkRat 0 1"
		if v.Big().Sign() != 0 {
			mask[i] = "mkRat 1 1"
		}
	}
	return ", p := " + p + ", mask := [" + strings.Join(mask, ", ") + "]", nil
}

// leanWindow renders the window geometry w of a window primitive as the
// Lean fields kernel, stride, dilation, pads, groups and countPad (a
// leading ", " and no braces), the registry's fields unchanged: an empty
// dilation is all 1 and empty pads all 0 in Lean as in the registry, and
// groups is 1 where the primitive has none (the pools). The output
// extents are not written: Lean reads them from the output shape, as the
// registry's planWin computed them (ceil_mode and output_padding enter
// only there). Lengths and signs are checked, never repaired: a kernel of
// r entries needs r strides, 0 or r dilations and 0 or 2r pads.
func leanWindow(w *spec.Window) (string, error) {
	if w == nil {
		return "", fmt.Errorf("window: missing (a window primitive needs its geometry)")
	}
	r := len(w.Kernel)
	if r == 0 || len(w.Stride) != r || (len(w.Dilation) != 0 && len(w.Dilation) != r) || (len(w.Pads) != 0 && len(w.Pads) != 2*r) {
		return "", fmt.Errorf("window: kernel %d, stride %d, dilation %d and pads %d entries (want r ≥ 1, r, 0 or r, 0 or 2r)", r, len(w.Stride), len(w.Dilation), len(w.Pads))
	}
	for f, xs := range [4][]int{w.Kernel, w.Stride, w.Dilation, w.Pads} {
		for i, x := range xs {
			if x < 0 {
				return "", fmt.Errorf("window: field %s element %d is negative", [4]string{"kernel", "stride", "dilation", "pads"}[f], i)
			}
		}
	}
	groups := w.Groups
	if groups == 0 {
		groups = 1
	}
	if groups < 0 {
		return "", fmt.Errorf("window: negative groups")
	}
	return fmt.Sprintf(", kernel := %s, stride := %s, dilation := %s, pads := %s, groups := %d, countPad := %t",
		nats(w.Kernel), nats(w.Stride), nats(w.Dilation), nats(w.Pads), groups, w.CountIncludePad), nil
}

// leanAttrs maps a certificate's attributes onto Tlcheck.Attr's fields:
// c, lo, hi, axis2 and perm are the registry's own, except that gather's
// and scatter's constant indices are perm (scatter's indices' shape is
// its updates' shape, shapes[1]), renorm's maxnorm is c (required, as in
// the registry), shrink's bias and threshold λ are c and lo
// (λ defaults to 1/2 and the bias to 0, as in the registry), and pad's
// widths, mode and fill value are perm, axis2 (padMode) and c.
func leanAttrs(op string, a certificates.Attrs) (c, lo, hi string, axis2 int, perm []int, err error) {
	c, lo, hi, axis2, perm = a.C, a.Lo, a.Hi, a.Axis2, a.Perm
	switch op {
	case "gather", "scatter":
		perm = a.Indices
	case "shrink":
		c, lo = a.Bias, a.Lambd
		if lo == "" {
			lo = "1/2"
		}
	case "renorm":
		if c = a.Maxnorm; c == "" {
			err = fmt.Errorf("renorm has no maxnorm (the registry refuses it)")
			return
		}
	case "pad":
		c, perm = a.Value, a.Widths
		if axis2, err = padMode(a.Mode); err != nil {
			return
		}
	}
	return c, lo, hi, axis2, perm, nil
}

// padMode is Tlcheck.Attr.padIdx's mode code: 0 constant, 1 reflect, 2 edge.
func padMode(m string) (int, error) {
	switch m {
	case "", "constant":
		return 0, nil
	case "reflect":
		return 1, nil
	case "edge":
		return 2, nil
	}
	return 0, fmt.Errorf("pad mode %q is not constant, reflect or edge", limitStr(m))
}

// Module is one emitted Lean file: its path relative to the output
// directory and its bytes.
type Module struct {
	Path  string
	Bytes []byte
}

// Result is what Emit produced.
type Result struct {
	Modules []Module // sorted by path; the index module last
	// Theorems are the fully qualified theorem names, sorted.
	Theorems []string
	// Skipped lists the certificate files not emitted, with why.
	Skipped []string
}

var (
	leanIdent = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	ratRE     = regexp.MustCompile(`^(-?)([0-9]+)(?:/([0-9]+))?$`)
)

// maxFile bounds a certificate file read by Emit.
const maxFile = certificates.MaxFileBytes

// MaxModuleBytes bounds one emitted module: the kernel evaluates `decide`
// over every literal in it, so a certificate far larger than the gate's
// (20 cases of small tensors, a few kB) is refused rather than emitted as
// a module that would take the kernel hours.
const MaxModuleBytes = 1 << 20

// MaxModuleWork bounds the kernel's work on one emitted module by element
// count, which bytes alone do not bound (a matmul case of a few hundred
// bytes can ask the kernel to build a [batch, m, n, k] view of millions of
// entries). A case's work is the number of elements of its inputs, its
// tangents and its cotangent, plus, for matmul and linear, the elements
// of the contraction view Spec.lean builds (the cotangent's element count
// times the contracted extent), and for the tap-based primitives (the
// windows, reduce_prod, l2_normalize, renorm, layer_norm, instance_norm)
// their taps times the lane reads of each tap's weight. The gate's
// certificates do about 2 000.
//
// It is a count of list elements built or read, not of kernel steps:
// Spec.lean's lists are indexed by walking them (`nth`, `addAt`), so a
// gather or a tap costs up to the length of the list it reads. The step
// bound per primitive — how many walks of which length — is caseSteps
// (the walk model at walks), capped by MaxModuleSteps.
const MaxModuleWork = 1 << 18

// MaxModuleSteps bounds the kernel's steps on one emitted module: the sum
// of caseSteps over its cases (compositions: compSteps). The gate's
// modules take under a million (TestEmitStepCap checks every
// committed certificate fits with 16× to spare).
const MaxModuleSteps = 1 << 26

// Walk model of Spec.lean's evaluation (the unit of caseSteps). A step is
// one list cell visited or one arithmetic operation on a Nat, Int or Rat
// literal (GMP in the kernel: one step whatever the size; the round casts'
// bit-length loops are counted separately, below). The elements caseWork
// counts are built or read by zips (pmul, padd, smul, pmap, dot, take,
// drop, append, reduceAKB, bcastAKB: one step per cell), and some of them
// also by an indexed walk — `nth`, `addAt`, `nthN`, `nthL`, `nthRL`, each
// visiting at most the whole list it indexes — after an index computation
// over a shape of rank r: at most (r+1)³ steps (bcastIdx, the worst, reads
// `unflat` — r levels, each recomputing `size`, r² — once per axis, and
// `strides`, r², per element; nothing is shared between elements). Per counted element, Spec.lean
// performs at most walks(op) such walks (read from Prim.fwd, Prim.jvp and
// Prim.vjp):
//
//   - 0: the pointwise primitives, sum, the reductions, mse_loss, reshape,
//     flatten, detach, const and the draws, dropout (zips only);
//   - 3: the index maps gather, pad, permute, transpose, slice,
//     broadcast_to, tile, scatter, concat (per output element one
//     `gather` nth in the forward, one in the JVP, one `scatter` addAt in
//     the VJP);
//   - 8: matmul and linear (per element of the contraction view two
//     gathers in the forward, four in the JVP, two gathers and two
//     scatters in the VJP, the view counted once per operand pair);
//   - 4: the tap-based primitives — conv, conv_transpose, the pools,
//     reduce_prod, l2_normalize, renorm, layer_norm, instance_norm,
//     batch_norm_eval — (per tap `tapply`'s nth and addAt, `tapplyT`'s nth
//     and addAt; a lane read is an nth, and counted as an element).
//
// Every list walked is an input, a tangent, the cotangent, an accumulator
// of an input's or the output's size, or the concatenation of the inputs
// (concat, scatter), so no walk is longer than L = max(Σ input elements,
// cotangent elements). Hence
//
//	steps(case) ≤ W·(1 + walks(op)·(L + (r+1)³)) + R
//
// with W = caseWork, r the largest rank of the case, and R the round
// casts' rounding: per element (input and tangent) at most 4·(bit length
// of numerator + denominator) + 64 steps (`bitLen`'s halvings, `pow2`'s
// exponents, `rneNat`'s division). What the model does not credit: the
// kernel's sharing of repeated closed terms (it may make the real count
// smaller), and `decide`'s unfolding of the structures themselves (a
// constant per node of the `AdjCase` literal, bounded by the bytes).
func walks(op string) int {
	switch op {
	case "gather", "pad", "permute", "transpose", "slice", "broadcast_to", "tile", "scatter", "concat":
		return 3
	case "matmul", "linear":
		return 8
	case "conv", "conv_transpose", "max_pool", "max_pool_nd", "avg_pool", "avg_pool_nd",
		"reduce_prod", "l2_normalize", "renorm", "layer_norm", "instance_norm", "batch_norm_eval":
		return 4
	}
	return 0
}

// caseSteps is the step bound of one case (see walks): W·(1 +
// walks·(L + (r+1)³)) + R, saturating at MaxModuleSteps + 1.
func caseSteps(op string, c *certificates.AdjointCase) int {
	w := caseWork(op, c)
	if w > MaxModuleWork {
		return MaxModuleSteps + 1
	}
	l, r := len(c.Delta.Values), len(c.Delta.Shape)
	in := 0
	for k := range c.Inputs {
		in += len(c.Inputs[k].Values)
		r = max(r, len(c.Inputs[k].Shape))
	}
	l = max(l, in, 1)
	per := 1 + walks(op)*(l+(r+1)*(r+1)*(r+1))
	if per > MaxModuleSteps/max(w, 1) {
		return MaxModuleSteps + 1
	}
	steps := w * per
	if strings.HasPrefix(op, "round_") {
		for k := range c.Inputs {
			for _, vs := range [][]string{c.Inputs[k].Values, c.Dx[k].Values} {
				for _, v := range vs {
					steps += 4*len(v)*4 + 64 // a decimal digit is under 4 bits
					if steps > MaxModuleSteps {
						return MaxModuleSteps + 1
					}
				}
			}
		}
	}
	return steps
}

// caseWork is the work of one case in the sense of MaxModuleWork.
func caseWork(op string, c *certificates.AdjointCase) int {
	w := len(c.Delta.Values)
	for k := range c.Inputs {
		w += len(c.Inputs[k].Values) + len(c.Dx[k].Values)
	}
	if (op == "matmul" || op == "linear") && len(c.Inputs) > 0 {
		if s := c.Inputs[0].Shape; len(s) > 0 && s[len(s)-1] > 0 {
			w += len(c.Delta.Values) * s[len(s)-1]
		}
	}
	if windowOps[op] {
		w += windowWork(op, c)
	}
	if (op == "reduce_prod" || op == "l2_normalize" || op == "renorm" || op == "layer_norm") && len(c.Inputs) > 0 {
		// Prod.lean's taps: one per input element, each a product over its
		// lane; Spec.lean's l2Taps: K per element, each reading the lane's
		// norm (K elements) three times; NormG.xTaps (layer_norm): K per
		// element, each reading the lane's mean, variance and x̂ (K elements
		// each).
		s := c.Inputs[0].Shape
		if ax := c.Attrs.Axis; ax >= -len(s) && ax < len(s) {
			k := s[(ax+len(s))%len(s)]
			if op == "l2_normalize" || op == "layer_norm" {
				k *= 3 * k
			}
			if op == "renorm" { // Spec.lean's rnTaps: L = n/K taps per element, each reading the sub-tensor's norm (L elements) three times
				k = len(c.Inputs[0].Values) / max(k, 1)
				k *= 3 * k
			}
			w += len(c.Inputs[0].Values) * k
		}
	}
	if op == "instance_norm" && len(c.Inputs) > 0 && len(c.Inputs[0].Shape) > 2 {
		// NormG.xTaps over instance_norm's lanes: the S spatial positions
		// of each (n, c), S per element, each reading the lane three times.
		k := 1
		for _, d := range c.Inputs[0].Shape[2:] {
			if k *= max(d, 1); k > MaxModuleWork {
				return MaxModuleWork + 1
			}
		}
		w += len(c.Inputs[0].Values) * 3 * k * k
	}
	return w
}

// windowWork bounds the terms Window.lean's maps list for one case: conv
// at most cin/groups·Πkernel per output, conv_transpose cout/groups·Πkernel
// per input element, an average pool Πkernel per output; a max pool
// rescans its slice's whole window relation (at most outputs·Πkernel
// triples) for every triple, so (outputs·Πkernel)².
func windowWork(op string, c *certificates.AdjointCase) int {
	if c.Attrs.Window == nil {
		return 0
	}
	k := 1
	for _, x := range c.Attrs.Window.Kernel {
		k *= max(x, 1)
		if k > MaxModuleWork {
			return MaxModuleWork + 1
		}
	}
	out, per := len(c.Delta.Values), 1
	switch op {
	case "conv":
		if len(c.Inputs) > 1 && len(c.Inputs[1].Shape) > 1 {
			per = c.Inputs[1].Shape[1]
		}
	case "conv_transpose":
		if len(c.Inputs) > 1 && len(c.Inputs[1].Shape) > 1 {
			out, per = len(c.Inputs[0].Values), c.Inputs[1].Shape[1]
		}
	case "max_pool", "max_pool_nd":
		if n := out * k; n <= MaxModuleWork {
			return n * n
		}
		return MaxModuleWork + 1
	}
	if n := out * k; n <= MaxModuleWork && per <= MaxModuleWork {
		return n * per
	}
	return MaxModuleWork + 1
}

func covered(op string) bool {
	i := sort.SearchStrings(Covered, op)
	return i < len(Covered) && Covered[i] == op
}

// Emit reads the certificate directory dir and returns the Lean modules.
func Emit(dir string) (*Result, error) {
	mdata, err := readFile(dir, certificates.ManifestName)
	if err != nil {
		return nil, err
	}
	var m certificates.Manifest
	if err := strict(mdata, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", certificates.ManifestName, err)
	}
	if m.Format != certificates.ManifestFormat {
		return nil, fmt.Errorf("%s: format %q, this build reads %q", certificates.ManifestName, m.Format, certificates.ManifestFormat)
	}
	res := &Result{}
	var index []string
	for _, fe := range m.Files {
		if fe.Kind != certificates.KindAdjointness && fe.Kind != certificates.KindComposition && fe.Kind != certificates.KindModelComposition {
			res.Skipped = append(res.Skipped, fe.Path+" (kind "+fe.Kind+": no Lean checker)")
			continue
		}
		data, err := readFile(dir, fe.Path)
		if err != nil {
			return nil, err
		}
		if certificates.Sum(data) != fe.SHA256 {
			return nil, fmt.Errorf("%s: SHA-256 differs from the manifest's", fe.Path)
		}
		if fe.Kind != certificates.KindAdjointness {
			name, src, skip, err := emitComposition(fe, data)
			if err != nil {
				return nil, err
			}
			if skip != "" {
				res.Skipped = append(res.Skipped, fe.Path+" ("+skip+")")
				continue
			}
			res.Modules = append(res.Modules, Module{Path: name + ".lean", Bytes: src})
			res.Theorems = append(res.Theorems, "Tlcheck.Certs."+name+".cert")
			index = append(index, "Tlcheck.Certs."+name)
			continue
		}
		var f certificates.AdjointnessFile
		if err := strict(data, &f); err != nil {
			return nil, fmt.Errorf("%s: %v", fe.Path, err)
		}
		if f.Format != certificates.Format || f.Kind != certificates.KindAdjointness {
			return nil, fmt.Errorf("%s: format %q kind %q, want %q %q", fe.Path, f.Format, f.Kind, certificates.Format, certificates.KindAdjointness)
		}
		if !leanIdent.MatchString(f.Op) {
			return nil, fmt.Errorf("%s: field op: %q is not a plain lowercase identifier; refused (names are never escaped into Lean)", fe.Path, limitStr(f.Op))
		}
		if fe.Path != "adjointness/"+f.Op+".json" {
			return nil, fmt.Errorf("%s: field op: %q does not match the file name", fe.Path, f.Op)
		}
		if !covered(f.Op) {
			res.Skipped = append(res.Skipped, fe.Path+" (no Lean semantics for "+f.Op+" yet)")
			continue
		}
		if _, err := spec.Info(f.Op); err != nil {
			return nil, fmt.Errorf("%s: %v", fe.Path, err)
		}
		src, err := module(fe.Path, fe.SHA256, &f)
		if err != nil {
			return nil, err
		}
		if len(src) > MaxModuleBytes {
			return nil, fmt.Errorf("%s: the Lean module would have %d bytes, more than %d: certify fewer or smaller cases for Lean", fe.Path, len(src), MaxModuleBytes)
		}
		res.Modules = append(res.Modules, Module{Path: "Adjointness/" + f.Op + ".lean", Bytes: src})
		res.Theorems = append(res.Theorems, "Tlcheck.Certs.Adjointness."+f.Op+".cert")
		index = append(index, "Tlcheck.Certs.Adjointness."+f.Op)
	}
	if len(index) == 0 {
		return nil, fmt.Errorf("%s: no adjointness certificate of a covered primitive (%s) and no composition certificate Lean can state", dir, strings.Join(Covered, ", "))
	}
	sort.Slice(res.Modules, func(i, j int) bool { return res.Modules[i].Path < res.Modules[j].Path })
	sort.Strings(res.Theorems)
	sort.Strings(index)
	var b bytes.Buffer
	b.WriteString("-- Generated by tlcheck lean emit. Do not edit.\n")
	for _, m := range index {
		b.WriteString("import " + m + "\n")
	}
	res.Modules = append(res.Modules, Module{Path: "All.lean", Bytes: b.Bytes()})
	return res, nil
}

func limitStr(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func readFile(dir, rel string) ([]byte, error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", rel)
	}
	if st.Size() > maxFile {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", rel, st.Size(), maxFile)
	}
	return os.ReadFile(p)
}

func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// Rat renders a canonical certificate rational "p" or "p/q" as the Lean
// core expression mkRat p q (a negative numerator parenthesised).
func Rat(v string) (string, error) {
	m := ratRE.FindStringSubmatch(v)
	if m == nil || len(v) > 4096 {
		return "", fmt.Errorf("%q is not an exact rational p or p/q", limitStr(v))
	}
	r, ok := new(big.Rat).SetString(v)
	if !ok || r.RatString() != v {
		return "", fmt.Errorf("%q is not the canonical spelling of a rational", limitStr(v))
	}
	num, den := m[2], m[3]
	if den == "" {
		den = "1"
	}
	if m[1] == "-" {
		return "mkRat (-" + num + ") " + den, nil
	}
	return "mkRat " + num + " " + den, nil
}

func rats(vs []string) (string, error) {
	out := make([]string, len(vs))
	for i, v := range vs {
		s, err := Rat(v)
		if err != nil {
			return "", err
		}
		out[i] = s
	}
	return "[" + strings.Join(out, ", ") + "]", nil
}

func nats(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func checkTensor(t certificates.Tensor) error {
	n := 1
	for _, d := range t.Shape {
		if d < 0 || d > 1<<20 {
			return fmt.Errorf("extent %d out of range", d)
		}
		n *= d
		if n > 1<<20 {
			return fmt.Errorf("more than %d elements", 1<<20)
		}
	}
	if n != len(t.Values) {
		return fmt.Errorf("%d values for shape %v", len(t.Values), t.Shape)
	}
	return nil
}

// module renders one adjointness certificate; one case per line.
func module(path, sum string, f *certificates.AdjointnessFile) ([]byte, error) {
	var b bytes.Buffer
	ns := "Tlcheck.Certs.Adjointness." + f.Op
	fmt.Fprintf(&b, "-- Generated by tlcheck lean emit from %s (sha256 %s). Do not edit.\n", path, sum)
	b.WriteString("import Tlcheck.Check\n\n")
	fmt.Fprintf(&b, "namespace %s\nopen Tlcheck\n\n", ns)
	b.WriteString("set_option maxRecDepth 100000 in\n")
	b.WriteString("def cases : List AdjCase := [\n")
	work, steps := 0, 0
	for i, c := range f.Cases {
		at := fmt.Sprintf("%s: field cases[%d]", path, i)
		if work += caseWork(f.Op, &f.Cases[i]); work > MaxModuleWork {
			return nil, fmt.Errorf("%s: the Lean module would ask the kernel for more than %d elements of work (inputs, tangents, cotangents and contraction views): certify fewer or smaller cases for Lean", at, MaxModuleWork)
		}
		if steps += caseSteps(f.Op, &f.Cases[i]); steps > MaxModuleSteps {
			return nil, fmt.Errorf("%s: the Lean module would ask the kernel for more than %d steps (elements times the list walks of %s, emit.walks): certify fewer or smaller cases for Lean", at, MaxModuleSteps, f.Op)
		}
		if c.Oracle != "rat" {
			return nil, fmt.Errorf("%s.oracle: %q, only exact (rat) cases are emitted", at, limitStr(c.Oracle))
		}
		if len(c.Inputs) != len(c.Dx) {
			return nil, fmt.Errorf("%s: %d tangents for %d inputs", at, len(c.Dx), len(c.Inputs))
		}
		var shapes, xs, dxs []string
		for k := range c.Inputs {
			if err := checkTensor(c.Inputs[k]); err != nil {
				return nil, fmt.Errorf("%s.inputs[%d]: %v", at, k, err)
			}
			if err := checkTensor(c.Dx[k]); err != nil {
				return nil, fmt.Errorf("%s.dx[%d]: %v", at, k, err)
			}
			shapes = append(shapes, nats(c.Inputs[k].Shape))
			x, err := rats(c.Inputs[k].Values)
			if err != nil {
				return nil, fmt.Errorf("%s.inputs[%d]: %v", at, k, err)
			}
			dx, err := rats(c.Dx[k].Values)
			if err != nil {
				return nil, fmt.Errorf("%s.dx[%d]: %v", at, k, err)
			}
			xs, dxs = append(xs, x), append(dxs, dx)
		}
		if err := checkTensor(c.Delta); err != nil {
			return nil, fmt.Errorf("%s.delta: %v", at, err)
		}
		delta, err := rats(c.Delta.Values)
		if err != nil {
			return nil, fmt.Errorf("%s.delta: %v", at, err)
		}
		if c.Attrs.Start < 0 || c.Attrs.End < 0 {
			return nil, fmt.Errorf("%s.attrs: negative slice bound", at)
		}
		ac, alo, ahi, aaxis2, aperm, err := leanAttrs(f.Op, c.Attrs)
		if err != nil {
			return nil, fmt.Errorf("%s.attrs: %v", at, err)
		}
		for _, p := range aperm {
			if p < 0 {
				return nil, fmt.Errorf("%s.attrs: negative axis or index", at)
			}
		}
		for _, d := range c.Attrs.Shape {
			if d < 0 {
				return nil, fmt.Errorf("%s.attrs.shape: negative extent", at)
			}
		}
		vals, err := rats(c.Attrs.Values)
		if err != nil {
			return nil, fmt.Errorf("%s.attrs.values: %v", at, err)
		}
		if drawOps[f.Op] {
			if vals, err = leanDraw(f.Op, &c); err != nil {
				return nil, fmt.Errorf("%s: %s %v", at, f.Op, err)
			}
		}
		var attr [3]string
		for j, v := range [3]string{ac, alo, ahi} {
			if v == "" {
				v = "0"
			}
			if attr[j], err = Rat(v); err != nil {
				return nil, fmt.Errorf("%s.attrs.%s: %v", at, [3]string{"c", "lo", "hi"}[j], err)
			}
		}
		win := ""
		if windowOps[f.Op] {
			if win, err = leanWindow(c.Attrs.Window); err != nil {
				return nil, fmt.Errorf("%s.attrs.%v", at, err)
			}
		}
		if normOps[f.Op] {
			if win, err = leanEps(f.Op, c.Attrs.Eps); err != nil {
				return nil, fmt.Errorf("%s.attrs.eps: %v", at, err)
			}
		}
		if f.Op == "dropout" && len(c.Inputs) == 1 {
			if win, err = leanDropout(c.Attrs, c.Inputs[0]); err != nil {
				return nil, fmt.Errorf("%s.attrs: dropout %v", at, err)
			}
		}
		lhs, err := Rat(c.LHS)
		if err != nil {
			return nil, fmt.Errorf("%s.lhs: %v", at, err)
		}
		rhs, err := Rat(c.RHS)
		if err != nil {
			return nil, fmt.Errorf("%s.rhs: %v", at, err)
		}
		sep := ","
		if i == len(f.Cases)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  { shapes := [%s], xs := [%s], dxs := [%s], outShape := %s, delta := %s, c := %s, lo := %s, hi := %s, axis := %d, axis2 := %d, perm := %s, start := %d, stop := %d, toShape := %s, values := %s, lhs := %s, rhs := %s%s }%s\n",
			strings.Join(shapes, ", "), strings.Join(xs, ", "), strings.Join(dxs, ", "), nats(c.Delta.Shape), delta, attr[0], attr[1], attr[2], c.Attrs.Axis, aaxis2, nats(aperm), c.Attrs.Start, c.Attrs.End, nats(c.Attrs.Shape), vals, lhs, rhs, win, sep)
	}
	b.WriteString("]\n\n")
	b.WriteString("set_option maxRecDepth 100000 in\n")
	fmt.Fprintf(&b, "theorem cert : checkAll Prim.%s cases = true := by decide +kernel\n\n", f.Op)
	b.WriteString("/-- Every recorded case's claim, from `cert` by `checkAll_sound`. -/\n")
	fmt.Fprintf(&b, "theorem cert_ok : ∀ k ∈ cases, Claim Prim.%s k := checkAll_sound Prim.%s cases cert\n\n", f.Op, f.Op)
	fmt.Fprintf(&b, "end %s\n", ns)
	return b.Bytes(), nil
}

// Write writes the modules under out, first removing the .lean files a
// previous emit left there (Adjointness/*.lean, Composition.lean,
// ModelComposition.lean and All.lean) and nothing else.
func Write(out string, r *Result) error {
	adj := filepath.Join(out, "Adjointness")
	if err := os.MkdirAll(adj, 0o755); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(adj, "*.lean"))
	for _, p := range append(old, filepath.Join(out, "All.lean"), filepath.Join(out, compositionModule+".lean"), filepath.Join(out, modelCompositionModule+".lean")) {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	for _, m := range r.Modules {
		if err := os.WriteFile(filepath.Join(out, filepath.FromSlash(m.Path)), m.Bytes, 0o644); err != nil {
			return err
		}
	}
	return nil
}
