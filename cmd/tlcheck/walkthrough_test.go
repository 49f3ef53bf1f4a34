package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWalkthroughONNX runs the README's walk-through on a PyTorch-exported
// model with a BatchNorm in it (../shared, the ONNX backend test's
// test_BatchNorm1d_3d_input_eval), step by step, on its recorded .pb
// input: tensor, import, eval, grad, compare, certify (the interval
// certificate of the output in place of the composition law), verify,
// view. Each step's expectation is what
// the README says it prints.
func TestWalkthroughONNX(t *testing.T) {
	b := filepath.Join("..", "..", "..", "shared", "onnx", "pytorch-converted", "test_BatchNorm1d_3d_input_eval")
	model, data := filepath.Join(b, "model.onnx"), filepath.Join(b, "test_data_set_0")
	if _, err := os.Stat(model); err != nil {
		t.Skipf("the shared ONNX corpus is not here: %v", err)
	}
	in := filepath.Join(data, "input_0.pb")
	dir := t.TempDir()
	step := func(wantCode int, args ...string) string {
		t.Helper()
		code, out, errs := runCmd(args...)
		if code != wantCode {
			t.Fatalf("%s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, wantCode, out, errs)
		}
		return out + errs
	}
	if out := step(0, "tensor", in); !strings.HasPrefix(out, `{"shape":[4,5,3],"values":["`) {
		t.Errorf("tensor: %.80s", out)
	}
	step(0, "import", "--onnx", model, "--out", filepath.Join(dir, "imported"))
	for _, out := range []string{
		step(0, "eval", "--onnx", model, "--input", in),
		step(0, "eval", "--graph", filepath.Join(dir, "imported", "graph.json"), "--payload", filepath.Join(dir, "imported", "payload.json"), "--input", in),
		step(0, "grad", "--onnx", model, "--data", data),
	} {
		if !strings.HasPrefix(out, "scalar = interval (interval enclosures of the exact real values; not rat: node 1 (batch_norm_eval)") {
			t.Errorf("eval/grad do not say auto chose interval for the batch norm: %.160s", out)
		}
	}
	if out := step(0, "compare", "--onnx", model, "--data", data); !strings.Contains(out, "compare: all 60 elements hold") {
		t.Errorf("compare: %s", out)
	}
	certs := filepath.Join(dir, "certs")
	if out := step(0, "certify", "--onnx", model, "--data", data, "--out", certs); !strings.HasPrefix(out, "certified: model_interval in place of model_composition: not exact over rat") || strings.Contains(out, "not certified") {
		t.Errorf("certify: %s", out)
	}
	if out := step(0, "verify", certs); !strings.Contains(out, "verified 3 files, 82 cases: every claim re-derived") { // 20 adjointness cases, 60 output elements (4×5×3), 2 range nodes
		t.Errorf("verify: %s", out)
	}
	page := filepath.Join(dir, "grads.html")
	step(0, "view", "--onnx", model, "--data", data, "--what", "grads", "--out", page)
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("view wrote no picture (%v)", err)
	}
}

// TestWalkthroughGradients is the README's "check a dumped gradient"
// step: compare-grad --json on the fixture model, a dump that holds and
// one with an element moved, validated against the verdict by hand.
func TestWalkthroughGradients(t *testing.T) {
	m, d := onnxFixture(t)
	dir := t.TempDir()
	// ∂Σ relu(x ⊙ w)/∂x at x = (3/2, 2), w = (2, −3) is (2, 0) by hand.
	good := writeTemp(t, dir, "grads.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2.0,0.0]}}}`)
	bad := writeTemp(t, dir, "bad.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2.0,0.001]}}}`)
	for _, c := range []struct {
		file    string
		code    int
		verdict string
	}{{good, 0, "holds"}, {bad, 1, "fails"}} {
		code, out, errs := runCmd("compare-grad", "--onnx", m, "--data", d, "--grads", c.file, "--json")
		var doc struct {
			Verdict string `json:"verdict"`
			Grads   []struct {
				Name  string `json:"name"`
				First *struct {
					Index int `json:"index"`
				} `json:"first"`
			} `json:"grads"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || code != c.code || doc.Verdict != c.verdict {
			t.Errorf("compare-grad %s: exit %d, verdict %q (%v) %s", c.file, code, doc.Verdict, err, errs)
		}
		if c.verdict == "fails" && (len(doc.Grads) == 0 || doc.Grads[0].First == nil || doc.Grads[0].First.Index != 1) {
			t.Errorf("compare-grad %s: the first element outside is not element 1: %s", c.file, out)
		}
	}
}
