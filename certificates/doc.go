// Package certificates writes what tlcheck checked as deterministic,
// versioned JSON (format tlcheck.cert.v1) and verifies it independently.
//
// A certificate directory holds a manifest (manifest.json: tool version,
// registry hash, seed, and the SHA-256 of every certificate file) and one
// file per certified subject: adjointness/<op>.json, composition.json,
// refinement/<provider>.<op>.json, range/<name>.json. Every file records
// the inputs of each case together with the claimed results.
//
// The verifier re-derives every claim from the recorded inputs alone,
// along a different code path from the producer: inner products are
// recomputed from the registry rules directly (not through the
// obligations package), the JVP side of a composition claim is recomputed
// by forward evaluation over dual numbers (not by the JVP rules), provider
// outputs are re-executed, exact values and bounds recomputed, and range
// traces rebuilt. A recorded result is never trusted: it is only compared
// with what the verifier derived, and the first disagreement is reported
// with the file and the JSON path of the field.
//
// Every name and string in a certificate is restricted to a safe alphabet
// (letters, digits, '_', '.', ':', '-'; rationals as -?digits(/digits)?;
// bit patterns as 0x and lowercase hex), checked when writing and when
// reading, so that no consumer — the Lean project, a shell — can be
// injected through a certificate.
package certificates
