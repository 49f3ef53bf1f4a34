package emit

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/irsem"
)

// The reader of the composition subset Emit writes (lean/Tlcheck/Comp.lean's
// CompCase literals): a case header, "nodes := [", two lines per node.
const ratLit = `mkRat \(?-?[0-9]+\)? [0-9]+`

var (
	compHeadRE = regexp.MustCompile(`^  \{ x := \[(.*)\], out := ([0-9]+), dx := \[(.*)\], cot := \[(.*)\], lhs := (` + ratLit + `), rhs := (` + ratLit + `),$`)
	compNodeRE = regexp.MustCompile(`^      \{ prim := \.([a-z_0-9]+), parents := \[([0-9, ]*)\], value := \[(.*)\],$`)
	compAttrRE = regexp.MustCompile(`^        attr := \{ c := (` + ratLit + `), lo := (` + ratLit + `), hi := (` + ratLit + `), axis := (-?[0-9]+), shape := \[([0-9, ]*)\], axis2 := (-?[0-9]+), perm := \[([0-9, ]*)\], start := ([0-9]+), stop := ([0-9]+), toShape := \[([0-9, ]*)\], values := \[(.*)\], shapes := \[(.*?)\]((?:, kernel := .*, outShape := \[[0-9, ]*\]|, eps := ` + ratLit + `|, p := ` + ratLit + `, mask := \[[^\]]*\])?) \} \}(,|\] \},?)$`)
	compEpsRE  = regexp.MustCompile(`^, eps := (` + ratLit + `)$`)
	compMaskRE = regexp.MustCompile(`^, p := (` + ratLit + `), mask := \[([^\]]*)\]$`)
	compThmRE  = regexp.MustCompile(`^theorem cert : checkComps cases = true := by decide \+kernel$`)
	compOkRE   = regexp.MustCompile(`^theorem cert_ok : ∀ k ∈ cases, CompClaim k := checkComps_sound cases cert$`)
	compAllRE  = regexp.MustCompile(`^theorem cert_all : ∀ k ∈ cases, CompAdjoint k := checkComps_adjoint cases cert$`)
)

type readNode struct {
	prim    string
	parents []int
	value   vec
	attr    mattr
}

type readCase struct {
	x, dx, cot vec
	out        int
	lhs, rhs   *big.Rat
	nodes      []readNode
}

func readInts(t *testing.T, s string) []int {
	t.Helper()
	var out []int
	for _, f := range splitTop(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("not a natural: %q", f)
		}
		out = append(out, n)
	}
	return out
}

// readComp parses an emitted composition module back.
func readComp(t *testing.T, src string) []readCase {
	t.Helper()
	var cases []readCase
	var thm, ok, all bool
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case compThmRE.MatchString(line):
			thm = true
		case compOkRE.MatchString(line):
			ok = true
		case compAllRE.MatchString(line):
			all = true
		case strings.HasPrefix(line, "  { x"):
			m := compHeadRE.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("line %d: unreadable case header %q", i+1, line)
			}
			out, _ := strconv.Atoi(m[2])
			c := readCase{x: readVec(t, m[1]), out: out, dx: readVec(t, m[3]), cot: readVec(t, m[4]), lhs: readRat(t, m[5]), rhs: readRat(t, m[6])}
			if i+1 >= len(lines) || lines[i+1] != "    nodes := [" {
				t.Fatalf("line %d: no node list after the case header", i+2)
			}
			i += 2
			for i+1 < len(lines) && !strings.HasPrefix(lines[i], "] }") {
				nm, am := compNodeRE.FindStringSubmatch(lines[i]), compAttrRE.FindStringSubmatch(lines[i+1])
				if nm == nil || am == nil {
					t.Fatalf("line %d: unreadable node %q / %q", i+1, lines[i], lines[i+1])
				}
				axis, _ := strconv.Atoi(am[4])
				axis2, _ := strconv.Atoi(am[6])
				start, _ := strconv.Atoi(am[8])
				stop, _ := strconv.Atoi(am[9])
				a := mattr{c: readRat(t, am[1]), lo: readRat(t, am[2]), hi: readRat(t, am[3]), axis: axis, axis2: axis2,
					shape: readInts(t, am[5]), perm: readInts(t, am[7]), start: start, stop: stop, toShape: readInts(t, am[10]),
					values: readVec(t, "["+am[11]+"]")}
				for _, s := range splitTop(am[12]) {
					a.shapes = append(a.shapes, readInts(t, strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")))
				}
				switch e, pm := compEpsRE.FindStringSubmatch(am[13]), compMaskRE.FindStringSubmatch(am[13]); {
				case e != nil:
					a.eps = readRat(t, e[1])
				case pm != nil:
					a.p, a.mask = readRat(t, pm[1]), readVec(t, "["+pm[2]+"]")
				case am[13] != "":
					a.win = readPoolWindow(t, am[13])
				}
				c.nodes = append(c.nodes, readNode{prim: nm[1], parents: readInts(t, nm[2]), value: readVec(t, "["+nm[3]+"]"), attr: a})
				i += 2
				if am[14] != "," {
					i-- // the case ends on this node's attribute line
					break
				}
			}
			cases = append(cases, c)
		}
	}
	if !thm || !ok || !all {
		t.Fatalf("the module lacks cert (%v), cert_ok (%v) or cert_all (%v)", thm, ok, all)
	}
	return cases
}

// vadd is Comp.lean's vadd: the sum on the common prefix, then the longer
// list's tail.
func vadd(a, b vec) vec {
	out := vec{}
	for i := 0; i < len(a) || i < len(b); i++ {
		switch {
		case i >= len(a):
			out = append(out, b[i])
		case i >= len(b):
			out = append(out, a[i])
		default:
			out = append(out, add(a[i], b[i]))
		}
	}
	return out
}

// compSides transcribes CompClaim's two sums: Graph.fwd from the tangent
// (dx at 0, [] elsewhere) and Graph.rev from the seed (cot at out, []
// elsewhere), each node's JVP and VJP read at its parents' recorded
// values through its lens (lens_test.go's lensMaps), as Comp.lean's
// toNode builds them (a node whose cotangent is [] contributes nothing,
// lensVjp).
func compSides(c readCase) (*big.Rat, *big.Rat, error) {
	n := len(c.nodes) + 1
	if c.out >= n {
		return nil, nil, fmt.Errorf("out %d past %d nodes", c.out, n)
	}
	val := func(i int) vec {
		if i == 0 {
			return c.x
		}
		return c.nodes[i-1].value
	}
	tan := make([]vec, n)
	tan[0] = c.dx
	for k, nd := range c.nodes {
		var xs, dxs []vec
		for _, p := range nd.parents {
			if p > k {
				return nil, nil, fmt.Errorf("node %d: parent %d not before it", k+1, p)
			}
			xs, dxs = append(xs, val(p)), append(dxs, tan[p])
		}
		tan[k+1], _ = lensMaps(jvpVJP, nd.prim, nd.attr, xs, nd.value, dxs, nil)
	}
	cot := make([]vec, n)
	cot[c.out] = c.cot
	for k := len(c.nodes) - 1; k >= 0; k-- {
		nd := c.nodes[k]
		if len(cot[k+1]) == 0 {
			continue // lensVjp: the zero cotangent [] gives no contributions
		}
		var xs, dxs []vec
		for _, p := range nd.parents {
			xs, dxs = append(xs, val(p)), append(dxs, tan[p])
		}
		_, vj := lensMaps(jvpVJP, nd.prim, nd.attr, xs, nd.value, dxs, cot[k+1])
		for j, p := range nd.parents {
			if j < len(vj) {
				cot[p] = vadd(cot[p], vj[j])
			}
		}
	}
	return mdot(c.cot, tan[c.out]), mdot(cot[0], c.dx), nil
}

// compFwd is Prim.fwd for the primitives where it follows from the
// transcribed JVP: the positively homogeneous ones of degree 1 (Euler:
// f(x) = f′(x)·x, ties and kinks included), and the bilinear ones at
// (x, 0) (linear at (x, 0, b)), and the normalisations', renorm's and
// dropout's own transcriptions (paramFwd). It reports false for the others.
func compFwd(prim string, a mattr, xs []vec) (vec, bool) {
	if fwd, ok := a.paramFwd(prim, xs); ok {
		return fwd, true
	}
	if !fwdKnown(prim) {
		return nil, false
	}
	switch prim {
	case "add", "sub", "neg", "scale", "sum", "reduce_sum", "reduce_mean", "reshape", "flatten", "permute",
		"transpose", "slice", "broadcast_to", "concat", "gather", "relu", "abs", "max", "min":
		jv, _ := jvpVJP(prim, a, xs, xs, nil)
		return jv, true
	case "mul", "matmul":
		jv, _ := jvpVJP(prim, a, xs, []vec{xs[0], mzeros(len(xs[1]))}, nil)
		return jv, true
	case "linear":
		jv, _ := jvpVJP(prim, a, xs, []vec{xs[0], mzeros(len(xs[1])), xs[2]}, nil)
		return jv, true
	case "const", "rand_uniform", "bernoulli_mask", "keep_mask": // Spec.lean: the forward is Attr.values
		return a.values, true
	case "trunc_int": // truncFwd: [] at a domain error (trunc_test.go's transcription)
		y, ok := leanTruncAll(a.lo, a.hi, xs[0], lTruncZ)
		if !ok {
			return vec{}, true
		}
		return y, true
	}
	if a.win != nil {
		fwd, _, _ := windowEval(prim, a.poolCase(xs, xs, nil))
		return fwd, true
	}
	return nil, false
}

// fwdKnown reports whether compFwd has prim's forward.
func fwdKnown(prim string) bool {
	switch prim {
	case "add", "sub", "neg", "scale", "sum", "reduce_sum", "reduce_mean", "reshape", "flatten", "permute",
		"transpose", "slice", "broadcast_to", "concat", "gather", "relu", "abs", "max", "min",
		"mul", "matmul", "linear", "const", "rand_uniform", "bernoulli_mask", "keep_mask", "max_pool", "max_pool_nd", "avg_pool", "avg_pool_nd", "conv", "conv_transpose", "trunc_int":
		return true
	}
	return false
}

var poolWinRE = regexp.MustCompile(`^, kernel := \[([0-9, ]*)\], stride := \[([0-9, ]*)\], dilation := \[([0-9, ]*)\], pads := \[([0-9, ]*)\], groups := ([0-9]+), countPad := (true|false), outShape := \[([0-9, ]*)\]$`)

// readPoolWindow reads a pool node's window fields back as a wCase
// template (window_test.go's transcription evaluates it).
func readPoolWindow(t *testing.T, s string) *wCase {
	t.Helper()
	m := poolWinRE.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("unreadable pool window %q", s)
	}
	c := &wCase{kernel: readInts(t, m[1]), stride: readInts(t, m[2]), dilation: readInts(t, m[3]), pad: readInts(t, m[4]),
		countPad: m[6] == "true", outShape: readInts(t, m[7])}
	fmt.Sscan(m[5], &c.groups)
	return c
}

// poolCase is the node's window case at the parents' values xs, tangents
// dxs and cotangent d.
func (a mattr) poolCase(xs, dxs []vec, d vec) *wCase {
	c := *a.win
	c.shapes, c.xs, c.dxs, c.delta = a.shapes, xs, dxs, d
	return &c
}

// compHolds is what the kernel's checkComp would say of the sweeps part,
// of every node's lens (lensOk) and, where compFwd has the forward, of
// every recorded value.
func compHolds(c readCase) error {
	for k, nd := range c.nodes {
		var xs []vec
		for _, p := range nd.parents {
			if p == 0 {
				xs = append(xs, c.x)
			} else if p <= len(c.nodes) {
				xs = append(xs, c.nodes[p-1].value)
			}
		}
		if want, ok := compFwd(nd.prim, nd.attr, xs); ok && !sameVec(want, nd.value) {
			return fmt.Errorf("node %d (%s): recorded value is not Prim.fwd of its parents'", k+1, nd.prim)
		}
		if ins, out, _ := leanLens(nd.prim, nd.attr, xs, nd.value); !lensOkV(ins, out, xs, nd.value) {
			return fmt.Errorf("node %d (%s): its lens reads %v→%d, not its recorded lengths", k+1, nd.prim, ins, out)
		}
	}
	l, r, err := compSides(c)
	if err != nil {
		return err
	}
	if l.Cmp(c.lhs) != 0 || r.Cmp(c.rhs) != 0 || c.lhs.Cmp(c.rhs) != 0 {
		return fmt.Errorf("the Lean sweeps give %s, %s; recorded %s, %s", l.RatString(), r.RatString(), c.lhs.RatString(), c.rhs.RatString())
	}
	return nil
}

// irPrim is the Tlcheck.Prim constructor of an IR tag, written out here
// independently of compPrim.
func irPrim(tag string, parents int) string {
	switch {
	case parents == 0:
		return "const"
	case tag == "mul_elem":
		return "mul"
	case tag == "max_elem":
		return "max"
	case tag == "min_elem":
		return "min"
	}
	return tag
}

// TestEmitComposition reads the emitted composition module back against
// the certificate's JSON (read here, not through Emit), checks its
// structure, and runs the Go transcription of CompClaim's sweeps on every
// case; a tampered side or tangent is caught.
func TestEmitComposition(t *testing.T) {
	dir := certDir(t)
	r, err := Emit(dir)
	if err != nil {
		t.Fatal(err)
	}
	var src []byte
	for _, m := range r.Modules {
		if m.Path == "Composition.lean" {
			src = m.Bytes
		}
	}
	if src == nil {
		t.Fatalf("no Composition.lean emitted (skipped: %v)", r.Skipped)
	}
	if !strings.Contains(string(r.Modules[len(r.Modules)-1].Bytes), "import Tlcheck.Certs.Composition\n") {
		t.Error("All.lean does not import the composition module")
	}
	found := false
	for _, th := range r.Theorems {
		found = found || th == "Tlcheck.Certs.Composition.cert"
	}
	if !found {
		t.Errorf("theorems %v lack Tlcheck.Certs.Composition.cert", r.Theorems)
	}
	if !strings.HasPrefix(string(src), "-- Generated by tlcheck lean emit from composition.json (sha256 ") ||
		!strings.Contains(string(src), "\nimport Tlcheck.Comp\n\nnamespace Tlcheck.Certs.Composition\n") ||
		!strings.HasSuffix(string(src), "\nend Tlcheck.Certs.Composition\n") {
		t.Error("module header, import, namespace or end differ")
	}
	data, err := os.ReadFile(filepath.Join(dir, certificates.CompositionName))
	if err != nil {
		t.Fatal(err)
	}
	var cert struct {
		Cases []struct {
			Graph struct {
				InputID  int `json:"input_id"`
				OutputID int `json:"output_id"`
				Nodes    []struct {
					Kind    string `json:"kind"`
					Parents []int  `json:"parents"`
				} `json:"nodes"`
			} `json:"graph"`
			Input, Dx, Cotangent map[string]any
			LHS                  string `json:"lhs"`
			RHS                  string `json:"rhs"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &cert); err != nil {
		t.Fatal(err)
	}
	cases := readComp(t, string(src))
	if len(cases) != len(cert.Cases) || len(cases) == 0 {
		t.Fatalf("%d cases read back, the certificate has %d", len(cases), len(cert.Cases))
	}
	for i, c := range cases {
		jc := cert.Cases[i]
		if !sameVec(c.x, jsonVec(t, jc.Input)) || !sameVec(c.dx, jsonVec(t, jc.Dx)) || !sameVec(c.cot, jsonVec(t, jc.Cotangent)) {
			t.Errorf("case %d: x, dx or cot differ from the certificate", i)
		}
		wl, _ := new(big.Rat).SetString(jc.LHS)
		wr, _ := new(big.Rat).SetString(jc.RHS)
		if c.lhs.Cmp(wl) != 0 || c.rhs.Cmp(wr) != 0 {
			t.Errorf("case %d: sides %s, %s; certificate %s, %s", i, c.lhs, c.rhs, jc.LHS, jc.RHS)
		}
		if c.out != jc.Graph.OutputID || jc.Graph.InputID != 0 || len(c.nodes) != len(jc.Graph.Nodes)-1 {
			t.Fatalf("case %d: out %d, %d nodes; graph output %d, input %d, %d nodes", i, c.out, len(c.nodes), jc.Graph.OutputID, jc.Graph.InputID, len(jc.Graph.Nodes))
		}
		for k, nd := range c.nodes {
			gn := jc.Graph.Nodes[k+1]
			if want := irPrim(gn.Kind, len(gn.Parents)); nd.prim != want || fmt.Sprint(nd.parents) != fmt.Sprint(gn.Parents) && len(gn.Parents) > 0 {
				t.Errorf("case %d node %d: Prim.%s parents %v; graph %s parents %v", i, k+1, nd.prim, nd.parents, gn.Kind, gn.Parents)
			}
		}
		if err := compHolds(c); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
	// Planted faults: a recorded side off by one, and a tangent element
	// changed after the sides were recorded.
	c := cases[1]
	bad := c
	bad.lhs = add(c.lhs, rat(1, 1))
	if compHolds(bad) == nil {
		t.Error("a tampered lhs was not caught")
	}
	bad = c
	bad.dx = append(vec{add(c.dx[0], rat(1, 1))}, c.dx[1:]...)
	if compHolds(bad) == nil {
		t.Error("a tampered dx was not caught")
	}
	// A recorded value changed (the first node whose forward compFwd has).
	planted := false
	for i := range cases {
		for k, nd := range cases[i].nodes {
			if !fwdKnown(nd.prim) || nd.prim == "const" || len(nd.value) == 0 || planted {
				continue
			}
			bad := cases[i]
			bad.nodes = append([]readNode{}, bad.nodes...)
			v := append(vec{add(nd.value[0], rat(1, 1))}, nd.value[1:]...)
			bad.nodes[k].value = v
			if compHolds(bad) == nil {
				t.Errorf("case %d: a tampered value of node %d (%s) was not caught", i, k+1, nd.prim)
			}
			planted = true
		}
	}
	if !planted {
		t.Error("no node to plant a wrong value in")
	}
}

// modelDir certifies the example model name (examples/NAME.ir.json, with
// its payload if any) at its example input.
func modelDir(t *testing.T, name, input string) string {
	t.Helper()
	read := func(p string) []byte {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", p))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	g, err := irsem.DecodeGraph(read(name + ".ir.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p *irsem.Payload
	if _, err := os.Stat(filepath.Join("..", "..", "examples", name+".payload.json")); err == nil {
		if p, err = irsem.DecodePayload(read(name + ".payload.json")); err != nil {
			t.Fatal(err)
		}
	}
	x, err := irsem.DecodeTensor(read(input + ".input.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := certificates.ModelSuite(&certificates.Model{Name: name, Graph: g, Payload: p, Input: x}, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "certs")
	if _, err := s.Certify(dir, certificates.Options{Seed: 0, Cases: 3}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// modelComp emits the model certified in dir and reads its
// ModelComposition module back, or returns the skip reasons.
func modelComp(t *testing.T, dir string) ([]readCase, []string) {
	t.Helper()
	r, err := Emit(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Modules {
		if m.Path == "ModelComposition.lean" {
			if !strings.Contains(string(m.Bytes), "\nnamespace Tlcheck.Certs.ModelComposition\n") {
				t.Error("wrong namespace")
			}
			return readComp(t, string(m.Bytes)), r.Skipped
		}
	}
	return nil, r.Skipped
}

// TestEmitModelComposition: a user model's composition certificate
// becomes Tlcheck.Certs.ModelComposition, one case per tangent pair, each
// of which the transcription finds true — the quadratic example and the
// MLP, whose IR linear nodes become Prim.linear with W and b as constant
// leaves before them; a graph over MaxCompNodes is skipped, with the
// reason.
func TestEmitModelComposition(t *testing.T) {
	for _, name := range []string{"quad", "mlp"} {
		cases, skipped := modelComp(t, modelDir(t, name, name))
		if len(cases) != 3 {
			t.Fatalf("%s: %d cases, want 3 (skipped: %v)", name, len(cases), skipped)
		}
		for i, c := range cases {
			if err := compHolds(c); err != nil {
				t.Errorf("%s case %d: %v", name, i, err)
			}
		}
		if name == "mlp" {
			// linear, relu, linear → W, b, linear, relu, W, b, linear.
			var prims []string
			for _, n := range cases[0].nodes {
				prims = append(prims, n.prim)
			}
			if got := strings.Join(prims, ","); got != "const,const,linear,relu,const,const,linear" || cases[0].out != 7 {
				t.Errorf("mlp: nodes %s, out %d", got, cases[0].out)
			}
			if p := cases[0].nodes[2].parents; fmt.Sprint(p) != "[0 1 2]" {
				t.Errorf("mlp: the first linear's parents are %v, want [0 1 2]", p)
			}
		}
	}
	// A chain of 30 relus: more nodes than MaxCompNodes.
	var b strings.Builder
	b.WriteString(`{"format": "torchlean.ir.v1", "input_id": 0, "output_id": 30, "nodes": [{"id": 0, "kind": "input", "parents": [], "shape": [2]}`)
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, `, {"id": %d, "kind": "relu", "parents": [%d], "shape": [2]}`, i, i-1)
	}
	b.WriteString("]}")
	g, err := irsem.DecodeGraph([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	x, err := irsem.DecodeTensor([]byte(`{"shape": [2], "values": ["1", "-1"]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := certificates.ModelSuite(&certificates.Model{Name: "chain", Graph: g, Input: x}, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "certs")
	if _, err := s.Certify(dir, certificates.Options{Seed: 0, Cases: 2}); err != nil {
		t.Fatal(err)
	}
	cases, skipped := modelComp(t, dir)
	want := fmt.Sprintf("model_composition.json (31 nodes, more than %d)", MaxCompNodes)
	found := false
	for _, sk := range skipped {
		found = found || sk == want
	}
	if cases != nil || !found {
		t.Errorf("a 31-node graph: %d cases emitted, skipped %v, want %q", len(cases), skipped, want)
	}
}

// TestCompositionPools: a model with a pool node becomes a
// ModelComposition whose cases the transcription (window_test.go's, on the
// emitted window fields) finds true; a wrong stride written for the pool
// makes a case false; no window primitive is skipped in compositions
// (the norms and renorm: TestCompositionNorms).
func TestCompositionPools(t *testing.T) {
	g, err := irsem.DecodeGraph([]byte(`{"format": "tlcheck.ir.v1", "input_id": 0, "output_id": 2, "nodes": [
  {"id": 0, "kind": "input", "parents": [], "shape": [1, 4]},
  {"id": 1, "kind": "max_pool_nd", "parents": [0], "shape": [1, 2], "kernel": [2], "stride": [2], "pads": [0, 0], "dilation": [1], "ceil_mode": false},
  {"id": 2, "kind": "avg_pool", "parents": [1], "shape": [1, 2], "kernel": [1], "stride": [1], "padding": [0]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	x, err := irsem.DecodeTensor([]byte(`{"shape": [1, 4], "values": ["1", "-2", "1/2", "3"]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := certificates.ModelSuite(&certificates.Model{Name: "pool", Graph: g, Input: x}, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "certs")
	if _, err := s.Certify(dir, certificates.Options{Seed: 0, Cases: 2}); err != nil {
		t.Fatal(err)
	}
	cases, skipped := modelComp(t, dir)
	if len(cases) != 2 {
		t.Fatalf("%d cases emitted (skipped %v), want 2", len(cases), skipped)
	}
	for i, c := range cases {
		if got := c.nodes[0].prim + "," + c.nodes[1].prim; got != "max_pool_nd,avg_pool" || c.nodes[0].attr.win == nil {
			t.Fatalf("case %d: nodes %s", i, got)
		}
		if err := compHolds(c); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
		bad := c
		bad.nodes = append([]readNode(nil), c.nodes...)
		w := *c.nodes[0].attr.win
		w.stride = []int{1}
		bad.nodes[0].attr.win = &w
		if compHolds(bad) == nil {
			t.Errorf("case %d: stride 1 written for stride 2 leaves the case true", i)
		}
	}
	for op := range windowOps {
		if notInComposition(op) != "" {
			t.Errorf("%s: skipped in compositions", op)
		}
	}
}

// TestCompositionTrunc: a model with a trunc_int node becomes a
// ModelComposition whose node carries the integer range as Attr.lo,
// Attr.hi and whose cases the transcription (trunc_test.go's truncAll)
// finds true; the range left at the default [0, 0] (the attributes not
// written) makes the recorded forward disagree, so a case is false.
func TestCompositionTrunc(t *testing.T) {
	g, err := irsem.DecodeGraph([]byte(`{"format": "tlcheck.ir.v1", "input_id": 0, "output_id": 2, "nodes": [
  {"id": 0, "kind": "input", "parents": [], "shape": [4]},
  {"id": 1, "kind": "trunc_int", "parents": [0], "shape": [4], "lo": "-128", "hi": "127"},
  {"id": 2, "kind": "relu", "parents": [1], "shape": [4]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	x, err := irsem.DecodeTensor([]byte(`{"shape": [4], "values": ["7/2", "-7/2", "1/3", "-257/2"]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := certificates.ModelSuite(&certificates.Model{Name: "trunc", Graph: g, Input: x}, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "certs")
	if _, err := s.Certify(dir, certificates.Options{Seed: 0, Cases: 2}); err != nil {
		t.Fatal(err)
	}
	cases, skipped := modelComp(t, dir)
	if len(cases) != 2 {
		t.Fatalf("%d cases emitted (skipped %v), want 2", len(cases), skipped)
	}
	for i, c := range cases {
		n := c.nodes[0]
		if n.prim != "trunc_int" || n.attr.lo.Cmp(rat(-128, 1)) != 0 || n.attr.hi.Cmp(rat(127, 1)) != 0 {
			t.Fatalf("case %d: node %s with lo %v, hi %v; want trunc_int over [-128, 127]", i, n.prim, n.attr.lo, n.attr.hi)
		}
		if err := compHolds(c); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
		bad := c
		bad.nodes = append([]readNode(nil), c.nodes...)
		bad.nodes[0].attr.lo, bad.nodes[0].attr.hi = rat(0, 1), rat(0, 1)
		if compHolds(bad) == nil {
			t.Errorf("case %d: the range [0, 0] written for [-128, 127] leaves the case true", i)
		}
	}
}

// TestCompositionConv: a conv node takes W and b from the payload, as
// linear does: two constant leaves before Prim.conv over (x, W, b), whose
// cases the transcription finds true; a wrong dilation written for the
// conv makes a case false.
func TestCompositionConv(t *testing.T) {
	g, err := irsem.DecodeGraph([]byte(`{"format": "tlcheck.ir.v1", "input_id": 0, "output_id": 2, "nodes": [
  {"id": 0, "kind": "input", "parents": [], "shape": [1, 2, 4]},
  {"id": 1, "kind": "conv", "parents": [0], "shape": [1, 2, 3], "kernel": [2], "stride": [1], "padding": [0], "dilation": [1], "groups": 1, "in_channels": 2, "out_channels": 2},
  {"id": 2, "kind": "relu", "parents": [1], "shape": [1, 2, 3]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := irsem.DecodePayload([]byte(`{"format": "tlcheck.payload.v1", "entries": {"1": {"W": {"shape": [2, 2, 2], "values": ["1", "-1/2", "2", "1/3", "-1", "1/4", "1/2", "3"]}, "b": {"shape": [2], "values": ["1/5", "-1"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	x, err := irsem.DecodeTensor([]byte(`{"shape": [1, 2, 4], "values": ["1", "-2", "1/2", "3", "0", "2", "-1/3", "1"]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := certificates.ModelSuite(&certificates.Model{Name: "conv", Graph: g, Payload: p, Input: x}, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "certs")
	if _, err := s.Certify(dir, certificates.Options{Seed: 0, Cases: 2}); err != nil {
		t.Fatal(err)
	}
	cases, skipped := modelComp(t, dir)
	if len(cases) != 2 {
		t.Fatalf("%d cases emitted (skipped %v), want 2", len(cases), skipped)
	}
	for i, c := range cases {
		var prims []string
		for _, nd := range c.nodes {
			prims = append(prims, nd.prim)
		}
		if got := strings.Join(prims, ","); got != "const,const,conv,relu" || fmt.Sprint(c.nodes[2].parents) != "[0 1 2]" || c.nodes[2].attr.win == nil {
			t.Fatalf("case %d: nodes %s, conv parents %v", i, got, c.nodes[2].parents)
		}
		if err := compHolds(c); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
		bad := c
		bad.nodes = append([]readNode(nil), c.nodes...)
		w := *c.nodes[2].attr.win
		w.dilation = []int{2}
		w.outShape = []int{1, 2, 3}
		bad.nodes[2].attr.win = &w
		if compHolds(bad) == nil {
			t.Errorf("case %d: dilation 2 written for dilation 1 leaves the case true", i)
		}
	}
}

// compRevInput transcribes the reverse sweep from a seed on every node
// and returns the input's cotangent (index 0): with skip, Graph.revSkip
// List.isEmpty over toNode (a node whose cotangent is [] is skipped, and
// lensVjp gives it no contributions anyway); without, Graph.rev over the
// lens VJP read at every cotangent, [] included (fitAll ins (vjp (fit out
// []))), the un-normalised node. atNil, when not nil, replaces a node's
// contributions at the cotangent [] (a planted VJP that is not
// zero-preserving).
func compRevInput(c readCase, seed []vec, skip bool, atNil func(k int, vj []vec) []vec) vec {
	n := len(c.nodes) + 1
	val := func(i int) vec {
		if i == 0 {
			return c.x
		}
		return c.nodes[i-1].value
	}
	cot := append([]vec{}, seed...)
	for k := len(c.nodes) - 1; k >= 0; k-- {
		nd := c.nodes[k]
		if skip && len(cot[k+1]) == 0 {
			continue
		}
		var xs, dxs []vec
		for _, p := range nd.parents {
			xs, dxs = append(xs, val(p)), append(dxs, nil)
		}
		_, vj := lensMaps(jvpVJP, nd.prim, nd.attr, xs, nd.value, dxs, cot[k+1])
		if atNil != nil && len(cot[k+1]) == 0 {
			vj = atNil(k, vj)
		}
		for j, p := range nd.parents {
			if j < len(vj) && p < n {
				cot[p] = vadd(cot[p], vj[j])
			}
		}
	}
	return cot[0]
}

// TestCompSkipSweep: on every emitted composition case, for random seeds
// that leave some nodes unreached ([]), the sweep that skips them
// (comp_backprop's Graph.revSkip List.isEmpty) gives the input a
// cotangent whose pairing with a random input tangent is the full
// sweep's — zero preservation, which graph_zeroPreserving proves for every
// graph over Prim. Planted fault: a node whose VJP at the zero cotangent
// contributes ones (not zero-preserving) makes the two sweeps differ.
func TestCompSkipSweep(t *testing.T) {
	cases := allCompCases(t)
	if len(cases) == 0 {
		t.Fatal("no composition cases")
	}
	rng := rand.New(rand.NewSource(28))
	plant := func(_ int, vj []vec) []vec {
		out := make([]vec, len(vj))
		for j, u := range vj {
			out[j] = pmap(func(*big.Rat) *big.Rat { return rat(1, 1) }, u)
		}
		return out
	}
	caught, skipped := 0, 0
	for i, c := range cases {
		for trial := 0; trial < 4; trial++ {
			seed := make([]vec, len(c.nodes)+1)
			for k := 1; k <= len(c.nodes); k++ {
				if rng.Intn(2) == 0 {
					seed[k] = randVec(rng, len(c.nodes[k-1].value))
				} else {
					skipped++
				}
			}
			e := randVec(rng, len(c.x))
			full := mdot(compRevInput(c, seed, false, nil), e)
			skip := mdot(compRevInput(c, seed, true, nil), e)
			if full.Cmp(skip) != 0 {
				t.Errorf("case %d: the skipping sweep pairs to %s, the full sweep to %s", i, skip.RatString(), full.RatString())
			}
			if bad := mdot(compRevInput(c, seed, false, plant), e); bad.Cmp(skip) != 0 {
				caught++
			}
		}
	}
	if skipped == 0 {
		t.Error("no seed left a node unreached: the skip was never exercised")
	}
	if caught == 0 {
		t.Error("the planted non-zero-preserving VJP was never caught")
	}
}
