// Package schemas publishes the JSON Schema (draft 2020-12) of every
// document tlcheck prints with --json: schemas/<kind>.vN.json describes
// tlcheck.<kind>.vN (the kinds are jsonout.Kinds(), N jsonout.Version).
// A new version of a format gets a new file; the older ones stay, as
// published. The certificate format's schema lives next to its writer,
// certificates/schema.json.
//
// Each schema is self-contained and closed: every object lists its fields
// (additionalProperties false) and the required ones, so a document with
// an unknown, missing or mistyped field fails validation. The tests of
// cmd/tlcheck validate real outputs of every command against them.
package schemas

import (
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

//go:embed *.json
var files embed.FS

// Lookup returns the schema of the current (highest) version of document
// kind (e.g. "check").
func Lookup(kind string) ([]byte, error) {
	best := 0
	names, _ := fs.Glob(files, kind+".v*.json")
	for _, n := range names {
		v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(n, kind+".v"), ".json"))
		if err == nil && v > best {
			best = v
		}
	}
	return LookupVersion(kind, best)
}

// LookupVersion returns the schema of version v of document kind.
func LookupVersion(kind string, v int) ([]byte, error) {
	data, err := files.ReadFile(fmt.Sprintf("%s.v%d.json", kind, v))
	if err != nil {
		return nil, fmt.Errorf("schemas: no schema for document kind %q", kind)
	}
	return data, nil
}
