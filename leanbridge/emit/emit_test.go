package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/spec"
)

// certDir certifies the covered primitives (seed 0, 20 cases: the gate's
// defaults) into a temporary directory.
func certDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "certs")
	if _, err := certificates.FullSuite().Certify(dir, certificates.Options{Seed: 0, Cases: 20, Ops: Covered}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The small reader of the subset Emit writes: one case per line.
var (
	caseRE   = regexp.MustCompile(`^  \{ shapes := \[(.*)\], xs := \[(.*)\], dxs := \[(.*)\], outShape := \[([0-9, ]*)\], delta := \[(.*)\], c := (mkRat \(?-?[0-9]+\)? [0-9]+), lo := (mkRat \(?-?[0-9]+\)? [0-9]+), hi := (mkRat \(?-?[0-9]+\)? [0-9]+), axis := (-?[0-9]+), axis2 := -?[0-9]+, perm := \[[0-9, ]*\], start := [0-9]+, stop := [0-9]+, toShape := \[[0-9, ]*\], values := \[.*\], lhs := (mkRat \(?-?[0-9]+\)? [0-9]+), rhs := (mkRat \(?-?[0-9]+\)? [0-9]+)((?:, kernel := \[[0-9, ]*\], stride := \[[0-9, ]*\], dilation := \[[0-9, ]*\], pads := \[[0-9, ]*\], groups := [0-9]+, countPad := (?:true|false)|, p := mkRat [0-9]+ [0-9]+, mask := \[[mkRat 01,]*\]|, eps := mkRat [0-9]+ [0-9]+)?) \},?$`)
	ratLitRE = regexp.MustCompile(`^mkRat (?:\((-[0-9]+)\)|([0-9]+)) ([0-9]+)$`)
	thmRE    = regexp.MustCompile(`^theorem cert : checkAll Prim\.([a-z0-9_]+) cases = true := by decide \+kernel$`)
)

// readRat reads back "mkRat p q" as an exact rational.
func readRat(t *testing.T, s string) *big.Rat {
	t.Helper()
	m := ratLitRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		t.Fatalf("not a rational literal: %q", s)
	}
	num := m[1] + m[2]
	r, ok := new(big.Rat).SetString(num + "/" + m[3])
	if !ok {
		t.Fatalf("bad literal %q", s)
	}
	return r
}

// splitTop splits a list body at the commas outside brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, strings.TrimSpace(s[start:]))
	}
	return out
}

// readOperands reads an emitted case's operand lists: the shapes
// ("[[2, 3], [3]]"), the values and the tangents ("[[…], […]]"), one entry
// per operand.
func readOperands(t *testing.T, shapes, xs, dxs string) (sh [][]int, x, dx [][]*big.Rat) {
	t.Helper()
	for _, s := range splitTop(shapes) {
		sh = append(sh, readInts(t, strings.Trim(s, "[]")))
	}
	for _, s := range splitTop(xs) {
		x = append(x, readVec(t, s))
	}
	for _, s := range splitTop(dxs) {
		dx = append(dx, readVec(t, s))
	}
	return sh, x, dx
}

func readVec(t *testing.T, s string) []*big.Rat {
	s = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "["), "]")
	var out []*big.Rat
	for _, x := range splitTop(s) {
		out = append(out, readRat(t, x))
	}
	return out
}

func jsonVec(t *testing.T, v any) []*big.Rat {
	var out []*big.Rat
	for _, x := range v.(map[string]any)["values"].([]any) {
		r, ok := new(big.Rat).SetString(x.(string))
		if !ok {
			t.Fatalf("bad rational %v", x)
		}
		out = append(out, r)
	}
	return out
}

func sameVec(a, b []*big.Rat) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Cmp(b[i]) != 0 {
			return false
		}
	}
	return true
}

// TestEmitReadsBack parses every emitted module back and checks it
// against the certificate's JSON, read independently of Emit.
func TestEmitReadsBack(t *testing.T) {
	dir := certDir(t)
	r, err := Emit(dir)
	if err != nil {
		t.Fatal(err)
	}
	// One module per covered op, the composition module, the index.
	if len(r.Modules) != len(Covered)+2 || len(r.Theorems) != len(Covered)+1 {
		t.Fatalf("%d modules, %d theorems for %d covered ops and the composition certificate", len(r.Modules), len(r.Theorems), len(Covered))
	}
	for _, m := range r.Modules[:len(Covered)] {
		op := strings.TrimSuffix(strings.TrimPrefix(m.Path, "Adjointness/"), ".lean")
		data, err := os.ReadFile(filepath.Join(dir, "adjointness", op+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var cert map[string]any
		if err := json.Unmarshal(data, &cert); err != nil {
			t.Fatal(err)
		}
		cases := cert["cases"].([]any)
		var got int
		var thm string
		for _, line := range strings.Split(string(m.Bytes), "\n") {
			if tm := thmRE.FindStringSubmatch(line); tm != nil {
				thm = tm[1]
			}
			cm := caseRE.FindStringSubmatch(line)
			if cm == nil {
				if strings.HasPrefix(line, "  {") {
					t.Fatalf("%s: unreadable case line %q", m.Path, line)
				}
				continue
			}
			c := cases[got].(map[string]any)
			got++
			ins, dxs := c["inputs"].([]any), c["dx"].([]any)
			xsL, dxsL := splitTop(cm[2]), splitTop(cm[3])
			if len(xsL) != len(ins) || len(dxsL) != len(dxs) {
				t.Fatalf("%s case %d: %d/%d tensors, want %d/%d", m.Path, got-1, len(xsL), len(dxsL), len(ins), len(dxs))
			}
			for k := range ins {
				if !sameVec(readVec(t, xsL[k]), jsonVec(t, ins[k])) || !sameVec(readVec(t, dxsL[k]), jsonVec(t, dxs[k])) {
					t.Errorf("%s case %d input %d differs from the certificate", m.Path, got-1, k)
				}
			}
			if !sameVec(readVec(t, cm[5]), jsonVec(t, c["delta"])) {
				t.Errorf("%s case %d: delta differs", m.Path, got-1)
			}
			for _, s := range []struct{ lit, key string }{{cm[10], "lhs"}, {cm[11], "rhs"}} {
				want, _ := new(big.Rat).SetString(c[s.key].(string))
				if readRat(t, s.lit).Cmp(want) != 0 {
					t.Errorf("%s case %d: %s %s, certificate %s", m.Path, got-1, s.key, s.lit, want)
				}
			}
			wantAxis := "0"
			if a, ok := c["attrs"].(map[string]any)["axis"]; ok {
				wantAxis = fmt.Sprint(a)
			}
			if cm[9] != wantAxis {
				t.Errorf("%s case %d: axis %s, certificate %s", m.Path, got-1, cm[9], wantAxis)
			}
			keys, defaults := []string{"c", "lo", "hi"}, []string{"0", "0", "0"}
			switch op {
			case "shrink": // bias and λ (default 1/2) ride on c and lo
				keys, defaults = []string{"bias", "lambd", "hi"}, []string{"0", "1/2", "0"}
			case "pad": // the fill value rides on c
				keys = []string{"value", "lo", "hi"}
			case "renorm": // maxnorm rides on c
				keys = []string{"maxnorm", "lo", "hi"}
			}
			for j, key := range keys {
				want := defaults[j]
				if a, ok := c["attrs"].(map[string]any)[key]; ok {
					want = a.(string)
				}
				if w, _ := new(big.Rat).SetString(want); readRat(t, cm[6+j]).Cmp(w) != 0 {
					t.Errorf("%s case %d: %s %s, certificate %s", m.Path, got-1, key, cm[6+j], want)
				}
			}
		}
		if got != len(cases) {
			t.Errorf("%s: %d cases read back, the certificate has %d", m.Path, got, len(cases))
		}
		if thm != op {
			t.Errorf("%s: theorem over Prim.%s, want Prim.%s", m.Path, thm, op)
		}
	}
	// Deterministic, and the committed modules are these bytes.
	r2, err := Emit(dir)
	if err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("..", "..", "lean", "Tlcheck", "Certs")
	for i, m := range r.Modules {
		if !bytes.Equal(m.Bytes, r2.Modules[i].Bytes) {
			t.Errorf("%s: two emits differ", m.Path)
		}
		if old, err := os.ReadFile(filepath.Join(committed, m.Path)); err != nil || !bytes.Equal(old, m.Bytes) {
			t.Errorf("lean/Tlcheck/Certs/%s is stale or missing: regenerate with tlcheck certify --out D && tlcheck lean emit --certs D", m.Path)
		}
	}
}

func TestRat(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0", "mkRat 0 1"}, {"-3/2", "mkRat (-3) 2"}, {"7", "mkRat 7 1"}, {"12345678901234567890/7", "mkRat 12345678901234567890 7"},
	} {
		if got, err := Rat(tc.in); err != nil || got != tc.want {
			t.Errorf("Rat(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "2/4", "-0", "01", "1/1", "1/0", "1/2) #exit", "1.5", "+1", "1/-2"} {
		if got, err := Rat(bad); err == nil {
			t.Errorf("Rat(%q) = %q, want an error", bad, got)
		}
	}
}

// TestEmitRejects: a tampered file, a name that would inject Lean and a
// non-canonical rational are refused, never escaped.
func TestEmitRejects(t *testing.T) {
	dir := certDir(t)
	edit := func(t *testing.T, from, to string, fixSum bool) string {
		d := filepath.Join(t.TempDir(), "c")
		if err := os.CopyFS(d, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(d, "adjointness", "add.json")
		data, _ := os.ReadFile(p)
		old := certificates.Sum(data)
		data = bytes.Replace(data, []byte(from), []byte(to), 1)
		os.WriteFile(p, data, 0o644)
		if fixSum {
			mp := filepath.Join(d, "manifest.json")
			m, _ := os.ReadFile(mp)
			os.WriteFile(mp, bytes.Replace(m, []byte(old), []byte(certificates.Sum(data)), 1), 0o644)
		}
		return d
	}
	for _, tc := range []struct {
		name, from, to string
		fix            bool
		want           string
	}{
		{"tampered", `"lhs": "`, `"lhs": "1`, false, "SHA-256 differs"},
		{"injected op", `"op": "add"`, `"op": "add\n#eval 1"`, true, "not a plain lowercase identifier"},
		{"op with a dot", `"op": "add"`, `"op": "Tlcheck.add"`, true, "not a plain lowercase identifier"},
		{"non-canonical rational", `"values": [`, `"values": ["2/4", `, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Emit(edit(t, tc.from, tc.to, tc.fix))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCoveredIsPrim: Covered is sorted, every entry is an exact registry
// primitive, and the list is exactly the constructors of Tlcheck.Prim in
// lean/Tlcheck/Spec.lean (the Lean side's one list of covered primitives).
func TestCoveredIsPrim(t *testing.T) {
	if !sort.StringsAreSorted(Covered) {
		t.Errorf("Covered is not sorted: %v", Covered)
	}
	for _, op := range Covered {
		info, err := spec.Info(op)
		if err != nil || !info.Exact {
			t.Errorf("%s: not an exact registry primitive (%v)", op, err)
		}
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "Spec.lean"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)
	i := strings.Index(body, "inductive Prim where")
	j := strings.Index(body[i:], "deriving")
	if i < 0 || j < 0 {
		t.Fatal("no inductive Prim in Spec.lean")
	}
	var ctors []string
	for _, f := range strings.FieldsFunc(body[i+len("inductive Prim where"):i+j], func(r rune) bool { return r == '|' || r == ' ' || r == '\n' }) {
		ctors = append(ctors, f)
	}
	sort.Strings(ctors)
	if strings.Join(ctors, ",") != strings.Join(Covered, ",") {
		t.Errorf("Tlcheck.Prim has %v, Covered %v", ctors, Covered)
	}
}

// TestEmitModuleCap: a certificate whose module would exceed
// MaxModuleBytes is refused, naming the file (the gate's add.json with its
// cases repeated 200 times, the manifest's hash updated).
func TestEmitModuleCap(t *testing.T) {
	dir := certDir(t)
	p := filepath.Join(dir, "adjointness", "add.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var f certificates.AdjointnessFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	cases := f.Cases
	for range 199 {
		f.Cases = append(f.Cases, cases...)
	}
	big, err := json.Marshal(&f)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, big, 0o644)
	mp := filepath.Join(dir, "manifest.json")
	m, _ := os.ReadFile(mp)
	os.WriteFile(mp, bytes.Replace(m, []byte(certificates.Sum(data)), []byte(certificates.Sum(big)), 1), 0o644)
	if _, err := Emit(dir); err == nil || !strings.Contains(err.Error(), "adjointness/add.json: the Lean module would have") {
		t.Errorf("err = %v", err)
	}
}

// TestEmitWorkCap: a matmul certificate of a few hundred kilobytes whose
// contraction view would have millions of entries is refused by element
// count (MaxModuleWork), naming the case; the gate's own certificates stay
// far below the cap.
func TestEmitWorkCap(t *testing.T) {
	zeros := func(shape ...int) certificates.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]string, n)
		for i := range v {
			v[i] = "0"
		}
		return certificates.Tensor{Shape: shape, Values: v}
	}
	c := certificates.AdjointCase{
		Inputs: []certificates.Tensor{zeros(64, 512), zeros(512, 64)},
		Dx:     []certificates.Tensor{zeros(64, 512), zeros(512, 64)},
		Delta:  zeros(64, 64), Oracle: "rat", LHS: "0", RHS: "0",
	}
	if w := caseWork("matmul", &c); w != 4*64*512+64*64+64*64*512 {
		t.Fatalf("caseWork = %d", w)
	}
	f := &certificates.AdjointnessFile{Op: "matmul", Cases: []certificates.AdjointCase{c}}
	if _, err := module("adjointness/matmul.json", "0", f); err == nil || !strings.Contains(err.Error(), "cases[0]: the Lean module would ask the kernel for more than") {
		t.Errorf("err = %v", err)
	}
	// A normalisation over a long lane: few bytes per element, but K taps
	// per element, each reading the lane (layer_norm over an axis of 256,
	// instance_norm over 16×16 positions).
	ln := certificates.AdjointCase{Inputs: []certificates.Tensor{zeros(2, 256)}, Dx: []certificates.Tensor{zeros(2, 256)}, Delta: zeros(2, 256)}
	ln.Attrs.Axis = 1
	if w := caseWork("layer_norm", &ln); w != 3*512+512*3*256*256 {
		t.Errorf("layer_norm caseWork = %d", w)
	}
	in := certificates.AdjointCase{Inputs: []certificates.Tensor{zeros(1, 2, 16, 16)}, Dx: []certificates.Tensor{zeros(1, 2, 16, 16)}, Delta: zeros(1, 2, 16, 16)}
	if w := caseWork("instance_norm", &in); w != 3*512+512*3*256*256 {
		t.Errorf("instance_norm caseWork = %d", w)
	}
	// The gate's certificates: every covered primitive's module is far
	// below the cap.
	dir := certDir(t)
	for _, op := range Covered {
		g := gateAdjointness(t, dir, op)
		if g == nil {
			continue
		}
		w := 0
		for i := range g.Cases {
			w += caseWork(op, &g.Cases[i])
		}
		if w > MaxModuleWork/16 {
			t.Errorf("%s: the gate's certificate has work %d, within 16× of the cap %d", op, w, MaxModuleWork)
		}
	}
}

// TestEmitStepCap: caseSteps is the walk model's bound W·(1 + walks·(L +
// (r+1)³)) (+ the round casts' bit loops), checked by hand on one case per
// walk class; a broadcast_to case far under the element cap but just over
// the step cap is refused naming the case and the primitive, one element
// smaller fits; and every gate certificate, adjointness and composition,
// stays 16× under the step cap, so the committed Certs/ are unchanged.
func TestEmitStepCap(t *testing.T) {
	zeros := func(shape ...int) certificates.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]string, n)
		for i := range v {
			v[i] = "0"
		}
		return certificates.Tensor{Shape: shape, Values: v}
	}
	one := func(op string, in, out []int) *certificates.AdjointCase {
		return &certificates.AdjointCase{Inputs: []certificates.Tensor{zeros(in...)}, Dx: []certificates.Tensor{zeros(in...)}, Delta: zeros(out...), Oracle: "rat", LHS: "0", RHS: "0"}
	}
	for _, tc := range []struct {
		op      string
		in, out []int
		want    int
	}{
		// W = 6 + 6 + 6; walks 0: 18 steps, one per cell.
		{"relu", []int{2, 3}, []int{2, 3}, 18},
		// permute: W = 18, walks 3, L = 6, r = 2: 18·(1 + 3·(6 + 27)).
		{"permute", []int{2, 3}, []int{3, 2}, 18 * (1 + 3*(6+27))},
		// reduce_prod over axis 0 of [2, 3]: W = 6 + 6 + 3 + 6·2 = 27,
		// walks 4, L = 6, r = 2: 27·(1 + 4·(6 + 27)).
		{"reduce_prod", []int{2, 3}, []int{3}, 27 * (1 + 4*(6+27))},
		// round_f16 on [2] zeros: W = 6, walks 0; 4 values "0" of one
		// character: 4·(4·1·4 + 64) more.
		{"round_f16", []int{2}, []int{2}, 6 + 4*(4*1*4+64)},
	} {
		c := one(tc.op, tc.in, tc.out)
		if got := caseSteps(tc.op, c); got != tc.want {
			t.Errorf("%s: caseSteps = %d, want %d", tc.op, got, tc.want)
		}
	}
	mm := &certificates.AdjointCase{
		Inputs: []certificates.Tensor{zeros(2, 3), zeros(3, 4)}, Dx: []certificates.Tensor{zeros(2, 3), zeros(3, 4)},
		Delta: zeros(2, 4), Oracle: "rat", LHS: "0", RHS: "0",
	}
	// matmul: W = 2·(6 + 12) + 8 + 8·3 = 68, walks 8, L = 18, r = 2.
	if got, want := caseSteps("matmul", mm), 68*(1+8*(18+27)); got != want {
		t.Errorf("matmul: caseSteps = %d, want %d", got, want)
	}
	// broadcast_to [1] → [m]: W = 2 + m ≪ MaxModuleWork, steps
	// (2 + m)·(1 + 3·(m + 8)) (r = 1); the least m over the cap, by search.
	steps := func(m int) int { return (2 + m) * (1 + 3*(m+8)) }
	m := 1
	for steps(m) <= MaxModuleSteps {
		m++
	}
	over, under := one("broadcast_to", []int{1}, []int{m}), one("broadcast_to", []int{1}, []int{m - 1})
	if w := caseWork("broadcast_to", over); w > MaxModuleWork/8 {
		t.Fatalf("the case over the step cap has work %d: not far under the element cap", w)
	}
	if got := caseSteps("broadcast_to", over); got <= MaxModuleSteps {
		t.Errorf("m = %d: caseSteps %d within the cap %d", m, got, MaxModuleSteps)
	}
	if got := caseSteps("broadcast_to", under); got > MaxModuleSteps || got != steps(m-1) {
		t.Errorf("m = %d: caseSteps %d, want %d within the cap", m-1, got, steps(m-1))
	}
	f := &certificates.AdjointnessFile{Op: "broadcast_to", Cases: []certificates.AdjointCase{*over}}
	if _, err := module("adjointness/broadcast_to.json", "0", f); err == nil || !strings.Contains(err.Error(), "cases[0]: the Lean module would ask the kernel for more than") || !strings.Contains(err.Error(), "steps") {
		t.Errorf("over the step cap: err = %v", err)
	}
	// The gate's adjointness certificates.
	dir := certDir(t)
	worst, worstOp := 0, ""
	for _, op := range Covered {
		g := gateAdjointness(t, dir, op)
		if g == nil {
			continue
		}
		s := 0
		for i := range g.Cases {
			s += caseSteps(op, &g.Cases[i])
		}
		if s > worst {
			worst, worstOp = s, op
		}
		if s > MaxModuleSteps/16 {
			t.Errorf("%s: the gate's certificate has %d steps, within 16× of the cap %d", op, s, MaxModuleSteps)
		}
	}
	t.Logf("the gate's largest adjointness module: %s, %d steps (cap %d)", worstOp, worst, MaxModuleSteps)
	// The gate's composition certificate.
	data, err := os.ReadFile(filepath.Join(dir, certificates.CompositionName))
	if err != nil {
		t.Fatal(err)
	}
	var cf certificates.CompositionFile
	if err := json.Unmarshal(data, &cf); err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, c := range cf.Cases {
		_, _, st, skip, err := compCaseLean(fmt.Sprintf("cases[%d]", i), compCase{graph: c.Graph, payload: c.Payload, input: c.Input, dx: c.Dx, cot: c.Cotangent, lhs: c.LHS, rhs: c.RHS})
		if err != nil || skip != "" {
			continue
		}
		total += st
	}
	t.Logf("the gate's composition module: %d steps over %d cases", total, len(cf.Cases))
	if total == 0 || total > MaxModuleSteps/16 {
		t.Errorf("the gate's composition module has %d steps (cap %d)", total, MaxModuleSteps)
	}
}

// statedOnly are the exact registry primitives with a Lean semantics and
// an adjointness theorem (`<op>_adjoint`) that are not constructors of
// Prim, so not emitted.
var statedOnly []string

var coverageRE = regexp.MustCompile(`\*\*Coverage:\*\* ([0-9]+) exact registry primitives; ([0-9]+) constructors of ` + "`Prim`" + `,\s+emitted; stated in Lean but not emitted:\s+([a-z_, ]+); ([0-9]+) of ([0-9]+)\s+stated\.`)

// TestReadmeCoverage: lean/README.md's coverage counts are the measured
// ones — the registry's exact primitives, Covered, and statedOnly (each
// exact, not covered, its adjointness theorem declared in lean/Tlcheck).
func TestReadmeCoverage(t *testing.T) {
	exact := map[string]bool{}
	for _, info := range spec.Infos() {
		if info.Exact {
			exact[info.Name] = true
		}
	}
	var lean strings.Builder
	files, _ := filepath.Glob(filepath.Join("..", "..", "lean", "Tlcheck", "*.lean"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lean.Write(b)
	}
	for _, op := range statedOnly {
		if !exact[op] || covered(op) {
			t.Errorf("%s: stated-only, but exact %v, covered %v", op, exact[op], covered(op))
		}
		if !strings.Contains(lean.String(), "theorem "+op+"_adjoint ") {
			t.Errorf("%s: no theorem %s_adjoint in lean/Tlcheck", op, op)
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "lean", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := coverageRE.FindStringSubmatch(string(data))
	if m == nil {
		t.Fatal("lean/README.md: no **Coverage:** paragraph in the measured form")
	}
	stated, only := len(Covered)+len(statedOnly), strings.Join(statedOnly, ", ")
	if only == "" {
		only = "none"
	}
	want := []string{fmt.Sprint(len(exact)), fmt.Sprint(len(Covered)), only, fmt.Sprint(stated), fmt.Sprint(len(exact))}
	for i, w := range want {
		if m[i+1] != w {
			t.Errorf("lean/README.md coverage field %d reads %q, measured %q", i+1, m[i+1], w)
		}
	}
}

// gateAdjointness reads the gate's adjointness certificate of op from
// dir, or nil when the gate has none for it.
func gateAdjointness(t *testing.T, dir, op string) *certificates.AdjointnessFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "adjointness", op+".json"))
	if err != nil {
		return nil
	}
	var g certificates.AdjointnessFile
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}
