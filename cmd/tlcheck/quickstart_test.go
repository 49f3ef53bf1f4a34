package main

import (
	"strings"
	"testing"
)

const quick2026 = `== Quickstart: simple MLP training (seed=2026, steps=2) ==
target(heldout)    = [0.200000]
untrained(heldout) = [-0.088261]
dataset size = 25
mean_loss(before training) = 0.495227
step 0: loss=0.250488
mean_loss(after training) = 0.392821
steps=2 arithmetic=native scalar=Float32 loss=0.495227 -> 0.392821
trained(heldout) = [0.019031]
`

// TestQuickstartCommand diffs the nine lines of §6 under both executions
// and both arithmetics (the ieee run differs only in its labels).
func TestQuickstartCommand(t *testing.T) {
	for _, exec := range []string{"eager", "typed-graph"} {
		for _, arith := range []string{"native", "ieee"} {
			code, out, errs := runCmd("quickstart-mlp", "--steps", "2", "--seed", "2026", "--execution", exec, "--arithmetic", arith)
			if code != 0 {
				t.Fatalf("%s/%s: exit %d: %s", exec, arith, code, errs)
			}
			want := quick2026
			if arith == "ieee" {
				want = strings.Replace(want, "arithmetic=native scalar=Float32", "arithmetic=ieee scalar=Binary32", 1)
			}
			if out != want {
				t.Errorf("%s/%s:\n%s\nwant\n%s", exec, arith, out, want)
			}
		}
	}
}

func TestQuickstartShowBackend(t *testing.T) {
	code, out, _ := runCmd("quickstart-mlp", "--steps", "1", "--seed", "2026", "--show-backend")
	if code != 0 {
		t.Fatal(code)
	}
	want := []string{"reshape", "permute", "matmul", "broadcast_to", "add", "relu", "mse_loss"}
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "    ") {
			got = append(got, strings.SplitN(strings.TrimSpace(line), ":", 2)[0])
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("selected capsules %v, want the seven of §5 %v", got, want)
	}
	if !strings.Contains(out, "  relu: reference.relu provider=reference trust=checked vjp=torchlean-tape reduction=n/a\n") {
		t.Fatalf("relu report line missing:\n%s", out)
	}
	if !strings.Contains(out, "matmul: reference.matmul provider=reference trust=checked vjp=torchlean-tape reduction=fixed-left") {
		t.Fatal("matmul must be fixed-left")
	}
}

func TestQuickstartBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--steps", "-1"}, "--steps must be between 0 and 10000000, got -1"},
		{[]string{"--steps", "x"}, "--steps: not an integer: x"},
		{[]string{"--seed", "-3"}, "--seed: not an unsigned integer (must be ≥ 0): -3"},
		{[]string{"--seed", "abc"}, "--seed: not an integer: abc"},
		{[]string{"--execution", "jit"}, `unknown execution "jit"`},
		{[]string{"--arithmetic", "bf16"}, `--arithmetic: unknown value "bf16"`},
		{[]string{"--device", "tpu"}, "device `tpu` has no maintained runtime profile; provide a backend profile with executable capsules"},
		{[]string{"--device", "cuda"}, "CUDA provider not built"},
		{[]string{"--device", "cuda", "--execution", "typed-graph"}, "CPU execution only"},
		{[]string{"--frob"}, "quickstart-mlp: unknown flag --frob (run 'tlcheck help quickstart-mlp')"},
	}
	for _, c := range cases {
		code, out, errs := runCmd(append([]string{"quickstart-mlp"}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errs, c.want)
		}
	}
}
