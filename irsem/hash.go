package irsem

import (
	"crypto/sha256"
	"encoding/hex"
)

// GraphHash is the SHA-256 (hex) of a graph's canonical encoding
// (EncodeGraph: torchlean.ir.v1, or tlcheck.ir.v1 for a graph with a
// superset tag) followed by its payload's canonical tlcheck.payload.v1
// encoding (EncodePayload; a nil payload encodes as the empty one), so
// that a certificate can name the graph it was checked on.
func GraphHash(g *Graph, p *Payload) (string, error) {
	gb, err := EncodeGraph(g)
	if err != nil {
		return "", err
	}
	if p == nil {
		p = &Payload{}
	}
	pb, err := EncodePayload(p)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(gb)
	h.Write(pb)
	return hex.EncodeToString(h.Sum(nil)), nil
}
