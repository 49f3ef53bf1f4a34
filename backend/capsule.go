package backend

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// Device names the hardware a capsule or profile targets. Only DeviceCPU
// and DeviceCUDA have maintained profiles; any other value is accepted as
// data so that ProfileFor can explain that it has no profile.
type Device string

// The devices tlcheck knows.
const (
	DeviceCPU  Device = "cpu"
	DeviceCUDA Device = "cuda"
)

// Provider names used by the built-in catalogs: the reference provider
// (registry forward rules), the fast float32 CPU provider (FastCatalog)
// and the CUDA provider (CUDACatalog).
const (
	ProviderReference  = "reference"
	ProviderFastCPU    = spec.ProviderFastCPU
	ProviderNativeCUDA = "native-cuda"
)

// Trust is a capsule's trust level.
type Trust string

// The trust levels. A checked capsule's evidence is all checkable inside
// tlcheck; a trusted-external capsule rests on at least one stated trust
// boundary (native code, a vendor library, the hardware).
const (
	TrustChecked  Trust = "checked"
	TrustExternal Trust = "trusted-external"
)

// Valid reports whether t is one of the declared trust levels.
func (t Trust) Valid() bool { return t == TrustChecked || t == TrustExternal }

// VJPMode says which artifact owns an operation's reverse rule. It is also
// the type of a profile's VJP policy.
type VJPMode string

// The VJP modes. VJPTape: the forward value comes from the capsule and the
// backward contribution from tlcheck's own tape node (the spec registry's
// VJP rule). VJPBackend: the provider owns its reverse implementation, so
// the derivative claim also depends on it. VJPNone: the capsule has no
// reverse rule (constants, stop-gradient and random draws).
const (
	VJPNone    VJPMode = "none"
	VJPTape    VJPMode = "torchlean-tape"
	VJPBackend VJPMode = "backend-vjp"
)

// Valid reports whether m is one of the declared VJP modes.
func (m VJPMode) Valid() bool { return m == VJPNone || m == VJPTape || m == VJPBackend }

// Reduction is a capsule's numerical policy for accumulating operations.
type Reduction string

// The reduction policies. ReductionFixedLeft promises a left fold from +0
// in index order (so results are reproducible and range certificates may
// propagate through it); ReductionImplementationDefined makes no order
// promise (atomics, tree sums, fused multiply-adds), so refinement needs a
// bound that holds for every order; ReductionNA is for operations that do
// not accumulate.
const (
	ReductionFixedLeft             Reduction = "fixed-left"
	ReductionImplementationDefined Reduction = "implementation-defined"
	ReductionNA                    Reduction = "n/a"
)

// Valid reports whether r is one of the declared reduction policies.
func (r Reduction) Valid() bool {
	return r == ReductionFixedLeft || r == ReductionImplementationDefined || r == ReductionNA
}

// EvidenceKind classifies the evidence behind a contract claim.
type EvidenceKind string

// The evidence kinds. The fast_cpu capsules rest on NumericalCertificate
// evidence, discharged by package refine; Theorem is for contracts proved
// in the Lean project.
const (
	EvidenceRuntimeGuard         EvidenceKind = "runtime-guard"
	EvidenceTestSuite            EvidenceKind = "test-suite"
	EvidenceTrustedBoundary      EvidenceKind = "trusted-boundary"
	EvidenceNotApplicable        EvidenceKind = "not-applicable"
	EvidenceTheorem              EvidenceKind = "theorem"
	EvidenceNumericalCertificate EvidenceKind = "numerical-certificate"
)

// Evidence is what backs a contract claim. It is a closed sum type: the
// only implementations are RuntimeGuard, TestSuite, TrustedBoundary,
// NotApplicable, Theorem and NumericalCertificate. Use a type switch to
// inspect it.
type Evidence interface {
	// Kind classifies the evidence.
	Kind() EvidenceKind
	// Describe is the report phrase, e.g. "guarded at runtime by NAME".
	Describe() string
	// check reports a malformed evidence value (an empty name).
	check() error
}

// RuntimeGuard is evidence by a check the runtime performs before or
// while executing, named by Name.
type RuntimeGuard struct{ Name string }

// TestSuite is evidence by a named test suite that exercises the claim.
type TestSuite struct{ Name string }

// TrustedBoundary is an explicit trust assumption, stated by Reason. A
// capsule with any trusted boundary must have trust level TrustExternal.
type TrustedBoundary struct{ Reason string }

// NotApplicable marks a contract that does not apply (for example the VJP
// contract of an operation without a reverse rule).
type NotApplicable struct{}

// Theorem is evidence by a named proof (for example a Lean theorem).
type Theorem struct{ Name string }

// NumericalCertificate is evidence by a named, independently re-checkable
// numerical certificate (for example a rounding-error bound).
type NumericalCertificate struct{ Name string }

// Kind is EvidenceRuntimeGuard.
func (RuntimeGuard) Kind() EvidenceKind { return EvidenceRuntimeGuard }

// Kind is EvidenceTestSuite.
func (TestSuite) Kind() EvidenceKind { return EvidenceTestSuite }

// Kind is EvidenceTrustedBoundary.
func (TrustedBoundary) Kind() EvidenceKind { return EvidenceTrustedBoundary }

// Kind is EvidenceNotApplicable.
func (NotApplicable) Kind() EvidenceKind { return EvidenceNotApplicable }

// Kind is EvidenceTheorem.
func (Theorem) Kind() EvidenceKind { return EvidenceTheorem }

// Kind is EvidenceNumericalCertificate.
func (NumericalCertificate) Kind() EvidenceKind { return EvidenceNumericalCertificate }

// Describe is "guarded at runtime by NAME".
func (e RuntimeGuard) Describe() string { return "guarded at runtime by " + e.Name }

// Describe is "covered by test suite NAME".
func (e TestSuite) Describe() string { return "covered by test suite " + e.Name }

// Describe is "trusted boundary: REASON".
func (e TrustedBoundary) Describe() string { return "trusted boundary: " + e.Reason }

// Describe is "not applicable".
func (NotApplicable) Describe() string { return "not applicable" }

// Describe is "proved by theorem NAME".
func (e Theorem) Describe() string { return "proved by theorem " + e.Name }

// Describe is "checked by numerical certificate NAME".
func (e NumericalCertificate) Describe() string { return "checked by numerical certificate " + e.Name }

func named(kind, s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%s evidence has no name", kind)
	}
	return nil
}

func (e RuntimeGuard) check() error    { return named("runtime guard", e.Name) }
func (e TestSuite) check() error       { return named("test suite", e.Name) }
func (e TrustedBoundary) check() error { return named("trusted boundary", e.Reason) }
func (NotApplicable) check() error     { return nil }
func (e Theorem) check() error         { return named("theorem", e.Name) }
func (e NumericalCertificate) check() error {
	return named("numerical certificate", e.Name)
}

// ContractKind names one of a capsule's four contract descriptors.
type ContractKind string

// The four contract kinds, in report order.
const (
	ContractShape  ContractKind = "shape"
	ContractLayout ContractKind = "layout"
	ContractValue  ContractKind = "value"
	ContractVJP    ContractKind = "vjp"
)

// ContractKinds lists the contract kinds in report order.
func ContractKinds() []ContractKind {
	return []ContractKind{ContractShape, ContractLayout, ContractValue, ContractVJP}
}

// Contract is one contract descriptor: the primitive it is stated for, the
// claim, and the evidence behind it. Admissibility requires Op to equal
// the capsule's op, so a contract copied from another operation's capsule
// is caught.
type Contract struct {
	Op       string
	Claim    string
	Evidence Evidence
}

// Line renders the contract as "CLAIM; EVIDENCE".
func (c Contract) Line() string {
	ev := "no evidence"
	if c.Evidence != nil {
		ev = c.Evidence.Describe()
	}
	return c.Claim + "; " + ev
}

// Capsule is the metadata of one executable kernel: which primitive it
// implements, which provider and device run it, how far it is trusted,
// who owns its reverse rule, what it claims and on what evidence, and its
// numerical policy. A capsule holds no code and no tensors; Providers.Bind
// connects it to a runtime handler. Capsule is a plain value (copying it
// copies everything), so kernel plans may store capsules directly.
type Capsule struct {
	// Name identifies the capsule, conventionally "PROVIDER.OP".
	Name string
	// Op is the spec registry primitive the capsule implements.
	Op string
	// Provider names the runtime provider that executes it.
	Provider string
	// Device is the device it runs on.
	Device Device
	// Trust is the capsule's trust level.
	Trust Trust
	// SupportsForward reports that the capsule computes the forward value.
	SupportsForward bool
	// VJP says who owns the reverse rule.
	VJP VJPMode
	// Shape, Layout, Value and VJPContract are the four contract
	// descriptors.
	Shape, Layout, Value, VJPContract Contract
	// Reduction is the numerical policy for accumulating operations.
	Reduction Reduction
}

// Contract returns the descriptor of the given kind (false for an unknown
// kind).
func (c Capsule) Contract(k ContractKind) (Contract, bool) {
	switch k {
	case ContractShape:
		return c.Shape, true
	case ContractLayout:
		return c.Layout, true
	case ContractValue:
		return c.Value, true
	case ContractVJP:
		return c.VJPContract, true
	}
	return Contract{}, false
}

// Header is the capsule's report header without indentation:
//
//	relu: reference.relu provider=reference trust=checked vjp=torchlean-tape reduction=n/a
func (c Capsule) Header() string {
	return fmt.Sprintf("%s: %s provider=%s trust=%s vjp=%s reduction=%s",
		c.Op, c.Name, c.Provider, c.Trust, c.VJP, c.Reduction)
}

// ReportLines returns the capsule's report: the header indented two
// spaces, then one line per contract indented four ("shape: CLAIM;
// EVIDENCE"), without trailing newlines.
func (c Capsule) ReportLines() []string {
	lines := []string{"  " + c.Header()}
	for _, k := range ContractKinds() {
		ct, _ := c.Contract(k)
		lines = append(lines, "    "+string(k)+": "+ct.Line())
	}
	return lines
}

// Report returns ReportLines joined, each line ending in a newline.
func (c Capsule) Report() string {
	return strings.Join(c.ReportLines(), "\n") + "\n"
}

// String is the capsule's name.
func (c Capsule) String() string { return c.Name }
