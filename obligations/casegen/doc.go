// Package casegen draws the cases the obligations are decided on: local
// instances of one primitive (Generate: attributes, parent shapes and
// exact rational parent values in the primitive's domain, from the
// registry's GenHint or a structural generator), their tangents and
// cotangents (Tangents), interval boxes around them (GenBox), and random
// valid graphs — typed recipes (GenTyped), IR graphs with their payload
// (GenGraph) and the all-primitives "wide" stream (GenWideTyped,
// GenWideGraph) — with the builders that replay a recipe on the eager
// tape and the typed graph (RecordTape, BuildTyped).
//
// The graph generators are constructive, in the manner of NNSmith: each
// step picks a primitive and draws parents and attributes that satisfy
// its shape constraints as the graph grows, so every generated graph is
// well formed by construction (Graph.Check and CheckPayload hold, tested
// over thousands of seeds).
//
// Every choice is drawn through a Source, one value in [0, n) that
// shrinks toward 0, so the generators put the simplest choice first and
// rapid can shrink a failing case; RandSource replays a seeded PCG stream,
// so a case is a pure function of its seed. The draws are part of the
// tool's outputs — certificates and transcripts name cases by seed — so
// changing what a generator draws for a seed changes them.
//
// casegen states no law: the obligations (package obligations) import it,
// never the reverse.
package casegen
