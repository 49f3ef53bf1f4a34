package certificates

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/internal/version"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// ShardManifestFormat is the manifest format of a shard directory: the
// fields of tlcheck.manifest.v2 plus the shard (index, count), listing
// only the shard's files. A shard directory is not a certificate directory
// (it is incomplete by design): verify.Dir refuses it, verify.Shard and Merge
// read it.
const ShardManifestFormat = "tlcheck.shard.v1"

// Shard names one part of a partition of the work units into Count parts:
// the unit whose canonical name is u belongs to shard ShardOf(u, Count).
// The zero Shard (Count 0) is the unsharded run.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Sharded reports whether sh selects a part (Count ≥ 1).
func (sh Shard) Sharded() bool { return sh.Count > 0 }

// String renders sh as I/N.
func (sh Shard) String() string { return fmt.Sprintf("%d/%d", sh.Index, sh.Count) }

// Check validates sh: 0 ≤ Index < Count.
func (sh Shard) Check() error {
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return fmt.Errorf("shard %d/%d: index out of range (0 ≤ I < N, N ≥ 1)", sh.Index, sh.Count)
	}
	return nil
}

// Has reports whether the work unit named unit belongs to sh (always, for
// the unsharded run).
func (sh Shard) Has(unit string) bool {
	return !sh.Sharded() || ShardOf(unit, sh.Count) == sh.Index
}

// ShardOf is the partition: the work unit whose canonical name is unit
// (its certificate path, e.g. adjointness/mul.json) belongs to shard
//
//	ShardOf(unit, n) = BE64(SHA-256(unit)[0:8]) mod n,
//
// the first eight bytes of the SHA-256 of the name's UTF-8 bytes read as a
// big-endian unsigned 64-bit integer, reduced mod n (n ≥ 1). It depends on
// the name and n alone — not on the seed, the cases, the order of the
// units, the machine or GOMAXPROCS — so every shard of a run computes the
// same partition independently, and the parts are disjoint and cover every
// unit by construction (each unit has exactly one residue).
func ShardOf(unit string, n int) int {
	h := sha256.Sum256([]byte(unit))
	return int(binary.BigEndian.Uint64(h[:8]) % uint64(n))
}

// ShardManifest is the manifest of a shard directory.
type ShardManifest struct {
	Format       string      `json:"format"`
	ToolVersion  string      `json:"tool_version"`
	RegistryHash string      `json:"registry_hash"`
	Seed         uint64      `json:"seed"`
	Cases        int         `json:"cases"`
	Kinds        []string    `json:"kinds"`
	Ops          []string    `json:"ops"`
	Providers    []string    `json:"providers"`
	Shard        Shard       `json:"shard"`
	Files        []FileEntry `json:"files"`
}

// Manifest is the certificate manifest the shard's options state, with
// the shard's files.
func (sm *ShardManifest) Manifest() *Manifest {
	return &Manifest{Format: ManifestFormat, ToolVersion: sm.ToolVersion, RegistryHash: sm.RegistryHash, Seed: sm.Seed, Cases: sm.Cases,
		Kinds: sm.Kinds, Ops: sm.Ops, Providers: sm.Providers, Files: sm.Files}
}

// ExpectedFiles lists every file (path → kind) a complete directory holds
// for m's options, restricted to shard sh.
func (s *Suite) ExpectedFiles(m *Manifest, sh Shard) map[string]string {
	o := Options{Seed: m.Seed, Cases: m.Cases, Ops: m.Ops, Providers: m.Providers}
	want := map[string]string{}
	for _, k := range m.Kinds {
		f, ok := s.expect[k]
		if !ok {
			continue
		}
		paths, err := f(o)
		if err != nil {
			continue
		}
		for _, p := range paths {
			if sh.Has(p) {
				want[p] = k
			}
		}
	}
	return want
}

// subjectsIn counts the files of shard sh for o (the progress steps of a
// sharded Certify).
func (s *Suite) subjectsIn(o Options, sh Shard) int {
	ro, err := resolve(o)
	if err != nil {
		return 0
	}
	m := &Manifest{Seed: ro.Seed, Cases: ro.Cases, Kinds: s.kinds, Ops: ro.Ops, Providers: ro.Providers}
	return len(s.ExpectedFiles(m, sh))
}

// MergeError is a Merge failure: the shard directory (or OUT), the file
// and the field. Tampered marks a file whose bytes do not match the
// SHA-256 its shard manifest claims (a tampered claim, exit 1); every
// other MergeError is bad input (exit 2).
type MergeError struct {
	Dir      string
	File     string
	Field    string
	Msg      string
	Tampered bool
	// Out marks an error of the output directory OUT (Dir), not a shard.
	Out bool
}

// Error prints "shard DIR: FILE: field F: msg" on one line.
func (e *MergeError) Error() string {
	var b strings.Builder
	if e.Out {
		b.WriteString("OUT " + dirName(e.Dir))
	} else {
		b.WriteString("shard directory " + dirName(e.Dir))
	}
	if e.File != "" {
		b.WriteString(": " + EscapeLine(e.File))
	}
	if e.Field != "" {
		b.WriteString(": field " + EscapeLine(e.Field))
	}
	b.WriteString(": " + EscapeLine(e.Msg))
	return b.String()
}

// dirName renders a directory name for a message: as it is when it is
// printable ASCII without spaces or quotes (an ordinary path), else
// Go-quoted with every control and non-ASCII character escaped, at most
// 80 bytes, so that a name cannot forge a line of output.
func dirName(d string) string {
	plain := len(d) > 0 && len(d) <= 200
	for i := 0; i < len(d) && plain; i++ {
		plain = d[i] > ' ' && d[i] < 0x7f && d[i] != '"' && d[i] != '\\'
	}
	if plain {
		return d
	}
	return QuoteName(d)
}

func mergeErr(dir, file, field, format string, args ...any) *MergeError {
	return &MergeError{Dir: dir, File: file, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// shardRead is one shard directory as Merge read it: its checked
// manifest.
type shardRead struct {
	dir string
	sm  ShardManifest
}

// readShardManifest reads and checks dir's shard manifest against this
// build (format, tool version, registry hash, limits, known options).
func (s *Suite) readShardManifest(root *os.Root, dir string) (*ShardManifest, error) {
	mdata, err := ReadRegular(root, ManifestName)
	if err != nil {
		return nil, mergeErr(dir, ManifestName, "", "cannot read: %s", EscapeLine(StatReason(err)))
	}
	var probe struct {
		Format *string `json:"format"`
	}
	if err := UnmarshalLoose(ManifestName, mdata, &probe); err != nil {
		return nil, mergeErr(dir, "", "", "%v", err)
	}
	switch {
	case probe.Format == nil:
		return nil, mergeErr(dir, ManifestName, "format", "missing")
	case *probe.Format == ManifestFormat:
		return nil, mergeErr(dir, ManifestName, "format", "%s is a complete certificate directory, not a shard (certify --shard I/N writes %s)", ManifestFormat, ShardManifestFormat)
	case *probe.Format != ShardManifestFormat:
		return nil, mergeErr(dir, ManifestName, "format", "unknown shard manifest version %q (this build reads %s)", Truncate(*probe.Format), ShardManifestFormat)
	}
	var sm ShardManifest
	if err := DecodeStrict(ManifestName, mdata, &sm); err != nil {
		return nil, mergeErr(dir, "", "", "%v", err)
	}
	switch {
	case sm.ToolVersion != version.Version:
		return nil, mergeErr(dir, ManifestName, "tool_version", "shard written by tlcheck %q; this is %s", Truncate(sm.ToolVersion), version.Version)
	case sm.RegistryHash != spec.RegistryHash():
		return nil, mergeErr(dir, ManifestName, "registry_hash", "shard made with registry %s; this build's registry is %s", Truncate(sm.RegistryHash), spec.RegistryHash())
	case sm.Cases > limits.Current().CertCases:
		return nil, mergeErr(dir, ManifestName, "cases", "%v", limits.Exceeded("cert-cases", int64(limits.Current().CertCases), "%d cases per certificate", sm.Cases))
	}
	if err := sm.Shard.Check(); err != nil {
		return nil, mergeErr(dir, ManifestName, "shard", "%v", err)
	}
	if err := s.CheckManifestOptions(sm.Manifest()); err != nil {
		return nil, mergeErr(dir, "", "", "%v", err)
	}
	return &sm, nil
}

// readShard reads one shard directory's manifest and checks that it
// lists exactly the shard's part of the complete set (safe paths, sorted,
// kinds as the registry of kinds says). The files are read by copyShard.
func (s *Suite) readShard(dir string) (*shardRead, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, mergeErr(dir, "", "", "%s", EscapeLine(StatReason(err)))
	}
	if !st.IsDir() {
		return nil, mergeErr(dir, "", "", "not a directory")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, mergeErr(dir, "", "", "%s", EscapeLine(StatReason(err)))
	}
	defer root.Close()
	sm, err := s.readShardManifest(root, dir)
	if err != nil {
		return nil, err
	}
	want := s.ExpectedFiles(sm.Manifest(), sm.Shard)
	listed := map[string]bool{}
	for i, e := range sm.Files {
		field := fmt.Sprintf("files[%d]", i)
		if !pathRE.MatchString(e.Path) {
			return nil, mergeErr(dir, ManifestName, field+".path", "%s is not a safe certificate path", QuoteName(Truncate(e.Path)))
		}
		if i > 0 && sm.Files[i-1].Path >= e.Path {
			return nil, mergeErr(dir, ManifestName, field+".path", "files are not in sorted order (reordered or repeated)")
		}
		kind, ok := want[e.Path]
		if !ok {
			return nil, mergeErr(dir, ManifestName, field+".path", "%s is not a file of shard %s for the manifest's kinds, ops and providers", e.Path, sm.Shard)
		}
		if e.Kind != kind {
			return nil, mergeErr(dir, ManifestName, field+".kind", "%q, but %s is of kind %s", Truncate(e.Kind), e.Path, kind)
		}
		if !hexRE.MatchString(e.SHA256) {
			return nil, mergeErr(dir, ManifestName, field+".sha256", "%q is not a lowercase hex SHA-256", Truncate(e.SHA256))
		}
		listed[e.Path] = true
	}
	var missing []string
	for p := range want {
		if !listed[p] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, mergeErr(dir, ManifestName, "files", "%d files of shard %s are not listed: %s", len(missing), sm.Shard, strings.Join(firstN(missing, 5), ", "))
	}
	return &shardRead{dir: dir, sm: *sm}, nil
}

// copyShard copies the files of shard r into tmp, one at a time: each is
// read once (ReadRegular), its SHA-256 compared with the manifest's claim
// (a mismatch is Tampered), and the bytes checked are the bytes written.
// A file in the shard directory that its manifest does not list fails.
func copyShard(r *shardRead, tmp string) error {
	dir := r.dir
	root, err := os.OpenRoot(dir)
	if err != nil {
		return mergeErr(dir, "", "", "%s", EscapeLine(StatReason(err)))
	}
	defer root.Close()
	listed := map[string]bool{}
	for i, e := range r.sm.Files {
		listed[e.Path] = true
		data, err := ReadRegular(root, e.Path)
		if err != nil {
			return mergeErr(dir, e.Path, "", "cannot read: %s", EscapeLine(StatReason(err)))
		}
		if got := Sum(data); got != e.SHA256 {
			me := mergeErr(dir, ManifestName, fmt.Sprintf("files[%d].sha256", i), "%s does not match the SHA-256 of %s (%s): the file was edited", e.SHA256, e.Path, got)
			me.Tampered = true
			return me
		}
		full := filepath.Join(tmp, filepath.FromSlash(e.Path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return err
		}
	}
	var walkErr *MergeError
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if walkErr != nil {
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case err != nil:
			walkErr = mergeErr(dir, QuoteName(rel), "", "cannot list: %s", EscapeLine(StatReason(err)))
		case rel == "." || d.IsDir() || rel == ManifestName || listed[rel]:
		default:
			walkErr = mergeErr(dir, QuoteName(rel), "", "file is not listed in the shard manifest")
		}
		return nil
	})
	if walkErr != nil {
		return walkErr
	}
	return nil
}

// firstN is the first n names of l, with "…" when l is longer.
func firstN(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	return append(slices.Clone(l[:n]), fmt.Sprintf("… (%d more)", len(l)-n))
}

// Merge merges the shard directories dirs into out, a directory whose
// manifest and files are byte-identical to those an unsharded Certify
// with the shards' options writes.
//
// First every shard's manifest is read and checked: strictly (format
// tlcheck.shard.v1, this build's tool version and registry hash), and
// that it lists exactly its part of the partition. Across shards, seed, cases, kinds,
// ops, providers, tool version, registry hash and the shard count N must
// agree with the first directory's, and the indices must be 0 … N−1,
// each exactly once (a duplicate names both directories, missing indices
// are named). Because the partition is a function of the unit names and N
// alone, disjoint and covering, the union of the shards is then exactly
// the complete file set, and each file — a function of the options alone
// — is the unsharded run's file.
//
// Merge does not re-derive the claims (verify OUT, or verify --shard in
// each shard job, does): it binds each file to its shard manifest by hash.
//
// Then the files are copied, one at a time (memory: one file), into a
// temporary directory beside out, each checked against its claimed
// SHA-256 on the very bytes written, and no unlisted file may be in a
// shard directory; last the merged manifest is written and the temporary
// directory renamed onto out. out must not exist or be an empty
// directory; on any error the temporary directory is removed, so nothing
// is written to out.
func (s *Suite) Merge(out string, dirs []string) (*Manifest, error) {
	removeStale(out, true) // a killed merge's temporary directories (stale.go)
	if len(dirs) == 0 {
		return nil, &MergeError{Dir: out, Msg: "no shard directories to merge", Out: true}
	}
	if err := CheckOutputDir(out, OverwriteRefuse); err != nil {
		return nil, &MergeError{Dir: out, Msg: err.Error(), Out: true}
	}
	var shards []*shardRead
	byIndex := map[int]string{}
	for _, d := range dirs {
		r, err := s.readShard(d)
		if err != nil {
			return nil, err
		}
		if len(shards) > 0 {
			if err := sameRun(&shards[0].sm, shards[0].dir, &r.sm, d); err != nil {
				return nil, err
			}
		}
		if prev, dup := byIndex[r.sm.Shard.Index]; dup {
			return nil, mergeErr(d, ManifestName, "shard.index", "shard %s is also %s: each index 0…%d exactly once", r.sm.Shard, dirName(prev), r.sm.Shard.Count-1)
		}
		byIndex[r.sm.Shard.Index] = d
		shards = append(shards, r)
	}
	n := shards[0].sm.Shard.Count
	if len(byIndex) != n {
		var missing []string
		for i := 0; i < n && len(missing) <= 5; i++ {
			if _, ok := byIndex[i]; !ok {
				missing = append(missing, fmt.Sprintf("%d/%d", i, n))
			}
		}
		return nil, mergeErr(shards[0].dir, ManifestName, "shard.count", "%d of %d shards given: missing %s", len(byIndex), n, strings.Join(firstN(missing, 5), ", "))
	}
	first := shards[0].sm
	m := &Manifest{Format: ManifestFormat, ToolVersion: first.ToolVersion, RegistryHash: first.RegistryHash, Seed: first.Seed, Cases: first.Cases,
		Kinds: first.Kinds, Ops: first.Ops, Providers: first.Providers}
	for _, r := range shards {
		m.Files = append(m.Files, r.sm.Files...)
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	if missing, extra := s.Completeness(m, nil); len(missing) > 0 || len(extra) > 0 {
		// Unreachable when every shard lists exactly its part; kept as
		// the theorem's check.
		return nil, mergeErr(shards[0].dir, ManifestName, "files", "the shards' union is not the complete set (%d missing, %d extra)", len(missing), len(extra))
	}
	mdata, err := Encode(m)
	if err != nil {
		return nil, err
	}
	var shardErr error
	if err := writeAtomically(out, func(tmp string) error {
		for _, r := range shards {
			if err := copyShard(r, tmp); err != nil {
				var me *MergeError
				if errors.As(err, &me) {
					shardErr = err
				}
				return err
			}
		}
		return os.WriteFile(filepath.Join(tmp, ManifestName), mdata, 0o644)
	}); err != nil {
		if shardErr != nil {
			return nil, shardErr
		}
		return nil, &MergeError{Dir: out, Msg: EscapeLine(err.Error()), Out: true}
	}
	return m, nil
}

// sameRun requires b (from directory db) to come from the same run as a
// (from da): every option and the shard count equal.
func sameRun(a *ShardManifest, da string, b *ShardManifest, db string) error {
	diff := func(field string, x, y any) error {
		return mergeErr(db, ManifestName, field, "%v, but shard directory %s has %v: shards of one run only", y, dirName(da), x)
	}
	switch {
	case a.ToolVersion != b.ToolVersion:
		return diff("tool_version", a.ToolVersion, b.ToolVersion)
	case a.RegistryHash != b.RegistryHash:
		return diff("registry_hash", a.RegistryHash, b.RegistryHash)
	case a.Seed != b.Seed:
		return diff("seed", a.Seed, b.Seed)
	case a.Cases != b.Cases:
		return diff("cases", a.Cases, b.Cases)
	case !slices.Equal(a.Kinds, b.Kinds):
		return diff("kinds", a.Kinds, b.Kinds)
	case !slices.Equal(a.Ops, b.Ops):
		return diff("ops", firstN(a.Ops, 5), firstN(b.Ops, 5))
	case !slices.Equal(a.Providers, b.Providers):
		return diff("providers", a.Providers, b.Providers)
	case a.Shard.Count != b.Shard.Count:
		return diff("shard.count", a.Shard.Count, b.Shard.Count)
	}
	return nil
}

// writeAtomically fills a fresh temporary directory beside out with fill
// and renames it onto out (which must not exist or be empty: rename(2)
// replaces an empty directory). On any error the temporary directory is
// removed and out is left as it was.
func writeAtomically(out string, fill func(tmp string) error) (err error) {
	parent := filepath.Dir(filepath.Clean(out))
	tmp, err := os.MkdirTemp(parent, mergeStem)
	if err != nil {
		return err
	}
	unlock, err := lockDir(tmp)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
		unlock()
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("%s: %w", dirName(out), ErrNotEmpty)
		}
		return err
	}
	return nil
}
