package verify

import (
	"os"
	"path/filepath"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// VerifyDoc is the tlcheck.verify.v1 document of r's verdicts on dir: the
// seed is the manifest's, the inputs the manifest with the SHA-256 of its
// bytes (read again here: the verifier does not expose the bytes it read,
// so a manifest replaced in between is hashed as found now) and then
// given, the model files verify was given.
func (r *Report) VerifyDoc(dir string, given []jsonout.Input) jsonout.VerifyDoc {
	var seed *uint64
	if r.Manifest != nil {
		seed = jsonout.Seed(r.Manifest.Seed)
	}
	var inputs []jsonout.Input
	path := filepath.Join(dir, certificates.ManifestName)
	if data, err := os.ReadFile(path); err == nil {
		inputs = append(inputs, jsonout.Input{Role: "manifest", Path: path, SHA256: jsonout.SHA256(data)})
	}
	inputs = append(inputs, given...)
	doc := jsonout.VerifyDoc{Header: jsonout.NewHeader(jsonout.KindVerify, seed, inputs), Directory: dir, Files: make([]jsonout.VerifyFile, len(r.Files))}
	for i, f := range r.Files {
		vf := jsonout.VerifyFile{Path: f.Path, Kind: f.Kind, Cases: f.Cases, Holds: f.Err == nil}
		if f.Err != nil {
			vf.Error = f.Err.Error()
			doc.Failures++
		}
		doc.Cases += f.Cases
		doc.Files[i] = vf
	}
	doc.Holds = doc.Failures == 0 && len(r.Files) > 0
	return doc
}
