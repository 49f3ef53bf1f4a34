package cuda

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// bindCUDA binds the checked_cuda capsule of op (from backend.CUDACatalog,
// derived from the registry) to p.
func bindCUDA(t testing.TB, p backend.Provider, op string) *backend.Binding {
	t.Helper()
	ps, err := backend.NewProviders(backend.NewReferenceProvider(nil), p)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := backend.CUDACatalog().Lookup(backend.ProviderNativeCUDA + "." + op)
	if !ok {
		t.Fatalf("no capsule native-cuda.%s", op)
	}
	b, err := ps.Bind(c)
	if err != nil {
		t.Fatalf("bind %s: %v", c.Name, err)
	}
	return b
}

// emulations are the kernel orders refinement must accept: the tree sum,
// the atomic sum with the default (last block first) and an interleaved
// block order.
func emulations() []struct {
	name string
	p    backend.Provider
} {
	interleave := func(n int) []int {
		var out []int
		for i := 0; i < n; i += 2 {
			out = append(out, i)
		}
		for i := 1; i < n; i += 2 {
			out = append(out, i)
		}
		return out
	}
	return []struct {
		name string
		p    backend.Provider
	}{
		{"tree", &provider{k: &emuKernels{}}},
		{"atomic", &provider{k: &emuKernels{}, atomic: true}},
		{"atomic interleaved", &provider{k: &emuKernels{atomicOrder: interleave}, atomic: true}},
	}
}

// TestCapsulesAreCertificates checks the checked_cuda capsules of the
// accumulating kernels: device cuda, implementation-defined reduction, a
// numerical certificate discharged by the γ-bound rule.
func TestCapsulesAreCertificates(t *testing.T) {
	for _, op := range refine.Ops() {
		c, ok := backend.CUDACatalog().Lookup(backend.ProviderNativeCUDA + "." + op)
		if !ok {
			t.Fatalf("no capsule for %s", op)
		}
		ob, err := refine.Discharge(c, backend.AssuranceChecked)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		if c.Device != backend.DeviceCUDA || c.Reduction != backend.ReductionImplementationDefined ||
			ob.Evidence != backend.EvidenceNumericalCertificate || !ob.Certificate || ob.Rule != refine.RuleBound {
			t.Errorf("%s: device %s, reduction %s, obligation %+v", op, c.Device, c.Reduction, ob)
		}
		if !contains(Ops(), op) {
			t.Errorf("refine checks %s, which the CUDA provider has no kernel for", op)
		}
	}
}

// TestUncheckedCapsulesClaimNoCertificate: an accumulating op that refine
// has no rules for (softmax, mse_loss, …) must not claim a numerical
// certificate no checker discharges.
func TestUncheckedCapsulesClaimNoCertificate(t *testing.T) {
	n := 0
	for _, info := range spec.Infos() {
		if !info.Accumulates || contains(refine.Ops(), info.Name) {
			continue
		}
		n++
		c, _ := backend.CUDACatalog().Lookup(backend.ProviderNativeCUDA + "." + info.Name)
		if c.Value.Evidence == nil || c.Value.Evidence.Kind() == backend.EvidenceNumericalCertificate {
			t.Errorf("%s: value evidence %v", info.Name, c.Value.Evidence)
		}
	}
	if n == 0 {
		t.Fatal("no accumulating op outside refine.Ops: the test checks nothing")
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestRefineEmulatedKernels runs package refine's check (every input
// kind: normal, wide binades, subnormals, cancellations, signed zeros,
// NaN/∞, overflow) on the emulated kernel orders, on refine's random small
// shapes and on shapes that span several blocks and tiles.
func TestRefineEmulatedKernels(t *testing.T) {
	shapes := map[string][]spec.Shape{
		"sum":        {{700}},
		"reduce_sum": {{3, 600, 2}},
		"matmul":     {{20, 33}, {33, 17}},
		"linear":     {{5, 40}, {19, 40}, {19}},
	}
	cases := 24
	if testing.Short() {
		cases = 8
	}
	for _, em := range emulations() {
		for _, op := range refine.Ops() {
			b := bindCUDA(t, em.p, op)
			for _, o := range []refine.Options{{Cases: cases, Seed: 7}, {Cases: len(refine.Kinds()), Seed: 3, Shapes: shapes[op], Axis: 1}} {
				res, err := refine.CheckOptions(b, op, o)
				if err != nil {
					t.Fatalf("%s %s: %v", em.name, op, err)
				}
				if res.Failures != 0 {
					t.Errorf("%s %s: %d failures: %v", em.name, op, res.Failures, res.Failure)
				}
				if res.Obligation.Rule != refine.RuleBound || res.Provider != backend.ProviderNativeCUDA {
					t.Errorf("%s %s: rule %s provider %s", em.name, op, res.Obligation.Rule, res.Provider)
				}
			}
		}
	}
}

// TestPlantedFaultCaught flips one significand bit of one output element
// (bit 20: 2^20 ulps, far beyond γ_n·Σ|terms| for refine's small shapes):
// refinement must fail for every op, and name the CUDA capsule.
func TestPlantedFaultCaught(t *testing.T) {
	for _, op := range refine.Ops() {
		bad, err := refine.NewFlipBit(NewEmulatedProvider(Options{}), op, 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		res, err := refine.Check(bindCUDA(t, bad, op), op, 12, 1)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		if res.Failures == 0 || res.Failure == nil {
			t.Errorf("%s: a flipped bit 20 went unnoticed", op)
		}
	}
}

// TestTreeOrderByHand pins the emulated tree order on an input where the
// order shows: x = [1, 2^-24, 2^-24, 2^-24]. The block tree adds
// sh[0]+sh[2] = 1+2^-24 → 1 (tie to even) and sh[1]+sh[3] = 2^-23, then
// 1 + 2^-23 (exact). A left fold would give 1 three times (each 1+2^-24
// ties to 1). The exact sum is 1 + 3·2^-24.
func TestTreeOrderByHand(t *testing.T) {
	e := &emuKernels{}
	h := float32(math.Ldexp(1, -24))
	x := []float32{1, h, h, h}
	got, err := e.sumTree(x)
	if err != nil {
		t.Fatal(err)
	}
	if want := float32(1 + math.Ldexp(1, -23)); got != want {
		t.Errorf("tree sum %v, want %v", got, want)
	}
	at, _ := e.sumAtomic(x)
	if at != got { // one block: the atomic variant adds the one block sum to +0
		t.Errorf("atomic sum %v, want %v", at, got)
	}
	// reduce_sum over n = 258: thread 0 folds x[0]+x[256], thread 1
	// x[1]+x[257], then the tree. With x[0] = 1, x[256] = 2^-24 and
	// x[1] = x[257] = 2^-24, thread 0 holds 1 (tie), thread 1 2^-23, and
	// the tree gives 1 + 2^-23.
	y := make([]float32, 258)
	y[0], y[256], y[1], y[257] = 1, h, h, h
	r, _ := e.reduceSum(y, 1, 258, 1)
	if want := float32(1 + math.Ldexp(1, -23)); len(r) != 1 || r[0] != want {
		t.Errorf("reduce_sum %v, want [%v]", r, want)
	}
}

// TestElementwiseBitExact compares the elementwise kernels with the
// registry's float32 forward rule bit for bit (NaN matches any NaN): they
// are single correctly rounded operations or copies.
func TestElementwiseBitExact(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1.5, 3.25e-39, -1e-45, 3.4e38, -3.4e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0.1, 7, -2.5e-8}
	n := len(vals)
	a := spec.Tensor[spec.F32]{Shape: spec.Shape{n, n}, Data: make([]spec.F32, n*n)}
	b := spec.Tensor[spec.F32]{Shape: spec.Shape{n, n}, Data: make([]spec.F32, n*n)}
	for i := range n {
		for j := range n {
			a.Data[i*n+j], b.Data[i*n+j] = spec.F32(vals[i]), spec.F32(vals[j])
		}
	}
	ref := backend.NewReferenceProvider(nil)
	emu := NewEmulatedProvider(Options{})
	cases := []struct {
		op string
		a  *spec.Attrs
		xs []spec.Tensor[spec.F32]
	}{
		{"add", nil, []spec.Tensor[spec.F32]{a, b}},
		{"sub", nil, []spec.Tensor[spec.F32]{a, b}},
		{"mul", nil, []spec.Tensor[spec.F32]{a, b}},
		{"neg", nil, []spec.Tensor[spec.F32]{a}},
		{"relu", nil, []spec.Tensor[spec.F32]{a}},
		{"broadcast_to", &spec.Attrs{Shape: spec.Shape{3, n, 2, n}}, []spec.Tensor[spec.F32]{{Shape: spec.Shape{n, 1, n}, Data: a.Data}}},
		{"broadcast_to", &spec.Attrs{Shape: spec.Shape{2, n}}, []spec.Tensor[spec.F32]{{Shape: spec.Shape{n}, Data: a.Data[:n]}}},
		{"reshape", &spec.Attrs{Shape: spec.Shape{n * n / 2, 2}}, []spec.Tensor[spec.F32]{a}},
		{"permute", &spec.Attrs{Perm: []int{1, 0}}, []spec.Tensor[spec.F32]{a}},
		{"permute", &spec.Attrs{Perm: []int{2, 0, 1}}, []spec.Tensor[spec.F32]{{Shape: spec.Shape{2, 7, n}, Data: a.Data[:14*n]}}},
	}
	for _, c := range cases {
		want, err := ref.Execute(c.op, c.a, c.xs)
		if err != nil {
			t.Fatalf("%s reference: %v", c.op, err)
		}
		got, err := bindCUDA(t, emu, c.op).Execute(c.a, c.xs)
		if err != nil {
			t.Fatalf("%s: %v", c.op, err)
		}
		if !got.Shape.Equal(want.Shape) {
			t.Fatalf("%s: shape %v, want %v", c.op, got.Shape, want.Shape)
		}
		for i := range want.Data {
			g, w := float32(got.Data[i]), float32(want.Data[i])
			if (g != g && w != w) || math.Float32bits(g) == math.Float32bits(w) {
				continue
			}
			t.Errorf("%s element %d: %v (%#08x), want %v (%#08x)", c.op, i, g, math.Float32bits(g), w, math.Float32bits(w))
			break
		}
	}
}

// TestMSELossByHand: ŷ = [3, 1, 0.5], y = [1, 1, 0]: d = [2, 0, 0.5],
// d² = [4, 0, 0.25], Σ = 4.25 (exact in any order), /3 rounded once to
// the binary32 nearest 17/12; and the empty loss is 0/1 = 0.
func TestMSELossByHand(t *testing.T) {
	p := NewEmulatedProvider(Options{})
	yh := spec.Tensor[spec.F32]{Shape: spec.Shape{3}, Data: []spec.F32{3, 1, 0.5}}
	y := spec.Tensor[spec.F32]{Shape: spec.Shape{3}, Data: []spec.F32{1, 1, 0}}
	got, err := p.Execute("mse_loss", nil, []spec.Tensor[spec.F32]{yh, y})
	if err != nil {
		t.Fatal(err)
	}
	if want := float32(17.0 / 12.0); len(got.Data) != 1 || float32(got.Data[0]) != want {
		t.Errorf("mse_loss %v, want %v", got.Data, want)
	}
	e := spec.Tensor[spec.F32]{Shape: spec.Shape{0}}
	got, err = p.Execute("mse_loss", nil, []spec.Tensor[spec.F32]{e, e})
	if err != nil || len(got.Data) != 1 || got.Data[0] != 0 {
		t.Errorf("empty mse_loss %v %v", got.Data, err)
	}
}

// TestBadInputIsAnError feeds malformed parents straight to Execute (past
// the binding's guards): each must be an error, never a panic.
func TestBadInputIsAnError(t *testing.T) {
	p := NewEmulatedProvider(Options{})
	v := func(s ...int) spec.Tensor[spec.F32] {
		sh := spec.Shape(s)
		return spec.Tensor[spec.F32]{Shape: sh, Data: make([]spec.F32, sh.Size())}
	}
	cases := []struct {
		name string
		op   string
		a    *spec.Attrs
		xs   []spec.Tensor[spec.F32]
	}{
		{"unknown op", "nope", nil, []spec.Tensor[spec.F32]{v(2)}},
		{"no handler", "exp", nil, []spec.Tensor[spec.F32]{v(2)}},
		{"arity", "add", nil, []spec.Tensor[spec.F32]{v(2)}},
		{"shapes differ", "add", nil, []spec.Tensor[spec.F32]{v(2), v(3)}},
		{"data short", "neg", nil, []spec.Tensor[spec.F32]{{Shape: spec.Shape{4}, Data: make([]spec.F32, 3)}}},
		{"axis", "reduce_sum", &spec.Attrs{Axis: 5}, []spec.Tensor[spec.F32]{v(2, 3)}},
		{"matmul inner", "matmul", nil, []spec.Tensor[spec.F32]{v(2, 3), v(4, 2)}},
		{"linear weight", "linear", nil, []spec.Tensor[spec.F32]{v(2, 3), v(3), v(3)}},
		{"linear bias", "linear", nil, []spec.Tensor[spec.F32]{v(2, 3), v(4, 3), v(3)}},
		{"broadcast", "broadcast_to", &spec.Attrs{Shape: spec.Shape{2, 4}}, []spec.Tensor[spec.F32]{v(3)}},
		{"broadcast attrs", "broadcast_to", nil, []spec.Tensor[spec.F32]{v(3)}},
		{"reshape count", "reshape", &spec.Attrs{Shape: spec.Shape{4}}, []spec.Tensor[spec.F32]{v(3)}},
		{"reshape attrs", "reshape", nil, []spec.Tensor[spec.F32]{v(3)}},
		{"perm repeat", "permute", &spec.Attrs{Perm: []int{0, 0}}, []spec.Tensor[spec.F32]{v(2, 3)}},
		{"perm rank", "permute", &spec.Attrs{Perm: []int{0}}, []spec.Tensor[spec.F32]{v(2, 3)}},
		{"mse shapes", "mse_loss", nil, []spec.Tensor[spec.F32]{v(2), v(3)}},
	}
	for _, c := range cases {
		if _, err := p.Execute(c.op, c.a, c.xs); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
