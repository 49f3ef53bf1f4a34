package ranges_test

import (
	"fmt"
	"os"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/ranges"
	"github.com/tlcheck/tlcheck/spec"
)

// Trace the quad example (x⊙x + x⊙x, summed) over the box
// x ∈ [−1, 2] × [0.5, 0.5] under checked_cpu, then certify and check it.
func Example() {
	doc, err := os.ReadFile("../examples/quad.ir.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := irsem.DecodeGraph(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	box, _ := ranges.BoxFromFloat32(spec.Shape{2}, []float32{-1, 0.5}, []float32{2, 0.5})
	plan, err := ranges.PlanKernels(g, backend.CheckedCPU())
	if err != nil {
		fmt.Println(err)
		return
	}
	nodes, err := ranges.TraceNodes(g, nil, box, plan)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range nodes {
		capsule := "(source)"
		for _, k := range n.Kernels {
			capsule = k.Capsule.Name
		}
		fmt.Printf("node %d %-8s %-12s %-16s %v\n", n.ID, n.Tag, n.Rule, capsule, n.Enclosures)
	}
	cert, err := ranges.Produce(g, nil, box, backend.CheckedCPU())
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := ranges.Check(cert)
	fmt.Println("check:", err, "points replayed:", rep.Points, "fixed-left:", rep.FixedLeft)

	cert.Trace[4][0].Hi ^= 1 // one bit of one endpoint
	_, err = ranges.Check(cert)
	fmt.Println(err)
	// Output:
	// node 0 input    source       (source)         [[-1, 2] [0.5, 0.5]]
	// node 1 mul_elem square       reference.mul    [[0, 4] [0.25, 0.25]]
	// node 2 mul_elem square       reference.mul    [[0, 4] [0.25, 0.25]]
	// node 3 add      registry:add reference.add    [[0, 8] [0.5, 0.5]]
	// node 4 sum      registry:sum reference.sum    [[0.5, 8.5]]
	// check: <nil> points replayed: 21 fixed-left: [node 4 (sum): reference.sum]
	// node 4 (sum): element 0: hi claimed 0x41080001, rebuilt 0x41080000
}
