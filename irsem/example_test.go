package irsem_test

import (
	"fmt"
	"os"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The chapter's worked example as IR: ℓ = Σ(x⊙x + x⊙x) at x = (3, −1.5),
// one graph value interpreted over three scalars.
func Example_quad() {
	gdata, _ := os.ReadFile("../examples/quad.ir.json")
	xdata, _ := os.ReadFile("../examples/quad.input.json")
	g, err := irsem.DecodeGraph(gdata)
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := irsem.DecodeTensor(xdata)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ := irsem.Denote(g, nil, x)
	f, _ := irsem.Denote(g, nil, irsem.ConvertTensor[spec.F32](x))
	b, _ := irsem.Denote(g, nil, irsem.ConvertTensor[spec.Binary32](x))
	fmt.Println("rat:     ", r)
	fmt.Println("f32:     ", f)
	fmt.Println("binary32:", b)
	// Output:
	// rat:      45/2
	// f32:      22.5
	// binary32: 22.5
}

// Every node's value of the MLP example over the exact rationals, and the
// forward graph lowered from it agreeing node by node.
func ExampleDenoteAll() {
	read := func(name string) []byte { b, _ := os.ReadFile("../examples/" + name); return b }
	g, _ := irsem.DecodeGraph(read("mlp.ir.json"))
	p, _ := irsem.DecodePayload(read("mlp.payload.json"))
	x, _ := irsem.DecodeTensor(read("mlp.input.json"))
	vals, err := irsem.DenoteAll(g, p, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, v := range vals {
		fmt.Printf("%d %-6s %v\n", i, g.Nodes[i].Kind.Op, v)
	}
	cmp, _ := irsem.CompareWithDenote(g, p, x)
	fmt.Println("forward graph agrees:", cmp.OK())
	// Output:
	// 0 input  [1/4, -3/4]
	// 1 linear [5/16, -37/80, -3/5, 9/20, -5/12, -37/60, 15/16, 1/2]
	// 2 relu   [5/16, 0, 0, 9/20, 0, 0, 15/16, 1/2]
	// 3 linear [9443/28800]
	// forward graph agrees: true
}

// Bad input gets one line naming the node, its tag and the field.
func ExampleDecodeGraph_errors() {
	for _, doc := range []string{
		`{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[2]},{"id":1,"kind":"relu","parents":[5],"shape":[2]}]}`,
		`{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[2]},{"id":1,"kind":"matmul","parents":[0],"shape":[2]}]}`,
		`{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[2]},{"id":1,"kind":"relu","parents":[0],"shape":[3]}]}`,
	} {
		_, err := irsem.DecodeGraph([]byte(doc))
		fmt.Println(err)
	}
	// Output:
	// node 1 (relu): field "parents": parent 5 is not < id 1 (edges must point to earlier nodes; a later parent would allow a cycle)
	// node 1 (matmul): field "parents": matmul takes 2 parents, got 1
	// node 1 (relu): field "shape": declared [3], inferred [2]
}
