// Package schemas publishes the JSON Schema (draft 2020-12) of every
// document tlcheck prints with --json: schemas/<kind>.v1.json describes
// tlcheck.<kind>.v1 (the kinds are jsonout.Kinds()). The certificate
// format's schema lives next to its writer, certificates/schema.json.
//
// Each schema is self-contained and closed: every object lists its fields
// (additionalProperties false) and the required ones, so a document with
// an unknown, missing or mistyped field fails validation. The tests of
// cmd/tlcheck validate real outputs of every command against them.
package schemas

import (
	"embed"
	"fmt"
)

//go:embed *.v1.json
var files embed.FS

// Lookup returns the schema of document kind (e.g. "check").
func Lookup(kind string) ([]byte, error) {
	data, err := files.ReadFile(kind + ".v1.json")
	if err != nil {
		return nil, fmt.Errorf("schemas: no schema for document kind %q", kind)
	}
	return data, nil
}
