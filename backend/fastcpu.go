package backend

import (
	"fmt"
	"unsafe"

	"github.com/tlcheck/tlcheck/fastcpu"
	"github.com/tlcheck/tlcheck/spec"
)

// ProfileFastCPU is the name of the fast float32 CPU profile (see FastCPU).
const ProfileFastCPU = "fast_cpu"

// FastCPUCertificate names the numerical certificate behind the value
// contracts of the fast_cpu capsules: package refine's order-independent
// rounding-error bound (γ_n·Σ|terms| plus the underflow term), checked in
// exact rational arithmetic against the registry's Rat semantics.
const FastCPUCertificate = "tlcheck/refine gamma_n bound"

// fastOps lists the primitives the fast_cpu provider implements: those
// whose registry entry names it (spec.OpInfo.Providers), in registry
// order, which is the order of its capsules in FastCatalog.
func fastOps() []string {
	var out []string
	for _, info := range spec.Infos() {
		if info.HasProvider(spec.ProviderFastCPU) {
			out = append(out, info.Name)
		}
	}
	return out
}

// fastClaims is the value claim of each fast_cpu kernel: the bound that
// package refine checks, with the term count n of one output element. It
// describes the kernels below, so it lives with them; a test requires a
// claim and a kernel for every op the registry assigns to fast_cpu.
var fastClaims = map[string]string{
	"matmul":     "matmul forward refines its TorchLean semantics within γ_n·Σ|terms| + n·2^-149 (n = k products per output)",
	"linear":     "linear forward refines its TorchLean semantics within γ_n·Σ|terms| + (n−1)·2^-149 (n = in products + the bias per output)",
	"sum":        "sum forward refines its TorchLean semantics within γ_(n−1)·Σ|terms| (n = element count)",
	"reduce_sum": "reduce_sum forward refines its TorchLean semantics within γ_(n−1)·Σ|terms| (n = axis length)",
}

// FastCPUOps lists the registry primitives the fast_cpu provider
// implements, in registry order: sum, reduce_sum, matmul (every
// torch.matmul shape: 1-D promotion and batch broadcasting) and linear
// (any leading batch axes).
func FastCPUOps() []string { return fastOps() }

// FastCPUCapsule returns the fast_cpu capsule for op, one of FastCPUOps:
// provider fast_cpu, device cpu, trust checked, forward from package
// fastcpu, VJP owned by tlcheck's tape (the registry's reverse rule, as for
// the reference capsule), shape and layout guarded at run time by the same
// guards as the reference capsules (Binding.Execute performs them for every
// provider), an implementation-defined reduction policy, and a value
// contract resting on the numerical certificate FastCPUCertificate.
//
// The policy is implementation-defined: matmul and linear run fastcpu's
// SgemmFast/LinearFast, a fused multiply-add left fold with AVX-512 and
// the reference's separate-rounding left fold otherwise; the capsule
// promises only what the bound certifies, so the kernels may change their
// order (or their use of fused multiply-add) without changing the
// contract. A consequence is that range certificates, which propagate
// reductions only through fixed-left capsules, do not propagate through
// fast_cpu capsules.
func FastCPUCapsule(op string) (Capsule, error) {
	claim, ok := fastClaims[op]
	if info, err := spec.Info(op); !ok || err != nil || !info.HasProvider(spec.ProviderFastCPU) {
		return Capsule{}, fmt.Errorf("backend: provider %s has no capsule for %q (it implements %v)", ProviderFastCPU, op, fastOps())
	}
	return Capsule{
		Name:            ProviderFastCPU + "." + op,
		Op:              op,
		Provider:        ProviderFastCPU,
		Device:          DeviceCPU,
		Trust:           TrustChecked,
		SupportsForward: true,
		VJP:             VJPTape,
		Shape:           Contract{op, "shape safety for " + op, RuntimeGuard{ShapeGuard}},
		Layout:          Contract{op, "canonical-tensor layout compatibility for " + op, RuntimeGuard{LayoutGuard}},
		Value:           Contract{op, claim, NumericalCertificate{FastCPUCertificate}},
		VJPContract:     Contract{op, op + " torchlean-tape VJP refines its TorchLean semantics", TestSuite{ReferenceSuite}},
		Reduction:       ReductionImplementationDefined,
	}, nil
}

// FastCPUCapsules returns the fast_cpu capsules in FastCPUOps order.
func FastCPUCapsules() []Capsule {
	ops := fastOps()
	out := make([]Capsule, 0, len(ops))
	for _, op := range ops {
		if c, err := FastCPUCapsule(op); err == nil { // every op has a claim (tested)
			out = append(out, c)
		}
	}
	return out
}

// FastCatalog returns the fast CPU catalog: the fast_cpu capsules first,
// then the whole reference catalog. Selection scans in catalog order, so a
// profile with provider policy auto selects fast_cpu for matmul, linear,
// sum and reduce_sum and the reference capsule for every other op.
func FastCatalog() *Catalog {
	c, _ := NewCatalog(FastCPUCapsules()...) // distinct, non-empty names
	c, _ = c.Append(ReferenceCatalog().Capsules()...)
	return c
}

// FastCPU returns a fresh fast_cpu profile: device cpu, provider policy
// auto, assurance checked, VJP policy torchlean-tape, over FastCatalog.
//
// The provider policy is auto, not fast_cpu: a named provider makes only
// that provider's capsules admissible, and fast_cpu implements four ops, so
// such a profile could not run a whole model. With auto, the catalog order
// (fast capsules first) expresses the preference instead. Sessions on this
// profile must bind through a Providers set that holds the fast_cpu
// provider, such as FastProviders; DefaultProviders has only the reference
// provider, so binding a fast capsule there fails with a
// *MissingProviderError.
func FastCPU() *Profile {
	return &Profile{
		Name:      ProfileFastCPU,
		Device:    DeviceCPU,
		Provider:  ProviderAuto,
		Assurance: AssuranceChecked,
		VJP:       VJPTape,
		Catalog:   FastCatalog(),
	}
}

// FastProviders returns a fresh provider registry holding the reference
// provider (over the shared spec registry) and the fast_cpu provider.
func FastProviders() *Providers {
	r := DefaultProviders()
	_ = r.Register(NewFastCPUProvider()) // cannot fail: a distinct, named cpu provider
	return r
}

// NewFastCPUProvider returns the fast float32 CPU provider, named fast_cpu,
// on device cpu. It runs the kernels of package fastcpu:
//
//   - matmul: torch.matmul's 1-D promotion and batch broadcasting resolved
//     here, then one fastcpu.SgemmFast per batch (a left fold over k per
//     element, fused multiply-add where AVX-512 runs, at most k terms);
//   - linear: fastcpu.LinearFast over the rows of x (x may have any number
//     of leading axes): that fold over in, then the bias (at most in+1
//     terms);
//   - sum: fastcpu.Sum over the data (chunks of fastcpu.ChunkLen, eight
//     interleaved accumulators combined pairwise: a reordered sum of n
//     terms);
//   - reduce_sum: along the last axis, fastcpu.Sum on each contiguous lane;
//     along another axis, eight interleaved accumulator rows (element j of
//     the lane goes to accumulator j mod 8, each a left fold from +0),
//     combined as ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)); at most n terms for
//     an axis of length n.
//
// The results depend only on the inputs (and, for matmul and linear,
// whether the CPU has AVX-512), never on GOMAXPROCS or scheduling. Malformed inputs (wrong arity,
// data not matching a shape, incompatible shapes, a bad axis) yield errors,
// never panics.
func NewFastCPUProvider() Provider { return fastProvider{} }

type fastProvider struct{}

// Name is "fast_cpu".
func (fastProvider) Name() string { return ProviderFastCPU }

// Device is cpu.
func (fastProvider) Device() Device { return DeviceCPU }

// Ops lists FastCPUOps.
func (fastProvider) Ops() []string { return FastCPUOps() }

// Execute runs op's fast kernel.
func (fastProvider) Execute(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	info, err := spec.Info(op)
	if _, claimed := fastClaims[op]; err != nil || !claimed || !info.HasProvider(spec.ProviderFastCPU) {
		return zero, fmt.Errorf("provider %s has no handler for %q", ProviderFastCPU, op)
	}
	want := info.MinArity // every fast_cpu op has a fixed arity
	if len(xs) != want {
		return zero, fmt.Errorf("%s takes %d parents, got %d", op, want, len(xs))
	}
	for i, x := range xs {
		n, err := x.Shape.Check(0)
		if err != nil {
			return zero, fmt.Errorf("%s: parent %d: %w", op, i, err)
		}
		if len(x.Data) != n {
			return zero, fmt.Errorf("%s: parent %d of shape %v holds %d values, expected %d", op, i, x.Shape, len(x.Data), n)
		}
	}
	switch op {
	case "matmul":
		return fastMatmul(xs[0], xs[1])
	case "linear":
		return fastLinear(xs[0], xs[1], xs[2])
	case "sum":
		return spec.Scalar0(spec.F32(fastcpu.Sum(f32view(xs[0].Data)))), nil
	default: // reduce_sum
		axis := 0
		if a != nil {
			axis = a.Axis
		}
		return fastReduceSum(xs[0], axis)
	}
}

// f32view views a []spec.F32 as []float32 without copying: spec.F32 is
// defined as float32, so the two slices have the same memory layout.
func f32view(d []spec.F32) []float32 {
	return unsafe.Slice((*float32)(unsafe.SliceData(d)), len(d))
}

// fastMatmul resolves torch.matmul's shapes (1-D operands promoted to a
// row or column that is dropped from the result; batch axes broadcast,
// aligned on the right) and runs one Sgemm per batch.
func fastMatmul(a, b spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	p, err := spec.PlanMatmul(a.Shape, b.Shape)
	if err != nil {
		return zero, err
	}
	c, err := spec.Zeros[spec.F32](p.Out)
	if err != nil {
		return zero, fmt.Errorf("matmul: output %w", err)
	}
	m, k, n := p.M, p.K, p.N
	av, bv, cv := f32view(a.Data), f32view(b.Data), f32view(c.Data)
	mk, kn, mn := m*k, k*n, m*n
	for bt := range p.AIndex {
		ao, bo, co := p.AIndex[bt]*mk, p.BIndex[bt]*kn, bt*mn
		if err := fastcpu.SgemmFastChecked(m, n, k, av[ao:ao+mk], max(k, 1), bv[bo:bo+kn], max(n, 1),
			cv[co:co+mn], max(n, 1)); err != nil {
			return zero, fmt.Errorf("matmul batch %d: %w", bt, err)
		}
	}
	return c, nil
}

// fastLinear computes x·Wᵀ + b over the last axis of x with
// fastcpu.LinearFast.
func fastLinear(x, w, b spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	if w.Shape.Rank() != 2 {
		return zero, fmt.Errorf("linear weight must be [out,in], got %v", w.Shape)
	}
	out, in := w.Shape[0], w.Shape[1]
	if b.Shape.Rank() != 1 || b.Shape[0] != out {
		return zero, fmt.Errorf("linear bias has shape %v, expected [%d]", b.Shape, out)
	}
	if x.Shape.Rank() == 0 || x.Shape[x.Shape.Rank()-1] != in {
		return zero, fmt.Errorf("linear input has shape %v, expected last axis %d", x.Shape, in)
	}
	ys := x.Shape.Clone()
	ys[len(ys)-1] = out
	y, err := spec.Zeros[spec.F32](ys)
	if err != nil {
		return zero, fmt.Errorf("linear: output %w", err)
	}
	rows := x.Shape[:len(x.Shape)-1].Size()
	if err := fastcpu.LinearFastChecked(f32view(x.Data), rows, in, f32view(w.Data), out, f32view(b.Data), f32view(y.Data)); err != nil {
		return zero, fmt.Errorf("linear: %w", err)
	}
	return y, nil
}

// fastReduceSum sums x along axis (negative axes count from the end).
func fastReduceSum(x spec.Tensor[spec.F32], axis int) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	r := x.Shape.Rank()
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return zero, fmt.Errorf("reduce_sum: axis out of range for rank %d", r)
	}
	outer, n, inner := x.Shape[:axis].Size(), x.Shape[axis], x.Shape[axis+1:].Size()
	outShape := append(x.Shape[:axis].Clone(), x.Shape[axis+1:]...)
	y, err := spec.Zeros[spec.F32](outShape)
	if err != nil {
		return zero, fmt.Errorf("reduce_sum: output %w", err)
	}
	xv, yv := f32view(x.Data), f32view(y.Data)
	if inner == 1 {
		for o := range outer {
			yv[o] = fastcpu.Sum(xv[o*n : (o+1)*n])
		}
		return y, nil
	}
	// Eight accumulator rows of inner lanes each; lane j of the reduced
	// axis goes to row j mod 8, so each row is a left fold from +0 and the
	// rows are combined pairwise.
	acc := make([]float32, 8*inner)
	for o := range outer {
		clear(acc)
		base := o * n * inner
		for j := range n {
			row := xv[base+j*inner : base+(j+1)*inner]
			ar := acc[(j%8)*inner : (j%8+1)*inner]
			for c, v := range row {
				ar[c] += v
			}
		}
		dst := yv[o*inner : (o+1)*inner]
		for c := range dst {
			l := func(r int) float32 { return acc[r*inner+c] }
			dst[c] = ((l(0) + l(1)) + (l(2) + l(3))) + ((l(4) + l(5)) + (l(6) + l(7)))
		}
	}
	return y, nil
}
