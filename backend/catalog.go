package backend

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// Evidence names used by the built-in catalogs.
const (
	// ShapeGuard is the runtime guard behind every reference shape
	// contract: the registry's arity and shape inference run before each
	// forward rule and the result shape is checked after it.
	ShapeGuard = "tlcheck portable runtime shape checks"
	// LayoutGuard is the runtime guard behind every reference layout
	// contract: spec.Tensor is dense row-major with its shape carried at
	// run time.
	LayoutGuard = "typed tensor layout"
	// ReferenceSuite is the test suite behind reference value and VJP
	// contracts.
	ReferenceSuite = "tlcheck/rapidtests"
	// CUDAShapeGuard is the runtime guard behind CUDA shape contracts:
	// the provider checks device storage sizes against the shapes before a
	// launch.
	CUDAShapeGuard = "native-cuda storage checks"
	// CUDALayoutGuard is the runtime guard behind CUDA layout contracts.
	CUDALayoutGuard = "flat-row-major device layout"
	// CUDASuite is the test suite behind CUDA value and VJP contracts (run
	// only on GPU machines).
	CUDASuite = "tlcheck/cuda"
	// CUDACertificate names the numerical certificate behind the value
	// contracts of the accumulating native-cuda capsules: package refine's
	// order-independent rounding-error bound (γ_g·Σ|terms| + p·2^-149),
	// checked in exact rational arithmetic against the registry's Rat
	// semantics, which holds for any reduction order the GPU uses (tree,
	// atomic).
	CUDACertificate = "tlcheck/refine gamma_n bound (cuda)"
)

// Accumulates reports whether op's forward rule accumulates (a reduction,
// matmul, linear, a loss or a normalisation: the registry's
// spec.OpInfo.Accumulates), i.e. whether its capsules need a reduction
// policy other than n/a. Their reference capsules are fixed-left; CUDA's
// are implementation-defined. It is false for an op the registry does not
// know.
func Accumulates(op string) bool {
	info, err := spec.Info(op)
	return err == nil && info.Accumulates
}

// Catalog is an ordered, immutable list of capsules with unique names.
// Selection scans it in order, so earlier capsules win among admissible
// ones. Extend a catalog with Append, which returns a new catalog (for
// example, issue 6's fast_cpu capsules placed ahead of the reference ones).
type Catalog struct {
	caps []Capsule
}

// NewCatalog builds a catalog. It rejects an empty capsule name and a
// duplicate name. It does not judge contracts: that is admissibility's
// job, so that a wrong capsule is reported with its reason at selection.
func NewCatalog(caps ...Capsule) (*Catalog, error) {
	return (&Catalog{}).Append(caps...)
}

// Append returns a new catalog holding c's capsules followed by caps.
func (c *Catalog) Append(caps ...Capsule) (*Catalog, error) {
	var old []Capsule
	if c != nil {
		old = c.caps
	}
	out := &Catalog{caps: make([]Capsule, 0, len(old)+len(caps))}
	seen := make(map[string]bool, len(old)+len(caps))
	for _, cp := range append(append([]Capsule(nil), old...), caps...) {
		if cp.Name == "" {
			return nil, fmt.Errorf("backend: catalog entry %d (op %q) has no name", len(out.caps), cp.Op)
		}
		if seen[cp.Name] {
			return nil, fmt.Errorf("backend: catalog has two capsules named %q", cp.Name)
		}
		seen[cp.Name] = true
		out.caps = append(out.caps, cp)
	}
	return out, nil
}

// Len is the number of capsules.
func (c *Catalog) Len() int {
	if c == nil {
		return 0
	}
	return len(c.caps)
}

// Capsules returns a copy of the capsules in catalog order.
func (c *Catalog) Capsules() []Capsule {
	if c == nil {
		return nil
	}
	return append([]Capsule(nil), c.caps...)
}

// ForOp returns the capsules declared for op, in catalog order.
func (c *Catalog) ForOp(op string) []Capsule {
	if c == nil {
		return nil
	}
	var out []Capsule
	for _, cp := range c.caps {
		if cp.Op == op {
			out = append(out, cp)
		}
	}
	return out
}

// Lookup returns the capsule called name.
func (c *Catalog) Lookup(name string) (Capsule, bool) {
	if c != nil {
		for _, cp := range c.caps {
			if cp.Name == name {
				return cp, true
			}
		}
	}
	return Capsule{}, false
}

// ReferenceCapsule returns the reference CPU capsule for the registry
// primitive op: provider reference, trust checked, forward from the spec
// registry's rule, VJP owned by tlcheck's tape (none for NoGrad
// primitives), shape and layout guarded at run time, value and VJP covered
// by the tlcheck/rapidtests suite, fixed-left reductions for accumulating
// primitives. It fails for an op the registry does not know.
func ReferenceCapsule(op string) (Capsule, error) {
	info, err := spec.Info(op)
	if err != nil {
		return Capsule{}, fmt.Errorf("backend: no reference capsule: %w", err)
	}
	return referenceCapsule(info), nil
}

func referenceCapsule(info *spec.OpInfo) Capsule {
	c := reference.capsule(info)
	if Accumulates(info.Name) {
		c.Reduction = ReductionFixedLeft
	}
	return c
}

// A provision is what a provider's capsules share: the provider, its
// device, who owns the VJP, the run-time guards of shape and layout, and
// the test suite behind the value and VJP contracts.
type provision struct {
	provider    string
	device      Device
	vjp         VJPMode
	shapeGuard  string
	layout      string // the layout the layout contract names
	layoutGuard string
	suite       string
}

var (
	reference  = provision{ProviderReference, DeviceCPU, VJPTape, ShapeGuard, "canonical-tensor", LayoutGuard, ReferenceSuite}
	nativeCUDA = provision{ProviderNativeCUDA, DeviceCUDA, VJPBackend, CUDAShapeGuard, "flat-row-major", CUDALayoutGuard, CUDASuite}
)

// capsule returns pv's trust-checked capsule for the primitive info with
// forward support, no reduction (ReductionNA) and, for a NoGrad
// primitive, no VJP.
func (pv provision) capsule(info *spec.OpInfo) Capsule {
	op := info.Name
	c := Capsule{
		Name:            pv.provider + "." + op,
		Op:              op,
		Provider:        pv.provider,
		Device:          pv.device,
		Trust:           TrustChecked,
		SupportsForward: true,
		VJP:             pv.vjp,
		Shape:           Contract{op, "shape safety for " + op, RuntimeGuard{pv.shapeGuard}},
		Layout:          Contract{op, pv.layout + " layout compatibility for " + op, RuntimeGuard{pv.layoutGuard}},
		Value:           Contract{op, op + " forward refines its TorchLean semantics", TestSuite{pv.suite}},
		Reduction:       ReductionNA,
	}
	if info.NoGrad {
		c.VJP = VJPNone
		c.VJPContract = Contract{op, op + " has no VJP (zero by definition)", NotApplicable{}}
	} else {
		c.VJPContract = Contract{op, op + " " + string(pv.vjp) + " VJP refines its TorchLean semantics", TestSuite{pv.suite}}
	}
	return c
}

// CUDACapsule returns the declared native-cuda capsule for the registry
// primitive op: provider native-cuda, device cuda, trust checked (its claims
// rest on storage guards and the GPU test suite), flat-row-major layout,
// VJP owned by the provider (none for NoGrad primitives) and
// implementation-defined reductions for accumulating primitives. The value
// contracts of the accumulating primitives that package refine checks
// (matmul, linear, sum, reduce_sum: those with a non-reference provider
// in the registry) rest on the numerical certificate CUDACertificate, the
// others on the GPU test suite CUDASuite. It fails
// for an op the registry does not know.
func CUDACapsule(op string) (Capsule, error) {
	info, err := spec.Info(op)
	if err != nil {
		return Capsule{}, fmt.Errorf("backend: no native-cuda capsule: %w", err)
	}
	return cudaCapsule(info), nil
}

func cudaCapsule(info *spec.OpInfo) Capsule {
	op := info.Name
	c := nativeCUDA.capsule(info)
	if Accumulates(op) {
		c.Reduction = ReductionImplementationDefined
		// The certificate exists for the accumulating ops whose term
		// structure package refine knows: those with a non-reference
		// provider in the registry (refine.Ops). The others keep the
		// test-suite evidence: no checker would discharge a certificate.
		if len(info.Providers) > 0 {
			c.Value = Contract{op, op + " forward refines its TorchLean semantics within refine's order-independent γ bound", NumericalCertificate{CUDACertificate}}
		}
	}
	return c
}

// ReferenceCatalog returns the reference CPU catalog: one capsule per
// registry primitive, in registry order (see ReferenceCapsule).
func ReferenceCatalog() *Catalog {
	return catalogOf(referenceCapsule)
}

// CUDACatalog returns the declared native-cuda catalog: one capsule per
// registry primitive, in registry order (see CUDACapsule). Declaring a
// capsule does not make it executable: Providers.Bind fails until a
// native-cuda provider is registered.
func CUDACatalog() *Catalog {
	return catalogOf(cudaCapsule)
}

func catalogOf(mk func(*spec.OpInfo) Capsule) *Catalog {
	infos := spec.Infos()
	c := &Catalog{caps: make([]Capsule, 0, len(infos))}
	for _, info := range infos {
		c.caps = append(c.caps, mk(info))
	}
	return c
}
