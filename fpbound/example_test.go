package fpbound_test

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// A linear layer 3 → 1 (W = (3/4, 5/8, 3), b = 1) at x = (3/2, 5/4, 3/8):
// the exact output is 1 + 9/8 + 25/32 + 9/8 = 129/32 = 4.03125, and the
// bound is Σ u·|pᵢ| + γ_3·(Σ|pᵢ| + |b| + …) ≈ (97/32)·2^-24 + γ_3·129/32 ≈
// 9.02·10⁻⁷ (doc.go, Sums and Products). A runtime
// that reports 4.03125 or its float32 neighbour holds; one that reports
// 4.0313 is provably outside the a-priori bound of every float32
// evaluation order.
func ExampleCompare() {
	w := irsem.RatTensor{Shape: spec.Shape{1, 3}, Data: []spec.Rat{spec.NewRat(3, 4), spec.NewRat(5, 8), spec.NewRat(3, 1)}}
	b := irsem.RatTensor{Shape: spec.Shape{1}, Data: []spec.Rat{spec.NewRat(1, 1)}}
	g := &irsem.Graph{InputID: 0, OutputID: 1, Nodes: []irsem.Node{
		{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: spec.Shape{3}},
		{ID: 1, Parents: []int{0}, Kind: irsem.Kind{Op: irsem.OpLinear}, Shape: spec.Shape{1}},
	}}
	p := &irsem.Payload{Entries: map[int]*irsem.Params{1: {W: &w, B: &b}}}
	x := irsem.RatTensor{Shape: spec.Shape{3}, Data: []spec.Rat{spec.NewRat(3, 2), spec.NewRat(5, 4), spec.NewRat(3, 8)}}
	for _, rec := range []float32{4.03125, 4.0312505, 4.0313} {
		r, err := fpbound.Compare(g, p, x, []float32{rec}, fpbound.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		el := r.Elements[0]
		fmt.Printf("recorded %v: exact %v, bound %.3g: %v\n", rec, el.Exact, el.Bound, el.Verdict)
	}
	// Output:
	// recorded 4.03125: exact [4.03125, 4.03125], bound 9.02e-07: holds
	// recorded 4.0312505: exact [4.03125, 4.03125], bound 9.02e-07: holds
	// recorded 4.0313: exact [4.03125, 4.03125], bound 9.02e-07: fails
}

// The same linear layer bounded for binary64 evaluations: with u = 2^-53
// the bound is Σ u·|pᵢ| + γ_3·(Σ|pᵢ| + |b| + …) ≈ (97/32)·2^-53 +
// 3·2^-53·129/32 ≈ 1.68·10⁻¹⁵, 2^-29 of the binary32 bound: a float64
// runtime that reports 4.03125 + 2^-49 (two binary64 ulps off) is outside
// it, one that reports 4.03125 + 2^-50 is inside.
func ExampleBounds64() {
	w := irsem.RatTensor{Shape: spec.Shape{1, 3}, Data: []spec.Rat{spec.NewRat(3, 4), spec.NewRat(5, 8), spec.NewRat(3, 1)}}
	b := irsem.RatTensor{Shape: spec.Shape{1}, Data: []spec.Rat{spec.NewRat(1, 1)}}
	g := &irsem.Graph{InputID: 0, OutputID: 1, Nodes: []irsem.Node{
		{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: spec.Shape{3}},
		{ID: 1, Parents: []int{0}, Kind: irsem.Kind{Op: irsem.OpLinear}, Shape: spec.Shape{1}},
	}}
	p := &irsem.Payload{Entries: map[int]*irsem.Params{1: {W: &w, B: &b}}}
	x := irsem.RatTensor{Shape: spec.Shape{3}, Data: []spec.Rat{spec.NewRat(3, 2), spec.NewRat(5, 4), spec.NewRat(3, 8)}}
	e32, err := fpbound.Bounds(g, p, x, fpbound.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	e64, err := fpbound.Bounds64(g, p, x, fpbound.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("binary32 bound %.3g, binary64 bound %.3g (2^%.0f of it)\n", e32[0].Bound, e64[0].Bound, math.Log2(e64[0].Bound/e32[0].Bound))
	fmt.Println(0x1p-50 <= e64[0].Bound, 0x1p-49 <= e64[0].Bound)
	// Output:
	// binary32 bound 9.02e-07, binary64 bound 1.68e-15 (2^-29 of it)
	// true false
}
