package verify

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
)

// TestShardOf: the partition's residues for a few unit names, computed
// outside Go with `printf '%s' NAME | sha256sum` (first 16 hex digits, as
// an unsigned integer, mod n).
func TestShardOf(t *testing.T) {
	cases := []struct {
		unit       string
		n2, n3, n7 int
	}{
		{"adjointness/mul.json", 1, 1, 2}, // 58dbd4e8828c0e85
		{"composition.json", 0, 0, 2},     // ed2d632f04989dba
		{"range/quad.json", 0, 1, 6},      // 92f8a74ad0c46f5a
	}
	for _, c := range cases {
		for n, want := range map[int]int{1: 0, 2: c.n2, 3: c.n3, 7: c.n7} {
			if got := certificates.ShardOf(c.unit, n); got != want {
				t.Errorf("ShardOf(%q, %d) = %d, want %d", c.unit, n, got, want)
			}
			sh := certificates.Shard{Index: want, Count: n}
			if !sh.Has(c.unit) || (n > 1 && (certificates.Shard{Index: (want + 1) % n, Count: n}).Has(c.unit)) {
				t.Errorf("%q: Has disagrees with ShardOf for n=%d", c.unit, n)
			}
		}
	}
	for _, sh := range []certificates.Shard{{Index: 0, Count: 0}, {Index: -1, Count: 2}, {Index: 2, Count: 2}, {Index: 5, Count: 3}} {
		if sh.Check() == nil {
			t.Errorf("Shard %v passed Check", sh)
		}
	}
}

// TestCertifyShardsMerge: through the API, the shards of N = 2 and 3
// merge into exactly the unsharded directory; each shard verifies with
// VerifyShard and fails Verify (it is incomplete) and VerifyShard under
// another index; a file edited after certify makes Merge fail as
// Tampered and leaves OUT absent.
func TestCertifyShardsMerge(t *testing.T) {
	s := certificates.FullSuite()
	o := certificates.Options{Seed: 3, Cases: 1, Ops: []string{"mul", "add", "tanh", "relu"}, Providers: []string{"reference"}}
	root := t.TempDir()
	full := filepath.Join(root, "full")
	if _, err := s.Certify(full, o); err != nil {
		t.Fatal(err)
	}
	want := treeBytes(t, full)
	for _, n := range []int{2, 3} {
		var dirs []string
		total := 0
		for i := range n {
			so := o
			so.Shard = certificates.Shard{Index: i, Count: n}
			d := filepath.Join(root, "n", string(rune('0'+n)), string(rune('0'+i)))
			m, err := s.Certify(d, so)
			if err != nil {
				t.Fatal(err)
			}
			total += len(m.Files)
			if s.Subjects(so) != len(m.Files) {
				t.Errorf("shard %v: Subjects %d, files %d", so.Shard, s.Subjects(so), len(m.Files))
			}
			rep, err := Shard(s, d, so.Shard)
			if err != nil || len(rep.Failures()) > 0 {
				t.Fatalf("VerifyShard %v: %v %v", so.Shard, err, rep.Failures())
			}
			if rep, _ := Dir(s, d); rep == nil || len(rep.Failures()) == 0 {
				t.Errorf("Verify accepted shard directory %v", so.Shard)
			}
			if rep, _ := Shard(s, d, certificates.Shard{Index: (i + 1) % n, Count: n}); rep == nil || len(rep.Failures()) == 0 {
				t.Errorf("VerifyShard under another index accepted %v", so.Shard)
			}
			dirs = append(dirs, d)
		}
		if total != len(want)-1 {
			t.Errorf("N=%d: the shards hold %d files, the unsharded run %d", n, total, len(want)-1)
		}
		out := filepath.Join(root, "merged", string(rune('0'+n)))
		os.MkdirAll(filepath.Dir(out), 0o755)
		if _, err := s.Merge(out, dirs); err != nil {
			t.Fatal(err)
		}
		got := treeBytes(t, out)
		if len(got) != len(want) {
			t.Errorf("N=%d: merged %d files, want %d", n, len(got), len(want))
		}
		for p, w := range want {
			if !bytes.Equal(got[p], w) {
				t.Errorf("N=%d: %s differs from the unsharded run", n, p)
			}
		}
		if n == 3 {
			// Plant an edit in the first file of a non-empty shard.
			for _, d := range dirs {
				files := treeBytes(t, d)
				for p, b := range files {
					if p == certificates.ManifestName {
						continue
					}
					os.WriteFile(filepath.Join(d, p), append(b, ' '), 0o644)
					out2 := filepath.Join(root, "merged", "tampered")
					_, err := s.Merge(out2, dirs)
					var me *certificates.MergeError
					if !errors.As(err, &me) || !me.Tampered || me.Dir != d || !strings.Contains(me.Field, "sha256") {
						t.Fatalf("tampered %s/%s: %v", d, p, err)
					}
					if _, err := os.Stat(out2); err == nil {
						t.Fatal("a failed merge created OUT")
					}
					return
				}
			}
			t.Fatal("no shard holds a file")
		}
	}
}

// treeBytes maps every file under dir to its bytes.
func treeBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
