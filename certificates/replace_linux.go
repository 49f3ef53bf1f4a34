//go:build linux

package certificates

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// exchangeDirs swaps the directories tmp and dir atomically
// (renameat2 RENAME_EXCHANGE) and returns where the old dir now is.
func exchangeDirs(tmp, dir string) (string, error) {
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		if err == unix.ENOSYS || err == unix.EINVAL {
			return exchangeByRename(tmp, dir)
		}
		return "", &os.LinkError{Op: "exchange", Old: tmp, New: dir, Err: err}
	}
	return tmp, nil
}

// exchangeByRename is the fallback where the file system cannot exchange:
// dir is renamed aside, then tmp into its place.
func exchangeByRename(tmp, dir string) (string, error) {
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

// renameOverEmpty renames tmp onto dir, which rename(2) allows, atomically,
// only when dir is an empty directory (os.Rename refuses any existing
// directory).
func renameOverEmpty(tmp, dir string) error { return unix.Rename(tmp, dir) }
