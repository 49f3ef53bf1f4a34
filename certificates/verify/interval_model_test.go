package verify

import (
	"encoding/json"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// batchNormModel is x ↦ batch_norm_eval(x) on x of shape [1, 2] (channel
// axis 1) with μ = (0, 1), σ² = (7/4, 1/2), ε = 1/4, γ = (1, 2),
// β = (0, 1/3), at x = (1, 3): σ² + ε = (2, 3/4), so the exact output is
// (1/√2, 8/√3 + 1/3) — irrational, no model_composition certificate.
func batchNormModel(t *testing.T) *certificates.Model {
	t.Helper()
	g := &irsem.Graph{InputID: 0, OutputID: 1, Nodes: []irsem.Node{
		{ID: 0, Kind: irsem.Kind{Op: irsem.OpInput}, Parents: []int{}, Shape: spec.Shape{1, 2}},
		{ID: 1, Kind: irsem.Kind{Op: irsem.OpBatchNormEval, ChannelAxis: 1, Channels: 2}, Parents: []int{0}, Shape: spec.Shape{1, 2}},
	}}
	vec := func(a, b spec.Rat) *irsem.RatTensor {
		v, err := spec.NewTensor(spec.Shape{2}, []spec.Rat{a, b})
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	eps := spec.NewRat(1, 4)
	p := &irsem.Payload{Entries: map[int]*irsem.Params{1: {
		Mean: vec(spec.NewRat(0, 1), spec.NewRat(1, 1)), Var: vec(spec.NewRat(7, 4), spec.NewRat(1, 2)),
		Gamma: vec(spec.NewRat(1, 1), spec.NewRat(2, 1)), Beta: vec(spec.NewRat(0, 1), spec.NewRat(1, 3)), Eps: &eps,
	}}}
	x, err := spec.NewTensor(spec.Shape{1, 2}, []spec.Rat{spec.NewRat(1, 1), spec.NewRat(3, 1)})
	if err != nil {
		t.Fatal(err)
	}
	return &certificates.Model{Name: "batch norm.onnx", Graph: g, Payload: p, Input: x}
}

// encloses says, in exact arithmetic and without the interval code, that
// y = (x − μ)·γ/√s + β lies in [lo, hi] for x − μ, γ > 0: with
// t = (x − μ)·γ > 0 it is lo − β ≤ t/√s ≤ hi − β, i.e. (lo − β)² ≤ t²/s
// when lo ≤ β (trivially) or lo > β, and t²/s ≤ (hi − β)² with hi > β.
func encloses(lo, hi float64, xmu, gamma, s, beta *big.Rat) bool {
	t := new(big.Rat).Mul(xmu, gamma)
	q := new(big.Rat).Quo(new(big.Rat).Mul(t, t), s) // ((y − β))² exactly
	l := new(big.Rat).Sub(new(big.Rat).SetFloat64(lo), beta)
	h := new(big.Rat).Sub(new(big.Rat).SetFloat64(hi), beta)
	if h.Sign() <= 0 || new(big.Rat).Mul(h, h).Cmp(q) < 0 {
		return false
	}
	return l.Sign() <= 0 || new(big.Rat).Mul(l, l).Cmp(q) <= 0
}

// TestModelIntervalCertificate: a batch-norm model is certified with
// model_interval in place of model_composition (a note says why, nothing
// is skipped), FullSuite verifies the directory, and every recorded
// enclosure contains the exact output, checked by squaring in big.Rat
// (independently of the interval code) and is narrow (< 2^-40 relative).
func TestModelIntervalCertificate(t *testing.T) {
	t.Parallel()
	m := batchNormModel(t)
	s, skipped, err := certificates.ModelSuite(m, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	if n := s.Notes(); len(n) != 1 || !strings.HasPrefix(n[0], "model_interval in place of model_composition: not exact over rat: ") || !strings.Contains(n[0], "square root") {
		t.Fatalf("notes %q", n)
	}
	dir := t.TempDir()
	man, _ := certifyModel(t, m, dir, 3)
	var paths []string
	for _, f := range man.Files {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, ","); !strings.Contains(got, "adjointness/batch_norm_eval.json") || !strings.Contains(got, certificates.ModelIntervalName) || strings.Contains(got, certificates.ModelCompositionName) {
		t.Fatalf("files %s", got)
	}
	rep, err := Dir(certificates.FullSuite(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Failures(); len(f) != 0 {
		t.Fatalf("a fresh interval certificate fails: %v", f[0].Err)
	}
	if rep.Cases()[certificates.KindModelInterval] != 2 {
		t.Fatalf("cases %v, want 2 output elements", rep.Cases())
	}
	data, err := os.ReadFile(filepath.Join(dir, certificates.ModelIntervalName))
	if err != nil {
		t.Fatal(err)
	}
	var f certificates.ModelIntervalFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	r := func(p, q int64) *big.Rat { return big.NewRat(p, q) }
	want := []struct{ xmu, gamma, s, beta *big.Rat }{
		{r(1, 1), r(1, 1), r(2, 1), r(0, 1)},
		{r(2, 1), r(2, 1), r(3, 4), r(1, 3)},
	}
	if len(f.Output.Values) != len(want) {
		t.Fatalf("%d output enclosures", len(f.Output.Values))
	}
	for i, w := range want {
		iv, err := f.Output.Values[i].Decode(certificates.ModelIntervalName, "v")
		if err != nil {
			t.Fatal(err)
		}
		if !encloses(iv.Lo, iv.Hi, w.xmu, w.gamma, w.s, w.beta) {
			t.Errorf("element %d: [%v, %v] does not contain the exact output", i, iv.Lo, iv.Hi)
		}
		if iv.Hi-iv.Lo > math.Abs(iv.Hi)*0x1p-40 {
			t.Errorf("element %d: [%v, %v] is not narrow", i, iv.Lo, iv.Hi)
		}
	}
}

// TestModelIntervalTamper: every edit of a recorded bound is rejected —
// a narrowed one (the claim no longer contains the evaluation: "does not
// contain"), a widened one by one ulp ("wider than"), one that is not an
// interval, a changed payload (graph_hash), an output of another shape —
// directly and through verify of the directory with the manifest's hash
// recomputed, so that only the interval verifier can catch it.
func TestModelIntervalTamper(t *testing.T) {
	t.Parallel()
	m := batchNormModel(t)
	good, err := certificates.ProduceModelInterval(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verifyModelInterval(certificates.ModelIntervalName, good); err != nil {
		t.Fatalf("the fresh certificate fails: %v", err)
	}
	bits := func(v float64) string { return certificates.IntervalEnclosure(spec.Interval{Lo: v, Hi: v}).Lo }
	iv0, _ := good.Output.Values[0].Decode("", "")
	edit := func(f func(*certificates.ModelIntervalFile)) *certificates.ModelIntervalFile {
		c := *good
		c.Output.Values = append([]certificates.Enclosure{}, good.Output.Values...)
		f(&c)
		return &c
	}
	cases := []struct {
		name, field, want string
		f                 *certificates.ModelIntervalFile
	}{
		{"narrowed lo", "output.values[0]", "does not contain", edit(func(c *certificates.ModelIntervalFile) { c.Output.Values[0].Lo = c.Output.Values[0].Hi })},
		{"narrowed hi", "output.values[1]", "does not contain", edit(func(c *certificates.ModelIntervalFile) { c.Output.Values[1].Hi = c.Output.Values[1].Lo })},
		{"widened hi", "output.values[0]", "wider than", edit(func(c *certificates.ModelIntervalFile) { c.Output.Values[0].Hi = bits(math.Nextafter(iv0.Hi, 2)) })},
		{"not an interval", "output.values[0]", "not an interval", edit(func(c *certificates.ModelIntervalFile) { c.Output.Values[0].Lo = bits(math.NaN()) })},
		{"payload", "graph_hash", "hash to", edit(func(c *certificates.ModelIntervalFile) {
			c.Payload = json.RawMessage(strings.Replace(string(c.Payload), `"7/4"`, `"3/4"`, 1))
		})},
		{"shape", "output.shape", "output has shape", edit(func(c *certificates.ModelIntervalFile) { c.Output.Shape = []int{2} })},
	}
	for _, c := range cases {
		_, err := verifyModelInterval(certificates.ModelIntervalName, c.f)
		if err == nil || !strings.Contains(err.Error(), certificates.ModelIntervalName+": field "+c.field+":") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a failure at field %s saying %q", c.name, err, c.field, c.want)
		}
	}
	// Through verify: the one bound edited in the file's bytes, the
	// manifest's hash recomputed.
	dir := t.TempDir()
	certifyModel(t, m, dir, 3)
	lo0 := good.Output.Values[0].Lo
	rewrite(t, dir, certificates.ModelIntervalName, replaceOnce(t, `"lo": "`+lo0+`"`, `"lo": "`+bits(math.Nextafter(iv0.Lo, 2))+`"`))
	rep, err := Dir(certificates.FullSuite(), dir)
	if err != nil {
		t.Fatal(err)
	}
	fails := rep.Failures()
	if len(fails) != 1 || fails[0].Path != certificates.ModelIntervalName || !strings.Contains(fails[0].Err.Error(), "field output.values[0]: element (0, 0)") {
		t.Fatalf("an edited bound: failures %v", fails)
	}
}
