package nets

import (
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// TestNets: every family builds a graph and payload that irsem accepts and
// evaluates over spec.F32 to the declared output shape; the same seed gives
// the same weights and another seed other ones; bad sizes are errors.
func TestNets(t *testing.T) {
	build := []struct {
		name string
		f    func(seed uint64) (*Net, error)
		out  spec.Shape
	}{
		{"relu mlp", func(s uint64) (*Net, error) { return MLP(s, 8, 3, irsem.OpRelu, Default) }, spec.Shape{8}},
		{"tanh mlp kaiming", func(s uint64) (*Net, error) { return MLP(s, 8, 0, irsem.OpTanh, Kaiming) }, spec.Shape{8}},
		{"conv", func(s uint64) (*Net, error) { return ConvStack(s, 2, 3, 2, Default) }, spec.Shape{1, 2, 3, 3}},
		{"gpt2", func(s uint64) (*Net, error) { return GPT2(s, 3, 8, 2, 2, Default, HardMask) }, spec.Shape{3, 8}},
		{"gpt2 finfo.min", func(s uint64) (*Net, error) { return GPT2(s, 3, 8, 2, 2, Default, FinfoMin) }, spec.Shape{3, 8}},
	}
	for _, tc := range build {
		n, err := tc.f(1)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out, err := irsem.Denote(n.Graph, n.Payload, irsem.ConvertTensor[spec.F32](n.Input))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !out.Shape.Equal(tc.out) {
			t.Fatalf("%s: output shape %v, want %v", tc.name, out.Shape, tc.out)
		}
		again, _ := tc.f(1)
		other, _ := tc.f(2)
		a, _ := irsem.EncodePayload(n.Payload)
		b, _ := irsem.EncodePayload(again.Payload)
		c, _ := irsem.EncodePayload(other.Payload)
		if string(a) != string(b) || !n.Graph.Equal(again.Graph) {
			t.Errorf("%s: seed 1 twice gives different nets", tc.name)
		}
		if string(a) == string(c) {
			t.Errorf("%s: seeds 1 and 2 give the same weights", tc.name)
		}
	}
	for _, bad := range []func() (*Net, error){
		func() (*Net, error) { return MLP(1, 0, 1, irsem.OpRelu, Default) },
		func() (*Net, error) { return MLP(1, 4, 1, irsem.OpExp, Default) },
		func() (*Net, error) { return ConvStack(1, 2, 3, 0, Default) },
		func() (*Net, error) { return GPT2(1, 4, 6, 2, 1, Default, HardMask) }, // head width 3
		func() (*Net, error) { return GPT2(1, 4, 8, 3, 1, Default, HardMask) }, // 3 ∤ 8
		func() (*Net, error) { return GPT2(1, 4, 8, 2, 1, Default, Mask(2)) },  // no such mask
	} {
		if _, err := bad(); err == nil {
			t.Error("bad sizes accepted")
		}
	}
}
