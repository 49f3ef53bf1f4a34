package check_test

import (
	"fmt"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/spec"
)

// maxWeights are the tie-aware weights of max(a, b): ∂/∂a = step(a−b) +
// (1 − step(a−b) − step(b−a))/2, i.e. 1, 0 or 1/2 at a tie, and
// symmetrically for b.
func maxWeights[T spec.Scalar[T]](a, b T) (wa, wb T) {
	half := spec.ConstRat[T](1, 2)
	sab, sba := a.Sub(b).Step(), b.Sub(a).Step()
	tie := spec.One[T]().Sub(sab).Sub(sba).Mul(half)
	return sab.Add(tie), sba.Add(tie)
}

// maxRules are the rules of the user's primitive mymax(a, b), elementwise
// max with the 1/2-1/2 tie convention, written once over any scalar. With
// wrongTie, the VJP sends the whole cotangent to a at a tie — a bug only a
// tie can show.
func maxRules[T spec.Scalar[T]](wrongTie bool) check.Rules[T] {
	return check.Rules[T]{
		Forward: func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
			y := xs[0].Clone()
			for k := range y.Data {
				y.Data[k] = xs[0].Data[k].Max(xs[1].Data[k])
			}
			return y, nil
		},
		JVP: func(xs []spec.Tensor[T], _ spec.Tensor[T], dxs []spec.Tensor[T]) (spec.Tensor[T], error) {
			t := xs[0].Clone()
			for k := range t.Data {
				wa, wb := maxWeights(xs[0].Data[k], xs[1].Data[k])
				t.Data[k] = wa.Mul(dxs[0].Data[k]).Add(wb.Mul(dxs[1].Data[k]))
			}
			return t, nil
		},
		VJP: func(xs []spec.Tensor[T], _ spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
			ga, gb := xs[0].Clone(), xs[1].Clone()
			for k := range dy.Data {
				a, b := xs[0].Data[k], xs[1].Data[k]
				wa, wb := maxWeights(a, b)
				if wrongTie {
					wa, wb = spec.One[T]().Sub(b.Sub(a).Step()), b.Sub(a).Step()
				}
				ga.Data[k], gb.Data[k] = wa.Mul(dy.Data[k]), wb.Mul(dy.Data[k])
			}
			return []spec.Tensor[T]{ga, gb}, nil
		},
	}
}

func mymax(wrongTie bool) check.Primitive {
	return check.Primitive{Name: "mymax", Arity: 2, Exact: true, Ties: "max(a,b) at a = b: 1/2 to each",
		Doc: "elementwise max", Rat: maxRules[spec.Rat](wrongTie), Interval: maxRules[spec.Interval](wrongTie),
		Dual: maxRules[check.Dual](wrongTie)}
}

// TestMyMax is how a user checks an op from their own go test: rapid draws
// the cases, shrinks a failure and prints its replay line.
func TestMyMax(t *testing.T) {
	check.Op(t, mymax(false), check.Options{})
}

// Example checks a correct user primitive: every obligation holds on the
// default 100 cases of the deterministic sweep.
func Example() {
	rep, err := check.Find(mymax(false), check.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Op, "cases:", rep.Cases, "counterexample:", rep.Failure)
	// Output:
	// mymax cases: 100 counterexample: <nil>
}

// Example_wrongAtTie finds a VJP that is wrong only where a = b and prints
// the shrunk counterexample: a rank-0 tie at 0, where ⟨jvp, δ⟩ splits the
// tangent 1/2-1/2 and ⟨dx, vjp⟩ does not.
func Example_wrongAtTie() {
	rep, err := check.Find(mymax(true), check.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("case %d of seed %d, shrunk:\n%v\n", rep.Failure.Case, rep.Failure.Seed, rep.Failure)
	// Output:
	// case 0 of seed 1, shrunk:
	// adjointness fails for mymax (oracle rat): ⟨jvp,δ⟩=1/2 ≠ ⟨dx,vjp⟩=0; inputs (0, 0) dx (0, 1) δ 1
}
