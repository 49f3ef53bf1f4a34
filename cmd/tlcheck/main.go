// Command tlcheck is a proof-obligation checker and differential tester
// for autodiff runtimes. It exits 0 when every obligation holds, 1 when an
// obligation or comparison fails, and 2 on bad input or usage — including
// a report that cannot be written to stdout — printing one line on stderr
// for any failure; 3 is tlcheck's own crash (a recovered panic: a bug to
// report, never bad input). `tlcheck COMMAND --help` (or -h, -help, or
// `tlcheck help COMMAND`) prints the command's usage, derived from the
// flag set it parses, and exits 0; a bare `tlcheck` prints the command
// list on stderr and exits 2; `tlcheck --version` is `tlcheck version`.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/version"
)

// command is one subcommand. Its usage is derived from the flag set its
// run function parses (see commandUsage), so it cannot omit a flag.
type command struct {
	summary string
	// args is the synopsis of the positional arguments ("DIR"), if any.
	args string
	run  func(args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"gate":           {"the release gate: check every obligation, certify, verify, summarise (exit 0 only if everything holds)", "", runGate},
		"help":           {"list the commands, or describe one", "[COMMAND]", nil},
		"version":        {"print the tool version, the module version and the VCS revision it was built from", "", runVersion},
		"certify":        {"write deterministic certificates of every obligation to a directory", "", runCertify},
		"verify":         {"re-derive every claim of a certificate directory independently", "DIR", runVerify},
		"merge":          {"merge the shard directories of certify --shard I/N into the directory the unsharded run writes, byte for byte", "OUT SHARD_DIR…", runMerge},
		"check":          {"check every primitive's local obligations (adjointness, linearity, zero preservation, derivatives) and the graph-level ones", "", runCheck},
		"quickstart-mlp": {"train the quickstart MLP and print TorchLean's transcript digit for digit", "", runQuickstart},
		"tape-example":   {"record the chapter's x⊙x + x⊙x tape and check its gradients exactly", "", runTapeExample},
		"eval":           {"evaluate an IR graph over a scalar along an execution path", "", runEval},
		"grad":           {"differentiate a model's output (⟨cotangent, output⟩, cotangent ones by default) w.r.t. its input and every payload parameter, or every initializer of an ONNX model", "", runGrad},
		"diff":           {"run every execution path and scalar on one IR graph and report the first node where two disagree", "", runDiff},
		"import":         {"import an ONNX model: write its canonical IR graph, payload and a map of inputs, outputs, initializers and node origins", "", runImport},
		"compare":        {"evaluate an ONNX model exactly on its recorded inputs and check each recorded output element against the a-priori float32 error bound (exit 1 if one lies outside)", "", runCompare},
		"lean":           {"the Lean side: audit a lean4export file, emit certificates as Lean modules, or build and audit the Lean project", "audit|check|emit [flags]", runLean},
		"view":           {"draw an IR or ONNX graph: tape, gradients, reverse traversal order or first disagreement, as HTML, SVG or DOT", "", runView},
		"compare-grad":   {"check gradients another runtime (PyTorch, JAX) computed against the exact gradient, within the binary32 reverse-mode bound; exit 1 if any element is outside", "", runCompareGrad},
		"adapters":       {"check other Go autodiff engines (gorgonia, spago, GoMLX) against the exact rules: engine × case × obligation × verdict; exit 1 on a finding (runs the adapters module's tlcheck-adapters: $TLCHECK_ADAPTERS, beside tlcheck, on $PATH, or built from the checkout's adapters/)", "run|cases [flags]", runAdapters},
		"tensor":         {"convert a tensor file (an ONNX TensorProto .pb, or JSON) into the exact JSON tensor {\"shape\",\"values\"} every --input reads", "FILE", runTensor},
		"plan":           {"plan an IR graph's kernels against a backend profile and print the plan report; exit 1 when a node cannot be planned or the capsules do not bind", "", runPlan},
	}
}

// softMemoryLimit is the Go heap's soft limit (runtime/debug.SetMemoryLimit)
// unless GOMEMLIMIT sets another: the collector runs harder as the heap
// nears it, so that the peak resident size stays near the live data that
// the limits bound (docs/security.md), rather than up to twice it
// (GOGC=100) — it never makes an allocation fail.
const softMemoryLimit = 1 << 30

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns its exit code. It never
// panics on user input: a panic inside a command is reported as an
// internal error, one line and exit 3 (cli.ExitCrash), rather than a stack
// trace. (The Go runtime's own fatal errors — out of memory — cannot be
// recovered; they exit 2 with the runtime's dump, which the limits and the
// soft memory limit exist to prevent.) Every command's
// stdout is a cli.Output: a report that cannot be written (a full disk,
// `> /dev/full`) is an error, exit 2, whatever the command found.
func run(args []string, stdout, stderr io.Writer) (code int) {
	out := cli.NewOutput(stdout)
	defer func() {
		if r := recover(); r != nil {
			cli.Report(stderr, fmt.Errorf("internal error: %v (please report this)", r))
			code = cli.ExitCrash
		}
	}()
	err := dispatch(args, out, stderr)
	if werr := out.Err(); werr != nil {
		if err != nil && !errors.Is(err, werr) {
			werr = fmt.Errorf("%w (and: %v)", werr, err)
		}
		err = cli.BadInput(werr)
	}
	var ce *childExit
	if errors.As(err, &ce) {
		return ce.code
	}
	if err != nil {
		cli.Report(stderr, err)
		return cli.Code(err)
	}
	return cli.ExitOK
}

// errNoCommand is the usage failure of a bare `tlcheck`: the usage goes to
// stderr and the exit code is 2, as for the go command.
var errNoCommand = errors.New("no command")

// dispatch runs one command line against stdout.
func dispatch(args []string, stdout io.Writer, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 {
		printHelp(stderr)
		return cli.BadInput(fmt.Errorf("%w given (run 'tlcheck help')", errNoCommand))
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	if name == "help" {
		if len(args) == 2 && args[1] == "limits" {
			return printLimitsHelp(stdout)
		}
		if len(args) == 3 && (args[1] == "adapters" || args[1] == "lean") && !strings.HasPrefix(args[2], "-") {
			// A subcommand's help: tlcheck help adapters run.
			return dispatch([]string{args[1], args[2], "--help"}, stdout, stderr)
		}
		if len(args) > 2 {
			return cli.Usagef("help: unexpected argument %s (usage: tlcheck help [COMMAND] | tlcheck help adapters|lean SUBCOMMAND | tlcheck help limits)", cli.Quoted(args[2]))
		}
		if len(args) == 2 {
			topic := args[1]
			if topic == "-h" || topic == "-help" || topic == "--help" {
				topic = "help"
			}
			c, ok := cmds[topic]
			if !ok {
				return cli.Usagef("unknown command %s (run 'tlcheck help')", cli.Quoted(args[1]))
			}
			return commandUsage(stdout, topic, c)
		}
		printHelp(stdout)
		return nil
	}
	c, ok := cmds[name]
	if !ok {
		if strings.HasPrefix(name, "-") {
			return cli.Usagef("unknown flag %s before the command (run 'tlcheck help')", cli.Quoted(name))
		}
		return cli.Usagef("unknown command %s (run 'tlcheck help')", cli.Quoted(name))
	}
	err := c.run(args[1:], stdout, stderr)
	var h *cli.HelpError
	if errors.As(err, &h) {
		return cli.WriteUsage(stdout, synopsis(name, c, h.Flags), c.summary, h.Flags)
	}
	return err
}

// synopsis is a command's usage line: "tlcheck NAME [flags] ARGS".
func synopsis(name string, c command, fs *flag.FlagSet) string {
	s := "tlcheck " + name
	n := 0
	if fs != nil {
		fs.VisitAll(func(*flag.Flag) { n++ })
	}
	if n > 0 {
		s += " [flags]"
	}
	if c.args != "" {
		s += " " + c.args
	}
	return s
}

// commandUsage prints a command's usage — the same text as
// `tlcheck NAME --help`. The flag set is the one the command itself
// parses: its run function is called with --help, and every run function
// parses its flags before it does anything else, so this runs nothing
// (TestHelpListsEveryFlag holds every command to it).
func commandUsage(w io.Writer, name string, c command) error {
	if c.run == nil {
		return cli.WriteUsage(w, synopsis(name, c, nil), c.summary, cli.NewFlags(name))
	}
	fs, err := commandFlags(name, c)
	if err != nil {
		return err
	}
	return cli.WriteUsage(w, synopsis(name, c, fs), c.summary, fs)
}

// commandFlags returns the flag set a command parses, by asking it for
// help with its output discarded.
func commandFlags(name string, c command) (*flag.FlagSet, error) {
	err := c.run([]string{"--help"}, io.Discard, io.Discard)
	var h *cli.HelpError
	if !errors.As(err, &h) {
		return nil, fmt.Errorf("internal error: command %s does not answer --help (got %v)", name, err)
	}
	return h.Flags, nil
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
	fmt.Fprintf(w, "\nexit codes: 0 all obligations hold, 1 an obligation failed, 2 bad input or usage (or output that cannot be written)\n")
	fmt.Fprintf(w, "run 'tlcheck COMMAND --help' or 'tlcheck help COMMAND' for a command's flags, 'tlcheck help limits' for the resource limits; 'tlcheck --version' for the version\n")
}

func runVersion(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("version")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	for _, l := range version.ReadBuild().Lines() {
		fmt.Fprintln(stdout, l)
	}
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
