//go:build !unix

package fastcpu

func processCPU() int64 { return -1 }
