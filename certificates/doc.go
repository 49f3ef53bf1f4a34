// Package certificates writes what tlcheck checked as deterministic,
// versioned JSON (format tlcheck.cert.v3) and verifies it independently.
//
// A certificate directory holds a manifest (manifest.json: tool version,
// registry hash, seed, cases, kinds, ops, providers, and the SHA-256 of
// every certificate file) and one
// file per certified subject: adjointness/<op>.json, composition.json,
// refinement/<provider>.<op>.json, range/<name>.json (for a user's model:
// model_composition.json or model_interval.json, model_range.json). Every file records
// the inputs of each case together with the claimed results.
//
// The independent verifier is package certificates/verify (verify.Dir,
// verify.Shard): it re-derives every claim from the recorded inputs alone,
// along a different code path from the producers here, and imports this
// package only for the format — the file types, their strict decoding and
// canonical encoding, hashing and the safe alphabet (format.go,
// tensor.go) — and for the shared code its doc names (the seeded draws
// that regenerate recorded inputs, above all).
//
// Layout: the format is in format.go and tensor.go, and each kind's file
// type beside its producer in the files named by kind (adjoint.go,
// composition.go, refinement.go, rangecert.go, model.go,
// interval_model.go); the directory writer and the Suite (what a complete
// directory holds: Expect, Completeness, CheckManifestOptions) are in
// dir.go, sources.go records the files a model directory was made from.
// What certify's command line configures is here too: flags.go parses
// --providers, shardenv.go chooses the shard (--shard or the batch
// engines' variables), modelrun.go certifies a user's model.
//
// Seeding: every case is drawn from spec.CaseSeed(seed, label, i), the
// seed function tlcheck check uses, with label the primitive's name for
// adjointness (so case i of adjointness/OP.json is case i of tlcheck check
// --ops OP --case I: same instance, same tangents), "composition" and
// "composition.tangents" for the composition graphs and their tangents,
// "range.NAME" for a range file's sample points, and refine's
// "refine/OP" for refinement inputs. Format v2 introduced this; v1 files
// (seeded otherwise) are rejected as a foreign version.
//
// Parallelism: Certify produces files, and verify.Dir verifies them, on a
// worker pool of GOMAXPROCS goroutines (internal/par). Each file is a
// function of the options alone, the manifest lists files sorted by path
// and the report keeps manifest order, so directories and reports are
// byte-identical for any GOMAXPROCS.
//
// The kinds in detail:
//
//   - composition: seeded exact IR graphs (casegen.GraphSeed) with
//     their payload inline; the producer differentiates through irgrad's
//     typed graph, the verifier evaluates the graph over
//     spec.Dual[spec.Rat] (a stop-gradient node drops the tangent) and runs
//     the VJP along irgrad's tape path.
//   - refinement: refine.Check per (provider, op); the verifier re-executes
//     the provider, recomputes exact values and Σ|terms| with the registry's
//     forward rules, the bound γ_g·Σ|terms| + p·2^-149 with its own γ_g =
//     g/(2^24 − g), errors and ratios, and replays binary32 for fixed-left
//     capsules. Only the class and overflow rules (NaN, ∞ and overflow
//     elements) are re-derived with refine.Recheck, code the producer
//     shares. The file records the rounding bound its bound and overflow
//     rules decide with (RoundingBound, format v3): the classic bound, in
//     binary32, profile ieee, 0 ulps — one primitive on binary32 data,
//     whose first-order bound is its classic one (package refine, "The
//     first-order bound"); the verifier derives the four fields anew and
//     requires them. No other kind rests on an a-priori rounding bound:
//     adjointness and composition are exact (or interval enclosures of
//     exact values), model_interval is an interval evaluation of the exact
//     value, and a range trace follows the one binary32 order operation by
//     operation (package ranges), so they record none.
//   - range: the shipped examples (embedded) over the box input ± 1/8,
//     ranges.Produce under checked_cpu; the verifier re-plans, rebuilds
//     and compares the trace, runs ranges.CheckWith (binary32, kernel and
//     exact replays) and checks exact values at the centre and extreme
//     corners against the enclosures with its own arithmetic.
//   - model_composition and model_range: a user's model (certify --onnx
//     or --graph with --input; ModelSuite) instead of the built-in
//     subjects — the composition law at the model's own input (seeded
//     tangents and cotangents, both sides as for composition; written only
//     where the model is exact over Rat) and a range certificate over the
//     input ± 1/8 (for a model without exact rational values the verifier's
//     own containment check uses the Interval enclosure at each point).
//     The graph and payload are inline and hashed, so verify needs neither
//     the ONNX file nor the input: it binds each file to its own documents
//     instead of a shipped example, and the manifest lists the adjointness
//     of the primitives the model applies beside them.
//   - model_interval: in place of model_composition for a model not exact
//     over Rat at its input, the enclosure of every output element, the
//     model evaluated over spec.Interval; the claim, the enclosure theorem
//     and its proof, and why verify requires the recorded enclosure to
//     contain and equal the recomputed one, are at KindModelInterval.
//
// A user's own primitive (package check: check.Op and check.Find with
// Options.CertDir) is certified as a built-in one is: Suite.AddOps adds
// it to the table the adjointness producer and verifier take rules from
// (the reference registry otherwise), the manifest's registry_hash is
// spec.RegistryHashWith over the facts of the user's primitives it
// certifies, and check.Verify re-derives the directory through the
// verifier (package verify). Find's cases are seeded (spec.CaseSeed(seed, NAME, i)) and
// regenerated with the primitive's own generator; rapid's cases (check.Op)
// are not, and the file says so ("draw": "recorded", never allowed for a
// built-in primitive): its claims are recomputed from the recorded inputs
// alone. A verifier that does not know a certified primitive, under a
// registry hash other than its own, refuses the directory
// (UnknownOpsError) instead of reporting claims it cannot recompute.
//
// One reading: a certificate file or manifest is accepted only in the
// exact bytes the writer gives its value (DecodeStrict: strictjson's
// reader — unknown, case-variant and duplicate keys, missing or null
// required fields — then a byte comparison with the re-encoding), with
// every rational in its canonical spelling and every adjointness case
// carrying exactly its oracle's claims; so tlcheck, jq, Python and Lean
// read the same claims. The manifest (tlcheck.manifest.v2) states its
// kinds, ops and providers — each list sorted bytewise, whatever order the
// options gave, and refused out of order — from which Suite.Expect
// functions derive the complete file set; a missing or uncalled-for file
// fails. A model directory's manifest also records its sources, the
// SHA-256 of the model and input files certify read (sources.go;
// MatchSources compares them with given files, MatchModel the graph and
// input the given model imports to with every model certificate's). Only regular
// files inside the directory are read (no symbolic links, FIFOs or
// devices; 64 MiB at most), and Certify never writes into a non-empty
// directory unless Options.Overwrite says to empty it. A killed run's
// temporary siblings are removed by the next run only when provably
// dead and holding only this tool's files (stale.go).
//
// Sharding (shard.go): a work unit is one certificate file, named by its
// path; unit u belongs to shard ShardOf(u, N) = BE64(SHA-256(u)[0:8]) mod
// N. Certify with Options.Shard = I/N produces only the files of shard I
// and a shard manifest (tlcheck.shard.v1: the manifest's options plus the
// shard), checking that it wrote exactly shard I's part of the complete
// set; verify.Shard verifies such a directory with completeness restricted
// to that part. Merge joins shards 0 … N−1 into a directory byte-identical
// to the unsharded run's. The argument: the complete file set is a
// function of the options (Expect); ShardOf is a function of the path and
// N alone, so the N parts are disjoint and their union is the complete set
// when every shard lists exactly its part with the same options and N and
// each index occurs once (Merge checks all three); each file is a function
// of the options alone (not of which other files a run produces: every
// case is drawn from spec.CaseSeed by label and index), so the shard's
// bytes are the unsharded run's, which Merge binds by SHA-256; and the
// merged manifest is the value Certify encodes — the same options, the
// union sorted by path — so its bytes are Certify's too.
//
// Every name and string in a certificate is restricted to a safe alphabet
// (letters, digits, '_', '.', ':', '-'; rationals as -?digits(/digits)?;
// bit patterns as 0x and lowercase hex), checked when writing and when
// reading, so that no consumer — the Lean project, a shell — can be
// injected through a certificate.
package certificates
