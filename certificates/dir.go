package certificates

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/internal/par"
	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/internal/version"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/obligations/casegen"
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
	// Overwrite says what Certify does with an output directory that is
	// not empty (default: refuse it).
	Overwrite Overwrite
	// Shard, when set (Count ≥ 1), restricts Certify to the files of that
	// part of the partition (ShardOf) and makes it write a shard
	// directory (ShardManifestFormat) for Merge.
	Shard Shard
	// Sources are the files a model's certificates are made from, with
	// their digests, recorded in the manifest (sources.go); only for a
	// model directory, never sharded.
	Sources []Source
}

// Overwrite is Certify's policy for a non-empty output directory. Stale
// files left in a reused directory would make its own output fail
// verification (every file must be listed), so Certify never writes into
// one without emptying it, and empties one only when told to.
type Overwrite int

const (
	// OverwriteRefuse refuses a non-empty directory (ErrNotEmpty).
	OverwriteRefuse Overwrite = iota
	// OverwriteForce replaces a non-empty directory that holds only
	// tlcheck's output — its manifest.json lists every other file in it —
	// and refuses any other (certify --force; replace.go).
	OverwriteForce
	// OverwriteCertificates is the gate's policy, which owns its output
	// directory and replaces it run after run: the same as OverwriteForce
	// (it never removes a file tlcheck did not write).
	OverwriteCertificates
)

// ErrNotEmpty reports an output directory Certify will not write into.
var ErrNotEmpty = errors.New("output directory is not empty")

// Producer writes one or more certificate files into a Writer. The
// adjointness producer is built in; other kinds register theirs with
// Register. A producer may call Put from several goroutines (the built-in
// ones produce their files on a par worker pool); the manifest lists the
// files sorted by path, so the directory does not depend on the order of
// the calls.
type Producer func(w *Writer, o Options) error

// Writer accumulates certificate files for a directory. It is safe for
// concurrent use.
type Writer struct {
	dir   string
	shard Shard
	mu    sync.Mutex
	files []FileEntry
}

// Put encodes v deterministically and writes it at rel (a path such as
// adjointness/mul.json), recording its hash for the manifest. In a
// sharded run a file of another shard is dropped (producers skip such
// files before producing them; this keeps any producer within its shard).
func (w *Writer) Put(rel, kind string, v any) error {
	if !pathRE.MatchString(rel) {
		return fmt.Errorf("certificate path %q is not in the safe alphabet", rel)
	}
	if !w.shard.Has(rel) {
		return nil
	}
	data, err := Encode(v)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	if err := CheckSafeJSON(rel, "", data); err != nil {
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

// putEach produces files 0 … n−1 of one kind on a par worker pool: file k
// has path path(k) and content produce(k), written with Put. In a sharded
// run only the files of o.Shard are produced. The error is that of the
// smallest failing k, as a sequential loop would report it; progress
// (o.Progress) steps once per produced file.
func putEach(w *Writer, o Options, kind string, n int, path func(k int) string, produce func(k int) (any, error)) error {
	var ks []int
	for k := range n {
		if o.Shard.Has(path(k)) {
			ks = append(ks, k)
		}
	}
	_, err := par.MapErr(len(ks), 0, func(i int) (struct{}, error) {
		v, err := produce(ks[i])
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, w.Put(path(ks[i]), kind, v)
	}, o.Progress)
	return err
}

// Suite is the set of certificate kinds a build knows how to produce and
// what a complete directory of each holds (Expect); the independent
// verifier (package certificates/verify) re-derives the claims of the
// kinds a suite knows, with the rules (Ops) and providers (ProviderSet)
// the suite was made with.
type Suite struct {
	producers []Producer
	// providers are the refinement certificates' providers (nil:
	// backend.FastProviders; FullSuiteWith).
	providers *backend.Providers
	// subjects count the progress steps of the registered kinds beyond
	// adjointness (see Subjects).
	subjects []func(Options) int
	// kinds are the kinds in registration order; expect[k] lists the
	// files a complete directory holds of kind k (see Expect).
	kinds  []string
	expect map[string]func(Options) ([]string, error)
	// ops is where the adjointness producer and verifier take rules
	// from: the reference registry, extended by AddOps.
	ops OpTable
	// notes say, for a model suite, which kind is written in place of
	// which and why (Notes).
	notes []string
}

// NewSuite returns the suite with the built-in adjointness kind.
func NewSuite() *Suite {
	s := &Suite{expect: map[string]func(Options) ([]string, error){}}
	s.kinds = append(s.kinds, KindAdjointness)
	s.expect[KindAdjointness] = func(o Options) ([]string, error) {
		var out []string
		for _, op := range o.Ops {
			out = append(out, adjointnessPath(op))
		}
		return out, nil
	}
	s.producers = append(s.producers, s.produceAdjointnessFiles)
	return s
}

// Register adds a kind's producer. A kind also needs Expect before its
// directories can verify: without it no complete directory of the kind
// can be stated (Knows).
func (s *Suite) Register(kind string, p Producer) {
	s.producers = append(s.producers, p)
	if !slices.Contains(s.kinds, kind) {
		s.kinds = append(s.kinds, kind)
	}
}

// Knows reports whether s states what a complete directory of kind holds
// (Expect): the kinds a manifest may name for s, and whose files the
// verifier re-derives.
func (s *Suite) Knows(kind string) bool {
	_, ok := s.expect[kind]
	return ok
}

// Ops is the table the adjointness producer and verifier take rules
// from: the reference registry, extended by AddOps.
func (s *Suite) Ops() *OpTable { return &s.ops }

// ProviderSet is the set of providers the refinement certificates are
// produced and verified with (FullSuiteWith; backend.FastProviders by
// default).
func (s *Suite) ProviderSet() *backend.Providers {
	return refinementEnv{providers: s.providers}.set()
}

// Expect sets the files of kind a complete directory holds for the
// options o (resolved: o.Ops and o.Providers as the manifest lists them):
// Certify's producer writes exactly these paths, and verify.Dir fails naming
// each one that is missing and each listed file that is not one of them.
func (s *Suite) Expect(kind string, files func(o Options) ([]string, error)) {
	s.expect[kind] = files
}

// resolve fills in o's defaults as the manifest states them: every
// registry primitive (registry order) when o.Ops is nil, every provider
// when o.Providers is nil. Unknown or repeated names are errors.
func resolve(o Options) (Options, error) {
	if o.Ops == nil {
		for _, info := range spec.Infos() {
			o.Ops = append(o.Ops, info.Name)
		}
	}
	provs, err := selectedProviders(o)
	if err != nil {
		return o, err
	}
	o.Providers = append([]string{}, provs...)
	o.Ops = append([]string{}, o.Ops...)
	for _, l := range []struct {
		what  string
		names []string
	}{{"op", o.Ops}, {"provider", o.Providers}} {
		seen := map[string]bool{}
		for _, n := range l.names {
			if seen[n] {
				return o, fmt.Errorf("certify: %s %q listed twice", l.what, Truncate(n))
			}
			seen[n] = true
		}
	}
	return o, nil
}

func adjointnessPath(op string) string { return KindAdjointness + "/" + op + ".json" }

func (s *Suite) produceAdjointnessFiles(w *Writer, o Options) error {
	ops := o.Ops
	if ops == nil {
		for _, info := range spec.Infos() {
			ops = append(ops, info.Name)
		}
	}
	return putEach(w, o, KindAdjointness, len(ops), func(k int) string { return adjointnessPath(ops[k]) }, func(k int) (any, error) {
		u, user := s.ops.UserOp(ops[k])
		if !user {
			return ProduceAdjointness(ops[k], o.Cases, o.Seed)
		}
		mode := ""
		if u.Recorded {
			mode = DrawRecorded
		}
		return produceAdjointness(u.Regs, ops[k], o.Cases, mode, func(i int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error) {
			return u.Draw(o.Seed, i)
		})
	})
}

// Certify writes every certificate of the suite and the manifest into dir
// (created if needed). A non-empty dir is refused (ErrNotEmpty) unless
// o.Overwrite says to replace it and it holds only tlcheck's output (its
// manifest lists every file in it), so a directory never mixes two runs
// and a user's file is never removed; the run is written into a fresh
// sibling directory put in dir's place when complete (replace.go), so a
// run that fails, or is killed, leaves dir as it was. The same options give byte-identical files, for any GOMAXPROCS:
// each file is a function of the options alone, files are produced on a
// worker pool and the manifest lists them sorted by path. The manifest
// states the resolved options (seed, cases, kinds, ops, providers), from
// which verify.Dir derives the complete file set; Certify checks that it
// wrote exactly that set.
//
// With o.Shard set, Certify writes only the files of that shard and a
// shard manifest (ShardManifestFormat: the same options and the shard),
// and checks that it wrote exactly the shard's part of the complete set;
// the returned Manifest lists the shard's files. Merge joins the N shard
// directories into the unsharded directory, byte for byte.
func (s *Suite) Certify(dir string, o Options) (*Manifest, error) {
	if o.Shard.Sharded() {
		if err := o.Shard.Check(); err != nil {
			return nil, fmt.Errorf("certify: %w", err)
		}
	}
	if o.Cases < 1 {
		return nil, fmt.Errorf("certify: cases must be ≥ 1")
	}
	if max := limits.Current().CertCases; o.Cases > max {
		return nil, fmt.Errorf("certify: %w", limits.Exceeded("cert-cases", int64(max), "%d cases per certificate", o.Cases))
	}
	ro, err := resolve(o)
	if err != nil {
		return nil, err
	}
	if o.Sources != nil && o.Shard.Sharded() {
		return nil, fmt.Errorf("certify: a model's directory (with sources) is not sharded")
	}
	if err := checkSources("options", "sources", o.Sources); err != nil {
		return nil, fmt.Errorf("certify: %w", err)
	}
	if _, err := outputEntries(dir, o.Overwrite); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return nil, err
	}
	// The run writes into a fresh sibling and puts it in dir's place only
	// when complete (replace.go): a failed or killed run leaves dir as it
	// was.
	removeStale(dir, false) // a killed run's siblings (stale.go)
	tmp, unlock, err := stageDir(dir)
	if err != nil {
		return nil, err
	}
	installed := false
	defer func() {
		if !installed {
			_ = os.RemoveAll(tmp)
		}
		unlock()
	}()
	w := &Writer{dir: tmp, shard: o.Shard}
	for _, p := range s.producers {
		if err := p(w, o); err != nil {
			return nil, err
		}
	}
	sort.Slice(w.files, func(i, j int) bool { return w.files[i].Path < w.files[j].Path })
	// The manifest's lists are sorted (bytewise), whatever order the
	// options or the suite name them in: one directory per set of
	// options, and a reordered list is a tampered manifest
	// (checkManifestOptions refuses it).
	m := &Manifest{Format: ManifestFormat, ToolVersion: version.Version, RegistryHash: s.ops.Hash(ro.Ops), Seed: o.Seed, Cases: o.Cases,
		Kinds: sorted(s.kinds), Ops: sorted(ro.Ops), Providers: sorted(ro.Providers), Sources: o.Sources, Files: w.files}
	var sh *Shard
	if o.Shard.Sharded() {
		sh = &o.Shard
	}
	if missing, extra := s.Completeness(m, sh); len(missing) > 0 || len(extra) > 0 {
		return nil, fmt.Errorf("certify: the producers wrote %d files the manifest's options do not call for and missed %d (%v %v)", len(extra), len(missing), extra, missing)
	}
	var v any = m
	if sh != nil {
		if m.Files == nil {
			// An empty shard (N beyond the number of files) lists no
			// files: [] (files is required, never null).
			m.Files = []FileEntry{}
		}
		v = &ShardManifest{Format: ShardManifestFormat, ToolVersion: m.ToolVersion, RegistryHash: m.RegistryHash, Seed: m.Seed, Cases: m.Cases,
			Kinds: m.Kinds, Ops: m.Ops, Providers: m.Providers, Shard: *sh, Files: m.Files}
	}
	data, err := Encode(v)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, ManifestName), data, 0o644); err != nil {
		return nil, err
	}
	if err := installDir(tmp, dir); err != nil {
		return nil, err
	}
	installed = true
	removeStale(dir, false) // dir exists now: a previous directory set aside by a killed run goes too
	return m, nil
}

// CheckOutputDir reports, without changing anything, whether Certify with
// the policy ov may write into dir: a missing or empty directory always,
// a non-empty one only as ov allows (ErrNotEmpty otherwise). A command
// calls it while validating its arguments, before any work.
func CheckOutputDir(dir string, ov Overwrite) error {
	_, err := outputEntries(dir, ov)
	return err
}

// outputEntries checks dir against ov and returns its entries.
func outputEntries(dir string, ov Overwrite) ([]os.DirEntry, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", QuoteName(dir))
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	switch ov {
	case OverwriteForce, OverwriteCertificates:
		if err := ownedDir(dir); err != nil {
			if !errors.Is(err, ErrNotEmpty) {
				err = fmt.Errorf("%w: %v", ErrNotEmpty, err)
			}
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: %s (certify --force replaces a directory tlcheck wrote)", ErrNotEmpty, QuoteName(dir))
	}
	return entries, nil
}

// QuoteName renders a name for a message or a report line: as it is when
// it is a safe certificate path or name, else Go-quoted with every control and
// non-ASCII character escaped and at most 80 bytes, so a name cannot
// forge a line of output.
func QuoteName(name string) string {
	if pathRE.MatchString(name) || nameRE.MatchString(name) {
		return name
	}
	if len(name) > 80 {
		name = name[:80]
		return strconv.QuoteToASCII(name) + "…"
	}
	return strconv.QuoteToASCII(name)
}

// EscapeLine escapes every control or non-printable character of s in Go
// syntax (\n, \x1b, \u2028), so that s stays on one line of output.
func EscapeLine(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) || r == ' ' {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// StatReason is the reason of a file-system error without the path it
// names (the caller names the file, quoted).
func StatReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ReadRegular reads rel from root: only a regular file, reached without
// a symbolic link in any component, of at most MaxFileBytes. The type is
// checked with Lstat before opening — so a FIFO or device is never
// opened and cannot block — and again on the open file (opened with
// O_NOFOLLOW|O_NONBLOCK where the system has them), which must be the
// file Lstat saw.
func ReadRegular(root *os.Root, rel string) ([]byte, error) {
	parts := strings.Split(rel, "/")
	for i := range parts[:len(parts)-1] {
		d := strings.Join(parts[:i+1], "/")
		fi, err := root.Lstat(d)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s is %s, not a directory", QuoteName(d), safeio.Describe(fi.Mode()))
		}
	}
	fi, err := root.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s, not a regular file", safeio.Describe(fi.Mode()))
	}
	if fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxFileBytes)
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || !os.SameFile(fi, st) {
		return nil, errors.New("replaced while being opened")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxFileBytes)
	}
	return data, nil
}

// Completeness compares the manifest's files with the complete set its
// kinds, ops, providers, seed and cases call for: the expected paths not
// listed (each with its kind, without a hash), and the indices of listed
// files not expected (or of a kind that states no complete set). With sh
// set, the complete set is restricted to the shard sh's part.
func (s *Suite) Completeness(m *Manifest, sh *Shard) (missing []FileEntry, extra []int) {
	var part Shard
	if sh != nil {
		part = *sh
	}
	want := s.ExpectedFiles(m, part)
	var order []string
	for p := range want {
		order = append(order, p)
	}
	listed := map[string]bool{}
	for i, e := range m.Files {
		listed[e.Path] = true
		if _, ok := want[e.Path]; !ok {
			extra = append(extra, i)
		}
	}
	sort.Strings(order)
	for _, p := range order {
		if !listed[p] {
			missing = append(missing, FileEntry{Path: p, Kind: want[p]})
		}
	}
	return missing, extra
}

// CheckManifestOptions validates what the manifest states beyond its
// files: known kinds with a complete file set, known and distinct ops and
// providers.
func (s *Suite) CheckManifestOptions(m *Manifest) error {
	if m.Cases < 1 {
		return FieldErr(ManifestName, "cases", "%d: at least one case per certificate", m.Cases)
	}
	if err := checkSources(ManifestName, "sources", m.Sources); err != nil {
		return err
	}
	if m.Sources != nil && !IsModelDir(m) {
		return FieldErr(ManifestName, "sources", "recorded, but the directory certifies no model (its kinds name no model kind)")
	}
	for _, l := range []struct {
		field string
		names []string
		known func(string) bool
	}{
		{"kinds", m.Kinds, s.Knows},
		{"ops", m.Ops, s.ops.Known},
		{"providers", m.Providers, KnownProvider},
	} {
		if len(l.names) == 0 && l.field != "providers" {
			return FieldErr(ManifestName, l.field, "empty: a certificate directory certifies at least one")
		}
		seen := map[string]bool{}
		for i, n := range l.names {
			at := fmt.Sprintf("%s[%d]", l.field, i)
			if err := CheckName(ManifestName, at, n); err != nil {
				return err
			}
			if seen[n] {
				return FieldErr(ManifestName, at, "%q listed twice", n)
			}
			seen[n] = true
			if i > 0 && l.names[i-1] > n {
				return FieldErr(ManifestName, at, "%q after %q: the %s are not in sorted order (reordered manifest; certify writes every list sorted)", n, l.names[i-1], l.field)
			}
			if !l.known(n) {
				return FieldErr(ManifestName, at, "%q is not known to this build", n)
			}
		}
	}
	return nil
}

// sorted returns a sorted copy of l (nil stays nil: a manifest's
// optional-looking lists are required and never null, so callers pass
// non-nil lists).
func sorted(l []string) []string {
	if l == nil {
		return nil
	}
	c := append([]string{}, l...)
	sort.Strings(c)
	return c
}

// ErrNoManifest reports a directory without a readable manifest.
var ErrNoManifest = errors.New("no certificate manifest")
