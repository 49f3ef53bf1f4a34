package main

import (
	"bytes"
	"io"

	"github.com/tlcheck/tlcheck/compare"
	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/model"
)

// runCompare evaluates an ONNX model exactly on each recorded input set
// and checks every recorded output element against the a-priori float32
// error bound of the graph; the decision rule is package compare's
// (`go doc ./compare`). Exit 1 when any element fails. Inconclusive
// elements alone do not fail the comparison — nothing was shown wrong —
// but print a warning line (and the JSON verdict "inconclusive");
// --strict makes them exit 1.
func runCompare(args []string, stdout, _ io.Writer) error {
	fs := newFlags("compare")
	modelPath := fs.String("onnx", "", "ONNX model file (required)")
	data := fs.String("data", "", "a recorded data set directory (input_N.pb, output_N.pb), or a directory of test_data_set_* directories (required)")
	ulps := fs.Int("ulps", fpbound.DefaultULPs, "accuracy assumed of the runtime's elementary functions (exp, tanh, …), in binary32 ulps")
	profile := fs.String("profile", fpbound.ProfileIEEE, profileUsage)
	strict := fs.Bool("strict", false, "exit 1 when an element is inconclusive (by default inconclusive elements only warn)")
	asJSON := fs.Bool("json", false, "print a tlcheck.compare.v1 document")
	stats := fs.Bool("stats", false, statsUsage)
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	if *stats && !*asJSON {
		return cli.Usagef("compare: --stats needs --json")
	}
	if *modelPath == "" {
		return cli.Usagef("compare: --onnx is required")
	}
	if *data == "" {
		return cli.Usagef("compare: --data is required")
	}
	if *ulps < 1 {
		return cli.Usagef("--ulps must be ≥ 1, got %d", *ulps)
	}
	if err := checkProfile(*profile); err != nil {
		return err
	}
	sets, err := model.DataSets(*data)
	if err != nil {
		return err
	}
	var inputs []jsonout.Input
	var reps []compare.Set
	for _, dir := range sets {
		rep, err := compare.RecordedDir(*modelPath, dir, fpbound.Options{ULPs: *ulps, Profile: *profile}, &inputs)
		if err != nil {
			return err
		}
		reps = append(reps, *rep)
	}
	_, fails, inconc := compare.Counts(reps)
	var b bytes.Buffer
	if *asJSON {
		doc := compare.Doc(*modelPath, *ulps, *strict, reps, inputs)
		doc.Profile = profileField(*profile)
		var err error
		if doc.Stats, err = runStats(*stats); err != nil {
			return err
		}
		if err := jsonout.Write(&b, doc); err != nil {
			return err
		}
	} else {
		compare.WriteText(&b, *modelPath, reps)
	}
	if _, err := stdout.Write(b.Bytes()); err != nil {
		return err
	}
	switch {
	case fails > 0:
		return cli.Failf("compare: %s outside the a-priori rounding bound of the graph's float format", cli.Count(fails, "element lies", "elements lie"))
	case inconc > 0 && *strict:
		return cli.Failf("compare: %s inconclusive (--strict)", cli.Count(inconc, "element", "elements"))
	}
	return nil
}

// profileUsage is the help of compare's and compare-grad's --profile.
const profileUsage = "runtime profile of the elementary functions: ieee (every function within --ulps)|onnxruntime-cpu|pytorch-cpu (a library function within ulps plus an absolute term, docs/fpbound-profiles.md), optionally +sequential|+blocked:k: the order the runtime sums in (docs/bounds.md, order38; default any order)"

// profileField is a JSON document's "profile": absent for the default.
func profileField(name string) string {
	if name == fpbound.ProfileIEEE {
		return ""
	}
	return name
}
