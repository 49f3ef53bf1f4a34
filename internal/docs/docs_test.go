package docs

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

const module = "github.com/tlcheck/tlcheck/"

// root is the repository root, relative to this package's directory.
var root = filepath.Join("..", "..")

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// floors parses ARCHITECTURE.md's table rows "| N | `dir/` | … |".
func floors(doc string) map[string]int {
	row := regexp.MustCompile("(?m)^\\| ([0-9]+) \\| `([a-z0-9_/]+)/` \\|")
	out := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		n, _ := strconv.Atoi(m[1])
		out[m[2]] = n
	}
	return out
}

// packages lists the module's package directories (slash-separated,
// relative to the root) with the module-internal imports of their non-test
// files. Nested modules (a go.mod below the root), testdata and hidden
// directories are not this module's packages.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "lean" && rel == "lean") {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if _, ok := out[dir]; !ok {
			out[dir] = nil
		}
		if strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(path, module) {
				out[dir] = append(out[dir], strings.TrimPrefix(path, module))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// violations lists what is wrong with the table fl against the packages
// pkgs (directory → module-internal imports): a package without a row, a
// row without a package, an import that does not point to a lower floor.
func violations(fl map[string]int, pkgs map[string][]string) []string {
	var out []string
	var dirs []string
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if d == "." {
			continue
		}
		f, ok := fl[d]
		if !ok {
			out = append(out, "package "+d+"/ has no row in ARCHITECTURE.md's table")
			continue
		}
		for _, im := range pkgs[d] {
			if g, ok := fl[im]; ok && g >= f {
				out = append(out, d+"/ (floor "+strconv.Itoa(f)+") imports "+im+" (floor "+strconv.Itoa(g)+"): imports must point to a lower floor")
			}
		}
	}
	var rows []string
	for d := range fl {
		rows = append(rows, d)
	}
	sort.Strings(rows)
	for _, d := range rows {
		if _, ok := pkgs[d]; !ok {
			out = append(out, "ARCHITECTURE.md lists "+d+"/, which holds no Go package")
		}
	}
	return out
}

// TestArchitectureTable: every package directory has a row in
// ARCHITECTURE.md, every row names a package, and every import points to
// a lower floor.
func TestArchitectureTable(t *testing.T) {
	fl := floors(read(t, "ARCHITECTURE.md"))
	if len(fl) < 10 {
		t.Fatalf("ARCHITECTURE.md: found %d table rows", len(fl))
	}
	for _, v := range violations(fl, packages(t)) {
		t.Error(v)
	}
}

// TestViolationsCatchPlantedFaults: the check finds an upward import, an
// import within one floor, a missing row and a stale row.
func TestViolationsCatchPlantedFaults(t *testing.T) {
	fl := floors("| 1 | `spec/` | x |\n| 2 | `tape/` | y |\n| 2 | `irsem/` | z |\n| 3 | `gone/` | w |\n")
	pkgs := map[string][]string{"spec": {"tape"}, "tape": {"spec", "irsem"}, "irsem": {"spec"}, "newpkg": nil}
	got := strings.Join(violations(fl, pkgs), "\n")
	for _, want := range []string{"spec/ (floor 1) imports tape (floor 2)", "tape/ (floor 2) imports irsem (floor 2)", "package newpkg/ has no row", "lists gone/"} {
		if !strings.Contains(got, want) {
			t.Errorf("violations lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "irsem/ (floor 2) imports spec") {
		t.Errorf("a downward import was flagged:\n%s", got)
	}
}

// TestReadmePrimitiveCount: every "N registry primitives" in README.md is
// the registry's size.
func TestReadmePrimitiveCount(t *testing.T) {
	n := len(spec.Infos())
	re := regexp.MustCompile(`([0-9]+) registry primitives`)
	ms := re.FindAllStringSubmatch(read(t, "README.md"), -1)
	if len(ms) == 0 {
		t.Fatal("README.md states no \"N registry primitives\"")
	}
	for _, m := range ms {
		if m[1] != strconv.Itoa(n) {
			t.Errorf("README.md says %q; the registry has %d primitives (spec.Infos())", m[0], n)
		}
	}
}
