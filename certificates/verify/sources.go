package verify

import (
	"fmt"
	"os"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// SourceMismatch reports a given file that is not the one the certificate
// records: a different digest, a different role, or a file too many or
// too few.
type SourceMismatch struct {
	Given    certificates.Source // the file given (Name holds its path as given); Role "" when none is given at this place
	Recorded certificates.Source // the certificate's source at this place; Role "" when none is recorded
}

func (e *SourceMismatch) Error() string {
	g, r := e.Given, e.Recorded
	switch {
	case r.Role == "":
		return fmt.Sprintf("--%s %s: the certificate records no such file (it was made from fewer inputs): the certificate is not about these files", g.Role, certificates.QuoteName(g.Name))
	case g.Role == "":
		return fmt.Sprintf("the certificate records %s %s (SHA-256 %s), which was not given: give every file certify read, in the same order", r.Role, r.Name, r.SHA256)
	case g.Role != r.Role:
		return fmt.Sprintf("--%s %s: the certificate records %s %s (SHA-256 %s) in its place: the certificate is not about this model", g.Role, certificates.QuoteName(g.Name), r.Role, r.Name, r.SHA256)
	}
	return fmt.Sprintf("--%s %s: SHA-256 %s, but the certificate records %s for %s: the certificate is not about this file", g.Role, certificates.QuoteName(g.Name), g.SHA256, r.SHA256, r.Name)
}

// MatchSources checks that given — the files a verifier was handed, each
// with its role, its path in Name and the SHA-256 of its bytes — are the
// files m records, role for role and digest for digest, in order. It
// returns ErrNoSources when m records none, and a *SourceMismatch at the
// first place they differ.
func MatchSources(m *certificates.Manifest, given []certificates.Source) error {
	if m == nil || len(m.Sources) == 0 {
		return certificates.ErrNoSources
	}
	for i := range max(len(given), len(m.Sources)) {
		var g, r certificates.Source
		if i < len(given) {
			g = given[i]
		}
		if i < len(m.Sources) {
			r = m.Sources[i]
		}
		if g.Role != r.Role || g.SHA256 != r.SHA256 {
			return &SourceMismatch{Given: g, Recorded: r}
		}
	}
	return nil
}

// ModelMismatch reports a model certificate file whose graph or input is
// not the given model's: the sound half of tying a directory to a model
// (the digests of MatchSources live in the manifest, which nothing inside
// the directory binds; the graph and input of each model file are bound
// to the manifest by its SHA-256 and re-derived by Verify).
type ModelMismatch struct {
	File, Field string // the certificate file and field that differ
	Recorded    string // what the file records (a digest or a description)
	Given       string // what the given model gives in its place
}

func (e *ModelMismatch) Error() string {
	return fmt.Sprintf("%s: field %s: the certificate records %s, the given model gives %s: the certificate is not about this model", e.File, e.Field, e.Recorded, e.Given)
}

// MatchModel checks that every model certificate file m lists in dir (a
// directory Verify has verified: every file is bound to m by its SHA-256)
// is about model: its graph_hash is irsem.GraphHash of the model's
// graph and payload, and its input (model_composition) or centre
// (model_range) or input (model_interval) equals the model's input exactly. The first difference is
// a *ModelMismatch; a directory with no model file is an error.
func MatchModel(dir string, m *certificates.Manifest, model *certificates.Model) error {
	hash, err := irsem.GraphHash(model.Graph, certificates.PayloadOrEmpty(model.Payload))
	if err != nil {
		return fmt.Errorf("the given model: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("%s: %s", certificates.QuoteName(dir), certificates.EscapeLine(certificates.StatReason(err)))
	}
	defer root.Close()
	n := 0
	for _, e := range m.Files {
		if e.Path != certificates.ModelCompositionName && e.Path != certificates.ModelRangeName && e.Path != certificates.ModelIntervalName {
			continue
		}
		data, err := certificates.ReadRegular(root, e.Path)
		if err != nil {
			return certificates.FieldErr(e.Path, "", "cannot read: %s", certificates.EscapeLine(certificates.StatReason(err)))
		}
		if certificates.Sum(data) != e.SHA256 {
			return certificates.FieldErr(certificates.ManifestName, "files", "%s does not match its SHA-256: verify the directory first", e.Path)
		}
		var rec string
		var in certificates.Tensor
		field := "input"
		switch e.Path {
		case certificates.ModelCompositionName:
			var f certificates.ModelCompositionFile
			if err := certificates.DecodeStrict(e.Path, data, &f); err != nil {
				return err
			}
			rec, in = f.GraphHash, f.Input
		case certificates.ModelIntervalName:
			var f certificates.ModelIntervalFile
			if err := certificates.DecodeStrict(e.Path, data, &f); err != nil {
				return err
			}
			rec, in = f.GraphHash, f.Input
		default:
			var f certificates.RangeFile
			if err := certificates.DecodeStrict(e.Path, data, &f); err != nil {
				return err
			}
			rec, in, field = f.GraphHash, f.Centre, "centre"
		}
		if rec != hash {
			return &ModelMismatch{File: e.Path, Field: "graph_hash", Recorded: "graph and payload hash " + certificates.Truncate(rec), Given: hash}
		}
		x, err := in.Decode(e.Path, field)
		if err != nil {
			return err
		}
		if !x.Shape.Equal(model.Input.Shape) || !spec.SameTensor(x, model.Input) {
			return &ModelMismatch{File: e.Path, Field: field, Recorded: "an input of SHA-256 " + ratTensorSum(x), Given: "one of SHA-256 " + ratTensorSum(model.Input)}
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s: the directory holds no model certificate (model_composition, model_interval or model_range): it is not about a model", certificates.QuoteName(dir))
	}
	return nil
}

// ratTensorSum names an exact tensor in a message: the SHA-256 of its
// certificate encoding (shape and canonical values).
func ratTensorSum(t spec.Tensor[spec.Rat]) string {
	data, err := certificates.Encode(certificates.RatTensor(t))
	if err != nil {
		return "?"
	}
	return certificates.Sum(data)
}
