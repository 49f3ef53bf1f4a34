package certificates

import (
	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// CertifyDoc is the tlcheck.certify.v1 document of the files m lists,
// written to dir, with the SHA-256 of manifest, the manifest's bytes as
// written; inputs, for a model, are the files it was made from.
func (m *Manifest) CertifyDoc(dir string, manifest []byte, inputs []jsonout.Input) jsonout.CertifyDoc {
	doc := jsonout.CertifyDoc{Header: jsonout.NewHeader(jsonout.KindCertify, jsonout.Seed(m.Seed), inputs), Directory: dir, Cases: m.Cases,
		ManifestSHA256: jsonout.SHA256(manifest), Files: make([]jsonout.CertifyFile, len(m.Files))}
	for i, f := range m.Files {
		doc.Files[i] = jsonout.CertifyFile{Path: f.Path, Kind: f.Kind, SHA256: f.SHA256}
	}
	return doc
}
