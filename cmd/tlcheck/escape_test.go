package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorLinesEscaped (issue 26 point 8, beyond lean audit): an error
// line that echoes a name from the input — an op name or node id inside
// a graph, a file name — prints it escaped: no ESC, CR, NUL or
// right-to-left override reaches the terminal, and a newline cannot forge
// a second line.
func TestErrorLinesEscaped(t *testing.T) {
	dir := t.TempDir()
	hostile := "\x1b[2J\r\x00\u202eaccepted\n| ok |"
	graph := writeTemp(t, dir, "g.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[`+
		node(0, "input", nil, "[1]", "")+`,{"id":1,"kind":"relu\u001b[31m\r\u0000\u202e\n| accepted |","parents":[0],"shape":[1]}]}`)
	x := writeTemp(t, dir, "x.json", `{"shape":[1],"values":["1"]}`)
	for _, args := range [][]string{
		{"eval", "--graph", graph, "--input", x},
		{"eval", "--graph", filepath.Join(dir, hostile+".json"), "--input", x},
		{"verify", filepath.Join(dir, hostile)},
		{"eval", "--graph", graph, "--input", filepath.Join(dir, hostile)},
	} {
		code, _, errs := runCmd(args...)
		if code != 2 || strings.Count(errs, "\n") != 1 || !strings.HasSuffix(errs, "\n") {
			t.Errorf("%q: exit %d, want 2 with one line: %q", args, code, errs)
		}
		for _, b := range []byte(strings.TrimSuffix(errs, "\n")) {
			if b < 0x20 || b == 0x7f {
				t.Errorf("%q: raw byte %#x on the error line: %q", args, b, errs)
				break
			}
		}
		if strings.Contains(errs, "\u202e") {
			t.Errorf("%q: a raw right-to-left override on the error line: %q", args, errs)
		}
	}
}
