package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

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
	fs := cli.NewFlags("compare")
	if err := addLimits(fs, "compare"); err != nil {
		return cli.BadInput(err)
	}
	modelPath := fs.String("onnx", "", "ONNX model file (required)")
	data := fs.String("data", "", "a recorded data set directory (input_N.pb, output_N.pb), or a directory of test_data_set_* directories (required)")
	ulps := fs.Int("ulps", fpbound.DefaultULPs, "accuracy assumed of the runtime's elementary functions (exp, tanh, …), in binary32 ulps")
	strict := fs.Bool("strict", false, "exit 1 when an element is inconclusive (by default inconclusive elements only warn)")
	asJSON := fs.Bool("json", false, "print a tlcheck.compare.v1 document")
	stats := fs.Bool("stats", false, statsUsage)
	if err := cli.Parse(fs, args, 0); err != nil {
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
	sets, err := model.DataSets(*data)
	if err != nil {
		return err
	}
	var inputs []jsonout.Input
	var reps []compare.Set
	for _, dir := range sets {
		rep, err := compareSet(*modelPath, dir, fpbound.Options{ULPs: *ulps}, &inputs)
		if err != nil {
			return err
		}
		reps = append(reps, *rep)
	}
	holds, fails, inconc := compare.Counts(reps)
	verdict := compare.Verdict(fails, inconc)
	var b bytes.Buffer
	if *asJSON {
		doc := jsonout.CompareDoc{Header: jsonout.NewHeader(jsonout.KindCompare, nil, inputs), Model: *modelPath, ULPs: *ulps, Strict: *strict,
			Sets: []jsonout.CompareSet{}, Holds: holds, Fails: fails, Inconclusive: inconc, Verdict: verdict}
		for _, r := range reps {
			doc.Sets = append(doc.Sets, r.JSON())
		}
		var err error
		if doc.Stats, err = runStats(*stats); err != nil {
			return err
		}
		if err := jsonout.Write(&b, doc); err != nil {
			return err
		}
	} else {
		printCompare(&b, *modelPath, reps, holds, fails, inconc)
	}
	if _, err := stdout.Write(b.Bytes()); err != nil {
		return err
	}
	switch {
	case fails > 0:
		return cli.Failf("compare: %s outside the a-priori float32 bound", cli.Count(fails, "element lies", "elements lie"))
	case inconc > 0 && *strict:
		return cli.Failf("compare: %s inconclusive (--strict)", cli.Count(inconc, "element", "elements"))
	}
	return nil
}

// compareSet loads the model with one data set's inputs and compares
// the set's recorded outputs (compare.Recorded); the files read are
// appended to *inputs, the model once.
func compareSet(modelPath, dir string, o fpbound.Options, inputs *[]jsonout.Input) (*compare.Set, error) {
	ins, err := model.DataFiles("data", dir, "input")
	if err != nil {
		return nil, err
	}
	outs, err := model.DataFiles("data", dir, "output")
	if err != nil {
		return nil, err
	}
	files, err := model.LoadONNX(modelPath, ins, model.Options{Recorded: true})
	if err != nil {
		return nil, err
	}
	if len(*inputs) == 0 {
		*inputs = append(*inputs, files.Files...)
	} else {
		*inputs = append(*inputs, files.Files[1:]...) // the model once
	}
	return compare.Recorded(files, dir, outs, o, inputs)
}

// short spells a float as its shortest decimal.
func short(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// outward spells v with at most 4 significant digits, rounded down
// (up = false) or up, so that a printed enclosure [outward(lo, false),
// outward(hi, true)] still contains [lo, hi]; a value that needs no more
// digits is printed as it is (its shortest decimal).
func outward(v float64, up bool) string {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return short(v)
	}
	if m, _, _ := strings.Cut(strconv.FormatFloat(math.Abs(v), 'e', -1, 64), "e"); len(strings.Replace(m, ".", "", 1)) <= 4 {
		return short(v)
	}
	s := strconv.FormatFloat(v, 'e', 3, 64)
	r, _ := strconv.ParseFloat(s, 64)
	if (up && r >= v) || (!up && r <= v) {
		return short(r)
	}
	// One unit in the last place of the mantissa further out.
	mant, exp, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(mant, "-")
	digits := strings.Replace(strings.TrimPrefix(mant, "-"), ".", "", 1)
	n, _ := strconv.Atoi(digits)
	if up != neg {
		n++
	} else {
		n--
	}
	e, _ := strconv.Atoi(exp)
	out := strconv.FormatFloat(float64(n), 'f', 0, 64) + "e" + strconv.Itoa(e-3)
	if neg {
		out = "-" + out
	}
	f, _ := strconv.ParseFloat(out, 64)
	return short(f)
}

func printCompare(w io.Writer, model string, reps []compare.Set, holds, fails, inconc int) {
	fmt.Fprintf(w, "model %s: %s\n", model, cli.Count(len(reps), "data set", "data sets"))
	for _, r := range reps {
		fmt.Fprintf(w, "data set %s:\n", r.Dir)
		for _, o := range r.Outputs {
			what := "output"
			if o.Gradient != "" {
				what = "gradient output"
			}
			fmt.Fprintf(w, "  %s %q %v: %s; max |recorded − exact| ∈ [%s, %s]", what, o.Name, o.Shape, cli.Count(o.Elements, "element", "elements"), outward(o.MaxErr[0], false), outward(o.MaxErr[1], true))
			if !math.IsNaN(o.Bound) {
				fmt.Fprintf(w, "; bound ≤ %s", outward(o.Bound, true))
			} else {
				fmt.Fprintf(w, "; against the exact gradient of %s", o.Gradient)
			}
			fmt.Fprintf(w, "; %d hold, %d fail, %d inconclusive\n", o.Holds, o.Fails, o.Inconc)
			if o.Exact {
				fmt.Fprintln(w, "    (an integer or boolean output decided at import: compared exactly)")
			} else if !math.IsNaN(o.Bound) && o.Elements > 0 {
				fmt.Fprintf(w, "    (bound: the first-order bound decides %d of %d elements, the classic one the rest", o.ByFirst, o.Elements)
				if !math.IsNaN(o.Estimate) && !math.IsInf(o.Estimate, 1) {
					fmt.Fprintf(w, "; reported, not decided: probabilistic estimate ≤ %s", outward(o.Estimate, true))
				}
				fmt.Fprintln(w, ")")
			}
			if !math.IsNaN(o.Ours[0]) {
				fmt.Fprintf(w, "    (reported, not decided: tlcheck's own f32 evaluation: max |f32 − exact| ∈ [%s, %s])\n", outward(o.Ours[0], false), outward(o.Ours[1], true))
			}
			if f := o.First; f != nil && f.Verdict != compare.Holds {
				fmt.Fprintf(w, "    first %s element %d: recorded %s, exact ∈ [%s, %s]", f.Verdict, f.Index, short(float64(f.Recorded)), short(float64(f.Exact.Lo.(jsonout.Number))), short(float64(f.Exact.Hi.(jsonout.Number))))
				if f.Bound != nil {
					fmt.Fprintf(w, ", bound %s", short(float64(*f.Bound)))
				}
				fmt.Fprintf(w, " (index %s)\n", compare.IndexText(o.Shape, f.Index))
				io.WriteString(w, o.Close.Lines("    "))
			}
		}
	}
	switch {
	case fails > 0:
		fmt.Fprintf(w, "\ncompare: FAILS: %s outside the bound (%d hold, %d inconclusive)\n", cli.Count(fails, "element lies", "elements lie"), holds, inconc)
	case inconc > 0:
		fmt.Fprintf(w, "\nwarning: %s inconclusive: neither shown within the bound nor outside it (%d hold); --strict makes this exit 1\n", cli.Count(inconc, "element is", "elements are"), holds)
	default:
		fmt.Fprintf(w, "\ncompare: all %s hold\n", cli.Count(holds, "element", "elements"))
	}
}
