//go:build unix

package certificates

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRemoveStale: the next Certify or Merge into a parent removes the
// temporary directories a killed run left — and only those: a sibling a
// live run holds (its flock), a fresh one, one holding a user's file or
// a symbolic link, one of another output's name, and the exchange
// fallback's previous directory while the output is missing all stay.
func TestRemoveStale(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "certs")
	old := time.Now().Add(-2 * StaleAge)
	mk := func(name string, files map[string]string, mtime time.Time) string {
		t.Helper()
		p := filepath.Join(parent, name)
		for rel, content := range files {
			f := filepath.Join(p, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ours := map[string]string{"adjointness/mul.json": "{}", ManifestName: "{}"}
	dead := mk(".certs.tlcheck-new-111", ours, old)
	deadEmpty := mk(".certs.tlcheck-new-222", nil, old)
	deadMerge := mk(".tlcheck-merge-333", ours, old)
	fresh := mk(".certs.tlcheck-new-444", ours, time.Now())
	user := mk(".certs.tlcheck-new-555", map[string]string{"adjointness/mul.json": "{}", "notes.txt": "mine"}, old)
	other := mk(".other.tlcheck-new-666", ours, old)
	oldAside := mk(".certs.tlcheck-old-777", ours, old)
	held := mk(".certs.tlcheck-new-888", ours, old)
	linked := mk(".certs.tlcheck-new-999", nil, old)
	if err := os.Symlink("/etc", filepath.Join(linked, "adjointness")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(linked, old, old); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockDir(held) // a live run's directory
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }

	// out is missing: the fallback's previous directory stays.
	removeStale(out, false)
	for _, p := range []string{dead, deadEmpty} {
		if exists(p) {
			t.Errorf("stale %s not removed", filepath.Base(p))
		}
	}
	for _, p := range []string{deadMerge, fresh, user, other, oldAside, held, linked} {
		if !exists(p) {
			t.Errorf("%s removed", filepath.Base(p))
		}
	}
	if !exists("/etc") {
		t.Fatal("followed a link")
	}
	// Certify into out: out now exists, so the previous directory set
	// aside is a dead run's too.
	if _, err := NewSuite().Certify(out, Options{Seed: 1, Cases: 1, Ops: []string{"mul"}}); err != nil {
		t.Fatal(err)
	}
	if exists(oldAside) || !exists(held) || !exists(user) || !exists(fresh) {
		t.Errorf("after certify: old aside %v (want removed), held %v, user %v, fresh %v (want kept)", exists(oldAside), exists(held), exists(user), exists(fresh))
	}
	// A merge removes a dead merge's directory (the merge itself may
	// fail: the stale directories go first).
	_, _ = FullSuite().Merge(filepath.Join(parent, "merged"), []string{filepath.Join(parent, "nosuchshard")})
	if exists(deadMerge) {
		t.Error("stale merge directory not removed by the next merge")
	}
	// Once its run has ended (the lock released), the held one is stale.
	unlock()
	removeStale(out, false)
	if exists(held) {
		t.Error("a directory whose run ended is not removed")
	}
}
