package main

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/report"
	"github.com/tlcheck/tlcheck/internal/version"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// gateItem is one checked item of a gate stage (one JUnit test case):
// its JSON record and the one-line detail JUnit's system-out carries.
type gateItem struct {
	jsonout.GateItem
	Class  string // the JUnit classname below the stage's ("" for the stage itself)
	Detail string
}

// gateStage is one stage of the release gate.
type gateStage struct {
	Name    string
	Items   []gateItem
	Seconds float64
	Err     string
	// Refinements carries the refine stage's ratios for the report.
	Refinements []report.Refinement
	// timed reports that the items' Seconds were measured; otherwise the
	// stage's time is shared evenly among them.
	timed bool
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
	Tool         string
	RegistryHash string
	Seed         uint64
	Cases        int
	Graphs       int
	CertCases    int
	Out          string
	Stages       []gateStage
	Holds        bool
}

// doc is the gate's JSON document.
func (r *gateResult) doc() jsonout.GateDoc {
	d := jsonout.GateDoc{Header: jsonout.NewHeader(jsonout.KindGate, jsonout.Seed(r.Seed), nil),
		Cases: r.Cases, Graphs: r.Graphs, CertCases: r.CertCases, Certificates: r.Out, Stages: []jsonout.GateStage{}, Holds: r.Holds}
	for _, st := range r.Stages {
		js := jsonout.GateStage{Stage: st.Name, Seconds: st.Seconds, Error: st.Err, Items: make([]jsonout.GateItem, len(st.Items)), Failures: st.failures()}
		for i, it := range st.Items {
			js.Items[i] = it.GateItem
		}
		d.Stages = append(d.Stages, js)
		d.Failures += js.Failures
	}
	return d
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
	// suite and certProviders, when set (gate --device cuda), are the
	// certificate suite and the providers certified (nil: FullSuite and
	// the default providers).
	suite         *certificates.Suite
	certProviders []string
}

// stageCheck runs every primitive's local obligations and the
// graph-level ones, one JUnit test case per op × obligation. Each
// primitive (and each graph obligation) runs as its own batch, its cases
// on the worker pool, so that its wall time is measured; a primitive's
// obligations are decided together on each case, so its time is split
// evenly among them.
func stageCheck(c gateConfig) gateStage {
	st := gateStage{Name: "check", timed: true}
	ops, _ := parseOps("all")
	full := obligations.Suite{Ops: ops, Cases: c.cases, Graphs: c.graphs, Seed: c.seed, Only: -1}
	prog := cli.NewProgress(c.stderr, "gate: check", full.Steps())
	defer prog.Done()
	var batches []checkRun
	for _, op := range ops {
		batches = append(batches, checkRun{Suite: obligations.Suite{Ops: []string{op}, Cases: c.cases, Seed: c.seed, Only: -1}})
	}
	for _, ob := range obligations.GlobalObligations() {
		batches = append(batches, checkRun{Suite: obligations.Suite{Graphs: c.graphs, GraphObs: []obligations.Obligation{ob}, Seed: c.seed, Only: -1}})
	}
	for _, b := range batches {
		start := time.Now()
		rows, err := runChecksGraphs(c.registry, b, prog)
		if err != nil {
			st.Err = err.Error()
			return st
		}
		share := time.Since(start).Seconds() / float64(max(len(rows), 1))
		for _, r := range rows {
			res := r.CheckResult
			st.Items = append(st.Items, gateItem{
				GateItem: jsonout.GateItem{Name: r.Op + "/" + r.Obligation, Holds: r.Holds, Seconds: share, Failure: r.Failure, Check: &res},
				Class:    r.Op,
				Detail:   fmt.Sprintf("%d cases, oracle %s, worst %s", r.Cases, r.Oracle, r.Worst)})
		}
	}
	return st
}

// stageCertify writes the certificates.
func stageCertify(c gateConfig) gateStage {
	st := gateStage{Name: "certify"}
	// The gate owns its output directory: it replaces a certificate
	// directory (one holding manifest.json) run after run, and refuses to
	// empty any other.
	m, err := certifyDirWith(c.suiteOrFull(), c.out, certificates.Options{Seed: c.seed, Cases: c.certs, Overwrite: certificates.OverwriteCertificates, Providers: c.certProviders}, c.stderr)
	if err != nil {
		st.Err = err.Error()
		return st
	}
	for _, f := range m.Files {
		st.Items = append(st.Items, gateItem{GateItem: jsonout.GateItem{Name: f.Path, Holds: true, SHA256: f.SHA256}, Detail: "sha256 " + f.SHA256})
	}
	return st
}

// stageVerify re-derives every certificate.
func stageVerify(c gateConfig) gateStage {
	st := gateStage{Name: "verify"}
	rep, err := verifyDirWith(c.suiteOrFull(), c.out, io.Discard)
	if err != nil {
		st.Err = err.Error()
		return st
	}
	for _, f := range rep.Files {
		n := f.Cases
		it := gateItem{GateItem: jsonout.GateItem{Name: f.Path, Holds: f.Err == nil, Cases: &n}, Detail: fmt.Sprintf("%d cases", f.Cases)}
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
	res := &gateResult{Tool: "tlcheck " + version.Version, RegistryHash: spec.RegistryHash(), Seed: c.seed, Cases: c.cases,
		Graphs: c.graphs, CertCases: c.certs, Out: c.out, Holds: true}
	for _, run := range stages {
		start := time.Now()
		st := run(c)
		st.Seconds = time.Since(start).Seconds()
		if !st.timed {
			for i := range st.Items {
				st.Items[i].Seconds = st.Seconds / float64(len(st.Items))
			}
		}
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

// JUnit XML, the subset CI systems read (the attributes of the Ant
// JUnit schema that Jenkins, GitLab and GitHub reporters consume): one
// testsuite per stage, one testcase per item — per op × obligation in
// the check stage — each with its time in seconds.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fails   int          `xml:"failures,attr"`
	Time    string       `xml:"time,attr"`
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
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// junitTime spells seconds as JUnit's xs:decimal, to the millisecond.
func junitTime(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// junitXML renders the gate result as a JUnit report. A check item is
// named by its obligation under the classname tlcheck.check.OP, so each
// primitive groups its obligations.
func junitXML(r *gateResult) ([]byte, error) {
	js := junitSuites{Name: "tlcheck gate"}
	total := 0.0
	for _, st := range r.Stages {
		total += st.Seconds
		s := junitSuite{Name: "tlcheck." + st.Name, Time: junitTime(st.Seconds)}
		items := st.Items
		if st.Err != "" {
			items = append(items, gateItem{GateItem: jsonout.GateItem{Name: st.Name, Failure: st.Err}})
		}
		for _, it := range items {
			class, name := "tlcheck."+st.Name, it.Name
			if it.Class != "" {
				class += "." + it.Class
				name = strings.TrimPrefix(name, it.Class+"/")
			}
			c := junitCase{Name: name, Classname: class, Time: junitTime(it.Seconds), SystemOut: it.Detail}
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
	js.Time = junitTime(total)
	data, err := xml.MarshalIndent(js, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(data, '\n')...), nil
}

func writeJUnit(path string, r *gateResult) error {
	data, err := junitXML(r)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, data, 0o644)
}

func runGate(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlags("gate")
	if err := addLimits(fs, "gate"); err != nil {
		return cli.BadInput(err)
	}
	out := fs.String("out", "tlcheck-certs", "directory for the certificates")
	junit := fs.String("junit", "", "also write a JUnit XML report to FILE")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of a table")
	seed := fs.Uint64("seed", 0, "generation seed")
	cases := fs.Int("cases", 100, "cases per primitive obligation")
	certs := fs.Int("cert-cases", 20, "cases per certificate")
	graphs := fs.Int("graphs", defaultGraphs, "random graphs per graph-level obligation (as check's --graphs, with the same default)")
	plant := fs.String("plant-fault", "", "self-test: negate the VJP of this primitive; the gate must fail")
	plantProvider := fs.String("plant-provider-bug", "", "self-test: flip a high bit of one fast_cpu OP result; the gate must fail")
	withLean := fs.Bool("lean", false, "add the lean stage: lake build lean/, export and audit its theorems (needs lake on PATH)")
	reportDir := fs.String("report", "", "also write a Markdown summary and a PNG plot of error/bound ratios to DIR")
	device := fs.String("device", "cpu", "cpu|cuda (cuda adds the CUDA refinement stage)")
	plantCUDA := fs.String("plant-cuda-bug", "", "self-test: flip a high bit of one CUDA OP result; the gate must fail")
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
		reg = obligations.PlantFault(*plant)
	}
	if *graphs < 1 || *graphs > 100_000 {
		return cli.Usagef("--graphs must be between 1 and 100000, got %d", *graphs)
	}
	if *withLean {
		if _, err := exec.LookPath("lake"); err != nil {
			return errNoLake()
		}
	}
	c := gateConfig{out: *out, seed: *seed, cases: *cases, graphs: *graphs, certs: *certs, registry: reg, stderr: stderr}
	if *plantProvider != "" {
		ps, err := plantedProviders(*plantProvider)
		if err != nil {
			return err
		}
		c.providers = ps
	}
	dev, err := gateDevice(*device, *plantCUDA)
	if err != nil {
		return err
	}
	c.suite, c.certProviders = dev.certificates()
	// Every argument is checked before anything is written; the
	// certificate directory is created by the certify stage.
	if err := cli.CheckOutputPath("out", *out, true); err != nil {
		return err
	}
	// The gate owns its certificate directory: it replaces one that holds
	// a manifest, and refuses any other non-empty directory.
	if err := certificates.CheckOutputDir(*out, certificates.OverwriteCertificates); err != nil {
		return cli.Usagef("--out: %v", err)
	}
	if *junit != "" {
		if err := cli.CheckOutputPath("junit", *junit, false); err != nil {
			return err
		}
	}
	if *reportDir != "" {
		if err := cli.CheckOutputPath("report", *reportDir, true); err != nil {
			return err
		}
	}
	// undelivered: a report that cannot be written is exit 2, and a run
	// that exits 2 leaves none of the outputs it created itself (the
	// certificate directory, the report directory, the JUnit file);
	// what existed before the run stays.
	var fresh []string
	for _, p := range []string{*out, *reportDir, *junit} {
		if _, err := os.Lstat(p); p != "" && errors.Is(err, os.ErrNotExist) {
			fresh = append(fresh, p)
		}
	}
	undelivered := func(err error) error {
		for _, p := range fresh {
			os.RemoveAll(p)
		}
		return err
	}
	stages := dev.stages(gateStages())
	if *withLean {
		stages = append(stages, stageLean)
	}
	res := runGateStages(c, stages)
	if dev != nil && dev.fault != nil {
		return undelivered(cli.BadInput(dev.fault))
	}
	if *reportDir != "" {
		if err := report.Write(*reportDir, reportData(res)); err != nil {
			return undelivered(cli.Usagef("--report: %v", err))
		}
	}
	if *junit != "" {
		if err := writeJUnit(*junit, res); err != nil {
			return undelivered(cli.Usagef("--junit: %v", err))
		}
	}
	if *asJSON {
		if err := jsonout.Write(stdout, res.doc()); err != nil {
			return undelivered(err)
		}
	} else {
		printGateSummary(stdout, res)
	}
	if err := cli.WriteErr(stdout); err != nil {
		return undelivered(err)
	}
	if !res.Holds {
		n := 0
		for _, st := range res.Stages {
			n += st.failures()
		}
		return cli.Failf("gate: %s", cli.Count(n, "failure", "failures"))
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
