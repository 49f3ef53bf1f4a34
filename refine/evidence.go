package refine

import (
	"fmt"

	"github.com/tlcheck/tlcheck/backend"
)

// Obligation says how the refinement rung "executable primitive → declared
// semantic primitive" is discharged for one capsule under an assurance
// policy.
type Obligation struct {
	// Capsule is the capsule's name.
	Capsule string
	// Evidence is the kind of evidence behind the capsule's value
	// contract: a theorem, a checked guard (runtime guard), a test suite,
	// a numerical certificate or a trusted boundary.
	Evidence backend.EvidenceKind
	// Certificate is true when the evidence is a numerical certificate:
	// the rung holds only if the refinement check (CheckOptions) runs and
	// every case holds. For the other kinds the check is a test of the
	// claim, not its evidence.
	Certificate bool
	// Rule is the check that the capsule's reduction policy calls for:
	// RuleBitExact for fixed-left (and n/a) capsules, RuleBound for
	// implementation-defined ones.
	Rule Rule
	// Basis states what the rung rests on, e.g. "proved by theorem NAME"
	// or "trusted boundary: REASON (admitted by assurance policy
	// external)".
	Basis string
}

// Discharge decides how a capsule's value contract discharges its
// refinement rung under the assurance policy a, and rejects a capsule
// that a does not admit. It reuses the backend's trust rules: a capsule
// is admitted only when a.Accepts(c.Trust), and any contract resting on a
// trusted boundary needs trust level trusted-external — so trusted
// boundaries are admitted only under the "external" assurance policy. A
// forward capsule whose value contract has no evidence, or is marked not
// applicable, is rejected under every policy.
func Discharge(c backend.Capsule, a backend.Assurance) (Obligation, error) {
	if !a.Valid() {
		return Obligation{}, fmt.Errorf("refine: unknown assurance policy %q", a)
	}
	if !c.Trust.Valid() {
		return Obligation{}, fmt.Errorf("refine: capsule %s has unknown trust level %q", c.Name, c.Trust)
	}
	if !a.Accepts(c.Trust) {
		return Obligation{}, fmt.Errorf("refine: capsule %s has trust=%s, which assurance policy %s does not accept", c.Name, c.Trust, a)
	}
	for _, k := range backend.ContractKinds() {
		ct, _ := c.Contract(k)
		if ct.Evidence != nil && ct.Evidence.Kind() == backend.EvidenceTrustedBoundary && c.Trust != backend.TrustExternal {
			return Obligation{}, fmt.Errorf("refine: capsule %s: %s contract rests on a trusted boundary, but trust=%s", c.Name, k, c.Trust)
		}
	}
	ob := Obligation{Capsule: c.Name, Rule: RuleBitExact}
	if c.Reduction == backend.ReductionImplementationDefined {
		ob.Rule = RuleBound
	}
	ev := c.Value.Evidence
	if ev == nil {
		return Obligation{}, fmt.Errorf("refine: capsule %s: value contract has no evidence", c.Name)
	}
	ob.Evidence = ev.Kind()
	switch e := ev.(type) {
	case backend.NumericalCertificate:
		ob.Certificate = true
		ob.Basis = e.Describe() + " (" + string(ob.Rule) + " refinement check)"
	case backend.Theorem, backend.RuntimeGuard, backend.TestSuite:
		ob.Basis = e.Describe()
	case backend.TrustedBoundary:
		// Reaching here means a accepted trust=trusted-external, i.e. a is
		// the external policy.
		ob.Basis = e.Describe() + " (admitted by assurance policy " + string(a) + ")"
	default: // NotApplicable
		return Obligation{}, fmt.Errorf("refine: capsule %s: value contract is %s, but a forward capsule needs evidence", c.Name, ev.Describe())
	}
	return ob, nil
}
