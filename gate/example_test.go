package gate_test

import (
	"os"

	"github.com/tlcheck/tlcheck/gate"
	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// A result with one failing refinement item prints as a table of stages,
// then the failure, then the verdict.
func ExampleResult_WriteText() {
	r := &gate.Result{Out: "certs", Stages: []gate.Stage{
		{Name: "check", Seconds: 2, Items: []gate.Item{{GateItem: jsonout.GateItem{Name: "exp/derivative", Holds: true}}}},
		{Name: "refine", Seconds: 0.5, Items: []gate.Item{{GateItem: jsonout.GateItem{Name: "fast_cpu.sum", Failure: "element 0 exceeds the bound"}}}},
	}}
	r.WriteText(os.Stdout)
	// Output:
	// stage   items  failures  seconds  result
	// check   1      0         2.00     holds
	// refine  1      1         0.50     FAILS
	//
	// refine: fast_cpu.sum: element 0 exceeds the bound
	//
	// gate FAILS
}
