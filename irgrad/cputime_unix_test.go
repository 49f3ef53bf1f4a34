//go:build unix

package irgrad

import "syscall"

// processCPU is the user + system CPU time of the whole process (every
// thread: the benchmark's goroutine and the garbage collector's), in
// nanoseconds, or −1 when unknown.
func processCPU() int64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return -1
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
