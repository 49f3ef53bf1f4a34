//go:build unix

package fastcpu

import "syscall"

// processCPU is the process's CPU time (user + system, every thread) in
// nanoseconds, or −1 when unavailable.
func processCPU() int64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return -1
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
