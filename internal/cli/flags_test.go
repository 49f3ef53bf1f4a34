package cli

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testFlags is a flag set with one flag of every kind the commands use.
func testFlags() *flag.FlagSet {
	fs := NewFlags("demo")
	fs.Int("cases", 100, "cases per primitive")
	fs.Uint64("seed", 0, "generation seed")
	fs.Bool("json", false, "print JSON")
	fs.String("out", "tlcheck-certs", "write the certificates to `DIR`")
	fs.String("junit", "", "also write a JUnit report")
	fs.Float64("tol", 0.5, "a tolerance")
	fs.Duration("timeout", time.Second, "a time limit")
	fs.String("graph", "", "the graph file (required)")
	return fs
}

// TestParseErrors: each parse error names the flag as --NAME (whichever
// spelling was typed) and says why, in one line; the expected messages
// are written from the "--seed: not an integer: abc" style.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--seed", "abc"}, "--seed: not an integer: abc"},
		{[]string{"-seed", "abc"}, "--seed: not an integer: abc"},
		{[]string{"--seed=abc"}, "--seed: not an integer: abc"},
		{[]string{"--seed", "-1"}, "--seed: not an unsigned integer (must be ≥ 0): -1"},
		{[]string{"--seed", "-0"}, "--seed: not an unsigned integer (must be ≥ 0): -0"},
		{[]string{"--seed", "+5"}, "--seed: not an unsigned integer (no sign allowed): +5"},
		{[]string{"--seed", "18446744073709551616"}, "--seed: out of range: 18446744073709551616"},
		{[]string{"--cases", "1.5"}, "--cases: not an integer: 1.5"},
		{[]string{"--cases", ""}, `--cases: not an integer: ""`},
		{[]string{"--cases", "9223372036854775808"}, "--cases: out of range: 9223372036854775808"},
		{[]string{"--json=maybe"}, "--json: not a boolean (want true or false): maybe"},
		{[]string{"--tol", "x"}, "--tol: not a number: x"},
		{[]string{"--tol", "1e999"}, "--tol: out of range: 1e999"},
		{[]string{"--timeout", "5"}, "--timeout: not a duration (such as 30s or 2m): 5"},
		{[]string{"--seed"}, "--seed: missing value"},
		{[]string{"-seed"}, "--seed: missing value"},
		{[]string{"--nope"}, "demo: unknown flag --nope (run 'tlcheck help demo')"},
		{[]string{"-nope=3"}, "demo: unknown flag --nope (run 'tlcheck help demo')"},
		{[]string{"---x"}, "demo: bad flag syntax: ---x"},
		{[]string{"stray"}, `demo: unexpected argument "stray"`},
		{[]string{strings.Repeat("a", 1000)}, `demo: unexpected argument "` + strings.Repeat("a", 40) + `… (1000 bytes)"`},
		// The first bad value is the one reported.
		{[]string{"--cases", "x", "--seed", "y"}, "--cases: not an integer: x"},
		// A huge value is cut in the message.
		{[]string{"--seed", strings.Repeat("9", 100) + "x"}, `--seed: not an integer: "` + strings.Repeat("9", 40) + `… (101 bytes)"`},
	}
	for _, c := range cases {
		err := Parse(testFlags(), c.args, 0)
		if err == nil || err.Error() != c.want || Code(err) != ExitBadUser {
			t.Errorf("%q: got %v (exit %d), want %q (exit 2)", c.args, err, Code(err), c.want)
		}
	}
	// Good values still parse, through the wrapped values.
	fs := testFlags()
	if err := Parse(fs, []string{"--seed", "7", "--json", "-cases=3", "--out", "d"}, 0); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"seed": "7", "json": "true", "cases": "3", "out": "d"} {
		if got := fs.Lookup(name).Value.String(); got != want {
			t.Errorf("--%s = %s, want %s", name, got, want)
		}
	}
	// Parsing the same set twice neither double-wraps nor loses errors.
	if err := Parse(fs, []string{"--seed", "q"}, 0); err == nil || err.Error() != "--seed: not an integer: q" {
		t.Errorf("second parse: %v", err)
	}
}

// TestWriteUsage: every flag appears once, sorted, with its type, its
// one-line description and its default; the expected lines are written
// out by hand.
func TestWriteUsage(t *testing.T) {
	var b bytes.Buffer
	if err := WriteUsage(&b, "tlcheck demo [flags]", "a demo", testFlags()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"usage: tlcheck demo [flags]\n\na demo\n\nflags:\n",
		"  --cases int         cases per primitive (default: 100)\n",
		"  --graph string      the graph file (required)\n",
		"  --json              print JSON (default: false)\n",
		"  --junit string      also write a JUnit report (default: none)\n",
		"  --out DIR           write the certificates to DIR (default: tlcheck-certs)\n",
		"  --seed uint         generation seed (default: 0)\n",
		"  --timeout duration  a time limit (default: 1s)\n",
		"  --tol float         a tolerance (default: 0.5)\n",
		"  -h, --help          print this help and exit 0\n",
	}
	if got := b.String(); got != strings.Join(want, "") {
		t.Fatalf("usage:\n%s\nwant:\n%s", got, strings.Join(want, ""))
	}
	// After a parse (values wrapped), the usage is the same.
	fs := testFlags()
	_ = Parse(fs, []string{"--seed", "3"}, 0)
	var b2 bytes.Buffer
	_ = WriteUsage(&b2, "tlcheck demo [flags]", "a demo", fs)
	if b2.String() != b.String() {
		t.Fatalf("usage after Parse differs:\n%s", b2.String())
	}
}

func TestList(t *testing.T) {
	cases := []struct {
		v    string
		want []string
		err  string
	}{
		{"mul", []string{"mul"}, ""},
		{"mul, add ,tanh", []string{"mul", "add", "tanh"}, ""},
		{"", nil, "--ops: empty value (give a comma-separated list)"},
		{"  ", nil, "--ops: empty value (give a comma-separated list)"},
		{"mul,,add", nil, "--ops: empty element 1 in mul,,add"},
		{"mul,", nil, "--ops: empty element 1 in mul,"},
	}
	for _, c := range cases {
		got, err := List("ops", c.v)
		if c.err != "" {
			if err == nil || err.Error() != c.err || Code(err) != ExitBadUser {
				t.Errorf("%q: err %v, want %q", c.v, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q: %q %v", c.v, got, err)
		}
	}
}

func TestCountAgree(t *testing.T) {
	cases := []struct {
		n          int
		count, Are string
	}{{0, "0 failures", "fail"}, {1, "1 failure", "fails"}, {2, "2 failures", "fail"}}
	for _, c := range cases {
		if got := Count(c.n, "failure", "failures"); got != c.count {
			t.Errorf("Count(%d) = %q", c.n, got)
		}
		if got := Agree(c.n, "fails", "fail"); got != c.Are {
			t.Errorf("Agree(%d) = %q", c.n, got)
		}
	}
}

func TestQuote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"abc", "abc"},
		{"", `""`},
		{"a b", `"a b"`},
		{"a\nb", `"a\nb"`},
		{`a"b`, `"a\"b"`},
		{strings.Repeat("é", 40), `"` + strings.Repeat("é", 20) + `… (80 bytes)"`},
	}
	for _, c := range cases {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// failWriter fails every write after the first limit bytes.
type failWriter struct {
	limit, n int
}

var errFull = errors.New("no space left on device")

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		k := w.limit - w.n
		w.n = w.limit
		return k, errFull
	}
	w.n += len(p)
	return len(p), nil
}

func TestOutput(t *testing.T) {
	fw := &failWriter{limit: 4}
	o := NewOutput(fw)
	if _, err := o.Write([]byte("abc")); err != nil || o.Err() != nil {
		t.Fatal(err)
	}
	if _, err := o.Write([]byte("defg")); !errors.Is(err, errFull) || !errors.Is(o.Err(), errFull) {
		t.Fatalf("write error not kept: %v %v", err, o.Err())
	}
	before := fw.n
	if _, err := o.Write([]byte("h")); !errors.Is(err, errFull) || fw.n != before {
		t.Fatal("a write after the failure was attempted")
	}
	if !errors.Is(WriteErr(o), errFull) || WriteErr(&bytes.Buffer{}) != nil {
		t.Fatal("WriteErr")
	}
	// A short write without an error is an error too.
	short := NewOutput(writerFunc(func(p []byte) (int, error) { return len(p) - 1, nil }))
	if _, err := short.Write([]byte("xy")); err == nil {
		t.Fatal("short write accepted")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestCheckOutputPath: output paths are judged without creating anything.
func TestCheckOutputPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path    string
		wantDir bool
		err     string
	}{
		{filepath.Join(dir, "new"), true, ""},
		{filepath.Join(dir, "a", "b", "c"), true, ""},
		{dir, true, ""},
		{file, false, ""},
		{filepath.Join(dir, "new.xml"), false, ""},
		{file, true, "exists and is not a directory"},
		{dir, false, "is a directory"},
		{filepath.Join(file, "sub"), true, file + " is not a directory"},
		{filepath.Join(file, "a", "b.xml"), false, file + " is not a directory"},
		{"", true, "empty path"},
	}
	for _, c := range cases {
		err := CheckOutputPath("out", c.path, c.wantDir)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "--out")) {
			t.Errorf("%s (dir %v): %v, want %q", c.path, c.wantDir, err, c.err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("CheckOutputPath created files: %v", ents)
	}
}
