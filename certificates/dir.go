package certificates

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/tlcheck/tlcheck/internal/par"
	"github.com/tlcheck/tlcheck/internal/version"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// Options configure Certify.
type Options struct {
	Seed  uint64
	Cases int
	// Ops restricts the primitives certified (nil: every primitive).
	Ops []string
	// Providers restricts the providers certified (nil: all).
	Providers []string
	// Progress, when set, is called once per certified subject, never
	// concurrently.
	Progress func()
}

// Producer writes one or more certificate files into a Writer. The
// adjointness producer is built in; other kinds register theirs with
// Register. A producer may call Put from several goroutines (the built-in
// ones produce their files on a par worker pool); the manifest lists the
// files sorted by path, so the directory does not depend on the order of
// the calls.
type Producer func(w *Writer, o Options) error

// Verifier re-derives every claim of one certificate file of its kind and
// returns the number of cases it checked.
type Verifier func(file string, data []byte, m *Manifest) (int, error)

// Writer accumulates certificate files for a directory. It is safe for
// concurrent use.
type Writer struct {
	dir   string
	mu    sync.Mutex
	files []FileEntry
}

// Put encodes v deterministically and writes it at rel (a path such as
// adjointness/mul.json), recording its hash for the manifest.
func (w *Writer) Put(rel, kind string, v any) error {
	if !pathRE.MatchString(rel) {
		return fmt.Errorf("certificate path %q is not in the safe alphabet", rel)
	}
	data, err := encode(v)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	if err := checkSafeJSON(rel, "", data); err != nil {
		return err
	}
	full := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		return err
	}
	w.mu.Lock()
	w.files = append(w.files, FileEntry{Path: rel, SHA256: Sum(data), Kind: kind})
	w.mu.Unlock()
	return nil
}

// putEach produces files 0 … n−1 of one kind on a par worker pool: produce(k)
// returns file k's path and content, which is written with Put. The error
// is that of the smallest failing k, as a sequential loop would report it;
// progress (o.Progress) steps once per file.
func putEach(w *Writer, o Options, kind string, n int, produce func(k int) (string, any, error)) error {
	_, err := par.MapErr(n, 0, func(k int) (struct{}, error) {
		rel, v, err := produce(k)
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, w.Put(rel, kind, v)
	}, o.Progress)
	return err
}

// Suite is the set of certificate kinds a build knows how to produce and
// verify.
type Suite struct {
	producers []Producer
	verifiers map[string]Verifier
	// subjects count the progress steps of the registered kinds beyond
	// adjointness (see Subjects).
	subjects []func(Options) int
}

// NewSuite returns the suite with the built-in adjointness kind.
func NewSuite() *Suite {
	s := &Suite{verifiers: map[string]Verifier{}}
	s.producers = append(s.producers, produceAdjointnessFiles)
	s.verifiers[KindAdjointness] = func(file string, data []byte, m *Manifest) (int, error) {
		var f AdjointnessFile
		if err := decodeStrict(file, data, &f); err != nil {
			return 0, err
		}
		return verifyAdjointness(file, &f, m)
	}
	return s
}

// Register adds a kind's producer and verifier.
func (s *Suite) Register(kind string, p Producer, v Verifier) {
	if p != nil {
		s.producers = append(s.producers, p)
	}
	s.verifiers[kind] = v
}

func produceAdjointnessFiles(w *Writer, o Options) error {
	ops := o.Ops
	if ops == nil {
		for _, info := range spec.Infos() {
			ops = append(ops, info.Name)
		}
	}
	return putEach(w, o, KindAdjointness, len(ops), func(k int) (string, any, error) {
		f, err := ProduceAdjointness(ops[k], o.Cases, o.Seed)
		return "adjointness/" + ops[k] + ".json", f, err
	})
}

// Certify writes every certificate of the suite and the manifest into dir
// (created if needed; existing certificate files are replaced). The same
// options give byte-identical files, for any GOMAXPROCS: each file is a
// function of the options alone, files are produced on a worker pool and
// the manifest lists them sorted by path.
func (s *Suite) Certify(dir string, o Options) (*Manifest, error) {
	if o.Cases < 1 {
		return nil, fmt.Errorf("certify: cases must be ≥ 1")
	}
	if max := limits.Current().CertCases; o.Cases > max {
		return nil, fmt.Errorf("certify: %w", limits.Exceeded("cert-cases", int64(max), "%d cases per certificate", o.Cases))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &Writer{dir: dir}
	for _, p := range s.producers {
		if err := p(w, o); err != nil {
			return nil, err
		}
	}
	sort.Slice(w.files, func(i, j int) bool { return w.files[i].Path < w.files[j].Path })
	m := &Manifest{Format: ManifestFormat, ToolVersion: version.Version, RegistryHash: spec.RegistryHash(), Seed: o.Seed, Cases: o.Cases, Files: w.files}
	data, err := encode(m)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), data, 0o644); err != nil {
		return nil, err
	}
	return m, nil
}

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

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxFileBytes)
	}
	return data, nil
}

// ErrNoManifest reports a directory without a readable manifest.
var ErrNoManifest = errors.New("no certificate manifest")

// Verify re-derives every certificate in dir. It returns an error only
// when dir cannot be read as a certificate directory at all (no manifest,
// not a directory); every certificate-level failure — a tampered,
// truncated, reordered, unlisted or missing file, an unknown version, a
// registry hash that does not match this build — is reported per file in
// the Report.
func (s *Suite) Verify(dir string) (*Report, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	mdata, err := readBounded(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, fmt.Errorf("%w in %s: %v", ErrNoManifest, dir, err)
	}
	rep := &Report{}
	var m Manifest
	fail := func(path, kind string, err error) {
		rep.Files = append(rep.Files, FileResult{Path: path, Kind: kind, Err: err})
	}
	if err := decodeStrict(ManifestName, mdata, &m); err != nil {
		fail(ManifestName, "manifest", err)
		return rep, nil
	}
	rep.Manifest = &m
	switch {
	case m.Format != ManifestFormat:
		fail(ManifestName, "manifest", fieldErr(ManifestName, "format", "unknown manifest version %q (this build reads %s)", truncate(m.Format), ManifestFormat))
		return rep, nil
	case m.ToolVersion != version.Version:
		fail(ManifestName, "manifest", fieldErr(ManifestName, "tool_version", "certificates written by tlcheck %q; this is %s", truncate(m.ToolVersion), version.Version))
		return rep, nil
	case m.Cases > limits.Current().CertCases:
		fail(ManifestName, "manifest", fieldErr(ManifestName, "cases", "%v", limits.Exceeded("cert-cases", int64(limits.Current().CertCases), "%d cases per certificate", m.Cases)))
		return rep, nil
	case m.RegistryHash != spec.RegistryHash():
		fail(ManifestName, "manifest", fieldErr(ManifestName, "registry_hash", "certificates were made with registry %s; this build's registry is %s", truncate(m.RegistryHash), spec.RegistryHash()))
		return rep, nil
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
	perEntry := par.Map(len(m.Files), 0, func(i int) []FileResult {
		return s.verifyEntry(dir, &m, i)
	}, nil)
	for _, rs := range perEntry {
		rep.Files = append(rep.Files, rs...)
	}
	// Every file in the directory must be listed.
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel != ManifestName && !listed[rel] {
			fail(rel, "unlisted", fieldErr(rel, "", "file is not listed in the manifest"))
		}
		return nil
	})
	if len(m.Files) == 0 {
		fail(ManifestName, "manifest", fieldErr(ManifestName, "files", "no certificate files"))
	}
	return rep, nil
}

// verifyEntry checks manifest entry i and verifies its file: the results
// of entry i, in the order the checks run.
func (s *Suite) verifyEntry(dir string, m *Manifest, i int) []FileResult {
	e := m.Files[i]
	field := fmt.Sprintf("files[%d]", i)
	var out []FileResult
	fail := func(path, kind string, err error) []FileResult {
		return append(out, FileResult{Path: path, Kind: kind, Err: err})
	}
	if !pathRE.MatchString(e.Path) {
		return fail(ManifestName, "manifest", fieldErr(ManifestName, field+".path", "%q is not a safe certificate path", truncate(e.Path)))
	}
	if i > 0 && m.Files[i-1].Path >= e.Path {
		out = fail(ManifestName, "manifest", fieldErr(ManifestName, field+".path", "files are not in sorted order (reordered manifest)"))
	}
	v, ok := s.verifiers[e.Kind]
	if !ok {
		return fail(e.Path, e.Kind, fieldErr(ManifestName, field+".kind", "unknown certificate kind %q", truncate(e.Kind)))
	}
	if !strings.HasPrefix(e.Path, e.Kind) {
		return fail(e.Path, e.Kind, fieldErr(ManifestName, field+".path", "path does not match kind %q", e.Kind))
	}
	data, err := readBounded(filepath.Join(dir, filepath.FromSlash(e.Path)))
	if err != nil {
		return fail(e.Path, e.Kind, fieldErr(e.Path, "", "cannot read: %v", err))
	}
	n, err := verifyData(v, e.Path, e.Kind, data, m)
	if err == nil && Sum(data) != e.SHA256 {
		err = fieldErr(ManifestName, field+".sha256", "%s does not match the SHA-256 of %s (%s): the file was edited", truncate(e.SHA256), e.Path, Sum(data))
	}
	return append(out, FileResult{Path: e.Path, Kind: e.Kind, Cases: n, Err: err})
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
