// Command tlcheck is a proof-obligation checker and differential tester
// for autodiff runtimes. It exits 0 when every obligation holds, 1 when an
// obligation or comparison fails, and 2 on bad input or usage, printing
// one line on stderr for any failure.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/version"
)

// command is one subcommand.
type command struct {
	summary string
	usage   string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"gate":           {"the release gate: check every obligation, certify, verify, summarise (exit 0 only if everything holds)", "tlcheck gate [--out DIR] [--junit FILE] [--json] [--seed S] [--cases N] [--cert-cases N]", runGate},
		"help":           {"list the commands, or describe one", "tlcheck help [COMMAND]", nil},
		"version":        {"print the tool version", "tlcheck version", runVersion},
		"certify":        {"write deterministic certificates of every obligation to a directory", "tlcheck certify --out DIR [--seed S] [--cases N] [--ops …] [--providers …]", runCertify},
		"verify":         {"re-derive every claim of a certificate directory independently", "tlcheck verify DIR", runVerify},
		"check":          {"check every primitive's local obligations (adjointness, linearity, zero preservation, derivatives)", "tlcheck check [--ops all|none|a,b,…] [--cases N] [--graphs N] [--graph-obligations all|a,b,…] [--case I] [--seed S] [--json] [--plant-fault OP]", runCheck},
		"quickstart-mlp": {"train the quickstart MLP and print TorchLean's transcript digit for digit", "tlcheck quickstart-mlp [--steps N] [--seed S] [--execution eager|typed-graph] [--arithmetic native|ieee] [--device cpu|cuda] [--show-backend]", runQuickstart},
		"tape-example":   {"record the chapter's x⊙x + x⊙x tape and check its gradients exactly", "tlcheck tape-example [--scalar rat|f64|f32] [--detach]", runTapeExample},
		"eval":           {"evaluate an IR graph over a scalar along an execution path", "tlcheck eval --graph G.json [--payload P.json] --input X.json [--scalar rat|interval|binary32|f32|f64] [--path ir|forward-graph|tape|typed-graph] [--all] [--json]", runEval},
		"grad":           {"differentiate an IR graph's scalar output w.r.t. its input and every payload parameter", "tlcheck grad --graph G.json [--payload P.json] --input X.json [--scalar rat|f32|f64] [--path tape|typed-graph] [--json]", runGrad},
		"diff":           {"run every execution path and scalar on one IR graph and report the first node where two disagree", "tlcheck diff --graph G.json [--payload P.json] --input X.json [--cotangent C.json] [--scalars all|rat,f32,f64,binary32,interval] [--json]", runDiff},
		"plan":           {"plan an IR graph's kernels against a backend profile and print the plan report", "tlcheck plan --graph G.json [--profile checked_cpu|checked_cuda|fast_cpu]", runPlan},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns its exit code. It never
// panics on user input: a panic inside a command is reported as an
// internal error (exit 2) rather than a stack trace.
func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			cli.Report(stderr, fmt.Errorf("internal error: %v (please report this)", r))
			code = cli.ExitBadUser
		}
	}()
	if len(args) == 0 {
		printHelp(stdout)
		return cli.ExitOK
	}
	name := args[0]
	cmds := commands()
	if name == "help" || name == "-h" || name == "--help" {
		if len(args) > 1 {
			c, ok := cmds[args[1]]
			if !ok {
				cli.Report(stderr, cli.Usagef("unknown command %q (run 'tlcheck help')", args[1]))
				return cli.ExitBadUser
			}
			fmt.Fprintf(stdout, "%s\n\n  %s\n", c.usage, c.summary)
			return cli.ExitOK
		}
		printHelp(stdout)
		return cli.ExitOK
	}
	c, ok := cmds[name]
	if !ok || c.run == nil {
		cli.Report(stderr, cli.Usagef("unknown command %q (run 'tlcheck help')", name))
		return cli.ExitBadUser
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		cli.Report(stderr, err)
		return cli.Code(err)
	}
	return cli.ExitOK
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "tlcheck %s — proof obligations and differential tests for autodiff runtimes\n\nusage: tlcheck COMMAND [flags]\n\ncommands:\n", version.Version)
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, cmds[n].summary)
	}
	fmt.Fprintf(w, "\nexit codes: 0 all obligations hold, 1 an obligation failed, 2 bad input or usage\n")
	fmt.Fprintf(w, "run 'tlcheck help COMMAND' for a command's flags\n")
}

func runVersion(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("version")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tlcheck %s\n", version.Version)
	return nil
}

// oneOf validates an enumerated flag value.
func oneOf(flagName, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return cli.Usagef("--%s: unknown value %q (want %s)", flagName, v, strings.Join(allowed, "|"))
}
