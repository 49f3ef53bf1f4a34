package main

import (
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

// tapeExample records z = x⊙x + x⊙x (optionally detaching the second
// product), ℓ = Σz at x = (3, −1.5), prints the node list, the loss and the
// gradient, and checks the gradient against the closed form 4x (2x when
// detached), computed independently of the tape.
func tapeExample[T spec.Scalar[T]](w io.Writer, detach, asJSON bool) error {
	t := tape.New[T](nil)
	xv := spec.Vector(spec.Const[T](3), spec.ConstRat[T](-3, 2))
	x, err := t.Param("x", xv)
	if err != nil {
		return err
	}
	a, err := t.Apply("mul", nil, x, x)
	if err != nil {
		return err
	}
	b, err := t.Apply("mul", nil, x, x)
	if err != nil {
		return err
	}
	if detach {
		if b, err = t.Detach(b); err != nil {
			return err
		}
	}
	z, err := t.Apply("add", nil, a, b)
	if err != nil {
		return err
	}
	l, err := t.Apply("sum", nil, z)
	if err != nil {
		return err
	}
	g, err := t.BackwardScalar(l)
	if err != nil {
		return err
	}
	loss, _ := t.Value(l)
	gx, ok := g.Get(x)
	if !ok {
		return cli.Failf("node 0 (x) was not reached by the reverse sweep")
	}
	k := int64(4)
	if detach {
		k = 2
	}
	want := spec.ScaleT(spec.Const[T](k), xv)
	holds := spec.SameTensor(gx, want)
	if asJSON {
		doc := jsonout.TapeExampleDoc{Header: jsonout.NewHeader(jsonout.KindTapeExample, nil, nil), Scalar: spec.KindOf[T](), Detach: detach,
			Output: int(l), TapeLen: t.Len(), Loss: jsonout.TensorOf(loss), Grad: jsonout.TensorOf(gx), Reached: []int{},
			ClosedForm: fmt.Sprintf("%dx", k), Want: jsonout.TensorOf(want), Holds: holds}
		for _, id := range g.ReachedIDs() {
			doc.Reached = append(doc.Reached, int(id))
		}
		if err := jsonout.Write(w, doc); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "scalar=%s\n", spec.KindOf[T]())
		fmt.Fprintf(w, "(%d, %d)\n", l, t.Len())
		fmt.Fprintln(w, t.NodeList())
		fmt.Fprintf(w, "loss = %s\n", loss)
		fmt.Fprintf(w, "grad x = %s\n", gx)
		fmt.Fprintf(w, "reached = %v\n", g.ReachedIDs())
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
