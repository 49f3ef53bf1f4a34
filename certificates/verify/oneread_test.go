package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/spec"
)

// The attack model of these tests (issue 10 §4b): an edit of one file,
// after which the manifest's hash of that file is recomputed, so only the
// file's content, never a stale hash, can make verification fail.

// oneReadOptions certifies a rat-oracle op (mul), an interval-oracle op
// (tanh) and two more, adjointness only.
var oneReadOptions = certificates.Options{Seed: 7, Cases: 3, Ops: []string{"mul", "tanh", "matmul", "relu"}}

// rewrite replaces file rel of dir by f(its bytes) and recomputes its
// hash in the manifest (textually, so that an edit of the manifest itself
// is kept).
func rewrite(t *testing.T, dir, rel string, f func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	mod := f(append([]byte(nil), old...))
	if bytes.Equal(mod, old) {
		t.Fatalf("%s: the edit changed nothing", rel)
	}
	if err := os.WriteFile(p, mod, 0o644); err != nil {
		t.Fatal(err)
	}
	if rel == certificates.ManifestName {
		return
	}
	mp := filepath.Join(dir, certificates.ManifestName)
	m, _ := os.ReadFile(mp)
	os.WriteFile(mp, bytes.ReplaceAll(m, []byte(certificates.Sum(old)), []byte(certificates.Sum(mod))), 0o644)
}

// replaceOnce replaces the first occurrence of old, failing the test when
// there is none.
func replaceOnce(t *testing.T, old, new string) func([]byte) []byte {
	return func(b []byte) []byte {
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("no %q to replace", old)
		}
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
}

// editAdjoint decodes an adjointness file, applies f and re-encodes it in
// the writer's own spelling: the edit is semantic only.
func editAdjoint(t *testing.T, f func(*certificates.AdjointnessFile)) func([]byte) []byte {
	return func(b []byte) []byte {
		var a certificates.AdjointnessFile
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		f(&a)
		out, err := certificates.Encode(&a)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// editManifest is editAdjoint for the manifest.
func editManifest(t *testing.T, f func(*certificates.Manifest)) func([]byte) []byte {
	return func(b []byte) []byte {
		var m certificates.Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		f(&m)
		out, err := certificates.Encode(&m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// failureAt reports whether rep has a failure of a FieldError in file at
// field whose message contains msg.
func failureAt(rep *Report, file, field, msg string) bool {
	for _, f := range rep.Failures() {
		var fe *certificates.FieldError
		if errors.As(f.Err, &fe) && fe.File == file && fe.Field == field && strings.Contains(fe.Msg, msg) {
			return true
		}
	}
	return false
}

// TestOneReading: every second spelling of a certificate or manifest —
// one a different reader would read differently, or one that carries a
// claim nobody checks — fails, naming the file and the JSON path, with the
// manifest's hash recomputed.
func TestOneReading(t *testing.T) {
	t.Parallel()
	const mul, tanh = "adjointness/mul.json", "adjointness/tanh.json"
	cases := []struct {
		name, file string
		edit       func(t *testing.T) func([]byte) []byte
		wFile, wAt string
		wMsg       string
	}{
		// encoding/json keeps the last duplicate and matches keys
		// case-insensitively: jq would read op relu, tlcheck op mul.
		{"duplicate key", mul, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"op": "mul"`, `"op": "relu", "op": "mul"`)
		}, mul, "op", "duplicate field"},
		{"case-variant key", mul, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"op": "mul"`, `"op": "mul", "OP": "relu"`)
		}, mul, "OP", "unknown field"},
		{"case-variant key in a case", mul, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"lhs": `, `"LHS": "-5/2", "lhs": `)
		}, mul, "cases[0].LHS", "unknown field"},
		{"unknown key in a tensor", mul, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"shape": `, `"dtype": "rat", "shape": `)
		}, mul, "cases[0].inputs[0].dtype", "unknown field"},
		{"missing required field", mul, func(t *testing.T) func([]byte) []byte {
			return func(b []byte) []byte { return regexp.MustCompile(`\n *"oracle": "rat",`).ReplaceAll(b, nil) }
		}, mul, "cases[0].oracle", "missing field"},
		{"missing required field of a tensor", mul, func(t *testing.T) func([]byte) []byte {
			return func(b []byte) []byte {
				return regexp.MustCompile(`("delta": \{\n *)"shape": \[[^\]]*\],\n *`).ReplaceAll(b, []byte("$1"))
			}
		}, mul, "cases[0].delta.shape", "missing field"},
		{"null for a required field", mul, editAdjointT(func(a *certificates.AdjointnessFile) { a.Cases[1].Delta.Shape = nil }), mul, "cases[1].delta.shape", "null where a value is required"},
		{"manifest: duplicate seed", certificates.ManifestName, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"seed": 7`, `"seed": 8, "seed": 7`)
		}, certificates.ManifestName, "seed", "duplicate field"},
		{"manifest: duplicate sha256", certificates.ManifestName, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"sha256": `, `"sha256": "`+strings.Repeat("0", 64)+`", "sha256": `)
		}, certificates.ManifestName, "files[0].sha256", "duplicate field"},
		{"manifest: case-variant path", certificates.ManifestName, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"path": `, `"PATH": "adjointness/zzz.json", "path": `)
		}, certificates.ManifestName, "files[0].PATH", "unknown field"},
		{"manifest: zero-valued key deleted", certificates.ManifestName, func(t *testing.T) func([]byte) []byte {
			return func(b []byte) []byte { return regexp.MustCompile(`\n *"cases": 3,`).ReplaceAll(b, nil) }
		}, certificates.ManifestName, "cases", "missing field"},
		{"manifest: previous version", certificates.ManifestName, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"tlcheck.manifest.v2"`, `"tlcheck.manifest.v1"`)
		}, certificates.ManifestName, "format", "previous manifest format"},
		// Extra claims of the other oracle: in the writer's spelling, so
		// only the claims check can refuse them.
		{"lhs_enclosure on a rational case", mul, editAdjointT(func(a *certificates.AdjointnessFile) {
			e := certificates.IntervalEnclosure(spec.Interval{})
			a.Cases[0].LHSEnclosure = &e
		}), mul, "cases[0].lhs_enclosure", "another oracle"},
		{"lhs on an interval case", tanh, editAdjointT(func(a *certificates.AdjointnessFile) { a.Cases[2].LHS = "1" }), tanh, "cases[2].lhs", "another oracle"},
		{"rational case without rhs", mul, editAdjointT(func(a *certificates.AdjointnessFile) { a.Cases[0].RHS = "" }), mul, "cases[0].rhs", "missing"},
		// Non-canonical rationals.
		{"2/4", mul, editAdjointT(func(a *certificates.AdjointnessFile) { a.Cases[0].Inputs[0].Values[0] = "2/4" }), mul, "cases[0].inputs[0].values[0]", "canonical"},
		{"-0", mul, editAdjointT(func(a *certificates.AdjointnessFile) { a.Cases[0].Dx[0].Values[0] = "-0" }), mul, "cases[0].dx[0].values[0]", "canonical"},
		{"01", mul, editAdjointT(func(a *certificates.AdjointnessFile) { a.Cases[1].Delta.Values[0] = "01" }), mul, "cases[1].delta.values[0]", "canonical"},
		{"1/1", mul, editAdjointT(func(a *certificates.AdjointnessFile) { a.Cases[2].LHS = "1/1" }), mul, "cases[2].lhs", "canonical"},
		// Spelling: whitespace, a zero-valued optional key, a number in
		// another notation.
		{"whitespace padding", mul, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"op": "mul"`, `"op":     "mul"`)
		}, mul, "op", "not the writer's spelling"},
		{"trailing whitespace", mul, func(t *testing.T) func([]byte) []byte {
			return func(b []byte) []byte { return append(b, strings.Repeat(" ", 4096)...) }
		}, mul, "", "not the writer's spelling"},
		{"zero-valued optional key", mul, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"attrs": {}`, `"attrs": {"axis": 0}`)
		}, mul, "cases[0].attrs.axis", "not the writer's spelling"},
		{"number in another notation", certificates.ManifestName, func(t *testing.T) func([]byte) []byte {
			return replaceOnce(t, `"cases": 3`, `"cases": 3.0`)
		}, certificates.ManifestName, "cases", "3.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if _, err := certificates.NewSuite().Certify(dir, oneReadOptions); err != nil {
				t.Fatal(err)
			}
			rewrite(t, dir, c.file, c.edit(t))
			rep := verifyDir(t, dir)
			if !failureAt(rep, c.wFile, c.wAt, c.wMsg) {
				t.Fatalf("want a failure in %s at %q mentioning %q, got %v", c.wFile, c.wAt, c.wMsg, rep.Failures())
			}
		})
	}
}

// editAdjointT adapts editAdjoint to the table's signature.
func editAdjointT(f func(*certificates.AdjointnessFile)) func(t *testing.T) func([]byte) []byte {
	return func(t *testing.T) func([]byte) []byte { return editAdjoint(t, f) }
}

// TestErrorsStayOnOneLine: a key with a newline and a megabyte-long key,
// echoed in the failure's JSON path, are escaped and cut, so a failure is
// one line of bounded length.
func TestErrorsStayOnOneLine(t *testing.T) {
	t.Parallel()
	for _, key := range []string{`x\nok  adjointness  adjointness/mul.json  3 cases`, strings.Repeat("k", 1<<20)} {
		dir := t.TempDir()
		if _, err := certificates.NewSuite().Certify(dir, oneReadOptions); err != nil {
			t.Fatal(err)
		}
		rewrite(t, dir, "adjointness/mul.json", replaceOnce(t, `"op": "mul"`, `"op": "mul", "`+key+`": 1`))
		rep := verifyDir(t, dir)
		if len(rep.Failures()) != 1 {
			t.Fatalf("want one failure, got %v", rep.Failures())
		}
		msg := rep.Failures()[0].Err.Error()
		if strings.ContainsAny(msg, "\n\r") || len(msg) > 400 || !strings.Contains(msg, "unknown field") {
			t.Fatalf("failure line %.300q (%d bytes)", msg, len(msg))
		}
	}
}
