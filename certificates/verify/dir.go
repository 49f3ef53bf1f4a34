package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/par"
	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/internal/version"
	"github.com/tlcheck/tlcheck/limits"
)

// FileResult is the verification of one certificate file.
type FileResult struct {
	Path  string
	Kind  string
	Cases int
	Err   error
}

// Report is the outcome of verifying a directory.
type Report struct {
	Manifest *certificates.Manifest
	Files    []FileResult
}

// Failures lists the files that did not verify.
func (r *Report) Failures() []FileResult {
	var out []FileResult
	for _, f := range r.Files {
		if f.Err != nil {
			out = append(out, f)
		}
	}
	return out
}

// Cases counts the verified cases per kind.
func (r *Report) Cases() map[string]int {
	m := map[string]int{}
	for _, f := range r.Files {
		if f.Err == nil {
			m[f.Kind] += f.Cases
		}
	}
	return m
}

// FileCounts counts r per file: a file with several failing checks (the
// manifest fails once per out-of-order entry) is one failing file. The
// files are the manifest and every distinct path the report names (the
// listed certificates and any unlisted file).
func (r *Report) FileCounts() (failed, files int) {
	bad := map[string]bool{}
	seen := map[string]bool{certificates.ManifestName: true}
	for _, f := range r.Files {
		seen[f.Path] = true
		if f.Err != nil {
			bad[f.Path] = true
		}
	}
	return len(bad), len(seen)
}

// seedMismatch marks a failure in which a file's recorded inputs are not
// those the manifest's seed generates.
type seedMismatch struct{ err error }

func (e *seedMismatch) Error() string { return e.err.Error() }

func (e *seedMismatch) Unwrap() error { return e.err }

// seedErr marks err as a seed mismatch (nil stays nil).
func seedErr(err error) error {
	if err == nil {
		return nil
	}
	return &seedMismatch{err}
}

// verifier re-derives every claim of one certificate file of its kind and
// returns the number of cases it checked.
type verifier func(file string, data []byte, m *certificates.Manifest) (int, error)

// checker verifies directories of the kinds a suite knows
// (certificates.Suite.Knows), with the suite's rules (Ops) and providers
// (ProviderSet).
type checker struct {
	s         *certificates.Suite
	verifiers map[string]verifier
}

// newChecker returns the checker of the kinds s knows.
func newChecker(s *certificates.Suite) *checker {
	ops := s.Ops()
	all := map[string]verifier{
		certificates.KindAdjointness: func(file string, data []byte, m *certificates.Manifest) (int, error) {
			var f certificates.AdjointnessFile
			if err := certificates.DecodeStrict(file, data, &f); err != nil {
				return 0, err
			}
			return verifyAdjointness(ops, file, &f, m)
		},
		certificates.KindComposition:      verifyCompositionFile,
		certificates.KindRefinement:       refinementEnv{providers: s.ProviderSet()}.verifyFile,
		certificates.KindRange:            verifyRangeFile,
		certificates.KindModelComposition: verifyModelCompositionFile,
		certificates.KindModelRange:       verifyModelRangeFile,
		certificates.KindModelInterval:    verifyModelIntervalFile,
	}
	c := &checker{s: s, verifiers: map[string]verifier{}}
	for kind, v := range all {
		if s.Knows(kind) {
			c.verifiers[kind] = v
		}
	}
	return c
}

// Dir re-derives every certificate in dir, a directory the suite s made
// (certificates.Suite.Certify). It returns an error only
// when dir cannot be read as a certificate directory at all (no manifest,
// not a directory) or certifies primitives s does not know under another
// registry hash (UnknownOpsError: a user's primitive's directory, which
// check.Verify verifies with the primitive's rules); every certificate-level failure — a tampered,
// truncated, reordered, unlisted or missing file, a file that is not a
// regular file, an unknown version, a registry hash that does not match
// this build — is reported per file in the Report. Only regular files
// inside dir are read (ReadRegular); names that are not safe certificate
// paths are reported quoted (QuoteName).
//
// Completeness: the manifest states its seed, cases, kinds, ops and
// providers; each kind's Expect function derives the complete file set
// from them, and every expected path that is not listed fails (under that
// path), as does every listed file that is not expected. Deleting a file
// together with its manifest entry therefore fails.
//
// Seed: when every file that records seed-bound inputs disagrees with the
// manifest's seed while matching its manifest hash, the failure is also
// reported against manifest.json's seed — the one edit that explains
// them all. (Where only some files disagree they are reported alone.)
func Dir(s *certificates.Suite, dir string) (*Report, error) {
	return newChecker(s).verify(dir, nil)
}

// verify is Dir (sh nil) or Shard (sh the shard dir must record).
func (c *checker) verify(dir string, sh *certificates.Shard) (*Report, error) {
	root, mdata, err := openCertDir(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	rep := &Report{}
	m, ferr := decodeManifest(mdata, sh)
	if ferr == nil {
		rep.Manifest = m
		ferr, err = c.checkManifestHead(dir, m)
		if err != nil {
			return nil, err
		}
	}
	if ferr != nil {
		rep.fail(certificates.ManifestName, "manifest", ferr)
		return rep, nil
	}
	if err := c.s.CheckManifestOptions(m); err != nil {
		rep.fail(certificates.ManifestName, "manifest", err)
	}
	listed := map[string]bool{}
	for _, e := range m.Files {
		if certificates.SafePath(e.Path) {
			listed[e.Path] = true
		}
	}
	// Files are verified on a worker pool; each entry's results are
	// appended in manifest order, so the report is the same for any
	// GOMAXPROCS.
	perEntry := par.Map(len(m.Files), 0, func(i int) entryResult {
		return c.verifyEntry(root, m, i)
	}, nil)
	if err := seedEdited(m, perEntry); err != nil {
		rep.fail(certificates.ManifestName, "manifest", err)
	}
	missing, extra := c.s.Completeness(m, sh)
	for _, i := range extra {
		// (Unsafe paths and unknown kinds fail in verifyEntry already.)
		if _, known := c.verifiers[m.Files[i].Kind]; known && certificates.SafePath(m.Files[i].Path) {
			rep.fail(certificates.ManifestName, "manifest", certificates.FieldErr(certificates.ManifestName, fmt.Sprintf("files[%d].path", i), "%s is not part of a complete directory for the manifest's kinds, ops and providers", m.Files[i].Path))
		}
	}
	for _, e := range missing {
		rep.fail(e.Path, e.Kind, certificates.FieldErr(certificates.ManifestName, "files",
			"%s is missing: a complete directory for the manifest's seed, cases, kinds, ops and providers lists it", e.Path))
	}
	for _, r := range perEntry {
		rep.Files = append(rep.Files, r.results...)
	}
	rep.Files = append(rep.Files, unlisted(dir, listed)...)
	if len(m.Files) == 0 && (sh == nil || len(c.s.ExpectedFiles(m, *sh)) > 0) {
		rep.fail(certificates.ManifestName, "manifest", certificates.FieldErr(certificates.ManifestName, "files", "no certificate files"))
	}
	return rep, nil
}

// fail appends a failed file result to r.
func (r *Report) fail(path, kind string, err error) {
	r.Files = append(r.Files, FileResult{Path: path, Kind: kind, Err: err})
}

// openCertDir opens dir, which must be a directory, and reads its
// manifest's bytes; the error says why dir is no certificate directory.
func openCertDir(dir string) (*os.Root, []byte, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s", certificates.QuoteName(dir), certificates.EscapeLine(certificates.StatReason(err)))
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory", certificates.QuoteName(dir))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s", certificates.QuoteName(dir), certificates.EscapeLine(certificates.StatReason(err)))
	}
	mdata, err := certificates.ReadRegular(root, certificates.ManifestName)
	if err != nil {
		root.Close()
		return nil, nil, fmt.Errorf("%w in %s: %s", certificates.ErrNoManifest, certificates.QuoteName(dir), certificates.EscapeLine(certificates.StatReason(err)))
	}
	return root, mdata, nil
}

// decodeManifest reads the manifest's bytes strictly, in the format the
// directory must have: a complete directory's manifest (sh nil) or a shard
// manifest recording sh. The error is the manifest's failure.
func decodeManifest(mdata []byte, sh *certificates.Shard) (*certificates.Manifest, error) {
	var probe struct {
		Format *string `json:"format"`
	}
	if err := certificates.UnmarshalLoose(certificates.ManifestName, mdata, &probe); err != nil {
		return nil, err
	}
	switch {
	case probe.Format == nil:
		return nil, certificates.FieldErr(certificates.ManifestName, "format", "missing")
	case sh == nil && *probe.Format == certificates.ShardManifestFormat:
		return nil, certificates.FieldErr(certificates.ManifestName, "format", "%s: this is a shard directory, not a complete one: verify --shard I/N DIR verifies it, tlcheck merge OUT SHARD_DIR… joins the shards", certificates.ShardManifestFormat)
	case sh != nil && *probe.Format != certificates.ShardManifestFormat:
		return nil, certificates.FieldErr(certificates.ManifestName, "format", "%q: verify --shard reads a shard directory (%s)", certificates.Truncate(*probe.Format), certificates.ShardManifestFormat)
	case *probe.Format == certificates.PreviousManifestFormat:
		return nil, certificates.FieldErr(certificates.ManifestName, "format", "%s is the previous manifest format, which did not state what a complete directory holds; this build reads only %s: certify again with this build", certificates.PreviousManifestFormat, certificates.ManifestFormat)
	case sh == nil && *probe.Format != certificates.ManifestFormat:
		return nil, certificates.FieldErr(certificates.ManifestName, "format", "unknown manifest version %q (this build reads %s)", certificates.Truncate(*probe.Format), certificates.ManifestFormat)
	}
	if sh == nil {
		var m certificates.Manifest
		if err := certificates.DecodeStrict(certificates.ManifestName, mdata, &m); err != nil {
			return nil, err
		}
		return &m, nil
	}
	var sm certificates.ShardManifest
	if err := certificates.DecodeStrict(certificates.ManifestName, mdata, &sm); err != nil {
		return nil, err
	}
	if sm.Shard != *sh {
		return nil, certificates.FieldErr(certificates.ManifestName, "shard", "the directory records shard %s, not %s", sm.Shard, *sh)
	}
	return sm.Manifest(), nil
}

// checkManifestHead checks the manifest's tool version, case count and
// registry hash against this build: failure is the manifest's failure,
// err an UnknownOpsError (a user's primitive's directory, of which nothing
// can be recomputed here, so that it is not verified at all).
func (c *checker) checkManifestHead(dir string, m *certificates.Manifest) (failure, err error) {
	s := c.s
	switch {
	case m.ToolVersion != version.Version:
		return certificates.FieldErr(certificates.ManifestName, "tool_version", "certificates written by tlcheck %q; this is %s", certificates.Truncate(m.ToolVersion), version.Version), nil
	case m.Cases > limits.Current().CertCases:
		return certificates.FieldErr(certificates.ManifestName, "cases", "%v", limits.Exceeded("cert-cases", int64(limits.Current().CertCases), "%d cases per certificate", m.Cases)), nil
	case m.RegistryHash != s.Ops().Hash(m.Ops):
		if unknown := s.UnknownOps(m.Ops); len(unknown) > 0 {
			return nil, &certificates.UnknownOpsError{Dir: dir, Ops: unknown}
		}
		return certificates.FieldErr(certificates.ManifestName, "registry_hash", "certificates were made with registry %s; this build's registry is %s", certificates.Truncate(m.RegistryHash), s.Ops().Hash(m.Ops)), nil
	}
	return nil, nil
}

// seedEdited reports the manifest's seed when every file that records
// seed-bound inputs disagrees with it while matching its manifest hash.
func seedEdited(m *certificates.Manifest, perEntry []entryResult) error {
	seedBound, seedMismatched := 0, 0
	for _, r := range perEntry {
		if r.seedBound {
			seedBound++
			if r.seedMismatch {
				seedMismatched++
			}
		}
	}
	if seedBound > 0 && seedMismatched == seedBound {
		return certificates.FieldErr(certificates.ManifestName, "seed", "%d: none of the %d certificate files records the inputs this seed generates, though each matches its manifest hash: the manifest's seed was edited", m.Seed, seedBound)
	}
	return nil
}

// unlisted walks dir and reports every file in it that the manifest does
// not list (listed), and every one that is not a regular file.
func unlisted(dir string, listed map[string]bool) []FileResult {
	rep := &Report{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if err != nil {
			// An unreadable subdirectory could hide unlisted files.
			rep.fail(certificates.QuoteName(rel), "unlisted", certificates.FieldErr(certificates.QuoteName(rel), "", "cannot list: %s", certificates.EscapeLine(certificates.StatReason(err))))
			return nil
		}
		switch {
		case rel == ".":
		case d.IsDir():
		case !d.Type().IsRegular() && !listed[rel] && rel != certificates.ManifestName: // (a listed one fails in verifyEntry)
			rep.fail(certificates.QuoteName(rel), "unlisted", certificates.FieldErr(certificates.QuoteName(rel), "", "%s, not a regular file: a certificate directory holds only regular files", safeio.Describe(d.Type())))
		case rel != certificates.ManifestName && !listed[rel]:
			rep.fail(certificates.QuoteName(rel), "unlisted", certificates.FieldErr(certificates.QuoteName(rel), "", "file is not listed in the manifest"))
		}
		return nil
	})
	return rep.Files
}

// entryResult is the verification of one manifest entry: its results in
// the order the checks ran, and whether its file records seed-bound
// inputs that disagree with the manifest's seed although its hash
// matches.
type entryResult struct {
	results                 []FileResult
	seedBound, seedMismatch bool
}

// verifyEntry checks manifest entry i and verifies its file.
func (c *checker) verifyEntry(root *os.Root, m *certificates.Manifest, i int) entryResult {
	e := m.Files[i]
	field := fmt.Sprintf("files[%d]", i)
	var out entryResult
	fail := func(path, kind string, err error) entryResult {
		out.results = append(out.results, FileResult{Path: path, Kind: kind, Err: err})
		return out
	}
	if !certificates.SafePath(e.Path) {
		return fail(certificates.ManifestName, "manifest", certificates.FieldErr(certificates.ManifestName, field+".path", "%s is not a safe certificate path", certificates.QuoteName(certificates.Truncate(e.Path))))
	}
	if i > 0 && m.Files[i-1].Path >= e.Path {
		fail(certificates.ManifestName, "manifest", certificates.FieldErr(certificates.ManifestName, field+".path", "files are not in sorted order (reordered manifest)"))
	}
	v, ok := c.verifiers[e.Kind]
	if !ok {
		return fail(e.Path, certificates.QuoteName(e.Kind), certificates.FieldErr(certificates.ManifestName, field+".kind", "unknown certificate kind %q", certificates.Truncate(e.Kind)))
	}
	if !strings.HasPrefix(e.Path, e.Kind) {
		return fail(e.Path, e.Kind, certificates.FieldErr(certificates.ManifestName, field+".path", "path does not match kind %q", e.Kind))
	}
	data, err := certificates.ReadRegular(root, e.Path)
	if err != nil {
		return fail(e.Path, e.Kind, certificates.FieldErr(e.Path, "", "cannot read: %s", certificates.EscapeLine(certificates.StatReason(err))))
	}
	n, err := verifyData(v, e.Path, e.Kind, data, m)
	hashOK := certificates.Sum(data) == e.SHA256
	var sm *seedMismatch
	out.seedBound = hashOK && (err == nil || errors.As(err, &sm))
	out.seedMismatch = out.seedBound && err != nil
	if err == nil && !hashOK {
		err = certificates.FieldErr(certificates.ManifestName, field+".sha256", "%s does not match the SHA-256 of %s (%s): the file was edited", certificates.Truncate(e.SHA256), e.Path, certificates.Sum(data))
	}
	out.results = append(out.results, FileResult{Path: e.Path, Kind: e.Kind, Cases: n, Err: err})
	return out
}

// verifyData checks a certificate file's header (format and kind) and
// runs its kind's verifier v on it.
func verifyData(v verifier, path, kind string, data []byte, m *certificates.Manifest) (int, error) {
	var h certificates.Header
	if err := decodeHeader(path, data, &h); err != nil {
		return 0, err
	}
	switch h.Format {
	case certificates.PreviousFormat:
		return 0, certificates.FieldErr(path, "format", "%s is the previous certificate format, whose refinement files do not record the rounding bound that decided; this build reads only %s: certify again with this build", certificates.PreviousFormat, certificates.Format)
	case certificates.FirstFormat:
		return 0, certificates.FieldErr(path, "format", "%s is an earlier certificate format, whose cases were seeded differently; this build reads only %s: certify again with this build", certificates.FirstFormat, certificates.Format)
	}
	if h.Format != certificates.Format {
		return 0, certificates.FieldErr(path, "format", "unknown certificate version %q (this build reads %s)", certificates.Truncate(h.Format), certificates.Format)
	}
	if h.Kind != kind {
		return 0, certificates.FieldErr(path, "kind", "%q, but the manifest lists %q", certificates.Truncate(h.Kind), kind)
	}
	return v(path, data, m)
}

// decodeHeader reads the format and kind of a certificate file, tolerating
// the kind-specific fields.
func decodeHeader(file string, data []byte, h *certificates.Header) error {
	var probe struct {
		Format *string `json:"format"`
		Kind   *string `json:"kind"`
	}
	if err := certificates.UnmarshalLoose(file, data, &probe); err != nil {
		return err
	}
	if probe.Format == nil {
		return certificates.FieldErr(file, "format", "missing")
	}
	if probe.Kind == nil {
		return certificates.FieldErr(file, "kind", "missing")
	}
	h.Format, h.Kind = *probe.Format, *probe.Kind
	return nil
}

// Shard re-derives every claim of the shard directory dir, which
// must record the shard sh: as Dir, with completeness restricted to
// the shard's part of the partition (every expected file of shard sh
// listed, no other).
func Shard(s *certificates.Suite, dir string, sh certificates.Shard) (*Report, error) {
	if err := sh.Check(); err != nil {
		return nil, err
	}
	return newChecker(s).verify(dir, &sh)
}

// Verdict returns verify's verdict on r: nil without failures; else exit 1
// naming the first — unless re-deriving a claim exceeded a limit
// (limits.IsLimit), which is bad input, exit 2, naming that one, as the
// limits doc says of every limit (certify refuses the same input with
// the same budgets).
func (r *Report) Verdict() error {
	f := r.Failures()
	if len(f) == 0 {
		return nil
	}
	for _, fr := range f {
		if limits.IsLimit(fr.Err) {
			return cli.BadInput(fmt.Errorf("verify: %w", fr.Err)) // a FieldError names the file
		}
	}
	failed, files := r.FileCounts()
	return cli.Failf("verify: %d of %d files %s; first: %v", failed, files, cli.Agree(failed, "fails", "fail"), f[0].Err)
}
