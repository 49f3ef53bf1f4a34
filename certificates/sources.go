package certificates

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Tying a model's certificates to the files they are about (issue 26
// point 4).
//
// A model directory (ModelSuite) carries the IR graph and payload inline
// and verifies without the model file, so by itself it says nothing about
// which file it was made from: a model with one weight changed, its graph
// re-hashed, certifies as well as the original. The manifest therefore
// records the SHA-256 of every file certify read the model and its input
// from (Manifest.Sources, in the order certify read them: the model
// (role "onnx", or "graph" then "payload"), then each input in graph-input
// order), and MatchSources compares them with the digests of the files a
// verifier is given (tlcheck verify --onnx MODEL --input X …).
//
// What the match proves: the given files have the SHA-256 digests the
// certificate records; assuming SHA-256 collision resistance they are the
// very files certify read, so the certified graph is the one those bytes
// import to (certify imported it), and the verified claims are about that
// model at that input. Nothing is inferred from names: a source's name is
// only its file's base name, for messages.
//
// The list is written in that fixed order (the inputs' order is
// semantic: input k binds the model's k-th runtime input), so it is not
// sorted; its order is still one per set of files.

// Source roles, as the model flags name the files.
const (
	SourceONNX    = "onnx"
	SourceGraph   = "graph"
	SourcePayload = "payload"
	SourceInput   = "input"
)

// Source is one file a model's certificates were made from: its role, its
// base name (SafeName) and the SHA-256 of its bytes as read.
type Source struct {
	Role   string `json:"role"`
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// NewSource returns the Source of the file at path with the digest
// sha256 (lowercase hex, as Sum writes it).
func NewSource(role, path, sha256 string) Source {
	return Source{Role: role, Name: SafeName(filepath.Base(path)), SHA256: sha256}
}

// checkSources validates a list of sources: known roles, safe names,
// lowercase hex digests, and the order certify writes — one model file
// first (onnx, or graph optionally followed by payload), then inputs.
// field is the JSON path of the list ("sources").
func checkSources(file, field string, l []Source) error {
	if l == nil {
		return nil
	}
	if len(l) == 0 {
		return FieldErr(file, field, "empty: omitted when nothing is recorded")
	}
	for i, s := range l {
		at := fmt.Sprintf("%s[%d]", field, i)
		if err := CheckName(file, at+".name", s.Name); err != nil {
			return err
		}
		if !hexRE.MatchString(s.SHA256) {
			return FieldErr(file, at+".sha256", "%q is not a lowercase hex SHA-256", Truncate(s.SHA256))
		}
		var ok bool
		switch s.Role {
		case SourceONNX, SourceGraph:
			ok = i == 0
		case SourcePayload:
			ok = i == 1 && l[0].Role == SourceGraph
		case SourceInput:
			ok = i > 0
		default:
			return FieldErr(file, at+".role", "%q is not a source role (onnx, graph, payload, input)", Truncate(s.Role))
		}
		if !ok {
			return FieldErr(file, at+".role", "%q out of place: the model file comes first (onnx, or graph then payload), then the inputs", s.Role)
		}
	}
	return nil
}

// ErrNoSources reports a model directory whose manifest records no
// digests (written before they were recorded, or a built-in directory):
// it verifies, but cannot be tied to a model file.
var ErrNoSources = errors.New("the certificate records no model or input digest, so it cannot be tied to a model file (certify it again with this build to record them)")

// IsModelDir says whether m is a model directory's manifest (it lists a
// model kind), the directories Sources tie to a model file.
func IsModelDir(m *Manifest) bool {
	for _, k := range m.Kinds {
		if k == KindModelComposition || k == KindModelRange || k == KindModelInterval {
			return true
		}
	}
	return false
}
