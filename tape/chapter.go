package tape

import (
	"errors"

	"github.com/tlcheck/tlcheck/spec"
)

// Chapter is the chapter's example tape, recorded and swept: z = x⊙x + x⊙x
// (the second product detached when Detach), ℓ = Σz at x = (3, −1.5). Its
// gradient is checked against the closed form ∂ℓ/∂x = Kx with K = 4 (2 when
// detached: the detached product contributes nothing), computed without
// the tape.
type Chapter[T spec.Scalar[T]] struct {
	Tape    *Tape[T]
	Detach  bool
	Output  int            // the node of ℓ
	Loss    spec.Tensor[T] // ℓ
	Grad    spec.Tensor[T] // ∂ℓ/∂x from the reverse sweep
	Reached []int          // the nodes the sweep reached
	K       int64          // the closed form is Kx
	Want    spec.Tensor[T] // Kx
	Holds   bool           // Grad equals Want
}

// ErrChapterUnreached is RecordChapter's error when the reverse sweep does
// not reach x: the tape computed no gradient to check.
var ErrChapterUnreached = errors.New("node 0 (x) was not reached by the reverse sweep")

// RecordChapter records and sweeps the chapter's tape over T.
func RecordChapter[T spec.Scalar[T]](detach bool) (*Chapter[T], error) {
	t := New[T](nil)
	xv := spec.Vector(spec.Const[T](3), spec.ConstRat[T](-3, 2))
	x, err := t.Param("x", xv)
	if err != nil {
		return nil, err
	}
	a, err := t.Apply("mul", nil, x, x)
	if err != nil {
		return nil, err
	}
	b, err := t.Apply("mul", nil, x, x)
	if err != nil {
		return nil, err
	}
	if detach {
		if b, err = t.Detach(b); err != nil {
			return nil, err
		}
	}
	z, err := t.Apply("add", nil, a, b)
	if err != nil {
		return nil, err
	}
	l, err := t.Apply("sum", nil, z)
	if err != nil {
		return nil, err
	}
	g, err := t.BackwardScalar(l)
	if err != nil {
		return nil, err
	}
	c := &Chapter[T]{Tape: t, Detach: detach, Output: l, Reached: g.ReachedIDs(), K: 4}
	c.Loss, _ = t.Value(l)
	var ok bool
	if c.Grad, ok = g.Get(x); !ok {
		return nil, ErrChapterUnreached
	}
	if detach {
		c.K = 2
	}
	c.Want = spec.ScaleT(spec.Const[T](c.K), xv)
	c.Holds = spec.SameTensor(c.Grad, c.Want)
	return c, nil
}
