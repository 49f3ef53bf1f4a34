package main

import (
	"errors"
	"fmt"
	"io"
	"os/exec"

	"github.com/tlcheck/tlcheck/internal/adaptersbin"
	"github.com/tlcheck/tlcheck/internal/cli"
)

// childExit is the exit status of a command whose own messages are
// already on stderr: run returns it without a line of its own.
type childExit struct{ code int }

func (c *childExit) Error() string { return fmt.Sprintf("exit status %d", c.code) }

// runAdapters: `tlcheck adapters ARGS` runs the adapters module's command,
// tlcheck-adapters, with ARGS, found as package adaptersbin says.
// Its stdout and stderr are this command's. Its exit status 0 (no
// finding), 1 (a finding) or 2 (bad usage) is this command's; any other
// status — a crash, a signal, an exit code outside the convention — is
// reported as one line and exit 2, since tlcheck's exit codes are 0, 1, 2
// (and 3 for its own crash, main.go).
func runAdapters(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.Usagef("adapters: missing subcommand (run or cases; run 'tlcheck adapters --help')")
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return &cli.HelpError{Flags: cli.NewFlags("adapters")}
	}
	cmd, err := adaptersbin.Command(args, stderr)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && (ee.ExitCode() == cli.ExitFailed || ee.ExitCode() == cli.ExitBadUser):
		return &childExit{code: ee.ExitCode()}
	case errors.As(err, &ee):
		return cli.BadInput(fmt.Errorf("adapters: %s ended with %v, outside the exit codes 0, 1, 2", cmd.Path, ee.ProcessState))
	}
	return cli.BadInput(fmt.Errorf("adapters: %s: %w", cmd.Path, err))
}
