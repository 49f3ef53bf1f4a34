package verify

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
)

func certifyTo(t *testing.T, dir string) *certificates.Manifest {
	t.Helper()
	m, err := certificates.NewSuite().Certify(dir, certificates.Options{Seed: 7, Cases: 3, Ops: []string{"mul", "tanh", "matmul", "relu"}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func verifyDir(t *testing.T, dir string) *Report {
	t.Helper()
	rep, err := Dir(certificates.NewSuite(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestCertifyVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := certifyTo(t, dir)
	if len(m.Files) != 4 {
		t.Fatalf("%d files", len(m.Files))
	}
	rep := verifyDir(t, dir)
	if f := rep.Failures(); len(f) != 0 {
		t.Fatalf("fresh certificates fail: %v", f[0].Err)
	}
	if rep.Cases()[certificates.KindAdjointness] != 12 {
		t.Fatalf("cases %v", rep.Cases())
	}
}

// TestDeterministic: the same seed gives byte-identical files.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	certifyTo(t, a)
	certifyTo(t, b)
	for _, rel := range []string{certificates.ManifestName, "adjointness/mul.json", "adjointness/tanh.json"} {
		x, _ := os.ReadFile(filepath.Join(a, rel))
		y, _ := os.ReadFile(filepath.Join(b, rel))
		if !bytes.Equal(x, y) {
			t.Fatalf("%s differs between two runs with the same seed", rel)
		}
	}
}

var numberRE = regexp.MustCompile(`[0-9]+`)

// TestEveryNumberEditRejected edits every number in every certificate
// file, one at a time, and checks that verification fails naming the file
// and a field.
func TestEveryNumberEditRejected(t *testing.T) {
	t.Parallel()
	files := certifyTo(t, t.TempDir()).Files
	// One parallel subtest per file, each on its own directory (edits are
	// written to disk and the whole directory is verified after each).
	for _, e := range files {
		t.Run(e.Path, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			certifyTo(t, dir)
			path := filepath.Join(dir, e.Path)
			orig, _ := os.ReadFile(path)
			locs := numberRE.FindAllIndex(orig, -1)
			if len(locs) < 10 {
				t.Fatalf("only %d numbers to edit", len(locs))
			}
			for i, loc := range locs {
				if i%editStride() != 0 {
					continue // a sample unless TLCHECK_EXHAUSTIVE is set (see editStride)
				}
				mod := append([]byte(nil), orig...)
				// change the last digit of the number
				d := mod[loc[1]-1]
				mod[loc[1]-1] = '0' + (d-'0'+1)%10
				if err := os.WriteFile(path, mod, 0o644); err != nil {
					t.Fatal(err)
				}
				rep := verifyDir(t, dir)
				fails := rep.Failures()
				if len(fails) == 0 {
					t.Fatalf("%s: editing the number at byte %d (%q) went undetected", e.Path, loc[0], orig[loc[0]:loc[1]])
				}
				var fe *certificates.FieldError
				if !errors.As(fails[0].Err, &fe) || (fe.File != e.Path && fe.File != certificates.ManifestName) {
					t.Fatalf("%s: failure does not name the file: %v", e.Path, fails[0].Err)
				}
			}
			os.WriteFile(path, orig, 0o644)
			if f := verifyDir(t, dir).Failures(); len(f) != 0 {
				t.Fatalf("restored directory fails: %v", f[0].Err)
			}
		})
	}
}

func TestCorruptions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(dir string)
		want   string
	}{
		{"truncated", func(dir string) {
			p := filepath.Join(dir, "adjointness/mul.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, "truncated"},
		{"unknown version", func(dir string) {
			p := filepath.Join(dir, "adjointness/mul.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte("tlcheck.cert.v3"), []byte("tlcheck.cert.v9"), 1), 0o644)
		}, "unknown certificate version"},
		{"previous version", func(dir string) {
			p := filepath.Join(dir, "adjointness/mul.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"tlcheck.cert.v3"`), []byte(`"tlcheck.cert.v2"`), 1), 0o644)
		}, "tlcheck.cert.v2 is the previous certificate format, whose refinement files do not record the rounding bound"},
		{"first version", func(dir string) {
			p := filepath.Join(dir, "adjointness/mul.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"tlcheck.cert.v3"`), []byte(`"tlcheck.cert.v1"`), 1), 0o644)
		}, "tlcheck.cert.v1 is an earlier certificate format"},
		{"registry hash", func(dir string) {
			p := filepath.Join(dir, certificates.ManifestName)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, regexp.MustCompile(`"registry_hash": "[0-9a-f]{4}`).ReplaceAll(b, []byte(`"registry_hash": "0000`)), 0o644)
		}, "registry_hash"},
		{"unlisted file", func(dir string) {
			os.WriteFile(filepath.Join(dir, "adjointness/extra.json"), []byte("{}"), 0o644)
		}, "not listed in the manifest"},
		{"missing file", func(dir string) {
			os.Remove(filepath.Join(dir, "adjointness/relu.json"))
		}, "cannot read"},
		{"reordered manifest", func(dir string) {
			p := filepath.Join(dir, certificates.ManifestName)
			b, _ := os.ReadFile(p)
			s := strings.Replace(string(b), "adjointness/matmul.json", "adjointness/zzz.json", 1)
			os.WriteFile(p, []byte(s), 0o644)
		}, "sorted order"},
		{"injected name", func(dir string) {
			p := filepath.Join(dir, "adjointness/mul.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"op": "mul"`), []byte(`"op": "mul; rm -rf /"`), 1), 0o644)
		}, "safe alphabet"},
		{"unknown field", func(dir string) {
			p := filepath.Join(dir, "adjointness/mul.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"op":`), []byte(`"extra": 1, "op":`), 1), 0o644)
		}, "unknown field"},
		{"trailing data", func(dir string) {
			p := filepath.Join(dir, "adjointness/mul.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, []byte("{}")...), 0o644)
		}, "trailing data"},
		// encoding/json would read both of these as the manifest's seed;
		// one reading means they are refused.
		{"case-variant key", func(dir string) {
			p := filepath.Join(dir, certificates.ManifestName)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"seed":`), []byte(`"Seed":`), 1), 0o644)
		}, "field Seed: unknown field"},
		{"duplicate key", func(dir string) {
			p := filepath.Join(dir, certificates.ManifestName)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"seed":`), []byte(`"seed": 7, "seed":`), 1), 0o644)
		}, "field seed: duplicate field"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		certifyTo(t, dir)
		c.mutate(dir)
		rep := verifyDir(t, dir)
		found := false
		for _, f := range rep.Failures() {
			if strings.Contains(f.Err.Error(), c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no failure mentions %q: %v", c.name, c.want, rep.Failures())
		}
	}
}

func TestVerifyNotADirectory(t *testing.T) {
	t.Parallel()
	if _, err := Dir(certificates.NewSuite(), filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("missing directory accepted")
	}
	if _, err := Dir(certificates.NewSuite(), t.TempDir()); !errors.Is(err, certificates.ErrNoManifest) {
		t.Fatalf("empty directory: %v", err)
	}
}
