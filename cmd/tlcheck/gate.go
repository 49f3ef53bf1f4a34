package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/report"
	"github.com/tlcheck/tlcheck/internal/version"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// gateItem is one checked item of a gate stage (one JUnit test case).
type gateItem struct {
	Name    string `json:"name"`
	Holds   bool   `json:"holds"`
	Detail  string `json:"detail,omitempty"`
	Failure string `json:"failure,omitempty"`
}

// gateStage is one stage of the release gate.
type gateStage struct {
	Name    string     `json:"stage"`
	Items   []gateItem `json:"items"`
	Seconds float64    `json:"seconds"`
	Err     string     `json:"error,omitempty"`
	// Refinements carries the refine stage's ratios for the report.
	Refinements []report.Refinement `json:"refinement,omitempty"`
}

func (s *gateStage) failures() int {
	n := 0
	for _, it := range s.Items {
		if !it.Holds {
			n++
		}
	}
	if s.Err != "" {
		n++
	}
	return n
}

// gateResult is the whole gate run.
type gateResult struct {
	Tool         string      `json:"tool"`
	RegistryHash string      `json:"registry_hash"`
	Seed         uint64      `json:"seed"`
	Cases        int         `json:"cases"`
	Out          string      `json:"certificates"`
	Stages       []gateStage `json:"stages"`
	Holds        bool        `json:"holds"`
}

// gateConfig is what a gate run needs.
type gateConfig struct {
	out      string
	seed     uint64
	cases    int
	graphs   int
	certs    int
	registry obligations.Registries
	// providers are the runtime providers the refine stage binds (nil:
	// backend.FastProviders()); tests plant faulty ones here.
	providers *backend.Providers
	stderr    io.Writer
}

// stageCheck runs every primitive's local obligations.
func stageCheck(c gateConfig) gateStage {
	st := gateStage{Name: "check"}
	ops, _ := parseOps("all")
	run := checkRun{ops: ops, cases: c.cases, graphs: c.graphs, seed: c.seed, only: -1}
	prog := cli.NewProgress(c.stderr, "gate: check", run.steps())
	rows, err := runChecksGraphs(c.registry, run, prog)
	prog.Done()
	if err != nil {
		st.Err = err.Error()
		return st
	}
	for _, r := range rows {
		st.Items = append(st.Items, gateItem{Name: r.Op + "/" + r.Obligation, Holds: r.Holds,
			Detail: fmt.Sprintf("%d cases, oracle %s, worst %s", r.Cases, r.Oracle, r.Worst), Failure: r.Failure})
	}
	return st
}

// stageCertify writes the certificates.
func stageCertify(c gateConfig) gateStage {
	st := gateStage{Name: "certify"}
	m, err := certifyDir(c.out, certificates.Options{Seed: c.seed, Cases: c.certs}, c.stderr)
	if err != nil {
		st.Err = err.Error()
		return st
	}
	for _, f := range m.Files {
		st.Items = append(st.Items, gateItem{Name: f.Path, Holds: true, Detail: "sha256 " + f.SHA256[:16]})
	}
	return st
}

// stageVerify re-derives every certificate.
func stageVerify(c gateConfig) gateStage {
	st := gateStage{Name: "verify"}
	rep, err := verifyDir(c.out, io.Discard)
	if err != nil {
		st.Err = err.Error()
		return st
	}
	for _, f := range rep.Files {
		it := gateItem{Name: f.Path, Holds: f.Err == nil, Detail: fmt.Sprintf("%d cases", f.Cases)}
		if f.Err != nil {
			it.Failure = f.Err.Error()
		}
		st.Items = append(st.Items, it)
	}
	return st
}

// runGateStages runs the stages in order; certify and verify run only if
// the checks hold (certificates of failing obligations would be refused
// anyway).
func runGateStages(c gateConfig, stages []func(gateConfig) gateStage) *gateResult {
	res := &gateResult{Tool: "tlcheck " + version.Version, RegistryHash: spec.RegistryHash(), Seed: c.seed, Cases: c.cases, Out: c.out, Holds: true}
	for _, run := range stages {
		start := time.Now()
		st := run(c)
		st.Seconds = time.Since(start).Seconds()
		res.Stages = append(res.Stages, st)
		if st.failures() > 0 {
			res.Holds = false
		}
	}
	return res
}

func printGateSummary(w io.Writer, r *gateResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "stage\titems\tfailures\tseconds\tresult")
	for _, st := range r.Stages {
		res := "holds"
		if st.failures() > 0 {
			res = "FAILS"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%s\n", st.Name, len(st.Items), st.failures(), st.Seconds, res)
	}
	tw.Flush()
	for _, st := range r.Stages {
		if st.Err != "" {
			fmt.Fprintf(w, "\n%s: %s\n", st.Name, st.Err)
		}
		shown := 0
		for _, it := range st.Items {
			if !it.Holds && shown < 10 {
				fmt.Fprintf(w, "\n%s: %s: %s\n", st.Name, it.Name, it.Failure)
				shown++
			}
		}
	}
	if r.Holds {
		fmt.Fprintf(w, "\ngate holds: every obligation checked, certificates in %s verified\n", r.Out)
	} else {
		fmt.Fprintf(w, "\ngate FAILS\n")
	}
}

// JUnit XML, the subset CI systems read.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fails   int          `xml:"failures,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name  string      `xml:"name,attr"`
	Tests int         `xml:"tests,attr"`
	Fails int         `xml:"failures,attr"`
	Time  string      `xml:"time,attr"`
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func writeJUnit(path string, r *gateResult) error {
	js := junitSuites{Name: "tlcheck gate"}
	for _, st := range r.Stages {
		s := junitSuite{Name: "tlcheck." + st.Name, Time: fmt.Sprintf("%.3f", st.Seconds)}
		items := st.Items
		if st.Err != "" {
			items = append(items, gateItem{Name: st.Name, Failure: st.Err})
		}
		for _, it := range items {
			c := junitCase{Name: it.Name, Classname: "tlcheck." + st.Name, SystemOut: it.Detail}
			if !it.Holds {
				msg := it.Failure
				if i := strings.IndexByte(msg, ';'); i > 0 && i < 200 {
					msg = msg[:i]
				}
				c.Failure = &junitFailure{Message: msg, Text: it.Failure}
				s.Fails++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		js.Tests += s.Tests
		js.Fails += s.Fails
		js.Suites = append(js.Suites, s)
	}
	data, err := xml.MarshalIndent(js, "", "  ")
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(data, '\n')...), 0o644)
}

func runGate(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlags("gate")
	if err := limits.AddFlags(fs); err != nil {
		return cli.BadInput(err)
	}
	out := fs.String("out", "tlcheck-certs", "directory for the certificates")
	junit := fs.String("junit", "", "also write a JUnit XML report to FILE")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of a table")
	seed := fs.Uint64("seed", 0, "generation seed")
	cases := fs.Int("cases", 100, "cases per primitive obligation")
	certs := fs.Int("cert-cases", 20, "cases per certificate")
	graphs := fs.Int("graphs", 50, "random graphs per graph-level obligation")
	plant := fs.String("plant-fault", "", "self-test: negate the VJP of this primitive; the gate must fail")
	plantProvider := fs.String("plant-provider-bug", "", "self-test: flip a high bit of one fast_cpu OP result; the gate must fail")
	reportDir := fs.String("report", "", "also write a Markdown summary and a PNG plot of error/bound ratios to DIR")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if *cases < 1 || *cases > 1_000_000 {
		return cli.Usagef("--cases must be between 1 and 1000000, got %d", *cases)
	}
	if *certs < 1 {
		return cli.Usagef("--cert-cases must be at least 1, got %d", *certs)
	}
	if max := limits.Current().CertCases; *certs > max {
		return cli.BadInput(fmt.Errorf("--cert-cases: %w", limits.Exceeded("cert-cases", int64(max), "%d cases per certificate", *certs)))
	}
	reg := obligations.DefaultRegistries()
	if *plant != "" {
		if _, err := spec.Info(*plant); err != nil {
			return cli.Usagef("--plant-fault: unknown primitive %q", *plant)
		}
		reg = plantFault(*plant)
	}
	if *graphs < 1 || *graphs > 100_000 {
		return cli.Usagef("--graphs must be between 1 and 100000, got %d", *graphs)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return cli.Usagef("--out: %v", err)
	}
	c := gateConfig{out: *out, seed: *seed, cases: *cases, graphs: *graphs, certs: *certs, registry: reg, stderr: stderr}
	if *plantProvider != "" {
		ps, err := plantedProviders(*plantProvider)
		if err != nil {
			return err
		}
		c.providers = ps
	}
	res := runGateStages(c, gateStages())
	if *reportDir != "" {
		if err := report.Write(*reportDir, reportData(res)); err != nil {
			return cli.Usagef("--report: %v", err)
		}
	}
	if *junit != "" {
		if err := writeJUnit(*junit, res); err != nil {
			return cli.Usagef("--junit: %v", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		printGateSummary(stdout, res)
	}
	if !res.Holds {
		n := 0
		for _, st := range res.Stages {
			n += st.failures()
		}
		return cli.Failf("gate: %d failures", n)
	}
	return nil
}

// gateStages lists the gate's stages in order.
func gateStages() []func(gateConfig) gateStage {
	return []func(gateConfig) gateStage{stageCheck, stageRefine, stageCertify, stageVerify}
}

// plantedProviders returns the fast providers with fast_cpu wrapped so
// that element 0 of every op result has a high mantissa bit flipped: far
// beyond any rounding bound.
func plantedProviders(op string) (*backend.Providers, error) {
	ok := false
	for _, o := range refine.Ops() {
		ok = ok || o == op
	}
	if !ok {
		return nil, cli.Usagef("--plant-provider-bug: %q is not a fast_cpu op (%s)", op, strings.Join(refine.Ops(), ","))
	}
	bad, err := refine.NewFlipBit(backend.NewFastCPUProvider(), op, 0, 20)
	if err != nil {
		return nil, cli.Usagef("--plant-provider-bug: %v", err)
	}
	ps, err := backend.NewProviders(backend.NewReferenceProvider(nil), bad)
	if err != nil {
		return nil, err
	}
	return ps, nil
}

// reportData converts a gate result for the report writer.
func reportData(r *gateResult) *report.Data {
	d := &report.Data{Tool: r.Tool, RegistryHash: r.RegistryHash, Certificates: r.Out, Seed: r.Seed, Holds: r.Holds}
	for _, st := range r.Stages {
		d.Stages = append(d.Stages, report.Stage{Name: st.Name, Items: len(st.Items), Failures: st.failures(), Seconds: st.Seconds})
		d.Refinements = append(d.Refinements, st.Refinements...)
		if st.Err != "" {
			d.Failures = append(d.Failures, st.Name+": "+st.Err)
		}
		for _, it := range st.Items {
			if !it.Holds {
				d.Failures = append(d.Failures, st.Name+": "+it.Name+": "+it.Failure)
			}
		}
	}
	return d
}
