package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
)

// The engine adapters (gorgonia, spago, GoMLX) live in their own module,
// github.com/tlcheck/tlcheck/adapters, so that this module depends on no
// engine. `tlcheck adapters ARGS` runs that module's command,
// tlcheck-adapters, with ARGS, found in this order (see adaptersCommand):
//
//  1. the file named by $TLCHECK_ADAPTERS;
//  2. tlcheck-adapters beside this executable, then on $PATH;
//  3. in a checkout: the adapters module in the working directory or the
//     nearest parent that has adapters/go.mod, built with `go build` into
//     the user's cache directory (buildAdapters).
//
// Its stdout and stderr are this command's, and its exit status (0 no
// finding, 1 a finding, 2 bad usage) is this command's.
// childExit is the exit status of a command whose own messages are
// already on stderr: run returns it without a line of its own.
type childExit struct{ code int }

func (c *childExit) Error() string { return fmt.Sprintf("exit status %d", c.code) }

func runAdapters(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.Usagef("adapters: missing subcommand (run or cases; run 'tlcheck adapters --help')")
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return &cli.HelpError{Flags: cli.NewFlags("adapters")}
	}
	cmd, err := adaptersCommand(args)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return &childExit{code: ee.ExitCode()}
	}
	return cli.BadInput(fmt.Errorf("adapters: %s: %w", cmd.Path, err))
}

// adaptersCommand finds tlcheck-adapters (see adaptersHelp).
func adaptersCommand(args []string) (*exec.Cmd, error) {
	if p := os.Getenv("TLCHECK_ADAPTERS"); p != "" {
		return exec.Command(p, args...), nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "tlcheck-adapters")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return exec.Command(p, args...), nil
		}
	}
	if p, err := exec.LookPath("tlcheck-adapters"); err == nil {
		return exec.Command(p, args...), nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("adapters: %w", err))
	}
	for {
		mod := filepath.Join(dir, "adapters", "go.mod")
		if _, err := os.Stat(mod); err == nil {
			bin, err := buildAdapters(filepath.Dir(mod))
			if err != nil {
				return nil, err
			}
			return exec.Command(bin, args...), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return nil, cli.BadInput(errors.New(`adapters: tlcheck-adapters not found ($TLCHECK_ADAPTERS, beside tlcheck, $PATH) and no adapters/go.mod above the working directory: build it with go build -C adapters -o "$(go env GOPATH)/bin/tlcheck-adapters" ./cmd/tlcheck-adapters in a checkout`))
}

// buildAdapters builds the checkout's tlcheck-adapters (module directory
// mod) into the user's cache directory and returns its path. It builds
// rather than `go run`s, so that the command's own exit status (1 for a
// finding, 2 for bad usage) reaches the user unchanged: go run reports
// any non-zero status as its own exit 1. The go command's build cache
// makes a rebuild of an unchanged checkout take about a second.
func buildAdapters(mod string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", cli.BadInput(fmt.Errorf("adapters: found %s but no go command on $PATH to build it", filepath.Join(mod, "go.mod")))
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	out := filepath.Join(cache, "tlcheck", "tlcheck-adapters")
	var msg bytes.Buffer
	build := exec.Command(gobin, "build", "-o", out, "./cmd/tlcheck-adapters")
	build.Dir, build.Stdout, build.Stderr = mod, &msg, &msg
	if err := build.Run(); err != nil {
		return "", cli.BadInput(fmt.Errorf("adapters: building %s: %v: %s", mod, err, strings.TrimSpace(msg.String())))
	}
	return out, nil
}
