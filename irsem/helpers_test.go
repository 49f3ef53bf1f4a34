package irsem

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// graphOf numbers the nodes by position and makes node 0 the input and
// the last node the output.
func graphOf(nodes ...Node) *Graph {
	for i := range nodes {
		nodes[i].ID = i
		if nodes[i].Parents == nil {
			nodes[i].Parents = []int{}
		}
	}
	return &Graph{InputID: 0, OutputID: len(nodes) - 1, Nodes: nodes}
}

// nd builds a node; opts set attributes.
func nd(op Op, parents []int, shape spec.Shape, opts ...func(*Kind)) Node {
	n := Node{Parents: parents, Kind: Kind{Op: op}, Shape: shape}
	for _, o := range opts {
		o(&n.Kind)
	}
	return n
}

func input(shape ...int) Node { return nd(OpInput, nil, spec.Shape(shape)) }

func withAxis(a int) func(*Kind)           { return func(k *Kind) { k.Axis = a } }
func withSeed(s uint64) func(*Kind)        { return func(k *Kind) { k.Seed = s } }
func withValueShape(s ...int) func(*Kind)  { return func(k *Kind) { k.ValueShape = spec.Shape(s) } }
func withWindow(w spec.Window) func(*Kind) { return func(k *Kind) { k.Window = &w } }
func withMask(m HardMask) func(*Kind)      { return func(k *Kind) { k.Mask = &m } }
func withPerm(p ...int) func(*Kind)        { return func(k *Kind) { k.Perm = p } }
func withAxes(a, b int) func(*Kind)        { return func(k *Kind) { k.Axis1, k.Axis2 = a, b } }
func withInOut(in, out spec.Shape) func(*Kind) {
	return func(k *Kind) { k.InShape, k.OutShape = in, out }
}

// rat parses an exact rational or fails the test.
func rat(t testing.TB, s string) spec.Rat {
	t.Helper()
	r, err := ParseRational(s)
	if err != nil {
		t.Fatalf("rat(%q): %v", s, err)
	}
	return r
}

// rt builds an exact tensor from rational strings.
func rt(t testing.TB, shape spec.Shape, vs ...string) RatTensor {
	t.Helper()
	data := make([]spec.Rat, len(vs))
	for i, v := range vs {
		data[i] = rat(t, v)
	}
	x, err := spec.NewTensor(shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func rtp(t testing.TB, shape spec.Shape, vs ...string) *RatTensor {
	x := rt(t, shape, vs...)
	return &x
}

// ints builds an exact tensor from integers.
func ints(shape spec.Shape, vs ...int64) RatTensor {
	data := make([]spec.Rat, len(vs))
	for i, v := range vs {
		data[i] = spec.NewRat(v, 1)
	}
	return RatTensor{Shape: shape, Data: data}
}

func payloadOf(entries map[int]*Params) *Payload { return &Payload{Entries: entries} }

// example reads a file of examples/.
func example(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func exampleGraph(t testing.TB, name string) *Graph {
	t.Helper()
	g, err := DecodeGraph(example(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return g
}

func examplePayload(t testing.TB, name string) *Payload {
	t.Helper()
	p, err := DecodePayload(example(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

func exampleTensor(t testing.TB, name string) RatTensor {
	t.Helper()
	x, err := DecodeTensor(example(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return x
}

func tensorString[T spec.Scalar[T]](x spec.Tensor[T]) string {
	return x.Shape.String() + " " + x.String()
}
