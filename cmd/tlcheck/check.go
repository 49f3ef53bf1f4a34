package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

// checkRow is one line of the check table (and one JSON record).
type checkRow struct {
	Op         string `json:"op"`
	Obligation string `json:"obligation"`
	Cases      int    `json:"cases"`
	Oracle     string `json:"oracle"`
	Worst      string `json:"worst"`
	Holds      bool   `json:"holds"`
	Failure    string `json:"failure,omitempty"`
	Replay     string `json:"replay,omitempty"`
}

// parseOps resolves --ops against the registry.
func parseOps(v string) ([]string, error) {
	all := make([]string, 0)
	for _, info := range spec.Infos() {
		all = append(all, info.Name)
	}
	if v == "" || v == "all" {
		return all, nil
	}
	if v == "none" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if _, err := spec.Info(name); err != nil {
			return nil, cli.Usagef("--ops: unknown primitive %q (known: %s)", name, strings.Join(all, ","))
		}
		if !seen[name] {
			out = append(out, name)
			seen[name] = true
		}
	}
	return out, nil
}

// plantFault returns registries in which op's VJP has its first
// contribution negated: the self-test that shows check can fail.
func plantFault(op string) obligations.Registries {
	r := obligations.DefaultRegistries()
	r.Rat, r.Interval, r.F64 = spec.New[spec.Rat](), spec.New[spec.Interval](), spec.New[spec.F64]()
	flipVJP(r.Rat, op)
	flipVJP(r.Interval, op)
	flipVJP(r.F64, op)
	return r
}

func flipVJP[T spec.Scalar[T]](reg *spec.Registry[T], op string) {
	p, err := reg.Lookup(op)
	if err != nil {
		return
	}
	bad, orig := *p, p.VJP
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[T], y, dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
		gs, err := orig(a, xs, y, dy)
		if err == nil && len(gs) > 0 {
			gs[0] = spec.NegT(gs[0])
		}
		return gs, err
	}
	reg.Override(&bad)
}

func worstString(r *obligations.Result) string {
	if r.Cases == 0 {
		return "-"
	}
	switch {
	case r.Obligation == obligations.Derivative:
		s := "rel=" + strconv.FormatFloat(r.Worst, 'g', 3, 64)
		if n := r.Oracles[obligations.OracleInconclusive]; n > 0 {
			s += " inconclusive=" + strconv.Itoa(n)
		}
		return s
	case r.Oracles[obligations.OracleInterval] > 0 && r.Obligation == obligations.Adjointness:
		return "width=" + strconv.FormatFloat(r.Worst, 'g', 3, 64)
	case r.Obligation == obligations.Adjointness:
		return "bits=" + strconv.Itoa(int(r.Worst))
	}
	if r.Oracles[obligations.OracleInterval] > 0 {
		return "overlap"
	}
	return "exact"
}

// runChecks checks every obligation of ops and returns one row per op ×
// obligation. A primitive with no obligation decided on any case is a
// failure in its own right.
func runChecks(reg obligations.Registries, ops []string, cases int, seed uint64, progress *cli.Progress, plant string) ([]checkRow, error) {
	return runChecksGraphs(reg, ops, cases, 0, seed, progress, plant)
}

// runChecksGraphs is runChecks plus the graph-level obligations on graphs
// random graphs each (none when graphs is 0).
func runChecksGraphs(reg obligations.Registries, ops []string, cases, graphs int, seed uint64, progress *cli.Progress, plant string) ([]checkRow, error) {
	var rows []checkRow
	all := make([][]*obligations.Result, 0, len(ops)+1)
	for _, op := range ops {
		res, err := reg.CheckOp(op, cases, seed, progress.Step)
		if err != nil {
			return nil, err
		}
		all = append(all, res)
	}
	if graphs > 0 {
		all = append(all, obligations.CheckGlobal(reg.Rat, graphs, seed, progress.Step))
	}
	for _, res := range all {
		op := res[0].Op
		decided := false
		for _, r := range res {
			row := checkRow{Op: op, Obligation: string(r.Obligation), Cases: r.Cases, Oracle: r.OracleSummary(), Worst: worstString(r), Holds: r.Holds()}
			if r.Failure != nil {
				row.Failure = r.Failure.Error()
				row.Replay = replayCommand(op, cases, graphs, seed, plant, r.Failure)
			} else if r.Cases == 0 {
				row.Failure = "no case decided"
			}
			decided = decided || r.Cases > 0
			rows = append(rows, row)
		}
		if !decided {
			rows = append(rows, checkRow{Op: op, Obligation: "any", Failure: "no obligation checked for this primitive"})
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

func runCheck(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlags("check")
	opsFlag := fs.String("ops", "all", "all, none, or a comma-separated list of primitives")
	cases := fs.Int("cases", 100, "cases per primitive")
	seed := fs.Uint64("seed", 0, "generation seed")
	asJSON := fs.Bool("json", false, "print JSON records instead of a table")
	plant := fs.String("plant-fault", "", "self-test: negate the VJP of this primitive and show that check fails")
	graphs := fs.Int("graphs", 20, "random graphs per graph-level obligation (composition, path sums, sweeps, cross-path, interval soundness, Hessians); 0 skips them")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if *cases < 1 || *cases > 1_000_000 {
		return cli.Usagef("--cases must be between 1 and 1000000, got %d", *cases)
	}
	ops, err := parseOps(*opsFlag)
	if err != nil {
		return err
	}
	reg := obligations.DefaultRegistries()
	if *plant != "" {
		if _, err := spec.Info(*plant); err != nil {
			return cli.Usagef("--plant-fault: unknown primitive %q", *plant)
		}
		reg = plantFault(*plant)
	}
	if *graphs < 0 || *graphs > 100_000 {
		return cli.Usagef("--graphs must be between 0 and 100000, got %d", *graphs)
	}
	if len(ops) == 0 && *graphs == 0 {
		return cli.Usagef("check: nothing to check (--ops none and --graphs 0)")
	}
	steps := len(ops) * *cases
	if *graphs > 0 {
		steps += len(obligations.GlobalObligations())
	}
	prog := cli.NewProgress(stderr, "check", steps)
	rows, err := runChecksGraphs(reg, ops, *cases, *graphs, *seed, prog, *plant)
	prog.Done()
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
	} else {
		printCheckTable(stdout, rows)
	}
	failed := 0
	for _, r := range rows {
		if !r.Holds {
			failed++
		}
	}
	if failed > 0 {
		return cli.Failf("%d of %d obligations fail", failed, len(rows))
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "\nall %d obligations hold on %d primitives × %d cases and %d random graphs per graph obligation\n", len(rows), len(ops), *cases, *graphs)
	}
	return nil
}

// replayCommand is the command that replays a failure: the failing case
// is the last one it runs.
func replayCommand(op string, cases, graphs int, seed uint64, plant string, failure error) string {
	n := cases
	if op == "graphs" {
		n = graphs
	}
	var ce *obligations.CaseError
	if errors.As(failure, &ce) {
		n = ce.Case + 1
	}
	var cmd string
	if op == "graphs" {
		cmd = fmt.Sprintf("tlcheck check --ops none --graphs %d --seed %d", n, seed)
	} else {
		cmd = fmt.Sprintf("tlcheck check --ops %s --cases %d --graphs 0 --seed %d", op, n, seed)
	}
	if plant != "" {
		cmd += " --plant-fault " + plant
	}
	return cmd
}
