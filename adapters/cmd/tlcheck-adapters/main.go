// Command tlcheck-adapters checks other Go autodiff engines against
// tlcheck's exact rules (package harness): `tlcheck-adapters run` prints
// the table engine × case × obligation × verdict, each finding with its
// smallest counterexample, and exits 1 on any finding. It lives in the
// adapters module, so that the main module does not depend on the
// engines; `tlcheck adapters …` runs it.
//
//	tlcheck-adapters run [--engine LIST] [--engine-cmd CMD] [--timeout D] [--memory MiB] [--case LIST] [--random N [--seed S]] [--json] [--all]
//	tlcheck-adapters cases [--case LIST] [--random N [--seed S]]
//
// --engine torch,jax,onnxruntime (or python) runs the protocol engines of
// engines/python (docs/engines.md); --engine-cmd runs any
// tlcheck.engine.v1 engine.
//
// --random N appends N random DAG cases (harness.RandomCases, seed S,
// default 1; N ≤ harness.MaxRandom) to the selected cases; --case none
// selects no fixed case, so that only the random ones run.
//
// Exit codes: 0 no finding, 1 a finding, 2 bad usage.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/adapters/harness"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/version"
	"github.com/tlcheck/tlcheck/spec"
)

// engineList is engines, replaced by tests to plant a faulty engine.
var engineList = engines

func main() {
	// gorgonia's lisp machine writes err.dot into the working directory
	// when it refuses a graph (vm_genera.go, checkRoots); the command reads
	// no file, so it runs in a private directory removed at exit.
	dir, err := os.MkdirTemp("", "tlcheck-adapters-")
	if err == nil && os.Chdir(dir) == nil {
		code := run(os.Args[1:], os.Stdout, os.Stderr)
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) (code int) {
	out := cli.NewOutput(stdout)
	defer func() {
		if r := recover(); r != nil {
			cli.Report(stderr, fmt.Errorf("adapters: internal error: %v (please report this)", r))
			code = cli.ExitBadUser
		}
	}()
	err := dispatch(args, out, stderr)
	if werr := out.Err(); werr != nil && err == nil {
		err = cli.BadInput(werr)
	}
	var h *cli.HelpError
	if errors.As(err, &h) {
		if werr := cli.WriteUsage(out, "tlcheck adapters "+strings.TrimPrefix(h.Flags.Name(), "adapters ")+" [flags]", summaries[h.Flags.Name()], h.Flags); werr != nil {
			cli.Report(stderr, cli.BadInput(werr))
			return cli.ExitBadUser
		}
		return 0
	}
	if err != nil {
		cli.Report(stderr, err)
	}
	return cli.Code(err)
}

var summaries = map[string]string{
	"adapters run":   "check every engine on every case: the table engine × case × obligation × verdict, each finding with its smallest counterexample; exit 1 on a finding",
	"adapters cases": "list the cases: name, primitives, exact inputs and cotangent (the data a replay needs)",
}

const usage = "usage: tlcheck adapters run [--engine LIST] [--engine-cmd CMD] [--timeout D] [--memory MiB] [--case LIST] [--random N [--seed S]] [--json] [--all] | tlcheck adapters cases [--case LIST] [--random N [--seed S]]"

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.Usagef("adapters: missing subcommand (run or cases; %s)", usage)
	}
	switch args[0] {
	case "run":
		return runRun(args[1:], stdout, stderr)
	case "cases":
		return runCases(args[1:], stdout)
	case "handshake":
		// tlcheck's version handshake (cmd/tlcheck/adapters.go): a binary
		// on $PATH or beside tlcheck is run only when it names the same
		// release and registry as the tlcheck that calls it.
		_, err := fmt.Fprintln(stdout, handshake())
		return err
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		fmt.Fprintln(stdout, "engines: "+strings.Join(engineNames(), ", ")+"; protocol engines: "+strings.Join(protocolEngines, ", ")+" (python: all three)")
		return nil
	}
	return cli.Usagef("adapters: unknown subcommand %s (run or cases)", cli.Quoted(args[0]))
}

// handshake is the line `tlcheck-adapters handshake` prints: the release
// (internal/version) and the registry hash (spec.RegistryHash) this binary
// was built with. tlcheck prints the same line of itself and compares.
func handshake() string {
	return "tlcheck-adapters " + version.Version + " registry " + spec.RegistryHash()
}

func engineNames() []string {
	var names []string
	for _, e := range engineList() {
		names = append(names, e.Name())
	}
	return names
}

// selectEngines resolves --engine: "all" (the Go engines), or a
// comma-separated list of engine names, where torch, jax and onnxruntime
// (or python, all three) start protocol engines; and --engine-cmd (line)
// adds a protocol engine of the user's. It returns a function that ends
// the children.
func selectEngines(list, line string, explicit bool, po protocolOptions) (es []harness.Engine, closeAll func(), err error) {
	var started []*harness.Protocol
	closeAll = func() {
		for _, p := range started {
			p.Close()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	all := engineList()
	switch {
	case list == "all" && line != "" && !explicit:
		// --engine-cmd alone runs only the user's engine.
	case list == "all":
		es = all
	default:
		names, err := cli.List("engine", list)
		if err != nil {
			return nil, closeAll, cli.BadInput(err)
		}
		var expanded []string
		for _, n := range names {
			if n == "python" {
				expanded = append(expanded, protocolEngines...)
			} else {
				expanded = append(expanded, n)
			}
		}
		for _, n := range expanded {
			if !slices.Contains(protocolEngines, n) && !slices.Contains(engineNames(), n) {
				known := append(engineNames(), protocolEngines...)
				sort.Strings(known)
				return nil, closeAll, cli.Usagef("adapters: --engine: unknown engine %s (known: %s, python)", cli.Quoted(n), strings.Join(known, ", "))
			}
		}
		for _, n := range expanded {
			if slices.Contains(protocolEngines, n) {
				p, err := startPython(n, po)
				if err != nil {
					return nil, closeAll, err
				}
				started = append(started, p)
				es = append(es, p)
				continue
			}
			es = append(es, all[slices.IndexFunc(all, func(e harness.Engine) bool { return e.Name() == n })])
		}
	}
	if line != "" {
		p, err := startCommand(line, po)
		if err != nil {
			return nil, closeAll, err
		}
		started = append(started, p)
		es = append(es, p)
	}
	return es, closeAll, nil
}

// pick resolves a comma-separated list of names against all (in the
// list's order), or says which name is unknown and which are known.
func pick[T any](flagName, what, list string, all []T, name func(T) string) ([]T, error) {
	names, err := cli.List(strings.TrimPrefix(flagName, "--"), list)
	if err != nil {
		return nil, cli.BadInput(err)
	}
	var out []T
	for _, n := range names {
		i := slices.IndexFunc(all, func(x T) bool { return name(x) == n })
		if i < 0 {
			known := make([]string, len(all))
			for k, x := range all {
				known[k] = name(x)
			}
			sort.Strings(known)
			return nil, cli.Usagef("adapters: %s: unknown %s %s (known: %s)", flagName, what, cli.Quoted(n), strings.Join(known, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// selectCases resolves --case ("all", "none" or a comma-separated list
// of case names) and appends --random's cases.
func selectCases(list string, random int, seed uint64) ([]harness.Case, error) {
	if random < 0 || random > harness.MaxRandom {
		return nil, cli.Usagef("adapters: --random: %d is not in [0, %d]", random, harness.MaxRandom)
	}
	cs, err := fixedCases(list)
	if err != nil {
		return nil, err
	}
	return append(cs, harness.RandomCases(seed, random)...), nil
}

func fixedCases(list string) ([]harness.Case, error) {
	all := harness.AllCases()
	switch list {
	case "all":
		return all, nil
	case "none":
		return nil, nil
	}
	return pick("--case", "case", list, all, func(c harness.Case) string { return c.Name })
}

func runRun(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlags("adapters run")
	engine := fs.String("engine", "all", "all (the Go engines), or a comma-separated list of engines; torch, jax, onnxruntime (python: all three) start the protocol engines of engines/python")
	engineCmd := fs.String("engine-cmd", "", "also run this tlcheck.engine.v1 engine: a command line, split at spaces (docs/engines.md)")
	timeout := fs.Duration("timeout", 120*time.Second, "protocol engines: the longest wait for one answer; a slower engine is killed and restarted, the case a run finding")
	memory := fs.Int64("memory", 8192, "protocol engines: the most resident memory in MiB; a larger engine is killed and restarted, the case a run finding")
	kase := fs.String("case", "all", "all, none, or a comma-separated list of cases (tlcheck adapters cases lists them)")
	random := fs.Int("random", 0, fmt.Sprintf("append this many random DAG cases (at most %d)", harness.MaxRandom))
	seed := fs.Uint64("seed", 1, "the random cases' seed")
	asJSON := fs.Bool("json", false, "print a "+jsonout.Format(jsonout.KindAdapters)+" JSON document instead of the table")
	format := fs.String("format", "", "deprecated: --format json is --json, --format text the default table")
	all := fs.Bool("all", false, "text: print every row, not only those that do not hold")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if ok, err := formatAlias(*format, asJSON, stderr); err != nil || !ok {
		return err
	}
	if *timeout <= 0 || *memory <= 0 {
		return cli.Usagef("adapters run: --timeout and --memory must be positive")
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "engine" })
	es, closeAll, err := selectEngines(*engine, *engineCmd, explicit, protocolOptions{timeout: *timeout, memory: *memory << 20})
	if err != nil {
		return err
	}
	defer closeAll()
	cs, err := selectCases(*kase, *random, *seed)
	if err != nil {
		return err
	}
	p := cli.NewProgress(stderr, "adapters", len(es)*len(cs))
	rep := harness.RunAll(es, cs, harness.Options{Progress: func(string, string, int, int) { p.Step() }})
	p.Done()
	if *asJSON {
		err = jsonout.Write(stdout, document(rep))
	} else {
		err = rep.WriteText(stdout, *all)
	}
	if err != nil {
		return cli.BadInput(err)
	}
	if n := rep.Findings(); n > 0 {
		return cli.Failf("adapters: %s (each a finding; adapters/FINDINGS.md explains them)", cli.Count(n, "row fails", "rows fail"))
	}
	return nil
}

// formatAlias reads the deprecated --format flag (every other command
// spells the JSON document --json): "json" sets *asJSON, "text" is the
// default, each with one deprecation line on stderr; "" (not given) does
// nothing. It refuses any other value, and --format text beside --json.
func formatAlias(format string, asJSON *bool, stderr io.Writer) (bool, error) {
	switch format {
	case "":
		return true, nil
	case "json":
		*asJSON = true
	case "text":
		if *asJSON {
			return false, cli.Usagef("adapters run: --format text and --json ask for two outputs; give --json alone")
		}
	default:
		return false, cli.Usagef("adapters run: --format: %s is neither text nor json (and --format is deprecated: use --json)", cli.Quoted(format))
	}
	fmt.Fprintf(stderr, "adapters run: --format %s is deprecated: use %s\n", format, map[string]string{"json": "--json", "text": "no flag (the table is the default)"}[format])
	return true, nil
}

func runCases(args []string, stdout io.Writer) error {
	fs := cli.NewFlags("adapters cases")
	kase := fs.String("case", "all", "all, none, or a comma-separated list of cases")
	random := fs.Int("random", 0, fmt.Sprintf("append this many random DAG cases (at most %d)", harness.MaxRandom))
	seed := fs.Uint64("seed", 1, "the random cases' seed")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	cs, err := selectCases(*kase, *random, *seed)
	if err != nil {
		return err
	}
	for _, c := range cs {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", c.Name, strings.Join(c.Graph.Ops(), ","), harness.Inputs(c))
		if c.DAG {
			fmt.Fprintf(stdout, "\tgraph: %s\n", harness.GraphString(c.Graph))
		}
	}
	return nil
}

// document is the report as tlcheck.adapters.v1 (jsonout.AdaptersDoc;
// schema schemas/adapters.v1.json).
func document(rep *harness.Report) jsonout.AdaptersDoc {
	doc := jsonout.AdaptersDoc{Header: jsonout.NewHeader(jsonout.KindAdapters, nil, nil), Engines: []jsonout.AdaptersEngine{}}
	for _, e := range rep.Engines {
		je := jsonout.AdaptersEngine{Engine: e.Engine, Module: e.Module, Machines: e.Machines, Ops: e.Ops, Skipped: e.Skipped, Fails: e.Findings, Rows: []jsonout.AdaptersRow{}}
		if je.Ops == nil {
			je.Ops = []string{}
		}
		for _, r := range e.Rows {
			je.Rows = append(je.Rows, jsonout.AdaptersRow{Machine: r.Machine, Case: r.Case, Ops: r.Ops, Obligation: r.Obligation, Verdict: string(r.Verdict), Detail: r.Detail})
		}
		doc.Engines = append(doc.Engines, je)
		doc.Fails += e.Findings
	}
	doc.Holds = doc.Fails == 0
	return doc
}
