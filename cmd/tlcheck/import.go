package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/model"
)

func runImport(args []string, stdout, _ io.Writer) error {
	flags := newFlags("import")
	modelPath := flags.String("onnx", "", "ONNX model file to import (required)")
	out := flags.String("out", "", "directory to write graph.json, payload.json and onnx-map.json into (required)")
	force := flags.Bool("force", false, "write into a non-empty --out directory, replacing those three files (without it, import refuses one)")
	var inputs listFlag
	flags.Var(&inputs, "input", "a TensorProto .pb per graph input, in order, to bind the model's integer inputs (an Embedding's indices) at import")
	data := flags.String("data", "", "a recorded data set directory whose input_N.pb bind the integer inputs (instead of --input)")
	asJSON := flags.Bool("json", false, "print a tlcheck.import.v1 document listing the files written with their SHA-256")
	if err := flags.parse(args, 0); err != nil {
		return err
	}
	if *modelPath == "" {
		return cli.Usagef("import: --onnx is required")
	}
	if *out == "" {
		return cli.Usagef("import: --out DIR is required")
	}
	if err := model.CheckImportDir(*out, *force); err != nil {
		return err
	}
	mf := &model.Spec{Cmd: "import", ONNX: *modelPath, Inputs: inputs, Data: *data}
	files, err := mf.LoadGraph()
	if err != nil {
		return err
	}
	docs, err := files.ImportDocs()
	if err != nil {
		return err
	}
	if err := model.WriteImport(*out, docs); err != nil {
		return err
	}
	doc := jsonout.ImportDoc{Header: jsonout.NewHeader(jsonout.KindImport, nil, files.Files), Directory: *out}
	for _, d := range docs {
		doc.Files = append(doc.Files, jsonout.ImportFile{Path: d.Name, Format: docFormat(d.Data), SHA256: jsonout.SHA256(d.Data)})
	}
	if *asJSON {
		return jsonout.Write(stdout, doc)
	}
	_, err = fmt.Fprintf(stdout, "imported %s: %s nodes (%s), %s initializers; wrote %s, %s and %s to %s\n", *modelPath,
		fmt.Sprint(len(files.Graph.Nodes)), docFormat(docs[0].Data), fmt.Sprint(len(files.ONNX.Imported.Initializers)), model.ImportGraph, model.ImportPayload, model.ImportMap, *out)
	return err
}

// docFormat reads a document's "format" member.
func docFormat(data []byte) string {
	var h struct {
		Format string `json:"format"`
	}
	_ = json.Unmarshal(data, &h)
	return h.Format
}
