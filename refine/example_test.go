package refine_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// Example checks the fast provider's matmul against the exact semantics,
// then plants a fault of 2^16 ulps in one output element and shows how the
// failure is reported.
func Example() {
	cat, ps := backend.FastCatalog(), backend.FastProviders()
	c, _ := cat.Lookup("fast_cpu.matmul")
	b, _ := ps.Bind(c)
	res, err := refine.Check(b, "matmul", 21, 2026)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d cases, %d failures, evidence %s, rule %s\n",
		res.Capsule, len(res.Cases), res.Failures, res.Obligation.Evidence, res.Obligation.Rule)
	fmt.Printf("worst ratio %.3f in case %d (%s)\n", res.WorstFloat, res.WorstCase, res.Cases[res.WorstCase].Kind)

	bad, _ := refine.NewFlipBit(backend.NewFastCPUProvider(), "matmul", 1, 16)
	faulty, _ := backend.NewProviders(backend.NewReferenceProvider(nil), bad)
	fb, _ := faulty.Bind(c)
	res, _ = refine.CheckOptions(fb, "matmul", refine.Options{Cases: 1, Seed: 1,
		Kinds: []refine.Kind{refine.KindNormal}, Shapes: []spec.Shape{{2, 2}, {2, 2}}})
	fmt.Println(res.Failure)
	// Output:
	// fast_cpu.matmul: 21 cases, 0 failures, evidence numerical-certificate, rule bound
	// worst ratio 0.666 in case 1 (wide)
	// refine: matmul on provider fast_cpu (capsule fast_cpu.matmul), case 0 (normal), element 1: |provider − exact| = 8796155710559/9007199254740992 ≈ 0.000976569 exceeds the bound 87044465885844747488747506574378164134346751/2993154996441765999991176272831455261881565752328192 ≈ 2.90812e-08 (ratio 33580.8); provider 0xbe78ce2c (-0.24297398), exact -2197311236901983/9007199254740992 ≈ -0.243950553
}
