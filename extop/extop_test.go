// Package extop_test adds a throw-away elementwise primitive, cube(x) =
// x·x·x with derivative 3x², in one place — the RegisterElementwise call
// in TestMain — and shows it reaching every execution path and checker
// with no other edit: the tape, the typed graph, the canonical IR (wire
// format, semantics over every scalar, gradients, kernel plan), the local
// and graph-level obligations (with a planted fault caught), and the
// certificates (written, verified, and a tampered one rejected).
//
// Expected values are computed by hand from x³ and 3x², never read back
// from the code under test.
package extop_test

import (
	"bytes"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/certificates/verify"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/ranges"
	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	"github.com/tlcheck/tlcheck/typedgraph"
)

// The one entry. Registration derives the degree (3) that the polynomial
// graph generators track from the forward rule.
func TestMain(m *testing.M) {
	x := spec.X()
	err := spec.RegisterElementwise(spec.ElementwiseOp{
		Info: spec.OpInfo{Name: "cube", Exact: true, Smooth: true, ZeroPreserving: true, Polynomial: true,
			IR: &spec.IRForm{Tag: "cube"}, Gen: spec.GenHint{Graph: 100}, Doc: "x·x·x; derivative 3x²"},
		F: x.Mul(x).Mul(x),
		D: spec.Num(3, 1).Mul(x).Mul(x),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func rats(vs ...string) spec.Tensor[spec.Rat] {
	t := spec.Tensor[spec.Rat]{Shape: spec.Shape{len(vs)}, Data: make([]spec.Rat, len(vs))}
	for i, v := range vs {
		r, ok := new(big.Rat).SetString(v)
		if !ok {
			panic(v)
		}
		t.Data[i] = spec.RatFromBig(r)
	}
	return t
}

func sameRat(t *testing.T, what string, got spec.Tensor[spec.Rat], want spec.Tensor[spec.Rat]) {
	t.Helper()
	if !spec.SameTensor(got, want) {
		t.Errorf("%s = %v, want %v", what, got.Data, want.Data)
	}
}

// x = [2, −1/2, 0]: cube = [8, −1/8, 0], Σ = 63/8, ∇Σcube = 3x² = [12, 3/4, 0].
var (
	xIn    = rats("2", "-1/2", "0")
	cubed  = rats("8", "-1/8", "0")
	gradIn = rats("12", "3/4", "0")
)

func TestRegistryEntry(t *testing.T) {
	info, err := spec.Info("cube")
	if err != nil {
		t.Fatal(err)
	}
	if info.MinArity != 1 || info.MaxArity != 1 || info.IR.MinArity != 1 || info.IR.Doc != info.Doc || info.Gen.Power != 3 ||
		info.Rule != "f(x)=mul(mul(x,x),x);df(x,y)=mul(mul(3,x),x)" {
		t.Errorf("entry %+v, IR %+v", *info, *info.IR)
	}
	if err := spec.RegisterElementwise(spec.ElementwiseOp{Info: spec.OpInfo{Name: "cube"}, F: spec.X(), D: spec.Num(1, 1)}); err == nil {
		t.Errorf("a second cube was registered")
	}
}

func TestTape(t *testing.T) {
	s := tape.NewSession(spec.Default[spec.Rat]())
	x, _ := s.Param("x", xIn)
	y, err := s.Apply("cube", nil, x)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := s.Apply("sum", nil, y)
	v, _ := s.Value(y)
	sameRat(t, "tape cube", v, cubed)
	g, err := s.Backward(l)
	if err != nil {
		t.Fatal(err)
	}
	gx, _, _ := s.Grad(g, x)
	sameRat(t, "tape ∇x", gx, gradIn)

	// Over binary32 the values are exact (8, −0.125, 0 are representable).
	b := tape.NewSession(spec.Default[spec.Binary32]())
	xb, _ := b.Input("x", irsem.ConvertTensor[spec.Binary32](xIn))
	yb, err := b.Apply("cube", nil, xb)
	if err != nil {
		t.Fatal(err)
	}
	vb, _ := b.Value(yb)
	for i, want := range []float64{8, -0.125, 0} {
		if vb.Data[i].Float64() != want {
			t.Errorf("binary32 cube[%d] = %v, want %v", i, vb.Data[i], want)
		}
	}
}

func cubeSum[T spec.Scalar[T], R any](o typedgraph.Ops[T, R], in []R) (R, error) {
	y, err := o.Apply("cube", nil, in[0])
	if err != nil {
		return y, err
	}
	return typedgraph.Sum(o, y)
}

func TestTypedGraph(t *testing.T) {
	reg := spec.Default[spec.Rat]()
	gs, err := typedgraph.Grad(reg, cubeSum[spec.Rat, typedgraph.Var], xIn)
	if err != nil {
		t.Fatal(err)
	}
	sameRat(t, "typed-graph ∇x", gs[0], gradIn)
	// JVP along dx = [1, 1, 1]: Σ 3x² = 12 + 3/4 + 0 = 51/4.
	out, tan, err := typedgraph.JVP(reg, cubeSum[spec.Rat, typedgraph.Var], []spec.Tensor[spec.Rat]{xIn}, []spec.Tensor[spec.Rat]{rats("1", "1", "1")})
	if err != nil {
		t.Fatal(err)
	}
	sameRat(t, "typed-graph output", out, spec.Scalar0(spec.NewRat(63, 8)))
	sameRat(t, "typed-graph JVP", tan, spec.Scalar0(spec.NewRat(51, 4)))
	// The node runs the registry's rule: the same primitive value.
	g, err := typedgraph.New(reg, spec.Shape{3})
	if err != nil {
		t.Fatal(err)
	}
	id, err := g.AppendInferred("cube", nil, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := g.Node(id)
	y, err := n.Forward([]spec.Tensor[spec.Rat]{xIn})
	if err != nil {
		t.Fatal(err)
	}
	sameRat(t, "typed-graph node", y, cubed)
}

const cubeIR = `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[` +
	`{"id":0,"kind":"input","parents":[],"shape":[3]},` +
	`{"id":1,"kind":"cube","parents":[0],"shape":[3]},` +
	`{"id":2,"kind":"sum","parents":[1],"shape":[]}]}`

func TestIR(t *testing.T) {
	g, err := irsem.DecodeGraph([]byte(cubeIR))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := irsem.EncodeGraph(g)
	if err != nil {
		t.Fatal(err)
	}
	if g2, err := irsem.DecodeGraph(enc); err != nil || len(g2.Nodes) != 3 || g2.Nodes[1].Kind.Op != "cube" {
		t.Errorf("round trip: %v", err)
	}
	vals, err := irsem.DenoteAll(g, nil, xIn)
	if err != nil {
		t.Fatal(err)
	}
	sameRat(t, "IR cube over Rat", vals[1], cubed)
	sameRat(t, "IR Σ over Rat", vals[2], spec.Scalar0(spec.NewRat(63, 8)))
	iv, err := irsem.DenoteAll(g, nil, irsem.ConvertTensor[spec.Interval](xIn))
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := iv[2].Data[0].Lo, iv[2].Data[0].Hi; !(lo <= 7.875 && 7.875 <= hi) {
		t.Errorf("interval [%v, %v] misses 63/8", lo, hi)
	}
	for _, path := range []irgrad.Path{irgrad.PathTape, irgrad.PathTypedGraph} {
		gr, _, err := irgrad.Grad(g, nil, xIn, path)
		if err != nil {
			t.Fatal(err)
		}
		sameRat(t, "IR ∇x via "+string(path), gr.Input, gradIn)
	}
	// Strict decoding knows cube's arity from the registry.
	bad := strings.Replace(cubeIR, `"kind":"cube","parents":[0]`, `"kind":"cube","parents":[0,0]`, 1)
	if _, err := irsem.DecodeGraph([]byte(bad)); err == nil || !strings.Contains(err.Error(), "node 1") {
		t.Errorf("two parents: %v", err)
	}
	// The kernel plan selects the reference capsule, and it executes.
	res := backend.Plan(g, backend.CheckedCPU())
	if res.Err != nil || !res.Accepted || res.Plan.Nodes[1].Kernels[0].Capsule.Name != "reference.cube" {
		t.Fatalf("plan: %+v", res)
	}
	bp, err := backend.Bind(res.Plan, backend.DefaultProviders())
	if err != nil {
		t.Fatal(err)
	}
	out, err := bp.Execute(g, nil, irsem.ConvertTensor[spec.F32](xIn))
	if err != nil {
		t.Fatal(err)
	}
	if got := out[2].Data[0]; got != 7.875 {
		t.Errorf("bound plan Σcube = %v, want 7.875", got)
	}
}

// TestRanges: the range rule of cube is its registry rule run over the
// outward-rounded binary32 interval scalar, so a trace through it needs no
// code in package ranges. Over x ∈ [1,2] × [−1,0] × [0,0] the exact cubes
// lie in [1,8] × [−1,0] × [0,0] (x³ is monotone), and the trace must
// enclose them and check.
func TestRanges(t *testing.T) {
	g, err := irsem.DecodeGraph([]byte(cubeIR))
	if err != nil {
		t.Fatal(err)
	}
	box, err := ranges.BoxFromFloat32(spec.Shape{3}, []float32{1, -1, 0}, []float32{2, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ranges.Produce(g, nil, box, backend.CheckedCPU())
	if err != nil {
		t.Fatalf("range trace through cube: %v", err)
	}
	if _, err := ranges.Check(c); err != nil {
		t.Errorf("range certificate through cube does not check: %v", err)
	}
	want := [][2]float32{{1, 8}, {-1, 0}, {0, 0}}
	for i, w := range want {
		iv, err := c.Trace[1][i].Interval()
		if err != nil {
			t.Fatalf("cube element %d: %v", i, err)
		}
		if !(iv.Lo <= w[0] && w[1] <= iv.Hi) {
			t.Errorf("cube element %d: enclosure %v misses [%v, %v]", i, iv, w[0], w[1])
		}
	}
	if rule := c.Rules[1]; !strings.Contains(rule, "cube") {
		t.Errorf("node 1 range rule %q is not the registry's cube", rule)
	}
}

func TestObligations(t *testing.T) {
	regs := obligations.DefaultRegistries()
	res, err := regs.CheckOp("cube", 60, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 7 { // adjointness, JVP and VJP linearity, zero preservation, interval enclosure, the derivative against Dual[Rat] forward mode (owed by exact ops too), the fast-path rules against the generic rule
		t.Errorf("%d obligations for cube", len(res))
	}
	for _, r := range res {
		if !r.Holds() || r.Cases != 60 {
			t.Errorf("%s: %d cases, failure %v", r.Obligation, r.Cases, r.Failure)
		}
	}
	// Planted fault: a VJP of −3x²·δ must break adjointness.
	bad := spec.New[spec.Rat]()
	p, _ := bad.Lookup("cube")
	wrong := *p
	vjp := p.VJP
	wrong.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		gs, err := vjp(a, xs, y, dy)
		if err != nil {
			return nil, err
		}
		for i := range gs[0].Data {
			gs[0].Data[i] = gs[0].Data[i].Neg()
		}
		return gs, nil
	}
	bad.Override(&wrong)
	regs.Rat = bad
	res, err = regs.CheckOp("cube", 60, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Obligation != obligations.Adjointness || res[0].Holds() {
		t.Errorf("a sign-flipped cube VJP passes %s", res[0].Obligation)
	}
	// The graph generators draw cube (exact, zero-preserving, IR-tagged),
	// and the graph-level obligations hold on graphs that contain it.
	drawn := 0
	for seed := uint64(0); seed < 300 && drawn == 0; seed++ {
		gc, err := casegen.GraphSeed(seed, casegen.GraphOptions{Exact: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range gc.Graph.Nodes {
			if n.Kind.Op == "cube" {
				drawn++
			}
		}
	}
	if drawn == 0 {
		t.Errorf("no generated IR graph contains cube")
	}
	// The polynomial generator (exact Hessians) draws it too, and counts
	// its degree as three times its parent's.
	drawn = 0
	for seed := uint64(0); seed < 300 && drawn == 0; seed++ {
		tc, err := casegen.TypedSeed(seed, casegen.GraphOptions{Polynomial: true, MaxDegree: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range tc.Recipe.Steps {
			if st.Op == "cube" {
				drawn++
			}
		}
	}
	if drawn == 0 {
		t.Errorf("no generated polynomial recipe contains cube")
	}
	for _, r := range obligations.CheckGlobal(nil, 25, 7, nil) {
		if !r.Holds() {
			t.Errorf("%s: %v", r.Obligation, r.Failure)
		}
	}
}

func TestCertificates(t *testing.T) {
	dir := t.TempDir()
	s := certificates.FullSuite()
	// Forty cases: enough for the composition certificate's random IR
	// graphs to contain cube nodes (checked below).
	if _, err := s.Certify(dir, certificates.Options{Seed: 3, Cases: 40, Ops: []string{"cube"}}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "adjointness", "cube.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := verify.Dir(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Failures(); len(f) != 0 || rep.Cases()[certificates.KindAdjointness] != 40 || rep.Cases()[certificates.KindComposition] != 40 {
		t.Fatalf("verify: failures %v, cases %v", f, rep.Cases())
	}
	comp, err := os.ReadFile(filepath.Join(dir, "composition.json"))
	if err != nil || !bytes.Contains(comp, []byte(`"cube"`)) {
		t.Errorf("no composition case has a cube node (%v)", err)
	}
	// Tamper with the first exact inner product of the cube certificate.
	key := []byte(`"lhs": "`)
	i := bytes.Index(data, key)
	if i < 0 {
		t.Fatalf("no lhs in %s", data)
	}
	j := i + len(key)
	tampered := append(append(append([]byte(nil), data[:j]...), '9'), data[j:]...)
	if err := os.WriteFile(file, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = verify.Dir(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures()) == 0 {
		t.Errorf("a tampered cube certificate verifies")
	}
}
