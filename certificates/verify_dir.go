package certificates

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
	Manifest *Manifest
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
	seen := map[string]bool{ManifestName: true}
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

// Verify re-derives every certificate in dir. It returns an error only
// when dir cannot be read as a certificate directory at all (no manifest,
// not a directory) or certifies primitives s does not know under another
// registry hash (UnknownOpsError: a user's primitive's directory, which
// check.Verify verifies with the primitive's rules); every certificate-level failure — a tampered,
// truncated, reordered, unlisted or missing file, a file that is not a
// regular file, an unknown version, a registry hash that does not match
// this build — is reported per file in the Report. Only regular files
// inside dir are read (readRegular); names that are not safe certificate
// paths are reported quoted (quoteName).
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
func (s *Suite) Verify(dir string) (*Report, error) {
	return s.verify(dir, nil)
}

// verify is Verify (sh nil) or VerifyShard (sh the shard dir must record).
func (s *Suite) verify(dir string, sh *Shard) (*Report, error) {
	root, mdata, err := openCertDir(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	rep := &Report{}
	m, ferr := decodeManifest(mdata, sh)
	if ferr == nil {
		rep.Manifest = m
		ferr, err = s.checkManifestHead(dir, m)
		if err != nil {
			return nil, err
		}
	}
	if ferr != nil {
		rep.fail(ManifestName, "manifest", ferr)
		return rep, nil
	}
	if err := s.checkManifestOptions(m); err != nil {
		rep.fail(ManifestName, "manifest", err)
	}
	listed := map[string]bool{}
	for _, e := range m.Files {
		if pathRE.MatchString(e.Path) {
			listed[e.Path] = true
		}
	}
	// Files are verified on a worker pool; each entry's results are
	// appended in manifest order, so the report is the same for any
	// GOMAXPROCS.
	perEntry := par.Map(len(m.Files), 0, func(i int) entryResult {
		return s.verifyEntry(root, m, i)
	}, nil)
	if err := seedEdited(m, perEntry); err != nil {
		rep.fail(ManifestName, "manifest", err)
	}
	missing, extra := s.completeness(m, sh)
	for _, i := range extra {
		// (Unsafe paths and unknown kinds fail in verifyEntry already.)
		if _, known := s.verifiers[m.Files[i].Kind]; known && pathRE.MatchString(m.Files[i].Path) {
			rep.fail(ManifestName, "manifest", fieldErr(ManifestName, fmt.Sprintf("files[%d].path", i), "%s is not part of a complete directory for the manifest's kinds, ops and providers", m.Files[i].Path))
		}
	}
	rep.Files = append(rep.Files, missing...)
	for _, r := range perEntry {
		rep.Files = append(rep.Files, r.results...)
	}
	rep.Files = append(rep.Files, unlisted(dir, listed)...)
	if len(m.Files) == 0 && (sh == nil || len(s.expectedFiles(m, *sh)) > 0) {
		rep.fail(ManifestName, "manifest", fieldErr(ManifestName, "files", "no certificate files"))
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
		return nil, nil, fmt.Errorf("%s: %s", quoteName(dir), escapeLine(statReason(err)))
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory", quoteName(dir))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s", quoteName(dir), escapeLine(statReason(err)))
	}
	mdata, err := readRegular(root, ManifestName)
	if err != nil {
		root.Close()
		return nil, nil, fmt.Errorf("%w in %s: %s", ErrNoManifest, quoteName(dir), escapeLine(statReason(err)))
	}
	return root, mdata, nil
}

// decodeManifest reads the manifest's bytes strictly, in the format the
// directory must have: a complete directory's manifest (sh nil) or a shard
// manifest recording sh. The error is the manifest's failure.
func decodeManifest(mdata []byte, sh *Shard) (*Manifest, error) {
	var probe struct {
		Format *string `json:"format"`
	}
	if err := jsonUnmarshalLoose(ManifestName, mdata, &probe); err != nil {
		return nil, err
	}
	switch {
	case probe.Format == nil:
		return nil, fieldErr(ManifestName, "format", "missing")
	case sh == nil && *probe.Format == ShardManifestFormat:
		return nil, fieldErr(ManifestName, "format", "%s: this is a shard directory, not a complete one: verify --shard I/N DIR verifies it, tlcheck merge OUT SHARD_DIR… joins the shards", ShardManifestFormat)
	case sh != nil && *probe.Format != ShardManifestFormat:
		return nil, fieldErr(ManifestName, "format", "%q: verify --shard reads a shard directory (%s)", truncate(*probe.Format), ShardManifestFormat)
	case *probe.Format == previousManifestFormat:
		return nil, fieldErr(ManifestName, "format", "%s is the previous manifest format, which did not state what a complete directory holds; this build reads only %s: certify again with this build", previousManifestFormat, ManifestFormat)
	case sh == nil && *probe.Format != ManifestFormat:
		return nil, fieldErr(ManifestName, "format", "unknown manifest version %q (this build reads %s)", truncate(*probe.Format), ManifestFormat)
	}
	if sh == nil {
		var m Manifest
		if err := decodeStrict(ManifestName, mdata, &m); err != nil {
			return nil, err
		}
		return &m, nil
	}
	var sm ShardManifest
	if err := decodeStrict(ManifestName, mdata, &sm); err != nil {
		return nil, err
	}
	if sm.Shard != *sh {
		return nil, fieldErr(ManifestName, "shard", "the directory records shard %s, not %s", sm.Shard, *sh)
	}
	return sm.manifest(), nil
}

// checkManifestHead checks the manifest's tool version, case count and
// registry hash against this build: failure is the manifest's failure,
// err an UnknownOpsError (a user's primitive's directory, of which nothing
// can be recomputed here, so that it is not verified at all).
func (s *Suite) checkManifestHead(dir string, m *Manifest) (failure, err error) {
	switch {
	case m.ToolVersion != version.Version:
		return fieldErr(ManifestName, "tool_version", "certificates written by tlcheck %q; this is %s", truncate(m.ToolVersion), version.Version), nil
	case m.Cases > limits.Current().CertCases:
		return fieldErr(ManifestName, "cases", "%v", limits.Exceeded("cert-cases", int64(limits.Current().CertCases), "%d cases per certificate", m.Cases)), nil
	case m.RegistryHash != s.ops.hash(m.Ops):
		if unknown := s.unknownOps(m.Ops); len(unknown) > 0 {
			return nil, &UnknownOpsError{Dir: dir, Ops: unknown}
		}
		return fieldErr(ManifestName, "registry_hash", "certificates were made with registry %s; this build's registry is %s", truncate(m.RegistryHash), s.ops.hash(m.Ops)), nil
	}
	return nil, nil
}

// seedEdited reports the manifest's seed when every file that records
// seed-bound inputs disagrees with it while matching its manifest hash.
func seedEdited(m *Manifest, perEntry []entryResult) error {
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
		return fieldErr(ManifestName, "seed", "%d: none of the %d certificate files records the inputs this seed generates, though each matches its manifest hash: the manifest's seed was edited", m.Seed, seedBound)
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
			rep.fail(quoteName(rel), "unlisted", fieldErr(quoteName(rel), "", "cannot list: %s", escapeLine(statReason(err))))
			return nil
		}
		switch {
		case rel == ".":
		case d.IsDir():
		case !d.Type().IsRegular() && !listed[rel] && rel != ManifestName: // (a listed one fails in verifyEntry)
			rep.fail(quoteName(rel), "unlisted", fieldErr(quoteName(rel), "", "%s, not a regular file: a certificate directory holds only regular files", safeio.Describe(d.Type())))
		case rel != ManifestName && !listed[rel]:
			rep.fail(quoteName(rel), "unlisted", fieldErr(quoteName(rel), "", "file is not listed in the manifest"))
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
func (s *Suite) verifyEntry(root *os.Root, m *Manifest, i int) entryResult {
	e := m.Files[i]
	field := fmt.Sprintf("files[%d]", i)
	var out entryResult
	fail := func(path, kind string, err error) entryResult {
		out.results = append(out.results, FileResult{Path: path, Kind: kind, Err: err})
		return out
	}
	if !pathRE.MatchString(e.Path) {
		return fail(ManifestName, "manifest", fieldErr(ManifestName, field+".path", "%s is not a safe certificate path", quoteName(truncate(e.Path))))
	}
	if i > 0 && m.Files[i-1].Path >= e.Path {
		fail(ManifestName, "manifest", fieldErr(ManifestName, field+".path", "files are not in sorted order (reordered manifest)"))
	}
	v, ok := s.verifiers[e.Kind]
	if !ok {
		return fail(e.Path, quoteName(e.Kind), fieldErr(ManifestName, field+".kind", "unknown certificate kind %q", truncate(e.Kind)))
	}
	if !strings.HasPrefix(e.Path, e.Kind) {
		return fail(e.Path, e.Kind, fieldErr(ManifestName, field+".path", "path does not match kind %q", e.Kind))
	}
	data, err := readRegular(root, e.Path)
	if err != nil {
		return fail(e.Path, e.Kind, fieldErr(e.Path, "", "cannot read: %s", escapeLine(statReason(err))))
	}
	n, err := verifyData(v, e.Path, e.Kind, data, m)
	hashOK := Sum(data) == e.SHA256
	var sm *seedMismatch
	out.seedBound = hashOK && (err == nil || errors.As(err, &sm))
	out.seedMismatch = out.seedBound && err != nil
	if err == nil && !hashOK {
		err = fieldErr(ManifestName, field+".sha256", "%s does not match the SHA-256 of %s (%s): the file was edited", truncate(e.SHA256), e.Path, Sum(data))
	}
	out.results = append(out.results, FileResult{Path: e.Path, Kind: e.Kind, Cases: n, Err: err})
	return out
}

// verifyData checks a certificate file's header (format and kind) and
// runs its kind's verifier v on it.
func verifyData(v Verifier, path, kind string, data []byte, m *Manifest) (int, error) {
	var h Header
	if err := decodeHeader(path, data, &h); err != nil {
		return 0, err
	}
	if h.Format == previousFormat {
		return 0, fieldErr(path, "format", "%s is the previous certificate format, whose cases were seeded differently; this build reads only %s: certify again with this build", previousFormat, Format)
	}
	if h.Format != Format {
		return 0, fieldErr(path, "format", "unknown certificate version %q (this build reads %s)", truncate(h.Format), Format)
	}
	if h.Kind != kind {
		return 0, fieldErr(path, "kind", "%q, but the manifest lists %q", truncate(h.Kind), kind)
	}
	return v(path, data, m)
}

// decodeHeader reads the format and kind of a certificate file, tolerating
// the kind-specific fields.
func decodeHeader(file string, data []byte, h *Header) error {
	var probe struct {
		Format *string `json:"format"`
		Kind   *string `json:"kind"`
	}
	if err := jsonUnmarshalLoose(file, data, &probe); err != nil {
		return err
	}
	if probe.Format == nil {
		return fieldErr(file, "format", "missing")
	}
	if probe.Kind == nil {
		return fieldErr(file, "kind", "missing")
	}
	h.Format, h.Kind = *probe.Format, *probe.Kind
	return nil
}

// VerifyShard re-derives every claim of the shard directory dir, which
// must record the shard sh: as Verify, with completeness restricted to
// the shard's part of the partition (every expected file of shard sh
// listed, no other).
func (s *Suite) VerifyShard(dir string, sh Shard) (*Report, error) {
	if err := sh.Check(); err != nil {
		return nil, err
	}
	return s.verify(dir, &sh)
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
