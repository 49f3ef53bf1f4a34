package backend_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/spec"
)

// quickstartOps is the op sequence a CPU quickstart step selects: each
// linear layer is reshape → permute(W) → matmul → broadcast_to(b) → add →
// reshape back, then relu and the MSE loss.
var quickstartOps = []string{
	"reshape", "permute", "matmul", "broadcast_to", "add", "reshape", // linear 2→8
	"relu",
	"reshape", "permute", "matmul", "broadcast_to", "add", "reshape", // linear 8→1
	"mse_loss",
}

func TestQuickstartCapsules(t *testing.T) {
	var out bytes.Buffer
	s, err := backend.NewSession(backend.CheckedCPU(), nil, backend.NewReport(&out))
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range quickstartOps {
		if err := s.Select(op); err != nil {
			t.Fatalf("Select(%s): %v", op, err)
		}
	}
	want := []struct {
		op        string
		reduction backend.Reduction
	}{
		{"reshape", backend.ReductionNA},
		{"permute", backend.ReductionNA},
		{"matmul", backend.ReductionFixedLeft},
		{"broadcast_to", backend.ReductionNA},
		{"add", backend.ReductionNA},
		{"relu", backend.ReductionNA},
		{"mse_loss", backend.ReductionFixedLeft},
	}
	got := s.Selected()
	if len(got) != len(want) {
		t.Fatalf("selected %d capsules %v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		c := got[i]
		if c.Op != w.op || c.Name != "reference."+w.op {
			t.Errorf("capsule %d = %s (op %s), want reference.%s", i, c.Name, c.Op, w.op)
		}
		if c.Provider != backend.ProviderReference || c.Device != backend.DeviceCPU ||
			c.Trust != backend.TrustChecked || c.VJP != backend.VJPTape || !c.SupportsForward {
			t.Errorf("%s: provider=%s device=%s trust=%s vjp=%s forward=%t", c.Name, c.Provider, c.Device, c.Trust, c.VJP, c.SupportsForward)
		}
		if c.Reduction != w.reduction {
			t.Errorf("%s: reduction=%s, want %s", c.Name, c.Reduction, w.reduction)
		}
	}
	// One banner, then seven capsules of five lines each.
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1+7*5 || lines[0] != backend.Banner {
		t.Fatalf("report has %d lines:\n%s", len(lines), out.String())
	}
	if h := lines[1+2*5]; h != "  matmul: reference.matmul provider=reference trust=checked vjp=torchlean-tape reduction=fixed-left" {
		t.Errorf("matmul header = %q", h)
	}
}

func TestReferenceCatalog(t *testing.T) {
	cat := backend.ReferenceCatalog()
	infos := spec.Infos()
	caps := cat.Capsules()
	if len(caps) != len(infos) {
		t.Fatalf("catalog has %d capsules, registry %d primitives", len(caps), len(infos))
	}
	fixedLeft := []string{"sum", "reduce_sum", "reduce_mean", "mse_loss", "matmul", "linear", "softmax", "log_softmax", "layer_norm",
		"conv", "conv_transpose", "avg_pool", "avg_pool_nd",
		"instance_norm", "lrn", "hard_masked_softmax", "reduce_prod", "bce_with_logits", "l2_normalize", "renorm"}
	p := backend.CheckedCPU()
	for i, info := range infos {
		c := caps[i]
		if c.Op != info.Name || c.Name != "reference."+info.Name {
			t.Fatalf("capsule %d = %s for %s, want reference.%s", i, c.Name, c.Op, info.Name)
		}
		wantVJP, wantEv := backend.VJPTape, backend.EvidenceTestSuite
		if info.NoGrad {
			wantVJP, wantEv = backend.VJPNone, backend.EvidenceNotApplicable
		}
		if c.VJP != wantVJP || c.VJPContract.Evidence.Kind() != wantEv {
			t.Errorf("%s: vjp=%s evidence %s, want %s %s", c.Name, c.VJP, c.VJPContract.Evidence.Kind(), wantVJP, wantEv)
		}
		wantRed := backend.ReductionNA
		if slices.Contains(fixedLeft, info.Name) {
			wantRed = backend.ReductionFixedLeft
		}
		if c.Reduction != wantRed {
			t.Errorf("%s: reduction=%s, want %s", c.Name, c.Reduction, wantRed)
		}
		if why := p.Rejections(c, info.Name); why != nil {
			t.Errorf("%s rejected on checked_cpu: %v", c.Name, why)
		}
		sel, err := p.Select(info.Name)
		if err != nil || sel.Capsule.Name != c.Name || len(sel.Rejected) != 0 {
			t.Errorf("Select(%s) = %s, %v, rejected %v", info.Name, sel.Capsule.Name, err, sel.Rejected)
		}
	}
}

// externalRelu is a CPU relu capsule resting on a trusted boundary.
func externalRelu() backend.Capsule {
	c, _ := backend.ReferenceCapsule("relu")
	c.Name = "vendor.relu"
	c.Trust = backend.TrustExternal
	c.Value.Evidence = backend.TrustedBoundary{Reason: "vendor kernel library"}
	return c
}

func TestAssurancePolicies(t *testing.T) {
	ref, err := backend.ReferenceCapsule("relu")
	if err != nil {
		t.Fatal(err)
	}
	ext := externalRelu()
	tests := []struct {
		name      string
		assurance backend.Assurance
		caps      []backend.Capsule
		want      string // selected capsule; "" for an error
		reason    string // expected in the rejection of vendor.relu
	}{
		{"checked skips external", backend.AssuranceChecked, []backend.Capsule{ext, ref}, "reference.relu",
			"trust=trusted-external is not accepted by assurance policy checked"},
		{"checked has nothing else", backend.AssuranceChecked, []backend.Capsule{ext}, "",
			"trust=trusted-external is not accepted by assurance policy checked"},
		{"external admits external first", backend.AssuranceExternal, []backend.Capsule{ext, ref}, "vendor.relu", ""},
		{"external keeps catalog order", backend.AssuranceExternal, []backend.Capsule{ref, ext}, "reference.relu", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cat, err := backend.NewCatalog(tc.caps...)
			if err != nil {
				t.Fatal(err)
			}
			p := backend.CheckedCPU()
			p.Assurance, p.Catalog = tc.assurance, cat
			sel, err := p.Select("relu")
			if tc.want == "" {
				var nc *backend.NoCapsuleError
				if !errors.As(err, &nc) || !strings.Contains(err.Error(), "rejected vendor.relu ("+tc.reason) {
					t.Fatalf("Select = %v, want a NoCapsuleError with %q", err, tc.reason)
				}
				return
			}
			if err != nil || sel.Capsule.Name != tc.want {
				t.Fatalf("Select = %s, %v; want %s", sel.Capsule.Name, err, tc.want)
			}
			if tc.reason != "" {
				if len(sel.Rejected) != 1 || sel.Rejected[0].Capsule != "vendor.relu" ||
					!slices.Contains(sel.Rejected[0].Reasons, tc.reason) {
					t.Errorf("rejected = %v, want vendor.relu: %s", sel.Rejected, tc.reason)
				}
			}
		})
	}
}

func TestAssuranceAccepts(t *testing.T) {
	tests := []struct {
		a    backend.Assurance
		t    backend.Trust
		want bool
	}{
		{backend.AssuranceChecked, backend.TrustChecked, true},
		{backend.AssuranceChecked, backend.TrustExternal, false},
		{backend.AssuranceExternal, backend.TrustChecked, true},
		{backend.AssuranceExternal, backend.TrustExternal, true},
		{backend.AssuranceExternal, "unknown", false},
		{"paranoid", backend.TrustChecked, false},
	}
	for _, tc := range tests {
		if got := tc.a.Accepts(tc.t); got != tc.want {
			t.Errorf("%s.Accepts(%s) = %t, want %t", tc.a, tc.t, got, tc.want)
		}
	}
}

func TestVJPCompatibility(t *testing.T) {
	modes := []backend.VJPMode{backend.VJPNone, backend.VJPTape, backend.VJPBackend}
	// want[policy][mode] for an op that has a VJP.
	want := map[backend.VJPMode]map[backend.VJPMode]bool{
		backend.VJPTape:    {backend.VJPNone: false, backend.VJPTape: true, backend.VJPBackend: true},
		backend.VJPBackend: {backend.VJPNone: false, backend.VJPTape: false, backend.VJPBackend: true},
		backend.VJPNone:    {backend.VJPNone: true, backend.VJPTape: true, backend.VJPBackend: true},
	}
	for policy, row := range want {
		for _, mode := range modes {
			if got := backend.VJPCompatible(policy, mode, true); got != row[mode] {
				t.Errorf("VJPCompatible(%s, %s, op with VJP) = %t, want %t", policy, mode, got, row[mode])
			}
			if !backend.VJPCompatible(policy, mode, false) {
				t.Errorf("VJPCompatible(%s, %s, op without VJP) = false, want true", policy, mode)
			}
		}
	}
	if backend.VJPCompatible("sideways", backend.VJPTape, true) {
		t.Error("an unknown policy admitted a capsule")
	}

	// The same matrix through admissibility: relu (has a VJP) and const
	// (NoGrad) under each profile policy, with each capsule mode.
	for policy, row := range want {
		for _, mode := range modes {
			for _, op := range []string{"relu", "const"} {
				c, err := backend.ReferenceCapsule(op)
				if err != nil {
					t.Fatal(err)
				}
				c.VJP = mode
				if mode == backend.VJPNone {
					c.VJPContract.Evidence = backend.NotApplicable{}
				} else {
					c.VJPContract.Evidence = backend.TestSuite{Name: backend.ReferenceSuite}
				}
				p := backend.CheckedCPU()
				p.VJP = policy
				admitted := p.Rejections(c, op) == nil
				wantAdmit := op == "const" || row[mode]
				if admitted != wantAdmit {
					t.Errorf("policy %s, %s capsule with vjp=%s: admitted=%t, want %t (%v)",
						policy, op, mode, admitted, wantAdmit, p.Rejections(c, op))
				}
			}
		}
	}
}

func TestProfileFor(t *testing.T) {
	tests := []struct {
		device, profile, err string
	}{
		{"cpu", "checked_cpu", ""},
		{"cuda", "checked_cuda", ""},
		{"tpu", "", "device `tpu` has no maintained runtime profile; provide a backend profile with executable capsules"},
		{"CPU", "", "device `CPU` has no maintained runtime profile; provide a backend profile with executable capsules"},
		{"", "", "device `` has no maintained runtime profile; provide a backend profile with executable capsules"},
	}
	for _, tc := range tests {
		p, err := backend.ProfileFor(tc.device)
		if tc.err != "" {
			var np *backend.NoProfileError
			if err == nil || err.Error() != tc.err || !errors.As(err, &np) || np.Device != tc.device {
				t.Errorf("ProfileFor(%q) error = %v, want %q", tc.device, err, tc.err)
			}
			continue
		}
		if err != nil || p.Name != tc.profile || string(p.Device) != tc.device {
			t.Errorf("ProfileFor(%q) = %v, %v; want %s", tc.device, p, err, tc.profile)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
	cpu := backend.CheckedCPU()
	if cpu.Device != backend.DeviceCPU || cpu.Provider != backend.ProviderAuto ||
		cpu.Assurance != backend.AssuranceChecked || cpu.VJP != backend.VJPTape {
		t.Errorf("checked_cpu = %v", cpu)
	}
	if _, err := backend.ProfileNamed("checked_tpu"); err == nil {
		t.Error("ProfileNamed(checked_tpu) succeeded")
	}
	if p, err := backend.ProfileNamed("checked_cuda"); err != nil || p.Device != backend.DeviceCUDA {
		t.Errorf("ProfileNamed(checked_cuda) = %v, %v", p, err)
	}
}

func TestCUDAProfile(t *testing.T) {
	p, err := backend.ProfileFor("cuda")
	if err != nil {
		t.Fatal(err)
	}
	// The capsules are declared and admissible ...
	for _, tc := range []struct {
		op  string
		vjp backend.VJPMode
		red backend.Reduction
	}{
		{"relu", backend.VJPBackend, backend.ReductionNA},
		{"matmul", backend.VJPBackend, backend.ReductionImplementationDefined},
		{"mse_loss", backend.VJPBackend, backend.ReductionImplementationDefined},
		{"const", backend.VJPNone, backend.ReductionNA},
	} {
		sel, err := p.Select(tc.op)
		if err != nil {
			t.Fatalf("Select(%s): %v", tc.op, err)
		}
		c := sel.Capsule
		if c.Name != "native-cuda."+tc.op || c.Provider != backend.ProviderNativeCUDA || c.Device != backend.DeviceCUDA ||
			c.VJP != tc.vjp || c.Reduction != tc.red || !strings.Contains(c.Layout.Claim, "flat-row-major") {
			t.Errorf("%s: %s", tc.op, c.Header())
		}
	}
	// ... but nothing binds them today.
	s, err := backend.NewSession(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Select("relu")
	var mp *backend.MissingProviderError
	if !errors.As(err, &mp) || mp.Provider != "native-cuda" || mp.Capsule != "native-cuda.relu" {
		t.Fatalf("Select(relu) on checked_cuda = %v, want a MissingProviderError", err)
	}
	const msg = `backend: cannot bind capsule native-cuda.relu for relu: missing provider "native-cuda" (no runtime provider of that name is registered)`
	if err.Error() != msg {
		t.Errorf("error = %q\nwant   %q", err, msg)
	}
	if len(s.Selected()) != 0 {
		t.Errorf("a failed binding was cached: %v", s.Selected())
	}

	// A provider that declares only relu binds relu and not matmul.
	fake, err := backend.NewFuncProvider("native-cuda", backend.DeviceCUDA, []string{"relu"},
		func(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
			return xs[0], nil
		})
	if err != nil {
		t.Fatal(err)
	}
	provs, err := backend.NewProviders(backend.NewReferenceProvider(nil), fake)
	if err != nil {
		t.Fatal(err)
	}
	s, err = backend.NewSession(p, provs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Select("relu"); err != nil {
		t.Errorf("Select(relu) with a native-cuda provider: %v", err)
	}
	err = s.Select("matmul")
	var mh *backend.MissingHandlerError
	if !errors.As(err, &mh) || !strings.Contains(err.Error(), `missing handler: provider "native-cuda" has no handler for matmul`) {
		t.Errorf("Select(matmul) = %v, want a MissingHandlerError", err)
	}

	// A provider of that name on the wrong device does not bind either.
	wrongDev, _ := backend.NewFuncProvider("native-cuda", backend.DeviceCPU, []string{"relu"},
		func(string, *spec.Attrs, []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
			return spec.Tensor[spec.F32]{}, nil
		})
	provs, _ = backend.NewProviders(wrongDev)
	c, _ := backend.CUDACapsule("relu")
	if _, err := provs.Bind(c); !errors.As(err, &mh) || !strings.Contains(err.Error(), "runs on device cpu") {
		t.Errorf("Bind on a cpu provider = %v", err)
	}
}

func TestReportLines(t *testing.T) {
	golden := map[string]string{
		"relu": `  relu: reference.relu provider=reference trust=checked vjp=torchlean-tape reduction=n/a
    shape: shape safety for relu; guarded at runtime by tlcheck portable runtime shape checks
    layout: canonical-tensor layout compatibility for relu; guarded at runtime by typed tensor layout
    value: relu forward refines its TorchLean semantics; covered by test suite tlcheck/rapidtests
    vjp: relu torchlean-tape VJP refines its TorchLean semantics; covered by test suite tlcheck/rapidtests
`,
		"mse_loss": `  mse_loss: reference.mse_loss provider=reference trust=checked vjp=torchlean-tape reduction=fixed-left
    shape: shape safety for mse_loss; guarded at runtime by tlcheck portable runtime shape checks
    layout: canonical-tensor layout compatibility for mse_loss; guarded at runtime by typed tensor layout
    value: mse_loss forward refines its TorchLean semantics; covered by test suite tlcheck/rapidtests
    vjp: mse_loss torchlean-tape VJP refines its TorchLean semantics; covered by test suite tlcheck/rapidtests
`,
		"detach": `  detach: reference.detach provider=reference trust=checked vjp=none reduction=n/a
    shape: shape safety for detach; guarded at runtime by tlcheck portable runtime shape checks
    layout: canonical-tensor layout compatibility for detach; guarded at runtime by typed tensor layout
    value: detach forward refines its TorchLean semantics; covered by test suite tlcheck/rapidtests
    vjp: detach has no VJP (zero by definition); not applicable
`,
	}
	for op, want := range golden {
		c, err := backend.ReferenceCapsule(op)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Report(); got != want {
			t.Errorf("%s report:\n%s\nwant:\n%s", op, got, want)
		}
	}
	cuda, _ := backend.CUDACapsule("matmul")
	if got, want := cuda.ReportLines()[0], "  matmul: native-cuda.matmul provider=native-cuda trust=checked vjp=backend-vjp reduction=implementation-defined"; got != want {
		t.Errorf("cuda header = %q, want %q", got, want)
	}
}

func TestEvidenceDescribe(t *testing.T) {
	tests := []struct {
		e    backend.Evidence
		kind backend.EvidenceKind
		want string
	}{
		{backend.RuntimeGuard{Name: "g"}, backend.EvidenceRuntimeGuard, "guarded at runtime by g"},
		{backend.TestSuite{Name: "s"}, backend.EvidenceTestSuite, "covered by test suite s"},
		{backend.TrustedBoundary{Reason: "r"}, backend.EvidenceTrustedBoundary, "trusted boundary: r"},
		{backend.NotApplicable{}, backend.EvidenceNotApplicable, "not applicable"},
		{backend.Theorem{Name: "t"}, backend.EvidenceTheorem, "proved by theorem t"},
		{backend.NumericalCertificate{Name: "c"}, backend.EvidenceNumericalCertificate, "checked by numerical certificate c"},
	}
	for _, tc := range tests {
		if tc.e.Kind() != tc.kind || tc.e.Describe() != tc.want {
			t.Errorf("%T: %s %q, want %s %q", tc.e, tc.e.Kind(), tc.e.Describe(), tc.kind, tc.want)
		}
	}
}

func TestPlantedWrongCapsules(t *testing.T) {
	tests := []struct {
		name   string
		op     string
		plant  func(c *backend.Capsule)
		reason string
	}{
		{"contract for another op", "relu", func(c *backend.Capsule) { c.Value.Op = "abs" },
			`value contract is stated for "abs", not relu`},
		{"capsule for another op", "relu", func(c *backend.Capsule) { c.Op = "abs" },
			"capsule implements abs, not relu"},
		{"no forward", "relu", func(c *backend.Capsule) { c.SupportsForward = false },
			"does not support forward"},
		{"checked capsule on a trusted boundary", "relu",
			func(c *backend.Capsule) { c.Shape.Evidence = backend.TrustedBoundary{Reason: "unchecked"} },
			"shape contract rests on a trusted boundary, but trust=checked"},
		{"nameless guard", "relu", func(c *backend.Capsule) { c.Layout.Evidence = backend.RuntimeGuard{} },
			"layout contract: runtime guard evidence has no name"},
		{"missing evidence", "relu", func(c *backend.Capsule) { c.Value.Evidence = nil },
			"value contract has no evidence"},
		{"missing claim", "relu", func(c *backend.Capsule) { c.Shape.Claim = " " },
			"shape contract has no claim"},
		{"vjp claimed without evidence", "relu", func(c *backend.Capsule) { c.VJPContract.Evidence = backend.NotApplicable{} },
			"vjp contract is not applicable, but the capsule declares vjp=torchlean-tape"},
		{"value not applicable", "relu", func(c *backend.Capsule) { c.Value.Evidence = backend.NotApplicable{} },
			"value contract is not applicable, but the capsule supports forward"},
		{"no vjp for a differentiable op", "relu", func(c *backend.Capsule) { c.VJP = backend.VJPNone },
			"vjp=none is not compatible with vjp policy torchlean-tape"},
		{"reduction missing", "matmul", func(c *backend.Capsule) { c.Reduction = backend.ReductionNA },
			"reduction=n/a, but matmul accumulates and needs a reduction policy"},
		{"unknown reduction", "relu", func(c *backend.Capsule) { c.Reduction = "" },
			`unknown reduction policy ""`},
		{"unknown trust", "relu", func(c *backend.Capsule) { c.Trust = "mostly" },
			`unknown trust level "mostly"`},
		{"unknown vjp mode", "relu", func(c *backend.Capsule) { c.VJP = "maybe" },
			`unknown vjp mode "maybe"`},
		{"wrong device", "relu", func(c *backend.Capsule) { c.Device = backend.DeviceCUDA },
			"device=cuda, profile wants device cpu"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			good, err := backend.ReferenceCapsule(tc.op)
			if err != nil {
				t.Fatal(err)
			}
			bad := good
			bad.Name = "planted." + tc.op
			tc.plant(&bad)
			if why := backend.CheckedCPU().Rejections(bad, tc.op); !slices.Contains(why, tc.reason) {
				t.Fatalf("Rejections = %v, want %q", why, tc.reason)
			}
			if bad.Op != tc.op {
				return // Select never offers a capsule declared for another op
			}

			// Alone in the catalog: selection fails and says why.
			p := backend.CheckedCPU()
			if p.Catalog, err = backend.NewCatalog(bad); err != nil {
				t.Fatal(err)
			}
			_, err = p.Select(tc.op)
			var nc *backend.NoCapsuleError
			if !errors.As(err, &nc) || len(nc.Rejected) != 1 || nc.Rejected[0].Capsule != bad.Name ||
				!slices.Contains(nc.Rejected[0].Reasons, tc.reason) {
				t.Fatalf("Select = %v, want the rejection %q", err, tc.reason)
			}
			if !strings.Contains(err.Error(), "rejected planted."+tc.op+" (") || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error text %q lacks the capsule or reason", err)
			}

			// Ahead of the good capsule: the good one is selected and the
			// planted one is listed as rejected.
			if p.Catalog, err = backend.NewCatalog(bad, good); err != nil {
				t.Fatal(err)
			}
			sel, err := p.Select(tc.op)
			if err != nil || sel.Capsule.Name != good.Name || len(sel.Rejected) != 1 {
				t.Fatalf("Select = %s, %v, rejected %v", sel.Capsule.Name, err, sel.Rejected)
			}
		})
	}
}

func TestProviderPolicy(t *testing.T) {
	ref, _ := backend.ReferenceCapsule("relu")
	fast := ref
	fast.Name, fast.Provider = "fast_cpu.relu", backend.ProviderFastCPU
	fast.Value.Evidence = backend.NumericalCertificate{Name: "relu exact on binary32"}
	cat, err := backend.NewCatalog(ref, fast)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		provider, want, reason string
	}{
		{backend.ProviderAuto, "reference.relu", ""},
		{backend.ProviderFastCPU, "fast_cpu.relu", "provider=reference, profile wants provider fast_cpu"},
		{backend.ProviderReference, "reference.relu", ""},
	}
	for _, tc := range tests {
		p := backend.CheckedCPU()
		p.Provider, p.Catalog = tc.provider, cat
		sel, err := p.Select("relu")
		if err != nil || sel.Capsule.Name != tc.want {
			t.Errorf("provider policy %s: Select = %s, %v; want %s", tc.provider, sel.Capsule.Name, err, tc.want)
			continue
		}
		if tc.reason != "" && (len(sel.Rejected) != 1 || !slices.Contains(sel.Rejected[0].Reasons, tc.reason)) {
			t.Errorf("provider policy %s: rejected %v, want %q", tc.provider, sel.Rejected, tc.reason)
		}
	}
}

func TestSelectErrors(t *testing.T) {
	p := backend.CheckedCPU()
	if _, err := p.Select("frobnicate"); err == nil || !strings.Contains(err.Error(), `unknown primitive "frobnicate"`) {
		t.Errorf("Select(frobnicate) = %v", err)
	}
	empty, _ := backend.NewCatalog()
	p.Catalog = empty
	_, err := p.Select("relu")
	var nc *backend.NoCapsuleError
	if !errors.As(err, &nc) || !strings.Contains(err.Error(), "declares no capsule for relu") {
		t.Errorf("Select on an empty catalog = %v", err)
	}
	var nilProfile *backend.Profile
	if _, err := nilProfile.Select("relu"); err == nil {
		t.Error("Select on a nil profile succeeded")
	}
	if _, err := backend.NewSession(nil, nil, nil); err == nil {
		t.Error("NewSession(nil) succeeded")
	}
	bad := backend.CheckedCPU()
	bad.Assurance = "lax"
	if _, err := bad.Select("relu"); err == nil || !strings.Contains(err.Error(), `unknown assurance policy "lax"`) {
		t.Errorf("Select with a bad assurance policy = %v", err)
	}
	var nilSession *backend.Session
	if err := nilSession.Select("relu"); err == nil {
		t.Error("Select on a nil session succeeded")
	}
}

func TestCatalogConstruction(t *testing.T) {
	relu, _ := backend.ReferenceCapsule("relu")
	if _, err := backend.NewCatalog(relu, relu); err == nil || !strings.Contains(err.Error(), `two capsules named "reference.relu"`) {
		t.Errorf("duplicate names: %v", err)
	}
	nameless := relu
	nameless.Name = ""
	if _, err := backend.NewCatalog(nameless); err == nil {
		t.Error("a nameless capsule was accepted")
	}
	cat := backend.ReferenceCatalog()
	more, err := cat.Append(externalRelu())
	if err != nil || more.Len() != cat.Len()+1 || len(more.ForOp("relu")) != 2 {
		t.Fatalf("Append: %v, len %d", err, more.Len())
	}
	if len(cat.ForOp("relu")) != 1 {
		t.Error("Append changed the original catalog")
	}
	if c, ok := more.Lookup("vendor.relu"); !ok || c.Trust != backend.TrustExternal {
		t.Errorf("Lookup(vendor.relu) = %v, %t", c, ok)
	}
	if _, err := backend.ReferenceCapsule("frobnicate"); err == nil {
		t.Error("ReferenceCapsule(frobnicate) succeeded")
	}
	if _, err := backend.CUDACapsule("frobnicate"); err == nil {
		t.Error("CUDACapsule(frobnicate) succeeded")
	}
}

func TestSharedReport(t *testing.T) {
	var out bytes.Buffer
	rep := backend.NewReport(&out)
	for _, ops := range [][]string{{"relu", "relu", "add"}, {"add", "relu"}, {"mse_loss"}} {
		s, err := backend.NewSession(backend.CheckedCPU(), nil, rep)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			if err := s.Select(op); err != nil {
				t.Fatal(err)
			}
		}
	}
	var headers []string
	for _, l := range strings.Split(out.String(), "\n") {
		if l == backend.Banner || (strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "    ")) {
			headers = append(headers, strings.SplitN(l, " provider=", 2)[0])
		}
	}
	want := []string{
		backend.Banner, "  relu: reference.relu", "  add: reference.add",
		backend.Banner, // the second session selects nothing new
		backend.Banner, "  mse_loss: reference.mse_loss",
	}
	if !slices.Equal(headers, want) {
		t.Errorf("report outline = %q, want %q", headers, want)
	}
	var names []string
	for _, c := range rep.Used() {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"reference.relu", "reference.add", "reference.mse_loss"}) {
		t.Errorf("Used = %v", names)
	}
	var buf bytes.Buffer
	if err := backend.WriteReport(&buf, rep.Used()[:1]); err != nil || !strings.HasPrefix(buf.String(), backend.Banner+"\n  relu: ") {
		t.Errorf("WriteReport = %q, %v", buf.String(), err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestReportWriteErrors(t *testing.T) {
	if _, err := backend.NewSession(backend.CheckedCPU(), nil, backend.NewReport(failingWriter{})); err == nil ||
		!strings.Contains(err.Error(), "disk full") {
		t.Errorf("NewSession with a failing writer = %v", err)
	}
	rep := backend.NewReport(nil) // records only
	s, err := backend.NewSession(backend.CheckedCPU(), nil, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Select("relu"); err != nil || len(rep.Used()) != 1 {
		t.Errorf("Select with a discarding report: %v, used %v", err, rep.Used())
	}
}

func f32s(shape spec.Shape, vs ...float32) spec.Tensor[spec.F32] {
	data := make([]spec.F32, len(vs))
	for i, v := range vs {
		data[i] = spec.F32(v)
	}
	return spec.Tensor[spec.F32]{Shape: shape, Data: data}
}

func TestExecute(t *testing.T) {
	s, err := backend.NewSession(backend.CheckedCPU(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := s.Execute("relu", nil, []spec.Tensor[spec.F32]{f32s(spec.Shape{3}, -1, 0, 2.5)})
	if err != nil || !spec.SameTensor(y, f32s(spec.Shape{3}, 0, 0, 2.5)) {
		t.Errorf("relu = %v, %v", y, err)
	}
	y, err = s.Execute("matmul", nil, []spec.Tensor[spec.F32]{
		f32s(spec.Shape{1, 2}, 1, 2), f32s(spec.Shape{2, 1}, 3, 4)})
	if err != nil || !spec.SameTensor(y, f32s(spec.Shape{1, 1}, 11)) {
		t.Errorf("matmul = %v, %v", y, err)
	}
	tests := []struct {
		name, op string
		xs       []spec.Tensor[spec.F32]
		want     string
	}{
		{"short data", "relu", []spec.Tensor[spec.F32]{f32s(spec.Shape{3}, 1)}, "parent 0 of shape [3] holds 1 values, expected 3"},
		{"negative extent", "relu", []spec.Tensor[spec.F32]{f32s(spec.Shape{-1})}, "negative extent"},
		{"arity", "add", []spec.Tensor[spec.F32]{f32s(spec.Shape{1}, 1)}, "add takes 2 parents, got 1"},
		{"shape mismatch", "matmul", []spec.Tensor[spec.F32]{f32s(spec.Shape{1, 2}, 1, 2), f32s(spec.Shape{3, 1}, 1, 2, 3)}, "backend: reference.matmul: matmul"},
	}
	for _, tc := range tests {
		if _, err := s.Execute(tc.op, nil, tc.xs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Execute = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}

	// A provider returning the wrong shape is caught after the call.
	liar, err := backend.NewFuncProvider(backend.ProviderFastCPU, backend.DeviceCPU, []string{"relu"},
		func(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
			return f32s(spec.Shape{1}, 0), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	provs, _ := backend.NewProviders(liar)
	c, _ := backend.ReferenceCapsule("relu")
	c.Name, c.Provider = "fast_cpu.relu", backend.ProviderFastCPU
	b, err := provs.Bind(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Execute(nil, []spec.Tensor[spec.F32]{f32s(spec.Shape{2}, 1, 2)}); err == nil ||
		!strings.Contains(err.Error(), "provider fast_cpu returned shape [1] with 1 values, expected shape [2]") {
		t.Errorf("lying provider: %v", err)
	}
	var nilBinding *backend.Binding
	if _, err := nilBinding.Execute(nil, nil); err == nil {
		t.Error("Execute on a nil binding succeeded")
	}
}

func TestProvidersRegistry(t *testing.T) {
	h := func(string, *spec.Attrs, []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
		return spec.Tensor[spec.F32]{}, nil
	}
	tests := []struct {
		name   string
		device backend.Device
		ops    []string
		h      backend.Handler
		want   string
	}{
		{"", backend.DeviceCPU, nil, h, "provider has no name"},
		{"x", "", nil, h, "provider x has no device"},
		{"x", backend.DeviceCPU, nil, nil, "provider x has no handler"},
		{"x", backend.DeviceCPU, []string{"relu", "frobnicate"}, h, `unknown primitive "frobnicate"`},
	}
	for _, tc := range tests {
		if _, err := backend.NewFuncProvider(tc.name, tc.device, tc.ops, tc.h); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewFuncProvider(%q) = %v, want %q", tc.name, err, tc.want)
		}
	}
	p, err := backend.NewFuncProvider("x", backend.DeviceCPU, []string{"relu", "relu", "add"}, h)
	if err != nil || !slices.Equal(p.Ops(), []string{"relu", "add"}) {
		t.Fatalf("Ops = %v, %v", p.Ops(), err)
	}
	r := backend.DefaultProviders()
	if err := r.Register(p); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(p); err == nil || !strings.Contains(err.Error(), `provider "x" is already registered`) {
		t.Errorf("duplicate Register = %v", err)
	}
	if err := r.Register(nil); err == nil {
		t.Error("Register(nil) succeeded")
	}
	if !slices.Equal(r.Names(), []string{"reference", "x"}) {
		t.Errorf("Names = %v", r.Names())
	}
	if got, ok := r.Lookup("reference"); !ok || got.Device() != backend.DeviceCPU || len(got.Ops()) != len(spec.Infos()) {
		t.Errorf("Lookup(reference) = %v, %t", got, ok)
	}
	if _, err := backend.NewProviders(p, p); err == nil {
		t.Error("NewProviders with a duplicate succeeded")
	}
	var none *backend.Providers
	c, _ := backend.ReferenceCapsule("relu")
	var mp *backend.MissingProviderError
	if _, err := none.Bind(c); !errors.As(err, &mp) {
		t.Errorf("Bind on a nil registry = %v", err)
	}
}

// The reference provider can be built over a private registry, so a fault
// planted in a forward rule shows through the binding.
func TestReferenceProviderPrivateRegistry(t *testing.T) {
	reg := spec.New[spec.F32]()
	relu, err := reg.Lookup("relu")
	if err != nil {
		t.Fatal(err)
	}
	planted := *relu
	planted.Forward = func(a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
		return xs[0].Clone(), nil // identity instead of relu
	}
	reg.Override(&planted)
	provs, _ := backend.NewProviders(backend.NewReferenceProvider(reg))
	s, err := backend.NewSession(backend.CheckedCPU(), provs, nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := s.Execute("relu", nil, []spec.Tensor[spec.F32]{f32s(spec.Shape{1}, -1)})
	if err != nil || y.Data[0] != -1 {
		t.Errorf("planted relu(-1) = %v, %v; want the planted -1", y, err)
	}
}

func TestNewDeviceSession(t *testing.T) {
	var out bytes.Buffer
	if _, err := backend.NewDeviceSession("tpu", nil, backend.NewReport(&out)); err == nil || out.Len() != 0 {
		t.Errorf("tpu: %v, wrote %q", err, out.String())
	}
	s, err := backend.NewDeviceSession("cpu", nil, backend.NewReport(&out))
	if err != nil || s.Profile().Name != backend.ProfileCheckedCPU || out.String() != backend.Banner+"\n" {
		t.Errorf("cpu: %v, %v, wrote %q", s, err, out.String())
	}
}

// Zero values of the public types answer with errors or do nothing; they
// never panic.
func TestZeroValues(t *testing.T) {
	var rep backend.Report
	if err := rep.Begin(); err != nil {
		t.Error(err)
	}
	c, _ := backend.ReferenceCapsule("relu")
	if err := rep.Record(c); err != nil || len(rep.Used()) != 1 {
		t.Errorf("Record on a zero Report: %v, %v", err, rep.Used())
	}
	var fp backend.FuncProvider
	if _, err := fp.Execute("relu", nil, nil); err == nil {
		t.Error("Execute on a zero FuncProvider succeeded")
	}
	var s backend.Session
	if err := s.Select("relu"); err == nil || len(s.Selected()) != 0 {
		t.Errorf("Select on a zero Session = %v", err)
	}
	var provs backend.Providers
	var mp *backend.MissingProviderError
	if _, err := provs.Bind(c); !errors.As(err, &mp) {
		t.Errorf("Bind on a zero Providers = %v", err)
	}
	var cat backend.Catalog
	if cat.Len() != 0 || cat.ForOp("relu") != nil {
		t.Error("a zero Catalog is not empty")
	}
	var p backend.Profile
	if _, err := p.Select("relu"); err == nil {
		t.Error("Select on a zero Profile succeeded")
	}
	if why := p.Rejections(c, "relu"); len(why) != 1 {
		t.Errorf("Rejections on a zero Profile = %v", why)
	}
	if _, ok := c.Contract("nonsense"); ok {
		t.Error("Contract(nonsense) found a contract")
	}
}
