// Package adaptersbin finds, builds and checks the tlcheck-adapters
// binary that `tlcheck adapters` runs. The engine adapters (gorgonia,
// spago, GoMLX) live in their own module, github.com/tlcheck/tlcheck/adapters,
// so that this module depends on no engine; its command, tlcheck-adapters,
// is found in this order (Command):
//
//  1. the file named by $TLCHECK_ADAPTERS;
//  2. tlcheck-adapters beside this executable, then on $PATH, each only
//     when `tlcheck-adapters handshake` prints this tlcheck's release and
//     registry hash (Handshake; a stale build is skipped with one line on
//     stderr);
//  3. the adapters module of the checkout this tlcheck was built from,
//     built with `go build` into the user's cache directory under a name
//     keyed by that checkout's revision. The checkout is the directory the
//     compiler recorded for this package's source (runtime.Caller), not
//     the working directory: a directory above the working directory that
//     holds an adapters/go.mod is never built or run (issue 26 point 7: a
//     planted module above it was built and ran). The checkout's go.mod
//     must declare this module's path, and, when this binary records a VCS
//     revision, the checkout's HEAD must be that revision; a binary built
//     with -trimpath knows no checkout and builds nothing.
//
// Errors that mean bad input are cli.BadInput errors (exit 2).
package adaptersbin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/internal/version"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// Handshake is the line a matching tlcheck-adapters prints for
// `tlcheck-adapters handshake`: this tlcheck's release and registry hash.
func Handshake() string {
	return "tlcheck-adapters " + version.Version + " registry " + spec.RegistryHash()
}

// CheckHandshake runs `p handshake` (10 s at most) and reports, as an error
// naming p and both lines, a binary that is not this tlcheck's build:
// another release, another registry, or one that predates the handshake.
func CheckHandshake(p string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "handshake").Output()
	got := strings.TrimSpace(string(out))
	if i := strings.IndexByte(got, '\n'); i >= 0 {
		got = got[:i]
	}
	switch want := Handshake(); {
	case err != nil:
		return fmt.Errorf("%s (no handshake: %v; an older build?)", limits.Quote(p), err)
	case got != want:
		return fmt.Errorf("%s (it says %s, this tlcheck is %s)", limits.Quote(p), limits.Quote(got), limits.Quote(want))
	}
	return nil
}

// Command returns the command that runs tlcheck-adapters with args,
// found as the package comment says; an installed
// one (beside tlcheck, on $PATH) must pass the handshake, or it is
// skipped with a line on stderr. $TLCHECK_ADAPTERS is the user's explicit
// choice and is run as named.
func Command(args []string, stderr io.Writer) (*exec.Cmd, error) {
	if p := os.Getenv("TLCHECK_ADAPTERS"); p != "" {
		return exec.Command(p, args...), nil
	}
	var stale []string // installed binaries that failed the handshake
	try := func(p string) bool {
		if err := CheckHandshake(p); err != nil {
			stale = append(stale, err.Error())
			return false
		}
		return true
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "tlcheck-adapters")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && try(p) {
			return exec.Command(p, args...), nil
		}
	}
	if p, err := exec.LookPath("tlcheck-adapters"); err == nil && try(p) {
		return exec.Command(p, args...), nil
	}
	root, rev, err := checkout()
	if err != nil {
		why := "not found ($TLCHECK_ADAPTERS, beside tlcheck, $PATH)"
		if len(stale) > 0 {
			why = strings.Join(stale, "; ")
		}
		return nil, cli.BadInput(fmt.Errorf(`adapters: tlcheck-adapters %s, and %v: build it with go build -C adapters -o "$(go env GOPATH)/bin/tlcheck-adapters" ./cmd/tlcheck-adapters in a checkout`, why, err))
	}
	for _, s := range stale {
		fmt.Fprintf(stderr, "adapters: ignoring %s; using the checkout's\n", s)
	}
	bin, err := build(filepath.Join(root, "adapters"), rev, stderr)
	if err != nil {
		return nil, err
	}
	return exec.Command(bin, args...), nil
}

// checkout returns the root of the checkout this binary was built
// from, and the revision that names its build: the VCS revision the binary
// records, or, for a binary without one (go test, go run), "path-" and a
// hash of the root. See the package comment for the checks.
func checkout() (root, rev string, err error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", "", errors.New("this tlcheck records no source checkout (built with -trimpath)")
	}
	root = filepath.Dir(filepath.Dir(filepath.Dir(file))) // ROOT/internal/adaptersbin/adaptersbin.go
	mod, err := safeio.ReadFile(filepath.Join(root, "go.mod"), 1<<20)
	if err != nil {
		return "", "", fmt.Errorf("the checkout tlcheck was built from (%s) has no readable go.mod: %v", root, err)
	}
	self := "github.com/tlcheck/tlcheck"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path != "" {
		self = bi.Main.Path
	}
	if modulePath(mod) != self {
		return "", "", fmt.Errorf("%s declares module %s, not %s", filepath.Join(root, "go.mod"), limits.Quote(modulePath(mod)), self)
	}
	want := buildRevision()
	if want == "" {
		sum := sha256.Sum256([]byte(root))
		return root, "path-" + hex.EncodeToString(sum[:8]), nil
	}
	head, err := gitHead(root)
	if err != nil {
		return "", "", fmt.Errorf("the checkout tlcheck was built from (%s): %v", root, err)
	}
	if head != want {
		return "", "", fmt.Errorf("the checkout tlcheck was built from (%s) is at %s, tlcheck at %s: rebuild tlcheck", root, limits.Short(head), want)
	}
	return root, want, nil
}

// buildRevision is the vcs.revision this binary records, or "".
func buildRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}

// modulePath is the path of a go.mod's module directive, or "".
func modulePath(mod []byte) string {
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// gitHead reads the commit a git checkout's HEAD names, from the files
// alone (running git would run the checkout's configured hooks and
// helpers): .git is a directory or a "gitdir:" file (a worktree), HEAD a
// commit or "ref: REF", REF a file under the git directory or its common
// directory, or a line of packed-refs.
func gitHead(root string) (string, error) {
	gitdir := filepath.Join(root, ".git")
	if st, err := os.Stat(gitdir); err != nil {
		return "", err
	} else if !st.IsDir() {
		b, err := safeio.ReadFile(gitdir, 4096)
		if err != nil {
			return "", err
		}
		g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok {
			return "", errors.New(".git is neither a directory nor a gitdir file")
		}
		if !filepath.IsAbs(g) {
			g = filepath.Join(root, g)
		}
		gitdir = g
	}
	dirs := []string{gitdir}
	if b, err := safeio.ReadFile(filepath.Join(gitdir, "commondir"), 4096); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		dirs = append(dirs, c)
	}
	b, err := safeio.ReadFile(filepath.Join(gitdir, "HEAD"), 4096)
	if err != nil {
		return "", err
	}
	head := strings.TrimSpace(string(b))
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		return head, nil
	}
	if strings.Contains(ref, "..") {
		return "", fmt.Errorf("HEAD names %s", limits.Quote(ref))
	}
	for _, d := range dirs {
		if b, err := safeio.ReadFile(filepath.Join(d, filepath.FromSlash(ref)), 4096); err == nil {
			return strings.TrimSpace(string(b)), nil
		}
		if b, err := safeio.ReadFile(filepath.Join(d, "packed-refs"), 64<<20); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if h, r, ok := strings.Cut(line, " "); ok && r == ref {
					return h, nil
				}
			}
		}
	}
	return "", fmt.Errorf("HEAD names %s, which is not found", limits.Quote(ref))
}

// build builds the checkout's tlcheck-adapters (module directory
// mod) into the user's cache directory, under a directory named by the
// checkout's revision rev (so that two checkouts never run each other's
// binary), and returns its path. It builds
// rather than `go run`s, so that the command's own exit status (1 for a
// finding, 2 for bad usage) reaches the user unchanged: go run reports
// any non-zero status as its own exit 1. The go command's build cache
// makes a rebuild of an unchanged checkout take about a second.
func build(mod, rev string, stderr io.Writer) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", cli.BadInput(fmt.Errorf("adapters: found %s but no go command on $PATH to build it", filepath.Join(mod, "go.mod")))
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	out := filepath.Join(cache, "tlcheck", "adapters-"+rev, "tlcheck-adapters")
	_, statErr := os.Stat(out)
	first := statErr != nil
	start := time.Now()
	if first {
		fmt.Fprintf(stderr, "adapters: building tlcheck-adapters from %s into %s (the first build takes a minute or two; later runs reuse it)\n", mod, out)
	}
	var msg bytes.Buffer
	build := exec.Command(gobin, "build", "-o", out, "./cmd/tlcheck-adapters")
	build.Dir, build.Stdout, build.Stderr = mod, &msg, &msg
	if err := build.Run(); err != nil {
		return "", cli.BadInput(fmt.Errorf("adapters: building %s: %v: %s", mod, err, strings.TrimSpace(msg.String())))
	}
	if first {
		fmt.Fprintf(stderr, "adapters: built in %.0f s\n", time.Since(start).Seconds())
	}
	return out, nil
}
