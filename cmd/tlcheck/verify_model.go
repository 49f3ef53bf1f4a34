package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/certificates/verify"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/model"
)

// givenSources are the files given to verify, with their paths as given
// (for the messages) and their SHA-256.
func givenSources(inputs []jsonout.Input) []certificates.Source {
	out := make([]certificates.Source, len(inputs))
	for i, in := range inputs {
		out[i] = certificates.Source{Role: in.Role, Name: in.Path, SHA256: in.SHA256}
	}
	return out
}

// printSources prints, for a model directory, the files its certificates
// were made from (one line each), or one line saying that it records none
// and so cannot be tied to a model file.
func printSources(w io.Writer, m *certificates.Manifest) {
	if m == nil || !certificates.IsModelDir(m) {
		return
	}
	if len(m.Sources) == 0 {
		fmt.Fprintf(w, "note: %v; verify --onnx MODEL --input X (or --graph) ties it by the imported graph and input\n", certificates.ErrNoSources)
		return
	}
	for _, s := range m.Sources {
		fmt.Fprintf(w, "made from %s %s, SHA-256 %s\n", s.Role, s.Name, s.SHA256)
	}
}

// verifyModelGiven ties a verified model directory to the model files
// given to verify (issue 26 point 4): the files' SHA-256 digests must be
// the ones the manifest records (when it records them), and — the sound
// half, since the manifest's digests are bound to nothing inside the
// directory — the model must import to the graph and payload every model
// certificate carries (graph_hash) at the input it records. A difference
// is exit 1 with one line naming the file and both values; a model that
// cannot be read is exit 2. On success it prints one line per file.
func verifyModelGiven(files *model.Model, dir string, m *certificates.Manifest, w io.Writer) error {
	if m == nil {
		return nil // the manifest failed: the report says why
	}
	given := givenSources(files.Files)
	err := verify.MatchSources(m, given)
	var sm *verify.SourceMismatch
	switch {
	case errors.As(err, &sm):
		return cli.Failf("verify: %v", err)
	case errors.Is(err, certificates.ErrNoSources):
		fmt.Fprintf(w, "note: %v; tying it by the imported graph and input alone\n", err)
	case err != nil:
		return cli.Failf("verify: %v", err)
	}
	model := &certificates.Model{Graph: files.Graph, Payload: files.Payload, Input: files.Input}
	if err := verify.MatchModel(dir, m, model); err != nil {
		var mm *verify.ModelMismatch
		if errors.As(err, &mm) {
			return cli.Failf("verify: --%s %s: %v", given[0].Role, given[0].Name, err)
		}
		return cli.Usagef("verify: %v", err)
	}
	for _, s := range given {
		fmt.Fprintf(w, "about --%s %s, SHA-256 %s\n", s.Role, s.Name, s.SHA256)
	}
	return nil
}
