package certificates

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/model"
)

// CheckCases validates certify's --cases: at least 1, at most the cert-cases
// limit.
func CheckCases(cases int) error {
	if cases < 1 {
		return cli.Usagef("--cases must be at least 1, got %d", cases)
	}
	if max := limits.Current().CertCases; cases > max {
		return cli.BadInput(fmt.Errorf("--cases: %w", limits.Exceeded("cert-cases", int64(max), "%d cases per certificate", cases)))
	}
	return nil
}

// CertifyErr returns certify's exit for a failed Certify: bad input (exit 2)
// for an output directory it cannot or will not write, a failed claim
// (exit 1) otherwise.
func CertifyErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) || errors.Is(err, ErrNotEmpty) {
		return cli.Usagef("certify: %v", err)
	}
	return cli.Failf("certify: %v", err)
}

// CertifyModel writes the certificate directory of a user's model, loaded
// as files, into dir (ModelSuite): the local adjointness of every primitive the
// model applies, the composition law on the model at the input (when it is
// exact over the rationals) and a range certificate over the input ± 1/8
// (when the model has range rules); each file carries the IR graph and
// payload inline, so `tlcheck verify DIR` needs neither the model file nor
// the input.
//
// A model that is not exact over the rationals at its input (a batch
// norm's sqrt takes it out of them) has no model_composition certificate;
// model_interval, the interval enclosure of its output, is written in its
// place and a "certified: model_interval in place of model_composition:
// why" line says so. A certificate that does not apply at all is never
// skipped silently: without --partial the model is refused with
// exit 1 before anything is written, naming what would be missing, so no
// directory that looks complete exists; with --partial the certificates
// that apply are written and each missing one is returned ("KIND: why")
// for certify to list.
//
// It returns the manifest written, the suite's notes and the
// certificates that do not apply (with --partial); its errors carry
// certify's exit codes. The progress of the subjects goes to stderr.
func CertifyModel(files *model.Model, dir string, o Options, partial bool, stderr io.Writer) (*Manifest, []string, []string, error) {
	m := &Model{Name: filepath.Base(files.GraphPath), Graph: files.Graph, Payload: files.Payload, Input: files.Input}
	suite, skipped, err := ModelSuite(m, o.Seed)
	if err != nil {
		return nil, nil, nil, files.Err(err)
	}
	if len(skipped) > 0 && !partial {
		return nil, nil, nil, cli.Failf("certify: not certified: %s; nothing written (--partial writes the certificates that apply)", strings.Join(skipped, "; "))
	}
	if o.Ops, err = ModelOps(m); err != nil {
		return nil, nil, nil, files.Err(err)
	}
	if len(o.Ops) == 0 {
		return nil, nil, nil, cli.Usagef("certify: the model applies no registry primitive: nothing to certify")
	}
	o.Sources = modelSources(files.Files)
	prog := cli.NewProgress(stderr, "certify", suite.Subjects(o))
	o.Progress = prog.Step
	man, err := suite.Certify(dir, o)
	prog.Done()
	if limits.IsLimit(err) {
		return nil, nil, nil, files.Err(err) // a budget: bad input, naming the node, as eval
	}
	if err != nil {
		return nil, nil, nil, CertifyErr(err)
	}
	return man, suite.Notes(), skipped, nil
}

// modelSources are the files certify read a model from, as the manifest
// records them (Source: role, base name, SHA-256).
func modelSources(inputs []jsonout.Input) []Source {
	out := make([]Source, len(inputs))
	for i, in := range inputs {
		out[i] = NewSource(in.Role, in.Path, in.SHA256)
	}
	return out
}
