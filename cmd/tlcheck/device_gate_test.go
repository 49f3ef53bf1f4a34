package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/spec"
)

// withCUDA replaces the CUDA provider constructor for one test.
func withCUDA(t *testing.T, mk func(cuda.Options) (backend.Provider, error)) {
	t.Helper()
	old := newCUDAProvider
	newCUDAProvider = mk
	t.Cleanup(func() { newCUDAProvider = old })
}

func emulated(o cuda.Options) (backend.Provider, error) { return cuda.NewEmulatedProvider(o), nil }

// brokenDevice is a CUDA provider whose every launch fails, as a device
// out of memory would.
type brokenDevice struct{ backend.Provider }

func (brokenDevice) Execute(string, *spec.Attrs, []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	return spec.Tensor[spec.F32]{}, errors.New("cuda: cuMemAlloc(67108864 bytes for tl_matmul A): out of memory")
}

var quickGate = []string{"--cases", "3", "--cert-cases", "2", "--graphs", "1"}

// TestGateDeviceCUDA runs gate --device cuda with the CPU emulation of the
// kernels standing in for the GPU: the CUDA stage holds; a planted one-bit
// fault makes the gate exit 1; a device error exits 2 and leaves no
// certificate directory; an unbuilt provider is one line, exit 2, nothing
// written.
func TestGateDeviceCUDA(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole gate four times")
	}
	cases := []struct {
		name   string
		mk     func(cuda.Options) (backend.Provider, error)
		extra  []string
		code   int
		stdout string
		stderr string
		left   bool
	}{
		{"holds", emulated, nil, 0, "refine-cuda", "", true},
		// A failed certify leaves --out as it was (here: absent), never an
		// emptied or partial directory (issue 26 point 6).
		{"planted fault", emulated, []string{"--plant-cuda-bug", "matmul"}, 1, "refine-cuda: native-cuda.matmul", "gate:", false},
		{"device error", func(o cuda.Options) (backend.Provider, error) {
			return brokenDevice{cuda.NewEmulatedProvider(o)}, nil
		}, nil, 2, "", "out of memory", false},
		{"not built", func(cuda.Options) (backend.Provider, error) { return nil, cuda.ErrNotBuilt }, nil, 2, "", "--device cuda: CUDA provider not built (rebuild with -tags cuda and CGO_ENABLED=1)", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withCUDA(t, c.mk)
			out := filepath.Join(t.TempDir(), "certs")
			args := append(append([]string{"gate", "--device", "cuda", "--out", out}, quickGate...), c.extra...)
			code, stdout, stderr := runCmd(args...)
			if code != c.code || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			if c.code == 2 && strings.Count(strings.TrimSpace(lastLines(stderr)), "\n") != 0 {
				t.Errorf("exit 2 should be one line: %q", stderr)
			}
			if _, err := os.Stat(out); (err == nil) != c.left {
				t.Errorf("certificate directory left behind = %v, want %v", err == nil, c.left)
			}
			if c.code != 0 {
				return
			}
			// The CUDA refinement certificates are in the directory, and
			// `tlcheck verify` re-derives them here, where no CUDA
			// provider is registered.
			for _, op := range []string{"sum", "reduce_sum", "matmul", "linear"} {
				if _, err := os.Stat(filepath.Join(out, "refinement", "native-cuda."+op+".json")); err != nil {
					t.Errorf("no certificate: %v", err)
				}
			}
			if code, stdout, stderr := runCmd("verify", out); code != 0 || !strings.Contains(stdout, "refinement/native-cuda.matmul.json") {
				t.Errorf("verify: exit %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}

// lastLines drops progress lines ("gate: ..." written while running) and
// returns what remains.
func lastLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "tlcheck:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestGateDeviceFlags: bad --device values and a CUDA plant without the
// CUDA device are usage errors.
func TestGateDeviceFlags(t *testing.T) {
	withCUDA(t, emulated)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--device", "tpu"}, `--device: unknown value "tpu"`},
		{[]string{"--plant-cuda-bug", "sum"}, "--plant-cuda-bug needs --device cuda"},
		{[]string{"--device", "cuda", "--plant-cuda-bug", "exp"}, `--plant-cuda-bug: "exp" is not a CUDA op`},
	} {
		out := filepath.Join(t.TempDir(), "certs")
		code, _, stderr := runCmd(append([]string{"gate", "--out", out}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}
