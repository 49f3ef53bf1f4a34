package gorgonia

import (
	"os"
	"testing"
)

// TestMain runs the tests in a private directory: gorgonia's lisp machine
// writes err.dot into the working directory when it refuses a graph
// (vm_genera.go, checkRoots), and the tests must not leave it in the
// checkout.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gorgonia-test-")
	if err == nil && os.Chdir(dir) == nil {
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}
