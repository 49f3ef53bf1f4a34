package irsem

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/tlcheck/tlcheck/limits"
)

// prescanNodes counts the elements of the root object's "nodes" array
// token by token, without building any value, and returns a limits error
// as soon as there are more than max: a graph of 2^20 + 1 nodes is
// refused after reading its first max + 1 nodes, in memory independent
// of the document's length. Anything else — a syntax error, a missing or
// misplaced "nodes" — is left to the strict decoder, which reports it
// with its place; prescanNodes then returns nil.
func prescanNodes(r io.Reader, max int) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	depth := 0         // nesting depth after the token
	expectKey := false // at depth 1, the next token is a member name
	key := ""          // the root member whose value is being read
	count := 0         // elements of the root's "nodes" array so far
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		d, isDelim := tok.(json.Delim)
		switch {
		case isDelim && (d == '{' || d == '['):
			if depth == 2 && key == "nodes" {
				count++
			}
			depth++
			if depth == 1 {
				if d != '{' {
					return nil
				}
				expectKey = true
			}
		case isDelim:
			depth--
			if depth == 0 {
				return nil
			}
			if depth == 1 {
				if key == "nodes" {
					return nil // the nodes array ended within the limit
				}
				expectKey = true
			}
		case depth == 1 && expectKey:
			key, _ = tok.(string)
			expectKey = false
		case depth == 1:
			expectKey = true // a scalar member value
		case depth == 2 && key == "nodes":
			count++ // a scalar where a node belongs counts as one
		}
		if count > max {
			return &Error{Node: -1, Field: "nodes", Elem: -1, Err: limits.Exceeded("nodes", int64(max), "the graph has %d or more nodes", max+1)}
		}
	}
}

// readGraphBytes reads a graph document from r (at most MaxDocumentBytes),
// refusing it as soon as prescanNodes sees more nodes than the limit.
func readGraphBytes(r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	lr := io.LimitReader(r, MaxDocumentBytes+1)
	if err := prescanNodes(io.TeeReader(lr, &buf), nodeLimit()); err != nil {
		return nil, err
	}
	if _, err := io.Copy(&buf, lr); err != nil {
		return nil, err
	}
	if buf.Len() > MaxDocumentBytes {
		return nil, docErrf("", "document is larger than %d bytes", MaxDocumentBytes)
	}
	return buf.Bytes(), nil
}
