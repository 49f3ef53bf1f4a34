package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHostileDirectories: the rows of the hostile-input table for
// certificate and shard directories (issue 26 acceptance): a file, a
// subdirectory or the manifest as a symbolic link out of the tree, as a
// link loop or a dangling link, a
// truncated or non-UTF-8 manifest, duplicate keys, deep nesting, huge
// claimed counts and a manifest of 1 GiB (sparse) — each under verify,
// verify --shard and merge, as a process, within the table's wall and
// memory bounds (checkHostile). The exit code is the documented one: 2
// when the directory cannot be read as one at all or a limit is met, 1
// when it reads but a certificate-level check fails (the report names
// the file). Nothing outside the tree is read: the secret planted there
// never appears in the output.
func TestHostileDirectories(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tlcheck as ~40 processes")
	}
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	const secret = "SECRET-OUTSIDE-THE-TREE"
	if err := os.MkdirAll(filepath.Join(outside, "adjointness"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"secret.json", "adjointness/mul.json", "manifest.json"} {
		if err := os.WriteFile(filepath.Join(outside, p), []byte(`{"format":"`+secret+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	certify := func(name string, shard string) string {
		t.Helper()
		p := filepath.Join(dir, "base", name)
		args := []string{"certify", "--ops", "mul", "--cases", "1", "--providers", "reference", "--out", p}
		if shard != "" {
			args = append(args, "--shard", shard)
		}
		if code, out, errs := runCmd(args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
		return p
	}
	full, shard0, shard1 := certify("full", ""), certify("s0", "0/2"), certify("s1", "1/2")
	// Which shard holds adjointness/mul.json.
	shardWith := shard0
	if _, err := os.Stat(filepath.Join(shard0, "adjointness", "mul.json")); err != nil {
		shardWith = shard1
	}
	n := 0
	clone := func(src string) string {
		t.Helper()
		n++
		dst := filepath.Join(dir, "case", filepath.Base(src)+"-"+strconv.Itoa(n))
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	replace := func(p string, with func(p string) error) {
		t.Helper()
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := with(p); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target string) func(string) error {
		return func(p string) error { return os.Symlink(target, p) }
	}
	content := func(s string) func(string) error {
		return func(p string) error { return os.WriteFile(p, []byte(s), 0o644) }
	}
	sparse := func(p string) error {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			return err
		}
		return os.Truncate(p, 1<<30)
	}
	editManifest := func(d string, f func(string) string) {
		t.Helper()
		p := filepath.Join(d, "manifest.json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deep := strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20)
	type hostility struct {
		name  string
		apply func(d string) // d: a clone of a valid directory
		code  int            // verify's (and verify --shard's) exit code
		merge int            // merge's
		says  string
	}
	hs := []hostility{
		{"certificate file a symlink out of the tree", func(d string) {
			replace(filepath.Join(d, "adjointness", "mul.json"), link(filepath.Join(outside, "adjointness", "mul.json")))
		}, 1, 2, "mul.json"},
		{"kind directory a symlink out of the tree", func(d string) {
			replace(filepath.Join(d, "adjointness"), link(filepath.Join(outside, "adjointness")))
		}, 1, 2, "mul.json"},
		{"manifest a symlink out of the tree", func(d string) {
			replace(filepath.Join(d, "manifest.json"), link(filepath.Join(outside, "manifest.json")))
		}, 2, 2, "manifest"},
		{"certificate file a symlink loop", func(d string) {
			replace(filepath.Join(d, "adjointness", "mul.json"), link("mul.json"))
		}, 1, 2, "mul.json"},
		{"certificate file a dangling symlink", func(d string) {
			replace(filepath.Join(d, "adjointness", "mul.json"), link("nothing.json"))
		}, 1, 2, "mul.json"},
		{"kind directory a symlink loop", func(d string) {
			replace(filepath.Join(d, "adjointness"), link("adjointness"))
		}, 1, 2, "mul.json"},
		{"manifest a symlink loop", func(d string) {
			replace(filepath.Join(d, "manifest.json"), link("manifest.json"))
		}, 2, 2, "manifest"},
		{"manifest a dangling symlink", func(d string) {
			replace(filepath.Join(d, "manifest.json"), link(filepath.Join(outside, "nothing.json")))
		}, 2, 2, "manifest"},
		{"manifest truncated", func(d string) { editManifest(d, func(s string) string { return s[:len(s)/2] }) }, 1, 2, "manifest.json"},
		{"manifest not UTF-8", func(d string) {
			editManifest(d, func(s string) string { return strings.Replace(s, `"mul"`, "\"m\xff\xfel\"", 1) })
		}, 1, 2, "manifest.json"},
		{"manifest with a duplicate key", func(d string) {
			editManifest(d, func(s string) string { return strings.Replace(s, `"seed":`, `"seed": 1, "seed":`, 1) })
		}, 1, 2, "seed"},
		{"manifest nested 2^20 deep", func(d string) { replace(filepath.Join(d, "manifest.json"), content(deep)) }, 1, 2, "manifest.json"},
		{"manifest claiming 10^18 cases", func(d string) {
			editManifest(d, func(s string) string { return strings.Replace(s, `"cases": 1,`, `"cases": 1000000000000000000,`, 1) })
		}, 2, 2, "cert-cases"},
		{"manifest of 1 GiB (sparse)", func(d string) { replace(filepath.Join(d, "manifest.json"), sparse) }, 2, 2, "manifest"},
		{"certificate file of 1 GiB (sparse)", func(d string) { replace(filepath.Join(d, "adjointness", "mul.json"), sparse) }, 1, 2, "mul.json"},
	}
	for _, h := range hs {
		d := clone(full)
		h.apply(d)
		checkHostile(t, "verify, "+h.name, runHostile(t, dir, "verify", d), h.code, h.says)
		s := clone(shardWith)
		h.apply(s)
		idx := "0/2"
		if shardWith == shard1 {
			idx = "1/2"
		}
		checkHostile(t, "verify --shard, "+h.name, runHostile(t, dir, "verify", "--shard", idx, s), h.code, h.says)
		other := shard1
		if shardWith == shard1 {
			other = shard0
		}
		res := runHostile(t, dir, "merge", filepath.Join(dir, "merged-"+strconv.Itoa(n)), s, other)
		checkHostile(t, "merge, "+h.name, res, h.merge, "")
		if strings.Contains(res.stderr, secret) {
			t.Errorf("merge, %s: read outside the tree: %q", h.name, res.stderr)
		}
	}
	// verify's table (stdout) is checked in-process: no case prints the
	// secret.
	for _, h := range hs[:3] {
		d := clone(full)
		h.apply(d)
		if _, out, errs := runCmd("verify", d); strings.Contains(out+errs, secret) {
			t.Errorf("verify, %s: read outside the tree:\n%s%s", h.name, out, errs)
		}
	}
}
