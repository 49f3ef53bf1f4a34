package main

// compare-grad: gradients computed by another runtime (a PyTorch or JAX
// job, dumped as JSON) against tlcheck's exact gradient, within the
// a-priori bound of fpbound for binary32 reverse-mode evaluation in any
// summation order (package compare: Grads).

import (
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/compare"
	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/cli"
)

func runCompareGrad(args []string, stdout, _ io.Writer) error {
	fs := newFlags("compare-grad")
	onnxPath := fs.String("onnx", "", "ONNX model file (or use --graph)")
	graph := fs.String("graph", "", "torchlean.ir.v1 graph file (instead of --onnx)")
	payload := fs.String("payload", "", "tlcheck.payload.v1 payload file (with --graph)")
	var inputs, grads listFlag
	fs.Var(&inputs, "input", "input tensor file (TensorProto .pb, or JSON with --graph); with --onnx repeat it for each runtime input, in graph order (required with --graph; with --onnx this or --data)")
	data := fs.String("data", "", "with --onnx: a recorded data set directory whose input_0.pb, input_1.pb, … are the runtime inputs")
	fs.Var(&grads, "grads", "the gradient dump: a tlcheck.grads.v1 JSON file, or float32 .pb TensorProtos each named as its gradient, --grads repeated for each (required)")
	asJSON := fs.Bool("json", false, "print a tlcheck.compare-grad.v3 document instead of the report")
	elements := fs.Bool("elements", false, "with --json: list every checked element (index, recorded value, exact enclosure, bound, verdict)")
	ulps := fs.Int("ulps", fpbound.DefaultULPs, "accuracy assumed of the runtime's exp, log, tanh, …, in binary32 ulps")
	profile := fs.String("profile", fpbound.ProfileIEEE, profileUsage)
	bound := fs.String("bound", "sharp", "sharp (per element the least of the classic, the boxed and the combined first-order reverse-mode bound)|classic (the classic bound alone, for comparison)")
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	if err := oneOf("bound", *bound, "sharp", "classic"); err != nil {
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
	if err := checkProfile(*profile); err != nil {
		return err
	}
	m, in, err := compare.LoadGradModel(*onnxPath, *graph, *payload, *data, inputs)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(grads[0], ".pb") && len(grads) > 1 {
		return cli.Usagef("compare-grad: --grads given %d times: a tlcheck.grads.v1 JSON dump is one file (repeat --grads for .pb tensors only)", len(grads))
	}
	gradsArg := strings.Join(grads, " ")
	doc, err := compare.ReadDumpFiles(grads)
	if err != nil {
		return cli.Usagef("--grads %s: %v", gradsArg, err)
	}
	res, err := compare.GradsWith(m, doc, fpbound.Options{ULPs: *ulps, Profile: *profile}, *bound == "classic")
	if err != nil {
		return cli.Usagef("--grads %s: %v", gradsArg, err)
	}
	rep, failed := compare.GradsText(res)
	if *asJSON {
		read := []compare.File{{Role: "onnx", Path: *onnxPath}, {Role: "graph", Path: *graph}, {Role: "payload", Path: *payload}}
		for _, p := range in {
			read = append(read, compare.File{Role: "input", Path: p})
		}
		for _, p := range grads {
			read = append(read, compare.File{Role: "grads", Path: p})
		}
		if rep, err = compare.GradsJSON(*onnxPath+*graph, *ulps, profileField(*profile), res, *elements, read); err != nil {
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
