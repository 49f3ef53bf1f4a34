package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// TestONNXCommands runs every command that takes --onnx on the fixture
// model (onnxfixture_test.go), whose values are derived by hand there.
func TestONNXCommands(t *testing.T) {
	m, d := onnxFixture(t)
	dir := filepath.Dir(m)
	ct := filepath.Join(dir, "cotangent.pb")
	xjson := filepath.Join(dir, "x.json")
	in := filepath.Join(d, "input_0.pb")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--onnx", m, "--input", in}, "scalar = rat (exact rationals)\noutput node 3 (relu) [2] = [3, 0]\n"},
		{[]string{"eval", "--onnx", m, "--input", xjson, "--scalar", "f32"}, "output node 3 (relu) [2] = [3, 0]\n"},
		{[]string{"eval", "--onnx", m, "--data", d, "--path", "typed-graph"}, "scalar = rat (exact rationals)\noutput node 3 (relu) [2] = [3, 0]\n"},
		{[]string{"grad", "--onnx", m, "--data", d}, "scalar = rat (exact rationals)\noutput = [3, 0]\ncotangent = ones (the gradient of the sum of the outputs)\ngrad input = [2, 0]\ngrad w = [1.5 (= 3/2), 0]\n"},
		// ⟨(5, 7), y⟩: ∂/∂x = (5·2, 0), ∂/∂w = (5·3/2, 0).
		{[]string{"grad", "--onnx", m, "--data", d, "--cotangent", ct, "--path", "typed-graph"}, "scalar = rat (exact rationals)\noutput = [3, 0]\ncotangent = [5, 7]\ngrad input = [10, 0]\ngrad w = [7.5 (= 15/2), 0]\n"},
		{[]string{"grad", "--onnx", m, "--input", xjson, "--scalar", "interval"}, "scalar = interval (interval enclosures of the exact real values)\noutput = [3..3, 0..0]\ncotangent = ones (the gradient of the sum of the outputs)\ngrad input = [2..2, 0..0]\ngrad w = [1.5..1.5, 0..0]\n"},
	}
	for _, c := range cases {
		code, out, errs := runCmd(c.args...)
		if code != 0 || out != c.want {
			t.Errorf("%v: exit %d (stderr %q)\n got %q\nwant %q", c.args, code, errs, out, c.want)
		}
	}
	// --json keys the parameters by initializer name.
	code, out, errs := runCmd("grad", "--onnx", m, "--data", d, "--json")
	var doc jsonout.GradDoc
	if body := gradBody(t, out, &doc); code != 0 || body != `{"loss":{"shape":[2],"values":["3","0"]},"grad":{"input":{"shape":[2],"values":["2","0"]},"params":{"w":{"shape":[2],"values":["3/2","0"]}}}}`+"\n" {
		t.Errorf("grad --json: exit %d (%s): %s", code, errs, body)
	}
	if len(doc.Inputs) != 2 || doc.Inputs[0].Role != "onnx" || doc.Inputs[1].Role != "input" {
		t.Errorf("grad --json inputs %+v", doc.Inputs)
	}
	// certify --onnx writes a directory verify re-derives without the model.
	certs := filepath.Join(dir, "certs")
	if code, out, errs := runCmd("certify", "--onnx", m, "--data", d, "--out", certs, "--cases", "2"); code != 0 || !strings.Contains(out, "wrote 4 certificate files") {
		t.Fatalf("certify --onnx: exit %d %q %q", code, out, errs)
	}
	if err := os.Rename(m, m+".gone"); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCmd("verify", certs); code != 0 || !strings.Contains(out, "ok  model_composition  model_composition.json  2 cases") || !strings.Contains(out, "model_range.json") {
		t.Errorf("verify of a model directory without the model: exit %d %q %q", code, out, errs)
	}
}

// TestCompareCommand: the recorded output holds; a recorded output moved
// by 1/2 — far beyond the bound, which is a few ulps of 3 — fails, exit 1,
// naming the element.
func TestCompareCommand(t *testing.T) {
	m, d := onnxFixture(t)
	code, out, errs := runCmd("compare", "--onnx", m, "--data", d)
	if code != 0 || !strings.Contains(out, `output "y" [2]: 2 elements; max |recorded − exact| ∈ [0, 0]`) || !strings.Contains(out, "2 hold, 0 fail, 0 inconclusive") {
		t.Errorf("compare: exit %d %q %q", code, out, errs)
	}
	// The parent directory of test_data_set_* works too.
	if code, _, errs := runCmd("compare", "--onnx", m, "--data", filepath.Dir(d)); code != 0 {
		t.Errorf("compare on the parent: exit %d %q", code, errs)
	}
	bm, bd := onnxFixture(t, 3.5, 0)
	code, out, errs = runCmd("compare", "--onnx", bm, "--data", bd)
	if code != 1 || !strings.Contains(out, "1 hold, 1 fail, 0 inconclusive") || !strings.Contains(out, "first fails element 0: recorded 3.5") || errs != "tlcheck: compare: 1 element lies outside the a-priori rounding bound of the graph's float format\n" {
		t.Errorf("planted fault: exit %d %q %q", code, out, errs)
	}
	code, out, _ = runCmd("compare", "--onnx", bm, "--data", bd, "--json")
	var doc jsonout.CompareDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 {
		t.Fatalf("compare --json: exit %d %v", code, err)
	}
	if doc.Verdict != "fails" || doc.Fails != 1 || doc.Holds != 1 || len(doc.Sets) != 1 || len(doc.Sets[0].Outputs) != 1 || doc.Sets[0].Outputs[0].First == nil || doc.Sets[0].Outputs[0].First.Index != 0 {
		t.Errorf("compare --json: %+v", doc)
	}
}

// TestImportCommand: import writes the graph, payload and map, which eval
// reads back to the same value; a non-empty directory is refused without
// --force and left as it was.
func TestImportCommand(t *testing.T) {
	m, d := onnxFixture(t)
	out := filepath.Join(t.TempDir(), "imp")
	if code, _, errs := runCmd("import", "--onnx", m, "--out", out); code != 0 {
		t.Fatalf("import: exit %d %q", code, errs)
	}
	code, got, errs := runCmd("eval", "--graph", filepath.Join(out, "graph.json"), "--payload", filepath.Join(out, "payload.json"), "--input", filepath.Join(filepath.Dir(m), "x.json"))
	if code != 0 || got != "scalar = rat (exact rationals)\noutput node 3 (relu) [2] = [3, 0]\n" {
		t.Errorf("eval of the imported files: exit %d %q %q", code, got, errs)
	}
	data, err := os.ReadFile(filepath.Join(out, "onnx-map.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mp jsonout.OnnxMapDoc
	if err := json.Unmarshal(data, &mp); err != nil {
		t.Fatal(err)
	}
	if mp.Format != "tlcheck.onnx-map.v1" || len(mp.GraphInputs) != 1 || mp.GraphInputs[0].Name != "x" || mp.GraphInputs[0].DataType != "FLOAT" || len(mp.Initializers) != 1 || mp.Initializers[0].Name != "w" ||
		len(mp.Initializers[0].Uses) != 1 || mp.Initializers[0].Uses[0].Field != "value" || len(mp.Origin) != 4 || mp.Origin[3] != `node "act" (Relu)` {
		t.Errorf("map %+v", mp)
	}
	before, _ := os.ReadFile(filepath.Join(out, "graph.json"))
	code, _, errs = runCmd("import", "--onnx", m, "--out", out)
	if code != 2 || !strings.Contains(errs, "output directory is not empty") {
		t.Errorf("second import without --force: exit %d %q", code, errs)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "graph.json")); string(after) != string(before) {
		t.Error("a refused import changed graph.json")
	}
	if code, _, errs := runCmd("import", "--onnx", m, "--out", out, "--force", "--data", d); code != 0 {
		t.Errorf("import --force: exit %d %q", code, errs)
	}
}

// unknownOpModel is the fixture with its Relu node replaced by an op no
// importer knows.
func unknownOpModel(t *testing.T) string {
	g := pbuf(nil).
		bytes(1, nodePB("frob1", "Frobnicate", []string{"x"}, "y")).
		bytes(11, valueInfoPB("x", 2)).
		bytes(12, valueInfoPB("y", 2))
	p := filepath.Join(t.TempDir(), "unknown.onnx")
	if err := os.WriteFile(p, pbuf(nil).varint(1, 8).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestONNXBadInput: bad input is one line, exit 2, naming the file, the
// ONNX node and op, or the input at fault.
func TestONNXBadInput(t *testing.T) {
	m, d := onnxFixture(t)
	dir := filepath.Dir(m)
	unknown := unknownOpModel(t)
	trunc := writeTemp(t, dir, "trunc.onnx", string(fixtureModel()[:20]))
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"eval", "--onnx", unknown, "--input", filepath.Join(dir, "x.json")}, []string{unknown, `node "frob1" (Frobnicate)`}},
		{[]string{"compare", "--onnx", unknown, "--data", d}, []string{`node "frob1" (Frobnicate)`}},
		{[]string{"eval", "--onnx", trunc, "--data", d}, []string{"--onnx: onnx: " + trunc}},
		{[]string{"eval", "--onnx", filepath.Join(dir, "none.onnx"), "--data", d}, []string{"none.onnx"}},
		{[]string{"eval", "--onnx", m, "--input", filepath.Join(dir, "bad-shape.pb")}, []string{`graph input "x"`, "shape"}},
		{[]string{"eval", "--onnx", m, "--input", filepath.Join(dir, "truncated.pb")}, []string{"--input: onnx: " + filepath.Join(dir, "truncated.pb")}},
		{[]string{"eval", "--onnx", m, "--input", filepath.Join(dir, "x.json"), "--input", filepath.Join(dir, "x.json")}, []string{"1 runtime inputs", "2 input files"}},
		{[]string{"eval", "--onnx", m, "--graph", irExamples[0].graph, "--data", d}, []string{"--graph and --onnx name two models"}},
		{[]string{"eval", "--onnx", m, "--payload", irExamples[2].payload, "--data", d}, []string{"--payload goes with --graph"}},
		{[]string{"eval", "--onnx", m, "--data", d, "--input", filepath.Join(dir, "x.json")}, []string{"--input and --data both"}},
		{[]string{"eval", "--graph", irExamples[0].graph, "--data", d}, []string{"--data is a recorded ONNX data set"}},
		{[]string{"grad", "--onnx", m, "--data", d, "--cotangent", filepath.Join(dir, "bad-shape.pb")}, []string{`output "y"`, "shape mismatch"}},
		{[]string{"compare", "--onnx", m}, []string{"compare: --data is required"}},
		{[]string{"compare", "--data", d}, []string{"compare: --onnx is required"}},
		{[]string{"compare", "--onnx", m, "--data", dir + "/nowhere"}, []string{"--data " + dir + "/nowhere"}},
		{[]string{"compare", "--onnx", m, "--data", d, "--ulps", "-1"}, []string{"--ulps must be ≥ 1"}},
		{[]string{"import", "--onnx", m}, []string{"import: --out DIR is required"}},
		{[]string{"import", "--onnx", unknown, "--out", filepath.Join(dir, "never")}, []string{`node "frob1" (Frobnicate)`}},
		{[]string{"certify", "--onnx", m, "--data", d, "--out", filepath.Join(dir, "c"), "--ops", "mul"}, []string{"--ops selects the built-in subjects"}},
	}
	for _, c := range cases {
		code, out, errs := runCmd(c.args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "tlcheck: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line", c.args, code, out, errs)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, errs, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "never")); err == nil {
		t.Error("a refused import created its output directory")
	}
}
