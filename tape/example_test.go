package tape_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

// quad records z = x⊙x + x⊙x, ℓ = Σz at x = (3, −1.5), optionally
// detaching the second product, and returns the tape and the output id.
func quad[T spec.Scalar[T]](detachSecond bool) (*tape.Tape[T], int, error) {
	t := tape.New[T](nil)
	x, err := t.Param("x", spec.Vector(spec.Const[T](3), spec.ConstRat[T](-3, 2)))
	if err != nil {
		return nil, 0, err
	}
	a, err := t.Apply("mul", nil, x, x)
	if err != nil {
		return nil, 0, err
	}
	b, err := t.Apply("mul", nil, x, x)
	if err != nil {
		return nil, 0, err
	}
	if detachSecond {
		if b, err = t.Detach(b); err != nil {
			return nil, 0, err
		}
	}
	z, err := t.Apply("add", nil, a, b)
	if err != nil {
		return nil, 0, err
	}
	l, err := t.Apply("sum", nil, z)
	return t, l, err
}

// The chapter's worked example: five nodes, output id 4, ℓ = 22.5 and the
// gradient 4x = (12, −6), exactly over Rat.
func Example_quad() {
	t, out, err := quad[spec.Rat](false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("(%d, %d)\n", out, t.Len())
	fmt.Println(t.NodeList())
	l, _ := t.Value(out)
	fmt.Println("loss =", l)
	g, err := t.BackwardScalar(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	gx, _ := g.Get(0)
	fmt.Println("grad x =", gx)
	// Output:
	// (4, 5)
	// #[(some "x", #[]), (some "mul", #[0, 0]), (some "mul", #[0, 0]), (some "add", #[1, 2]), (some "sum", #[3])]
	// loss = 45/2
	// grad x = [12, -6]
}

// The same program over F64, printed with six decimals as the chapter does.
func Example_quadF64() {
	t, out, _ := quad[spec.F64](false)
	g, _ := t.BackwardScalar(out)
	gx, _ := g.Get(0)
	l, _ := t.Value(out)
	fmt.Println(tape.FormatFixed(l), tape.FormatFixed(gx))
	// Output:
	// 22.500000 [12.000000, -6.000000]
}

// With the second product detached: six nodes, the addition's parents are
// 1 and 3, the gradient is 2x = (6, −3), and the reached ids are
// [0, 1, 4, 5].
func Example_detach() {
	t, out, _ := quad[spec.Rat](true)
	fmt.Println(t.NodeList())
	g, _ := t.BackwardScalar(out)
	gx, _ := g.Get(0)
	fmt.Println("grad x =", gx)
	fmt.Println("reached =", g.ReachedIDs())
	fmt.Println("trace:", t.TraceView(g))
	// Output:
	// #[(some "x", #[]), (some "mul", #[0, 0]), (some "mul", #[0, 0]), (some "detach", #[2]), (some "add", #[1, 3]), (some "sum", #[4])]
	// grad x = [6, -3]
	// reached = [0 1 4 5]
	// trace: 5:sum -> 4:add -> 1:mul
}
