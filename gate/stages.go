package gate

import (
	"fmt"
	"time"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/certificates/verify"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

// checkStage runs every primitive's local obligations and the
// graph-level ones, one item per op × obligation. Each primitive (and
// each graph obligation) runs as its own batch, its cases on the worker
// pool, so that its wall time is measured; a primitive's obligations are
// decided together on each case, so its time is split evenly among them.
func checkStage(c Config) Stage {
	st := Stage{Name: "check", Timed: true}
	var ops []string
	for _, info := range spec.Infos() {
		ops = append(ops, info.Name)
	}
	globals := obligations.GlobalObligations()
	prog := cli.NewProgress(c.Stderr, "gate: check", len(ops)*c.Cases+len(globals)*c.Graphs)
	defer prog.Done()
	type batch struct {
		ops    []string
		obs    []obligations.Obligation
		cases  int
		graphs int
	}
	var batches []batch
	for _, op := range ops {
		batches = append(batches, batch{ops: []string{op}, cases: c.Cases})
	}
	for _, ob := range globals {
		batches = append(batches, batch{obs: []obligations.Obligation{ob}, graphs: c.Graphs})
	}
	for _, b := range batches {
		start := time.Now()
		rows, err := c.Check(b.ops, b.obs, b.cases, b.graphs, c.Seed, prog)
		if err != nil {
			st.Err = err.Error()
			return st
		}
		share := time.Since(start).Seconds() / float64(max(len(rows), 1))
		for _, r := range rows {
			res := r.CheckResult
			st.Items = append(st.Items, Item{
				GateItem: jsonout.GateItem{Name: r.Op + "/" + r.Obligation, Holds: r.Holds, Seconds: share, Failure: r.Failure, Check: &res},
				Class:    r.Op,
				Detail:   fmt.Sprintf("%d cases, oracle %s, worst %s", r.Cases, r.Oracle, r.Worst)})
		}
	}
	return st
}

// suite is the certificate suite of c: the full suite, with the CUDA
// provider's refinement certificates when c.CUDA is set.
func (c Config) suite() (*certificates.Suite, []string) {
	if c.CUDA != nil {
		return c.CUDA.certificates()
	}
	return certificates.FullSuite(), nil
}

// certifyStage writes the certificates. The gate owns its output
// directory: it replaces a certificate directory (one holding
// manifest.json) run after run, and refuses to empty any other.
func certifyStage(c Config) Stage {
	st := Stage{Name: "certify"}
	suite, providers := c.suite()
	o := certificates.Options{Seed: c.Seed, Cases: c.CertCases, Overwrite: certificates.OverwriteCertificates, Providers: providers}
	prog := cli.NewProgress(c.Stderr, "certify", suite.Subjects(o))
	o.Progress = prog.Step
	m, err := suite.Certify(c.Out, o)
	prog.Done()
	if err != nil {
		st.Err = "certify: " + err.Error()
		return st
	}
	for _, f := range m.Files {
		st.Items = append(st.Items, Item{GateItem: jsonout.GateItem{Name: f.Path, Holds: true, SHA256: f.SHA256}, Detail: "sha256 " + f.SHA256})
	}
	return st
}

// verifyStage re-derives every certificate.
func verifyStage(c Config) Stage {
	st := Stage{Name: "verify"}
	suite, _ := c.suite()
	rep, err := verify.Dir(suite, c.Out)
	if err != nil {
		st.Err = "verify: " + err.Error()
		return st
	}
	for _, f := range rep.Files {
		n := f.Cases
		it := Item{GateItem: jsonout.GateItem{Name: f.Path, Holds: f.Err == nil, Cases: &n}, Detail: fmt.Sprintf("%d cases", f.Cases)}
		if f.Err != nil {
			it.Failure = f.Err.Error()
		}
		st.Items = append(st.Items, it)
	}
	return st
}
