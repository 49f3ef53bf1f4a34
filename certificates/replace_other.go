//go:build !linux

package certificates

import (
	"os"
	"path/filepath"
)

// exchangeDirs puts tmp in dir's place where the system has no atomic
// exchange: dir is renamed aside, then tmp into its place; it returns
// where the old dir now is.
func exchangeDirs(tmp, dir string) (string, error) {
	clean := filepath.Clean(dir)
	old, err := os.MkdirTemp(filepath.Dir(clean), "."+filepath.Base(clean)+oldInfix)
	if err != nil {
		return "", err
	}
	if err := os.Remove(old); err != nil {
		return "", err
	}
	if err := os.Rename(dir, old); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Rename(old, dir)
		return "", err
	}
	return old, nil
}

// renameOverEmpty puts tmp in place of dir when dir is an empty directory
// (removed first: not atomic where the system has no such rename).
func renameOverEmpty(tmp, dir string) error {
	if err := os.Remove(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
