package certificates

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Stale temporary directories (issue 26: "a killed merge leaves
// .tlcheck-merge-* temp directories").
//
// A run that is killed (kill -9) between creating its temporary sibling
// and putting it in place leaves it behind: PARENT/.BASE.tlcheck-new-*
// (Certify's staging directory, or after an exchange the previous
// directory waiting to be removed), PARENT/.BASE.tlcheck-old-* (the
// exchange fallback) or PARENT/.tlcheck-merge-* (Merge). The next run
// into the same parent removes such a directory, and only one that is
// provably a dead run's output of this tool:
//
//   - its name is one of those patterns (for Certify, with its own
//     output's BASE);
//   - it is a directory, not a symbolic link, owned by this user;
//   - no process holds it: every run holds an exclusive flock(2) on its
//     temporary directory from just after creating it until it is done,
//     and the kernel releases the lock when the process dies, however it
//     dies; a directory whose lock this run can take has no live owner
//     (lock.go; where the system has no flock nothing is removed);
//   - it was last modified more than StaleAge ago, which covers the
//     instant between a directory's creation and its lock;
//   - a .BASE.tlcheck-old-* directory only while out exists (while out is
//     missing it is the previous run's only copy);
//   - it holds nothing but what this tool writes: regular files at
//     certificate paths (or manifest.json) and the kind directories above
//     them — no symbolic link, no other name. A user's file found inside
//     leaves the directory alone.
//
// Removal is best effort: a directory that does not qualify, or cannot
// be removed, is left and the run goes on.

// StaleAge is how old (by modification time) a temporary directory must
// be before a later run may remove it.
const StaleAge = time.Minute

// Temporary directory name patterns (a prefix before the random part).
const (
	stageInfix = ".tlcheck-new-"
	oldInfix   = ".tlcheck-old-"
	mergeStem  = ".tlcheck-merge-"
)

// removeStale removes the stale temporary siblings of out: for Certify
// (merge false) .BASE.tlcheck-new-* and .BASE.tlcheck-old-*, for Merge
// .tlcheck-merge-*. It returns the paths it removed.
func removeStale(out string, merge bool) []string {
	clean := filepath.Clean(out)
	parent, base := filepath.Dir(clean), filepath.Base(clean)
	prefixes := []string{"." + base + stageInfix, "." + base + oldInfix}
	if merge {
		prefixes = []string{mergeStem}
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		match := false
		for _, p := range prefixes {
			match = match || strings.HasPrefix(name, p) && len(name) > len(p)
		}
		if !match || !e.IsDir() {
			continue
		}
		if strings.HasPrefix(name, "."+base+oldInfix) {
			// The previous directory, renamed aside by the exchange
			// fallback: while out is missing it is the only copy of the
			// previous run's output, and stays.
			if _, err := os.Lstat(clean); err != nil {
				continue
			}
		}
		p := filepath.Join(parent, name)
		if staleDir(p) && os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// staleDir reports whether the temporary directory p may be removed: a
// directory (not a link) of this user, older than StaleAge, that no live
// process holds and that holds only this tool's output.
func staleDir(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() || !ownedByMe(fi) || time.Since(fi.ModTime()) < StaleAge {
		return false
	}
	unlock, ok := tryLockDir(p)
	if !ok {
		return false
	}
	defer unlock()
	return onlyOurFiles(p)
}

// onlyOurFiles reports whether every entry under dir is a regular file at
// a certificate path (pathRE) or manifest.json, or a directory above one
// ([a-z0-9_]{1,32}, the kind directories).
func onlyOurFiles(dir string) bool {
	ok := true
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			ok = false
			return filepath.SkipAll
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			ok = false
			return filepath.SkipAll
		}
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case d.IsDir() && kindDirRE.MatchString(rel):
		case d.Type().IsRegular() && (rel == ManifestName || pathRE.MatchString(rel)):
		default:
			ok = false
			return filepath.SkipAll
		}
		return nil
	})
	return ok
}
