package certificates

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Writing an output directory without losing data (issue 26 point 6).
//
// Certify never writes into its output directory DIR. It writes into a
// fresh sibling, PARENT/.BASE.tlcheck-new-RANDOM (stageDir), and only once
// every file and the manifest are written does it put that directory in
// DIR's place (installDir):
//
//   - DIR missing or empty: one rename(2), which replaces an empty
//     directory atomically;
//   - DIR a directory tlcheck wrote (ownedDir: its manifest lists every
//     file in it, and it holds nothing else): on Linux one
//     renameat2(RENAME_EXCHANGE) swaps the two directories atomically, and
//     the old one, now at the sibling's name, is removed; elsewhere DIR is
//     first renamed aside to PARENT/.BASE.tlcheck-old-RANDOM, and the new
//     directory renamed into place (a window in which DIR is missing and
//     the old directory is at that name).
//
// So a process killed at any moment (kill -9) leaves DIR as it was or as
// the new run wrote it, never a mix or an empty DIR; what it can leave
// behind is a sibling named .BASE.tlcheck-new-* or .BASE.tlcheck-old-*,
// holding only this tool's output. A run that fails removes its sibling
// and leaves DIR untouched. A directory holding a file its manifest does
// not list — a user's notes beside the certificates, or any directory
// with a manifest.json that is not a tlcheck manifest — is never replaced:
// certify --force and the gate refuse it with one line.

// stageDir makes the fresh sibling directory the run writes into and
// takes its lock (lockDir), which the caller releases when done: a later
// run removes the directory only once no process holds it (stale.go).
func stageDir(dir string) (string, func(), error) {
	clean := filepath.Clean(dir)
	tmp, err := os.MkdirTemp(filepath.Dir(clean), "."+filepath.Base(clean)+stageInfix)
	if err != nil {
		return "", nil, err
	}
	unlock, err := lockDir(tmp)
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err != nil {
		if unlock != nil {
			unlock()
		}
		os.RemoveAll(tmp)
		return "", nil, err
	}
	return tmp, unlock, nil
}

// ownedDir checks that every entry under dir is tlcheck's output: dir
// holds a manifest.json (a regular file) whose "files" list names, as
// local slash paths, every other regular file under it, and holds no
// other file, no symbolic link and no directory that is not the parent of
// a listed file. It reads the manifest only for its list (verify.Dir reads it
// strictly); a manifest that lists a user's file makes that file
// replaceable, which only someone able to write the manifest can arrange.
func ownedDir(dir string) error {
	data, err := readRegularPath(filepath.Join(dir, ManifestName))
	if err != nil {
		return fmt.Errorf("%s holds files but no readable %s (%s), so it is not a certificate directory this command may replace: choose another output directory", QuoteName(dir), ManifestName, StatReason(err))
	}
	var m struct {
		Files []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	if err := json.Unmarshal(data, &m); err != nil || m.Files == nil {
		return fmt.Errorf("%s: its %s is not a certificate manifest, so the directory is not one this command may replace: choose another output directory", QuoteName(dir), ManifestName)
	}
	files, dirs := map[string]bool{ManifestName: true}, map[string]bool{}
	for _, f := range m.Files {
		if !filepath.IsLocal(f.Path) || strings.Contains(f.Path, "\\") {
			return fmt.Errorf("%s: its %s lists %s, not a local path", QuoteName(dir), ManifestName, QuoteName(f.Path))
		}
		files[f.Path] = true
		for d := filepath.Dir(f.Path); d != "."; d = filepath.Dir(d) {
			dirs[filepath.ToSlash(d)] = true
		}
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && dirs[rel]:
			return nil
		case d.Type().IsRegular() && files[rel]:
			return nil
		}
		return fmt.Errorf("%w: %s holds %s, which its %s does not list: tlcheck replaces only a directory it wrote, and never removes a file it did not write (move it, or choose another output directory)", ErrNotEmpty, QuoteName(dir), QuoteName(rel), ManifestName)
	})
}

// readRegularPath reads a regular file by path (not following a final
// symbolic link), of at most MaxFileBytes.
func readRegularPath(path string) ([]byte, error) {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return ReadRegular(root, filepath.Base(path))
}

// installDir puts the finished directory tmp in dir's place (see above);
// dir was checked (outputEntries) to be missing, empty, or tlcheck's.
func installDir(tmp, dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.Rename(tmp, dir)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", QuoteName(dir))
	}
	if err := renameOverEmpty(tmp, dir); err == nil { // dir was empty
		return nil
	}
	if err := ownedDir(dir); err != nil { // checked again: it may have changed since
		return err
	}
	old, err := exchangeDirs(tmp, dir)
	if err != nil {
		return err
	}
	return os.RemoveAll(old)
}
