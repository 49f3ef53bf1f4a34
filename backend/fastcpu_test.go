package backend_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/spec"
)

func fastTensor(t *testing.T, shape spec.Shape, seed uint64) spec.Tensor[spec.F32] {
	t.Helper()
	n := shape.Size()
	data := make([]spec.F32, n)
	for i := range data {
		// Uniform in [-2, 2) with 24-bit significands.
		data[i] = spec.F32(float32(spec.UniformBits(seed, i)>>8)/float32(1<<22) - 2)
	}
	x, err := spec.NewTensor(shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func bindFast(t *testing.T, op string) *backend.Binding {
	t.Helper()
	c, err := backend.FastCPUCapsule(op)
	if err != nil {
		t.Fatal(err)
	}
	b, err := backend.FastProviders().Bind(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func bindReference(t *testing.T, op string) *backend.Binding {
	t.Helper()
	c, err := backend.ReferenceCapsule(op)
	if err != nil {
		t.Fatal(err)
	}
	b, err := backend.DefaultProviders().Bind(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFastCPUShapesAgreeWithReference runs every fast op on the shapes the
// registry accepts and compares with the reference provider: matmul and
// linear bit for bit (fastcpu documents them as left folds), sum and
// reduce_sum within a loose relative tolerance (they reorder; package
// refine checks the rigorous bound).
func TestFastCPUShapesAgreeWithReference(t *testing.T) {
	tests := []struct {
		op     string
		axis   int
		shapes []spec.Shape
		exact  bool
	}{
		{"matmul", 0, []spec.Shape{{3, 4}, {4, 5}}, true},
		{"matmul", 0, []spec.Shape{{4}, {4}}, true},
		{"matmul", 0, []spec.Shape{{4}, {4, 3}}, true},
		{"matmul", 0, []spec.Shape{{2, 4}, {4}}, true},
		{"matmul", 0, []spec.Shape{{2, 1, 2, 3}, {4, 3, 2}}, true},
		{"matmul", 0, []spec.Shape{{3}, {2, 3, 2}}, true},
		{"matmul", 0, []spec.Shape{{2, 3, 0}, {0, 4}}, true},
		{"matmul", 0, []spec.Shape{{0, 3}, {3, 2}}, true},
		// Large enough for SgemmFast's FMA path on AVX-512: same value up
		// to rounding, not the same bits.
		{"matmul", 0, []spec.Shape{{40, 70}, {70, 33}}, false},
		{"linear", 0, []spec.Shape{{3}, {2, 3}, {2}}, true},
		{"linear", 0, []spec.Shape{{4, 3}, {2, 3}, {2}}, true},
		{"linear", 0, []spec.Shape{{2, 4, 3}, {5, 3}, {5}}, true},
		{"linear", 0, []spec.Shape{{2, 0}, {3, 0}, {3}}, true},
		{"sum", 0, []spec.Shape{{}}, true},
		{"sum", 0, []spec.Shape{{0}}, true},
		{"sum", 0, []spec.Shape{{7}}, false},
		{"sum", 0, []spec.Shape{{3, 50}}, false},
		{"sum", 0, []spec.Shape{{20000}}, false},
		{"reduce_sum", 1, []spec.Shape{{2, 3, 2}}, false},
		{"reduce_sum", -1, []spec.Shape{{3, 37}}, false},
		{"reduce_sum", 0, []spec.Shape{{37, 5}}, false},
		{"reduce_sum", 0, []spec.Shape{{0, 5}}, true},
		{"reduce_sum", 2, []spec.Shape{{2, 3, 0}}, true},
	}
	for i, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			xs := make([]spec.Tensor[spec.F32], len(tc.shapes))
			for j, s := range tc.shapes {
				xs[j] = fastTensor(t, s, uint64(100*i+j))
			}
			a := &spec.Attrs{Axis: tc.axis}
			got, err := bindFast(t, tc.op).Execute(a, xs)
			if err != nil {
				t.Fatal(err)
			}
			want, err := bindReference(t, tc.op).Execute(a, xs)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Shape.Equal(want.Shape) {
				t.Fatalf("shape %v, want %v", got.Shape, want.Shape)
			}
			for e := range got.Data {
				g, w := float64(got.Data[e]), float64(want.Data[e])
				if tc.exact && math.Float32bits(float32(got.Data[e])) != math.Float32bits(float32(want.Data[e])) {
					t.Fatalf("element %d: %v, reference %v (want bit-identical)", e, g, w)
				}
				if math.Abs(g-w) > 1e-4*(1+math.Abs(w)) {
					t.Fatalf("element %d: %v, reference %v", e, g, w)
				}
			}
		})
	}
}

// TestFastCPUReductionsReorder checks that sum and reduce_sum really
// reorder: [1, u, u, …] with u = 2^-24 left-folds to 1 (each 1+u rounds
// back to 1 by ties-to-even), but eight accumulators first add the u's
// together.
func TestFastCPUReductionsReorder(t *testing.T) {
	u := spec.F32(math.Ldexp(1, -24))
	lane := make([]spec.F32, 16)
	lane[0] = 1
	for i := 1; i < len(lane); i++ {
		lane[i] = u
	}
	strided := make([]spec.F32, 0, 32) // shape [16, 2]: column 0 is the lane
	for _, v := range lane {
		strided = append(strided, v, 0)
	}
	tests := []struct {
		name  string
		op    string
		axis  int
		shape spec.Shape
		data  []spec.F32
	}{
		{"sum", "sum", 0, spec.Shape{16}, lane},
		{"reduce_sum contiguous", "reduce_sum", 1, spec.Shape{1, 16}, lane},
		{"reduce_sum strided", "reduce_sum", 0, spec.Shape{16, 2}, strided},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := spec.NewTensor(tc.shape, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			a := &spec.Attrs{Axis: tc.axis}
			got, err := bindFast(t, tc.op).Execute(a, []spec.Tensor[spec.F32]{x})
			if err != nil {
				t.Fatal(err)
			}
			want, err := bindReference(t, tc.op).Execute(a, []spec.Tensor[spec.F32]{x})
			if err != nil {
				t.Fatal(err)
			}
			if want.Data[0] != 1 {
				t.Fatalf("reference left fold gives %v, want 1", want.Data[0])
			}
			if got.Data[0] == want.Data[0] {
				t.Fatalf("fast %s gives %v, the left fold's value: no reordering", tc.op, got.Data[0])
			}
			if exact := 1 + 15*math.Ldexp(1, -24); math.Abs(float64(got.Data[0])-exact) > math.Ldexp(1, -23) {
				t.Fatalf("fast %s gives %v, exact %v", tc.op, got.Data[0], exact)
			}
		})
	}
}

// TestFastCPUProviderRejectsBadInput calls the provider directly (outside
// a Binding's guards) with malformed inputs: every one is an error.
func TestFastCPUProviderRejectsBadInput(t *testing.T) {
	p := backend.NewFastCPUProvider()
	v := func(s spec.Shape, n int) spec.Tensor[spec.F32] {
		return spec.Tensor[spec.F32]{Shape: s, Data: make([]spec.F32, n)}
	}
	tests := []struct {
		name string
		op   string
		a    *spec.Attrs
		xs   []spec.Tensor[spec.F32]
		want string
	}{
		{"unknown op", "relu", nil, []spec.Tensor[spec.F32]{v(spec.Shape{2}, 2)}, "no handler"},
		{"arity", "matmul", nil, []spec.Tensor[spec.F32]{v(spec.Shape{2}, 2)}, "takes 2 parents"},
		{"short data", "sum", nil, []spec.Tensor[spec.F32]{v(spec.Shape{3}, 2)}, "holds 2 values"},
		{"negative extent", "sum", nil, []spec.Tensor[spec.F32]{v(spec.Shape{-1}, 0)}, "parent 0"},
		{"rank 0 matmul", "matmul", nil, []spec.Tensor[spec.F32]{v(spec.Shape{}, 1), v(spec.Shape{2}, 2)}, "rank ≥ 1"},
		{"inner", "matmul", nil, []spec.Tensor[spec.F32]{v(spec.Shape{2, 3}, 6), v(spec.Shape{2, 3}, 6)}, "inner dimensions"},
		{"batch", "matmul", nil, []spec.Tensor[spec.F32]{v(spec.Shape{2, 1, 3}, 6), v(spec.Shape{3, 3, 1}, 9)}, "do not broadcast"},
		{"weight rank", "linear", nil, []spec.Tensor[spec.F32]{v(spec.Shape{3}, 3), v(spec.Shape{3}, 3), v(spec.Shape{1}, 1)}, "weight"},
		{"bias", "linear", nil, []spec.Tensor[spec.F32]{v(spec.Shape{3}, 3), v(spec.Shape{2, 3}, 6), v(spec.Shape{3}, 3)}, "bias"},
		{"input", "linear", nil, []spec.Tensor[spec.F32]{v(spec.Shape{4}, 4), v(spec.Shape{2, 3}, 6), v(spec.Shape{2}, 2)}, "last axis"},
		{"axis", "reduce_sum", &spec.Attrs{Axis: 2}, []spec.Tensor[spec.F32]{v(spec.Shape{2, 3}, 6)}, "axis"},
		{"rank 0 reduce", "reduce_sum", nil, []spec.Tensor[spec.F32]{v(spec.Shape{}, 1)}, "axis"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Execute(tc.op, tc.a, tc.xs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestFastProfileSelection checks that the fast_cpu profile selects the
// fast capsules for their four ops and the reference capsules otherwise,
// that every selection binds through FastProviders, and that
// DefaultProviders (no fast_cpu provider) cannot bind a fast capsule.
func TestFastProfileSelection(t *testing.T) {
	p := backend.FastCPU()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		op, capsule string
	}{
		{"matmul", "fast_cpu.matmul"},
		{"linear", "fast_cpu.linear"},
		{"sum", "fast_cpu.sum"},
		{"reduce_sum", "fast_cpu.reduce_sum"},
		{"relu", "reference.relu"},
		{"reduce_mean", "reference.reduce_mean"},
		{"mse_loss", "reference.mse_loss"},
	}
	ps := backend.FastProviders()
	for _, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			sel, err := p.Select(tc.op)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Capsule.Name != tc.capsule || len(sel.Rejected) != 0 {
				t.Fatalf("selected %s after %v, want %s first", sel.Capsule.Name, sel.Rejected, tc.capsule)
			}
			if _, err := ps.Bind(sel.Capsule); err != nil {
				t.Fatal(err)
			}
		})
	}
	c, _ := backend.FastCPUCapsule("matmul")
	var miss *backend.MissingProviderError
	if _, err := backend.DefaultProviders().Bind(c); !errors.As(err, &miss) {
		t.Fatalf("binding %s without the fast provider: %v, want *MissingProviderError", c.Name, err)
	}
	// Every fast capsule is admissible under checked_cpu's policies too
	// (over the fast catalog), and its report line names its policy.
	checked := backend.CheckedCPU()
	checked.Catalog = backend.FastCatalog()
	for _, c := range backend.FastCPUCapsules() {
		if why := checked.Rejections(c, c.Op); why != nil {
			t.Errorf("%s rejected: %v", c.Name, why)
		}
		if want := "provider=fast_cpu trust=checked vjp=torchlean-tape reduction=implementation-defined"; !strings.Contains(c.Header(), want) {
			t.Errorf("%s header %q lacks %q", c.Name, c.Header(), want)
		}
		if c.Value.Evidence.Kind() != backend.EvidenceNumericalCertificate {
			t.Errorf("%s value evidence %s", c.Name, c.Value.Evidence.Kind())
		}
	}
	if _, err := backend.FastCPUCapsule("relu"); err == nil {
		t.Fatal("fast_cpu capsule for relu: want an error")
	}
	// A session on the fast profile runs a matmul through fast_cpu.
	s, err := backend.NewSession(backend.FastCPU(), backend.FastProviders(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := fastTensor(t, spec.Shape{2, 3}, 1)
	b := fastTensor(t, spec.Shape{3, 2}, 2)
	if _, err := s.Execute("matmul", nil, []spec.Tensor[spec.F32]{a, b}); err != nil {
		t.Fatal(err)
	}
	if got := s.Selected(); len(got) != 1 || got[0].Name != "fast_cpu.matmul" {
		t.Fatalf("selected %v", got)
	}
}
