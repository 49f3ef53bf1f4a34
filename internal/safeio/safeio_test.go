package safeio

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withTimeout runs f and fails the test if it does not return within d:
// a reader that blocks on a FIFO or spins on /dev/zero is the fault these
// tests catch, so they must not hang when it is present.
func withTimeout(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("did not return within %v (blocked on a special file?)", d)
	}
}

func TestRefusesSpecialFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs or /dev/zero")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	reg := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(reg, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "fifolink")
	if err := os.Symlink(fifo, fifoLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		want       string // "" when the read succeeds
	}{
		{"fifo", fifo, "is a named pipe (FIFO), not a regular file"},
		{"link to a fifo", fifoLink, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "/dev/zero", "is a character device, not a regular file"},
		{"/dev/null", "/dev/null", "is a character device, not a regular file"},
		{"directory", dir, "is a directory, not a regular file"},
		{"missing", filepath.Join(dir, "nope"), "no such file or directory"},
		{"regular", reg, ""},
		{"link to a regular file", link, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withTimeout(t, 5*time.Second, func() {
				data, err := ReadFile(tc.path, 1<<20)
				if tc.want == "" {
					if err != nil || string(data) != "0123456789" {
						t.Errorf("ReadFile(%s) = %q, %v; want the file's bytes", tc.name, data, err)
					}
					return
				}
				if err == nil || err.Error() != tc.want {
					t.Errorf("ReadFile(%s) error = %v, want %q", tc.name, err, tc.want)
				}
				if err != nil && strings.Contains(err.Error(), tc.path) {
					t.Errorf("error %q repeats the path", err)
				}
			})
		})
	}
}

func TestNotRegularErrorType(t *testing.T) {
	_, err := Open(t.TempDir())
	var nr *NotRegularError
	if !errors.As(err, &nr) || !nr.Mode.IsDir() {
		t.Fatalf("Open(dir) = %v, want a *NotRegularError for a directory", err)
	}
}

func TestReadFileBudget(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		size, max int64
		ok        bool
	}{
		{0, 0, true}, {0, 10, true}, {10, 10, true}, {11, 10, false}, {5000, 4999, false}, {5000, 5000, true}, {100000, 1 << 20, true},
	} {
		p := filepath.Join(dir, "f")
		want := make([]byte, tc.size)
		for i := range want {
			want[i] = byte(i * 7)
		}
		if err := os.WriteFile(p, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p, tc.max)
		if tc.ok {
			if err != nil || string(got) != string(want) {
				t.Errorf("size %d max %d: got %d bytes, %v; want the file", tc.size, tc.max, len(got), err)
			}
			continue
		}
		var tl *TooLargeError
		if !errors.As(err, &tl) || tl.Max != tc.max || tl.Size != tc.size {
			t.Errorf("size %d max %d: error %v, want TooLargeError{%d, %d}", tc.size, tc.max, err, tc.size, tc.max)
		}
	}
}

// TestReadAllGrowing: a file that grows after its size was taken is
// read to at most max+1 bytes and refused.
func TestReadAllGrowing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(p, make([]byte, 10000), 0o600); err != nil { // same inode, grown
		t.Fatal(err)
	}
	// Stat now sees 10000 bytes: refused by its size.
	if _, err := ReadAll(f, 100); err == nil {
		t.Fatal("grown file accepted")
	}
}

// TestLinks: a link named directly is followed wherever it leads (Open);
// inside a walked directory (StatIn) only a link that stays inside is.
// A loop and a dangling link are refused, each named, by both.
func TestLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges")
	}
	base := t.TempDir()
	dir, outside := filepath.Join(base, "dir"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside, filepath.Join(dir, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "real.pb"), filepath.Join(outside, "secret.pb")} {
		if err := os.WriteFile(p, []byte("data"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"inside.pb":     "real.pb",
		"sub/up.pb":     "../real.pb",
		"out.pb":        filepath.Join(outside, "secret.pb"),
		"outrel.pb":     "../outside/secret.pb",
		"loop.pb":       "loop2.pb",
		"loop2.pb":      "loop.pb",
		"dangling.pb":   "nothing.pb",
		"outdir":        outside,
		"danglingout":   filepath.Join(outside, "nothing.pb"),
		"sub/escape.pb": "../../outside/secret.pb",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skipf("symlink: %v", err)
		}
	}
	type want int
	const (
		ok want = iota
		escape
		loop
		dangling
	)
	rows := []struct {
		name       string
		open, stat want // Open of dir/name; StatIn(dir, name)
	}{
		{"real.pb", ok, ok},
		{"inside.pb", ok, ok},
		{"sub/up.pb", ok, ok},
		{"out.pb", ok, escape},
		{"outrel.pb", ok, escape},
		{"sub/escape.pb", ok, escape},
		{"outdir/secret.pb", ok, escape},
		{"loop.pb", loop, loop},
		{"dangling.pb", dangling, dangling},
		{"danglingout", dangling, dangling},
	}
	judge := func(err error) want {
		var e *EscapeError
		var l *LoopError
		var d *DanglingError
		switch {
		case err == nil:
			return ok
		case errors.As(err, &e):
			return escape
		case errors.As(err, &l):
			return loop
		case errors.As(err, &d):
			return dangling
		}
		return -1
	}
	for _, r := range rows {
		f, err := Open(filepath.Join(dir, r.name))
		if err == nil {
			f.Close()
		}
		if got := judge(err); got != r.open {
			t.Errorf("Open(%s): %v, want kind %d", r.name, err, r.open)
		}
		if err != nil && strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("Open(%s): error of several lines: %q", r.name, err)
		}
		_, err = StatIn(dir, r.name)
		if got := judge(err); got != r.stat {
			t.Errorf("StatIn(%s): %v, want kind %d", r.name, err, r.stat)
		}
	}
	// The directory itself may be a link: the user named it.
	ln := filepath.Join(base, "dirlink")
	if err := os.Symlink(dir, ln); err != nil {
		t.Fatal(err)
	}
	if _, err := StatIn(ln, "inside.pb"); err != nil {
		t.Errorf("StatIn through a linked directory: %v", err)
	}
}
