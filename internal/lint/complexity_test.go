package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxComplexity is the most a non-test function may have.
const maxComplexity = 40

// root is the repository root, relative to this package's directory.
var root = filepath.Join("..", "..")

// allowed lists functions over maxComplexity that are excused for now,
// each with its complexity when listed, keyed by "file func" (file
// slash-separated and relative to the root; func as Complexities names
// it). A listed function passes while its complexity is at most the
// number listed; an entry that no longer matches a function over the limit
// fails, so the list only shrinks. It is empty since issue 29's splits
// were merged: no non-test function of either module is over 40.
var allowed = map[string]int{}

// complexity is the cyclomatic complexity of a function body, as the
// package doc defines it.
func complexity(body *ast.BlockStmt) int {
	n := 1
	ast.Inspect(body, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// funcName names a declared function "Name" or a method "Recv.Name".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// A measure is one function over the limit.
type measure struct {
	file string // slash-separated, relative to the root
	line int
	fn   string
	n    int
}

func (m measure) String() string { return fmt.Sprintf("%s:%d %s %d", m.file, m.line, m.fn, m.n) }

// overLimit parses the Go source src (named file) and returns its
// functions whose complexity exceeds limit, in source order.
func overLimit(file string, src any, limit int) ([]measure, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []measure
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if n := complexity(fd.Body); n > limit {
			out = append(out, measure{file, fset.Position(fd.Pos()).Line, funcName(fd), n})
		}
	}
	return out, nil
}

// sources lists the repository's non-test Go files (both modules: the
// root's and adapters/), slash-separated and relative to the root,
// skipping testdata and hidden directories.
func sources(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestComplexity fails naming "file:line func N" for each non-test
// function over maxComplexity that allowed does not excuse, and for each
// entry of allowed that no longer names a function over the limit.
func TestComplexity(t *testing.T) {
	seen := map[string]bool{}
	for _, file := range sources(t) {
		ms, err := overLimit(file, readFile(t, file), maxComplexity)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			key := m.file + " " + m.fn
			if limit, ok := allowed[key]; ok {
				seen[key] = true
				if m.n <= limit {
					continue
				}
			}
			t.Errorf("%v: cyclomatic complexity over %d", m, maxComplexity)
		}
	}
	for key, n := range allowed {
		if !seen[key] {
			t.Errorf("allowed lists %q (%d), which is no longer over %d: remove it", key, n, maxComplexity)
		}
	}
}

// TestComplexityPlanted checks the measure on synthetic sources: a
// function of complexity 41 is caught, one of 40 is not, and each
// construct the package doc names counts once.
func TestComplexityPlanted(t *testing.T) {
	for _, n := range []int{40, 41} {
		ms, err := overLimit("planted.go", planted(n), maxComplexity)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(ms)
		want := "[]"
		if n > maxComplexity {
			want = fmt.Sprintf("[planted.go:3 T.f %d]", n)
		}
		if got != want {
			t.Errorf("complexity %d: got %s, want %s", n, got, want)
		}
	}
}

// planted returns a source whose one method has complexity n ≥ 9: one
// of each counted construct (if, for, range, a non-default case, a
// non-default comm clause, &&, || and a function literal's if) plus ifs.
func planted(n int) string {
	var b strings.Builder
	b.WriteString("package p\n\n")
	b.WriteString("func (t *T[E]) f(a, b bool, c chan int, xs []int) {\n")
	b.WriteString("\tif a && b || a {\n\t}\n")
	b.WriteString("\tfor i := 0; i < 1; i++ {\n\t}\n")
	b.WriteString("\tfor range xs {\n\t}\n")
	b.WriteString("\tswitch {\n\tcase a:\n\tdefault:\n\t}\n")
	b.WriteString("\tselect {\n\tcase <-c:\n\tdefault:\n\t}\n")
	b.WriteString("\t_ = func() {\n\t\tif a {\n\t\t}\n\t}\n")
	for i := 9; i < n; i++ {
		b.WriteString("\tif b {\n\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
