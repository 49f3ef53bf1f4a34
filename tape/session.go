package tape

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// owner identifies a session. Its address is process-unique for the
// session's lifetime, so no global counter is needed.
type owner struct{ _ byte }

// Ref is a handle to a value recorded in a Session: the node id plus the
// owning session and the tape generation it was recorded in. A reset
// reuses node ids, so the id alone cannot establish that a handle belongs
// to the current recording.
type Ref struct {
	owner *owner
	gen   uint64
	id    int
}

// ID is the node id the handle names.
func (r Ref) ID() int { return r.id }

// Generation is the tape generation the handle was recorded in.
func (r Ref) Generation() uint64 { return r.gen }

// Session is an eager recording: a tape plus an owner and a generation.
// Reset discards the tape and advances the generation, invalidating every
// handle recorded before.
type Session[T spec.Scalar[T]] struct {
	me   *owner
	gen  uint64
	tape *Tape[T]
	reg  *spec.Registry[T]
}

// NewSession starts a session recording with reg (nil: the reference
// registry).
func NewSession[T spec.Scalar[T]](reg *spec.Registry[T]) *Session[T] {
	return &Session[T]{me: &owner{}, tape: New[T](reg), reg: reg}
}

// Tape is the current recording.
func (s *Session[T]) Tape() *Tape[T] { return s.tape }

// Generation is the current tape generation.
func (s *Session[T]) Generation() uint64 { return s.gen }

// Reset starts a new tape and advances the generation.
func (s *Session[T]) Reset() {
	s.tape = New[T](s.reg)
	s.gen++
}

// Check accepts a handle only if it belongs to this session and the
// current generation.
func (s *Session[T]) Check(r Ref) error {
	if r.owner != s.me {
		return fmt.Errorf("tensor reference belongs to a different session")
	}
	if r.gen != s.gen {
		return fmt.Errorf("stale tensor reference from generation %d; current generation is %d (resetTape invalidates recorded references)", r.gen, s.gen)
	}
	if r.id < 0 || r.id >= s.tape.Len() {
		return fmt.Errorf("invalid tensor reference id %d", r.id)
	}
	return nil
}

func (s *Session[T]) ref(id int, err error) (Ref, error) {
	if err != nil {
		return Ref{}, err
	}
	return Ref{owner: s.me, gen: s.gen, id: id}, nil
}

// Param records a parameter leaf.
func (s *Session[T]) Param(name string, v spec.Tensor[T]) (Ref, error) {
	return s.ref(s.tape.Param(name, v))
}

// Input records an input leaf.
func (s *Session[T]) Input(name string, v spec.Tensor[T]) (Ref, error) {
	return s.ref(s.tape.Input(name, v))
}

// Const records a constant.
func (s *Session[T]) Const(name string, v spec.Tensor[T]) (Ref, error) {
	return s.ref(s.tape.Const(name, v))
}

// Apply records a primitive over checked handles.
func (s *Session[T]) Apply(op string, a *spec.Attrs, args ...Ref) (Ref, error) {
	ids := make([]int, len(args))
	for i, r := range args {
		if err := s.Check(r); err != nil {
			return Ref{}, fmt.Errorf("%s argument %d: %w", op, i, err)
		}
		ids[i] = r.id
	}
	return s.ref(s.tape.Apply(op, a, ids...))
}

// Detach records a stop-gradient node.
func (s *Session[T]) Detach(r Ref) (Ref, error) {
	if err := s.Check(r); err != nil {
		return Ref{}, fmt.Errorf("detach: %w", err)
	}
	return s.ref(s.tape.Detach(r.id))
}

// Value reads a recorded value.
func (s *Session[T]) Value(r Ref) (spec.Tensor[T], error) {
	if err := s.Check(r); err != nil {
		return spec.Tensor[T]{}, err
	}
	return s.tape.Value(r.id)
}

// Backward runs the scalar backward from r.
func (s *Session[T]) Backward(r Ref) (*Grads[T], error) {
	if err := s.Check(r); err != nil {
		return nil, err
	}
	return s.tape.BackwardScalar(r.id)
}

// Grad reads the cotangent of r from a sweep's result; ok is false when
// r was not reached.
func (s *Session[T]) Grad(g *Grads[T], r Ref) (spec.Tensor[T], bool, error) {
	if err := s.Check(r); err != nil {
		return spec.Tensor[T]{}, false, err
	}
	v, ok := g.Get(r.id)
	return v, ok, nil
}
