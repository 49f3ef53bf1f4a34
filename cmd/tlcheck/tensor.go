package main

import (
	"errors"
	"io"
	"os"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// runTensor converts one tensor file — an ONNX TensorProto .pb, or a JSON
// tensor — into the JSON tensor document every --input and --cotangent
// flag reads ({"shape":[…],"values":[…]}, irsem's FORMAT.md). The values
// are exact: a FLOAT or DOUBLE element is the dyadic rational m·2^e it
// denotes, an integer element itself; a NaN or an infinity has no exact
// value and is refused, naming the element index.
func runTensor(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("tensor")
	if err := addLimits(fs, "tensor"); err != nil {
		return cli.BadInput(err)
	}
	out := fs.String("out", "", "write the JSON tensor to this file instead of stdout")
	if err := cli.Parse(fs, args, 1); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("tensor: one tensor file is required (usage: tlcheck tensor [--out FILE] FILE.pb)")
	}
	path := fs.Arg(0)
	tf, err := readTensorFile(argTensor, path, nil)
	if err != nil {
		return err
	}
	t, err := tensorValue(tf)
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

// tensorValue is the exact value of a tensor file at its own shape.
func tensorValue(tf tensorFile) (irsem.RatTensor, error) {
	if tf.js != nil {
		return *tf.js, nil
	}
	shape, err := tf.pb.Shape()
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("tensor %s: %v", tf.path, err)
	}
	vs, err := tf.pb.Rats()
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("tensor %s: %v", tf.path, err)
	}
	t, err := spec.NewTensor(shape, vs)
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("tensor %s: %v", tf.path, err)
	}
	return t, nil
}
