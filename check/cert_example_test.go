package check_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/check"
)

// Example_certificate writes the certificate of a correct user primitive
// (Options.CertDir) and re-derives it with Verify, as a user's go test
// would; then it verifies the same directory against a VJP that is wrong
// at a tie, which the verifier's recomputation refuses, naming the file
// and the field. (tlcheck verify on this directory exits 2: it does not
// know mymax's rules.)
func Example_certificate() {
	certs, err := os.MkdirTemp("", "certs")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(certs)
	rep, err := check.Find(mymax(false), check.Options{CertDir: certs})
	if err != nil || rep.Failure != nil {
		fmt.Println(err, rep.Failure)
		return
	}
	vr, err := check.Verify(check.CertPath(certs, mymax(false)), mymax(false))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range vr.Files {
		fmt.Printf("%s: %d cases re-derived (seed %d)\n", f.Path, f.Cases, vr.Manifest.Seed)
	}
	_, err = check.Verify(rep.Certificate, mymax(true))
	var fe *certificates.FieldError
	if errors.As(err, &fe) {
		fmt.Printf("wrong VJP: %s: field %s\n", fe.File, fe.Field)
	}
	// Output:
	// adjointness/mymax.json: 100 cases re-derived (seed 1)
	// wrong VJP: adjointness/mymax.json: field cases[0].rhs
}
