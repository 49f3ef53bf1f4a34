package gate

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

// checker decides the obligations with reg, as `tlcheck check` does, with
// the rows' table spellings left out.
func checker(reg obligations.Registries) CheckFunc {
	return func(ops []string, obs []obligations.Obligation, cases, graphs int, seed uint64, p *cli.Progress) ([]CheckRow, error) {
		var all [][]*obligations.Result
		if len(ops) > 0 {
			res, err := reg.CheckOpsCases(ops, obligations.Indices(cases), seed, p.Step)
			if err != nil {
				return nil, err
			}
			all = append(all, res...)
		}
		if graphs > 0 {
			all = append(all, obligations.CheckGlobalCases(reg.Rat, obs, obligations.Indices(graphs), seed, p.Step))
		}
		var rows []CheckRow
		for _, res := range all {
			for _, r := range res {
				row := CheckRow{CheckResult: jsonout.CheckResult{Op: r.Op, Obligation: string(r.Obligation), Cases: r.Cases, Holds: r.Holds()}}
				if r.Failure != nil {
					row.Failure = r.Failure.Error()
				}
				rows = append(rows, row)
			}
		}
		return rows, nil
	}
}

// plantedVJP returns the default registries with op's VJP over Rat
// having its first contribution negated.
func plantedVJP(op string) obligations.Registries {
	r := obligations.DefaultRegistries()
	r.Rat = spec.New[spec.Rat]()
	p, err := r.Rat.Lookup(op)
	if err != nil {
		panic(err)
	}
	bad, orig := *p, p.VJP
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		gs, err := orig(a, xs, y, dy)
		if err == nil && len(gs) > 0 {
			gs[0] = spec.NegT(gs[0])
		}
		return gs, err
	}
	r.Rat.Override(&bad)
	return r
}

// holding is a checker whose every obligation holds, without deciding any.
func holding(ops []string, obs []obligations.Obligation, _, _ int, _ uint64, _ *cli.Progress) ([]CheckRow, error) {
	var rows []CheckRow
	for _, op := range ops {
		rows = append(rows, CheckRow{CheckResult: jsonout.CheckResult{Op: op, Obligation: "stub", Cases: 1, Holds: true}, Oracle: "rat", Worst: "exact"})
	}
	for _, ob := range obs {
		rows = append(rows, CheckRow{CheckResult: jsonout.CheckResult{Op: "graphs", Obligation: string(ob), Cases: 1, Holds: true}, Oracle: "rat", Worst: "exact"})
	}
	return rows, nil
}

func emulatedCUDA() *CUDA {
	return &CUDA{Tree: cuda.NewEmulatedProvider(cuda.Options{}), Atomic: cuda.NewEmulatedProvider(cuda.Options{AtomicSum: true})}
}

// brokenDevice is a CUDA provider whose every launch fails, as a device
// out of memory would.
type brokenDevice struct{ backend.Provider }

func (brokenDevice) Execute(string, *spec.Attrs, []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	return spec.Tensor[spec.F32]{}, errors.New("out of memory")
}

// TestRun runs the gate with its stages varied and faults planted: each
// planted fault makes the gate fail on the item it breaks, a device error
// is a fault rather than a verdict.
func TestRun(t *testing.T) {
	plantedCUDA := emulatedCUDA()
	if err := plantedCUDA.Plant("matmul"); err != nil {
		t.Fatal(err)
	}
	plantedFast, err := PlantedProviders("matmul")
	if err != nil {
		t.Fatal(err)
	}
	lean := func(Config) Stage {
		return Stage{Name: "lean", Items: []Item{{GateItem: jsonout.GateItem{Name: "T.ok", Holds: true}}, {GateItem: jsonout.GateItem{Name: "T.bad", Failure: "sorryAx"}}}}
	}
	tests := []struct {
		name   string
		config func(*Config)
		stages []string
		failed []string // "stage: item" of every failing item
		fault  string
	}{
		{"holds", func(*Config) {}, []string{"check", "refine", "certify", "verify"}, nil, ""},
		{"planted VJP fault", func(c *Config) { c.Check = checker(plantedVJP("mul")) }, []string{"check", "refine", "certify", "verify"},
			[]string{"check: mul/adjointness"}, ""},
		{"planted provider bug", func(c *Config) { c.Providers = plantedFast }, []string{"check", "refine", "certify", "verify"},
			[]string{"refine: fast_cpu.matmul"}, ""},
		{"cuda", func(c *Config) { c.CUDA = emulatedCUDA() }, []string{"check", "refine", "refine-cuda", "certify", "verify"}, nil, ""},
		{"planted cuda bug", func(c *Config) { c.CUDA = plantedCUDA }, []string{"check", "refine", "refine-cuda", "certify", "verify"},
			[]string{"refine-cuda: native-cuda.matmul"}, ""},
		{"device error", func(c *Config) {
			c.CUDA = &CUDA{Tree: brokenDevice{emulatedCUDA().Tree}, Atomic: emulatedCUDA().Atomic}
		},
			nil, nil, "refine-cuda native-cuda.sum: "},
		{"lean", func(c *Config) { c.Lean = lean }, []string{"check", "refine", "certify", "verify", "lean"}, []string{"lean: T.bad"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{Out: filepath.Join(t.TempDir(), "certs"), Cases: 2, Graphs: 1, CertCases: 2, Check: holding}
			tt.config(&c)
			res, err := Run(c)
			if tt.fault != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.fault) {
					t.Fatalf("fault %v, want one starting %q", err, tt.fault)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var stages, failed []string
			for _, st := range res.Stages {
				stages = append(stages, st.Name)
				if st.Err != "" {
					failed = append(failed, st.Name+": "+st.Err)
				}
				for _, it := range st.Items {
					if !it.Holds {
						failed = append(failed, st.Name+": "+it.Name)
					}
				}
			}
			if !slices.Equal(stages, tt.stages) {
				t.Errorf("stages %v, want %v", stages, tt.stages)
			}
			for _, f := range tt.failed {
				if !slices.Contains(failed, f) {
					t.Errorf("%q does not fail; failures: %v", f, failed)
				}
			}
			if res.Holds != (len(tt.failed) == 0) || res.Holds != (res.Failures() == 0) {
				t.Errorf("holds %v with %d failures %v", res.Holds, res.Failures(), failed)
			}
		})
	}
}

// fixture is a result with a check item, a refinement failure and a
// stage that stopped on an error.
func fixture() *Result {
	res := &jsonout.CheckResult{Op: "mul", Obligation: "adjointness", Cases: 3, Holds: true}
	return &Result{Tool: "tlcheck test", Out: "certs", Seed: 7, Cases: 3, Graphs: 1, CertCases: 2, Stages: []Stage{
		{Name: "check", Seconds: 1.5, Items: []Item{{GateItem: jsonout.GateItem{Name: "mul/adjointness", Holds: true, Seconds: 1.5, Check: res}, Class: "mul", Detail: "3 cases"}}},
		{Name: "refine", Seconds: 0.25, Items: []Item{{GateItem: jsonout.GateItem{Name: "fast_cpu.sum", Seconds: 0.25, Failure: "bound exceeded; element 0"}}}},
		{Name: "certify", Err: "certify: disk full"},
	}}
}

// TestWriters pins the text table and the JUnit report of fixture, and
// the JSON document's failure count.
func TestWriters(t *testing.T) {
	r := fixture()
	tests := []struct {
		name  string
		write func(*bytes.Buffer) error
		want  []string
	}{
		{"text", func(b *bytes.Buffer) error { return r.WriteText(b) }, []string{
			"stage    items  failures  seconds  result\ncheck    1      0         1.50     holds\nrefine   1      1         0.25     FAILS\ncertify  0      1         0.00     FAILS\n",
			"\nrefine: fast_cpu.sum: bound exceeded; element 0\n",
			"\ncertify: certify: disk full\n",
			"\ngate FAILS\n",
		}},
		{"junit", func(b *bytes.Buffer) error { return r.WriteJUnit(b) }, []string{
			`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<testsuites name="tlcheck gate" tests="3" failures="2" time="1.750">`,
			`<testcase name="adjointness" classname="tlcheck.check.mul" time="1.500">`,
			`<failure message="bound exceeded">bound exceeded; element 0</failure>`,
			`<testsuite name="tlcheck.certify" tests="1" failures="1" time="0.000">`,
			`<testcase name="certify" classname="tlcheck.certify" time="0.000">`,
		}},
		{"json", func(b *bytes.Buffer) error { return r.WriteJSON(b) }, []string{`"failures": 2`, `"stage": "certify"`, `"error": "certify: disk full"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// TestWriteReport: the report lists every failure and writes its picture.
func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	if err := fixture().WriteReport(dir); err != nil {
		t.Fatal(err)
	}
}
