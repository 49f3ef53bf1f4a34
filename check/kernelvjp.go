package check

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/spec"
)

// VJPKernelFunc is a user's float32 backward kernel of a registry
// primitive: from the parents xs and the output cotangent dy it returns
// one contribution per parent, each of its parent's shape (what a
// torch.autograd.Function's backward or a JAX custom_vjp's bwd returns;
// it recomputes whatever forward value it needs).
type VJPKernelFunc func(a *spec.Attrs, xs []spec.Tensor[spec.F32], dy spec.Tensor[spec.F32]) ([]spec.Tensor[spec.F32], error)

// Kernels are a user's float32 forward and backward kernels for one
// registry primitive. Either may be nil (not checked), not both.
type Kernels struct {
	Forward KernelFunc
	VJP     VJPKernelFunc
}

// PairOptions configure CheckKernels.
type PairOptions struct {
	// Attrs are the primitive's attributes in every case (conv's
	// window, softmax's axis, …); nil for none.
	Attrs *spec.Attrs
	// Shapes are the parents' shapes (required: the registry's Shape
	// rule must accept them with Attrs).
	Shapes []spec.Shape
	// Cases (default 32) and Seed (default 1): case i draws its inputs
	// and cotangent from spec.CaseSeed(Seed, "kernel/"+op, i).
	Cases int
	Seed  uint64
	// ULPs is the accuracy assumed of the kernel's exp, log, tanh, sin,
	// cos in binary32 ulps (0: fpbound.DefaultULPs).
	ULPs int
}

// PairReport is what CheckKernels decided.
type PairReport struct {
	Op    string
	Cases int
	// Holds, Fails and Inconclusive count judged elements of the forward
	// ("forward") and of the backward ("vjp").
	Holds, Fails, Inconclusive map[string]int
	// Failure describes the first failing element ("" when none).
	Failure string
}

// CheckKernels judges a user's float32 forward and VJP kernels for the
// registry primitive op, any primitive of spec.Default, against the
// registry's exact rules within fpbound's binary32 bound.
//
// Each case draws inputs and a cotangent of the given shapes, every
// element a binary32 dyadic k/8 with |k| ≤ 24 (a quarter of them
// repeating an earlier element, so that ties and kinks occur). The
// reference evaluates the registry's forward rule and then its VJP rule
// on the exact inputs over fpbound.Err: for every element it gives an
// enclosure [lo, hi] of the exact value x and a bound E such that every
// binary32 evaluation of the registry's formula — any summation order,
// fused multiply-adds, library functions within ULPs ulps (fpbound's
// model M1–M3; its package doc proves the theorem) — lies within E of
// x. A kernel's value v is then decided in exact rational arithmetic:
//
//	holds         [lo − E, hi + E] contains v;
//	fails         v is NaN or ±∞ where E is finite, or farther than E from
//	              every point of [lo, hi]: no binary32 evaluation of the
//	              registry's formula gives v (a proof, within the model);
//	inconclusive  E = +∞ (a comparison the bound cannot decide, a tie at
//	              which the convention is the kernel's), or neither.
//
// A kernel whose formula differs from the registry's (softmax without
// the max shift) is held to the registry formula's bound; one that fails
// is either wrong or less accurate than the model allows. The error is
// for a check that cannot run (unknown op, shapes the registry rejects,
// a kernel that errs or returns the wrong shape).
func CheckKernels(op string, k Kernels, o PairOptions) (*PairReport, error) {
	if k.Forward == nil && k.VJP == nil {
		return nil, fmt.Errorf("check: Kernels %s: no kernel", op)
	}
	rat := spec.Default[spec.Rat]()
	p, err := rat.Lookup(op)
	if err != nil {
		return nil, fmt.Errorf("check: Kernels: %w", err)
	}
	a := o.Attrs
	if a == nil {
		a = &spec.Attrs{}
	}
	if len(o.Shapes) < p.MinArity || (p.MaxArity >= 0 && len(o.Shapes) > p.MaxArity) {
		return nil, fmt.Errorf("check: Kernels %s: %d parents, the primitive takes %d to %d", op, len(o.Shapes), p.MinArity, p.MaxArity)
	}
	outShape, err := p.Shape(a, o.Shapes)
	if err != nil {
		return nil, fmt.Errorf("check: Kernels %s: shapes %v: %w", op, o.Shapes, err)
	}
	cases, seed := o.Cases, o.Seed
	if cases <= 0 {
		cases = 32
	}
	if seed == 0 {
		seed = 1
	}
	rep := &PairReport{Op: op, Cases: cases, Holds: map[string]int{}, Fails: map[string]int{}, Inconclusive: map[string]int{}}
	for i := 0; i < cases; i++ {
		rng := rand.New(rand.NewPCG(spec.CaseSeed(seed, "kernel/"+op, i), 0))
		var pool []spec.Rat
		draw := func(s spec.Shape) spec.Tensor[spec.Rat] {
			t, _ := spec.Zeros[spec.Rat](s)
			for j := range t.Data {
				if len(pool) > 0 && rng.IntN(4) == 0 {
					t.Data[j] = pool[rng.IntN(len(pool))]
				} else {
					t.Data[j] = spec.NewRat(int64(rng.IntN(49))-24, 8)
				}
				pool = append(pool, t.Data[j])
			}
			return t
		}
		xs := make([]spec.Tensor[spec.Rat], len(o.Shapes))
		for j, s := range o.Shapes {
			xs[j] = draw(s)
		}
		dy := draw(outShape)
		y, grads, err := pairReference(op, a, xs, dy, o.ULPs)
		if err != nil {
			return nil, fmt.Errorf("check: Kernels %s: case %d: reference: %w", op, i, err)
		}
		xf := make([]spec.Tensor[spec.F32], len(xs))
		for j, x := range xs {
			xf[j] = toF32(x)
		}
		judge := func(what string, got spec.Tensor[spec.F32], want []fpbound.Enclosure, shape spec.Shape) error {
			if !got.Shape.Equal(shape) || len(got.Data) != len(want) {
				return fmt.Errorf("check: Kernels %s: case %d: %s has shape %v, want %v", op, i, what, got.Shape, shape)
			}
			kind := "forward"
			if what != "y" {
				kind = "vjp"
			}
			for e, en := range want {
				switch v := float64(got.Data[e]); judgeF32(v, en) {
				case 1:
					rep.Holds[kind]++
				case -1:
					rep.Fails[kind]++
					if rep.Failure == "" {
						rep.Failure = fmt.Sprintf("case %d: %s[%d] = %v (kernel), exact in [%.9g, %.9g], bound %.3g (binary32); inputs %s, cotangent %s",
							i, what, e, v, en.Exact.Lo, en.Exact.Hi, en.Bound, tensorsString(xs), dy.Data)
					}
				default:
					rep.Inconclusive[kind]++
				}
			}
			return nil
		}
		if k.Forward != nil {
			got, err := k.Forward(a, xf)
			if err != nil {
				return nil, fmt.Errorf("check: Kernels %s: case %d: forward kernel: %w", op, i, err)
			}
			if err := judge("y", got, y, outShape); err != nil {
				return nil, err
			}
		}
		if k.VJP != nil {
			got, err := k.VJP(a, xf, toF32(dy))
			if err != nil {
				return nil, fmt.Errorf("check: Kernels %s: case %d: VJP kernel: %w", op, i, err)
			}
			if len(got) != len(xs) {
				return nil, fmt.Errorf("check: Kernels %s: case %d: the VJP kernel returned %d contributions for %d parents", op, i, len(got), len(xs))
			}
			for j := range got {
				if err := judge(fmt.Sprintf("∂/∂x%d", j), got[j], grads[j], o.Shapes[j]); err != nil {
					return nil, err
				}
			}
		}
	}
	return rep, nil
}

// KernelPair checks a user's float32 forward and VJP kernels for the
// registry primitive op from the user's go test (CheckKernels), failing
// t with the first element outside the bound or with the error that kept
// the check from running.
func KernelPair(t TB, op string, k Kernels, o PairOptions) {
	t.Helper()
	rep, err := CheckKernels(op, k, o)
	switch {
	case err != nil:
		t.Fatalf("%v", err)
	case rep.Failure != "":
		t.Errorf("check: kernels for %s: %d forward and %d vjp elements fail; first: %s", op, rep.Fails["forward"], rep.Fails["vjp"], rep.Failure)
	default:
		t.Logf("check: kernels for %s: %d cases; forward %d holds, %d inconclusive; vjp %d holds, %d inconclusive",
			op, rep.Cases, rep.Holds["forward"], rep.Inconclusive["forward"], rep.Holds["vjp"], rep.Inconclusive["vjp"])
	}
}

// pairReference evaluates op's registry forward rule and then its VJP
// rule at cotangent dy over fpbound.Err (binary32 bounds).
func pairReference(op string, a *spec.Attrs, xs []spec.Tensor[spec.Rat], dy spec.Tensor[spec.Rat], ulps int) ([]fpbound.Enclosure, [][]fpbound.Enclosure, error) {
	reg := spec.Default[fpbound.Err]()
	p, err := reg.Lookup(op)
	if err != nil {
		return nil, nil, err
	}
	conv := func(t spec.Tensor[spec.Rat]) spec.Tensor[fpbound.Err] {
		return spec.Convert(t, func(r spec.Rat) fpbound.Err { var z fpbound.Err; return z.FromRat(r.Big()) })
	}
	var y spec.Tensor[fpbound.Err]
	var gs []spec.Tensor[fpbound.Err]
	und, err := fpbound.Evaluate(fpbound.Options{ULPs: ulps}, func() error {
		ins := make([]spec.Tensor[fpbound.Err], len(xs))
		for i, x := range xs {
			ins[i] = conv(x)
		}
		var err error
		if y, err = p.Forward(a, ins); err != nil {
			return err
		}
		gs, err = p.VJP(a, ins, y, conv(dy))
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	enc := func(t spec.Tensor[fpbound.Err]) []fpbound.Enclosure {
		out := make([]fpbound.Enclosure, len(t.Data))
		for i, v := range t.Data {
			out[i] = fpbound.EncloseErr(v, und)
		}
		return out
	}
	grads := make([][]fpbound.Enclosure, len(gs))
	for i, g := range gs {
		grads[i] = enc(g)
	}
	return enc(y), grads, nil
}

// judgeF32 decides v against one enclosure: 1 holds, −1 fails, 0
// inconclusive (CheckKernels' doc).
func judgeF32(v float64, en fpbound.Enclosure) int {
	if math.IsInf(en.Bound, 1) || math.IsNaN(en.Bound) || math.IsInf(en.Exact.Lo, 0) || math.IsInf(en.Exact.Hi, 0) {
		return 0
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return -1
	}
	r, e := new(big.Rat).SetFloat64(v), new(big.Rat).SetFloat64(en.Bound)
	lo, hi := new(big.Rat).SetFloat64(en.Exact.Lo), new(big.Rat).SetFloat64(en.Exact.Hi)
	if new(big.Rat).Sub(lo, r).Cmp(e) > 0 || new(big.Rat).Sub(r, hi).Cmp(e) > 0 {
		return -1
	}
	if new(big.Rat).Sub(r, lo).Cmp(e) <= 0 && new(big.Rat).Sub(hi, r).Cmp(e) <= 0 {
		return 1
	}
	return 0
}

// toF32 converts exact values that are binary32 numbers (the drawn
// dyadics are) exactly.
func toF32(t spec.Tensor[spec.Rat]) spec.Tensor[spec.F32] {
	return spec.Convert(t, func(r spec.Rat) spec.F32 { f, _ := r.Big().Float32(); return spec.F32(f) })
}

func tensorsString(xs []spec.Tensor[spec.Rat]) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("x%d=%v%v", i, x.Shape, x.Data)
	}
	return s
}
