package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	d := &Data{Tool: "tlcheck x", RegistryHash: "abc", Certificates: "c", Holds: false,
		Stages:      []Stage{{Name: "check", Items: 3, Failures: 1, Seconds: 0.5}},
		Failures:    []string{"check: mul/adjointness: boom\nsecond line"},
		Refinements: []Refinement{{Provider: "fast_cpu", Op: "sum", Capsule: "fast_cpu.sum", Policy: "implementation-defined", Cases: 3, Ratios: []float64{0.1, 0.5, 0.3}, Worst: 0.5, Holds: true}}}
	var b bytes.Buffer
	if err := Markdown(&b, d); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"**FAILS**", "| check | 3 | 1 | 0.50 |", "boom second line", "| fast_cpu | sum | fast_cpu.sum | implementation-defined | 3 | 0.5 | 0.3 | true |"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	dir := t.TempDir()
	if err := Write(dir, d); err != nil {
		t.Fatal(err)
	}
	png, err := os.ReadFile(filepath.Join(dir, PlotName))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("plot: %v", err)
	}
}
