package main

import (
	"bytes"

	"github.com/tlcheck/tlcheck/compare"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/model"
)

// namedFile is a file a command read and the role (flag) that named it.
type namedFile struct{ role, path string }

// compareGradJSON renders compare-grad's document. The files read are
// hashed again here (the model, inputs and dump were decoded to their
// end, so the hash covers what was judged unless a file changed since).
func compareGradJSON(modelName string, ulps int, tensors []jsonout.CompareGradTensor, read []namedFile) (string, error) {
	var inputs []jsonout.Input
	for _, f := range read {
		if f.path == "" {
			continue
		}
		h, err := model.HashFile(f.path)
		if err != nil {
			return "", cli.Usagef("--%s %s: cannot read: %s", f.role, f.path, cli.UnwrapPath(err))
		}
		inputs = append(inputs, jsonout.Input{Role: f.role, Path: f.path, SHA256: h})
	}
	doc := jsonout.CompareGradDoc{Header: jsonout.NewHeader(jsonout.KindCompareGrad, nil, inputs), Model: modelName, ULPs: ulps, Grads: tensors}
	if doc.Grads == nil {
		doc.Grads = []jsonout.CompareGradTensor{}
	}
	for _, t := range tensors {
		doc.Holds += t.Holds
		doc.Fails += t.Fails
		doc.Inconclusive += t.Inconclusive
	}
	doc.Verdict = compare.Verdict(doc.Fails, doc.Inconclusive)
	var b bytes.Buffer
	if err := jsonout.Write(&b, doc); err != nil {
		return "", err
	}
	return b.String(), nil
}
