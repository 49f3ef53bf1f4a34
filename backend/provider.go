package backend

import (
	"fmt"
	"sort"
	"sync"

	"github.com/tlcheck/tlcheck/spec"
)

// Handler is a provider's execution entry point over float32 tensors: it
// computes the forward value of the registry primitive op with attributes
// a on the parents xs.
type Handler func(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error)

// Provider is a runtime provider: a named executor on one device that
// implements a declared set of registry primitives. The reference provider
// runs the spec registry's forward rules; the fast float32 CPU provider
// (issue 6) and the CUDA provider (package cuda) implement this interface
// and are registered in a Providers set.
//
// Execute is only called through a Binding, after the op has been checked
// against Ops and the parents against the op's shape rule; a Binding also
// checks the shape of the result.
type Provider interface {
	// Name is the provider name capsules refer to, e.g. "reference".
	Name() string
	// Device is the device the provider runs on.
	Device() Device
	// Ops lists the registry primitives the provider has handlers for.
	Ops() []string
	// Execute computes op's forward value.
	Execute(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error)
}

// FuncProvider is a Provider built from a Handler and a declared op set.
type FuncProvider struct {
	name    string
	device  Device
	ops     []string
	handler Handler
}

// NewFuncProvider builds a provider called name on device that runs h for
// each op in ops. It rejects an empty name or device, a nil handler, and an
// op the spec registry does not know.
func NewFuncProvider(name string, device Device, ops []string, h Handler) (*FuncProvider, error) {
	switch {
	case name == "":
		return nil, fmt.Errorf("backend: provider has no name")
	case device == "":
		return nil, fmt.Errorf("backend: provider %s has no device", name)
	case h == nil:
		return nil, fmt.Errorf("backend: provider %s has no handler", name)
	}
	seen := map[string]bool{}
	var list []string
	for _, op := range ops {
		if _, err := spec.Info(op); err != nil {
			return nil, fmt.Errorf("backend: provider %s: %w", name, err)
		}
		if !seen[op] {
			seen[op] = true
			list = append(list, op)
		}
	}
	return &FuncProvider{name: name, device: device, ops: list, handler: h}, nil
}

// Name is the provider name.
func (p *FuncProvider) Name() string { return p.name }

// Device is the provider's device.
func (p *FuncProvider) Device() Device { return p.device }

// Ops lists the declared ops.
func (p *FuncProvider) Ops() []string { return append([]string(nil), p.ops...) }

// Execute runs the handler.
func (p *FuncProvider) Execute(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	if p == nil || p.handler == nil {
		return spec.Tensor[spec.F32]{}, fmt.Errorf("backend: provider has no handler (use NewFuncProvider)")
	}
	return p.handler(op, a, xs)
}

// NewReferenceProvider returns the reference CPU provider over reg (nil:
// the shared spec.Default registry): it implements every primitive of reg
// with its forward rule (Prim.Apply). A test may pass a private registry
// from spec.New with a planted fault.
func NewReferenceProvider(reg *spec.Registry[spec.F32]) Provider {
	if reg == nil {
		reg = spec.Default[spec.F32]()
	}
	return &referenceProvider{reg: reg}
}

type referenceProvider struct{ reg *spec.Registry[spec.F32] }

// Name is "reference".
func (p *referenceProvider) Name() string { return ProviderReference }

// Device is cpu.
func (p *referenceProvider) Device() Device { return DeviceCPU }

// Ops lists every primitive of the registry.
func (p *referenceProvider) Ops() []string { return p.reg.Names() }

// Execute applies the registry's forward rule.
func (p *referenceProvider) Execute(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	prim, err := p.reg.Lookup(op)
	if err != nil {
		return spec.Tensor[spec.F32]{}, err
	}
	return prim.Apply(a, xs)
}

// Providers is a registry of runtime providers by name. It is safe for
// concurrent use.
type Providers struct {
	mu     sync.RWMutex
	byName map[string]registered
}

type registered struct {
	p   Provider
	ops map[string]bool
}

// NewProviders returns a registry holding ps.
func NewProviders(ps ...Provider) (*Providers, error) {
	r := &Providers{byName: map[string]registered{}}
	for _, p := range ps {
		if err := r.Register(p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// DefaultProviders returns a fresh registry holding only the reference
// provider over the shared spec registry.
func DefaultProviders() *Providers {
	r := &Providers{}
	_ = r.Register(NewReferenceProvider(nil)) // cannot fail: a fresh registry and a named cpu provider
	return r
}

func opSet(ops []string) map[string]bool {
	m := make(map[string]bool, len(ops))
	for _, op := range ops {
		m[op] = true
	}
	return m
}

// Register adds a provider. Its op set is read once, now. It rejects a nil
// provider, an empty name or device, and a name already registered.
func (r *Providers) Register(p Provider) error {
	if r == nil {
		return fmt.Errorf("backend: no provider registry")
	}
	if p == nil {
		return fmt.Errorf("backend: cannot register a nil provider")
	}
	name := p.Name()
	if name == "" {
		return fmt.Errorf("backend: cannot register a provider without a name")
	}
	if p.Device() == "" {
		return fmt.Errorf("backend: provider %s has no device", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = map[string]registered{}
	}
	if _, dup := r.byName[name]; dup {
		return fmt.Errorf("backend: provider %q is already registered", name)
	}
	r.byName[name] = registered{p: p, ops: opSet(p.Ops())}
	return nil
}

// Lookup returns the provider called name.
func (r *Providers) Lookup(name string) (Provider, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.byName[name]
	return e.p, ok
}

// Names lists the registered providers, sorted.
func (r *Providers) Names() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Bind connects a capsule to the runtime handler that executes it. It
// fails with a *MissingProviderError when the capsule's provider is not
// registered, and with a *MissingHandlerError when the provider runs on
// another device or has no handler for the capsule's op.
func (r *Providers) Bind(c Capsule) (*Binding, error) {
	if r == nil {
		return nil, &MissingProviderError{Capsule: c.Name, Op: c.Op, Provider: c.Provider}
	}
	r.mu.RLock()
	e, ok := r.byName[c.Provider]
	r.mu.RUnlock()
	if !ok {
		return nil, &MissingProviderError{Capsule: c.Name, Op: c.Op, Provider: c.Provider}
	}
	if d := e.p.Device(); d != c.Device {
		return nil, &MissingHandlerError{Capsule: c.Name, Op: c.Op, Provider: c.Provider,
			Reason: fmt.Sprintf("runs on device %s, but the capsule declares device %s", d, c.Device)}
	}
	if !e.ops[c.Op] {
		return nil, &MissingHandlerError{Capsule: c.Name, Op: c.Op, Provider: c.Provider,
			Reason: "has no handler for " + c.Op}
	}
	return &Binding{Capsule: c, Provider: e.p}, nil
}

// Binding is a capsule bound to the provider that executes it.
type Binding struct {
	Capsule  Capsule
	Provider Provider
}

// Execute runs the bound capsule's forward value. Before calling the
// provider it checks that the capsule supports forward, that every parent
// is a well-formed tensor and that the parents suit the op's shape rule
// (the portable runtime shape checks); afterwards it checks that the
// result has the inferred shape.
func (b *Binding) Execute(a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	if b == nil || b.Provider == nil {
		return zero, fmt.Errorf("backend: execute on an unbound capsule")
	}
	name, op := b.Capsule.Name, b.Capsule.Op
	if !b.Capsule.SupportsForward {
		return zero, fmt.Errorf("backend: %s does not support forward", name)
	}
	info, err := spec.Info(op)
	if err != nil {
		return zero, fmt.Errorf("backend: %s: %w", name, err)
	}
	in := make([]spec.Shape, len(xs))
	for i, x := range xs {
		n, err := x.Shape.Check(0)
		if err != nil {
			return zero, fmt.Errorf("backend: %s: parent %d: %w", name, i, err)
		}
		if len(x.Data) != n {
			return zero, fmt.Errorf("backend: %s: parent %d of shape %v holds %d values, expected %d",
				name, i, x.Shape, len(x.Data), n)
		}
		in[i] = x.Shape
	}
	want, err := info.InferShape(a, in)
	if err != nil {
		return zero, fmt.Errorf("backend: %s: %w", name, err)
	}
	y, err := b.Provider.Execute(op, a, xs)
	if err != nil {
		return zero, fmt.Errorf("backend: %s: %w", name, err)
	}
	if !y.Shape.Equal(want) || len(y.Data) != want.Size() {
		return zero, fmt.Errorf("backend: %s: provider %s returned shape %v with %d values, expected shape %v",
			name, b.Provider.Name(), y.Shape, len(y.Data), want)
	}
	return y, nil
}
