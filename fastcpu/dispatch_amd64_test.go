//go:build amd64 && !purego && linux

package fastcpu

import (
	"os"
	"strings"
	"testing"
)

// TestDispatchMatchesKernel checks the dispatch decisions against an
// independent source: Linux lists "avx2" (and "avx512f") among a CPU's
// flags in /proc/cpuinfo only when the CPU has the extension and the
// kernel enabled its register state, the two conditions the vector
// kernels need.
func TestDispatchMatchesKernel(t *testing.T) {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	var flags string
	for _, line := range strings.Split(string(data), "\n") {
		name, f, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(name) == "flags" {
			flags = " " + f + " "
			break
		}
	}
	for _, c := range []struct {
		flag string
		use  bool
	}{{"avx2", useAVX2}, {"avx512f", useAVX512}} {
		if kernelSays := strings.Contains(flags, " "+c.flag+" "); c.use != kernelSays {
			t.Errorf("dispatch uses %s: %v, but /proc/cpuinfo lists it: %v", c.flag, c.use, kernelSays)
		}
	}
}
