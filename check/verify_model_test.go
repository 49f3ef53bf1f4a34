package check

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/certificates/verify"
	"github.com/tlcheck/tlcheck/model"
)

// modelFixture writes the example MLP's graph, payload and input into a
// fresh directory, and beside them the same payload with one weight
// changed (W[0][0] = 1/2 becomes 3/2: the first value of the payload, the
// edit made on the text, not through the code under test) and the same
// graph with a trailing space (the same graph, other bytes).
func modelFixture(t *testing.T) (orig, weight, spaced model.Spec) {
	t.Helper()
	dir := t.TempDir()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	g, p, x := read("mlp.ir.json"), read("mlp.payload.json"), read("mlp.input.json")
	const first = `"W":{"shape":[8,2],"values":["1/2",`
	if !strings.Contains(p, first) {
		t.Fatal("fixture: the payload's first weight is not 1/2")
	}
	gp, pp, xp := write("g.json", g), write("p.json", p), write("x.json", x)
	orig = model.Spec{Cmd: "verify", Graph: gp, Payload: pp, Inputs: []string{xp}}
	weight = orig
	weight.Payload = write("p-weight.json", strings.Replace(p, first, `"W":{"shape":[8,2],"values":["3/2",`, 1))
	spaced = orig
	spaced.Graph = write("g-spaced.json", g+" ")
	return orig, weight, spaced
}

// certifyModel writes the certificate directory of the model files name.
func certifyModel(t *testing.T, files model.Spec, dir string) {
	t.Helper()
	m, err := files.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := certificates.CertifyModel(m, dir, certificates.Options{Seed: 1, Cases: 2, Providers: []string{}}, true, io.Discard); err != nil {
		t.Fatalf("certify %s: %v", files.Payload, err)
	}
}

// fileSum is the test's own SHA-256 of a file.
func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// forgeSources rewrites the digests dir's manifest records to those of
// files (graph, payload, input, in certify's order), as a forger would:
// the manifest binds the certificate files, nothing binds it.
func forgeSources(t *testing.T, dir string, files model.Spec) {
	t.Helper()
	p := filepath.Join(dir, certificates.ManifestName)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m certificates.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	paths := []string{files.Graph, files.Payload, files.Inputs[0]}
	if len(m.Sources) != len(paths) {
		t.Fatalf("manifest records %d sources, want graph, payload and input", len(m.Sources))
	}
	for i := range m.Sources {
		m.Sources[i].SHA256 = fileSum(t, paths[i])
	}
	out, err := json.MarshalIndent(&m, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyModel (issue 26 point 4): VerifyModel accepts a model
// directory against the very files it was made from and refuses one made
// from a model with one weight changed — also when its manifest's digests
// were forged to the original files' — and one given a graph file of
// other bytes. Each planted verifier that skips a comparison (the digests,
// the graph hash, both) accepts at least one of these: the table catches
// it.
func TestVerifyModel(t *testing.T) {
	if testing.Short() {
		t.Skip("certifies the example MLP three times")
	}
	orig, weight, spaced := modelFixture(t)
	work := t.TempDir()
	good, changed, forged := filepath.Join(work, "good"), filepath.Join(work, "changed"), filepath.Join(work, "forged")
	certifyModel(t, orig, good)
	certifyModel(t, weight, changed)
	certifyModel(t, weight, forged)
	forgeSources(t, forged, orig)

	type want int
	const (
		holds      want = iota
		sourceDiff      // a *verify.SourceMismatch
		modelDiff       // a *verify.ModelMismatch
	)
	cases := []struct {
		name  string
		dir   string
		files model.Spec
		want  want
	}{
		{"the files it was made from", good, orig, holds},
		{"the weight-changed model's certificate, the original files", changed, orig, sourceDiff},
		{"the original certificate, the weight-changed files", good, weight, sourceDiff},
		{"the weight-changed model's certificate with forged digests", forged, orig, modelDiff},
		{"the original certificate, the graph file with a trailing space", good, spaced, sourceDiff},
	}
	judge := func(t *testing.T, verifyFn func(string, model.Spec) (*verify.Report, error)) (wrong []string) {
		for _, c := range cases {
			rep, err := verifyFn(c.dir, c.files)
			var sm *verify.SourceMismatch
			var mm *verify.ModelMismatch
			ok := false
			switch c.want {
			case holds:
				ok = err == nil && rep != nil && len(rep.Files) > 0
			case sourceDiff:
				ok = errors.As(err, &sm)
			case modelDiff:
				ok = errors.As(err, &mm) && mm.Field == "graph_hash"
			}
			if !ok {
				wrong = append(wrong, c.name+": "+errString(err))
			}
		}
		return wrong
	}
	for _, w := range judge(t, VerifyModel) {
		t.Error(w)
	}

	planted := []struct {
		name string
		tie  func(string, *certificates.Manifest, *model.Model) error
	}{
		{"no tie at all", func(string, *certificates.Manifest, *model.Model) error { return nil }},
		{"digests only (graph hash skipped)", func(_ string, man *certificates.Manifest, m *model.Model) error {
			given := make([]certificates.Source, len(m.Files))
			for i, in := range m.Files {
				given[i] = certificates.Source{Role: in.Role, Name: in.Path, SHA256: in.SHA256}
			}
			return verify.MatchSources(man, given)
		}},
		{"graph hash only (digests skipped)", func(dir string, man *certificates.Manifest, m *model.Model) error {
			return verify.MatchModel(dir, man, &certificates.Model{Graph: m.Graph, Payload: m.Payload, Input: m.Input})
		}},
	}
	for _, p := range planted {
		fault := func(dir string, files model.Spec) (*verify.Report, error) {
			return verifyModel(dir, files, p.tie)
		}
		wrong := judge(t, fault)
		t.Logf("%s: %q", p.name, wrong)
		if len(wrong) == 0 {
			t.Errorf("planted verifier %q passes the table: it does not catch a skipped comparison", p.name)
		}
	}

	// A file that cannot be read is an error with no report.
	bad := orig
	bad.Inputs = []string{filepath.Join(work, "missing.json")}
	if rep, err := VerifyModel(good, bad); err == nil || rep != nil {
		t.Errorf("a missing input: report %v, error %v; want an error and no report", rep, err)
	}
}

func errString(err error) string {
	if err == nil {
		return "accepted"
	}
	return err.Error()
}
