package model

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irsem"
)

// The files an imported model is written as (tlcheck import --out).
const (
	ImportGraph   = "graph.json"
	ImportPayload = "payload.json"
	ImportMap     = "onnx-map.json"
)

// ImportDoc is one document of an imported model: its file name and bytes.
type ImportDoc struct {
	Name string
	Data []byte
}

// ImportDocs encodes an imported ONNX model as the documents tlcheck
// import writes, in order: the IR graph (ImportGraph), its payload
// (ImportPayload; empty when the model has no parameters) and the
// tlcheck.onnx-map.v1 map from the IR back to the ONNX model (ImportMap).
// Everything is encoded, and so validated, before anything is written.
func (m *Model) ImportDocs() ([]ImportDoc, error) {
	gdoc, err := irsem.EncodeGraph(m.Graph)
	if err != nil {
		return nil, m.Err(err)
	}
	pdoc, err := irsem.EncodePayload(payloadOrEmpty(m.Payload))
	if err != nil {
		return nil, m.Err(err)
	}
	mdoc, err := onnxMap(m)
	if err != nil {
		return nil, err
	}
	return []ImportDoc{{ImportGraph, gdoc}, {ImportPayload, pdoc}, {ImportMap, mdoc}}, nil
}

func payloadOrEmpty(p *irsem.Payload) *irsem.Payload {
	if p == nil {
		return &irsem.Payload{Entries: map[int]*irsem.Params{}}
	}
	return p
}

// onnxMap is the tlcheck.onnx-map.v1 document of an imported model.
func onnxMap(m *Model) ([]byte, error) {
	im := m.ONNX.Imported
	doc := jsonout.OnnxMapDoc{Header: jsonout.NewHeader(jsonout.KindOnnxMap, nil, m.Files), Model: m.GraphPath, Opset: im.Opset,
		Graph: ImportGraph, Payload: ImportPayload, GraphInputs: []jsonout.OnnxMapValue{}, GraphOutputs: []jsonout.OnnxMapValue{},
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
	var b bytes.Buffer
	if err := jsonout.Write(&b, doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// CheckImportDir refuses an existing non-empty output directory (named
// by --out) unless force, and a path that is not a directory: before
// anything is read or written.
func CheckImportDir(dir string, force bool) error {
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
		return cli.Usagef("--out %s: output directory is not empty (import --force replaces %s, %s and %s in it)", dir, ImportGraph, ImportPayload, ImportMap)
	}
	return nil
}

// WriteImport writes the documents into dir (named by --out), creating
// it, each through a temporary file and a rename (writeAtomic).
func WriteImport(dir string, docs []ImportDoc) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cli.Usagef("--out %s: %s", dir, cli.UnwrapPath(err))
	}
	for _, d := range docs {
		if err := writeAtomic(filepath.Join(dir, d.Name), d.Data); err != nil {
			return cli.Usagef("--out %s: %v", dir, err)
		}
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
