package main

// compare-grad: gradients computed by another runtime (a PyTorch or JAX
// job, dumped as JSON) against tlcheck's exact gradient, within the
// a-priori bound of fpbound for binary32 reverse-mode evaluation in any
// summation order (package compare: Grads).

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/tlcheck/tlcheck/compare"
	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/model"
)

func runCompareGrad(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("compare-grad")
	if err := addLimits(fs, "compare-grad"); err != nil {
		return cli.BadInput(err)
	}
	onnxPath := fs.String("onnx", "", "ONNX model file (or use --graph)")
	graph := fs.String("graph", "", "torchlean.ir.v1 graph file (instead of --onnx)")
	payload := fs.String("payload", "", "tlcheck.payload.v1 payload file (with --graph)")
	var inputs, grads listFlag
	fs.Var(&inputs, "input", "input tensor file (TensorProto .pb, or JSON with --graph); with --onnx repeat it for each runtime input, in graph order (required with --graph; with --onnx this or --data)")
	data := fs.String("data", "", "with --onnx: a recorded data set directory whose input_0.pb, input_1.pb, … are the runtime inputs")
	fs.Var(&grads, "grads", "the gradient dump: a tlcheck.grads.v1 JSON file, or float32 .pb TensorProtos each named as its gradient, --grads repeated for each (required)")
	asJSON := fs.Bool("json", false, "print a tlcheck.compare-grad.v1 document instead of the report")
	elements := fs.Bool("elements", false, "with --json: list every checked element (index, recorded value, exact enclosure, bound, verdict)")
	ulps := fs.Int("ulps", fpbound.DefaultULPs, "accuracy assumed of the runtime's exp, log, tanh, …, in binary32 ulps")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if (*onnxPath == "") == (*graph == "") {
		return cli.Usagef("compare-grad: give exactly one of --onnx and --graph")
	}
	if len(grads) == 0 {
		return cli.Usagef("compare-grad: --grads is required")
	}
	if *elements && !*asJSON {
		return cli.Usagef("compare-grad: --elements lists elements in the --json document: give --json too")
	}
	if *ulps < 1 || *ulps > fpbound.MaxULPs {
		return cli.Usagef("--ulps: %d is not between 1 and %d", *ulps, fpbound.MaxULPs)
	}
	var m *compare.GradModel
	var err error
	in := []string(inputs)
	if *onnxPath != "" {
		if *data != "" {
			if len(inputs) > 0 {
				return cli.Usagef("compare-grad: --input and --data both name the inputs; give one")
			}
			if in, err = model.DataFiles("data", *data, "input"); err != nil {
				return err
			}
		}
		im, x, ierr := model.ImportPB(*onnxPath, in)
		if ierr != nil {
			return ierr
		}
		m, err = compare.GradModelONNX(*onnxPath, im, x)
	} else {
		switch {
		case *data != "":
			return cli.Usagef("compare-grad: --data is a recorded ONNX data set: it goes with --onnx")
		case len(inputs) > 1:
			return cli.Usagef("compare-grad: --input given %d times: a torchlean.ir.v1 graph has one input", len(inputs))
		case len(inputs) == 0:
			return cli.Usagef("compare-grad: --input is required")
		}
		fs, lerr := model.LoadIR("compare-grad", *graph, *payload, inputs[0])
		if lerr != nil {
			return lerr
		}
		m, err = compare.GradModelIR(fs)
	}
	if err != nil {
		return err
	}
	var doc *compare.Dump
	gradsArg := strings.Join(grads, " ")
	if strings.HasSuffix(grads[0], ".pb") {
		doc, err = compare.ReadDumpPB(grads)
	} else if len(grads) > 1 {
		return cli.Usagef("compare-grad: --grads given %d times: a tlcheck.grads.v1 JSON dump is one file (repeat --grads for .pb tensors only)", len(grads))
	} else {
		var f *os.File
		if f, err = safeio.Open(grads[0]); err == nil {
			doc, err = compare.ReadDump(f)
			f.Close()
		}
	}
	if err != nil {
		return cli.Usagef("--grads %s: %v", gradsArg, err)
	}
	res, err := compare.Grads(m, doc, fpbound.Options{ULPs: *ulps})
	if err != nil {
		return cli.Usagef("--grads %s: %v", gradsArg, err)
	}
	rep, failed := gradsText(res)
	if *asJSON {
		read := []namedFile{{"onnx", *onnxPath}, {"graph", *graph}, {"payload", *payload}}
		for _, p := range in {
			read = append(read, namedFile{"input", p})
		}
		for _, p := range grads {
			read = append(read, namedFile{"grads", p})
		}
		tensors := make([]jsonout.CompareGradTensor, len(res))
		for i, g := range res {
			tensors[i] = g.JSON(*elements)
		}
		rep, err = compareGradJSON(*onnxPath+*graph, *ulps, tensors, read)
		if err != nil {
			return err
		}
	}
	if _, err := io.WriteString(stdout, rep); err != nil {
		return err
	}
	if failed > 0 {
		return cli.Failf("compare-grad: %s outside the bound", cli.Count(failed, "gradient tensor", "gradient tensors"))
	}
	return nil
}

// gradsText is compare-grad's report of the judged gradients, one line a
// tensor (and the assert_close-style summary under one that does not
// hold); it returns the number of tensors with an element outside the
// bound.
func gradsText(res []compare.Grad) (string, int) {
	var b strings.Builder
	failed := 0
	for _, g := range res {
		switch g.Status {
		case compare.Constant:
			fmt.Fprintf(&b, "%s %v: not checked: the IR reads it as a constant, which has no gradient there\n", g.Name, g.Shape)
			continue
		case compare.NotGiven:
			fmt.Fprintf(&b, "%s %v: not given\n", g.Name, g.Shape)
			continue
		}
		els := g.Elements
		s := fpbound.Summarize(els)
		worst := 0.0
		for _, el := range els {
			if el.Bound > 0 && !math.IsInf(el.Bound, 1) {
				worst = max(worst, el.Dist.Hi/el.Bound)
			}
		}
		fmt.Fprintf(&b, "%s %v: %d holds, %d fails, %d inconclusive; worst error/bound %.3g", g.Name, g.Shape, s.Holds, s.Fails, s.Inconclusive, worst)
		if s.FirstFail >= 0 {
			failed++
			el := els[s.FirstFail]
			fmt.Fprintf(&b, "; first outside: element %d at index %s: recorded %v (0x%08x), exact in %v, bound %.6g",
				s.FirstFail, compare.IndexText(g.Shape, s.FirstFail), el.Recorded, math.Float32bits(el.Recorded), el.Exact, el.Bound)
		} else if s.Inconclusive > 0 {
			for _, el := range els {
				if el.Verdict == fpbound.Inconclusive && el.Reason != "" {
					fmt.Fprintf(&b, "; inconclusive: %s", el.Reason)
					break
				}
			}
		}
		b.WriteByte('\n')
		b.WriteString(compare.Summarize(g.Shape, els).Lines("  "))
	}
	return b.String(), failed
}
