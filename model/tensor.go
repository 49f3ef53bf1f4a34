package model

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// RoleTensor is the role of the tensor command's positional file: its
// errors start "tensor PATH:", since no flag names it.
const RoleTensor = "tensor"

// argRef is how an error names the argument of a role: "--role", or
// "tensor" for the tensor command's file (RoleTensor).
func argRef(role string) string {
	if role == RoleTensor {
		return RoleTensor
	}
	return "--" + role
}

// openDoc opens a document named by a flag, or explains why it cannot.
func openDoc(flagName, path string) (*os.File, error) {
	f, err := safeio.Open(path) // only a regular file: a FIFO or device is refused unopened
	if err != nil {
		return nil, cli.Usagef("%s %s: cannot read: %v", argRef(flagName), path, cli.UnwrapPath(err))
	}
	return f, nil
}

// readDoc reads and decodes one document named by a flag, and appends
// the file, with the SHA-256 of its bytes, to *files (when not nil). The
// decoders are strict (trailing data is an error), so a document that
// decodes was read to its end and the hash covers the whole file.
func readDoc[V any](flagName, path string, read func(io.Reader) (V, error), files *[]jsonout.Input) (V, error) {
	var zero V
	f, err := openDoc(flagName, path)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	h := jsonout.NewHashingReader(f)
	v, err := read(h)
	if err != nil {
		return zero, cli.Usagef("%s %s: %v", argRef(flagName), path, err)
	}
	if files != nil {
		*files = append(*files, jsonout.Input{Role: flagName, Path: path, SHA256: h.Sum()})
	}
	return v, nil
}

// TensorFile is one tensor file as read: an ONNX TensorProto (PB) or a
// JSON tensor (JSON), exactly one of them set.
type TensorFile struct {
	Path string
	PB   *onnx.Tensor
	JSON *irsem.RatTensor
}

// isJSON says whether a file holds a JSON tensor rather than a
// TensorProto: its first non-space byte is '{' (a TensorProto's first
// byte is a field key, never '{' = field 15 wire type 3, which
// TensorProto does not use).
func isJSON(path string) (bool, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		b, err := r.ReadByte()
		if err != nil {
			return false, nil
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b == '{', nil
	}
}

// ReadTensorFile reads one tensor file named by flag role, appending it
// with its hash to *files (when not nil).
func ReadTensorFile(role, path string, files *[]jsonout.Input) (TensorFile, error) {
	js, err := isJSON(path)
	if err != nil {
		return TensorFile{}, cli.Usagef("%s %s: cannot read: %s", argRef(role), path, statWhy(err))
	}
	if js {
		t, err := readDoc(role, path, irsem.ReadTensor, files)
		if err != nil {
			return TensorFile{}, err
		}
		return TensorFile{Path: path, JSON: &t}, nil
	}
	// Read once: the digest recorded is of the very bytes decoded.
	data, err := safeio.ReadFile(path, limits.Current().ONNXBytes)
	if err != nil {
		// onnx.ReadTensor words the refusal (a size over onnx-bytes, a
		// special file) as every other TensorProto reader does.
		if _, rerr := onnx.ReadTensor(path); rerr != nil {
			return TensorFile{}, cli.Usagef("%s: %v", argRef(role), rerr)
		}
		return TensorFile{}, cli.Usagef("%s %s: cannot read: %s", argRef(role), path, statWhy(err))
	}
	t, err := onnx.DecodeTensor(data)
	if err != nil {
		var oe *onnx.Error
		if errors.As(err, &oe) && oe.Path == "" {
			oe.Path = path // as ReadTensor names it
		}
		return TensorFile{}, cli.Usagef("%s: %v", argRef(role), err)
	}
	h := jsonout.SHA256(data)
	if files != nil {
		*files = append(*files, jsonout.Input{Role: role, Path: path, SHA256: h})
	}
	return TensorFile{Path: path, PB: t}, nil
}

// Rats returns the exact value of a tensor file, checked against the
// shape and element type the model declares for it (what names it: the
// graph input or output).
func (tf TensorFile) Rats(role, what string, shape spec.Shape) (irsem.RatTensor, error) {
	if tf.JSON != nil {
		if !tf.JSON.Shape.Equal(shape) {
			return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: shape mismatch: the model declares %v, the tensor has %v", role, tf.Path, what, shape, tf.JSON.Shape)
		}
		return *tf.JSON, nil
	}
	if !tf.PB.DataType.IsFloat() {
		return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: data type %v is not FLOAT or DOUBLE", role, tf.Path, what, tf.PB.DataType)
	}
	got, err := tf.PB.Shape()
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: %v", role, tf.Path, what, err)
	}
	if !got.Equal(shape) {
		return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: shape mismatch: the model declares %v, the tensor has %v", role, tf.Path, what, shape, got)
	}
	vs, err := tf.PB.Rats()
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: %v", role, tf.Path, what, err)
	}
	t, err := spec.NewTensor(shape.Clone(), vs)
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: %v", role, tf.Path, what, err)
	}
	return t, nil
}

// Value is the exact value of a tensor file at its own shape: a FLOAT or
// DOUBLE element is the dyadic rational m·2^e it denotes, an integer
// element itself; a NaN or an infinity has no exact value and is refused,
// naming the element index.
func (tf TensorFile) Value() (irsem.RatTensor, error) {
	if tf.JSON != nil {
		return *tf.JSON, nil
	}
	shape, err := tf.PB.Shape()
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("tensor %s: %v", tf.Path, err)
	}
	vs, err := tf.PB.Rats()
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("tensor %s: %v", tf.Path, err)
	}
	t, err := spec.NewTensor(shape, vs)
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("tensor %s: %v", tf.Path, err)
	}
	return t, nil
}

// pack places the tensors ts of the model's values vals (the float
// inputs, or the outputs) into the one IR tensor of shape ir, as the
// importer packs them (contract: one value is the IR tensor itself;
// several are the rank-1 concatenation of their flattened values, value k
// from vals[k].Offset on).
func pack(vals []onnx.IOValue, ts []irsem.RatTensor, ir spec.Shape) (irsem.RatTensor, error) {
	if len(vals) == 1 {
		t := ts[0]
		t.Shape = ir.Clone()
		if t.Shape.Size() != len(t.Data) {
			return irsem.RatTensor{}, fmt.Errorf("%s: %d values for the IR shape %v", vals[0].Name, len(t.Data), ir)
		}
		return t, nil
	}
	out, err := spec.Zeros[spec.Rat](ir.Clone())
	if err != nil {
		return irsem.RatTensor{}, err
	}
	for k, v := range vals {
		if v.Offset < 0 || v.Offset+len(ts[k].Data) > len(out.Data) {
			return irsem.RatTensor{}, fmt.Errorf("%s: offset %d and %d values do not fit the IR shape %v", v.Name, v.Offset, len(ts[k].Data), ir)
		}
		copy(out.Data[v.Offset:], ts[k].Data)
	}
	return out, nil
}

// Unpack splits an IR tensor's data into the model's values (see pack).
func Unpack[T any](vals []onnx.IOValue, data []T) ([][]T, error) {
	out := make([][]T, len(vals))
	for k, v := range vals {
		n := v.Shape.Size()
		off := v.Offset
		if len(vals) == 1 {
			off = 0
		}
		if off < 0 || off+n > len(data) {
			return nil, fmt.Errorf("output %s: offset %d and %d values do not fit %d values", v.Name, off, n, len(data))
		}
		out[k] = data[off : off+n]
	}
	return out, nil
}

// ReadCotangent reads the output cotangent file path (JSON or TensorProto
// .pb) as exact values of the output's shape, and adds it to m.Files.
func (m *Model) ReadCotangent(path string) (*irsem.RatTensor, error) {
	tf, err := ReadTensorFile("cotangent", path, &m.Files)
	if err != nil {
		return nil, err
	}
	out := m.Graph.Nodes[m.Graph.OutputID]
	ct, err := tf.Rats("cotangent", fmt.Sprintf("node %d (output)", out.ID), out.Shape)
	if err != nil {
		return nil, err
	}
	return &ct, nil
}
