package certificates

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tlcheck/tlcheck/internal/strictjson"
)

// formatOptions certify every built-in kind, small.
var formatOptions = Options{Seed: 11, Cases: 3, Ops: []string{"mul", "sum", "matmul"}}

// certifyAll writes FullSuite's directory for o into dir.
func certifyAll(t *testing.T, dir string, o Options) *Manifest {
	t.Helper()
	m, err := FullSuite().Certify(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// filePaths lists the paths m lists.
func filePaths(m *Manifest) []string {
	var out []string
	for _, e := range m.Files {
		out = append(out, e.Path)
	}
	return out
}

// TestFullDeterministic: the same seed gives byte-identical files,
// whatever GOMAXPROCS is.
func TestFullDeterministic(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	ma := certifyAll(t, a, formatOptions)
	old := runtime.GOMAXPROCS(1)
	certifyAll(t, b, formatOptions)
	runtime.GOMAXPROCS(old)
	for _, rel := range append([]string{ManifestName}, filePaths(ma)...) {
		x, err1 := os.ReadFile(filepath.Join(a, rel))
		y, err2 := os.ReadFile(filepath.Join(b, rel))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Fatalf("%s differs between two runs with the same seed (%v %v)", rel, err1, err2)
		}
	}
	c := t.TempDir()
	o := formatOptions
	o.Seed++
	certifyAll(t, c, o)
	for _, rel := range []string{CompositionName, "refinement/fast_cpu.sum.json", "range/quad.json"} {
		x, _ := os.ReadFile(filepath.Join(a, rel))
		y, _ := os.ReadFile(filepath.Join(c, rel))
		if bytes.Equal(x, y) {
			t.Fatalf("%s does not depend on the seed", rel)
		}
	}
}

// TestCheckRatCanonical: the one spelling of each rational, derived by
// hand.
func TestCheckRatCanonical(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"0", true}, {"-0", false}, {"00", false}, {"1", true}, {"01", false}, {"-01", false},
		{"1/1", false}, {"2/4", false}, {"1/2", true}, {"-1/2", true}, {"1/-2", false}, {"3/6", false},
		{"-7/2", true}, {"7/02", false}, {"0/5", false}, {"1/0", false}, {"+1", false}, {" 1", false},
		{"12345678901234567891/3", true}, {"12345678901234567890/3", false}, {"6/9", false}, {"2/3", true},
	} {
		err := CheckRat("f.json", "x", c.in)
		if (err == nil) != c.ok {
			t.Errorf("checkRat(%q) = %v, want ok=%v", c.in, err, c.ok)
		}
	}
}

// TestRoundTrip: on every file certify writes, the strict reading
// re-serialises to exactly the bytes read.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := certifyAll(t, dir, formatOptions)
	typed := map[string]func() any{
		KindAdjointness: func() any { return new(AdjointnessFile) },
		KindComposition: func() any { return new(CompositionFile) },
		KindRefinement:  func() any { return new(RefinementFile) },
		KindRange:       func() any { return new(RangeFile) },
		"manifest":      func() any { return new(Manifest) },
	}
	files := append([]FileEntry{{Path: ManifestName, Kind: "manifest"}}, m.Files...)
	kinds := map[string]bool{}
	for _, e := range files {
		data, err := os.ReadFile(filepath.Join(dir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		v := typed[e.Kind]()
		if err := strictjson.Decode(data, v); err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		out, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("%s: parse → re-serialise is not the identity", e.Path)
		}
		kinds[e.Kind] = true
	}
	if len(kinds) != len(typed) {
		t.Fatalf("round trip covered kinds %v, want all of %d", kinds, len(typed))
	}
}
