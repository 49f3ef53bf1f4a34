package fpbound

import (
	"fmt"
	"math/big"
	"runtime"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// TestParallelDeterminism runs compare's bound (SharpBounds: the classic
// and first-order bounds, the exact enclosure) and the float32 and
// interval evaluations of a conv stack (its 8→8-channel 3×3 conv on
// 12×12, 83 k multiply-adds, is above spec's parallel threshold, so its
// float32 fold splits by output rows) and of a ReLU MLP at GOMAXPROCS 1,
// 2 and 8, and requires every result, printed in full, byte for byte
// equal to the GOMAXPROCS 1 one (issue 24 point 3: the same for any
// GOMAXPROCS). 1 s wall on the loaded 2-core machine.
func TestParallelDeterminism(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	mlp, err := nets.MLP(3, 16, 3, irsem.OpRelu, nets.Default)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := nets.ConvStack(5, 8, 12, 1, nets.Default)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []*nets.Net{conv, mlp} {
		var want string
		for _, procs := range []int{1, 2, 8} {
			runtime.GOMAXPROCS(procs)
			s, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
			if err != nil {
				t.Fatal(err)
			}
			f32, err := irsem.Denote(n.Graph, n.Payload, irsem.ConvertTensor[spec.F32](n.Input))
			if err != nil {
				t.Fatal(err)
			}
			iv, err := irsem.Denote(n.Graph, n.Payload, irsem.ConvertTensor[spec.Interval](n.Input))
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%+v\n%v\n%v", s, f32, iv)
			if procs == 1 {
				want = got
				continue
			}
			if got != want {
				t.Fatalf("%s: GOMAXPROCS %d gives a different result from GOMAXPROCS 1", n.Name, procs)
			}
		}
	}
}

// TestParallelErrFold runs the registry's conv over Err on operands with
// infinite bounds (each input element a product that overflows binary32),
// where the dense kernels decline and the element fold (ErrOf.FoldDot,
// saturated) runs split by output rows, at GOMAXPROCS 1, 2 and 8: every
// element's enclosure, bound, term count and flags equal GOMAXPROCS 1's,
// and the ids the same up to renaming (they are compared only for
// equality): each id is replaced by the index of its first occurrence.
func TestParallelErrFold(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	p, err := spec.Default[Err]().Lookup("conv")
	if err != nil {
		t.Fatal(err)
	}
	a := &spec.Attrs{Window: &spec.Window{Kernel: []int{3, 3}, Stride: []int{1, 1}, Pads: []int{1, 1, 1, 1}, Dilation: []int{1, 1}, Groups: 1}}
	var z Err
	huge := z.FromRat(new(big.Rat).SetFrac64(1<<62, 1))
	mk := func(s spec.Shape, sat bool) spec.Tensor[Err] {
		t := spec.Tensor[Err]{Shape: s, Data: make([]Err, s.Size())}
		for i := range t.Data {
			v := z.FromRat(big.NewRat(int64(i%29)-14, 16))
			if sat && i%3 == 0 {
				v = huge.Mul(huge).Mul(v.Add(z.FromInt(20))) // beyond binary32's range: an infinite bound
			}
			t.Data[i] = v
		}
		return t
	}
	xs := []spec.Tensor[Err]{mk(spec.Shape{1, 8, 16, 16}, true), mk(spec.Shape{8, 8, 3, 3}, false), mk(spec.Shape{8}, false)}
	canon := func(y spec.Tensor[Err]) string {
		ren := map[uint64]int{}
		out := make([]Err, len(y.Data))
		for i, v := range y.Data {
			if v.id != 0 {
				if _, ok := ren[v.id]; !ok {
					ren[v.id] = len(ren) + 1
				}
				v.id = uint64(ren[v.id])
			}
			out[i] = v
		}
		return fmt.Sprintf("%+v", out)
	}
	var want string
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		y, err := p.Forward(a, xs)
		if err != nil {
			t.Fatal(err)
		}
		if procs == 1 {
			want = canon(y)
			if sat := y.Data[0]; !sat.saturated() && sat.e < 1e300 {
				t.Fatalf("the planted overflow did not saturate the fold: %+v", sat)
			}
			continue
		}
		if got := canon(y); got != want {
			t.Fatalf("GOMAXPROCS %d: conv over Err differs from GOMAXPROCS 1", procs)
		}
	}
}
