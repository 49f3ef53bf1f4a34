package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

func runTapeExample(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("tape-example")
	scalar := fs.String("scalar", "rat", "rat|f64|f32")
	detach := fs.Bool("detach", false, "detach the second product")
	asJSON := fs.Bool("json", false, "print a tlcheck.tape-example.v1 JSON document instead of the transcript")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if err := oneOf("scalar", *scalar, "rat", "f64", "f32"); err != nil {
		return err
	}
	switch *scalar {
	case "f64":
		return tapeExample[spec.F64](stdout, *detach, *asJSON)
	case "f32":
		return tapeExample[spec.F32](stdout, *detach, *asJSON)
	}
	return tapeExample[spec.Rat](stdout, *detach, *asJSON)
}

// tapeExample prints the chapter's tape over T (tape.RecordChapter): the
// node list, the loss and the gradient, and the closed form it is checked
// against.
func tapeExample[T spec.Scalar[T]](w io.Writer, detach, asJSON bool) error {
	c, err := tape.RecordChapter[T](detach)
	if err != nil {
		if errors.Is(err, tape.ErrChapterUnreached) {
			return cli.Failf("%v", err)
		}
		return err
	}
	l, t, gx, k, want, holds := c.Output, c.Tape, c.Grad, c.K, c.Want, c.Holds
	if asJSON {
		doc := jsonout.TapeExampleDoc{Header: jsonout.NewHeader(jsonout.KindTapeExample, nil, nil), Scalar: spec.KindOf[T](), Detach: detach,
			Output: l, TapeLen: t.Len(), Loss: jsonout.TensorOf(c.Loss), Grad: jsonout.TensorOf(gx), Reached: []int{},
			ClosedForm: fmt.Sprintf("%dx", k), Want: jsonout.TensorOf(want), Holds: holds}
		doc.Reached = append(doc.Reached, c.Reached...)
		if err := jsonout.Write(w, doc); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "scalar=%s\n", spec.KindOf[T]())
		fmt.Fprintf(w, "(%d, %d)\n", l, t.Len())
		fmt.Fprintln(w, t.NodeList())
		fmt.Fprintf(w, "loss = %s\n", c.Loss)
		fmt.Fprintf(w, "grad x = %s\n", gx)
		fmt.Fprintf(w, "reached = %v\n", c.Reached)
		fmt.Fprintf(w, "closed form %dx = %s\n", k, want)
	}
	if !holds {
		return cli.Failf("tape gradient %s differs from the closed form %dx = %s", gx, k, want)
	}
	if !asJSON {
		fmt.Fprintln(w, "holds: tape gradient equals the closed form")
	}
	return nil
}
