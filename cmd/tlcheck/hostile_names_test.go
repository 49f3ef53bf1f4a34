package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileNamesStdout (issue 26 point 8, the stdout half): an ONNX
// model whose value, node and graph names hold terminal controls (ESC
// sequences that clear the screen or set the title, BEL, CR and a
// right-to-left override — all valid UTF-8, so the reader keeps them) is
// run through every command that prints a report of it. Nothing on
// stdout or stderr holds a raw control character: each name is printed
// escaped (compare names the output, the one report here that echoes a
// value name). The planted names are found in the model's bytes by the
// test, so a reader that dropped them would fail the first check.
func TestHostileNamesStdout(t *testing.T) {
	x, y := "x\x1b[2J\u202e", "y\x1b]0;pwn\x07\rok"
	g := pbuf(nil).
		bytes(1, nodePB("sc\x1bale", "Mul", []string{x, "w"}, "m")).
		bytes(1, nodePB("act", "Relu", []string{"m"}, y)).
		str(2, "fix\x1bture").
		bytes(5, tensorPB("w", []int64{2}, 2, -3)).
		bytes(11, valueInfoPB(x, 2)).
		bytes(12, valueInfoPB(y, 2))
	model := pbuf(nil).varint(1, 8).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13))
	if !strings.Contains(string(model), y) {
		t.Fatal("the planted name is not in the model")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "d")
	mp := filepath.Join(dir, "model.onnx")
	for p, b := range map[string][]byte{
		mp:                                 model,
		filepath.Join(data, "input_0.pb"):  tensorPB(x, []int64{2}, 1.5, 2),
		filepath.Join(data, "output_0.pb"): tensorPB(y, []int64{2}, 3, 0),
		filepath.Join(dir, "grads.json"):   []byte(`{"format":"tlcheck.grads.v1","grads":{"x\u001b[2J\u202e":{"shape":[2],"values":[2,0]}}}`),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	certs := filepath.Join(dir, "c")
	rows := []struct {
		args []string
		says string // a word the report must hold (it ran)
	}{
		{[]string{"eval", "--onnx", mp, "--data", data}, "output"},
		{[]string{"grad", "--onnx", mp, "--data", data}, "grad"},
		{[]string{"compare", "--onnx", mp, "--data", data}, `\x1b]0;pwn`},
		{[]string{"compare-grad", "--onnx", mp, "--data", data, "--grads", filepath.Join(dir, "grads.json")}, ""},
		{[]string{"plan", "--onnx", mp, "--data", data}, "kernel plan"},
		{[]string{"import", "--onnx", mp, "--out", filepath.Join(dir, "imp")}, "imported"},
		{[]string{"certify", "--onnx", mp, "--data", data, "--out", certs, "--cases", "1", "--partial"}, "wrote"},
		{[]string{"verify", certs}, "verified"},
		{[]string{"view", "--onnx", mp, "--out", filepath.Join(dir, "v.html")}, ""},
	}
	for _, r := range rows {
		code, out, errs := runCmd(r.args...)
		if code > 2 {
			t.Errorf("%s: exit %d\n%s%s", r.args[0], code, out, errs)
		}
		if i := strings.IndexAny(out+errs, "\x1b\r\x07\u202e"); i >= 0 {
			t.Errorf("%s: a raw control character at byte %d of the output: %q", r.args[0], i, out+errs)
		}
		if r.says != "" && !strings.Contains(out, r.says) {
			t.Errorf("%s: exit %d, the report does not hold %q:\n%s%s", r.args[0], code, r.says, out, errs)
		}
	}
}
