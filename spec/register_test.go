package spec

import (
	"strings"
	"testing"
)

// TestRegister: a private registry takes a new primitive and guards it;
// the shared registry, taken names and incomplete entries are refused,
// naming the field.
func TestRegister(t *testing.T) {
	shape := func(_ *Attrs, in []Shape) (Shape, error) { return in[0].Clone(), nil }
	id := func(_ *Attrs, xs []Tensor[Rat]) (Tensor[Rat], error) { return xs[0].Clone(), nil }
	jvp := func(_ *Attrs, _ []Tensor[Rat], _ Tensor[Rat], d []Tensor[Rat]) (Tensor[Rat], error) {
		return d[0].Clone(), nil
	}
	vjp := func(_ *Attrs, xs []Tensor[Rat], _ Tensor[Rat], d Tensor[Rat]) ([]Tensor[Rat], error) {
		_ = xs[5] // out of range: the guard turns the panic into an error
		return []Tensor[Rat]{d.Clone()}, nil
	}
	mk := func(name string) *Prim[Rat] {
		return &Prim[Rat]{OpInfo: &OpInfo{Name: name, MinArity: 1, MaxArity: 1, Shape: shape, Exact: true}, Forward: id, JVP: jvp, VJP: vjp}
	}
	r := New[Rat]()
	if err := r.Register(mk("user_id")); err != nil {
		t.Fatal(err)
	}
	p, err := r.Lookup("user_id")
	if err != nil {
		t.Fatal(err)
	}
	x := Vector(NewRat(1, 2))
	if y, err := p.Apply(nil, []Tensor[Rat]{x}); err != nil || !SameTensor(y, x) {
		t.Errorf("forward %v %v", y, err)
	}
	if _, err := p.VJP(nil, []Tensor[Rat]{x}, x, x); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("panicking VJP: %v", err)
	}
	if _, err := p.JVP(nil, []Tensor[Rat]{x, x}, x, nil); err == nil {
		t.Errorf("wrong arity accepted")
	}
	if _, err := Default[Rat]().Lookup("user_id"); err == nil {
		t.Errorf("leaked into the default registry")
	}
	for _, tc := range []struct {
		want string
		p    *Prim[Rat]
		reg  *Registry[Rat]
	}{
		{"already registered", mk("user_id"), r},
		{"already registered", mk("relu"), New[Rat]()},
		{"private copy", mk("other"), Default[Rat]()},
		{"Name", mk(""), r},
		{"Forward, JVP and VJP", func() *Prim[Rat] { p := mk("a"); p.VJP = nil; return p }(), r},
		{"Shape", func() *Prim[Rat] { p := mk("b"); p.Shape = nil; return p }(), r},
		{"MinArity/MaxArity", func() *Prim[Rat] { p := mk("c"); p.MinArity = 2; return p }(), r},
		{"nil", nil, r},
	} {
		if err := tc.reg.Register(tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
}
