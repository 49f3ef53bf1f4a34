package check_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/spec"
)

// pairwiseSum is a user's float32 sum kernel: a pairwise (tree) sum, whose
// order differs from a left fold. With offByOne it drops the last
// element of inputs longer than 8 — the bug a tolerance test on small
// inputs misses.
func pairwiseSum(offByOne bool) check.KernelFunc {
	var tree func(d []spec.F32) spec.F32
	tree = func(d []spec.F32) spec.F32 {
		switch len(d) {
		case 0:
			return 0
		case 1:
			return d[0]
		}
		return tree(d[:len(d)/2]) + tree(d[len(d)/2:])
	}
	return func(_ *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
		d := xs[0].Data
		if offByOne && len(d) > 8 {
			d = d[:len(d)-1]
		}
		return spec.Scalar0(tree(d)), nil
	}
}

// Example_kernel checks a user's float32 sum kernel against the semantic
// primitive sum: the correct pairwise kernel stays within the
// order-independent bound on every input kind; the off-by-one kernel is
// caught on the first long input.
func Example_kernel() {
	opts := check.KernelOptions{Cases: 32, Seed: 7, Shapes: []spec.Shape{{12}}}
	res, err := check.CheckKernel("sum", pairwiseSum(false), opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("pairwise sum: %d cases, %d failures, rule %s\n", len(res.Cases), res.Failures, res.Obligation.Rule)
	res, _ = check.CheckKernel("sum", pairwiseSum(true), opts)
	fmt.Printf("off by one: %d of %d cases fail; first:\n%v\n", res.Failures, len(res.Cases), res.Failure)
	// Output:
	// pairwise sum: 32 cases, 0 failures, rule bound
	// off by one: 19 of 32 cases fail; first:
	// refine: sum on provider user (capsule user.sum), case 0 (normal), element 0: |provider − exact| = 267056472163/536870912 ≈ 497.431 exceeds the bound 9446300394487/9007193349160960 ≈ 0.00104875 (ratio 474309); provider 0x445710aa (860.2604), exact 728905244771/536870912 ≈ 1357.69182
}
