package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// gradBody decodes a grad document into doc and returns its values
// (loss and gradients) as compact JSON with a newline.
func gradBody(t *testing.T, out string, doc *jsonout.GradDoc) string {
	t.Helper()
	if err := json.Unmarshal([]byte(out), doc); err != nil {
		t.Fatalf("not a grad document: %v\n%s", err, out)
	}
	b, err := json.Marshal(struct {
		Loss jsonout.Tensor     `json:"loss"`
		Grad jsonout.GradValues `json:"grad"`
	}{doc.Loss, doc.Grad})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestGradChapter: tlcheck grad reproduces the chapter's gradients exactly
// over rat through both paths: (12, −6), and (6, −3) with detach.
func TestGradChapter(t *testing.T) {
	for _, c := range []struct {
		e    irExample
		want string
	}{{irExamples[0], "grad input = [12, -6]\n"}, {irExamples[1], "grad input = [6, -3]\n"}} {
		for _, path := range []string{"tape", "typed-graph"} {
			code, out, errs := runCmd(c.e.args("grad", "--scalar", "rat", "--path", path)...)
			if code != 0 || out != "loss = 22.5 (= 45/2)\n"+c.want {
				t.Errorf("%s/%s: exit %d, stdout %q (stderr %q)", c.e.name, path, code, out, errs)
			}
		}
	}
	// The default scalar is rat and the default path the tape.
	if code, out, _ := runCmd(irExamples[0].args("grad")...); code != 0 || !strings.Contains(out, "grad input = [12, -6]") {
		t.Errorf("defaults: exit %d, %q", code, out)
	}
}

func TestGradJSON(t *testing.T) {
	cases := []struct {
		e    irExample
		args []string
		want string
	}{
		{irExamples[0], nil, `{"loss":{"shape":[],"values":["45/2"]},"grad":{"input":{"shape":[2],"values":["12","-6"]},"params":{}}}` + "\n"},
		{irExamples[1], []string{"--path", "typed-graph"}, `{"loss":{"shape":[],"values":["45/2"]},"grad":{"input":{"shape":[2],"values":["6","-3"]},"params":{}}}` + "\n"},
		{irExamples[0], []string{"--scalar", "f32"}, `{"loss":{"shape":[],"values":[22.5]},"grad":{"input":{"shape":[2],"values":[12,-6]},"params":{}}}` + "\n"},
		{irExamples[2], nil, `{"loss":{"shape":[1],"values":["9443/28800"]},"grad":{"input":{"shape":[2],"values":["653/2880","-307/2880"]},"params":{` +
			`"node1.W":{"shape":[8,2],"values":["1/8","-3/8","0","0","0","0","-1/20","3/20","0","0","0","0","1/32","-3/32","-1/36","1/12"]},` +
			`"node1.b":{"shape":[8],"values":["1/2","0","0","-1/5","0","0","1/8","-1/9"]},` +
			`"node3.W":{"shape":[1,8],"values":["5/16","0","0","9/20","0","0","15/16","1/2"]},` +
			`"node3.b":{"shape":[1],"values":["1"]}}}}` + "\n"},
	}
	for _, c := range cases {
		code, out, errs := runCmd(c.e.args("grad", append([]string{"--json"}, c.args...)...)...)
		var doc jsonout.GradDoc
		body := gradBody(t, out, &doc)
		if code != 0 || body != c.want {
			t.Errorf("%s %v: exit %d (stderr %q)\n got %s\nwant %s", c.e.name, c.args, code, errs, body, c.want)
		}
		if doc.Format != "tlcheck.grad.v1" || doc.Seed != nil || len(doc.Inputs) < 2 || doc.Inputs[0].Role != "graph" || doc.Inputs[len(doc.Inputs)-1].Role != "input" {
			t.Errorf("%s %v: header %+v", c.e.name, c.args, doc.Header)
		}
	}
}

// TestGradPathsAgree: both paths print identical results on every
// example and scalar.
func TestGradPathsAgree(t *testing.T) {
	for _, e := range irExamples {
		for _, scalar := range []string{"rat", "f32", "f64"} {
			_, a, _ := runCmd(e.args("grad", "--scalar", scalar, "--path", "tape", "--json")...)
			code, b, errs := runCmd(e.args("grad", "--scalar", scalar, "--path", "typed-graph", "--json")...)
			var da, db jsonout.GradDoc
			a, b = gradBody(t, a, &da), gradBody(t, b, &db)
			if code != 0 || a != b || a == "" {
				t.Errorf("%s/%s: tape %q, typed-graph %q (exit %d, %s)", e.name, scalar, a, b, code, errs)
			}
		}
	}
}

// TestGradCotangent: an output that is not one element is differentiated
// as ⟨cotangent, output⟩, the cotangent all ones by default. relu at
// (1, −2) has derivative (1, 0) (relu′(−2) = 0), so the input's gradient
// is (1, 0) for ones and (5, 0) for the cotangent (5, 7) — by hand.
func TestGradCotangent(t *testing.T) {
	dir := t.TempDir()
	g := writeTemp(t, dir, "vector.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"relu","parents":[0],"shape":[2]}
]}`)
	x := writeTemp(t, dir, "x.json", `{"shape":[2],"values":["1","-2"]}`)
	ct := writeTemp(t, dir, "ct.json", `{"shape":[2],"values":["5","7"]}`)
	cases := []struct {
		args []string
		want string
	}{
		{nil, "scalar = rat (exact rationals)\noutput = [1, 0]\ncotangent = ones (the gradient of the sum of the outputs)\ngrad input = [1, 0]\n"},
		{[]string{"--cotangent", ct}, "scalar = rat (exact rationals)\noutput = [1, 0]\ncotangent = [5, 7]\ngrad input = [5, 0]\n"},
		{[]string{"--cotangent", ct, "--path", "typed-graph", "--scalar", "f64"}, "output = [1, 0]\ncotangent = [5, 7]\ngrad input = [5, 0]\n"},
	}
	for _, c := range cases {
		code, out, errs := runCmd(append([]string{"grad", "--graph", g, "--input", x}, c.args...)...)
		if code != 0 || out != c.want {
			t.Errorf("%v: exit %d, stdout %q (stderr %q), want %q", c.args, code, out, errs, c.want)
		}
	}
}
