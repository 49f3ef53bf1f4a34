package limits

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	for _, c := range []struct{ name, flag, env string }{
		{"nodes", "--max-nodes", "TLCHECK_MAX_NODES"},
		{"graph-elements", "--max-graph-elements", "TLCHECK_MAX_GRAPH_ELEMENTS"},
		{"rat-bits-total", "--max-rat-bits-total", "TLCHECK_MAX_RAT_BITS_TOTAL"},
		{"onnx-bytes", "--max-onnx-bytes", "TLCHECK_MAX_ONNX_BYTES"},
	} {
		if Flag(c.name) != c.flag || Env(c.name) != c.env {
			t.Errorf("%s: %s %s", c.name, Flag(c.name), Env(c.name))
		}
	}
	e := Exceeded("nodes", 10, "the graph has %d nodes", 11)
	if got, want := e.Error(), "the graph has 11 nodes: over the nodes limit 10 (raise it with --max-nodes or TLCHECK_MAX_NODES)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if !IsLimit(e) || IsLimit(io.EOF) {
		t.Error("IsLimit")
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	l, err := FromEnv(get)
	if err != nil || l != Default() {
		t.Fatalf("%v %v", l, err)
	}
	env["TLCHECK_MAX_WORK"] = "12345"
	if l, err = FromEnv(get); err != nil || l.Work != 12345 || l.Nodes != DefaultNodes {
		t.Fatalf("%+v %v", l, err)
	}
	for _, bad := range []string{"0", "-3", "+3", "1e3", "1.5", "abc", " 5", "99999999999999999999"} {
		env["TLCHECK_MAX_WORK"] = bad
		if _, err := FromEnv(get); err == nil || !strings.HasPrefix(err.Error(), "TLCHECK_MAX_WORK: ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	env["TLCHECK_MAX_WORK"] = ""
	env["TLCHECK_MAX_NODES"] = "2000000" // above the wire's 2^20 node ids
	if _, err := FromEnv(get); err == nil || !strings.Contains(err.Error(), "more than 1048576") {
		t.Errorf("nodes above the wire bound: %v", err)
	}
}

// TestFlagsSetAndRestore: AddFlags registers one flag per limit whose
// parsed value is in force; Set's restore function brings back the
// previous limits.
func TestFlagsSetAndRestore(t *testing.T) {
	t.Setenv("TLCHECK_MAX_PARENTS", "7")
	defer Set(Current())()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := AddFlags(fs); err != nil {
		t.Fatal(err)
	}
	n := 0
	fs.VisitAll(func(f *flag.Flag) { n++ })
	if n != len(knobs) {
		t.Errorf("%d flags for %d limits", n, len(knobs))
	}
	if Current().Parents != 7 || fs.Lookup("max-parents").DefValue != "7" {
		t.Errorf("environment not in force: %+v", Current())
	}
	if err := fs.Parse([]string{"--max-rat-bits", "99"}); err != nil {
		t.Fatal(err)
	}
	if c := Current(); c.RatBits != 99 || c.Parents != 7 {
		t.Errorf("%+v", c)
	}
	if err := fs.Parse([]string{"--max-rat-bits", "0"}); err == nil {
		t.Error("0 accepted")
	}
	restore := Set(Limits{Nodes: 3})
	if c := Current(); c.Nodes != 3 || c.Work != DefaultWork {
		t.Errorf("zero fields must be defaults: %+v", c)
	}
	restore()
	if Current().RatBits != 99 {
		t.Error("restore")
	}
}

func TestQuote(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	cases := []struct{ in, quote, short string }{
		{"relu", `"relu"`, "relu"},
		{"a\nb", `"a\nb"`, `a\nb`},
		{long, `"` + strings.Repeat("é", 32) + `"… (200 bytes)`, strings.Repeat("é", 32) + "… (200 bytes)"},
	}
	for _, c := range cases {
		if got := Quote(c.in); got != c.quote {
			t.Errorf("Quote: %q", got)
		}
		if got := Short(c.in); got != c.short {
			t.Errorf("Short: %q", got)
		}
	}
	if got := Line(strings.Repeat("y", 5000)); len(got) != LineBytes+len("…") {
		t.Errorf("Line: %d bytes", len(got))
	}
}

// TestEscape: every character a terminal would act on is escaped —
// control characters (ANSI sequences, CR, NUL), bidirectional overrides,
// line separators, invalid UTF-8 — and printable text is left alone.
func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"relu", "relu"},
		{"x ⊙ y é", "x ⊙ y é"},
		{"\x1b[2Jaccepted", `\x1b[2Jaccepted`},
		{"a\r\nb\x00", `a\r\nb\x00`},
		{"evil\u202etxt.exe", `evil\u202etxt.exe`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad\xff\xfe", `bad\xff\xfe`},
		{"tab\tdel\x7f", `tab\tdel\x7f`},
	} {
		got := Escape(c.in)
		if got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		for _, b := range []byte(got) {
			if b < 0x20 || b == 0x7f {
				t.Errorf("Escape(%q) holds byte %#x", c.in, b)
			}
		}
	}
}

// TestONNXLimits: the reader's limits have their documented defaults and
// are set by their environment variables.
func TestONNXLimits(t *testing.T) {
	d := Default()
	if d.ONNXBytes != 1<<30 || d.ONNXElements != 160<<20 || d.ONNXNames != 1<<18 {
		t.Errorf("defaults %+v", d)
	}
	env := map[string]string{"TLCHECK_MAX_ONNX_BYTES": "1000", "TLCHECK_MAX_ONNX_ELEMENTS": "20", "TLCHECK_MAX_ONNX_NAMES": "3"}
	l, err := FromEnv(func(k string) string { return env[k] })
	if err != nil || l.ONNXBytes != 1000 || l.ONNXElements != 20 || l.ONNXNames != 3 {
		t.Errorf("%+v %v", l, err)
	}
	if l := (Limits{}).fill(); l != Default() {
		t.Errorf("zero limits fill to %+v", l)
	}
}
