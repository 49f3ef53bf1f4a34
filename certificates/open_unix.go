//go:build unix

package certificates

import "syscall"

// openNoFollow are the extra open flags of ReadRegular: do not follow a
// final symbolic link, and do not block opening a FIFO.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
