package backend

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// Assurance is a profile's assurance policy: which trust levels it admits.
type Assurance string

// The assurance policies. AssuranceChecked admits only checked capsules;
// AssuranceExternal also admits capsules that rest on trusted boundaries.
const (
	AssuranceChecked  Assurance = "checked"
	AssuranceExternal Assurance = "external"
)

// Valid reports whether a is one of the declared policies.
func (a Assurance) Valid() bool { return a == AssuranceChecked || a == AssuranceExternal }

// Accepts reports whether the policy admits a capsule of trust level t.
func (a Assurance) Accepts(t Trust) bool {
	switch a {
	case AssuranceChecked:
		return t == TrustChecked
	case AssuranceExternal:
		return t == TrustChecked || t == TrustExternal
	}
	return false
}

// ProviderAuto is the provider policy that admits every provider; the
// first admissible capsule in catalog order wins.
const ProviderAuto = "auto"

// Profile names of the maintained profiles.
const (
	ProfileCheckedCPU  = "checked_cpu"
	ProfileCheckedCUDA = "checked_cuda"
)

// Profile is a backend profile: a device, a provider policy, an assurance
// policy, a VJP policy and the catalog that selection scans.
//
// Provider is ProviderAuto or the name of the preferred provider; with a
// named provider only that provider's capsules are admissible. VJP is the
// VJP policy: VJPTape admits capsules whose mode is VJPTape or VJPBackend,
// VJPBackend admits only VJPBackend, and VJPNone marks a forward-only
// profile (for example for planning forward graphs) that admits every
// mode. Operations without a VJP (spec NoGrad primitives) match every
// policy.
type Profile struct {
	Name      string
	Device    Device
	Provider  string
	Assurance Assurance
	VJP       VJPMode
	Catalog   *Catalog
}

// CheckedCPU returns a fresh checked_cpu profile: device cpu, provider
// auto, assurance checked, VJP policy torchlean-tape, over the reference
// catalog.
func CheckedCPU() *Profile {
	return &Profile{
		Name:      ProfileCheckedCPU,
		Device:    DeviceCPU,
		Provider:  ProviderAuto,
		Assurance: AssuranceChecked,
		VJP:       VJPTape,
		Catalog:   ReferenceCatalog(),
	}
}

// CheckedCUDA returns a fresh checked_cuda profile: device cuda, provider
// native-cuda, assurance checked, VJP policy backend-vjp, over the declared
// CUDA catalog. Its capsules are admissible, but they bind to handlers only
// once a native-cuda provider is registered in the session's Providers.
func CheckedCUDA() *Profile {
	return &Profile{
		Name:      ProfileCheckedCUDA,
		Device:    DeviceCUDA,
		Provider:  ProviderNativeCUDA,
		Assurance: AssuranceChecked,
		VJP:       VJPBackend,
		Catalog:   CUDACatalog(),
	}
}

// Profiles returns fresh copies of the maintained profiles.
func Profiles() []*Profile { return []*Profile{CheckedCPU(), FastCPU(), CheckedCUDA()} }

// ProfileFor returns the maintained profile of a device. A device without
// one yields a *NoProfileError.
func ProfileFor(device string) (*Profile, error) {
	for _, p := range Profiles() {
		if string(p.Device) == device {
			return p, nil
		}
	}
	return nil, &NoProfileError{Device: device}
}

// ProfileNamed returns the maintained profile called name.
func ProfileNamed(name string) (*Profile, error) {
	var names []string
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("backend: unknown profile %q (maintained: %s)", name, strings.Join(names, ", "))
}

// Validate checks that every policy field holds a declared value and that
// the profile has a catalog.
func (p *Profile) Validate() error {
	switch {
	case p == nil:
		return fmt.Errorf("backend: no profile")
	case p.Name == "":
		return fmt.Errorf("backend: profile has no name")
	case p.Device == "":
		return fmt.Errorf("backend: profile %s has no device", p.Name)
	case p.Provider == "":
		return fmt.Errorf("backend: profile %s has no provider policy (use %q)", p.Name, ProviderAuto)
	case !p.Assurance.Valid():
		return fmt.Errorf("backend: profile %s has unknown assurance policy %q", p.Name, p.Assurance)
	case !p.VJP.Valid():
		return fmt.Errorf("backend: profile %s has unknown vjp policy %q", p.Name, p.VJP)
	case p.Catalog == nil:
		return fmt.Errorf("backend: profile %s has no catalog", p.Name)
	}
	return nil
}

// String summarises the profile's policies.
func (p *Profile) String() string {
	if p == nil {
		return "<nil profile>"
	}
	return fmt.Sprintf("%s (device=%s provider=%s assurance=%s vjp=%s)",
		p.Name, p.Device, p.Provider, p.Assurance, p.VJP)
}

// VJPCompatible reports whether a capsule of VJP mode mode suits a profile
// of VJP policy policy, for an operation that has (opHasVJP) or lacks a
// reverse rule. Operations without a VJP always match; policy
// torchlean-tape admits torchlean-tape and backend-vjp; policy backend-vjp
// admits only backend-vjp; policy none (forward-only) admits every mode.
func VJPCompatible(policy, mode VJPMode, opHasVJP bool) bool {
	if !opHasVJP {
		return true
	}
	switch policy {
	case VJPTape:
		return mode == VJPTape || mode == VJPBackend
	case VJPBackend:
		return mode == VJPBackend
	case VJPNone:
		return true
	}
	return false
}

// Rejections returns every reason why the profile does not admit capsule c
// for op, or nil when c is admissible. The reasons come in a fixed order:
// the op, forward support, the capsule's own fields, its contracts, trust,
// provider, device, and VJP mode.
func (p *Profile) Rejections(c Capsule, op string) []string {
	var why []string
	add := func(format string, args ...any) { why = append(why, fmt.Sprintf(format, args...)) }
	if err := p.Validate(); err != nil {
		return []string{err.Error()}
	}
	info, err := spec.Info(op)
	if err != nil {
		return []string{err.Error()}
	}
	if c.Op != op {
		add("capsule implements %s, not %s", c.Op, op)
	}
	if !c.SupportsForward {
		add("does not support forward")
	}
	if !c.Trust.Valid() {
		add("unknown trust level %q", c.Trust)
	}
	if !c.VJP.Valid() {
		add("unknown vjp mode %q", c.VJP)
	}
	if !c.Reduction.Valid() {
		add("unknown reduction policy %q", c.Reduction)
	} else if c.Reduction == ReductionNA && Accumulates(op) {
		add("reduction=n/a, but %s accumulates and needs a reduction policy", op)
	}
	why = append(why, contractRejections(c, op)...)
	if c.Trust.Valid() && !p.Assurance.Accepts(c.Trust) {
		add("trust=%s is not accepted by assurance policy %s", c.Trust, p.Assurance)
	}
	if p.Provider != ProviderAuto && c.Provider != p.Provider {
		add("provider=%s, profile wants provider %s", c.Provider, p.Provider)
	}
	if c.Device != p.Device {
		add("device=%s, profile wants device %s", c.Device, p.Device)
	}
	if c.VJP.Valid() && !VJPCompatible(p.VJP, c.VJP, !info.NoGrad) {
		add("vjp=%s is not compatible with vjp policy %s", c.VJP, p.VJP)
	}
	return why
}

// contractRejections checks that the four contracts are stated for op,
// have a claim and well-formed evidence, that a forward capsule's shape,
// layout and value contracts apply, that a capsule with a reverse rule has
// VJP evidence, and that a checked capsule rests on no trusted boundary.
func contractRejections(c Capsule, op string) []string {
	var why []string
	for _, k := range ContractKinds() {
		ct, _ := c.Contract(k)
		if ct.Op != op {
			why = append(why, fmt.Sprintf("%s contract is stated for %q, not %s", k, ct.Op, op))
		}
		if strings.TrimSpace(ct.Claim) == "" {
			why = append(why, fmt.Sprintf("%s contract has no claim", k))
		}
		if ct.Evidence == nil {
			why = append(why, fmt.Sprintf("%s contract has no evidence", k))
			continue
		}
		if err := ct.Evidence.check(); err != nil {
			why = append(why, fmt.Sprintf("%s contract: %v", k, err))
		}
		kind := ct.Evidence.Kind()
		if kind == EvidenceNotApplicable {
			if k == ContractVJP && c.VJP != VJPNone && c.VJP.Valid() {
				why = append(why, fmt.Sprintf("vjp contract is not applicable, but the capsule declares vjp=%s", c.VJP))
			}
			if k != ContractVJP && c.SupportsForward {
				why = append(why, fmt.Sprintf("%s contract is not applicable, but the capsule supports forward", k))
			}
		}
		if kind == EvidenceTrustedBoundary && c.Trust == TrustChecked {
			why = append(why, fmt.Sprintf("%s contract rests on a trusted boundary, but trust=checked", k))
		}
	}
	return why
}

// Rejection records why one capsule was not selected.
type Rejection struct {
	Capsule string
	Reasons []string
}

// String is "NAME (REASON, REASON)".
func (r Rejection) String() string {
	return r.Capsule + " (" + strings.Join(r.Reasons, ", ") + ")"
}

// Selection is the outcome of selecting a capsule for one op: the chosen
// capsule and the candidates scanned (and rejected) before it.
type Selection struct {
	Op       string
	Profile  string
	Capsule  Capsule
	Rejected []Rejection
}

// Select returns the first admissible capsule for op in catalog order.
// Only capsules declared for op are candidates. When none is admissible
// the error is a *NoCapsuleError listing each candidate and why it was
// rejected. Select chooses; it does not bind (see Providers.Bind).
func (p *Profile) Select(op string) (Selection, error) {
	if err := p.Validate(); err != nil {
		return Selection{}, err
	}
	if _, err := spec.Info(op); err != nil {
		return Selection{}, fmt.Errorf("backend: profile %s: %w", p.Name, err)
	}
	sel := Selection{Op: op, Profile: p.Name}
	for _, c := range p.Catalog.ForOp(op) {
		why := p.Rejections(c, op)
		if len(why) == 0 {
			sel.Capsule = c
			return sel, nil
		}
		sel.Rejected = append(sel.Rejected, Rejection{Capsule: c.Name, Reasons: why})
	}
	return Selection{}, &NoCapsuleError{Op: op, Profile: p.Name, Policy: p.String(), Rejected: sel.Rejected}
}
