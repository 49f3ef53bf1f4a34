package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// exhaustiveFlag is the environment variable that turns on the full counts
// of the slow suites (README, "Tests"); the default go test ./... samples
// or skips them.
const exhaustiveFlag = "TLCHECK_EXHAUSTIVE"

// exhaustiveCIScripts are the CI scripts that run tests with the flag set.
var exhaustiveCIScripts = []string{"ci/exhaustive.sh", "ci/stage-perf.sh", "ci/stage-workflows.sh"}

// gatedTests returns, for the test files of one package (file name →
// source), the top-level Test functions whose behaviour depends on the
// flag: a function is gated when its body names the flag in a string
// literal or calls (by name) a gated function of the same package; the
// closure over calls is taken to a fixed point.
func gatedTests(files map[string]string) ([]string, error) {
	fset := token.NewFileSet()
	calls := map[string]map[string]bool{}
	gated := map[string]bool{}
	for name, src := range files {
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn := fd.Name.Name
			if calls[fn] == nil {
				calls[fn] = map[string]bool{}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.BasicLit:
					if x.Kind == token.STRING && strings.Contains(x.Value, exhaustiveFlag) {
						gated[fn] = true
					}
				case *ast.CallExpr:
					if id, ok := x.Fun.(*ast.Ident); ok {
						calls[fn][id.Name] = true
					}
				}
				return true
			})
		}
	}
	for changed := true; changed; {
		changed = false
		for fn, cs := range calls {
			if gated[fn] {
				continue
			}
			for c := range cs {
				if gated[c] {
					gated[fn], changed = true, true
					break
				}
			}
		}
	}
	var out []string
	for fn := range gated {
		if strings.HasPrefix(fn, "Test") {
			out = append(out, fn)
		}
	}
	sort.Strings(out)
	return out, nil
}

// missingFromCI returns "pkg: TestX" for every gated test of pkg (a
// directory relative to the root) that no line of the CI scripts runs
// with the flag: a line that sets TLCHECK_EXHAUSTIVE=1, names ./pkg as a
// whole word and whose -run pattern matches the test's name.
func missingFromCI(gated map[string][]string, ci string) []string {
	runRE := regexp.MustCompile(`-run '([^']*)'`)
	var missing []string
	for pkg, tests := range gated {
		for _, test := range tests {
			found := false
			for _, line := range strings.Split(ci, "\n") {
				if !strings.Contains(line, exhaustiveFlag+"=1 ") || !containsWord(line, "./"+pkg) {
					continue
				}
				m := runRE.FindStringSubmatch(line)
				if m == nil {
					found = true // no -run: the whole package
					break
				}
				if re, err := regexp.Compile(m[1]); err == nil && re.MatchString(test) {
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, pkg+": "+test)
			}
		}
	}
	sort.Strings(missing)
	return missing
}

// containsWord reports whether s contains w followed by a space, a
// quote or the end of the line (./fpbound is not ./fpbound/nets).
func containsWord(s, w string) bool {
	for i := strings.Index(s, w); i >= 0; {
		end := i + len(w)
		if end == len(s) || s[end] == ' ' || s[end] == '\'' || s[end] == '"' {
			return true
		}
		j := strings.Index(s[end:], w)
		if j < 0 {
			return false
		}
		i = end + j
	}
	return false
}

// TestExhaustiveGatesRunInCI: every test that reads TLCHECK_EXHAUSTIVE
// (directly or through a helper of its package) is run with the flag set
// by one of the CI scripts, so moving a suite's full count behind the
// flag never drops it from CI.
func TestExhaustiveGatesRunInCI(t *testing.T) {
	byPkg := map[string]map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			// the adapters module has its own go.mod and CI line
			if rel == "adapters" || rel == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if byPkg[dir] == nil {
			byPkg[dir] = map[string]string{}
		}
		byPkg[dir][p] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	gated := map[string][]string{}
	n := 0
	for dir, files := range byPkg {
		tests, err := gatedTests(files)
		if err != nil {
			t.Fatal(err)
		}
		if len(tests) > 0 {
			gated[dir] = tests
			n += len(tests)
		}
	}
	var ci strings.Builder
	for _, s := range exhaustiveCIScripts {
		ci.WriteString(read(t, s) + "\n")
	}
	if miss := missingFromCI(gated, ci.String()); len(miss) > 0 {
		t.Errorf("tests gated by %s that no CI script (%s) runs with %s=1: %s", exhaustiveFlag, strings.Join(exhaustiveCIScripts, ", "), exhaustiveFlag, strings.Join(miss, "; "))
	}
	if n == 0 {
		t.Fatal("found no test that reads " + exhaustiveFlag + ": the walk is broken")
	}
	t.Logf("%d gated tests in %d packages", n, len(gated))
}

// TestExhaustiveGatesCatchPlanted: the check above finds a gated test
// through a helper two calls deep, and reports it when the CI line is
// missing, runs another package, does not set the flag or does not match.
func TestExhaustiveGatesCatchPlanted(t *testing.T) {
	src := `package p
import "os"
func exhaustive() bool { return os.Getenv("` + exhaustiveFlag + `") != "" }
func stride() int { if exhaustive() { return 1 }; return 4 }
func TestSlow(t *testing.T) { _ = stride() }
func TestDirect(t *testing.T) { _ = os.Getenv("` + exhaustiveFlag + `") }
func TestFast(t *testing.T) {}
`
	got, err := gatedTests(map[string]string{"p_test.go": src})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "TestDirect,TestSlow" {
		t.Fatalf("gated tests %v, want TestDirect and TestSlow", got)
	}
	gated := map[string][]string{"p": got}
	for _, c := range []struct {
		name, ci string
		missing  int
	}{
		{"both run", exhaustiveFlag + "=1 go test -run '^(TestSlow|TestDirect)$' ./p\n", 0},
		{"whole package", exhaustiveFlag + "=1 go test ./q ./p\n", 0},
		{"no line", "go test ./...\n", 2},
		{"flag not set", "go test -run 'TestSlow|TestDirect' ./p\n", 2},
		{"other package", exhaustiveFlag + "=1 go test -run 'TestSlow|TestDirect' ./p/sub\n", 2},
		{"one not matched", exhaustiveFlag + "=1 go test -run '^TestSlow$' ./p\n", 1},
	} {
		if m := missingFromCI(gated, c.ci); len(m) != c.missing {
			t.Errorf("%s: missing %v, want %d", c.name, m, c.missing)
		}
	}
}
