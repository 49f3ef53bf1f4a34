package certificates

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifierIndependent: the verifier (the verify_*.go files) re-derives
// every claim along another path than the producer's (doc.go), so it
// calls none of the producers' functions — no produce*/Produce* function
// of this package, not the typed-graph sides (typedSides, budgetSides,
// typedgraph.JVPGraph, irgrad.PathTypedGraph), not the oracles'
// adjointness check (CheckAdjointness), refine.Check or ranges.Produce.
// The shared code doc.go names (refine.Recheck for the class and overflow
// rules, the interval evaluation of model_interval, the seeded draws that
// regenerate recorded inputs) is not on the list.
func TestVerifierIndependent(t *testing.T) {
	files, err := filepath.Glob("verify_*.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no verify_*.go files")
	}
	forbidden := map[string]bool{
		"typedSides": true, "budgetSides": true, "producedModelInterval": true,
		"CheckAdjointness": true, "JVPGraph": true, "PathTypedGraph": true,
	}
	forbiddenSel := map[string]bool{"refine.Check": true, "ranges.Produce": true}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && forbiddenSel[x.Name+"."+n.Sel.Name] {
					t.Errorf("%s: the verifier calls the producer's %s.%s", fset.Position(n.Pos()), x.Name, n.Sel.Name)
				}
			case *ast.Ident:
				if forbidden[n.Name] || strings.HasPrefix(n.Name, "produce") || strings.HasPrefix(n.Name, "Produce") {
					t.Errorf("%s: the verifier uses the producer's %s", fset.Position(n.Pos()), n.Name)
				}
			}
			return true
		})
	}
}
