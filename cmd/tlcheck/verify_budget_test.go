package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/limits"
)

// TestCertifyRatBudget (issue 26 points 3 and 5): certify applies eval's
// exact-evaluation budgets to a model, and verify applies them to a
// directory: a rational squaring chain and a Fibonacci product chain
// (which ran past 300 s) are refused, exit 2, one line naming the node
// and the limit; a certificate whose re-derivation exceeds a budget is
// bad input for verify too (exit 2, not a failed claim).
func TestCertifyRatBudget(t *testing.T) {
	defer limits.Set(limits.Current())() // --max-… flags set the process-wide limits
	dir := t.TempDir()
	third := writeTemp(t, dir, "third.json", `{"shape":[1],"values":["1/3"]}`)
	square := writeGraph(t, dir, "square.json", 41, func(i int) string {
		if i == 0 {
			return node(0, "input", nil, "[1]", "")
		}
		return node(i, "mul_elem", []int{i - 1, i - 1}, "[1]", "")
	})
	fib := writeGraph(t, dir, "fib.json", 1000, func(i int) string {
		switch i {
		case 0:
			return node(0, "input", nil, "[1]", "")
		case 1:
			return node(1, "mul_elem", []int{0, 0}, "[1]", "")
		}
		return node(i, "mul_elem", []int{i - 1, i - 2}, "[1]", "")
	})
	for _, g := range []string{square, fib} {
		start := time.Now()
		code, out, errs := runCmd("certify", "--graph", g, "--input", third, "--out", filepath.Join(dir, "out"))
		if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "node ") || !strings.Contains(errs, "rat-bits") {
			t.Errorf("certify %s: exit %d, want 2 with one line naming the node and rat-bits\n%s%s", filepath.Base(g), code, out, errs)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("certify %s: refused after %v", filepath.Base(g), d)
		}
	}
	// The rat-work budget, checked before anything is evaluated.
	code, _, errs := runCmd("certify", "--graph", square, "--input", third, "--out", filepath.Join(dir, "out"), "--max-rat-work", "10")
	if code != 2 || !strings.Contains(errs, "rat-work") {
		t.Errorf("certify --max-rat-work 10: exit %d: %s", code, errs)
	}
	limits.Set(limits.Default())
	// A directory certify wrote, re-derived under a smaller rat-bits.
	ex := filepath.Join("..", "..", "certificates", "examples")
	cert := filepath.Join(dir, "quad")
	if code, out, errs := runCmd("certify", "--graph", filepath.Join(ex, "quad.ir.json"), "--input", filepath.Join(ex, "quad.input.json"), "--out", cert, "--cases", "2", "--partial"); code != 0 {
		t.Fatalf("certify quad: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCmd("verify", cert); code != 0 {
		t.Fatalf("verify quad: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs := runCmd("verify", "--max-rat-bits", "3", cert)
	if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "rat-bits") {
		t.Errorf("verify under --max-rat-bits 3: exit %d, want 2 naming rat-bits\n%s%s", code, out, errs)
	}

	// Huge claims in a small file: every shape of the inline graph of
	// model_range.json becomes [2^26] (the file hash recomputed in the
	// manifest). verify refuses it up front, exit 2, naming the limit,
	// before allocating a value of that size.
	path := filepath.Join(cert, "model_range.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	huge := regexp.MustCompile(`("shape": \[\s*)2(\s*\])`).ReplaceAll(data, []byte("${1}67108864${2}"))
	if bytes.Equal(huge, data) {
		t.Fatal("no shape edited")
	}
	if err := os.WriteFile(path, huge, 0o644); err != nil {
		t.Fatal(err)
	}
	editManifestJSON(t, cert, func(m *certificates.Manifest) {
		for i := range m.Files {
			if m.Files[i].Path == "model_range.json" {
				m.Files[i].SHA256 = sha256File(t, path)
			}
		}
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	code, out, errs = runCmd("verify", cert)
	runtime.ReadMemStats(&after)
	if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "graph-elements") {
		t.Errorf("verify of huge claimed shapes: exit %d, want 2 naming graph-elements\n%s%s", code, out, errs)
	}
	if d, alloc := time.Since(start), after.TotalAlloc-before.TotalAlloc; d > 10*time.Second || alloc > 256<<20 {
		t.Errorf("verify of huge claimed shapes: %v, %d bytes allocated", d, alloc)
	}
}
