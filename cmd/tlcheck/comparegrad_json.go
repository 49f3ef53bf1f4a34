package main

import (
	"bytes"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/spec"
)

// The status of one gradient in compare-grad's tlcheck.compare-grad.v1
// document.
const (
	gradChecked  = "checked"
	gradNotGiven = "not_given"
	gradConstant = "constant"
)

// gradTensorJSON is one gradient's entry: its verdict counts, the first
// failing (else inconclusive) element and the greatest absolute and
// relative differences with their indices (closenessOf) when checked.
func gradTensorJSON(name string, shape spec.Shape, status string, els []fpbound.Element) jsonout.CompareGradTensor {
	out := jsonout.CompareGradTensor{Name: name, Shape: append([]int{}, shape...), Status: status}
	if status != gradChecked {
		return out
	}
	c := closenessOf(shape, els)
	out.Holds, out.Fails, out.Inconclusive = c.total-c.fails-c.inconc, c.fails, c.inconc
	if c.total > 0 {
		abs, rel := jsonout.Number(c.absMax), jsonout.Number(c.relMax)
		out.MaxAbs, out.MaxAbsIndex = &abs, unravel(shape, c.absAt)
		out.MaxRel, out.MaxRelIndex = &rel, unravel(shape, c.relAt)
	}
	first, verdict := c.firstFail, verdictFails
	if first < 0 {
		first, verdict = c.firstInconcl, verdictInconclusive
	}
	if first >= 0 {
		el := els[first]
		out.First = compareElement(first, float64(el.Recorded), el.Exact, el.Bound, verdict)
	}
	return out
}

// namedFile is a file a command read and the role (flag) that named it.
type namedFile struct{ role, path string }

// compareGradJSON renders compare-grad's document. The files read are
// hashed again here (the model, inputs and dump were decoded to their
// end, so the hash covers what was judged unless a file changed since).
func compareGradJSON(model string, ulps int, tensors []jsonout.CompareGradTensor, read []namedFile) (string, error) {
	var inputs []jsonout.Input
	for _, f := range read {
		if f.path == "" {
			continue
		}
		h, err := hashFile(f.path)
		if err != nil {
			return "", cli.Usagef("--%s %s: cannot read: %s", f.role, f.path, statWhy(err))
		}
		inputs = append(inputs, jsonout.Input{Role: f.role, Path: f.path, SHA256: h})
	}
	doc := jsonout.CompareGradDoc{Header: jsonout.NewHeader(jsonout.KindCompareGrad, nil, inputs), Model: model, ULPs: ulps, Grads: tensors}
	if doc.Grads == nil {
		doc.Grads = []jsonout.CompareGradTensor{}
	}
	for _, t := range tensors {
		doc.Holds += t.Holds
		doc.Fails += t.Fails
		doc.Inconclusive += t.Inconclusive
	}
	switch {
	case doc.Fails > 0:
		doc.Verdict = verdictFails
	case doc.Inconclusive > 0:
		doc.Verdict = verdictInconclusive
	default:
		doc.Verdict = verdictHolds
	}
	var b bytes.Buffer
	if err := jsonout.Write(&b, doc); err != nil {
		return "", err
	}
	return b.String(), nil
}
