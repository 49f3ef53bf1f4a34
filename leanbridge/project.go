package leanbridge

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var toolchainRE = regexp.MustCompile(`^leanprover/lean4:v([0-9]+\.[0-9]+\.[0-9]+(?:-rc[0-9]+)?)\n?$`)

// PinnedLean reads project/lean-toolchain ("leanprover/lean4:v4.30.0")
// and returns the Lean version it pins ("4.30.0").
func PinnedLean(project string) (string, error) {
	data, err := os.ReadFile(filepath.Join(project, "lean-toolchain"))
	if err != nil {
		return "", fmt.Errorf("lean check: %v", err)
	}
	m := toolchainRE.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("lean check: %s: not a leanprover/lean4:vX.Y.Z pin", filepath.Join(project, "lean-toolchain"))
	}
	return string(m[1]), nil
}

var (
	namespaceRE = regexp.MustCompile(`^namespace\s+([A-Za-z_][A-Za-z0-9_.]*)\s*$`)
	endRE       = regexp.MustCompile(`^end\s+([A-Za-z_][A-Za-z0-9_.]*)\s*$`)
	theoremRE   = regexp.MustCompile(`^theorem\s+([A-Za-z_][A-Za-z0-9_'.]*)`)
)

// Theorems lists the fully qualified theorems declared in the .lean
// files under project/Tlcheck (a line-level scan: top-level
// `namespace X` / `end X` and `theorem NAME` at the start of a line),
// sorted.
func Theorems(project string) ([]string, error) {
	var out []string
	root := filepath.Join(project, "Tlcheck")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".lean") {
			return nil
		}
		names, err := fileTheorems(p)
		out = append(out, names...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lean sources: %v", err)
	}
	sort.Strings(out)
	return out, nil
}

// fileTheorems lists the fully qualified theorems the .lean file p
// declares.
func fileTheorems(p string) ([]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out, ns []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := namespaceRE.FindStringSubmatch(line); m != nil {
			ns = append(ns, m[1])
		} else if m := endRE.FindStringSubmatch(line); m != nil && len(ns) > 0 && ns[len(ns)-1] == m[1] {
			ns = ns[:len(ns)-1]
		} else if m := theoremRE.FindStringSubmatch(line); m != nil {
			out = append(out, strings.Join(append(append([]string{}, ns...), m[1]), "."))
		}
	}
	return out, sc.Err()
}
