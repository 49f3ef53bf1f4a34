package main

import (
	"strings"
	"testing"
)

// TestQuickstartDeviceCUDA: with a CUDA provider registered (the CPU
// emulation of the kernels stands in for the GPU), quickstart-mlp --device
// cuda binds a native-cuda capsule for every op the MLP uses, prints their
// report lines, and prints the CPU run's transcript (the trainer computes
// on the host; the session selects and binds).
func TestQuickstartDeviceCUDA(t *testing.T) {
	withCUDA(t, emulated)
	code, out, errs := runCmd("quickstart-mlp", "--steps", "3", "--device", "cuda", "--show-backend")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, op := range []string{"reshape", "permute", "matmul", "broadcast_to", "add", "relu", "mse_loss"} {
		if !strings.Contains(out, "native-cuda."+op) {
			t.Errorf("no report line for native-cuda.%s:\n%s", op, out)
		}
	}
	if strings.Contains(out, "reference.") {
		t.Errorf("a reference capsule was selected on --device cuda:\n%s", out)
	}
	_, cpu, _ := runCmd("quickstart-mlp", "--steps", "3")
	if last := func(s string) string { l := strings.Split(strings.TrimSpace(s), "\n"); return l[len(l)-1] }; last(out) != last(cpu) {
		t.Errorf("last line %q, CPU run %q", last(out), last(cpu))
	}
}
