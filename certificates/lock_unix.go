//go:build unix

package certificates

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock(2) on the directory p and returns the
// function that releases it. A run holds its temporary directory's lock
// until it is done; the kernel releases it when the process dies, so a
// later run can tell a dead run's directory (stale.go). The lock follows
// the directory through renames (it is on the inode).
func lockDir(p string) (unlock func(), err error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: p, Err: err}
	}
	return func() { f.Close() }, nil
}

// tryLockDir takes p's lock if no process holds it.
func tryLockDir(p string) (unlock func(), ok bool) {
	u, err := lockDir(p)
	return u, err == nil
}

// ownedByMe reports whether fi's owner is this process's user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
