package typedgraph_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	tg "github.com/tlcheck/tlcheck/typedgraph"
)

// quad is the chapter's program z = x⊙x + x⊙x, ℓ = Σz, optionally with the
// second product detached, written once against Ops: it runs unchanged
// under the eager and the graph interpreter, over any scalar.
func quad[T spec.Scalar[T], R any](detachSecond bool) tg.Program[T, R] {
	return func(o tg.Ops[T, R], in []R) (R, error) {
		x := in[0]
		a, err := tg.Mul(o, x, x)
		if err != nil {
			return a, err
		}
		b, err := tg.Mul(o, x, x)
		if err != nil {
			return b, err
		}
		if detachSecond {
			if b, err = o.Detach(b); err != nil {
				return b, err
			}
		}
		z, err := tg.Add(o, a, b)
		if err != nil {
			return z, err
		}
		return tg.Sum(o, z)
	}
}

// Grad lowers the scalar program to a typed graph, lowers the graph to a
// tape with checked lowering and runs the reverse pass with seed 1: at
// x = (3, −1.5) the gradient is 4x = (12, −6), and 2x = (6, −3) with the
// second product detached — exactly over Rat, and to the digit over F64.
func ExampleGrad() {
	x := spec.Vector(spec.NewRat(3, 1), spec.NewRat(-3, 2))
	live, err := tg.Grad(nil, quad[spec.Rat, tg.Var](false), x)
	if err != nil {
		fmt.Println(err)
		return
	}
	detached, err := tg.Grad(nil, quad[spec.Rat, tg.Var](true), x)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("both branches live =", live[0])
	fmt.Println("second detached    =", detached[0])

	xf := spec.Vector[spec.F64](3, -1.5)
	gf, _ := tg.Grad(nil, quad[spec.F64, tg.Var](false), xf)
	gd, _ := tg.Grad(nil, quad[spec.F64, tg.Var](true), xf)
	fmt.Println("both branches live =", tape.FormatFixed(gf[0]))
	fmt.Println("second detached    =", tape.FormatFixed(gd[0]))
	// Output:
	// both branches live = [12, -6]
	// second detached    = [6, -3]
	// both branches live = [12.000000, -6.000000]
	// second detached    = [6.000000, -3.000000]
}

// One program text, two interpreters: under Eager every operation appends
// a tape node at once (a reference is a tape.Ref); under Builder every
// operation records a graph node and computes nothing (a reference is a
// Var). The recorded structures have the same shape, and evaluating the
// graph gives the eager loss.
func ExampleOps() {
	x := spec.Vector(spec.NewRat(3, 1), spec.NewRat(-3, 2))

	e := tg.NewEager[spec.Rat](nil)
	var selected []string
	e.Select = func(op string) error { selected = append(selected, op); return nil }
	out, _, err := tg.RunEager(e, quad[spec.Rat, tape.Ref](true), x)
	if err != nil {
		fmt.Println(err)
		return
	}
	loss, _ := e.Session.Value(out)
	fmt.Println("eager:", e.Session.Tape().NodeList())
	fmt.Println("selected:", selected)

	g, err := tg.Trace(nil, quad[spec.Rat, tg.Var](true), x.Shape)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("graph:", g)
	v, _ := g.EvalResult([]spec.Tensor[spec.Rat]{x})
	fmt.Println("loss:", loss, v)
	// Output:
	// eager: #[(some "x0", #[]), (some "mul", #[0, 0]), (some "mul", #[0, 0]), (some "detach", #[2]), (some "add", #[1, 3]), (some "sum", #[4])]
	// selected: [mul mul add sum]
	// graph: #[(some "x0", #[]), (some "mul", #[0, 0]), (some "mul", #[0, 0]), (some "detach", #[2]), (some "add", #[1, 3]), (some "sum", #[4])] -> 5
	// loss: 45/2 45/2
}

// A compiled plan is recorded once and reused: Forward and Backward reuse
// the plan's buffers on every call.
func ExampleGraph_Compile() {
	g, _ := tg.Trace(nil, quad[spec.F64, tg.Var](false), spec.Shape{2})
	e, _ := g.Compile()
	for _, x := range []spec.Tensor[spec.F64]{spec.Vector[spec.F64](3, -1.5), spec.Vector[spec.F64](1, 2)} {
		l, _ := e.Forward([]spec.Tensor[spec.F64]{x})
		gs, _ := e.Backward(spec.Scalar0[spec.F64](1))
		fmt.Println(l, gs[0])
	}
	// Output:
	// 22.5 [12, -6]
	// 10 [4, 8]
}

// The Hessian of Σx³ is diag(6x), computed forward over reverse through
// dual numbers, exactly over Rat.
func ExampleHessian() {
	cube := func(o tg.Ops[spec.Rat, tg.Var], in []tg.Var) (tg.Var, error) {
		sq, err := tg.Square(o, in[0])
		if err != nil {
			return sq, err
		}
		c, err := tg.Mul(o, sq, in[0])
		if err != nil {
			return c, err
		}
		return tg.Sum(o, c)
	}
	x := spec.Vector(spec.NewRat(1, 1), spec.NewRat(-1, 2), spec.NewRat(2, 1))
	h, err := tg.Hessian(nil, cube, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h[0][0].Shape, h[0][0])
	// Output:
	// [3,3] [[6, 0, 0], [0, -3, 0], [0, 0, 12]]
}
