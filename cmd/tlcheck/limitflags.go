package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/limits"
)

// The limits a command reads, by group; each command defines the
// --max-NAME flags of its groups only (addLimits), and `tlcheck help
// limits` lists every limit with the commands that read it.
var (
	graphLimits = []string{"nodes", "parents", "elements", "axis", "graph-elements", "work", "rat-work", "rat-bits", "rat-bits-total"}
	onnxLimits  = []string{"onnx-bytes", "onnx-elements", "onnx-names", "onnx-value-bytes"}
	certLimits  = []string{"cert-cases"}
	leanLimits  = []string{"lean-lines", "lean-line-bytes", "lean-bytes"}
)

// commandLimits names the limits each command reads.
var commandLimits = map[string][][]string{
	"eval":         {graphLimits, onnxLimits},
	"grad":         {graphLimits, onnxLimits},
	"diff":         {graphLimits, onnxLimits},
	"view":         {graphLimits, onnxLimits},
	"plan":         {graphLimits, onnxLimits},
	"import":       {graphLimits, onnxLimits},
	"compare":      {graphLimits, onnxLimits},
	"compare-grad": {graphLimits, onnxLimits},
	"certify":      {graphLimits, onnxLimits, certLimits},
	"verify":       {graphLimits, onnxLimits, certLimits},
	"merge":        {graphLimits, certLimits},
	"check":        {graphLimits},
	"gate":         {graphLimits, certLimits, leanLimits},
	"lean":         {leanLimits},
	"tensor":       {onnxLimits, {"elements", "axis"}},
}

// addLimits defines on fs the --max-NAME flags of the limits command
// reads (commandLimits), with the environment's values in force
// (limits.AddFlags).
func addLimits(fs *flag.FlagSet, command string) error {
	all := flag.NewFlagSet(command, flag.ContinueOnError)
	if err := limits.AddFlags(all); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, g := range commandLimits[command] {
		for _, n := range g {
			want["max-"+n] = true
		}
	}
	all.VisitAll(func(f *flag.Flag) {
		if want[f.Name] {
			fs.Var(f.Value, f.Name, f.Usage)
		}
	})
	return nil
}

// printLimitsHelp is `tlcheck help limits`: every limit, its default,
// flag and environment variable, and the commands that read it.
func printLimitsHelp(w io.Writer) error {
	all := flag.NewFlagSet("limits", flag.ContinueOnError)
	if err := limits.AddFlags(all); err != nil {
		return err
	}
	readers := map[string][]string{}
	for cmd, groups := range commandLimits {
		for _, g := range groups {
			for _, n := range g {
				readers[n] = append(readers[n], cmd)
			}
		}
	}
	var b strings.Builder
	b.WriteString("limits: every resource an input can claim is bounded and checked before the work starts;\n")
	b.WriteString("a refusal is one line, exit 2, naming the limit. Raise one with --max-NAME N on a command that\n")
	b.WriteString("reads it, or TLCHECK_MAX_NAME=N in the environment (the flag wins). go doc ./limits argues the bounds.\n\n")
	all.VisitAll(func(f *flag.Flag) {
		name := strings.TrimPrefix(f.Name, "max-")
		doc := f.Usage
		if i := strings.LastIndex(doc, " (TLCHECK_"); i >= 0 {
			doc = doc[:i]
		}
		cmds := readers[name]
		sort.Strings(cmds)
		fmt.Fprintf(&b, "  --%s N (%s, default %s)\n      %s; read by %s\n", f.Name, limits.Env(name), f.DefValue, doc, strings.Join(cmds, ", "))
	})
	_, err := io.WriteString(w, b.String())
	return err
}

// cmdFlags is a command's flag set with the --max-NAME flags of the
// limits it reads; err is addLimits' error, which parse reports.
type cmdFlags struct {
	*flag.FlagSet
	err error
}

// newFlags returns the flag set of the command name (cli.NewFlags) with
// the limit flags of the command its first word names (addLimits).
func newFlags(name string) *cmdFlags {
	fs := cli.NewFlags(name)
	return &cmdFlags{fs, addLimits(fs, strings.Fields(name)[0])}
}

// parse reports a limit the environment sets badly as bad input, else
// parses args as cli.Parse does.
func (f *cmdFlags) parse(args []string, nargs int) error {
	if f.err != nil {
		return cli.BadInput(f.err)
	}
	return cli.Parse(f.FlagSet, args, nargs)
}
