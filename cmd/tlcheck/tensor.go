package main

import (
	"errors"
	"io"
	"os"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/model"
)

// runTensor converts one tensor file — an ONNX TensorProto .pb, or a JSON
// tensor — into the JSON tensor document every --input and --cotangent
// flag reads ({"shape":[…],"values":[…]}, irsem's FORMAT.md). The values
// are exact: a FLOAT or DOUBLE element is the dyadic rational m·2^e it
// denotes, an integer element itself; a NaN or an infinity has no exact
// value and is refused, naming the element index.
func runTensor(args []string, stdout, _ io.Writer) error {
	fs := newFlags("tensor")
	out := fs.String("out", "", "write the JSON tensor to this file instead of stdout")
	if err := fs.parse(args, 1); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("tensor: one tensor file is required (usage: tlcheck tensor [--out FILE] FILE.pb)")
	}
	path := fs.Arg(0)
	tf, err := model.ReadTensorFile(model.RoleTensor, path, nil)
	if err != nil {
		return err
	}
	t, err := tf.Value()
	if err != nil {
		return err
	}
	b, err := irsem.EncodeTensor(t)
	if err != nil {
		return cli.Usagef("tensor %s: %v", path, err)
	}
	if *out == "" {
		_, err = stdout.Write(b)
		return err
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return cli.Usagef("--out %s: cannot write: %v", *out, err)
	}
	return nil
}
