package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/model"
)

// evalBody decodes an eval document, checks its header, and returns its
// values (scalar, nodes, output; not the path or the header) as compact
// JSON with a newline.
func evalBody(t *testing.T, out string) string {
	t.Helper()
	var doc jsonout.EvalDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not an eval document: %v\n%s", err, out)
	}
	if doc.Format != "tlcheck.eval.v1" || doc.Seed != nil || len(doc.Inputs) < 2 {
		t.Errorf("eval header %+v", doc.Header)
	}
	b, err := json.Marshal(struct {
		Scalar string             `json:"scalar"`
		Nodes  []jsonout.EvalNode `json:"nodes,omitempty"`
		Output jsonout.EvalNode   `json:"output"`
	}{doc.Scalar, doc.Nodes, doc.Output})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// irExample is one shipped example: its graph, payload and input files.
type irExample struct{ name, graph, payload, input string }

var irExamples = []irExample{
	{"quad", "../../examples/quad.ir.json", "", "../../examples/quad.input.json"},
	{"quad-detach", "../../examples/quad-detach.ir.json", "", "../../examples/quad.input.json"},
	{"mlp", "../../examples/mlp.ir.json", "../../examples/mlp.payload.json", "../../examples/mlp.input.json"},
}

func (e irExample) args(cmd string, extra ...string) []string {
	a := []string{cmd, "--graph", e.graph, "--input", e.input}
	if e.payload != "" {
		a = append(a, "--payload", e.payload)
	}
	return append(a, extra...)
}

// writeTemp writes a file into dir and returns its path.
func writeTemp(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEvalPathsAgree evaluates every example over every scalar along every
// path and checks that the value tables (--all --json) are identical
// across paths.
func TestEvalPathsAgree(t *testing.T) {
	for _, e := range irExamples {
		for _, scalar := range []string{"rat", "interval", "binary32", "f32", "f64"} {
			var first string
			for _, path := range model.EvalPaths {
				code, out, errs := runCmd(e.args("eval", "--scalar", scalar, "--path", path, "--all", "--json")...)
				if code != 0 {
					t.Fatalf("%s/%s/%s: exit %d: %s", e.name, scalar, path, code, errs)
				}
				out = evalBody(t, out)
				if first == "" {
					first = out
				} else if out != first {
					t.Errorf("%s/%s: path %s disagrees:\n%s\nvs ir:\n%s", e.name, scalar, path, out, first)
				}
			}
		}
	}
}

func TestEvalOutput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{irExamples[0].args("eval"), "scalar = rat (exact rationals)\noutput node 4 (sum) [] = 22.5 (= 45/2)\n"},
		{irExamples[0].args("eval", "--path", "tape", "--scalar", "f32"), "output node 4 (sum) [] = 22.5\n"},
		{irExamples[0].args("eval", "--all"), "scalar = rat (exact rationals)\nnode 0 (input) [2] = [3, -1.5 (= -3/2)]\nnode 1 (mul_elem) [2] = [9, 2.25 (= 9/4)]\nnode 2 (mul_elem) [2] = [9, 2.25 (= 9/4)]\nnode 3 (add) [2] = [18, 4.5 (= 9/2)]\nnode 4 (sum) [] = 22.5 (= 45/2)\noutput node 4 (sum) [] = 22.5 (= 45/2)\n"},
		{irExamples[0].args("eval", "--json"), `{"scalar":"rat","output":{"id":4,"kind":"sum","value":{"shape":[],"values":["45/2"]}}}` + "\n"},
		// (evalBody re-encodes an interval through a map: its keys come sorted)
		{irExamples[2].args("eval", "--json", "--scalar", "interval"), `{"scalar":"interval","output":{"id":3,"kind":"linear","value":{"shape":[1],"values":[{"hi":0.3278819444444445,"lo":0.32788194444444435}]}}}` + "\n"},
		{irExamples[0].args("eval", "--json", "--scalar", "binary32"), `{"scalar":"binary32","output":{"id":4,"kind":"sum","value":{"shape":[],"values":[22.5]}}}` + "\n"},
		{irExamples[2].args("eval", "--path", "typed-graph"), "scalar = rat (exact rationals)\noutput node 3 (linear) [1] = [0.327882 (= 9443/28800)]\n"},
		{irExamples[2].args("eval", "--scalar", "interval"), "output node 3 (linear) [1] = [0.32788194444444435..0.3278819444444445]\n"},
	}
	for _, c := range cases {
		code, out, errs := runCmd(c.args...)
		if slices.Contains(c.args, "--json") {
			out = evalBody(t, out)
		}
		if code != 0 || out != c.want {
			t.Errorf("%v: exit %d, stdout %q (stderr %q), want %q", c.args, code, out, errs, c.want)
		}
	}
}

// badInputs writes the malformed documents the error tables use.
func badInputs(t *testing.T) map[string]string {
	dir := t.TempDir()
	return map[string]string{
		"malformed": writeTemp(t, dir, "malformed.json", `{"format":"torchlean.ir.v1","input_id":0,`),
		"badnode": writeTemp(t, dir, "badnode.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"relu","parents":[5],"shape":[2]}
]}`),
		"exp": writeTemp(t, dir, "exp.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"exp","parents":[0],"shape":[2]},
  {"id":2,"kind":"sum","parents":[1],"shape":[]}
]}`),
		"vector": writeTemp(t, dir, "vector.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"relu","parents":[0],"shape":[2]}
]}`),
		"pool": writeTemp(t, dir, "pool.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,2,2]},
  {"id":1,"kind":"max_pool","parents":[0],"shape":[1,1,1],"kernel":[2,2],"stride":[2,2],"padding":[0,0]},
  {"id":2,"kind":"sum","parents":[1],"shape":[]}
]}`),
		// bernoulli_mask with a runtime keep probability (the registry's keep_mask).
		"iro": writeTemp(t, dir, "iro.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[]},
  {"id":1,"kind":"bernoulli_mask","parents":[0],"shape":[2],"seed":1},
  {"id":2,"kind":"sum","parents":[1],"shape":[]}
]}`),
		"input0":     writeTemp(t, dir, "input0.json", `{"shape":[],"values":["1"]}`),
		"input3":     writeTemp(t, dir, "input3.json", `{"shape":[3],"values":["1","2","3"]}`),
		"input2":     writeTemp(t, dir, "input2.json", `{"shape":[2],"values":["1","-2"]}`),
		"input122":   writeTemp(t, dir, "input122.json", `{"shape":[1,2,2],"values":["1","2","3","4"]}`),
		"badinput":   writeTemp(t, dir, "badinput.json", `{"shape":[2],"values":["1","1/0"]}`),
		"badpayload": writeTemp(t, dir, "badpayload.json", `{"format":"tlcheck.payload.v1","entries":{"1":{"W":{"shape":[8,2],"values":[]}}}}`),
		"zeroinput":  writeTemp(t, dir, "zero.json", `{"shape":[2],"values":["0","1"]}`),
		"missing":    filepath.Join(dir, "nope.json"),
	}
}

// TestIRCommandErrors: every bad input is one line on stderr naming the
// file and the node or field, exit 2, nothing on stdout.
func TestIRCommandErrors(t *testing.T) {
	f := badInputs(t)
	quad, qin := irExamples[0].graph, irExamples[0].input
	mlp := irExamples[2].graph
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"eval", "--input", qin}, []string{"eval: --graph or --onnx is required"}},
		{[]string{"eval", "--graph", quad}, []string{"eval: --input is required"}},
		{[]string{"grad", "--input", qin}, []string{"grad: --graph or --onnx is required"}},
		{[]string{"eval", "--graph", f["missing"], "--input", qin}, []string{"--graph " + f["missing"] + ": cannot read: no such file or directory"}},
		{[]string{"eval", "--graph", quad, "--input", f["missing"]}, []string{"--input " + f["missing"] + ": cannot read"}},
		{[]string{"eval", "--graph", f["malformed"], "--input", qin}, []string{"--graph " + f["malformed"] + ": "}},
		{[]string{"grad", "--graph", f["badnode"], "--input", f["input2"]}, []string{"--graph " + f["badnode"] + ": node 1 (relu): field \"parents\""}},
		{[]string{"eval", "--graph", quad, "--input", f["input3"]}, []string{"--input " + f["input3"] + ": node 0 (input): shape mismatch: the graph's input has shape [2], the tensor [3]"}},
		{[]string{"eval", "--graph", quad, "--input", f["badinput"]}, []string{"--input " + f["badinput"] + ": ", "values[1]"}},
		{[]string{"grad", "--graph", f["vector"], "--input", f["input2"], "--cotangent", f["input3"]}, []string{"--cotangent " + f["input3"] + ": node 1 (output): shape mismatch: the model declares [2], the tensor has [3]"}},
		{[]string{"eval", "--graph", f["exp"], "--input", f["input2"], "--scalar", "rat"}, []string{"--graph " + f["exp"] + ": node 1 (exp): exp has no exact rational semantics"}},
		{[]string{"eval", "--graph", f["exp"], "--input", f["input2"], "--path", "typed-graph", "--scalar", "rat"}, []string{"node 1 (exp): exp has no exact rational semantics"}},
		{[]string{"grad", "--graph", f["exp"], "--input", f["input2"], "--scalar", "rat"}, []string{"node 1 (exp): exp has no exact rational semantics"}},
		{[]string{"grad", "--graph", mlp, "--input", irExamples[2].input}, []string{"--graph " + mlp + ": node 1 (linear): missing linear payload for node 1 (no --payload given)"}},
		{[]string{"grad", "--graph", mlp, "--input", irExamples[2].input, "--payload", f["badpayload"]}, []string{"--payload " + f["badpayload"] + ": node 1"}},
		{[]string{"eval", "--graph", quad, "--input", qin, "--scalar", "bf16"}, []string{`--scalar: unknown value "bf16" (want auto|rat|interval|binary32|f32|f64)`}},
		{[]string{"grad", "--graph", quad, "--input", qin, "--scalar", "binary32"}, []string{`--scalar: unknown value "binary32" (want auto|rat|interval|f32|f64)`}},
		{[]string{"eval", "--graph", quad, "--input", qin, "--path", "jit"}, []string{`--path: unknown value "jit"`}},
		{[]string{"grad", "--graph", quad, "--input", qin, "--path", "ir"}, []string{`--path: unknown value "ir" (want tape|typed-graph)`}},
		{[]string{"eval", "--graph", quad, "--input", qin, "stray"}, []string{`unexpected argument "stray"`}},
	}
	// A data-dependent failure (1/0 over the rationals) names its node on
	// every path.
	inv := writeTemp(t, t.TempDir(), "inv.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"inv","parents":[0],"shape":[2]},
  {"id":2,"kind":"sum","parents":[1],"shape":[]}
]}`)
	for _, path := range model.EvalPaths {
		cases = append(cases, struct {
			args []string
			want []string
		}{[]string{"eval", "--graph", inv, "--input", f["zeroinput"], "--path", path}, []string{"--graph " + inv + ": node 1 (inv)"}})
	}
	for _, path := range []string{"tape", "typed-graph"} {
		cases = append(cases, struct {
			args []string
			want []string
		}{[]string{"grad", "--graph", inv, "--input", f["zeroinput"], "--path", path}, []string{"--graph " + inv + ": node 1 (inv)"}})
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
}

// TestEvalForwardOnlyTag: eval asks for no gradient, so on a tag without a
// registry primitive its tape and typed-graph paths never say gradients
// are unsupported, and its ir and forward-graph paths evaluate it: the
// mask with keep probability 1 is [1, 1] (every draw u ≥ 1 − 1 = 0), and
// the sum of it 2.
func TestEvalKeepMaskEveryPath(t *testing.T) {
	f := badInputs(t)
	// Keep probability 1: both mask entries are 1 (draw ≥ 1 − 1 = 0 always),
	// so the sum is 2 on every path; the mask's gradient is 0 by definition.
	for _, path := range model.EvalPaths {
		code, out, errs := runCmd("eval", "--graph", f["iro"], "--input", f["input0"], "--path", path)
		if code != 0 || out != "scalar = rat (exact rationals)\noutput node 2 (sum) [] = 2\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want the output 2", path, code, out, errs)
		}
	}
	for _, path := range []string{"tape", "typed-graph"} {
		code, out, errs := runCmd("grad", "--graph", f["iro"], "--input", f["input0"], "--path", path)
		if code != 0 || out != "scalar = rat (exact rationals)\nloss = 2\ngrad input = 0\n" {
			t.Errorf("grad %s: exit %d, stdout %q, stderr %q", path, code, out, errs)
		}
	}
}

// TestMaxPoolEveryPath: max_pool is a registry primitive, so every eval
// path and both grad paths run it. The max pool of [[1,4],[3,4]] is 4 (by
// hand) and the sum of it 4; the maximum is attained twice, so by the tie
// rule each of the two 4s gets half of the cotangent 1: [[0,1/2],[0,1/2]].
func TestMaxPoolEveryPath(t *testing.T) {
	f := badInputs(t)
	in := writeTemp(t, t.TempDir(), "ties.json", `{"shape":[1,2,2],"values":["1","4","3","4"]}`)
	for _, path := range model.EvalPaths {
		code, out, errs := runCmd("eval", "--graph", f["pool"], "--input", in, "--path", path)
		if code != 0 || out != "scalar = rat (exact rationals)\noutput node 2 (sum) [] = 4\n" {
			t.Errorf("eval %s: exit %d, stdout %q, stderr %q; want the output 4", path, code, out, errs)
		}
	}
	for _, path := range []string{"tape", "typed-graph"} {
		code, out, errs := runCmd("grad", "--graph", f["pool"], "--input", in, "--path", path)
		if code != 0 || out != "scalar = rat (exact rationals)\nloss = 4\ngrad input = [[[0, 0.5 (= 1/2)], [0, 0.5 (= 1/2)]]]\n" {
			t.Errorf("grad %s: exit %d, stdout %q, stderr %q", path, code, out, errs)
		}
	}
}

// TestErrorsNameUserNodes: the 4-node graph x → linear(W=[[2]], b=[1]) →
// relu → inv fails at node 3 at x = −1/2 (2·(−1/2) + 1 = 0, by hand): eval
// on every path and grad on both print exactly that node, never the id of
// the typed-graph entry or tape node that failed (W and b come first
// there, so inv is not node 3 in them).
func TestErrorsNameUserNodes(t *testing.T) {
	dir := t.TempDir()
	g := writeTemp(t, dir, "g.json", linearReluInvIR)
	p := writeTemp(t, dir, "p.json", linearReluInvPayload)
	x := writeTemp(t, dir, "x.json", `{"shape":[1],"values":["-1/2"]}`)
	want := "tlcheck: --graph " + g + ": node 3 (inv): element 0: div over rat: division by zero\n"
	var runs [][]string
	for _, path := range model.EvalPaths {
		runs = append(runs, []string{"eval", "--path", path})
	}
	for _, path := range []string{"tape", "typed-graph"} {
		runs = append(runs, []string{"grad", "--path", path})
	}
	for _, r := range runs {
		args := append(r, "--graph", g, "--payload", p, "--input", x)
		code, out, errs := runCmd(args...)
		if code != 2 || out != "" || errs != want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", r, code, out, errs, want)
		}
	}
}

// linearReluInvIR is x → linear → relu → inv, with linearReluInvPayload's
// W = [[2]], b = [1]: inv is IR node 3, but not node 3 of the typed graph
// or tape (W and b come first there), so errors at it test user node ids.
const linearReluInvIR = `{"format":"torchlean.ir.v1","input_id":0,"output_id":3,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1]},
  {"id":1,"kind":"linear","parents":[0],"shape":[1]},
  {"id":2,"kind":"relu","parents":[1],"shape":[1]},
  {"id":3,"kind":"inv","parents":[2],"shape":[1]}
]}`

const linearReluInvPayload = `{"format":"tlcheck.payload.v1","entries":{"1":{"W":{"shape":[1,1],"values":["2"]},"b":{"shape":[1],"values":["1"]}}}}`
