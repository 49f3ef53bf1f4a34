package harness_test

import (
	"os"

	"github.com/tlcheck/tlcheck/adapters/harness"
)

// A user checks an engine of their own by implementing harness.Engine
// (Name, Module, Machines, Supports, Run, Conventions) and running the
// shared cases; here the baseline engine, tlcheck's own rules in
// binary64, on three cases: a kink, a tie and a DAG.
func ExampleRunAll() {
	var cases []harness.Case
	for _, c := range harness.Cases() {
		switch c.Name {
		case "relu", "max_tie", "dag_mlp":
			cases = append(cases, c)
		}
	}
	rep := harness.RunAll([]harness.Engine{harness.Self()}, cases, harness.Options{})
	rep.WriteText(os.Stdout, true)
	// Output:
	// engine   machine  case     ops                  obligation   verdict
	// tlcheck  tape     relu     relu                 forward      holds
	// tlcheck  tape     relu     relu                 vjp          holds
	// tlcheck  tape     relu     relu                 adjoint      holds
	// tlcheck  tape     relu     relu                 subgradient  holds
	// tlcheck  tape     relu     relu                 zero         holds
	// tlcheck  tape     max_tie  max                  forward      holds
	// tlcheck  tape     max_tie  max                  vjp          holds
	// tlcheck  tape     max_tie  max                  mass         holds
	// tlcheck  tape     max_tie  max                  zero         holds
	// tlcheck  tape     dag_mlp  matmul,tanh,sum,add  forward      holds
	// tlcheck  tape     dag_mlp  matmul,tanh,sum,add  path_sum     holds
	// tlcheck  tape     dag_mlp  matmul,tanh,sum,add  adjoint      holds
	// tlcheck  tape     dag_mlp  matmul,tanh,sum,add  zero         holds
	// tlcheck (github.com/tlcheck/tlcheck (float64), machines tape): 6 ops in 13 rows: 13 holds, 0 convention, 0 suspect, 0 inconclusive, 0 fails; 0 cases skipped
}
