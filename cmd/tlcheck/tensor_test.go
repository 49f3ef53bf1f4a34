package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTensorCommand converts the fixture's TensorProto files into JSON
// tensors. The expected values are the fixture's float32 elements written
// by hand as rationals (1.5 = 3/2), not derived from the code under test.
func TestTensorCommand(t *testing.T) {
	model, data := onnxFixture(t)
	dir := filepath.Dir(model)
	cases := []struct {
		file, want string
	}{
		{filepath.Join(data, "input_0.pb"), `{"shape":[2],"values":["3/2","2"]}`},
		{filepath.Join(dir, "cotangent.pb"), `{"shape":[2],"values":["5","7"]}`},
		{filepath.Join(dir, "bad-shape.pb"), `{"shape":[3],"values":["1","2","3"]}`},
		{filepath.Join(dir, "x.json"), `{"shape":[2],"values":["3/2","2"]}`},
	}
	for _, c := range cases {
		code, so, se := runCmd("tensor", c.file)
		if code != 0 || strings.TrimSpace(so) != c.want || se != "" {
			t.Errorf("tensor %s: exit %d, stdout %q, stderr %q; want 0 and %s", c.file, code, so, se, c.want)
		}
	}
	// --out writes the same bytes, and what it writes is an --input
	// eval reads back to the same output as the .pb.
	out := filepath.Join(t.TempDir(), "x.json")
	if code, so, se := runCmd("tensor", "--out", out, filepath.Join(data, "input_0.pb")); code != 0 || so != "" || se != "" {
		t.Fatalf("tensor --out: exit %d, %q, %q", code, so, se)
	}
	b, err := os.ReadFile(out)
	if err != nil || strings.TrimSpace(string(b)) != cases[0].want {
		t.Fatalf("tensor --out wrote %q (%v)", b, err)
	}
	_, fromPB, _ := runCmd("eval", "--onnx", model, "--input", filepath.Join(data, "input_0.pb"))
	_, fromJSON, _ := runCmd("eval", "--onnx", model, "--input", out)
	if fromPB == "" || fromPB != fromJSON {
		t.Errorf("eval on the .pb printed %q, on its JSON conversion %q", fromPB, fromJSON)
	}
}

// TestTensorBadInput: every refusal is one line, exit 2, naming the file.
func TestTensorBadInput(t *testing.T) {
	model, _ := onnxFixture(t)
	dir := filepath.Dir(model)
	cases := []struct {
		args []string
		want string
	}{
		{nil, "one tensor file is required"},
		{[]string{"a.pb", "b.pb"}, "unexpected argument"},
		{[]string{filepath.Join(dir, "none.pb")}, "tensor " + filepath.Join(dir, "none.pb") + ": cannot read"},
		{[]string{filepath.Join(dir, "truncated.pb")}, "truncated.pb"},
		{[]string{"--out", filepath.Join(dir, "no", "such", "x.json"), filepath.Join(dir, "cotangent.pb")}, "cannot write"},
	}
	for _, c := range cases {
		code, so, se := runCmd(append([]string{"tensor"}, c.args...)...)
		if code != 2 || so != "" || strings.Count(se, "\n") != 1 || !strings.Contains(se, c.want) {
			t.Errorf("tensor %v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, so, se, c.want)
		}
	}
}

// TestPBInputEverywhere is the report: an imported graph.json
// with a TensorProto input (eval, grad, diff, view), and view on the ONNX
// model with one. Each .pb run must print what the JSON tensor of the
// same values prints.
func TestPBInputEverywhere(t *testing.T) {
	model, data := onnxFixture(t)
	dir := filepath.Dir(model)
	pb, js := filepath.Join(data, "input_0.pb"), filepath.Join(dir, "x.json")
	imp := filepath.Join(t.TempDir(), "imported")
	if code, _, se := runCmd("import", "--onnx", model, "--out", imp); code != 0 {
		t.Fatalf("import: exit %d: %s", code, se)
	}
	graph, payload := filepath.Join(imp, "graph.json"), filepath.Join(imp, "payload.json")
	for _, cmd := range [][]string{
		{"eval", "--graph", graph, "--payload", payload},
		{"eval", "--graph", graph, "--payload", payload, "--all", "--scalar", "f32"},
		{"grad", "--graph", graph, "--payload", payload},
		{"diff", "--graph", graph, "--payload", payload},
		{"eval", "--onnx", model},
	} {
		c1, o1, e1 := runCmd(append(cmd, "--input", pb)...)
		c2, o2, e2 := runCmd(append(cmd, "--input", js)...)
		if c1 != 0 || e1 != "" || o1 == "" {
			t.Errorf("%v --input %s: exit %d, stderr %q", cmd, pb, c1, e1)
			continue
		}
		if c1 != c2 || o1 != o2 || e1 != e2 {
			t.Errorf("%v: the .pb gives exit %d %q, the JSON tensor exit %d %q", cmd, c1, o1, c2, o2)
		}
	}
	for _, m := range [][]string{{"--graph", graph, "--payload", payload}, {"--onnx", model}} {
		var pages [2][]byte
		for i, in := range []string{pb, js} {
			out := filepath.Join(t.TempDir(), "v.svg")
			args := append(append([]string{"view"}, m...), "--input", in, "--what", "grads", "--format", "svg", "--out", out)
			if code, _, se := runCmd(args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, se)
			}
			pages[i], _ = os.ReadFile(out)
		}
		if len(pages[0]) == 0 || string(pages[0]) != string(pages[1]) {
			t.Errorf("view %v: the .pb input draws a different picture than its JSON tensor", m)
		}
	}
	// A .pb of the wrong shape is refused naming the file and the node.
	code, _, se := runCmd("eval", "--graph", graph, "--payload", payload, "--input", filepath.Join(dir, "bad-shape.pb"))
	if code != 2 || !strings.Contains(se, "bad-shape.pb: node 0 (input): shape mismatch") {
		t.Errorf("eval with a wrong-shaped .pb: exit %d, %q", code, se)
	}
}
