//go:build !unix

package certificates

import "io/fs"

// lockDir is a no-op where the system has no flock(2).
func lockDir(string) (func(), error) { return func() {}, nil }

// tryLockDir never succeeds where a live run cannot be told from a dead
// one: no temporary directory is ever removed as stale there.
func tryLockDir(string) (func(), bool) { return nil, false }

// ownedByMe cannot be decided here; tryLockDir refuses anyway.
func ownedByMe(fs.FileInfo) bool { return false }
