// Package model loads what a tlcheck command runs: a model — a canonical
// IR graph (torchlean.ir.v1 or tlcheck.ir.v1, with its tlcheck.payload.v1
// payload) or an ONNX model imported to that IR — and its input, read from
// tensor files (a JSON tensor {"shape":[…],"values":[…]} or an ONNX
// TensorProto .pb, whose FLOAT and DOUBLE elements are dyadic rationals
// m·2^e, taken exactly) or from a recorded data set directory
// (input_0.pb, input_1.pb, …).
//
// Every file is checked against the others before anything runs — the
// payload against the graph, each input's element type and shape against
// the model's — so that an error names the file at fault. An ONNX model's
// float inputs are packed into the one IR input as the importer packs
// them: one value is the IR tensor itself; several are the rank-1
// concatenation of their flattened values, each from its offset (Unpack
// splits an IR tensor back into them).
//
// Each file read is recorded, in order, with the SHA-256 of the very bytes
// decoded (Model.Files), for the --json documents and the certificates.
// Errors are bad input (internal/cli's exit 2) and name the file the way
// the command line named it: "--input PATH: …".
//
// The package also evaluates and differentiates a loaded model over any
// scalar (Values, Grad), choosing exact rationals where they apply
// (AutoScalar), spells values for a text report (Text), and encodes an
// imported ONNX model as the files tlcheck import writes (ImportDocs).
package model

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// Model is a loaded model and its input: a graph, its optional payload
// and an input tensor, each checked against the others.
type Model struct {
	// GraphPath names the graph file (--graph) or the ONNX model (--onnx);
	// PayloadPath the payload ("" when none); InputPath the input files,
	// comma-separated ("" when the model was loaded without input).
	GraphPath, PayloadPath, InputPath string
	Graph                             *irsem.Graph
	Payload                           *irsem.Payload
	// Input is the exact IR input (for an ONNX model, its float inputs
	// packed).
	Input irsem.RatTensor
	// ONNX is the imported ONNX model, nil for an IR graph.
	ONNX *ONNX
	// Files are the files read, in order, with the SHA-256 of their bytes.
	Files []jsonout.Input
}

// ONNX is an imported ONNX model with what the commands need about it.
type ONNX struct {
	Path     string
	Model    *onnx.Model
	Imported *onnx.Imported
	// Specials are the IEEE statuses of the outputs on the inputs read
	// (onnx.Imported.Analyze; with Options.Recorded only, nil otherwise).
	Specials *onnx.Specials
}

// Where names the ONNX node IR node id came from ("" when none: an input
// or a packing node).
func (om *ONNX) Where(id int) string {
	if om == nil || id < 0 || id >= len(om.Imported.Origin) {
		return ""
	}
	return om.Imported.Origin[id]
}

// GradInits lists the initializers grad reports a gradient for: those
// with at least one use as IR data.
func (om *ONNX) GradInits() []string {
	var out []string
	for _, in := range om.Imported.Initializers {
		if len(in.Uses) > 0 {
			out = append(out, in.Name)
		}
	}
	return out
}

// Err attributes an evaluation error (which names the IR node) to the
// model file: for an ONNX model, the ONNX node the IR node came from is
// named first. It is bad input, exit 2.
func (m *Model) Err(err error) error {
	if m.ONNX == nil {
		return cli.Usagef("--graph %s: %v", m.GraphPath, err)
	}
	var ne *spec.NodeError
	if errors.As(err, &ne) && ne.Node >= 0 {
		if w := m.ONNX.Where(ne.Node); w != "" {
			return cli.Usagef("--onnx %s: %s: IR %v", m.GraphPath, w, err)
		}
	}
	return cli.Usagef("--onnx %s: %v", m.GraphPath, err)
}

// LoadIR reads a graph, a payload (optional) and an input and checks them
// against each other: the payload against the graph, the input's shape
// against the input node's. The input is a JSON tensor or an ONNX
// TensorProto .pb (ReadTensorFile). cmd names the command in the errors
// for a missing file.
func LoadIR(cmd, graphPath, payloadPath, inputPath string) (*Model, error) {
	if graphPath == "" {
		return nil, cli.Usagef("%s: --graph is required", cmd)
	}
	if inputPath == "" {
		return nil, cli.Usagef("%s: --input is required", cmd)
	}
	m := &Model{GraphPath: graphPath, PayloadPath: payloadPath, InputPath: inputPath}
	var err error
	if m.Graph, err = readDoc("graph", graphPath, irsem.ReadGraph, &m.Files); err != nil {
		return nil, err
	}
	if payloadPath != "" {
		if m.Payload, err = readDoc("payload", payloadPath, irsem.ReadPayload, &m.Files); err != nil {
			return nil, err
		}
	}
	if err := irsem.CheckPayload(m.Graph, m.Payload); err != nil {
		if payloadPath == "" {
			return nil, cli.Usagef("--graph %s: %v (no --payload given)", graphPath, err)
		}
		return nil, cli.Usagef("--payload %s: %v", payloadPath, err)
	}
	tf, err := ReadTensorFile("input", inputPath, &m.Files)
	if err != nil {
		return nil, err
	}
	in := &m.Graph.Nodes[m.Graph.InputID]
	if tf.JSON != nil && !tf.JSON.Shape.Equal(in.Shape) {
		return nil, cli.Usagef("--input %s: node %d (input): shape mismatch: the graph's input has shape %v, the tensor %v", inputPath, in.ID, in.Shape, tf.JSON.Shape)
	}
	if m.Input, err = tf.Rats("input", fmt.Sprintf("node %d (input)", in.ID), in.Shape); err != nil {
		return nil, err
	}
	return m, nil
}

// ReadGraph reads a graph and its payload (optional) without an input,
// checking the payload against the graph when one is given.
func ReadGraph(graphPath, payloadPath string) (*Model, error) {
	m := &Model{GraphPath: graphPath, PayloadPath: payloadPath}
	var err error
	if m.Graph, err = readDoc("graph", graphPath, irsem.ReadGraph, &m.Files); err != nil {
		return nil, err
	}
	if payloadPath != "" {
		if m.Payload, err = readDoc("payload", payloadPath, irsem.ReadPayload, &m.Files); err != nil {
			return nil, err
		}
		if err := irsem.CheckPayload(m.Graph, m.Payload); err != nil {
			return nil, cli.Usagef("--payload %s: %v", payloadPath, err)
		}
	}
	return m, nil
}

// DataFiles lists DIR/PREFIX_0.pb, PREFIX_1.pb, … up to the first index
// that does not exist; for the prefix "input" at least the first must.
// flagName is the flag that named dir. A data set directory is walked, not
// named file by file, so each entry must resolve inside it
// (safeio.StatIn): a symbolic link out of the directory, a loop or a
// dangling link is refused, naming the entry — never skipped as absent.
func DataFiles(flagName, dir, prefix string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		why := "not a directory"
		if err != nil {
			why = statWhy(err)
		}
		return nil, cli.Usagef("--%s %s: %s", flagName, dir, why)
	}
	var out []string
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s_%d.pb", prefix, i)
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err != nil {
			break
		}
		if _, err := safeio.StatIn(dir, name); err != nil {
			return nil, cli.Usagef("--%s %s: %s %v", flagName, dir, name, err)
		}
		out = append(out, p)
	}
	if len(out) == 0 && prefix == "input" {
		return nil, cli.Usagef("--%s %s: no %s_0.pb in the directory", flagName, dir, prefix)
	}
	return out, nil
}

// DataSets lists the data set directories of a --data directory: the
// directory itself when it holds input_0.pb or output_0.pb, else its
// test_data_set_* subdirectories, sorted.
func DataSets(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, cli.Usagef("--data %s: %s", dir, statWhy(err))
	}
	if !st.IsDir() {
		return nil, cli.Usagef("--data %s: not a directory", dir)
	}
	for _, f := range []string{"input_0.pb", "output_0.pb"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			return []string{dir}, nil // DataFiles judges its entries
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, cli.Usagef("--data %s: %s", dir, statWhy(err))
	}
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "test_data_set_") {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			// A linked data set is read only when it stays inside dir.
			fi, err := safeio.StatIn(dir, e.Name())
			if err != nil {
				return nil, cli.Usagef("--data %s: %s %v", dir, e.Name(), err)
			}
			if !fi.IsDir() {
				continue
			}
		} else if !e.IsDir() {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, cli.Usagef("--data %s: neither a data set (input_0.pb, output_0.pb) nor a directory of test_data_set_* directories", dir)
	}
	return out, nil
}

func statWhy(err error) string { return cli.UnwrapPath(err).Error() }

// HashFile is the SHA-256 of a file's bytes, in hex.
func HashFile(path string) (string, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
