package harness

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Report is the result of a run over several engines.
type Report struct {
	Engines []EngineReport
}

// EngineReport is one engine's rows, the cases it skipped (with the
// reason) and the distinct registry primitives its checked cases cover.
type EngineReport struct {
	Engine   string
	Module   string
	Machines []string
	Ops      []string
	Rows     []Row
	Skipped  []string
	Findings int // failing rows
}

// RunAll runs every engine over the cases (in the given order) and
// shrinks every finding to its smallest counterexample.
func RunAll(engines []Engine, cases []Case, o Options) *Report {
	rep := &Report{}
	byName := map[string]Case{}
	for _, c := range cases {
		byName[c.Name] = c
	}
	for _, e := range engines {
		rows, skipped := Run(e, cases, o)
		er := EngineReport{Engine: e.Name(), Module: e.Module(), Machines: e.Machines(), Skipped: skipped}
		ops := map[string]bool{}
		for i, r := range rows {
			if r.Finding() {
				rows[i] = Shrink(e, byName[r.Case], r)
				er.Findings++
			}
			for _, op := range r.Ops {
				ops[op] = true
			}
		}
		for op := range ops {
			er.Ops = append(er.Ops, op)
		}
		sort.Strings(er.Ops)
		er.Rows = rows
		if er.Skipped == nil {
			er.Skipped = []string{}
		}
		rep.Engines = append(rep.Engines, er)
	}
	return rep
}

// Findings counts the findings of every engine.
func (r *Report) Findings() int {
	n := 0
	for _, e := range r.Engines {
		n += e.Findings
	}
	return n
}

// WriteText writes the table engine × case × obligation × verdict: one
// line per case and machine with every obligation's verdict, the detail
// (smallest counterexample) of each finding and note under it, and a
// summary per engine. all=false prints only the lines with something
// other than "holds".
func (r *Report) WriteText(w io.Writer, all bool) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "engine\tmachine\tcase\tops\tobligation\tverdict")
	var details []string
	for _, e := range r.Engines {
		for _, row := range e.Rows {
			if !all && row.Verdict == Holds {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Engine, row.Machine, row.Case, strings.Join(row.Ops, ","), row.Obligation, row.Verdict)
			if row.Detail != "" && row.Verdict != Holds {
				details = append(details, fmt.Sprintf("  %s %s %s %s (%s): %s", e.Engine, row.Machine, row.Case, row.Obligation, row.Verdict, row.Detail))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(details) > 0 {
		fmt.Fprintln(w, "details:")
		for _, d := range details {
			fmt.Fprintln(w, d)
		}
	}
	for _, e := range r.Engines {
		counts := map[Verdict]int{}
		for _, row := range e.Rows {
			counts[row.Verdict]++
		}
		fmt.Fprintf(w, "%s (%s, machines %s): %d ops in %d rows: %d holds, %d convention, %d suspect, %d inconclusive, %d fails; %d cases skipped\n",
			e.Engine, e.Module, strings.Join(e.Machines, ", "), len(e.Ops), len(e.Rows), counts[Holds], counts[ByConvention], counts[Suspect], counts[Inconclusive], counts[Fails], len(e.Skipped))
	}
	return nil
}
