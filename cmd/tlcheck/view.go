package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tlcheck/tlcheck/diffrun"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/view"
)

// viewDiffHook, when set (by tests only), is the registry hook of the
// diff view (see diffRegistryHook).
var viewDiffHook func(scalar, path string, reg any)

func runView(args []string, stdout, _ io.Writer) error {
	fs := newFlags("view")
	mf := addModelFlags(fs.FlagSet, "view", "torchlean.ir.v1 or tlcheck.ir.v1 graph file (this or --onnx is required)", true)
	what := fs.String("what", "tape", "tape (nodes, parent slots, detach cuts)|grads (cotangents, contributions, unreached)|trace (reverse traversal order)|diff (first node where two paths or scalars disagree)")
	format := fs.String("format", "html", "html (one self-contained page)|svg|dot (Graphviz)")
	out := fs.String("out", "", "output file (required; - writes a dot file to stdout)")
	scalar := fs.String("scalar", scalarAuto, "scalar of grads and trace: auto (rat when the model is exact over the rationals at this input, else interval; the page says which)|rat (exact p/q)|interval (enclosures lo..hi)|f32|f64 (shortest decimals)")
	fold := fs.String("fold", "auto", "fold linear chains: auto (runs of 3 when the graph has more than 200 nodes)|off|N (runs of at least N nodes)")
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	if err := oneOf("what", *what, "tape", "grads", "trace", "diff"); err != nil {
		return err
	}
	if err := oneOf("format", *format, "html", "svg", "dot"); err != nil {
		return err
	}
	if err := oneOf("scalar", *scalar, scalarAuto, "rat", "interval", "f32", "f64"); err != nil {
		return err
	}
	minRun, ok := view.ParseFold(*fold)
	if !ok {
		return cli.Usagef("--fold: unknown value %q (want auto|off|N with N ≥ 1)", *fold)
	}
	if *out == "" {
		return cli.Usagef("view: --out is required")
	}
	if *out == "-" && *format != "dot" {
		return cli.Usagef("view: --out - (stdout) is for --format dot only; write %s to a file", *format)
	}
	hasInput := mf.HasInput()
	if *what != "tape" && !hasInput {
		return cli.Usagef("view: --what %s needs --input (or --data with --onnx)", *what)
	}
	// With an input the model and input are read and checked together
	// (JSON or TensorProto .pb, as eval reads them); without one only
	// the model is.
	var files *model.Model
	var err error
	if hasInput {
		files, err = mf.Load()
	} else {
		files, err = mf.LoadGraph()
	}
	if err != nil {
		return err
	}
	g, src := files.Graph, files.GraphPath
	var origin []string
	if files.ONNX != nil {
		origin = files.ONNX.Imported.Origin
	}
	m, err := view.FromGraph(g, origin)
	if err != nil {
		return cli.Usagef("%s: %v", src, err)
	}
	m.What = view.What(*what)
	m.Title = fmt.Sprintf("tlcheck view %s: %s", *what, src)
	var failure error
	// addParams draws the parameters after folding (view.AddParams), over
	// the scalar the values were computed over.
	var addParams func() error
	if m.What == view.Diff {
		failure, err = viewDiff(m, files, *out)
	} else {
		sc := *scalar
		if hasInput && sc == scalarAuto {
			var why string
			sc, why = files.AutoScalar()
			m.Notes = append(m.Notes, strings.TrimSuffix(scalarLine(sc, why), "\n")+", chosen by --scalar auto")
		}
		addParams, err = view.AnnotateModel(m, files, sc, hasInput)
		if err != nil {
			err = cli.Usagef("%s: %v", src, err)
		}
	}
	if err != nil {
		return err
	}
	m.Fold(minRun) // the page's summary says how many nodes were folded
	if addParams != nil {
		if err := addParams(); err != nil {
			if m.What != view.Tape {
				return cli.Usagef("%s: %v", src, err)
			}
			m.Notes = append(m.Notes, fmt.Sprintf("parameters not drawn: %v", err))
		}
		if m.Params > 0 && m.What == view.Grads {
			m.Notes = append(m.Notes, "each parameter's gradient (grad = …) from the same reverse pass with the parameters as leaves, as tlcheck grad reports it")
		}
	}
	if err := m.Check(); err != nil {
		return cli.Usagef("%s: %v; fold chains (--fold) or view a smaller graph", src, err)
	}
	var b bytes.Buffer
	if err := view.Render(&b, m, *format); err != nil {
		return err
	}
	if *out == "-" {
		if _, err := stdout.Write(b.Bytes()); err != nil {
			return err
		}
	} else if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return cli.Usagef("--out %s: cannot write: %v", *out, err)
	}
	return failure
}

// viewDiff draws on m the first node where two of the model's paths or
// scalars disagree at its input (view.AddDiff); the error is a usage
// error when no comparison applies or the input is bad, and failure the
// disagreement, naming out, the picture's file.
func viewDiff(m *view.Model, files *model.Model, out string) (failure, err error) {
	src := files.GraphPath
	rep, err := view.AddDiff(m, files.Graph, files.Payload, files.Input, diffrun.DiffOptions{RegistryHook: viewDiffHook})
	if err != nil {
		var bad *diffrun.BadInputError
		if errors.As(err, &bad) {
			return nil, cli.Usagef("view: %s: %v", src, bad.Err)
		}
		return nil, cli.Usagef("view: %s: %v", src, err)
	}
	if len(rep.Checks) == 0 {
		return nil, cli.Usagef("view: no comparison applies to this graph and input")
	}
	if d := m.Diff; d.Found {
		failure = cli.Failf("view: %s vs %s disagree over %s on %s at node %d (%s): %s vs %s (picture written to %s)", d.A, d.B, d.Scalar, d.What, d.Node, d.Op, d.LHS, d.RHS, out)
	}
	return failure, nil
}
