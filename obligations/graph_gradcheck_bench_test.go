package obligations

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// This file compares the inner-product check (CheckAdjointness: one JVP
// and one VJP, decided exactly) with a full-Jacobian finite-difference
// gradcheck written for the comparison — what PyTorch's slow
// torch.autograd.gradcheck does: perturb every input coordinate by ±h,
// two forward evaluations each, assemble the numerical Jacobian, build the
// analytical Jacobian from one VJP per output coordinate, and compare them
// entry by entry within atol + rtol·|analytical|.

// gradcheckOut is the linear layer's output width in the benchmark.
const gradcheckOut = 8

// linearInstance is linear(x, W, b) with x of n inputs, W [8, n], b [8],
// drawn deterministically, with tangents and a cotangent.
func linearInstance(n int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) {
	src := casegen.NewRandSource(uint64(n))
	xs := []spec.Tensor[spec.Rat]{
		casegen.GenTensor(src, spec.Shape{n}, casegen.Any, "x"),
		casegen.GenTensor(src, spec.Shape{gradcheckOut, n}, casegen.Any, "W"),
		casegen.GenTensor(src, spec.Shape{gradcheckOut}, casegen.Any, "b"),
	}
	inst := &casegen.Instance{Op: "linear", Attrs: &spec.Attrs{}, Xs: xs, Domains: []casegen.Domain{casegen.Any, casegen.Any, casegen.Any}}
	dxs, d := casegen.Tangents(src, inst, spec.Shape{gradcheckOut})
	return inst, dxs, d
}

// fdGradcheck is the full-Jacobian finite-difference gradcheck over the
// scalar T with step h: it returns the largest |numerical − analytical|
// entry and an error when an entry exceeds atol + rtol·|analytical|.
func fdGradcheck[T spec.Scalar[T]](reg *spec.Registry[T], op string, a *spec.Attrs, xs []spec.Tensor[T], h T, atol, rtol float64) (float64, error) {
	p, err := reg.Lookup(op)
	if err != nil {
		return 0, err
	}
	y, err := p.Apply(a, xs)
	if err != nil {
		return 0, err
	}
	m := len(y.Data)
	total := 0
	for _, x := range xs {
		total += len(x.Data)
	}
	two := spec.Const[T](2)
	twoH := two.Mul(h)
	// Numerical Jacobian, one column per input coordinate.
	num := make([][]T, m)
	for i := range num {
		num[i] = make([]T, total)
	}
	col := 0
	for k := range xs {
		for j := range xs[k].Data {
			orig := xs[k].Data[j]
			xs[k].Data[j] = orig.Add(h)
			yp, err := p.Apply(a, xs)
			if err != nil {
				return 0, err
			}
			xs[k].Data[j] = orig.Sub(h)
			ym, err := p.Apply(a, xs)
			if err != nil {
				return 0, err
			}
			xs[k].Data[j] = orig
			for i := 0; i < m; i++ {
				if num[i][col], err = yp.Data[i].Sub(ym.Data[i]).Div(twoH); err != nil {
					return 0, err
				}
			}
			col++
		}
	}
	// Analytical Jacobian, one VJP per output coordinate; compare.
	worst := 0.0
	for i := 0; i < m; i++ {
		e := spec.ZerosLike(y)
		e.Data[i] = spec.One[T]()
		gs, err := p.VJP(a, xs, y, e)
		if err != nil {
			return 0, err
		}
		col := 0
		for k := range gs {
			for _, an := range gs[k].Data {
				diff := math.Abs(num[i][col].Float64() - an.Float64())
				worst = math.Max(worst, diff)
				if diff > atol+rtol*math.Abs(an.Float64()) {
					return worst, fmt.Errorf("gradcheck: output %d, input coordinate %d: numerical %v, analytical %v", i, col, num[i][col], an)
				}
				col++
			}
		}
	}
	return worst, nil
}

// The comparison gradcheck is a real check: it accepts the reference rule
// and rejects a sign-flipped VJP, over F64 (PyTorch's tolerances) and
// exactly over Rat.
func TestFDGradcheckCatchesSignFlip(t *testing.T) {
	inst, _, _ := linearInstance(4)
	xs64 := casegen.ConvertInputs[spec.F64](inst.Xs)
	if _, err := fdGradcheck(spec.Default[spec.F64](), "linear", inst.Attrs, xs64, 1e-6, 1e-5, 1e-3); err != nil {
		t.Fatalf("reference rule rejected: %v", err)
	}
	if _, err := fdGradcheck(spec.Default[spec.Rat](), "linear", inst.Attrs, inst.Xs, spec.NewRat(1, 1000), 0, 0); err != nil {
		t.Fatalf("reference rule rejected over Rat: %v", err)
	}
	bad := spec.New[spec.F64]()
	p, _ := bad.Lookup("linear")
	flipped, orig := *p, p.VJP
	flipped.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.F64], y, dy spec.Tensor[spec.F64]) ([]spec.Tensor[spec.F64], error) {
		gs, err := orig(a, xs, y, dy)
		if err == nil {
			gs[0] = spec.NegT(gs[0])
		}
		return gs, err
	}
	bad.Override(&flipped)
	if _, err := fdGradcheck(bad, "linear", inst.Attrs, xs64, 1e-6, 1e-5, 1e-3); err == nil {
		t.Fatal("sign flip accepted by the gradcheck")
	}
}

var gradcheckSizes = []int{16, 64, 256}

// BenchmarkInnerProductCheck is CheckAdjointness on linear with n inputs:
// one JVP and one VJP over Rat, compared with ==.
func BenchmarkInnerProductCheck(b *testing.B) {
	reg := DefaultRegistries()
	for _, n := range gradcheckSizes {
		inst, dxs, d := linearInstance(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.CheckAdjointness(inst, dxs, d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// innerProductF64 is the inner-product check in float64 (one JVP, one
// VJP, two dot products, compared within a relative tolerance): the
// like-for-like counterpart of the float64 gradcheck.
func innerProductF64(p *spec.Prim[spec.F64], a *spec.Attrs, xs, dxs []spec.Tensor[spec.F64], d spec.Tensor[spec.F64]) error {
	y, err := p.Apply(a, xs)
	if err != nil {
		return err
	}
	jv, err := p.JVP(a, xs, y, dxs)
	if err != nil {
		return err
	}
	vj, err := p.VJP(a, xs, y, d)
	if err != nil {
		return err
	}
	lhs, err1 := spec.Dot(jv, d)
	rhs, err2 := spec.DotList(dxs, vj)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("dot: %v %v", err1, err2)
	}
	if math.Abs(float64(lhs-rhs)) > 1e-9*(1+math.Abs(float64(lhs))) {
		return fmt.Errorf("adjointness: %v ≠ %v", lhs, rhs)
	}
	return nil
}

// BenchmarkInnerProductF64 is the inner-product check in float64 on the
// same linear layer.
func BenchmarkInnerProductF64(b *testing.B) {
	p, _ := spec.Default[spec.F64]().Lookup("linear")
	for _, n := range gradcheckSizes {
		inst, dxs, d := linearInstance(n)
		xs, dx := casegen.ConvertInputs[spec.F64](inst.Xs), casegen.ConvertInputs[spec.F64](dxs)
		d64 := casegen.ConvertInputs[spec.F64]([]spec.Tensor[spec.Rat]{d})[0]
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := innerProductF64(p, inst.Attrs, xs, dx, d64); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFDGradcheckF64 is the full-Jacobian finite-difference
// gradcheck in float64 (PyTorch's slow gradcheck: double precision,
// h = 1e-6, atol = 1e-5, rtol = 1e-3) on the same linear layer: 2·(n + 8n
// + 8) forward evaluations and 8 VJPs.
func BenchmarkFDGradcheckF64(b *testing.B) {
	reg := spec.Default[spec.F64]()
	for _, n := range gradcheckSizes {
		inst, _, _ := linearInstance(n)
		xs := casegen.ConvertInputs[spec.F64](inst.Xs)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fdGradcheck(reg, "linear", inst.Attrs, xs, 1e-6, 1e-5, 1e-3); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFDGradcheckRat is the same gradcheck over exact rationals
// (the central difference of an affine map is exact), the like-for-like
// comparison with the inner-product check's scalar.
func BenchmarkFDGradcheckRat(b *testing.B) {
	reg := spec.Default[spec.Rat]()
	for _, n := range gradcheckSizes {
		inst, _, _ := linearInstance(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fdGradcheck(reg, "linear", inst.Attrs, inst.Xs, spec.NewRat(1, 1000), 0, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGradcheckRatio times both checks on the same linear layer in
// each iteration and reports their ratio (float64 finite-difference
// gradcheck time over exact inner-product check time) as "fd/ip": it grows
// linearly with n, since the gradcheck perturbs each of the 9n+8 input
// coordinates while the inner-product check costs one JVP and one VJP.
func BenchmarkGradcheckRatio(b *testing.B) {
	reg := DefaultRegistries()
	r64 := spec.Default[spec.F64]()
	for _, n := range gradcheckSizes {
		inst, dxs, d := linearInstance(n)
		xs := casegen.ConvertInputs[spec.F64](inst.Xs)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var ip, fd time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := reg.CheckAdjointness(inst, dxs, d); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := fdGradcheck(r64, "linear", inst.Attrs, xs, 1e-6, 1e-5, 1e-3); err != nil {
					b.Fatal(err)
				}
				ip, fd = ip+t1.Sub(t0), fd+time.Since(t1)
			}
			b.ReportMetric(float64(fd)/float64(ip), "fd/ip")
		})
	}
}
