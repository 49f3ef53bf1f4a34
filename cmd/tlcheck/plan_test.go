package main

import (
	"strings"
	"testing"
)

func TestPlanCommand(t *testing.T) {
	f := badInputs(t)
	mlp := irExamples[2].graph
	cases := []struct {
		args  []string
		code  int
		out   []string
		inErr string
	}{
		{[]string{"plan", "--graph", mlp}, 0, []string{
			"node 0 (input): source, no kernel (the caller's input)\n",
			"node 1 (linear): linear -> reference.linear provider=reference reduction=fixed-left\n",
			"node 2 (relu): relu -> reference.relu provider=reference reduction=n/a\n",
			"verdict: accepted: 3 kernels for 4 nodes (1 source) on profile checked_cpu\n",
			"binding: ok: 3 kernels bound to runtime handlers\n"}, ""},
		{[]string{"plan", "--graph", irExamples[1].graph, "--profile", "checked_cpu"}, 0, []string{"node 3 (detach): detach -> reference.detach"}, ""},
		{[]string{"plan", "--graph", mlp, "--profile", "checked_cuda"}, 1, []string{
			"node 1 (linear): linear -> native-cuda.linear provider=native-cuda reduction=implementation-defined\n",
			"verdict: accepted",
			"binding: fails: node 1 (linear): capsule native-cuda.linear is unbound: backend: cannot bind capsule native-cuda.linear for linear: missing provider \"native-cuda\""}, "plan accepted on profile checked_cuda but its capsules do not bind: node 1 (linear): capsule native-cuda.linear is unbound"},
		{[]string{"plan", "--graph", mlp, "--profile", "fast_cpu"}, 0, []string{"linear -> fast_cpu.linear provider=fast_cpu reduction=implementation-defined", "binding: ok"}, ""},
		{[]string{"plan", "--graph", f["pool"]}, 0, []string{
			"node 1 (max_pool): max_pool -> reference.max_pool provider=reference reduction=n/a\n",
			"verdict: accepted: 2 kernels for 3 nodes (1 source) on profile checked_cpu\n"}, ""},
		{[]string{"plan", "--graph", f["iro"]}, 0, []string{
			"node 1 (bernoulli_mask): keep_mask -> reference.keep_mask provider=reference reduction=n/a\n",
			"verdict: accepted: 2 kernels for 3 nodes (1 source) on profile checked_cpu\n"}, ""},
		{[]string{"plan"}, 2, nil, "plan: --graph or --onnx is required"},
		{[]string{"plan", "--graph", mlp, "--profile", "tpu"}, 2, nil, `--profile: unknown value "tpu" (want checked_cpu|fast_cpu|checked_cuda)`},
		{[]string{"plan", "--graph", f["missing"]}, 2, nil, "--graph " + f["missing"] + ": cannot read"},
		{[]string{"plan", "--graph", f["badnode"]}, 2, nil, "--graph " + f["badnode"] + ": node 1 (relu): field \"parents\""},
		{[]string{"plan", "--graph", f["malformed"]}, 2, nil, "--graph " + f["malformed"] + ": "},
	}
	for _, c := range cases {
		code, out, errs := runCmd(c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, c.code, errs)
		}
		for _, w := range c.out {
			if !strings.Contains(out, w) {
				t.Errorf("%v: stdout lacks %q:\n%s", c.args, w, out)
			}
		}
		if c.code != 0 && (!strings.Contains(errs, c.inErr) || strings.Count(errs, "\n") != 1) {
			t.Errorf("%v: stderr %q, want one line with %q", c.args, errs, c.inErr)
		}
		if c.code == 2 && out != "" {
			t.Errorf("%v: stdout %q on bad input", c.args, out)
		}
	}
}
