package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileFlag: compare and compare-grad take --profile, record a
// non-default profile in their JSON documents (and omit the default, so
// existing documents keep their bytes), and refuse an unknown profile in
// one line, exit 2. The profiles' effect on verdicts is fpbound's
// (TestProfile* there, against ONNX Runtime's recorded sigmoid).
func TestProfileFlag(t *testing.T) {
	om, od := onnxFixture(t)
	grads := writeTemp(t, t.TempDir(), "grads.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2.0,0.0]}}}`)
	cases := []struct {
		name string
		args []string
		code int
		want string // in stdout (exit 0) or stderr
		not  string // not in stdout
	}{
		{"compare-ort", []string{"compare", "--onnx", om, "--data", od, "--json", "--profile", "onnxruntime-cpu"}, 0, `"profile": "onnxruntime-cpu"`, ""},
		{"compare-default", []string{"compare", "--onnx", om, "--data", od, "--json"}, 0, `"ulps"`, `"profile"`},
		{"compare-bad", []string{"compare", "--onnx", om, "--data", od, "--profile", "cuda-fast"}, 2, `--profile: unknown value "cuda-fast" (want ieee|onnxruntime-cpu|pytorch-cpu)`, ""},
		{"compare-sequential", []string{"compare", "--onnx", om, "--data", od, "--json", "--profile", "ieee+sequential"}, 0, `"profile": "ieee+sequential"`, ""},
		{"compare-bad-order", []string{"compare", "--onnx", om, "--data", od, "--profile", "ieee+blocked:1"}, 2, `--profile: unknown summation order "blocked:1" in "ieee+blocked:1"`, ""},
		{"compare-bad-base-order", []string{"compare", "--onnx", om, "--data", od, "--profile", "cuda+sequential"}, 2, `--profile: unknown value "cuda+sequential"`, ""},
		{"grad-blocked", []string{"compare-grad", "--onnx", om, "--data", od, "--grads", grads, "--json", "--profile", "pytorch-cpu+blocked:8"}, 0, `"profile": "pytorch-cpu+blocked:8"`, ""},
		{"grad-pytorch", []string{"compare-grad", "--onnx", om, "--data", od, "--grads", grads, "--json", "--profile", "pytorch-cpu"}, 0, `"profile": "pytorch-cpu"`, ""},
		{"grad-default", []string{"compare-grad", "--onnx", om, "--data", od, "--grads", grads, "--json"}, 0, `"ulps"`, `"profile"`},
		{"grad-bad", []string{"compare-grad", "--onnx", om, "--input", filepath.Join(od, "input_0.pb"), "--grads", grads, "--profile", "x"}, 2, `--profile: unknown value "x"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errs)
			}
			where := out
			if c.code != 0 {
				where = errs
				if strings.Count(strings.TrimSuffix(errs, "\n"), "\n") != 0 {
					t.Errorf("stderr is not one line: %q", errs)
				}
			}
			if !strings.Contains(where, c.want) {
				t.Errorf("%q not in\n%s", c.want, where)
			}
			if c.not != "" && strings.Contains(out, c.not) {
				t.Errorf("%q in\n%s", c.not, out)
			}
		})
	}
}
