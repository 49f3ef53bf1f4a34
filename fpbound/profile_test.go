package fpbound

import (
	"bufio"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// unaryGraph is in → op over a vector of binary32 inputs.
func unaryGraph(t testing.TB, op irsem.Op, xs []float32) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	t.Helper()
	b := newBuilder(spec.Shape{len(xs)})
	b.node(irsem.Kind{Op: op}, spec.Shape{len(xs)}, 0)
	in := irsem.RatTensor{Shape: spec.Shape{len(xs)}, Data: make([]spec.Rat, len(xs))}
	for i, x := range xs {
		v, err := spec.RatFromFloat64(float64(x))
		if err != nil {
			t.Fatal(err)
		}
		in.Data[i] = v
	}
	return b.g, b.p, in
}

func verdicts(t testing.TB, op irsem.Op, xs, rec []float32, o Options) []Verdict {
	t.Helper()
	g, p, in := unaryGraph(t, op, xs)
	res, err := Compare(g, p, in, rec, o)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Verdict, len(res.Elements))
	for i, el := range res.Elements {
		out[i] = el.Verdict
	}
	return out
}

// TestProfileSigmoid: ONNX Runtime's sigmoid at x = −20 records 0 (exact
// 2.06·10⁻⁹): it fails under ieee and holds under onnxruntime-cpu, where
// 10⁻³ off and 10⁻⁶ off (no profile's term) still fail; PyTorch's
// 1/(1+e^−x) at x = −100 records 0: fails under ieee, holds under
// pytorch-cpu.
func TestProfileSigmoid(t *testing.T) {
	s20 := float32(1 / (1 + math.Exp(20)))
	cases := []struct {
		profile string
		x, rec  float32
		want    Verdict
	}{
		{"", -20, 0, Fails},
		{ProfileIEEE, -20, 0, Fails},
		{ProfileIEEE, -20, s20, Holds},
		{"onnxruntime-cpu", -20, 0, Holds},
		{"onnxruntime-cpu", -20, s20, Holds},
		{"onnxruntime-cpu", -20, 1e-3, Fails},
		{"onnxruntime-cpu", -20, s20 + 1e-6, Fails},
		{"onnxruntime-cpu", -3.5, 0.0293122, Holds},
		{"onnxruntime-cpu", 2, 0.5, Fails},
		{"pytorch-cpu", -20, 1e-3, Fails},
		{ProfileIEEE, -100, 0, Fails},
		{"pytorch-cpu", -100, 0, Holds},
		{"pytorch-cpu", -20, 0, Fails},
	}
	for _, c := range cases {
		got := verdicts(t, irsem.OpSigmoid, []float32{c.x}, []float32{c.rec}, Options{Profile: c.profile})
		if got[0] != c.want {
			t.Errorf("profile %q: sigmoid(%g) recorded %g: %v, want %v", c.profile, c.x, c.rec, got[0], c.want)
		}
	}
}

// TestProfileUnknown: an unknown profile is an error, and every name of
// Profiles is accepted.
func TestProfileUnknown(t *testing.T) {
	g, p, in := unaryGraph(t, irsem.OpSigmoid, []float32{1})
	if _, err := Bounds(g, p, in, Options{Profile: "glibc"}); err == nil || !strings.Contains(err.Error(), "unknown profile") {
		t.Errorf("unknown profile: err = %v", err)
	}
	for _, name := range Profiles() {
		if _, err := SharpBounds(g, p, in, Options{Profile: name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestProfileGradAndDeep: under every profile the sigmoids of hidden
// layers are bounded in a whole network (classic and first-order) and the
// f32 evaluation holds, and GradErr accepts the profile.
func TestProfileGradAndDeep(t *testing.T) {
	g, p, x := mlp(3, 8, 16, 2, 4, irsem.OpSigmoid)
	rec := f32Out(t, g, p, x)
	for _, name := range Profiles() {
		res, err := Compare(g, p, x, rec, Options{Profile: name})
		if err != nil {
			t.Fatal(err)
		}
		if res.Holds != len(rec) {
			t.Errorf("%s: %d of %d hold", name, res.Holds, len(rec))
		}
	}
	ieee, err := Bounds(g, p, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ort, err := Bounds(g, p, x, Options{Profile: "onnxruntime-cpu"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ieee {
		// The library sigmoid is bounded by its own rule (¼-Lipschitz), not
		// by the registry's formula: another finite bound.
		if math.IsInf(ort[i].Bound, 1) || ort[i].Bound == ieee[i].Bound {
			t.Errorf("element %d: the onnxruntime-cpu bound %g, ieee's %g", i, ort[i].Bound, ieee[i].Bound)
		}
	}
	seed := irsem.RatTensor{Shape: spec.Shape{4}, Data: make([]spec.Rat, 4)}
	for i := range seed.Data {
		seed.Data[i] = spec.Rat{}.FromInt(1)
	}
	if _, _, _, err := GradErr(g, p, x, seed, Options{Profile: "onnxruntime-cpu"}); err != nil {
		t.Fatal(err)
	}
}

// ortFixture reads fpbound/testdata/ort_cpu_elementary.txt (written by
// tools/ort_profile_fixture.py): per op, ONNX Runtime's inputs and
// outputs.
func ortFixture(t testing.TB) map[string][2][]float32 {
	t.Helper()
	f, err := os.Open("testdata/ort_cpu_elementary.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][2][]float32{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		w := strings.Fields(line)
		if len(w) != 3 {
			t.Fatalf("bad fixture line %q", line)
		}
		a, err1 := strconv.ParseUint(w[1], 0, 32)
		b, err2 := strconv.ParseUint(w[2], 0, 32)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad fixture line %q", line)
		}
		e := out[w[0]]
		e[0] = append(e[0], math.Float32frombits(uint32(a)))
		e[1] = append(e[1], math.Float32frombits(uint32(b)))
		out[w[0]] = e
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestProfileORTFixture: every output ONNX Runtime recorded on the grid
// holds under onnxruntime-cpu; sigmoid's fails somewhere under ieee and
// under a planted profile whose absolute term is too small.
func TestProfileORTFixture(t *testing.T) {
	fx := ortFixture(t)
	ops := map[string]irsem.Op{"sigmoid": irsem.OpSigmoid, "tanh": irsem.OpTanh, "exp": irsem.OpExp, "erf": irsem.Op("erf")}
	if len(fx) != len(ops) {
		t.Fatalf("fixture has ops %v", fx)
	}
	count := func(vs []Verdict, v Verdict) int {
		n := 0
		for _, w := range vs {
			if w == v {
				n++
			}
		}
		return n
	}
	for name, op := range ops {
		xs, ys := fx[name][0], fx[name][1]
		vs := verdicts(t, op, xs, ys, Options{Profile: "onnxruntime-cpu"})
		for i, v := range vs {
			if v != Holds {
				t.Errorf("%s(%g) = %g recorded by ONNX Runtime: %v under onnxruntime-cpu", name, xs[i], ys[i], v)
			}
		}
	}
	xs, ys := fx["sigmoid"][0], fx["sigmoid"][1]
	if n := count(verdicts(t, irsem.OpSigmoid, xs, ys, Options{}), Fails); n == 0 {
		t.Error("ieee: no recorded ONNX Runtime sigmoid fails")
	}
	planted := &profile{name: "planted", fns: map[string]libErr{"sigmoid": {library: true, abs: 1e-8}}}
	profiles = append(profiles, planted)
	defer func() { profiles = profiles[:len(profiles)-1] }()
	if n := count(verdicts(t, irsem.OpSigmoid, xs, ys, Options{Profile: "planted"}), Fails); n == 0 {
		t.Error("a profile with absolute term 1e-8 explains every recorded ONNX Runtime sigmoid")
	}
}

// fma32 is the binary32 fused multiply-add a·b + c, rounded once: a·b is
// exact in float64, TwoSum gives a·b + c = s + t exactly, and s + t rounds
// to binary32 as s does unless s is the midpoint of two binary32 values,
// where t's sign decides.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	bb := s - p
	t := (p - (s - bb)) + (float64(c) - bb)
	r := float32(s)
	if float64(r) == s || t == 0 {
		return r
	}
	lo, hi := r, r
	if float64(r) < s {
		hi = math.Nextafter32(r, float32(math.Inf(1)))
	} else {
		lo = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	if (float64(lo)+float64(hi))/2 != s {
		return r
	}
	if t > 0 {
		return hi
	}
	return lo
}

// mlasLogistic is MlasLogisticKernel (onnxruntime/core/mlas/lib/
// logistic.cpp) in binary32, each multiply-add fused or not.
func mlasLogistic(x float32, fused bool) float32 {
	ma := func(a, b, c float32) float32 {
		if fused {
			return fma32(a, b, c)
		}
		return float32(a*b) + c // the conversion forbids fusion
	}
	v := min(max(x, -18), 18)
	v2 := v * v
	p := ma(v2, 4.37031012579801e-11, 1.15627324459942e-07)
	p = ma(p, v2, 6.08574864600143e-05)
	p = ma(p, v2, 8.51377133304701e-03)
	p = ma(p, v2, 2.48287947061529e-01)
	p = p * v
	q := ma(v2, 6.10247389755681e-13, 5.76102136993427e-09)
	q = ma(q, v2, 6.29106785017040e-06)
	q = ma(q, v2, 1.70198817374094e-03)
	q = ma(q, v2, 1.16817656904453e-01)
	q = ma(q, v2, 9.93151921023180e-01)
	return min(max(p/q+0.5, 0), 1)
}

func sigmoid64(x float64) float64 {
	if x < 0 {
		e := math.Exp(x)
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(-x))
}

// TestMLASLogistic derives mlasLogisticAbs: it runs MLAS's logistic
// kernel, with and without FMA, on binary32 inputs of [−18, 18] and on the
// clamped tails, and checks |MLAS(x) − σ(x)| stays below the profile's term
// (σ in float64, within 10⁻¹⁵: the margin). By default it samples every
// 997th bit pattern; with TLCHECK_MLAS_EXHAUSTIVE=1 it runs every input of
// magnitude in [2^-20, 18] (a few minutes). Below 2^-20 no input needs
// running: there |p/q| < 2^-21, p/q is within a few u of x·α₁/β₀ and
// α₁/β₀ within 10⁻⁷ of ¼, σ(x) within |x|³/48 of ½ + x/4, and adding ½
// rounds by at most 2^-25, so |MLAS(x) − σ(x)| < 2^-24. It also checks
// the emulation against the outputs ONNX Runtime recorded.
func TestMLASLogistic(t *testing.T) {
	start, stride := uint32(0), uint32(997)
	if os.Getenv("TLCHECK_MLAS_EXHAUSTIVE") == "1" {
		start, stride = math.Float32bits(0x1p-20), 1
	}
	type worst struct {
		d float64
		x float32
	}
	run := func(from, to uint32) worst {
		w := worst{}
		for b := from; b < to; b += stride {
			for _, x := range []float32{math.Float32frombits(b), -math.Float32frombits(b)} {
				sig := sigmoid64(float64(x))
				for _, fused := range []bool{false, true} {
					if d := math.Abs(float64(mlasLogistic(x, fused)) - sig); d > w.d {
						w = worst{d, x}
					}
				}
			}
		}
		return w
	}
	end := math.Float32bits(18) + 1
	parts := max(runtime.GOMAXPROCS(0), 1)
	res := make(chan worst, parts)
	span := (end - start) / uint32(parts)
	span -= span % stride
	for i := 0; i < parts; i++ {
		from, to := start+uint32(i)*span, start+uint32(i+1)*span
		if i == parts-1 {
			to = end
		}
		go func() { res <- run(from, to) }()
	}
	w := worst{}
	for i := 0; i < parts; i++ {
		if r := <-res; r.d > w.d {
			w = r
		}
	}
	worstD, at := w.d, w.x
	check := func(x float32, sig float64) {
		for _, fused := range []bool{false, true} {
			if d := math.Abs(float64(mlasLogistic(x, fused)) - sig); d > worstD {
				worstD, at = d, x
			}
		}
	}
	check(18, sigmoid64(18))
	check(-18, sigmoid64(-18))
	// The tails: MLAS(x) = MLAS(±18) while σ(x) ranges over (0, σ(−18)]
	// and [σ(18), 1).
	check(-19, 0)
	check(19, 1)
	t.Logf("largest |MLAS − σ| %.6g at x = %g (stride %d)", worstD, at, stride)
	if worstD+1e-15 > mlasLogisticAbs {
		t.Errorf("|MLAS − σ| reaches %g at x = %g, above the profile's %g", worstD, at, mlasLogisticAbs)
	}
	fx := ortFixture(t)["sigmoid"]
	for i, x := range fx[0] {
		if y := fx[1][i]; y != mlasLogistic(x, true) && y != mlasLogistic(x, false) {
			t.Errorf("ONNX Runtime's sigmoid(%g) = %g, the emulation %g (FMA) / %g", x, y, mlasLogistic(x, true), mlasLogistic(x, false))
		}
	}
}

// TestProfileLibrarySigmoidDecides: a sigmoid whose argument's hull
// straddles 0 is Inconclusive under ieee (the registry's sign split is
// undecided) and decided under a profile whose sigmoid is a library
// function, which has no branch.
func TestProfileLibrarySigmoidDecides(t *testing.T) {
	one, _ := spec.RatFromFloat64(1)
	near, _ := spec.RatFromFloat64(-1 + 0x1p-23)
	b := newBuilder(spec.Shape{2})
	l := b.linear(0, irsem.RatTensor{Shape: spec.Shape{1, 2}, Data: []spec.Rat{one, one}}, irsem.RatTensor{Shape: spec.Shape{1}, Data: []spec.Rat{{}}})
	b.node(irsem.Kind{Op: irsem.OpSigmoid}, spec.Shape{1}, l)
	in := irsem.RatTensor{Shape: spec.Shape{2}, Data: []spec.Rat{one, near}}
	rec := f32Out(t, b.g, b.p, in)
	for _, c := range []struct {
		profile string
		want    Verdict
	}{{ProfileIEEE, Inconclusive}, {"onnxruntime-cpu", Holds}, {"pytorch-cpu", Holds}} {
		res, err := Compare(b.g, b.p, in, rec, Options{Profile: c.profile})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Elements[0].Verdict; got != c.want {
			t.Errorf("%s: %v (%s), want %v", c.profile, got, res.Elements[0].Reason, c.want)
		}
	}
}
