package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/model"
)

func runImport(args []string, stdout, _ io.Writer) error {
	flags := cli.NewFlags("import")
	if err := addLimits(flags, "import"); err != nil {
		return cli.BadInput(err)
	}
	modelPath := flags.String("onnx", "", "ONNX model file to import (required)")
	out := flags.String("out", "", "directory to write graph.json, payload.json and onnx-map.json into (required)")
	force := flags.Bool("force", false, "write into a non-empty --out directory, replacing those three files (without it, import refuses one)")
	var inputs listFlag
	flags.Var(&inputs, "input", "a TensorProto .pb per graph input, in order, to bind the model's integer inputs (an Embedding's indices) at import")
	data := flags.String("data", "", "a recorded data set directory whose input_N.pb bind the integer inputs (instead of --input)")
	asJSON := flags.Bool("json", false, "print a tlcheck.import.v1 document listing the files written with their SHA-256")
	if err := cli.Parse(flags, args, 0); err != nil {
		return err
	}
	if *modelPath == "" {
		return cli.Usagef("import: --onnx is required")
	}
	if *out == "" {
		return cli.Usagef("import: --out DIR is required")
	}
	if err := checkImportDir(*out, *force); err != nil {
		return err
	}
	empty := ""
	mf := &modelFlags{cmd: "import", graph: &empty, payload: &empty, onnx: modelPath, inputs: inputs, data: data}
	files, err := mf.loadGraph()
	if err != nil {
		return err
	}
	docs, err := files.ImportDocs()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return cli.Usagef("--out %s: %s", *out, cli.UnwrapPath(err))
	}
	doc := jsonout.ImportDoc{Header: jsonout.NewHeader(jsonout.KindImport, nil, files.Files), Directory: *out}
	for _, d := range docs {
		if err := writeAtomic(filepath.Join(*out, d.Name), d.Data); err != nil {
			return cli.Usagef("--out %s: %v", *out, err)
		}
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

// checkImportDir refuses an existing non-empty --out without --force, and
// a path that is not a directory, before anything is read or written.
func checkImportDir(dir string, force bool) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return cli.Usagef("--out %s: %s", dir, cli.UnwrapPath(err))
	}
	if !st.IsDir() {
		return cli.Usagef("--out %s: not a directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return cli.Usagef("--out %s: %s", dir, cli.UnwrapPath(err))
	}
	if len(ents) > 0 && !force {
		return cli.Usagef("--out %s: output directory is not empty (import --force replaces %s, %s and %s in it)", dir, model.ImportGraph, model.ImportPayload, model.ImportMap)
	}
	return nil
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename, so that a reader never sees half a file.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tlcheck-import-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
