package verify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
)

// TestCompleteness: the manifest states what a complete directory holds;
// deleting files together with their manifest entries fails, naming each
// missing path, and so does listing a file the options do not call for.
func TestCompleteness(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		drop    []string // files deleted together with their entries
		missing []string // want: a failure under each of these paths
	}{
		{"one file", []string{"adjointness/relu.json"}, []string{"adjointness/relu.json"}},
		{"all but one", []string{"adjointness/matmul.json", "adjointness/relu.json", "adjointness/tanh.json"},
			[]string{"adjointness/matmul.json", "adjointness/relu.json", "adjointness/tanh.json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if _, err := certificates.NewSuite().Certify(dir, oneReadOptions); err != nil {
				t.Fatal(err)
			}
			for _, rel := range c.drop {
				os.Remove(filepath.Join(dir, rel))
			}
			rewrite(t, dir, certificates.ManifestName, editManifest(t, func(m *certificates.Manifest) {
				var keep []certificates.FileEntry
				for _, e := range m.Files {
					drop := false
					for _, d := range c.drop {
						drop = drop || e.Path == d
					}
					if !drop {
						keep = append(keep, e)
					}
				}
				m.Files = keep
			}))
			rep := verifyDir(t, dir)
			for _, p := range c.missing {
				found := false
				for _, f := range rep.Failures() {
					found = found || (f.Path == p && strings.Contains(f.Err.Error(), "is missing"))
				}
				if !found {
					t.Errorf("no failure names missing %s: %v", p, rep.Failures())
				}
			}
			if got := len(rep.Failures()); got != len(c.missing) {
				t.Errorf("%d failures, want %d (one per missing file): %v", got, len(c.missing), rep.Failures())
			}
		})
	}
	// A listed file the options do not call for (with a valid
	// certificate: the op is real, only not in the manifest's ops).
	dir := t.TempDir()
	if _, err := certificates.NewSuite().Certify(dir, oneReadOptions); err != nil {
		t.Fatal(err)
	}
	rewrite(t, dir, certificates.ManifestName, editManifest(t, func(m *certificates.Manifest) { m.Ops = []string{"matmul", "mul", "tanh"} })) // drops relu, files[2] (sorted: matmul, mul, relu, tanh)
	if rep := verifyDir(t, dir); !failureAt(rep, certificates.ManifestName, "files[2].path", "not part of a complete directory") {
		t.Errorf("an uncalled-for file is accepted: %v", rep.Failures())
	}
	// The manifest's options themselves are checked.
	for _, c := range []struct {
		name  string
		edit  func(*certificates.Manifest)
		field string
	}{
		{"unknown op", func(m *certificates.Manifest) { m.Ops[0] = "nosuchop" }, "ops[0]"},
		{"repeated op", func(m *certificates.Manifest) { m.Ops[1] = m.Ops[0] }, "ops[1]"},
		{"no kinds", func(m *certificates.Manifest) { m.Kinds = []string{} }, "kinds"},
		{"unknown provider", func(m *certificates.Manifest) { m.Providers = []string{"cuda"} }, "providers[0]"},
		{"reordered ops", func(m *certificates.Manifest) { m.Ops[0], m.Ops[1] = m.Ops[1], m.Ops[0] }, "ops[1]"},
		{"reordered providers", func(m *certificates.Manifest) { m.Providers[0], m.Providers[1] = m.Providers[1], m.Providers[0] }, "providers[1]"},
	} {
		dir := t.TempDir()
		if _, err := certificates.NewSuite().Certify(dir, oneReadOptions); err != nil {
			t.Fatal(err)
		}
		rewrite(t, dir, certificates.ManifestName, editManifest(t, c.edit))
		if rep := verifyDir(t, dir); !failureAt(rep, certificates.ManifestName, c.field, "") {
			t.Errorf("%s: no failure at manifest.json %s: %v", c.name, c.field, rep.Failures())
		}
	}
}

// TestManifestListsSorted: the manifest's kinds, ops and providers are
// written sorted whatever order the options give them in, so two runs
// that differ only in that order write the same bytes (issue 26 point
// 10: a reordering was the one accepted edit of a manifest).
func TestManifestListsSorted(t *testing.T) {
	t.Parallel()
	var got [][]byte
	for _, o := range []certificates.Options{
		{Seed: 3, Cases: 1, Ops: []string{"tanh", "mul", "relu"}, Providers: []string{}},
		{Seed: 3, Cases: 1, Ops: []string{"relu", "tanh", "mul"}, Providers: []string{}},
	} {
		dir := t.TempDir()
		m, err := certificates.FullSuite().Certify(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range [][]string{m.Kinds, m.Ops, m.Providers} {
			for i := 1; i < len(l); i++ {
				if l[i-1] >= l[i] {
					t.Errorf("manifest list %v is not sorted", l)
				}
			}
		}
		data, err := os.ReadFile(filepath.Join(dir, certificates.ManifestName))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, data)
		if rep, err := Dir(certificates.FullSuite(), dir); err != nil || len(rep.Failures()) > 0 {
			t.Fatalf("sorted manifest does not verify: %v %v", err, rep.Failures())
		}
		rewrite(t, dir, certificates.ManifestName, editManifest(t, func(m *certificates.Manifest) { m.Kinds[0], m.Kinds[1] = m.Kinds[1], m.Kinds[0] }))
		if rep, err := Dir(certificates.FullSuite(), dir); err != nil || !failureAt(rep, certificates.ManifestName, "kinds[1]", "not in sorted order") {
			t.Errorf("reordered kinds accepted: %v %v", err, rep.Failures())
		}
	}
	if string(got[0]) != string(got[1]) {
		t.Errorf("the order of --ops changes the manifest:\n%s\n%s", got[0], got[1])
	}
}

// TestManifestSeed: a tampered manifest seed is reported against
// manifest.json's seed; one file's regenerated inputs edited (hash
// recomputed) is reported against that file alone.
func TestManifestSeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := certificates.NewSuite().Certify(dir, oneReadOptions); err != nil {
		t.Fatal(err)
	}
	rewrite(t, dir, certificates.ManifestName, editManifest(t, func(m *certificates.Manifest) { m.Seed = 8 }))
	if rep := verifyDir(t, dir); !failureAt(rep, certificates.ManifestName, "seed", "the manifest's seed was edited") {
		t.Fatalf("tampered seed not reported against manifest.json: %v", rep.Failures())
	}
	// The control: only mul's inputs differ from the seed.
	dir = t.TempDir()
	if _, err := certificates.NewSuite().Certify(dir, oneReadOptions); err != nil {
		t.Fatal(err)
	}
	rewrite(t, dir, "adjointness/mul.json", editAdjoint(t, func(a *certificates.AdjointnessFile) {
		a.Cases[0].Inputs[0].Values[0] = "12345"
	}))
	rep := verifyDir(t, dir)
	if failureAt(rep, certificates.ManifestName, "seed", "") || !failureAt(rep, "adjointness/mul.json", "cases[0].inputs[0].values[0]", "the seed generates") || len(rep.Failures()) != 1 {
		t.Fatalf("one edited file: want its own failure only, got %v", rep.Failures())
	}
	// FullSuite: every kind's seed binding (composition, refinement,
	// range) joins the attribution.
	dir = t.TempDir()
	certifyFull(t, dir, certificates.FullSuite(), fullOptions)
	rewrite(t, dir, certificates.ManifestName, editManifest(t, func(m *certificates.Manifest) { m.Seed++ }))
	rep, err := Dir(certificates.FullSuite(), dir)
	if err != nil || !failureAt(rep, certificates.ManifestName, "seed", "none of the 10 certificate files") {
		t.Fatalf("full suite, tampered seed: %v %v", err, rep.Failures())
	}
}

// TestOnlyRegularFiles: a symbolic link (to a byte-identical copy outside
// the directory), a symlinked directory, an oversized file and a name
// with control characters are each refused without being followed, and
// the name is printed escaped.
func TestOnlyRegularFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir, outside string)
		path   string // the failure's Path
		msg    string
	}{
		{"symlinked file", func(t *testing.T, dir, outside string) {
			p := filepath.Join(dir, "adjointness/mul.json")
			copyFile(t, p, filepath.Join(outside, "mul.json"))
			os.Remove(p)
			if err := os.Symlink(filepath.Join(outside, "mul.json"), p); err != nil {
				t.Skip("no symlinks:", err)
			}
		}, "adjointness/mul.json", "a symbolic link, not a regular file"},
		{"symlinked directory", func(t *testing.T, dir, outside string) {
			if err := os.Rename(filepath.Join(dir, "adjointness"), filepath.Join(outside, "adjointness")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(outside, "adjointness"), filepath.Join(dir, "adjointness")); err != nil {
				t.Skip("no symlinks:", err)
			}
		}, "adjointness/mul.json", "adjointness is a symbolic link, not a directory"},
		{"oversized", func(t *testing.T, dir, outside string) {
			// A sparse file: the size cap is checked before reading.
			if err := os.Truncate(filepath.Join(dir, "adjointness/mul.json"), certificates.MaxFileBytes+1); err != nil {
				t.Fatal(err)
			}
		}, "adjointness/mul.json", fmt.Sprintf("larger than %d bytes", certificates.MaxFileBytes)},
		{"name that forges a report line", func(t *testing.T, dir, outside string) {
			name := "x\nok  adjointness  adjointness/mul.json  3 cases\x1b[2K"
			if err := os.WriteFile(filepath.Join(dir, "adjointness", name), []byte("{}"), 0o644); err != nil {
				t.Skip("file system refuses the name:", err)
			}
		}, `"adjointness/x\nok  adjointness  adjointness/mul.json  3 cases\x1b[2K"`, "not listed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, outside := t.TempDir(), t.TempDir()
			if _, err := certificates.NewSuite().Certify(dir, oneReadOptions); err != nil {
				t.Fatal(err)
			}
			c.mutate(t, dir, outside)
			rep := verifyDir(t, dir)
			found := false
			for _, f := range rep.Failures() {
				line := f.Path + " " + f.Kind + " " + f.Err.Error()
				if strings.ContainsAny(line, "\n\r\x1b") {
					t.Errorf("a control character reaches the report: %q", line)
				}
				found = found || (f.Path == c.path && strings.Contains(f.Err.Error(), c.msg))
			}
			if !found {
				t.Fatalf("want a failure of %q mentioning %q, got %v", c.path, c.msg, rep.Failures())
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOutputDirectory: Certify refuses a non-empty directory; --force
// (OverwriteForce) and the gate's policy replace a directory tlcheck
// wrote — its manifest lists every file — run after run, and refuse any
// directory holding a file its manifest does not list, keeping that file
// (issue 26 point 6: --force emptied any directory, and the gate emptied
// one holding a "{}" manifest.json beside a user's file). Nothing is left
// beside the directory.
func TestOutputDirectory(t *testing.T) {
	t.Parallel()
	o := certificates.Options{Seed: 1, Cases: 1, Ops: []string{"mul"}}
	certify := func(dir string, ov certificates.Overwrite) error {
		o := o
		o.Overwrite = ov
		_, err := certificates.NewSuite().Certify(dir, o)
		return err
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "certs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := certify(dir, certificates.OverwriteRefuse); err != nil {
		t.Fatalf("an empty directory: %v", err)
	}
	for _, ov := range []certificates.Overwrite{certificates.OverwriteForce, certificates.OverwriteCertificates, certificates.OverwriteCertificates} {
		if err := certify(dir, ov); err != nil {
			t.Fatalf("overwrite %d of tlcheck's own directory: %v", ov, err)
		}
		if f := verifyDir(t, dir).Failures(); len(f) != 0 {
			t.Fatalf("replaced directory fails: %v", f)
		}
	}
	stale := filepath.Join(dir, "adjointness", "stale.json")
	os.WriteFile(stale, []byte("{}"), 0o644)
	for _, ov := range []certificates.Overwrite{certificates.OverwriteRefuse, certificates.OverwriteForce, certificates.OverwriteCertificates} {
		if err := certify(dir, ov); !errors.Is(err, certificates.ErrNotEmpty) || certificates.CheckOutputDir(dir, ov) == nil {
			t.Fatalf("overwrite %d of a directory with an unlisted file: %v", ov, err)
		}
		if _, err := os.Stat(stale); err != nil {
			t.Fatalf("overwrite %d: a refused certify removed a file", ov)
		}
	}
	for name, files := range map[string]map[string]string{
		"a user's directory":             {"notes.txt": "mine"},
		"a {} manifest beside a file":    {"manifest.json": "{}", "notes.txt": "mine"},
		"a manifest listing other files": {"manifest.json": `{"files":[{"path":"a.json"}]}`, "a.json": "{}", "notes.txt": "mine"},
	} {
		other := t.TempDir()
		for p, body := range files {
			os.WriteFile(filepath.Join(other, p), []byte(body), 0o644)
		}
		for _, ov := range []certificates.Overwrite{certificates.OverwriteForce, certificates.OverwriteCertificates} {
			if err := certify(other, ov); !errors.Is(err, certificates.ErrNotEmpty) {
				t.Errorf("%s, overwrite %d: %v", name, ov, err)
			}
			if b, err := os.ReadFile(filepath.Join(other, "notes.txt")); err != nil || string(b) != "mine" {
				t.Errorf("%s, overwrite %d: the user's file is gone (%v)", name, ov, err)
			}
		}
	}
	entries, err := os.ReadDir(parent)
	if err != nil || len(entries) != 1 {
		t.Errorf("left beside the output directory: %v %v", entries, err)
	}
}

// TestFileCounts: Report.FileCounts on a hand-built report.
func TestFileCounts(t *testing.T) {
	bad := errors.New("x")
	rep := &Report{Files: []FileResult{
		{Path: "manifest.json", Err: bad}, {Path: "manifest.json", Err: bad},
		{Path: "a.json"}, {Path: "b.json", Err: bad}, {Path: "b.json", Err: bad}, {Path: "c.json"},
	}}
	if failed, files := rep.FileCounts(); failed != 2 || files != 4 {
		t.Fatalf("FileCounts = %d of %d, want 2 of 4", failed, files)
	}
	if failed, files := (&Report{Files: []FileResult{{Path: "a.json"}}}).FileCounts(); failed != 0 || files != 2 {
		t.Fatalf("FileCounts = %d of %d, want 0 of 2 (a.json and the manifest)", failed, files)
	}
}
