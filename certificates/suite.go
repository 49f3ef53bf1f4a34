package certificates

import "github.com/tlcheck/tlcheck/spec"

// FullSuite returns every certificate kind this build produces and
// verifies.
func FullSuite() *Suite {
	return NewSuite()
}

// Providers lists the providers the refinement certificates cover.
func Providers() []string { return []string{"reference", "fast_cpu"} }

// Subjects estimates how many progress steps Certify takes with o.
func (s *Suite) Subjects(o Options) int {
	if o.Ops != nil {
		return len(o.Ops)
	}
	return len(spec.Infos())
}
