package onnx

import (
	"testing"

	"github.com/tlcheck/tlcheck/limits"
)

// fuzzSeeds are the Go-built models of the unit tests: valid ones and one
// of each kind of rejection.
func fuzzSeeds() []pb {
	g := reluGraph()
	g.inits = []pb{int64Tensor("i", []int64{2}, 1, -1), tensorDims("b", Bool, 2).bytes(9, []byte{0, 1})}
	return []pb{
		convModel(),
		model(13, reluGraph().enc()),
		model(13, g.enc()),
		withAttr(attrTensor("value", floatTensor("", []int64{2}, 1, 2))),
		withAttr(attrFloat("alpha", 0.5)),
		withAttr(attrString("mode", "reflect")),
		withValue(symValueInfo("v", "N", 3)),
		withNodes(node("a", "Relu", []string{"b"}, []string{"y"})),
		withInit(rawFloatTensor("w", []int64{1 << 20, 1 << 20}, 1)),
		convModel()[:100],
	}
}

// checkModel asserts what a decoded model promises: element slices that
// match their dims, nodes in topological order, indices in place.
func checkModel(t *testing.T, m *Model) {
	if m.Graph == nil {
		t.Fatal("no graph")
	}
	defined := map[string]bool{}
	for _, v := range m.Graph.Inputs {
		defined[v.Name] = true
	}
	for _, in := range m.Graph.Initializers {
		checkTensor(t, in)
		defined[in.Name] = true
	}
	for i, n := range m.Graph.Nodes {
		if n.Index != i || n.OpType == "" {
			t.Fatalf("node %d: %+v", i, n)
		}
		for _, in := range n.Inputs {
			if in != "" && !defined[in] {
				t.Fatalf("%s: input %q not defined before", n.Where(), in)
			}
		}
		for _, out := range n.Outputs {
			defined[out] = true
		}
		for _, a := range n.Attrs {
			if a.T != nil {
				checkTensor(t, a.T)
			}
		}
	}
}

func checkTensor(t *testing.T, tn *Tensor) {
	n, err := tn.NumElements()
	if err != nil || n != tn.Len() || !tn.DataType.Supported() {
		t.Fatalf("tensor %q: %d elements, %d held, %v", tn.Name, n, tn.Len(), err)
	}
	set := 0
	for _, l := range []bool{tn.Float32 != nil, tn.Float64 != nil, tn.Int64 != nil, tn.Int32 != nil} {
		if l {
			set++
		}
	}
	if set != 1 {
		t.Fatalf("tensor %q: %d element slices set", tn.Name, set)
	}
}

// fuzzLimits keeps what a fuzzed input may make the decoder allocate small.
var fuzzLimits = limits.Limits{ONNXElements: 1 << 20, Elements: 1 << 20, ONNXNames: 1 << 12, Nodes: 1 << 10}

func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer limits.Set(fuzzLimits)()
		m, err := Decode(data)
		if err != nil {
			if m != nil {
				t.Fatal("a model and an error")
			}
			return
		}
		checkModel(t, m)
	})
}

func FuzzDecodeTensor(f *testing.F) {
	for _, s := range []pb{
		floatTensor("x", []int64{2, 2}, 1, 2, 3, 4),
		rawFloatTensor("x", []int64{3}, 1, 2, 3),
		int64Tensor("i", []int64{2}, -5, 7),
		tensorDims("d", Double, 1).packedDoubles(10, 0.1),
		tensorDims("u", Uint8, 2).bytes(9, []byte{1, 255}),
		tensorDims("b", Int8, 2).packedInts(5, -1, 1),
		rawFloatTensor("big", []int64{1 << 25, 1 << 25}, 1),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer limits.Set(fuzzLimits)()
		tn, err := DecodeTensor(data)
		if err != nil {
			return
		}
		checkTensor(t, tn)
		if rs, err := tn.Rats(); err == nil && len(rs) != tn.Len() {
			t.Fatalf("%d rationals for %d elements", len(rs), tn.Len())
		}
	})
}
