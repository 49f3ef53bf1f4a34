//go:build amd64 && !purego && linux

package fastcpu

import (
	"os"
	"strings"
	"testing"
)

// TestAVX2DispatchMatchesKernel checks the dispatch decision against an
// independent source: Linux lists "avx2" among a CPU's flags in
// /proc/cpuinfo only when the CPU has it and the kernel enabled the YMM
// state, the two conditions the vector kernel needs.
func TestAVX2DispatchMatchesKernel(t *testing.T) {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	kernelSays := false
	for _, line := range strings.Split(string(data), "\n") {
		name, flags, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(name) == "flags" {
			kernelSays = strings.Contains(" "+flags+" ", " avx2 ")
			break
		}
	}
	if useAVX2 != kernelSays {
		t.Fatalf("useAVX2 = %v, but /proc/cpuinfo lists avx2: %v", useAVX2, kernelSays)
	}
}
