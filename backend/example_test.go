package backend_test

import (
	"fmt"
	"os"

	"github.com/tlcheck/tlcheck/backend"
)

// An eager session on checked_cpu with --show-backend: the banner, then
// each capsule's report the first time it is selected.
func Example() {
	s, err := backend.NewSession(backend.CheckedCPU(), nil, backend.NewReport(os.Stdout))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, op := range []string{"relu", "relu", "mse_loss"} {
		if err := s.Select(op); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// [tlcheck] backend capsules used:
	//   relu: reference.relu provider=reference trust=checked vjp=torchlean-tape reduction=n/a
	//     shape: shape safety for relu; guarded at runtime by tlcheck portable runtime shape checks
	//     layout: canonical-tensor layout compatibility for relu; guarded at runtime by typed tensor layout
	//     value: relu forward refines its TorchLean semantics; covered by test suite tlcheck/rapidtests
	//     vjp: relu torchlean-tape VJP refines its TorchLean semantics; covered by test suite tlcheck/rapidtests
	//   mse_loss: reference.mse_loss provider=reference trust=checked vjp=torchlean-tape reduction=fixed-left
	//     shape: shape safety for mse_loss; guarded at runtime by tlcheck portable runtime shape checks
	//     layout: canonical-tensor layout compatibility for mse_loss; guarded at runtime by typed tensor layout
	//     value: mse_loss forward refines its TorchLean semantics; covered by test suite tlcheck/rapidtests
	//     vjp: mse_loss torchlean-tape VJP refines its TorchLean semantics; covered by test suite tlcheck/rapidtests
}

// Selecting on a device without a profile, and on checked_cuda before a
// CUDA provider is registered.
func Example_errors() {
	_, err := backend.ProfileFor("tpu")
	fmt.Println(err)

	cuda, _ := backend.ProfileFor("cuda")
	s, _ := backend.NewSession(cuda, nil, nil)
	fmt.Println(s.Select("relu"))
	// Output:
	// device `tpu` has no maintained runtime profile; provide a backend profile with executable capsules
	// backend: cannot bind capsule native-cuda.relu for relu: missing provider "native-cuda" (no runtime provider of that name is registered)
}

// A trusted-external capsule is rejected under the checked assurance
// policy, with its reasons.
func ExampleProfile_Select() {
	vendor, _ := backend.ReferenceCapsule("relu")
	vendor.Name, vendor.Trust = "vendor.relu", backend.TrustExternal
	vendor.Value.Evidence = backend.TrustedBoundary{Reason: "vendor kernel library"}
	cat, _ := backend.NewCatalog(vendor)

	p := backend.CheckedCPU()
	p.Catalog = cat
	_, err := p.Select("relu")
	fmt.Println(err)

	p.Assurance = backend.AssuranceExternal
	sel, _ := p.Select("relu")
	fmt.Println(sel.Capsule.Header())
	// Output:
	// backend: no admissible capsule for relu on profile checked_cpu (device=cpu provider=auto assurance=checked vjp=torchlean-tape): rejected vendor.relu (trust=trusted-external is not accepted by assurance policy checked)
	// relu: vendor.relu provider=reference trust=trusted-external vjp=torchlean-tape reduction=n/a
}
