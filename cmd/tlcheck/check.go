package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

// checkRow is one line of the check table: the JSON record and the
// table's rendering of its worst measure.
type checkRow struct {
	jsonout.CheckResult
	Oracle string // the oracles joined with "+", for the table
	Worst  string // the worst measure as the table prints it
}

// checkRun is a check run: what it covers, and the primitive whose
// fault was planted (for the replay commands).
type checkRun struct {
	obligations.Suite
	plant string
}

// runChecksGraphs checks every obligation of c.ops and the graph-level
// obligations, and returns one row per op × obligation. A primitive with
// no obligation decided on any case is a failure in its own right. Cases
// run in parallel (see obligations.CheckOpsCases); rows come in a fixed
// order, so the output is the same for any GOMAXPROCS.
func runChecksGraphs(reg obligations.Registries, c checkRun, progress *cli.Progress) ([]checkRow, error) {
	all, err := reg.CheckSuite(c.Suite, progress.Step)
	if err != nil {
		return nil, err
	}
	var rows []checkRow
	for _, res := range all {
		op := res[0].Op
		decided := false
		for _, r := range res {
			row := checkRow{CheckResult: r.CheckResult(op), Oracle: r.OracleSummary(), Worst: r.WorstText()}
			if r.Failure != nil {
				row.Failure = r.Failure.Error()
				row.Replay = replayCommand(op, r.Obligation, c, r.Failure)
			} else if r.Cases == 0 {
				row.Failure = "no case decided"
			}
			decided = decided || r.Cases > 0
			rows = append(rows, row)
		}
		if !decided {
			rows = append(rows, checkRow{CheckResult: jsonout.CheckResult{Op: op, Obligation: "any", Oracles: map[string]int{},
				Failure: "no obligation checked for this primitive"}, Oracle: "-", Worst: "-"})
		}
	}
	return rows, nil
}

func printCheckTable(w io.Writer, rows []checkRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "op\tobligation\tcases\toracle\tworst\tresult")
	for _, r := range rows {
		res := "holds"
		if !r.Holds {
			res = "FAILS"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", r.Op, r.Obligation, r.Cases, r.Oracle, r.Worst, res)
	}
	tw.Flush()
	for _, r := range rows {
		if !r.Holds {
			fmt.Fprintf(w, "\n%s / %s: %s\n", r.Op, r.Obligation, r.Failure)
			if r.Replay != "" {
				fmt.Fprintf(w, "  replay: %s\n", r.Replay)
			}
		}
	}
}

// defaultGraphs is the one default of --graphs, for check and gate alike
// (the gate's 50: a graph case costs little, and `tlcheck check` with no
// flags then runs what the gate's check stage runs).
const defaultGraphs = 50

func runCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check")
	opsFlag := fs.String("ops", "all", "all, none, or a comma-separated list of primitives")
	cases := fs.Int("cases", 100, "cases per primitive")
	seed := fs.Uint64("seed", 0, "generation seed")
	asJSON := fs.Bool("json", false, "print JSON records instead of a table")
	plant := fs.String("plant-fault", "", "self-test: negate the VJP of this primitive and show that check fails")
	graphs := fs.Int("graphs", defaultGraphs, "random graphs per graph-level obligation (composition, path sums, sweeps, cross-path, interval soundness, Hessians); 0 skips them")
	graphObsFlag := fs.String("graph-obligations", "all", "all, or a comma-separated list of graph-level obligations")
	only := fs.Int("case", -1, "replay: run only case I (of every selected primitive, and of every selected graph obligation unless --graphs 0) instead of the first --cases/--graphs")
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	if *cases < 1 || *cases > 1_000_000 {
		return cli.Usagef("--cases must be between 1 and 1000000, got %d", *cases)
	}
	if *only < -1 || *only > 1_000_000 {
		return cli.Usagef("--case must be between 0 and 1000000, got %d", *only)
	}
	ops, err := obligations.ParseOps(*opsFlag)
	if err != nil {
		return err
	}
	graphObs, err := parseGraphObligations(*graphObsFlag)
	if err != nil {
		return err
	}
	reg := obligations.DefaultRegistries()
	if *plant != "" {
		if _, err := spec.Info(*plant); err != nil {
			return cli.Usagef("--plant-fault: unknown primitive %q", *plant)
		}
		reg = obligations.PlantFault(*plant)
	}
	if *graphs < 0 || *graphs > 100_000 {
		return cli.Usagef("--graphs must be between 0 and 100000, got %d", *graphs)
	}
	if len(ops) == 0 && *graphs == 0 {
		return cli.Usagef("check: nothing to check (--ops none and --graphs 0)")
	}
	c := checkRun{Suite: obligations.Suite{Ops: ops, Cases: *cases, Graphs: *graphs, GraphObs: graphObs, Seed: *seed, Only: *only}, plant: *plant}
	prog := cli.NewProgress(stderr, "check", c.Steps())
	rows, err := runChecksGraphs(reg, c, prog)
	prog.Done()
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range rows {
		if !r.Holds {
			failed++
		}
	}
	if *asJSON {
		doc := jsonout.CheckDoc{Header: jsonout.NewHeader(jsonout.KindCheck, jsonout.Seed(*seed), nil),
			Ops: ops, Cases: *cases, Graphs: *graphs, PlantFault: *plant, Results: make([]jsonout.CheckResult, len(rows)),
			Failures: failed, Holds: failed == 0}
		if doc.Ops == nil {
			doc.Ops = []string{}
		}
		if *only >= 0 {
			doc.Case = only
		}
		for i, r := range rows {
			doc.Results[i] = r.CheckResult
		}
		if err := jsonout.Write(stdout, doc); err != nil {
			return err
		}
	} else {
		printCheckTable(stdout, rows)
	}
	if failed > 0 {
		return cli.Failf("%d of %d obligations %s", failed, len(rows), cli.Agree(failed, "fails", "fail"))
	}
	if !*asJSON {
		if *only >= 0 {
			fmt.Fprintf(stdout, "\nall %s hold on case %d of %s and of the graph obligations (none with --graphs 0)\n", cli.Count(len(rows), "obligation", "obligations"), *only, cli.Count(len(ops), "primitive", "primitives"))
		} else {
			fmt.Fprintf(stdout, "\nall %s hold on %s × %s and %s per graph obligation\n", cli.Count(len(rows), "obligation", "obligations"), cli.Count(len(ops), "primitive", "primitives"), cli.Count(*cases, "case", "cases"), cli.Count(*graphs, "random graph", "random graphs"))
		}
	}
	return nil
}

// replayCommand is the command that replays a failure alone: --case I
// runs case I only, drawn from the same spec.CaseSeed(seed, label, I) as
// in the failing run, so it reports the same counterexample with the same
// values. Without a case (a failure not tied to one) it reruns the whole
// family.
func replayCommand(op string, ob obligations.Obligation, c checkRun, failure error) string {
	var ce *obligations.CaseError
	caseFlag := ""
	if errors.As(failure, &ce) {
		caseFlag = fmt.Sprintf(" --case %d", ce.Case)
	}
	var cmd string
	switch {
	case op == "graphs" && caseFlag != "":
		cmd = fmt.Sprintf("tlcheck check --ops none --graph-obligations %s%s --seed %d", ob, caseFlag, c.Seed)
	case op == "graphs":
		cmd = fmt.Sprintf("tlcheck check --ops none --graph-obligations %s --graphs %d --seed %d", ob, c.Graphs, c.Seed)
	case caseFlag != "":
		cmd = fmt.Sprintf("tlcheck check --ops %s%s --graphs 0 --seed %d", op, caseFlag, c.Seed)
	default:
		cmd = fmt.Sprintf("tlcheck check --ops %s --cases %d --graphs 0 --seed %d", op, c.Cases, c.Seed)
	}
	if c.plant != "" {
		cmd += " --plant-fault " + c.plant
	}
	return cmd
}

// parseGraphObligations resolves --graph-obligations (nil: all).
func parseGraphObligations(v string) ([]obligations.Obligation, error) {
	all := obligations.GlobalObligations()
	if v == "all" {
		return nil, nil
	}
	list, err := cli.List("graph-obligations", v)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(all))
	for i, ob := range all {
		names[i] = string(ob)
	}
	var out []obligations.Obligation
	for _, name := range list {
		ok := false
		for _, ob := range all {
			if string(ob) == name {
				ok = true
				if !slices.Contains(out, ob) {
					out = append(out, ob)
				}
			}
		}
		if !ok {
			return nil, cli.Usagef("--graph-obligations: unknown graph obligation %q (known: %s)", name, strings.Join(names, ","))
		}
	}
	return out, nil
}
