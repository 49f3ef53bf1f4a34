package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
)

// sha256File is the test's own digest of a file (not the code under test's).
func sha256File(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// editManifestJSON rewrites dir's manifest through f, re-encoded as the
// writer encodes it (indented by one space, a final newline).
func editManifestJSON(t *testing.T, dir string, f func(m *certificates.Manifest)) {
	t.Helper()
	p := filepath.Join(dir, certificates.ManifestName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m certificates.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	f(&m)
	out, err := json.MarshalIndent(&m, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyTiesModel (issue 26 point 4): a model directory records the
// SHA-256 of the model and input files; verify --onnx M --input X accepts
// the very files and refuses, exit 1 with one line naming the file and
// both digests, a model with one weight byte changed or another input —
// also when the manifest's digests were forged to the changed model's,
// since every model certificate's graph_hash is compared with the graph
// the given model imports to. A directory without digests still
// verifies, saying in one line that it cannot be tied by digest.
func TestVerifyTiesModel(t *testing.T) {
	model, data := onnxFixture(t)
	work := filepath.Dir(model)
	input := filepath.Join(data, "input_0.pb")
	dir := filepath.Join(work, "certs")
	if code, out, errs := runCmd("certify", "--onnx", model, "--data", data, "--out", dir, "--cases", "2", "--partial"); code != 0 {
		t.Fatalf("certify: exit %d\n%s%s", code, out, errs)
	}
	modelSum, inputSum := sha256File(t, model), sha256File(t, input)
	var m certificates.Manifest
	mdata, _ := os.ReadFile(filepath.Join(dir, certificates.ManifestName))
	if err := json.Unmarshal(mdata, &m); err != nil {
		t.Fatal(err)
	}
	want := []certificates.Source{{Role: "onnx", Name: "model.onnx", SHA256: modelSum}, {Role: "input", Name: "input_0.pb", SHA256: inputSum}}
	if len(m.Sources) != 2 || m.Sources[0] != want[0] || m.Sources[1] != want[1] {
		t.Fatalf("manifest sources %+v, want %+v", m.Sources, want)
	}
	code, out, errs := runCmd("verify", dir)
	if code != 0 || !strings.Contains(out, "made from onnx model.onnx, SHA-256 "+modelSum) || !strings.Contains(out, "made from input input_0.pb, SHA-256 "+inputSum) {
		t.Fatalf("verify: exit %d, want the recorded digests printed\n%s%s", code, out, errs)
	}
	if code, out, errs := runCmd("verify", "--onnx", model, "--input", input, dir); code != 0 || !strings.Contains(out, "about --onnx "+model+", SHA-256 "+modelSum) {
		t.Fatalf("verify --onnx (the same files): exit %d\n%s%s", code, out, errs)
	}

	// One weight byte changed: w = (2, −3) becomes (3, −3) (binary32 2 is
	// 00 00 00 40, 3 is 00 00 40 40: one byte).
	orig, _ := os.ReadFile(model)
	two := []byte{0, 0, 0, 0x40, 0, 0, 0x40, 0xc0} // 2, −3 little-endian
	at := bytes.Index(orig, two)
	if at < 0 {
		t.Fatal("fixture weights not found")
	}
	tampered := bytes.Clone(orig)
	tampered[at+2] = 0x40
	bad := filepath.Join(work, "tampered.onnx")
	if err := os.WriteFile(bad, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	badSum := sha256File(t, bad)
	otherIn := filepath.Join(work, "other.pb")
	if err := os.WriteFile(otherIn, tensorPB("x", []int64{2}, 1.5, 4), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := func(name string, args []string, want ...string) {
		t.Helper()
		code, out, errs := runCmd(append(append([]string{"verify"}, args...), dir)...)
		if code != 1 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, want 1 with one line\n%s%s", name, code, out, errs)
		}
		for _, w := range want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: the line does not name %q: %s", name, w, errs)
			}
		}
	}
	refused("tampered model", []string{"--onnx", bad, "--input", input}, bad, badSum, modelSum)
	refused("other input", []string{"--onnx", model, "--input", otherIn}, otherIn, sha256File(t, otherIn), inputSum)

	// Forged digests: the manifest now records the tampered model's
	// digest; the certificates still hold the original graph.
	editManifestJSON(t, dir, func(m *certificates.Manifest) { m.Sources[0].SHA256 = badSum })
	if code, out, errs := runCmd("verify", dir); code != 0 {
		t.Fatalf("a manifest with edited digests still verifies (the digests bind nothing inside it): exit %d\n%s%s", code, out, errs)
	}
	refused("forged digest", []string{"--onnx", bad, "--input", input}, "graph_hash", "not about this model")

	// A directory written before digests were recorded.
	editManifestJSON(t, dir, func(m *certificates.Manifest) { m.Sources = nil })
	code, out, errs = runCmd("verify", dir)
	if code != 0 || strings.Count(out, "cannot be tied to a model file") != 1 {
		t.Fatalf("no digests: exit %d, want 0 and one line saying it cannot be tied\n%s%s", code, out, errs)
	}
	if code, out, errs := runCmd("verify", "--onnx", model, "--input", input, dir); code != 0 || !strings.Contains(out, "tying it by the imported graph and input") {
		t.Fatalf("no digests, the original model: exit %d\n%s%s", code, out, errs)
	}
	refused("no digests, tampered model", []string{"--onnx", bad, "--input", input}, "graph_hash")
	refused("no digests, other input", []string{"--onnx", model, "--input", otherIn}, "input")
}
