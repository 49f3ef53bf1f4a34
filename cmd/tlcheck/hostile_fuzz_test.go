package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFuzzStage (issue 26 point 11): every fuzz target of a reader of
// untrusted input is run by ci/stage-fuzz.sh and has a committed seed
// corpus (PACKAGE/testdata/fuzz/TARGET, at least one file in go test's
// corpus format). The targets are found in the source, not listed here:
// a new target that the stage forgets fails this test. Only the targets
// that read no input (properties of arithmetic and bounds over a seed)
// are exempt.
func TestFuzzStage(t *testing.T) {
	exempt := map[string]string{
		"FuzzSound":    "fpbound: a property of the bounds over a seed, no input read",
		"FuzzRatArith": "spec: rational arithmetic laws, no input read",
	}
	stage, err := os.ReadFile("../../ci/stage-fuzz.sh")
	if err != nil {
		t.Fatal(err)
	}
	// Each line "fuzz ./PKG/ TARGET" or "fuzz_adapters ./PKG/ TARGET".
	runs := map[string]bool{} // "DIR TARGET", DIR the package directory from the root
	for _, m := range regexp.MustCompile(`(?m)^(fuzz|fuzz_adapters) \./(\S*?)/? (Fuzz\w+)$`).FindAllStringSubmatch(string(stage), -1) {
		dir := m[2]
		if m[1] == "fuzz_adapters" {
			dir = filepath.Join("adapters", dir)
		}
		runs[filepath.ToSlash(dir)+" "+m[3]] = true
	}
	decl := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	found := 0
	err = filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == ".git" || d.Name() == "lean" || strings.HasPrefix(d.Name(), ".")) && p != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", filepath.Dir(p))
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			target := m[1]
			found++
			if why, ok := exempt[target]; ok {
				t.Logf("%s (%s): exempt: %s", target, rel, why)
				continue
			}
			if !runs[filepath.ToSlash(rel)+" "+target] {
				t.Errorf("%s (%s): not run by ci/stage-fuzz.sh (fuzz ./%s/ %s)", target, rel, filepath.ToSlash(rel), target)
				continue
			}
			delete(runs, filepath.ToSlash(rel)+" "+target)
			ents, err := os.ReadDir(filepath.Join(p, "..", "testdata", "fuzz", target))
			if err != nil || len(ents) == 0 {
				t.Errorf("%s (%s): no committed seed corpus in testdata/fuzz/%s", target, rel, target)
				continue
			}
			for _, e := range ents {
				b, err := os.ReadFile(filepath.Join(p, "..", "testdata", "fuzz", target, e.Name()))
				if err != nil || !strings.HasPrefix(string(b), "go test fuzz v1\n") {
					t.Errorf("%s: testdata/fuzz/%s/%s is not a go test corpus file", target, target, e.Name())
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range runs {
		t.Errorf("ci/stage-fuzz.sh runs %s, which no package declares", r)
	}
	if found == 0 {
		t.Error("no fuzz target found in the source")
	}
}
