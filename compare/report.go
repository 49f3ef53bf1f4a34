package compare

// The reports of `tlcheck compare` and `tlcheck compare-grad`: the text
// the commands print and compare-grad's JSON document.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/model"
)

// RecordedDir loads the ONNX model at modelPath with the data set dir's
// inputs (input_N.pb) and compares the set's recorded outputs
// (output_N.pb) as Recorded does; the files read are
// appended to *inputs, the model once.
func RecordedDir(modelPath, dir string, o fpbound.Options, inputs *[]jsonout.Input) (*Set, error) {
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
	return Recorded(files, dir, outs, o, inputs)
}

// File is a file a command read and the role (flag) that named it.
type File struct{ Role, Path string }

// GradsJSON renders `tlcheck compare-grad`'s document of the judged
// gradients res of the model named modelName (every element listed when
// elements is set). The files read are hashed again here (the model, inputs and dump were decoded to their
// end, so the hash covers what was judged unless a file changed since).
// profile is the runtime profile that decided ("" for the default, ieee).
func GradsJSON(modelName string, ulps int, profile string, res []Grad, elements bool, read []File) (string, error) {
	tensors := make([]jsonout.CompareGradTensor, len(res))
	for i, g := range res {
		tensors[i] = g.JSON(elements)
	}
	var inputs []jsonout.Input
	for _, f := range read {
		if f.Path == "" {
			continue
		}
		h, err := model.HashFile(f.Path)
		if err != nil {
			return "", cli.Usagef("--%s %s: cannot read: %s", f.Role, f.Path, cli.UnwrapPath(err))
		}
		inputs = append(inputs, jsonout.Input{Role: f.Role, Path: f.Path, SHA256: h})
	}
	doc := jsonout.CompareGradDoc{Header: jsonout.NewHeader(jsonout.KindCompareGrad, nil, inputs), Model: modelName, ULPs: ulps, Profile: profile, Grads: tensors}
	if doc.Grads == nil {
		doc.Grads = []jsonout.CompareGradTensor{}
	}
	for _, t := range tensors {
		doc.Holds += t.Holds
		doc.Fails += t.Fails
		doc.Inconclusive += t.Inconclusive
	}
	doc.Verdict = Verdict(doc.Fails, doc.Inconclusive)
	var b bytes.Buffer
	if err := jsonout.Write(&b, doc); err != nil {
		return "", err
	}
	return b.String(), nil
}

// GradsText is `tlcheck compare-grad`'s report of the judged gradients, one line a
// tensor (and the assert_close-style summary under one that does not
// hold); it returns the number of tensors with an element outside the
// bound.
func GradsText(res []Grad) (string, int) {
	var b strings.Builder
	failed := 0
	for _, g := range res {
		name := limits.Escape(g.Name) // a name from the model: no terminal control passes
		switch g.Status {
		case Constant:
			fmt.Fprintf(&b, "%s %v: not checked: the IR reads it as a constant, which has no gradient there\n", name, g.Shape)
			continue
		case NotGiven:
			fmt.Fprintf(&b, "%s %v: not given\n", name, g.Shape)
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
		fmt.Fprintf(&b, "%s %v: %d holds, %d fails, %d inconclusive; worst error/bound %.3g", name, g.Shape, s.Holds, s.Fails, s.Inconclusive, worst)
		if s.FirstFail >= 0 {
			failed++
			el := els[s.FirstFail]
			fmt.Fprintf(&b, "; first outside: element %d at index %s: recorded %v (0x%08x), exact in %v, bound %.6g",
				s.FirstFail, IndexText(g.Shape, s.FirstFail), el.Recorded, math.Float32bits(el.Recorded), el.Exact, el.Bound)
		} else if s.Inconclusive > 0 {
			for _, el := range els {
				if el.Verdict == fpbound.Inconclusive && el.Reason != "" {
					fmt.Fprintf(&b, "; inconclusive: %s", el.Reason)
					break
				}
			}
		}
		b.WriteByte('\n')
		b.WriteString(Summarize(g.Shape, els).Lines("  "))
		for _, el := range els {
			if !math.IsInf(el.FirstOrder, 1) {
				by := map[string]int{}
				for _, d := range g.DecidedBy {
					by[d]++
				}
				fmt.Fprintf(&b, "  (bound: the combined first-order bound decides %d and the boxed one %d of %d elements, the classic one the rest)\n", by[fpbound.GradByCombined], by[fpbound.GradByBoxed], len(els))
				break
			}
		}
	}
	return b.String(), failed
}

// WriteText writes `tlcheck compare`'s report of the judged data sets of
// the model named model: one line an output, the first element that does
// not hold, and the verdict line.
func WriteText(w io.Writer, model string, reps []Set) {
	holds, fails, inconc := Counts(reps)
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
			if o.Format != "" {
				fmt.Fprintf(w, "    (format: %s)\n", o.Format)
			}
			if o.CentreFallback != "" {
				fmt.Fprintf(w, "    (centre: the %s enclosure, not the exact rational value: %s)\n", o.Centre, o.CentreFallback)
			}
			if !math.IsNaN(o.Ours[0]) {
				fmt.Fprintf(w, "    (reported, not decided: tlcheck's own f32 evaluation: max |f32 − exact| ∈ [%s, %s])\n", outward(o.Ours[0], false), outward(o.Ours[1], true))
			}
			if f := o.First; f != nil && f.Verdict != Holds {
				fmt.Fprintf(w, "    first %s element %d: recorded %s, exact ∈ [%s, %s]", f.Verdict, f.Index, short(float64(f.Recorded)), short(float64(f.Exact.Lo.(jsonout.Number))), short(float64(f.Exact.Hi.(jsonout.Number))))
				if f.Bound != nil {
					fmt.Fprintf(w, ", bound %s", short(float64(*f.Bound)))
				}
				fmt.Fprintf(w, " (index %s)\n", IndexText(o.Shape, f.Index))
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

// Doc is `tlcheck compare`'s document of the judged data sets of the model
// named model, read from inputs; its Stats are the caller's.
func Doc(model string, ulps int, strict bool, sets []Set, inputs []jsonout.Input) jsonout.CompareDoc {
	holds, fails, inconc := Counts(sets)
	doc := jsonout.CompareDoc{Header: jsonout.NewHeader(jsonout.KindCompare, nil, inputs), Model: model, ULPs: ulps, Strict: strict,
		Sets: []jsonout.CompareSet{}, Holds: holds, Fails: fails, Inconclusive: inconc, Verdict: Verdict(fails, inconc)}
	for _, r := range sets {
		doc.Sets = append(doc.Sets, r.JSON())
	}
	return doc
}
