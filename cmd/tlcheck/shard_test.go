package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/jsonschema"
)

// shardTestArgs are the certify options of the sharding tests: the whole
// suite (every kind), few cases, a non-default seed.
var shardTestArgs = []string{"--cases", "2", "--seed", "11"}

// sameTree fails unless got and want hold the same paths with the same
// bytes.
func sameTree(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: %s missing", what, p)
		case !bytes.Equal(g, w):
			t.Errorf("%s: %s differs from the unsharded run's bytes", what, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: extra file %s", what, p)
		}
	}
}

// certifyShardsAsProcesses runs certify for every shard of n as its own
// process (the test binary running tlcheck's main), all at once, and
// returns the shard directories. Shard i takes its index from --shard,
// TEST_SHARD_INDEX or JOB_COMPLETION_INDEX in turn (with
// TEST_TOTAL_SHARDS), so each way a batch engine passes it is exercised.
func certifyShardsAsProcesses(t *testing.T, root string, n int) []string {
	t.Helper()
	var dirs []string
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("shard-%d-of-%d", i, n))
		args := append([]string{"certify", "--out", dir}, shardTestArgs...)
		env := append(os.Environ(), mainEnv+"=1", certificates.EnvShardIndex+"=", certificates.EnvJobIndex+"=", certificates.EnvTotalShards+"=", certificates.EnvShardStatus+"=")
		switch i % 3 {
		case 0:
			args = append(args, "--shard", fmt.Sprintf("%d/%d", i, n))
		case 1:
			env = append(env, fmt.Sprintf("%s=%d", certificates.EnvShardIndex, i), fmt.Sprintf("%s=%d", certificates.EnvTotalShards, n))
		case 2:
			env = append(env, fmt.Sprintf("%s=%d", certificates.EnvJobIndex, i), fmt.Sprintf("%s=%d", certificates.EnvTotalShards, n))
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = env
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		dirs, cmds, outs = append(dirs, dir), append(cmds, cmd), append(outs, &b)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %d/%d: %v\n%s", i, n, err, outs[i])
		}
		if want := fmt.Sprintf("wrote shard %d/%d:", i, n); !strings.Contains(outs[i].String(), want) {
			t.Fatalf("shard %d/%d printed %q, want %q", i, n, outs[i], want)
		}
	}
	return dirs
}

// shardOfSpec is the partition as the package doc states it, computed
// here independently: BE64(SHA-256(path)[0:8]) mod n.
func shardOfSpec(path string, n int) int {
	h := sha256.Sum256([]byte(path))
	return int(binary.BigEndian.Uint64(h[:8]) % uint64(n))
}

// TestShardedCertifyMergesToUnsharded: for N = 1, 2, 3, 7, N certify
// processes with --shard (or the batch engines' variables) write N shard
// directories, each holding exactly the files the stated partition
// assigns it and recording (I, N); merge joins them into a directory
// byte-identical to the unsharded run's, which verifies; each shard
// verifies with verify --shard.
func TestShardedCertifyMergesToUnsharded(t *testing.T) {
	root := t.TempDir()
	full := filepath.Join(root, "full")
	if code, _, stderr := runCmd(append([]string{"certify", "--out", full}, shardTestArgs...)...); code != 0 {
		t.Fatalf("unsharded certify: exit %d: %s", code, stderr)
	}
	want := readTree(t, full)
	var unsharded struct {
		Files []struct{ Path string } `json:"files"`
	}
	if err := json.Unmarshal(want["manifest.json"], &unsharded); err != nil || len(unsharded.Files) < 10 {
		t.Fatalf("unsharded manifest: %v, %d files", err, len(unsharded.Files))
	}
	for _, n := range []int{1, 2, 3, 7} {
		dirs := certifyShardsAsProcesses(t, filepath.Join(root, fmt.Sprint(n)), n)
		for i, d := range dirs {
			var sm struct {
				Format string
				Seed   uint64
				Cases  int
				Shard  struct{ Index, Count int }
				Files  []struct{ Path string }
			}
			got := readTree(t, d)
			if err := json.Unmarshal(got["manifest.json"], &sm); err != nil {
				t.Fatal(err)
			}
			if sm.Format != "tlcheck.shard.v1" || sm.Seed != 11 || sm.Cases != 2 || sm.Shard.Index != i || sm.Shard.Count != n {
				t.Fatalf("shard %d/%d manifest records %+v", i, n, sm)
			}
			var wantPaths []string
			for _, f := range unsharded.Files {
				if shardOfSpec(f.Path, n) == i {
					wantPaths = append(wantPaths, f.Path)
				}
			}
			var gotPaths []string
			for _, f := range sm.Files {
				gotPaths = append(gotPaths, f.Path)
				if !bytes.Equal(got[f.Path], want[f.Path]) {
					t.Errorf("shard %d/%d: %s differs from the unsharded file", i, n, f.Path)
				}
			}
			if !slices.Equal(gotPaths, wantPaths) {
				t.Fatalf("shard %d/%d lists %v, the partition assigns %v", i, n, gotPaths, wantPaths)
			}
			if n == 3 {
				if code, stdout, stderr := runCmd("verify", "--shard", fmt.Sprintf("%d/%d", i, n), d); code != 0 {
					t.Fatalf("verify --shard %d/%d: exit %d\n%s%s", i, n, code, stdout, stderr)
				}
			}
		}
		// Merge in a scrambled order: the result does not depend on it.
		slices.Reverse(dirs)
		out := filepath.Join(root, fmt.Sprintf("merged-%d", n))
		if code, stdout, stderr := runCmd(append([]string{"merge", out}, dirs...)...); code != 0 || !strings.Contains(stdout, "merged") {
			t.Fatalf("merge N=%d: exit %d\n%s%s", n, code, stdout, stderr)
		}
		sameTree(t, fmt.Sprintf("merge of %d shards", n), readTree(t, out), want)
	}
	if code, stdout, _ := runCmd("verify", filepath.Join(root, "merged-7")); code != 0 {
		t.Fatalf("verify of the merged directory: exit %d\n%s", code, stdout)
	}
}

// certifyShardDirs writes the n shard directories of one run in-process
// under root, with extra certify arguments.
func certifyShardDirs(t *testing.T, root string, n int, extra ...string) []string {
	t.Helper()
	var dirs []string
	for i := range n {
		d := filepath.Join(root, fmt.Sprintf("s%d", i))
		args := append(append([]string{"certify", "--out", d, "--ops", "mul,add,tanh", "--providers", "reference", "--shard", fmt.Sprintf("%d/%d", i, n)}, shardTestArgs...), extra...)
		if code, _, stderr := runCmd(args...); code != 0 {
			t.Fatalf("certify shard %d/%d: exit %d: %s", i, n, code, stderr)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// firstListed is the path of the first file a shard manifest lists.
func firstListed(t *testing.T, dir string) string {
	t.Helper()
	var sm struct{ Files []struct{ Path string } }
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(data, &sm)
	}
	if err != nil || len(sm.Files) == 0 {
		t.Fatalf("%s: %v (%d files)", dir, err, len(sm.Files))
	}
	return sm.Files[0].Path
}

// TestMergeRejects: every planted fault in the shards is refused with the
// right exit code (1 for a file that does not match its claimed hash, 2
// for bad input), one line naming the shard directory and the field, and
// nothing written to OUT (neither OUT nor a temporary directory beside it
// appears; an existing empty OUT stays empty).
func TestMergeRejects(t *testing.T) {
	root := t.TempDir()
	good := certifyShardDirs(t, filepath.Join(root, "good"), 3)
	// A non-empty shard is needed for the tampering cases.
	victim := good[0]
	for _, d := range good {
		if firstListedOK(d) {
			victim = d
			break
		}
	}
	otherSeed := certifyShardDirs(t, filepath.Join(root, "seed12"), 3, "--seed", "12")
	otherCases := certifyShardDirs(t, filepath.Join(root, "cases3"), 3, "--cases", "3")
	four := certifyShardDirs(t, filepath.Join(root, "four"), 4)
	tampered := filepath.Join(root, "tampered")
	copyTree(t, victim, tampered)
	tamperedFile := firstListed(t, tampered)
	data, _ := os.ReadFile(filepath.Join(tampered, tamperedFile))
	os.WriteFile(filepath.Join(tampered, tamperedFile), bytes.Replace(data, []byte(`"cases"`), []byte(`"cases" `), 1), 0o644)
	extraFile := filepath.Join(root, "extra")
	copyTree(t, victim, extraFile)
	os.WriteFile(filepath.Join(extraFile, "adjointness", "stray.json"), []byte("{}"), 0o644)
	// A shard manifest edited to claim another index (its files then are
	// not that shard's part, or the index is out of range).
	relabel := func(name, from, to string) string {
		d := filepath.Join(root, name)
		copyTree(t, good[0], d)
		mp := filepath.Join(d, "manifest.json")
		m, _ := os.ReadFile(mp)
		m2 := bytes.Replace(m, []byte(from), []byte(to), 1)
		if bytes.Equal(m, m2) {
			t.Fatalf("%s: %q not in the manifest", name, from)
		}
		os.WriteFile(mp, m2, 0o644)
		return d
	}
	outOfRange := relabel("range", `"index": 0,`, `"index": 5,`)
	truncated := relabel("truncated", `"shard": {`, `"shard": `)
	unsharded := filepath.Join(root, "unsharded")
	if code, _, stderr := runCmd(append([]string{"certify", "--out", unsharded, "--ops", "mul", "--providers", "reference"}, shardTestArgs...)...); code != 0 {
		t.Fatal(stderr)
	}
	with := func(i int, d string) []string {
		l := slices.Clone(good)
		l[i] = d
		return l
	}
	idx := slices.Index(good, victim)
	cases := []struct {
		name   string
		shards []string
		code   int
		inErr  []string
	}{
		{"tampered shard file", with(idx, tampered), 1, []string{"shard directory " + tampered, "field files[0].sha256", "the file was edited"}},
		{"missing shard", good[:2], 2, []string{"field shard.count", "2 of 3 shards given: missing 2/3"}},
		{"duplicate shard", []string{good[0], good[1], good[1]}, 2, []string{"shard directory " + good[1], "field shard.index", "also " + good[1]}},
		{"mismatched seeds", with(1, otherSeed[1]), 2, []string{"shard directory " + otherSeed[1], "field seed", "12, but shard directory " + good[0] + " has 11"}},
		{"mismatched cases", with(2, otherCases[2]), 2, []string{"shard directory " + otherCases[2], "field cases"}},
		{"mismatched shard count", []string{good[0], good[1], four[2]}, 2, []string{"shard directory " + four[2], "field shard.count", "4, but"}},
		{"unlisted file in a shard", with(idx, extraFile), 2, []string{"shard directory " + extraFile, "adjointness/stray.json", "not listed"}},
		{"shard index out of range", with(0, outOfRange), 2, []string{"shard directory " + outOfRange, "field shard", "out of range"}},
		{"malformed shard manifest", with(0, truncated), 2, []string{"shard directory " + truncated, "manifest.json"}},
		{"an unsharded directory", []string{unsharded}, 2, []string{"shard directory " + unsharded, "field format", "not a shard"}},
		{"no such shard directory", []string{good[0], good[1], filepath.Join(root, "nope")}, 2, []string{"shard directory " + filepath.Join(root, "nope")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			code, stdout, stderr := runCmd(append([]string{"merge", out}, c.shards...)...)
			if code != c.code || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q", code, c.code, stdout, stderr)
			}
			for _, s := range c.inErr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr %q lacks %q", stderr, s)
				}
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("a refused merge left %v beside OUT", entries)
			}
			// An existing empty OUT stays empty.
			os.Mkdir(out, 0o755)
			if code2, _, _ := runCmd(append([]string{"merge", out}, c.shards...)...); code2 != c.code {
				t.Errorf("into an empty OUT: exit %d, want %d", code2, c.code)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("a refused merge wrote %v into OUT", entries)
			}
		})
	}
	// A non-empty OUT is refused before any work, and kept.
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "mine.txt"), []byte("mine"), 0o644)
	if code, _, stderr := runCmd(append([]string{"merge", out}, good...)...); code != 2 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("non-empty OUT: exit %d, %q", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "mine.txt")); string(b) != "mine" {
		t.Fatal("merge touched a non-empty OUT")
	}
	// The good shards do merge (the faults above are what failed).
	if code, _, stderr := runCmd(append([]string{"merge", filepath.Join(root, "merged")}, good...)...); code != 0 {
		t.Fatalf("good shards: exit %d: %s", code, stderr)
	}
	// verify --shard re-derives the claims: a claim edited together with
	// its hash passes merge's hash check but fails verify --shard (exit
	// 1); the wrong shard index fails too.
	forged := filepath.Join(root, "forged")
	copyTree(t, victim, forged)
	rehash(t, forged, tamperedFile, func(b []byte) []byte {
		return regexp.MustCompile(`("values": \[\s*")[^"]*"`).ReplaceAll(b, []byte(`${1}12345"`))
	})
	vi := fmt.Sprintf("%d/3", idx)
	if code, stdout, _ := runCmd("verify", "--shard", vi, forged); code != 1 || !strings.Contains(stdout, "FAIL") {
		t.Errorf("verify --shard of a forged shard: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := runCmd("verify", "--shard", fmt.Sprintf("%d/3", (idx+1)%3), victim); code != 1 || !strings.Contains(stdout, "field shard") {
		t.Errorf("verify --shard with the wrong index: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := runCmd("verify", "--shard", "3/3", victim); code != 2 || !strings.Contains(stderr, "out of range") {
		t.Errorf("verify --shard 3/3: exit %d, %q", code, stderr)
	}
}

// firstListedOK reports whether a shard manifest lists a file.
func firstListedOK(dir string) bool {
	var sm struct{ Files []struct{ Path string } }
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	return err == nil && json.Unmarshal(data, &sm) == nil && len(sm.Files) > 0
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	for rel, data := range readTree(t, src) {
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rehash edits file rel of a shard directory with edit and rewrites its
// SHA-256 in the shard manifest, so the forgery passes the hash check.
func rehash(t *testing.T, dir, rel string, edit func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	old, _ := os.ReadFile(p)
	nw := edit(old)
	if bytes.Equal(old, nw) {
		t.Fatalf("the edit of %s changed nothing", rel)
	}
	os.WriteFile(p, nw, 0o644)
	mp := filepath.Join(dir, "manifest.json")
	m, _ := os.ReadFile(mp)
	oh, nh := sha256.Sum256(old), sha256.Sum256(nw)
	m2 := bytes.Replace(m, fmt.Appendf(nil, "%x", oh), fmt.Appendf(nil, "%x", nh), 1)
	if bytes.Equal(m, m2) {
		t.Fatalf("%s's hash is not in the manifest", rel)
	}
	os.WriteFile(mp, m2, 0o644)
}

// TestCertifyShardCLI: an out-of-range --shard exits 2 before writing
// anything; with TEST_SHARD_STATUS_FILE set a sharded certify creates it
// (Bazel's sign that the test understands sharding).
func TestCertifyShardCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCmd("certify", "--out", out, "--ops", "mul", "--providers", "reference", "--cases", "1", "--shard", "4/4")
	if code != 2 || !strings.Contains(stderr, "out of range") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("--shard 4/4: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused certify created --out")
	}
	status := filepath.Join(t.TempDir(), "shard-status")
	t.Setenv(certificates.EnvShardStatus, status)
	t.Setenv(certificates.EnvShardIndex, "1")
	t.Setenv(certificates.EnvTotalShards, "2")
	if code, stdout, stderr := runCmd("certify", "--out", out, "--ops", "mul", "--providers", "reference", "--cases", "1"); code != 0 || !strings.Contains(stdout, "shard 1/2") {
		t.Fatalf("certify from the environment: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(status); err != nil {
		t.Fatalf("TEST_SHARD_STATUS_FILE not touched: %v", err)
	}
}

// TestEmptyShards: with more shards than files (one op, one provider: 7
// files, N = 10) some shards are empty; they verify, and all ten merge
// into the unsharded directory.
func TestEmptyShards(t *testing.T) {
	root := t.TempDir()
	args := []string{"--ops", "mul", "--providers", "reference", "--cases", "1"}
	full := filepath.Join(root, "full")
	if code, _, stderr := runCmd(append([]string{"certify", "--out", full}, args...)...); code != 0 {
		t.Fatal(stderr)
	}
	var dirs []string
	empty := 0
	for i := range 10 {
		d := filepath.Join(root, fmt.Sprint(i))
		sh := fmt.Sprintf("%d/10", i)
		code, stdout, stderr := runCmd(append([]string{"certify", "--out", d, "--shard", sh}, args...)...)
		if code != 0 {
			t.Fatalf("certify --shard %s: exit %d: %s", sh, code, stderr)
		}
		if strings.Contains(stdout, " 0 certificate files") {
			empty++
		}
		if code, stdout, stderr := runCmd("verify", "--shard", sh, d); code != 0 {
			t.Fatalf("verify --shard %s: exit %d\n%s%s", sh, code, stdout, stderr)
		}
		dirs = append(dirs, d)
	}
	if empty == 0 {
		t.Fatal("no shard was empty: the test does not test what it says")
	}
	// Every shard manifest, empty or not, matches the published schema;
	// one without its shard does not.
	cs, err := os.ReadFile(filepath.Join("..", "..", "certificates", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	schema, err := jsonschema.Compile(cs)
	if err != nil {
		t.Fatalf("certificates/schema.json: %v", err)
	}
	for _, d := range dirs {
		m, _ := os.ReadFile(filepath.Join(d, "manifest.json"))
		if err := schema.Validate(m); err != nil {
			t.Errorf("%s/manifest.json: %v", d, err)
		}
		noShard := regexp.MustCompile(`(?s) "shard": \{.*?\},\n`).ReplaceAll(m, nil)
		if bytes.Equal(noShard, m) || schema.Validate(noShard) == nil {
			t.Errorf("%s: the schema accepts a shard manifest without its shard", d)
		}
	}
	out := filepath.Join(root, "merged")
	if code, _, stderr := runCmd(append([]string{"merge", out}, dirs...)...); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	sameTree(t, "merge with empty shards", readTree(t, out), readTree(t, full))
}
