package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWalkthroughONNX runs the README's walk-through, step 1, on a
// PyTorch-exported model with a BatchNorm in it (../shared, the ONNX
// backend test's test_BatchNorm1d_3d_input_eval), on its recorded .pb
// input: the commands are read from README.md's first sh block after
// "**1. An ONNX model", run in a directory holding model.onnx and
// test_data_set_0 as the README names them, each must exit 0, and each
// comment's text before its first "…" must be in what the command prints.
// Beyond the README's words: certify writes no model_composition and skips
// nothing, and view writes a picture.
func TestWalkthroughONNX(t *testing.T) {
	b := filepath.Join("..", "..", "..", "shared", "onnx", "pytorch-converted", "test_BatchNorm1d_3d_input_eval")
	if _, err := os.Stat(filepath.Join(b, "model.onnx")); err != nil {
		t.Skipf("the shared ONNX corpus is not here: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := walkthroughSteps(t, string(readme))
	dir := t.TempDir()
	for _, f := range []string{"model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"} {
		data, err := os.ReadFile(filepath.Join(b, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	ran := map[string]string{}
	for _, st := range steps {
		code, out, errs := runCmd(st.args...)
		if code != 0 {
			t.Fatalf("README step %q: exit %d\nstdout %.400s\nstderr %s", strings.Join(st.args, " "), code, out, errs)
		}
		if !strings.Contains(out+errs, st.want) {
			t.Errorf("README step %q prints no %q:\n%.400s%.400s", strings.Join(st.args, " "), st.want, out, errs)
		}
		ran[st.args[0]] = out + errs
	}
	for _, cmd := range []string{"tensor", "import", "eval", "grad", "compare", "certify", "verify", "view"} {
		if _, ok := ran[cmd]; !ok {
			t.Errorf("the README's walk-through no longer runs %s", cmd)
		}
	}
	if strings.Contains(ran["certify"], "not certified") {
		t.Errorf("certify skipped a kind: %s", ran["certify"])
	}
	if _, err := os.Stat(filepath.Join(dir, "certs", "model_composition.json")); !os.IsNotExist(err) {
		t.Errorf("certify wrote model_composition.json for a model not exact over the rationals (%v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "grads.html")); err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), `class="node param`) {
		t.Errorf("view wrote no picture with the initializers as boxes (%v)", err)
	}
}

// walkthroughStep is one command of the README's walk-through: its
// arguments (variables substituted) and the output its comment promises.
type walkthroughStep struct {
	args []string
	want string
}

// walkthroughSteps reads step 1 of the README's walk-through: the sh
// block after "**1. An ONNX model", its "M=… D=…" line and its tlcheck
// lines.
func walkthroughSteps(t *testing.T, readme string) []walkthroughStep {
	t.Helper()
	_, after, ok := strings.Cut(readme, "**1. An ONNX model")
	if !ok {
		t.Fatal("README.md has no step 1 of the walk-through")
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal("README.md's step 1 has no sh block")
	}
	vars := map[string]string{}
	var steps []walkthroughStep
	for _, line := range strings.Split(block, "\n") {
		cmd, comment, _ := strings.Cut(line, "# ")
		f := strings.Fields(cmd)
		switch {
		case len(f) == 0:
		case f[0] == "tlcheck":
			st := walkthroughStep{}
			for _, a := range f[1:] {
				for k, v := range vars {
					a = strings.ReplaceAll(a, "$"+k, v)
				}
				st.args = append(st.args, a)
			}
			want, _, _ := strings.Cut(comment, "…")
			st.want = strings.TrimSpace(want)
			steps = append(steps, st)
		case strings.Contains(f[0], "="):
			for _, kv := range f {
				k, v, _ := strings.Cut(kv, "=")
				vars[k] = v
			}
		default:
			t.Fatalf("README.md's walk-through: %q is neither a tlcheck command nor variables", line)
		}
	}
	if len(steps) < 8 {
		t.Fatalf("README.md's walk-through has %d tlcheck commands", len(steps))
	}
	return steps
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
