package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/jsonschema"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/schemas"
	"github.com/tlcheck/tlcheck/spec"
)

// compiled returns the compiled schema of a document kind.
func compiled(t *testing.T, kind string) *jsonschema.Schema {
	t.Helper()
	data, err := schemas.Lookup(kind)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.Compile(data)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	return s
}

// TestJSONOutputsMatchSchemas runs every reporting command with --json,
// on passing and on failing inputs, and validates each document against
// its published schema; it also checks the header against facts known
// outside the document (the inputs' bytes, the seed given, the format).
func TestJSONOutputsMatchSchemas(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	iro := writeTemp(t, dir, "iro.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,2,2]},
  {"id":1,"kind":"hard_masked_softmax","parents":[0],"shape":[1,2,2],"mask":{"shape":[1,2,2],"allowed":[true,true,true,false]}},
  {"id":2,"kind":"sum","parents":[1],"shape":[]}
]}`) // planned on checked_cuda, whose capsules do not bind: the plan fails
	quad, qin := examplePath("quad.ir.json"), examplePath("quad.input.json")
	mlp := irExamples[2].args("")[1:]
	om, od := onnxFixture(t)
	bm, bd := onnxFixture(t, 3.5, 0)
	modelCerts := filepath.Join(dir, "model-certs")
	// ∂Σy/∂x of the ONNX fixture is (2, 0) (onnxfixture_test.go).
	goodGrads := writeTemp(t, dir, "good-grads.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2.0,0.0]}}}`)
	badGrads := writeTemp(t, dir, "bad-grads.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[3.0,"+Inf"]}}}`)
	cases := []struct {
		name   string
		kind   string
		args   []string
		code   int
		seed   *uint64
		inputs []string // the files whose hashes the header must carry, in order
	}{
		{"check", "check", []string{"check", "--ops", "mul,tanh,add", "--cases", "4", "--graphs", "2", "--seed", "7"}, 0, jsonout.Seed(7), nil},
		{"check-fails", "check", []string{"check", "--ops", "mul", "--cases", "4", "--graphs", "0", "--plant-fault", "mul"}, 1, jsonout.Seed(0), nil},
		{"check-case", "check", []string{"check", "--ops", "mul", "--case", "3", "--graphs", "0"}, 0, jsonout.Seed(0), nil},
		{"certify", "certify", []string{"certify", "--out", certs, "--cases", "2", "--seed", "5"}, 0, jsonout.Seed(5), nil},
		{"verify", "verify", []string{"verify", certs}, 0, jsonout.Seed(5), []string{filepath.Join(certs, certificates.ManifestName)}},
		{"gate", "gate", []string{"gate", "--out", filepath.Join(dir, "g"), "--cases", "3", "--graphs", "2", "--cert-cases", "2", "--seed", "9"}, 0, jsonout.Seed(9), nil},
		{"gate-fails", "gate", []string{"gate", "--out", filepath.Join(dir, "g2"), "--cases", "3", "--graphs", "1", "--cert-cases", "2", "--plant-provider-bug", "sum"}, 1, jsonout.Seed(0), nil},
		{"diff", "diff", []string{"diff", "--graph", quad, "--input", qin}, 0, nil, []string{quad, qin}},
		{"diff-mlp", "diff", append([]string{"diff"}, mlp...), 0, nil, []string{irExamples[2].graph, irExamples[2].payload, irExamples[2].input}},
		{"eval-rat", "eval", []string{"eval", "--graph", quad, "--input", qin, "--all"}, 0, nil, []string{quad, qin}},
		{"eval-interval", "eval", append(append([]string{"eval"}, mlp...), "--scalar", "interval", "--all"), 0, nil, nil},
		{"eval-binary32", "eval", []string{"eval", "--graph", quad, "--input", qin, "--scalar", "binary32"}, 0, nil, nil},
		{"grad", "grad", append([]string{"grad"}, mlp...), 0, nil, nil},
		{"grad-f64", "grad", []string{"grad", "--graph", quad, "--input", qin, "--scalar", "f64"}, 0, nil, nil},
		{"plan", "plan", []string{"plan", "--graph", irExamples[2].graph}, 0, nil, []string{irExamples[2].graph}},
		{"plan-fast", "plan", []string{"plan", "--graph", irExamples[2].graph, "--profile", "fast_cpu"}, 0, nil, nil},
		{"plan-rejected", "plan", []string{"plan", "--graph", iro, "--profile", "checked_cuda"}, 1, nil, []string{iro}},
		{"tape-example", "tape-example", []string{"tape-example"}, 0, nil, nil},
		{"tape-example-f32", "tape-example", []string{"tape-example", "--scalar", "f32", "--detach"}, 0, nil, nil},
		{"compare", "compare", []string{"compare", "--onnx", om, "--data", od}, 0, nil, []string{om, filepath.Join(od, "input_0.pb"), filepath.Join(od, "output_0.pb")}},
		{"compare-fails", "compare", []string{"compare", "--onnx", bm, "--data", bd}, 1, nil, nil},
		{"import", "import", []string{"import", "--onnx", om, "--out", filepath.Join(dir, "imported")}, 0, nil, []string{om}},
		{"grad-onnx", "grad", []string{"grad", "--onnx", om, "--data", od}, 0, nil, []string{om, filepath.Join(od, "input_0.pb")}},
		{"grad-onnx-interval", "grad", []string{"grad", "--onnx", om, "--data", od, "--scalar", "interval", "--cotangent", filepath.Join(filepath.Dir(om), "cotangent.pb")}, 0, nil, nil},
		{"eval-onnx", "eval", []string{"eval", "--onnx", om, "--data", od}, 0, nil, nil},
		{"plan-onnx", "plan", []string{"plan", "--onnx", om}, 0, nil, []string{om}},
		{"diff-onnx", "diff", []string{"diff", "--onnx", om, "--data", od, "--scalars", "rat"}, 0, nil, nil},
		{"compare-grad", "compare-grad", []string{"compare-grad", "--onnx", om, "--data", od, "--grads", goodGrads}, 0, nil, []string{om, filepath.Join(od, "input_0.pb"), goodGrads}},
		{"compare-grad-fails", "compare-grad", []string{"compare-grad", "--onnx", om, "--input", filepath.Join(od, "input_0.pb"), "--grads", badGrads}, 1, nil, nil},
		{"certify-onnx", "certify", []string{"certify", "--onnx", om, "--data", od, "--out", modelCerts, "--cases", "2"}, 0, jsonout.Seed(0), nil},
	}
	docs := map[string][]byte{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(append([]string{c.args[0], "--json"}, c.args[1:]...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s\n%s", code, c.code, errs, out)
			}
			if err := compiled(t, c.kind).Validate([]byte(out)); err != nil {
				t.Fatalf("does not match schemas/%s.vN.json: %v\n%s", c.kind, err, out)
			}
			var h jsonout.Header
			if err := json.Unmarshal([]byte(out), &h); err != nil {
				t.Fatal(err)
			}
			version := map[string]string{"compare-grad": "v3"}[c.kind] // the kinds past v1
			if version == "" {
				version = "v1"
			}
			if h.Format != "tlcheck."+c.kind+"."+version || h.RegistryHash != spec.RegistryHash() {
				t.Errorf("header %+v", h)
			}
			if (h.Seed == nil) != (c.seed == nil) || (h.Seed != nil && *h.Seed != *c.seed) {
				t.Errorf("seed %v, want %v", h.Seed, c.seed)
			}
			for i, p := range c.inputs {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if i >= len(h.Inputs) || h.Inputs[i].Path != p || h.Inputs[i].SHA256 != jsonout.SHA256(data) {
					t.Errorf("input %d: header has %+v, want %s with the SHA-256 of its bytes", i, h.Inputs, p)
				}
			}
			docs[c.name] = []byte(out)
		})
	}
	// Numbers are numbers: a check result's worst measure and a refine
	// item's ratio are JSON numbers, not text.
	if d := docs["check"]; d != nil && !regexp.MustCompile(`"worst_bits": [0-9]+,`).Match(d) {
		t.Errorf("check: no numeric worst_bits:\n%s", d)
	}
	if d := docs["gate"]; d != nil && !regexp.MustCompile(`"worst_ratio": [0-9.e-]+,`).Match(d) {
		t.Error("gate: no numeric worst_ratio")
	}
	if d := docs["eval-interval"]; d != nil && !regexp.MustCompile(`"lo": [0-9.e-]+,\s+"hi": [0-9.e-]+`).Match(d) {
		t.Errorf("eval interval: values are not {lo, hi} objects:\n%s", d)
	}
	// The certificates certify wrote match certificates/schema.json, the
	// same validator on the certificate format's published schema.
	cs, err := os.ReadFile(filepath.Join("..", "..", "certificates", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	certSchema, err := jsonschema.Compile(cs)
	if err != nil {
		t.Fatalf("certificates/schema.json: %v", err)
	}
	// The map import wrote matches schemas/onnx-map.v1.json.
	if data, err := os.ReadFile(filepath.Join(dir, "imported", "onnx-map.json")); err != nil {
		t.Error(err)
	} else if err := compiled(t, "onnx-map").Validate(data); err != nil {
		t.Errorf("onnx-map.json does not match schemas/onnx-map.v1.json: %v\n%s", err, data)
	}
	n := 0
	for _, root := range []string{certs, modelCerts} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, _ := os.ReadFile(p)
			if err := certSchema.Validate(data); err != nil {
				t.Errorf("%s: %v", p, err)
			}
			n++
			return nil
		})
	}
	if n < 2 {
		t.Errorf("validated %d certificate files", n)
	}
}

// TestJSONSchemaCatchesPlantedFaults edits real documents the way a
// regression would (a number turned into text, an interval into a
// string, a field renamed or dropped, the format bumped) and checks that
// the schema rejects each edit.
func TestJSONSchemaCatchesPlantedFaults(t *testing.T) {
	_, check, _ := runCmd("check", "--ops", "mul", "--cases", "3", "--graphs", "0", "--json")
	_, eval, _ := runCmd(append(append([]string{"eval"}, irExamples[2].args("")[1:]...), "--scalar", "interval", "--json")...)
	faults := []struct {
		kind, doc, from, to string
	}{
		{"check", check, `"worst_bits": `, `"worst_bits": "bits=`},
		{"check", check, `"format": "tlcheck.check.v1"`, `"format": "tlcheck.check.v2"`},
		{"check", check, `"holds": true`, `"hold": true`},
		{"check", check, `"seed": 0,`, ``},
		{"check", check, `"oracles": {`, `"oracles": {"x": "1",`},
		{"eval", eval, `"lo": `, `"low": `},
		{"eval", eval, `"values": [`, `"values": ["[0.1, 0.2]", `},
		{"eval", eval, `"sha256": "`, `"sha256": "X`},
	}
	for _, f := range faults {
		s := compiled(t, f.kind)
		if err := s.Validate([]byte(f.doc)); err != nil {
			t.Fatalf("%s: the unedited document fails: %v", f.kind, err)
		}
		if !strings.Contains(f.doc, f.from) {
			t.Fatalf("%s: %q not in the document", f.kind, f.from)
		}
		bad := strings.Replace(f.doc, f.from, f.to, 1)
		if f.to == "" { // dropping a field leaves valid JSON only if it was not last
			bad = strings.Replace(f.doc, f.from, "", 1)
		}
		if err := s.Validate([]byte(bad)); err == nil {
			t.Errorf("%s: edit %q → %q accepted", f.kind, f.from, f.to)
		}
	}
}

// TestJSONDeterministic: the same inputs and seed give byte-identical
// documents (the gate's, which carries wall times, is the exception).
func TestJSONDeterministic(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--ops", "mul,exp", "--cases", "5", "--graphs", "2", "--seed", "3", "--json"},
		{"eval", "--graph", examplePath("quad.ir.json"), "--input", examplePath("quad.input.json"), "--all", "--json", "--scalar", "interval"},
		{"tape-example", "--json"},
	} {
		_, a, _ := runCmd(args...)
		_, b, _ := runCmd(args...)
		if a != b || a == "" {
			t.Errorf("%v: two runs differ", args)
		}
	}
}

// TestJUnitOnePerObligation: the gate's JUnit report has one testcase per
// primitive × obligation (counted from the registry) under
// tlcheck.check.OP, one per graph obligation, every testcase and suite
// with a time attribute that parses as seconds, and a failing planted
// provider bug marked on exactly its testcase.
func TestJUnitOnePerObligation(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "gate.xml")
	code, _, errs := runCmd("gate", "--out", filepath.Join(dir, "c"), "--junit", junit, "--cases", "2", "--graphs", "1", "--cert-cases", "2", "--plant-provider-bug", "sum")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var js junitSuites
	if err := xml.Unmarshal(data, &js); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, info := range spec.Infos() {
		for _, ob := range obligations.ObligationsFor(info) {
			want["tlcheck.check."+info.Name+" "+string(ob)] = true
		}
	}
	for _, ob := range obligations.GlobalObligations() {
		want["tlcheck.check.graphs "+string(ob)] = true
	}
	timeRE := regexp.MustCompile(`^[0-9]+\.[0-9]{3}$`)
	got := map[string]bool{}
	var failed []string
	for _, s := range js.Suites {
		if !timeRE.MatchString(s.Time) {
			t.Errorf("suite %s: time %q", s.Name, s.Time)
		}
		for _, c := range s.Cases {
			if !timeRE.MatchString(c.Time) {
				t.Errorf("testcase %s %s: time %q", c.Classname, c.Name, c.Time)
			}
			if s.Name == "tlcheck.check" {
				key := c.Classname + " " + c.Name
				if got[key] {
					t.Errorf("testcase %s twice", key)
				}
				got[key] = true
			}
			if c.Failure != nil {
				failed = append(failed, c.Classname+" "+c.Name)
			}
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("no testcase %s", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("unexpected testcase %s", k)
		}
	}
	// The flipped bit breaks the refinement bound and, as a result that is
	// not the documented order's, the declared-order check of sum.
	if len(failed) != 2 || failed[0] != "tlcheck.refine fast_cpu.sum" || failed[1] != "tlcheck.refine fast_cpu.sum/declared-order" {
		t.Errorf("failed testcases %v, want tlcheck.refine fast_cpu.sum and fast_cpu.sum/declared-order", failed)
	}
	if !bytes.Contains(data, []byte(`<testsuites name="tlcheck gate" tests=`)) || !regexp.MustCompile(`<testsuites [^>]*time="[0-9]+\.[0-9]{3}"`).Match(data) {
		t.Errorf("testsuites element lacks its time:\n%.300s", data)
	}
}

// TestVerifyJSONTampered: a tampered certificate makes verify --json exit
// 1 with a document that still matches its schema and names the file.
func TestVerifyJSONTampered(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	if code, _, errs := runCmd("certify", "--out", dir, "--cases", "2", "--ops", "mul", "--providers", "reference"); code != 0 {
		t.Fatalf("certify: %d %s", code, errs)
	}
	victim := filepath.Join(dir, "adjointness", "mul.json")
	data, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, bytes.Replace(data, []byte(`"cases"`), []byte(` "cases"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd("verify", "--json", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	if err := compiled(t, "verify").Validate([]byte(out)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var doc jsonout.VerifyDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, f := range doc.Files {
		if !f.Holds {
			bad++
			if f.Path != "adjointness/mul.json" || f.Error == "" {
				t.Errorf("failing file %+v", f)
			}
		}
	}
	if doc.Holds || bad != 1 || doc.Failures != 1 {
		t.Errorf("holds %v, %d failing files, failures %d; want one", doc.Holds, bad, doc.Failures)
	}
}
