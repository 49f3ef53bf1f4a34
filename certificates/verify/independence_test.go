package verify

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The verifier re-derives every claim along another path than the
// producer's (package doc), so this package calls none of the producers:
// no Produce*/produce* function, no Certify, Merge or Put, not the
// typed-graph sides (irgrad.PathTypedGraph, typedgraph.JVPGraph), not
// the oracles' adjointness check (obligations.CheckAdjointness),
// refine.Check or ranges.Produce. Of package certificates it calls the
// format's functions (format.go, tensor.go: decoding, canonical encoding,
// hashing, the safe alphabet) and, from the producers' files, only the
// shared code the package doc names (sharedWithProducers).
var (
	// formatFiles are the files of package certificates that hold the
	// format alone.
	formatFiles = map[string]bool{"format.go": true, "tensor.go": true}
	// sharedWithProducers are the functions of certificates' other files
	// the verifier calls: the seeded draws that regenerate recorded
	// inputs, the interval evaluation of model_interval, the tape-path VJP
	// (the verifier's own side, kept beside the producer's budget check
	// that runs it), capsule resolution, file names, the provider lists,
	// and reading a directory's regular files.
	sharedWithProducers = map[string]bool{
		"CompositionInstance": true, "ModelTangents": true, "LoadExample": true, "RangeBox": true,
		"RangeRadius": true, "SampleSeed": true, "IntervalOutput": true, "TapeVJP": true,
		"RefinementCapsule": true, "RefinementPath": true, "PayloadOrEmpty": true, "KnownProvider": true,
		"Providers": true, "OptionalProviders": true,
		"ReadRegular": true, "StatReason": true, "EscapeLine": true, "QuoteName": true,
	}
	// forbiddenSel are producer entry points, whatever they are selected
	// from.
	forbiddenSel = map[string]bool{
		"CheckAdjointness": true, "JVPGraph": true, "PathTypedGraph": true,
		"Certify": true, "Merge": true, "Put": true, "Register": true,
	}
	forbiddenQualified = map[string]bool{"refine.Check": true, "ranges.Produce": true}
)

// producerFuncs maps each package-level function of package certificates
// (in dir) to its file.
func producerFuncs(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				out[fd.Name.Name] = filepath.Base(name)
			}
		}
	}
	return out
}

// independenceViolations lists the producer uses in the Go source src
// (file name for messages): see the rules above. funcs is producerFuncs.
func independenceViolations(name string, src any, funcs map[string]string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, imp := range f.Imports {
		if strings.Contains(imp.Path.Value, "/typedgraph") {
			out = append(out, fset.Position(imp.Pos()).String()+": imports the producer's typed graph "+imp.Path.Value)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			at := fset.Position(n.Pos()).String()
			x, _ := n.X.(*ast.Ident)
			switch {
			case forbiddenSel[n.Sel.Name]:
				out = append(out, at+": calls the producer's "+n.Sel.Name)
			case x != nil && forbiddenQualified[x.Name+"."+n.Sel.Name]:
				out = append(out, at+": calls the producer's "+x.Name+"."+n.Sel.Name)
			case x != nil && x.Name == "certificates":
				file, isFunc := funcs[n.Sel.Name]
				if isFunc && !formatFiles[file] && !sharedWithProducers[n.Sel.Name] {
					out = append(out, at+": calls certificates."+n.Sel.Name+" of the producers' "+file)
				}
			}
		case *ast.Ident:
			if strings.HasPrefix(n.Name, "produce") || strings.HasPrefix(n.Name, "Produce") {
				out = append(out, fset.Position(n.Pos()).String()+": uses the producer's "+n.Name)
			}
		}
		return true
	})
	return out, nil
}

// TestVerifierIndependent checks every non-test file of this package
// against the rules above.
func TestVerifierIndependent(t *testing.T) {
	funcs := producerFuncs(t, "..")
	if len(funcs) < 20 {
		t.Fatalf("only %d functions found in package certificates", len(funcs))
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var checked []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		v, err := independenceViolations(name, src, funcs)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range v {
			t.Error(s)
		}
		checked = append(checked, name)
	}
	sort.Strings(checked)
	if len(checked) < 7 {
		t.Fatalf("checked only %v", checked)
	}
}

// TestVerifierIndependentCatches plants each kind of violation in a
// source and requires the check to name it, and a clean source to pass.
func TestVerifierIndependentCatches(t *testing.T) {
	funcs := producerFuncs(t, "..")
	for _, want := range []string{"ProduceAdjointness", "CheckCases"} {
		if _, ok := funcs[want]; !ok {
			t.Fatalf("certificates.%s not found: the planted faults below name it", want)
		}
	}
	for _, c := range []struct{ name, body, want string }{
		{"producer function", `certificates.ProduceAdjointness("mul", 1, 0)`, "ProduceAdjointness"},
		{"producer file", `certificates.CheckCases(nil)`, "certificates.CheckCases of the producers' modelrun.go"},
		{"typed graph", `irgrad.PathTypedGraph`, "PathTypedGraph"},
		{"oracle", `obligations.CheckAdjointness(nil)`, "CheckAdjointness"},
		{"refine.Check", `refine.Check(nil, "sum", 1, 0)`, "refine.Check"},
		{"ranges.Produce", `ranges.Produce(nil)`, "ranges.Produce"},
		{"certify", `s.Certify("d", o)`, "Certify"},
		{"clean", `certificates.DecodeStrict("f", nil, nil); certificates.CompositionInstance(0, 0)`, ""},
	} {
		src := "package verify\nfunc f() { _ = " + c.body + " }\n"
		v, err := independenceViolations(c.name+".go", src, funcs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := strings.Join(v, "\n")
		if c.want == "" {
			if len(v) != 0 {
				t.Errorf("%s: clean source flagged: %s", c.name, got)
			}
			continue
		}
		if len(v) == 0 || !strings.Contains(got, c.want) {
			t.Errorf("%s: planted %s not caught: %q", c.name, c.want, got)
		}
	}
	v, err := independenceViolations("imp.go", "package verify\nimport \"github.com/tlcheck/tlcheck/typedgraph\"\nvar _ = typedgraph.X\n", funcs)
	if err != nil || len(v) != 1 || !strings.Contains(v[0], "typed graph") {
		t.Errorf("planted typedgraph import: %v %v", v, err)
	}
}
