package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tlcheck/tlcheck/diffrun"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// diffRegistryHook, when set (by tests only), receives a private registry
// copy for each scalar and each registry-ruled path before diff runs it,
// so that a test can plant a disagreement between paths.
var diffRegistryHook func(scalar, path string, reg any)

// parseScalars resolves --scalars.
func parseScalars(v string) ([]string, error) {
	if v == "all" {
		return nil, nil
	}
	list, err := cli.List("scalars", v)
	if err != nil {
		return nil, err
	}
	known := diffrun.DiffScalars()
	var out []string
	for _, s := range list {
		if err := oneOf("scalars", s, known...); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func runDiff(args []string, stdout, _ io.Writer) error {
	fs := newFlags("diff")
	mf := addModelFlags(fs.FlagSet, "diff", "torchlean.ir.v1 or tlcheck.ir.v1 graph file (this or --onnx is required)", true)
	cotangent := fs.String("cotangent", "", "output cotangent tensor file (JSON or TensorProto .pb) for the gradient comparisons, ones when none is given")
	scalars := fs.String("scalars", "all", "all, or a comma-separated list of rat,f32,f64,binary32,interval")
	asJSON := fs.Bool("json", false, "print a JSON report")
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	sc, err := parseScalars(*scalars)
	if err != nil {
		return err
	}
	files, err := mf.Load()
	if err != nil {
		return err
	}
	opts := diffrun.DiffOptions{Scalars: sc, RegistryHook: diffRegistryHook}
	if *cotangent != "" {
		if opts.Seed, err = files.ReadCotangent(*cotangent); err != nil {
			return err
		}
	}
	rep, err := diffrun.DiffIR(files.Graph, files.Payload, files.Input, opts)
	if err != nil {
		var bad *diffrun.BadInputError
		if errors.As(err, &bad) {
			if files.ONNX != nil {
				return files.Err(bad.Err)
			}
			return cli.Usagef("diff: %v", bad.Err)
		}
		return err
	}
	if *asJSON {
		if err := jsonout.Write(stdout, rep.Doc(len(files.Graph.Nodes), files.Files)); err != nil {
			return err
		}
	} else {
		printDiff(stdout, len(files.Graph.Nodes), rep)
	}
	if c := rep.First(); c != nil {
		f := c.Failure
		where := "the whole graph"
		if f.Node >= 0 {
			where = fmt.Sprintf("node %d (%s)", f.Node, f.Op)
			if w := files.ONNX.Where(f.Node); w != "" {
				where += " from " + w
			}
		}
		if f.Element >= 0 {
			where += fmt.Sprintf(" element %d", f.Element)
		}
		return cli.Failf("diff: %s vs %s disagree over %s on %s at %s: %s vs %s", c.A, c.B, c.Scalar, c.What, where, f.LHS, f.RHS)
	}
	if len(rep.Checks) == 0 {
		// Nothing evaluates (say, raw log of a value ≤ 0): the input is
		// unusable rather than the paths in disagreement.
		return cli.Usagef("diff: no comparison applies to this graph and input (%s)", strings.Join(rep.Skipped, "; "))
	}
	return nil
}

func printDiff(w io.Writer, nodes int, rep *diffrun.DiffReport) {
	fmt.Fprintf(w, "graph sha256:%s (%s)\n\n", rep.Hash, cli.Count(nodes, "node", "nodes"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scalar\tcomparison\tpaths\tnodes\tresult")
	for _, c := range rep.Checks {
		res := "agree"
		if c.Failure != nil {
			res = "DISAGREE"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s ~ %s\t%d\t%s\n", c.Scalar, c.What, c.A, c.B, c.Nodes, res)
	}
	tw.Flush()
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "skipped: %s\n", s)
	}
	if c := rep.First(); c != nil {
		fmt.Fprintf(w, "\nfirst disagreement (%s, %s: %s ~ %s):\n  %s\n", c.Scalar, c.What, c.A, c.B, strings.ReplaceAll(c.Failure.Error(), "\n", "\n  "))
		return
	}
	if len(rep.Checks) > 0 {
		fmt.Fprintf(w, "\nall paths agree (%s)\n", cli.Count(len(rep.Checks), "comparison", "comparisons"))
	}
}
