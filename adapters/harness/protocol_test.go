package harness

import (
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/internal/jsonschema"
	"github.com/tlcheck/tlcheck/schemas"
	"github.com/tlcheck/tlcheck/spec"
)

// tiny starts testdata/tiny_engine.py, a third-party engine written in
// Python's standard library only, with a planted fault ("" for none).
func tiny(t *testing.T, plant string, o ProtocolOptions) (*Protocol, error) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on $PATH: the protocol tests run a Python engine (CI has python3)")
	}
	p, err := NewProtocol([]string{py, "testdata/tiny_engine.py", plant}, o)
	if err == nil {
		t.Cleanup(func() { p.Close() })
	}
	return p, err
}

func casesNamed(t *testing.T, names ...string) []Case {
	t.Helper()
	var cs []Case
	for _, n := range names {
		c, ok := CaseNamed(n)
		if !ok {
			t.Fatalf("no case %q", n)
		}
		cs = append(cs, c)
	}
	return cs
}

// TestProtocolThirdParty: an engine outside the Go code passes the
// handshake and its cases hold, exactly as a Go adapter's would.
func TestProtocolThirdParty(t *testing.T) {
	p, err := tiny(t, "", ProtocolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "tiny" || !strings.Contains(p.Module(), ProtocolVersion) || len(p.Machines()) != 1 {
		t.Fatalf("handshake: name %q, module %q, machines %v", p.Name(), p.Module(), p.Machines())
	}
	if p.Can("py", "jvp") || !p.Can("py", "vjp") {
		t.Fatalf("transforms: jvp %v vjp %v, want false true", p.Can("py", "jvp"), p.Can("py", "vjp"))
	}
	rows, skipped := Run(p, casesNamed(t, "neg", "exp", "relu", "sin"), Options{})
	if len(skipped) != 1 || !strings.HasPrefix(skipped[0], "sin: sin: not mapped") {
		t.Errorf("skipped %q, want sin only (not mapped)", skipped)
	}
	obls := map[string]bool{}
	for _, r := range rows {
		obls[r.Obligation] = true
		if r.Verdict != Holds {
			t.Errorf("%s %s %s: %s %s", r.Machine, r.Case, r.Obligation, r.Verdict, r.Detail)
		}
	}
	for _, o := range []string{OblForward, OblVJP, OblAdjoint, OblSubgrad, OblZero} {
		if !obls[o] {
			t.Errorf("no %s row", o)
		}
	}
}

// TestProtocolPlanted: the planted faults of the acceptance are flagged.
func TestProtocolPlanted(t *testing.T) {
	tests := []struct {
		plant, kase, obligation, detail string
	}{
		// exp's VJP scaled by 1 + 1e-3 in float64.
		{"vjp-scale", "exp", OblVJP, "∂/∂x0"},
		// NaN at relu's kink.
		{"nan-kink", "relu", OblSubgrad, "NaN (engine) at a kink"},
		// relu′(0) = 1 declared, 1/2 returned.
		{"tie", "relu", OblVJP, "under the engine's convention"},
	}
	for _, tc := range tests {
		t.Run(tc.plant, func(t *testing.T) {
			p, err := tiny(t, tc.plant, ProtocolOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := Run(p, casesNamed(t, tc.kase), Options{})
			found := false
			for _, r := range rows {
				if r.Obligation == tc.obligation && r.Verdict == Fails && strings.Contains(r.Detail, tc.detail) {
					found = true
				}
			}
			if !found {
				t.Errorf("no failing %s row with %q: %+v", tc.obligation, tc.detail, rows)
			}
		})
	}
}

// TestProtocolBrokenEngines: a version mismatch is a clear error; a hung
// engine and a crashing one are run findings, and the run goes on with
// a fresh child.
func TestProtocolBrokenEngines(t *testing.T) {
	if _, err := tiny(t, "version", ProtocolOptions{}); err == nil || !strings.Contains(err.Error(), `speaks protocol "tlcheck.engine.v0", this harness "tlcheck.engine.v1"`) {
		t.Errorf("version mismatch: %v", err)
	}
	for _, tc := range []struct{ plant, detail string }{
		{"hang", "did not answer within 1s: killed"},
		{"crash", "exited (exit status 3)"},
	} {
		p, err := tiny(t, tc.plant, ProtocolOptions{CaseTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := Run(p, casesNamed(t, "neg", "exp"), Options{})
		n := 0
		for _, r := range rows {
			if r.Obligation == OblRun && r.Verdict == Fails && strings.Contains(r.Detail, tc.detail) {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%s: %d failing run rows with %q, want one per case: %+v", tc.plant, n, tc.detail, rows)
		}
	}
}

// self32 is the baseline engine with a second machine that evaluates the
// registry's rules in binary32 (spec.F32): every value is within E32 by
// fpbound's theorem, so every obligation holds on it; scale plants a
// relative error in its gradients.
type self32 struct {
	*self
	scale float64
}

func (e self32) Machines() []string { return []string{"tape", "tape32"} }

func (e self32) Format(m string) string {
	if m == "tape32" {
		return Float32
	}
	return Float64
}

func (e self32) Run(m string, g Graph, xs []Tensor64, cot Tensor64) (Tensor64, []Tensor64, error) {
	if m != "tape32" {
		return e.self.Run(m, g, xs, cot)
	}
	reg := spec.Default[spec.F32]()
	conv := func(t Tensor64) spec.Tensor[spec.F32] {
		d := make([]spec.F32, len(t.Data))
		for i, v := range t.Data {
			d[i] = spec.F32(v)
		}
		return spec.Tensor[spec.F32]{Shape: append(spec.Shape{}, t.Shape...), Data: d}
	}
	back := func(t spec.Tensor[spec.F32]) Tensor64 {
		out := Tensor64{Shape: append([]int{}, t.Shape...), Data: make([]float64, len(t.Data))}
		for i, v := range t.Data {
			out.Data[i] = float64(v)
		}
		return out
	}
	ins := make([]spec.Tensor[spec.F32], len(xs))
	for i, x := range xs {
		ins[i] = conv(x)
	}
	y, gs, err := tapeVJP(reg, g, ins, conv(cot))
	if err != nil {
		return Tensor64{}, nil, err
	}
	grads := make([]Tensor64, len(gs))
	for i := range gs {
		grads[i] = back(gs[i])
		for k := range grads[i].Data {
			grads[i].Data[k] *= e.scale
		}
	}
	out := back(y)
	if e.perturbY != nil {
		e.perturbY(m, g, out)
	}
	return out, grads, nil
}

// TestFloat32Machine: a float32 machine is judged against the binary32
// bound: the registry's own rules in binary32 hold on every fixed case
// (none fails, and the binary32 machine is never "suspect" for being
// outside the binary64 bound), and gradients 1% off fail.
func TestFloat32Machine(t *testing.T) {
	rows, _ := Run(self32{newSelf(), 1}, Cases(), Options{})
	n32 := 0
	for _, r := range rows {
		if r.Machine == "tape32" {
			n32++
		}
		if r.Verdict == Fails || (r.Machine == "tape32" && r.Verdict == Suspect) {
			t.Errorf("%s %s %s: %s %s", r.Machine, r.Case, r.Obligation, r.Verdict, r.Detail)
		}
	}
	if n32 == 0 {
		t.Fatal("no row of the float32 machine")
	}
	rows, _ = Run(self32{newSelf(), 1 + 1e-2}, casesNamed(t, "exp", "tanh"), Options{})
	fails := 0
	for _, r := range rows {
		if r.Machine == "tape32" && r.Obligation == OblVJP && r.Verdict == Fails {
			fails++
			if !strings.Contains(r.Detail, "(binary32) /") {
				t.Errorf("detail %q does not name the binary32 bound", r.Detail)
			}
		}
	}
	if fails != 2 {
		t.Errorf("%d failing float32 vjp rows, want 2", fails)
	}
}

// TestEngineSchema: every request the harness sends for the cases it
// runs, and the answers it reads, are lines of schemas/engine.v1.json;
// a line with an unknown attribute is not.
func TestEngineSchema(t *testing.T) {
	data, err := schemas.Lookup("engine")
	if err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.Compile(data)
	if err != nil {
		t.Fatal(err)
	}
	valid := func(what string, v any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(b); err != nil {
			t.Errorf("%s: %v\n%s", what, err, b)
		}
	}
	valid("hello request", wireRequest{Type: "hello", Protocol: ProtocolVersion})
	for _, c := range append(AllCases(), RandomCases(1, 20)...) {
		req := wireRequest{Type: "case", ID: 1, Machine: "m", Format: Float64, Transforms: []string{"forward", "vjp"},
			Graph: encodeGraph(c.Graph), Limits: &wireLimits{Seconds: 1, MemoryBytes: 1}}
		for _, x := range c.Xs {
			req.Inputs = append(req.Inputs, encodeTensor(Float64s(x)))
		}
		cot := encodeTensor(Float64s(c.Cot))
		req.Cotangent = &cot
		valid(c.Name, req)
	}
	y := wireTensor{Shape: []int{2}, Data: []string{"0.1", "-inf"}}
	valid("result", wireAnswer{Type: "result", ID: 3, Y: &y, Grads: []wireTensor{{Shape: []int{2}, Data: []string{"nan", "0x1.8p+1"}}}})
	valid("refusal", wireAnswer{Type: "refusal", ID: 3, Kind: "unsupported", Reason: "rank 3"})
	valid("hello", wireHello{Type: "hello", Protocol: ProtocolVersion, Engine: "e", Version: "1", Machines: []wireMachine{{Name: "m", Format: Float32}},
		Ops: []string{"exp"}, Conventions: []wireConvention{{Op: "max_pool", Doc: "d", Source: "s", Builtin: "max_pool_first"}}})
	bad := []byte(`{"type":"case","id":1,"machine":"m","format":"float64","transforms":["forward"],"graph":{"inputs":1,"nodes":[{"op":"exp","attrs":{"axes":1},"args":[0]}]},"inputs":[],"limits":{"seconds":1,"memory_bytes":1}}`)
	if err := s.Validate(bad); err == nil {
		t.Error("an unknown attribute validates")
	}
}

// nanJVP is the baseline engine with a forward mode that returns NaN
// for every element of J·v.
type nanJVP struct{ *self }

func (nanJVP) RunJVP(m string, g Graph, xs, tangents []Tensor64) (Tensor64, Tensor64, error) {
	y := Tensor64{Shape: []int{len(xs[0].Data)}, Data: make([]float64, len(xs[0].Data))}
	jv := Tensor64{Shape: y.Shape, Data: make([]float64, len(y.Data))}
	for i := range jv.Data {
		jv.Data[i] = math.NaN()
	}
	return y, jv, nil
}

// TestJVPRow: a NaN J·v fails where the function is differentiable along
// the tangents (exp), and is inconclusive at sqrt's singular 0, where
// no derivative exists and every J·v is a convention (PyTorch's
// +∞·0 = NaN there was a false positive of the first jvp row).
func TestJVPRow(t *testing.T) {
	for _, tc := range []struct {
		kase string
		want Verdict
	}{{"exp", Fails}, {"sqrt_zero", Inconclusive}} {
		rows, _ := Run(nanJVP{newSelf()}, casesNamed(t, tc.kase), Options{})
		found := false
		for _, r := range rows {
			if r.Obligation == OblJVP {
				found = true
				if r.Verdict != tc.want {
					t.Errorf("%s: jvp %s, want %s: %s", tc.kase, r.Verdict, tc.want, r.Detail)
				}
			}
		}
		if !found {
			t.Errorf("%s: no jvp row", tc.kase)
		}
	}
}
