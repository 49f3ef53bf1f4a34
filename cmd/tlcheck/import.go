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
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/model"
)

// The files import writes into --out.
const (
	importGraph   = "graph.json"
	importPayload = "payload.json"
	importMap     = "onnx-map.json"
)

func runImport(args []string, stdout, _ io.Writer) error {
	flags := cli.NewFlags("import")
	if err := addLimits(flags, "import"); err != nil {
		return cli.BadInput(err)
	}
	model := flags.String("onnx", "", "ONNX model file to import (required)")
	out := flags.String("out", "", "directory to write graph.json, payload.json and onnx-map.json into (required)")
	force := flags.Bool("force", false, "write into a non-empty --out directory, replacing those three files (without it, import refuses one)")
	var inputs listFlag
	flags.Var(&inputs, "input", "a TensorProto .pb per graph input, in order, to bind the model's integer inputs (an Embedding's indices) at import")
	data := flags.String("data", "", "a recorded data set directory whose input_N.pb bind the integer inputs (instead of --input)")
	asJSON := flags.Bool("json", false, "print a tlcheck.import.v1 document listing the files written with their SHA-256")
	if err := cli.Parse(flags, args, 0); err != nil {
		return err
	}
	if *model == "" {
		return cli.Usagef("import: --onnx is required")
	}
	if *out == "" {
		return cli.Usagef("import: --out DIR is required")
	}
	if err := checkImportDir(*out, *force); err != nil {
		return err
	}
	empty := ""
	mf := &modelFlags{cmd: "import", graph: &empty, payload: &empty, onnx: model, inputs: inputs, data: data}
	files, err := mf.loadGraph()
	if err != nil {
		return err
	}
	// Everything is encoded (and so validated) before anything is written.
	gdoc, err := irsem.EncodeGraph(files.Graph)
	if err != nil {
		return files.Err(err)
	}
	pdoc, err := irsem.EncodePayload(payloadOrEmpty(files.Payload))
	if err != nil {
		return files.Err(err)
	}
	mdoc, err := onnxMap(files)
	if err != nil {
		return err
	}
	docs := []struct {
		name string
		data []byte
	}{{importGraph, gdoc}, {importPayload, pdoc}, {importMap, mdoc}}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return cli.Usagef("--out %s: %s", *out, cli.UnwrapPath(err))
	}
	doc := jsonout.ImportDoc{Header: jsonout.NewHeader(jsonout.KindImport, nil, files.Files), Directory: *out}
	for _, d := range docs {
		if err := writeAtomic(filepath.Join(*out, d.name), d.data); err != nil {
			return cli.Usagef("--out %s: %v", *out, err)
		}
		doc.Files = append(doc.Files, jsonout.ImportFile{Path: d.name, Format: docFormat(d.data), SHA256: jsonout.SHA256(d.data)})
	}
	if *asJSON {
		return jsonout.Write(stdout, doc)
	}
	_, err = fmt.Fprintf(stdout, "imported %s: %s nodes (%s), %s initializers; wrote %s, %s and %s to %s\n", *model,
		fmt.Sprint(len(files.Graph.Nodes)), docFormat(gdoc), fmt.Sprint(len(files.ONNX.Imported.Initializers)), importGraph, importPayload, importMap, *out)
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

func payloadOrEmpty(p *irsem.Payload) *irsem.Payload {
	if p == nil {
		return &irsem.Payload{Entries: map[int]*irsem.Params{}}
	}
	return p
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
		return cli.Usagef("--out %s: output directory is not empty (import --force replaces %s, %s and %s in it)", dir, importGraph, importPayload, importMap)
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

// onnxMap is the tlcheck.onnx-map.v1 document of an imported model.
func onnxMap(files *model.Model) ([]byte, error) {
	im := files.ONNX.Imported
	doc := jsonout.OnnxMapDoc{Header: jsonout.NewHeader(jsonout.KindOnnxMap, nil, files.Files), Model: files.GraphPath, Opset: im.Opset,
		Graph: importGraph, Payload: importPayload, GraphInputs: []jsonout.OnnxMapValue{}, GraphOutputs: []jsonout.OnnxMapValue{},
		Initializers: []jsonout.OnnxMapInit{}, Origin: append([]string{}, im.Origin...)}
	for _, v := range im.Inputs {
		doc.GraphInputs = append(doc.GraphInputs, jsonout.OnnxMapValue{Name: v.Name, Shape: append([]int{}, v.Shape...), DataType: v.DataType.String(), Offset: v.Offset})
	}
	for _, v := range im.Outputs {
		doc.GraphOutputs = append(doc.GraphOutputs, jsonout.OnnxMapValue{Name: v.Name, Shape: append([]int{}, v.Shape...), DataType: v.DataType.String(), Offset: v.Offset})
	}
	for _, in := range im.Initializers {
		j := jsonout.OnnxMapInit{Name: in.Name, Shape: append([]int{}, in.Shape...), Uses: []jsonout.OnnxMapUse{}}
		for _, u := range in.Uses {
			j.Uses = append(j.Uses, jsonout.OnnxMapUse{Node: u.Node, Field: u.Field})
		}
		doc.Initializers = append(doc.Initializers, j)
	}
	if doc.Origin == nil {
		doc.Origin = []string{}
	}
	var b jsonBuf
	if err := jsonout.Write(&b, doc); err != nil {
		return nil, err
	}
	return b.data, nil
}

// jsonBuf collects written bytes.
type jsonBuf struct{ data []byte }

func (b *jsonBuf) Write(p []byte) (int, error) { b.data = append(b.data, p...); return len(p), nil }
