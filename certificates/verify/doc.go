// Package verify is the independent checker of tlcheck's certificate
// directories (package certificates: format tlcheck.cert.v3, manifest
// tlcheck.manifest.v2): Dir re-derives every claim of a complete
// directory, Shard of a shard directory, MatchSources and MatchModel tie
// a model directory to the files and the model it was made from.
//
// The verifier re-derives every claim from the recorded inputs alone,
// along a different code path from the producer: inner products are
// recomputed from the registry rules directly (not through the
// obligations package), the JVP side of a composition claim is recomputed
// by forward evaluation over dual numbers (not by the JVP rules), provider
// outputs are re-executed, exact values and bounds recomputed, and range
// traces rebuilt. A recorded result is never trusted: it is only compared
// with what the verifier derived, and the first disagreement is reported
// with the file and the JSON path of the field. Inputs are bound to the
// manifest's seed: the verifier regenerates them and compares. The kinds
// in detail, and what each shares with its producer, are in package
// certificates' doc.
//
// Independence: this package imports package certificates for the format
// (the file types, strict decoding, canonical encoding, hashing, the safe
// alphabet) and calls, of the producers' files, only the code shared on
// purpose: the seeded draws that regenerate recorded inputs, the interval
// evaluation of model_interval, the tape-path VJP, capsule resolution and
// reading a directory's regular files. It calls no producer (no Produce*,
// Certify, typed-graph side, oracle, refine.Check or ranges.Produce);
// TestVerifierIndependent checks this on the source, and a self-test
// plants each kind of violation.
//
// Layout: one file per kind (adjoint.go, composition.go, refinement.go,
// range.go, model.go), dir.go for the directory (manifest, completeness,
// the report), sources.go for tying a model directory to the files it was
// made from, jsondoc.go for verify --json's document.
package verify
