package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/par"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// fullOptions is a small full-suite run: every kind, two refinement ops.
var fullOptions = certificates.Options{Seed: 11, Cases: 3, Ops: []string{"mul", "sum", "matmul"}}

func certifyFull(t *testing.T, dir string, s *certificates.Suite, o certificates.Options) *certificates.Manifest {
	t.Helper()
	m, err := s.Certify(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFullCertifyVerify: every kind certifies and verifies, the case
// counts add up, and Subjects predicts the progress steps.
func TestFullCertifyVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := fullOptions
	steps := 0
	o.Progress = func() { steps++ }
	s := certificates.FullSuite()
	m := certifyFull(t, dir, s, o)
	if want := s.Subjects(o); steps != want {
		t.Fatalf("%d progress steps, Subjects says %d", steps, want)
	}
	kinds := map[string]int{}
	for _, e := range m.Files {
		kinds[e.Kind]++
	}
	// 3 adjointness, 1 composition, 2 providers × {sum, matmul}, 2 examples.
	if kinds[certificates.KindAdjointness] != 3 || kinds[certificates.KindComposition] != 1 || kinds[certificates.KindRefinement] != 4 || kinds[certificates.KindRange] != 2 || len(m.Files) != 10 {
		t.Fatalf("files per kind %v", kinds)
	}
	if steps != len(m.Files) {
		t.Fatalf("%d steps for %d files", steps, len(m.Files))
	}
	rep, err := Dir(certificates.FullSuite(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Failures(); len(f) != 0 {
		t.Fatalf("fresh certificates fail: %v", f[0].Err)
	}
	c := rep.Cases()
	// range counts one case per node: quad has 5 nodes, mlp 4.
	if c[certificates.KindAdjointness] != 9 || c[certificates.KindComposition] != 3 || c[certificates.KindRefinement] != 12 || c[certificates.KindRange] != 9 {
		t.Fatalf("cases %v", c)
	}
	// The adjointness-only suite does not know the new kinds: the 7 files
	// of the other kinds fail, and so does the manifest's kinds list.
	rep, _ = Dir(certificates.NewSuite(), dir)
	if len(rep.Failures()) != 8 {
		t.Fatalf("NewSuite: %d failures, want 8 (7 files of unknown kinds, the manifest's kinds)", len(rep.Failures()))
	}
}

// TestFullDefaults: the default run covers both providers, every refine
// op and both examples, and fails on an unknown provider.
func TestFullDefaults(t *testing.T) {
	t.Parallel()
	s := certificates.FullSuite()
	o := certificates.Options{Seed: 1, Cases: 1}
	if got, want := s.Subjects(o), len(spec.Infos())+1+2*len(refine.Ops())+2; got != want {
		t.Fatalf("Subjects %d, want %d", got, want)
	}
	if got := s.Subjects(certificates.Options{Cases: 1, Ops: []string{"linear"}, Providers: []string{"fast_cpu"}}); got != 1+1+1+2 {
		t.Fatalf("Subjects with one op and provider: %d", got)
	}
	if _, err := s.Certify(t.TempDir(), certificates.Options{Seed: 1, Cases: 1, Ops: []string{"sum"}, Providers: []string{"cuda"}}); err == nil || !strings.Contains(err.Error(), "unknown provider") {
		t.Fatalf("unknown provider: %v", err)
	}
}

// TestEveryNumberEditRejectedNewKinds edits every number of every
// composition, refinement and range certificate, one at a time, and
// checks that the kind's verifier itself (not only the manifest's
// SHA-256) rejects the edit with a FieldError naming the file. Seven
// cases per file reach every refinement input kind (NaN/∞ and overflow
// included) and every rule; sum and matmul keep the run short.
func TestEveryNumberEditRejectedNewKinds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow")
	}
	dir := t.TempDir()
	s := certificates.FullSuite()
	m := certifyFull(t, dir, s, certificates.Options{Seed: 0, Cases: 7, Ops: []string{"sum", "matmul"}})
	edits := map[string]int{}
	rules := map[string]bool{}
	// Every (file, number) edit is independent: they are verified on a
	// worker pool, and the first undetected edit in file and byte order
	// is reported.
	type edit struct {
		e    certificates.FileEntry
		orig []byte
		loc  []int
	}
	var all []edit
	for _, e := range m.Files {
		if e.Kind == certificates.KindAdjointness {
			continue // TestEveryNumberEditRejected
		}
		orig, err := os.ReadFile(filepath.Join(dir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []string{"bit-exact", "bound", "class", "overflow"} {
			rules[r] = rules[r] || bytes.Contains(orig, []byte(`"rule": "`+r+`"`))
		}
		if _, err := verifyData(newChecker(s).verifiers[e.Kind], e.Path, e.Kind, orig, m); err != nil {
			t.Fatalf("%s: unedited file fails: %v", e.Path, err)
		}
		for i, loc := range numberRE.FindAllIndex(orig, -1) {
			if i%editStride() == 0 {
				all = append(all, edit{e, orig, loc})
			}
			edits[e.Kind]++
		}
	}
	_, err := par.MapErr(len(all), 0, func(k int) (struct{}, error) {
		e, orig, loc := all[k].e, all[k].orig, all[k].loc
		mod := append([]byte(nil), orig...)
		d := mod[loc[1]-1]
		mod[loc[1]-1] = '0' + (d-'0'+1)%10
		_, err := verifyData(newChecker(s).verifiers[e.Kind], e.Path, e.Kind, mod, m)
		var fe *certificates.FieldError
		if err == nil {
			return struct{}{}, fmt.Errorf("%s: editing the number at byte %d (%q, context %q) went undetected", e.Path, loc[0], orig[loc[0]:loc[1]], context(orig, loc))
		}
		if !errors.As(err, &fe) || fe.File != e.Path {
			return struct{}{}, fmt.Errorf("%s: failure does not name the file: %v", e.Path, err)
		}
		return struct{}{}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{certificates.KindComposition, certificates.KindRefinement, certificates.KindRange} {
		if edits[k] < 100 {
			t.Fatalf("only %d numbers edited in %s certificates", edits[k], k)
		}
	}
	if len(rules) != 4 || !rules["bit-exact"] || !rules["bound"] || !rules["class"] || !rules["overflow"] {
		t.Fatalf("refinement rules covered: %v", rules)
	}
	t.Logf("edits per kind: %v", edits)
}

// raceStride is 1 outside the race detector. Under the race detector it
// is 16: every 16th number of every file, the first included, so every
// file and every verifier still runs edited inputs on the worker pool,
// concurrently, which is what the race detector needs to see; every
// edit's verdict is decided by CI's TLCHECK_EXHAUSTIVE run (editStride).
func raceStride() int {
	if raceEnabled {
		return 16
	}
	return 1
}

func context(b []byte, loc []int) string {
	lo, hi := max(loc[0]-60, 0), min(loc[1]+20, len(b))
	return string(b[lo:hi])
}

// TestNumberEditsThroughVerify: a sample of edits through the whole
// directory verification fails naming the file and a field.
func TestNumberEditsThroughVerify(t *testing.T) {
	t.Parallel()
	m := certifyFull(t, t.TempDir(), certificates.FullSuite(), fullOptions)
	// One parallel subtest per file, each on its own directory.
	for _, e := range m.Files {
		if e.Kind == certificates.KindAdjointness {
			continue
		}
		t.Run(e.Path, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			certifyFull(t, dir, certificates.FullSuite(), fullOptions)
			path := filepath.Join(dir, e.Path)
			orig, _ := os.ReadFile(path)
			locs := numberRE.FindAllIndex(orig, -1)
			for k := 0; k < len(locs); k += max(len(locs)/7, 1) {
				loc := locs[k]
				mod := append([]byte(nil), orig...)
				mod[loc[1]-1] = '0' + (mod[loc[1]-1]-'0'+1)%10
				os.WriteFile(path, mod, 0o644)
				rep, err := Dir(certificates.FullSuite(), dir)
				if err != nil {
					t.Fatal(err)
				}
				fails := rep.Failures()
				var fe *certificates.FieldError
				if len(fails) != 1 || !errors.As(fails[0].Err, &fe) || fe.File != e.Path || fe.Field == "" {
					t.Fatalf("%s: edit at byte %d: failures %v", e.Path, loc[0], fails)
				}
			}
		})
	}
}

// faultySet returns providers whose fast_cpu flips bit 16 of output
// element 0 of op.
func faultySet(t *testing.T, op string) *backend.Providers {
	t.Helper()
	bad, err := refine.NewFlipBit(backend.NewFastCPUProvider(), op, 0, 16)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := backend.NewProviders(backend.NewReferenceProvider(nil), bad)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestPlantedProviderBug: one wrong bit in a fast-provider result, beyond
// the bound, is caught by certify, by verify (re-execution), and by the
// verifier's own bound check on a certificate that records the faulty
// output.
func TestPlantedProviderBug(t *testing.T) {
	t.Parallel()
	o := certificates.Options{Seed: 5, Cases: 4, Ops: []string{"sum"}, Providers: []string{"fast_cpu"}}
	ps := faultySet(t, "sum")

	// certify fails, naming op, provider and element, and leaves its
	// directory empty (a next run may replace it).
	failed := t.TempDir()
	_, err := certificates.FullSuiteWith(ps).Certify(failed, o)
	if err == nil {
		t.Fatal("certify accepted a faulty provider")
	}
	if es, _ := os.ReadDir(failed); len(es) != 0 {
		t.Errorf("a failed certify left %d entries", len(es))
	}
	for _, w := range []string{"sum", "fast_cpu", "element 0", "exceeds the bound"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("certify error lacks %q: %v", w, err)
		}
	}

	// verify of honest certificates re-executes the faulty provider.
	dir := t.TempDir()
	certifyFull(t, dir, certificates.FullSuite(), o)
	rep, err := Dir(certificates.FullSuiteWith(ps), dir)
	if err != nil {
		t.Fatal(err)
	}
	fails := rep.Failures()
	if len(fails) != 1 || fails[0].Path != "refinement/fast_cpu.sum.json" {
		t.Fatalf("failures %v", fails)
	}
	var fe *certificates.FieldError
	if !errors.As(fails[0].Err, &fe) || fe.Field != "cases[0].output.bits[0]" || !strings.Contains(fe.Msg, "element 0") {
		t.Fatalf("re-execution failure: %v", fails[0].Err)
	}

	// A certificate that records the faulty output (produced with the
	// failure allowed) is rejected by the verifier's own bound check.
	env := refinementEnv{providers: ps}
	f, err := certificates.ProduceUncheckedRefinement(ps, "fast_cpu", "sum", o.Cases, o.Seed)
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.verify("refinement/fast_cpu.sum.json", f, &certificates.Manifest{Seed: o.Seed, Cases: o.Cases})
	if !errors.As(err, &fe) || fe.File != "refinement/fast_cpu.sum.json" || fe.Field != "cases[0].elements[0].error" {
		t.Fatalf("bound check: %v", err)
	}
	for _, w := range []string{"exceeds the bound", "op sum", "provider fast_cpu", "element 0"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("verify error lacks %q: %v", w, err)
		}
	}

	// A fixed-left capsule with a one-ulp fault fails the bit-exact rule.
	bad, _ := refine.NewFlipBit(backend.NewReferenceProvider(nil), "sum", 0, 0)
	ref, _ := backend.NewProviders(bad, backend.NewFastCPUProvider())
	env = refinementEnv{providers: ref}
	f, err = certificates.ProduceUncheckedRefinement(ref, "reference", "sum", o.Cases, o.Seed)
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.verify("refinement/reference.sum.json", f, &certificates.Manifest{Seed: o.Seed, Cases: o.Cases})
	if !errors.As(err, &fe) || fe.Field != "cases[0].output.bits[0]" || !strings.Contains(err.Error(), "bit for bit") {
		t.Fatalf("bit-exact check: %v", err)
	}
}

// TestTamperedInlineGraph: a graph edited inside a composition or range
// certificate is rejected — by its hash, and, when the hash is updated to
// match, by regeneration from the seed or by the shipped example.
func TestTamperedInlineGraph(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := certifyFull(t, dir, certificates.FullSuite(), fullOptions)
	s := certificates.FullSuite()
	check := func(rel, kind, wantField, wantMsg string, mutate func([]byte) []byte) {
		t.Helper()
		b, _ := os.ReadFile(filepath.Join(dir, rel))
		_, err := verifyData(newChecker(s).verifiers[kind], rel, kind, mutate(b), m)
		var fe *certificates.FieldError
		if !errors.As(err, &fe) || fe.File != rel || fe.Field != wantField || !strings.Contains(fe.Msg, wantMsg) {
			t.Errorf("%s: want field %s (%q), got %v", rel, wantField, wantMsg, err)
		}
	}
	// Decode, change a node, re-encode canonically: the hash no longer
	// matches; with the hash updated, the seed generates another graph.
	retag := func(at string, fixHash bool) func([]byte) []byte {
		return func(b []byte) []byte {
			var v map[string]json.RawMessage
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			obj := v
			var cases []map[string]json.RawMessage
			if at != "" {
				json.Unmarshal(v["cases"], &cases)
				obj = cases[0]
			}
			g, err := irsem.DecodeGraph(obj["graph"])
			if err != nil {
				t.Fatal(err)
			}
			p, _ := irsem.DecodePayload(obj["payload"])
			out := g.Nodes[g.OutputID]
			g.Nodes = append(g.Nodes, irsem.Node{ID: len(g.Nodes), Kind: irsem.Kind{Op: irsem.OpAbs}, Parents: []int{out.ID}, Shape: out.Shape.Clone()})
			g.OutputID = len(g.Nodes) - 1
			doc, err := irsem.EncodeGraph(g)
			if err != nil {
				t.Fatal(err)
			}
			obj["graph"] = doc
			if fixHash {
				h, _ := irsem.GraphHash(g, p)
				obj["graph_hash"], _ = json.Marshal(h)
			}
			if at != "" {
				v["cases"], _ = json.Marshal(cases)
			}
			// Keep the certificate's field order: re-encode through the
			// typed file structures.
			var o []byte
			if at != "" {
				var f certificates.CompositionFile
				raw, _ := json.Marshal(v)
				if err := json.Unmarshal(raw, &f); err != nil {
					t.Fatal(err)
				}
				o, _ = certificates.Encode(&f)
			} else {
				var f certificates.RangeFile
				raw, _ := json.Marshal(v)
				if err := json.Unmarshal(raw, &f); err != nil {
					t.Fatal(err)
				}
				o, _ = certificates.Encode(&f)
			}
			return o
		}
	}
	check(certificates.CompositionName, certificates.KindComposition, "cases[0].graph_hash", "hash to", retag("cases", false))
	check(certificates.CompositionName, certificates.KindComposition, "cases[0].graph", "case seed generates", retag("cases", true))
	check("range/quad.json", certificates.KindRange, "graph_hash", "hash to", retag("", false))
	check("range/quad.json", certificates.KindRange, "graph", "shipped example", retag("", true))
	// A string outside the safe alphabet inside the inline graph.
	check(certificates.CompositionName, certificates.KindComposition, "cases[0].graph", "safe-alphabet", func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"kind": "input"`), []byte(`"kind": "input$(id)"`), 1)
	})
	// A non-canonical (but equivalent) inline document.
	check("range/mlp.json", certificates.KindRange, "payload", "canonical", func(b []byte) []byte {
		return regexp.MustCompile(`"1/2"`).ReplaceAll(b, []byte(`"2/4"`))
	})
	// Truncated inline graph.
	check(certificates.CompositionName, certificates.KindComposition, "", "truncated", func(b []byte) []byte { return b[:len(b)*2/3] })
}

// TestDualJVPDetach: on the quad-detach example, forward evaluation over
// dual numbers must drop the tangent at detach. irsem.DenoteAll over duals
// does not (its detach is the identity), which is why dualJVP evaluates
// node by node; the result agrees with the tape's VJP.
func TestDualJVPDetach(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../examples/quad-detach.ir.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := irsem.DecodeGraph(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := certificates.PayloadOrEmpty(nil)
	x := spec.Tensor[spec.Rat]{Shape: spec.Shape{2}, Data: []spec.Rat{spec.NewRat(3, 1), spec.NewRat(-3, 2)}}
	dx := spec.Tensor[spec.Rat]{Shape: spec.Shape{2}, Data: []spec.Rat{spec.NewRat(1, 1), spec.NewRat(1, 1)}}
	one := spec.Tensor[spec.Rat]{Shape: spec.Shape{}, Data: []spec.Rat{spec.NewRat(1, 1)}}
	jv, err := dualJVP(g, p, x, dx)
	if err != nil {
		t.Fatal(err)
	}
	// d/dx Σ(x⊙x + detach(x⊙x)) = 2x, so ⟨J dx, 1⟩ = 2·3 + 2·(−3/2) = 3
	// (differentiating through detach would give 6).
	if !jv.Data[0].Same(spec.NewRat(3, 1)) {
		t.Fatalf("dual JVP %s, want 3", jv.Data[0])
	}
	vj, err := certificates.TapeVJP(g, p, x, one)
	if err != nil {
		t.Fatal(err)
	}
	rhs, _ := spec.Dot(dx, vj)
	if !rhs.Same(jv.Data[0]) {
		t.Fatalf("tape VJP side %s", rhs)
	}
	type D = spec.Dual[spec.Rat]
	in := spec.Tensor[D]{Shape: x.Shape, Data: []D{spec.MakeDual(x.Data[0], dx.Data[0]), spec.MakeDual(x.Data[1], dx.Data[1])}}
	den, err := irsem.DenoteAll(g, p, in)
	if err != nil {
		t.Fatal(err)
	}
	if den[g.OutputID].Data[0].Du.Same(jv.Data[0]) {
		t.Fatal("DenoteAll over duals stops the tangent at detach: dualJVP's special case is no longer needed")
	}
}

// TestBinary32Value checks the verifier's own binary32 decoder against
// the float conversion on special encodings.
func TestBinary32Value(t *testing.T) {
	t.Parallel()
	for _, u := range []uint32{0, 1 << 31, 1, 0x007fffff, 0x00800000, 0x3f800000, 0xbf800001, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc01234} {
		v, ok := binary32Value(u)
		f := float64(math.Float32frombits(u))
		want, err := spec.RatFromFloat64(f)
		if ok != (err == nil) {
			t.Fatalf("0x%08x: finite %v, conversion error %v", u, ok, err)
		}
		if ok && v.Cmp(want.Big()) != 0 {
			t.Fatalf("0x%08x: %s, want %s", u, v.RatString(), want)
		}
	}
	g, _ := gammaOf(29)
	rg, _ := refine.Gamma(29)
	if g.Cmp(rg) != 0 {
		t.Fatalf("γ_29 %s, refine %s", g, rg)
	}
	b := boundOf(g, 7, big.NewRat(1, 1))
	rb, _ := refine.ElementBound(29, 7, big.NewRat(1, 1))
	if b.Cmp(rb) != 0 {
		t.Fatalf("bound %s, refine %s", b, rb)
	}
	if _, err := gammaOf(1<<23 + 1); err == nil {
		t.Fatal("γ beyond 2^23 accepted")
	}
}
