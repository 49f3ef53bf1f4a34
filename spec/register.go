package spec

import "fmt"

// Register adds a primitive that is not in the reference registry to r,
// which must be a private copy from New (never Default's shared table):
// the public way to check a user's own op without touching the registry
// every other caller sees. It rejects, naming the field, a nil rule, an
// empty name, a name r already holds, a missing shape rule and an
// inconsistent arity. The primitive's rules are guarded as the built-in
// ones are (wrong arity and out-of-range indexing are errors, not panics).
// p is taken over by r (its OpInfo and rules are not copied).
func (r *Registry[T]) Register(p *Prim[T]) error {
	switch {
	case p == nil || p.OpInfo == nil:
		return fmt.Errorf("spec: Register: nil primitive or OpInfo")
	case r == Default[T]():
		return fmt.Errorf("spec: Register %s: the reference registry is shared; register into a private copy from New", p.Name)
	case p.Name == "":
		return fmt.Errorf("spec: Register: field Name: empty")
	case p.Forward == nil || p.JVP == nil || p.VJP == nil:
		return fmt.Errorf("spec: Register %s: fields Forward, JVP and VJP are all required", p.Name)
	case p.Shape == nil:
		return fmt.Errorf("spec: Register %s: field Shape: a shape rule is required", p.Name)
	case p.MinArity < 0 || (p.MaxArity >= 0 && p.MaxArity < p.MinArity):
		return fmt.Errorf("spec: Register %s: fields MinArity/MaxArity: %d..%d is no arity", p.Name, p.MinArity, p.MaxArity)
	case p.Unary != nil || p.Binary != nil:
		return fmt.Errorf("spec: Register %s: fields Unary/Binary describe reference rules only", p.Name)
	}
	if _, taken := r.prims[p.Name]; taken {
		return fmt.Errorf("spec: Register %s: field Name: primitive %q is already registered", p.Name, p.Name)
	}
	guard(p)
	r.prims[p.Name] = p
	r.names = append(r.names, p.Name)
	return nil
}
