// Package gate is the release gate: one run that checks every obligation
// of the registry, refines every provider's executable primitives against
// the exact semantics, writes the certificate suite and re-derives it, and
// reports the outcome as a table, a JSON document (tlcheck.gate.v1), a
// JUnit XML report and a Markdown summary with a picture of the refinement
// ratios.
//
// A run is a sequence of stages, in this order:
//
//	check        every primitive's local obligations and the graph-level ones
//	refine       reference and fast_cpu capsules against the exact semantics
//	refine-cuda  the CUDA capsules (only with Config.CUDA)
//	certify      the certificate suite, written to Config.Out
//	verify       every certificate re-derived from the directory
//	lean         the Lean theorems audited (only with Config.Lean)
//
// Each stage yields items (one JUnit test case each) that hold or fail;
// the gate holds when no item fails and no stage met an error. A
// refinement item holds when every output element of every case meets the
// rule its capsule's reduction policy calls for (see package refine): bit
// equality with the binary32 replay for fixed-left capsules, an error
// within the proven γ bound of the exact result otherwise; the report
// draws each case's worst error/bound ratio.
//
// The gate checks no obligation itself: Config.Check decides them (the
// check command's runner), and the stages call packages obligations,
// refine and certificates.
//
// Before a run, CheckOutputs checks the paths it will write and NewCUDA
// resolves the device; after it, Result.Deliver writes its outputs.
// RunDelivered runs and delivers, and removes what the run created
// when it cannot deliver.
package gate

import (
	"io"
	"time"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/report"
	"github.com/tlcheck/tlcheck/internal/version"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

// Config is what a gate run needs.
type Config struct {
	Out       string // the certificate directory; the gate owns it
	Seed      uint64 // the generation seed of every stage
	Cases     int    // cases per primitive obligation
	Graphs    int    // random graphs per graph-level obligation
	CertCases int    // cases per certificate and per refinement check

	// Check decides obligations for the check stage; it must be set.
	Check CheckFunc
	// Providers are the runtime providers the refine stage binds (nil:
	// backend.FastProviders()); self-tests plant faulty ones here.
	Providers *backend.Providers
	// CUDA, when set, adds the refine-cuda stage after refine, and the
	// CUDA provider's refinement certificates to the suite.
	CUDA *CUDA
	// Lean, when set, is the last stage.
	Lean func(Config) Stage
	// Stderr receives progress bars when it is a terminal.
	Stderr io.Writer
}

// CheckFunc checks the local obligations of ops on cases 0 … cases−1 and
// the graph-level obligations graphObs on graphs random graphs (nil: all
// of them; graphs 0: none), advancing progress by one step per case, and
// returns one row per op × obligation in a fixed order.
type CheckFunc func(ops []string, graphObs []obligations.Obligation, cases, graphs int, seed uint64, progress *cli.Progress) ([]CheckRow, error)

// CheckRow is one decided obligation: its JSON record and the check
// table's spelling of its oracles and worst measure.
type CheckRow struct {
	jsonout.CheckResult
	Oracle string // the oracles joined with "+"
	Worst  string // the worst measure as the check table prints it
}

// Item is one checked item of a stage (one JUnit test case): its JSON
// record and the one-line detail JUnit's system-out carries.
type Item struct {
	jsonout.GateItem
	Class  string // the JUnit classname below the stage's ("" for the stage itself)
	Detail string
}

// Stage is the outcome of one stage.
type Stage struct {
	Name    string
	Items   []Item
	Seconds float64
	Err     string // an error that stopped the stage ("" if none)
	// Refinements carries the refinement ratios for the report.
	Refinements []report.Refinement
	// Timed reports that the items' Seconds were measured; otherwise the
	// stage's time is shared evenly among them.
	Timed bool
}

// Failures counts the stage's failing items, and its error as one more.
func (s *Stage) Failures() int {
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

// Result is the whole gate run.
type Result struct {
	Tool         string // "tlcheck VERSION"
	RegistryHash string // spec.RegistryHash() of the registry checked
	Seed         uint64
	Cases        int
	Graphs       int
	CertCases    int
	Out          string // the certificate directory
	Stages       []Stage
	Holds        bool // no stage failed
}

// Failures counts the failures of every stage.
func (r *Result) Failures() int {
	n := 0
	for i := range r.Stages {
		n += r.Stages[i].Failures()
	}
	return n
}

// stage runs one stage; a non-nil error is a fault that is no verdict (a
// device that failed to run), returned by Run after every stage ran.
type stage func(Config) (Stage, error)

// Run runs the stages in order and returns their result. Every stage
// runs whatever the earlier ones found. The error is a device fault met
// on the way (a failed launch, an out-of-memory), not a failing
// obligation: the result then is no verdict.
func Run(c Config) (*Result, error) {
	res := &Result{Tool: "tlcheck " + version.Version, RegistryHash: spec.RegistryHash(), Seed: c.Seed, Cases: c.Cases,
		Graphs: c.Graphs, CertCases: c.CertCases, Out: c.Out, Holds: true}
	var fault error
	for _, run := range c.stages() {
		start := time.Now()
		st, err := run(c)
		if err != nil && fault == nil {
			fault = err
		}
		st.Seconds = time.Since(start).Seconds()
		if !st.Timed {
			for i := range st.Items {
				st.Items[i].Seconds = st.Seconds / float64(len(st.Items))
			}
		}
		res.Stages = append(res.Stages, st)
		if st.Failures() > 0 {
			res.Holds = false
		}
	}
	return res, fault
}

// stages lists the stages of c in order.
func (c Config) stages() []stage {
	s := []stage{verdict(checkStage), verdict(refineStage)}
	if c.CUDA != nil {
		s = append(s, c.CUDA.stage)
	}
	s = append(s, verdict(certifyStage), verdict(verifyStage))
	if c.Lean != nil {
		s = append(s, verdict(c.Lean))
	}
	return s
}

// verdict is a stage that meets no fault.
func verdict(f func(Config) Stage) stage {
	return func(c Config) (Stage, error) { return f(c), nil }
}
