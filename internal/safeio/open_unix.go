//go:build unix

package safeio

import "syscall"

// openFlags are the extra flags of Open: do not block opening a FIFO that
// replaced the file after Stat, and do not leak the descriptor to a child.
const openFlags = syscall.O_NONBLOCK | syscall.O_CLOEXEC
