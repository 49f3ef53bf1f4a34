package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCertifyOutputDirectory: certify refuses a non-empty --out with exit
// 2 and writes nothing; --force replaces a directory tlcheck wrote (its
// manifest lists every file), and refuses, keeping it, a directory with a
// file its manifest does not list (issue 26 point 6).
func TestCertifyOutputDirectory(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "adjointness", "stale.json")
	os.MkdirAll(filepath.Dir(stale), 0o755)
	os.WriteFile(stale, []byte("{}"), 0o644)
	args := []string{"certify", "--out", dir, "--ops", "mul", "--providers", "reference", "--cases", "2"}
	code, _, stderr := runCmd(args...)
	if code != 2 || !strings.Contains(stderr, "not empty") || !strings.Contains(stderr, "--force") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("non-empty --out: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		t.Fatal("a refused certify wrote a manifest")
	}
	if code, _, stderr := runCmd(append(args, "--force")...); code != 2 || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("--force over a file tlcheck did not write: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatal("--force removed a file tlcheck did not write")
	}
	os.RemoveAll(filepath.Dir(stale))
	for i := 0; i < 2; i++ {
		if code, _, stderr := runCmd(append(args, "--force", "--seed", strconv.Itoa(i))...); code != 0 {
			t.Fatalf("--force run %d: exit %d, %s", i, code, stderr)
		}
		if code, stdout, _ := runCmd("verify", dir); code != 0 {
			t.Fatalf("verify after --force: exit %d\n%s", code, stdout)
		}
	}
}

// TestGateOwnsItsDirectory: the gate replaces its certificate directory
// run after run, and refuses (exit 2, before any work) a non-empty
// directory that is not one, or one holding a file it did not write.
func TestGateOwnsItsDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "certs")
	for run := 0; run < 2; run++ {
		if code, stdout, stderr := runCmd("gate", "--out", out, "--cases", "3", "--graphs", "2", "--cert-cases", "2"); code != 0 {
			t.Fatalf("gate run %d: exit %d\n%s%s", run, code, stdout, stderr)
		}
	}
	mine := filepath.Join(out, "adjointness", "mine.json")
	os.WriteFile(mine, []byte("{}"), 0o644)
	if code, _, stderr := runCmd("gate", "--out", out, "--cases", "3", "--graphs", "2", "--cert-cases", "2"); code != 2 || !strings.Contains(stderr, "does not list") {
		t.Fatalf("gate over a file it did not write: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatal("the gate removed a file it did not write")
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	code, _, stderr := runCmd("gate", "--out", other, "--cases", "3", "--graphs", "2", "--cert-cases", "2")
	if code != 2 || !strings.Contains(stderr, "not a certificate directory") {
		t.Fatalf("gate into a foreign directory: exit %d, %q", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(other, "notes.txt")); err != nil || string(b) != "mine" {
		t.Fatal("the gate touched a directory it does not own")
	}
}

// TestVerifyEscapesNames: a file name with a newline cannot forge an
// "ok" line in verify's table.
func TestVerifyEscapesNames(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCmd("certify", "--out", dir, "--ops", "mul", "--providers", "reference", "--cases", "2"); code != 0 {
		t.Fatal(stderr)
	}
	forged := "x\nok  adjointness  adjointness/forged.json  2 cases"
	if err := os.WriteFile(filepath.Join(dir, "adjointness", forged), []byte("{}"), 0o644); err != nil {
		t.Skip("file system refuses the name:", err)
	}
	code, stdout, _ := runCmd("verify", dir)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "ok") && strings.Contains(line, "forged") {
			t.Fatalf("a forged line reached the table:\n%s", stdout)
		}
	}
	if !strings.Contains(stdout, `"adjointness/x\nok`) {
		t.Fatalf("the name is not printed escaped:\n%s", stdout)
	}
}

// TestCertifyKilled: `certify --force` killed (SIGKILL) at any moment over
// a valid certificate directory leaves that directory or the new one —
// whole, verifying, its manifest byte for byte one of the two runs' —
// never a mix or an empty directory (issue 26 point 6: a kill 0.05 s into
// --force left one file). The kill moments spread over a measured run.
func TestCertifyKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs certify as a process a dozen times")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "certs")
	args := func(seed int) []string {
		return []string{"certify", "--out", dir, "--force", "--ops", "mul,add,relu", "--providers", "reference", "--cases", "2", "--seed", strconv.Itoa(seed)}
	}
	manifest := func() []byte {
		b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
		return b
	}
	start := func(seed int) *exec.Cmd {
		cmd := exec.Command(exe, args(seed)...)
		cmd.Env = append(os.Environ(), mainEnv+"=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	// The two runs' manifests, and how long one run takes.
	if code, _, stderr := runCmd(args(2)...); code != 0 {
		t.Fatalf("seed 2: exit %d, %s", code, stderr)
	}
	newer := manifest()
	began := time.Now()
	if err := start(1).Wait(); err != nil {
		t.Fatal(err)
	}
	span := time.Since(began)
	older := manifest()
	if bytes.Equal(older, newer) {
		t.Fatal("the two seeds give one manifest: the test cannot tell the runs apart")
	}
	for k := 0; k <= 12; k++ {
		cmd := start(2)
		time.Sleep(span * time.Duration(k) / 10)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		got := manifest()
		if !bytes.Equal(got, older) && !bytes.Equal(got, newer) {
			t.Fatalf("killed at %d/10 of a run: the manifest is neither run's (%d bytes)", k, len(got))
		}
		if code, stdout, stderr := runCmd("verify", dir); code != 0 {
			t.Fatalf("killed at %d/10 of a run: verify exit %d\n%s%s", k, code, stdout, stderr)
		}
		if bytes.Equal(got, newer) { // put the older directory back
			if code, _, stderr := runCmd(args(1)...); code != 0 {
				t.Fatalf("restore: exit %d, %s", code, stderr)
			}
		}
	}
}
