package fpbound

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// A runtime profile (Options.Profile; doc.go, "Runtime profiles") says
// how a runtime computes some elementary functions in binary32, where that
// differs from M3's "within k ulps, relative": per registry primitive, a
// library error |computed − f(x̂)| ≤ (k + extra)·ulp(f(x̂)) + abs, each
// number cited in the profile's table below and in docs/fpbound-profiles.md.

// libErr is one function's entry in a profile.
type libErr struct {
	// library: the runtime computes the primitive as one library function
	// of its argument (not by the registry's formula), so its bound is
	// that of an elementary function (doc.go, "Runtime profiles").
	library bool
	// extraULPs is added to Options.ULPs for this function.
	extraULPs float64
	// abs is the absolute term a.
	abs float64
	// source cites the library source the numbers come from.
	source string
}

// profile is a named runtime profile: the binary32 library errors of the
// primitives it lists; every other primitive keeps M3 and M2.
type profile struct {
	name string
	fns  map[string]libErr
	// order is the summation order the runtime uses (order.go; doc.go,
	// "Summation-order profiles"): any (M2) unless the profile's name
	// ends in "+sequential" or "+blocked:k".
	order sumOrder
}

// ProfileIEEE is the default profile: M3 as stated in the package doc,
// every primitive computed by the registry's formula, no absolute terms.
const ProfileIEEE = "ieee"

// mlasLogisticAbs is the absolute term of ONNX Runtime's CPU sigmoid: an
// upper bound of |MLAS(x) − σ(x)| over every binary32 x, MLAS(x) the
// kernel of onnxruntime/core/mlas/lib/logistic.cpp (MlasLogisticKernel:
// x clamped to [−18, 18], an odd degree-9 polynomial p over an even
// degree-10 q in x², p/q + 0.5 clamped to [0, 1], in binary32 with or
// without fused multiply-adds). TestMLASLogistic re-derives it by running
// that algorithm on every binary32 input (largest error found: 2.20·10⁻⁷,
// at x ≈ −16.848, exhaustively; 1.77·10⁻⁷ by the default sample); 2^-22 ≈
// 2.38·10⁻⁷ is a margin above it.
const mlasLogisticAbs = 0x1p-22

// profiles are the named profiles, ieee first.
var profiles = []*profile{
	{name: ProfileIEEE},
	{name: "onnxruntime-cpu", fns: map[string]libErr{
		"sigmoid": {library: true, abs: mlasLogisticAbs,
			source: "onnxruntime/core/mlas/lib/logistic.cpp, MlasLogisticKernel (MlasComputeLogistic), via onnxruntime/core/providers/cpu/activation/activations.cc Sigmoid<float>"},
	}},
	{name: "pytorch-cpu", fns: map[string]libErr{
		// 1/(1 + exp(−x)) for every x: exp within k ulps, then one
		// addition and one division, correctly rounded; where exp(−x)
		// overflows (x < −88.72) the result is 0 and σ(x) < 2^-127.
		"sigmoid": {library: true, extraULPs: 2, abs: 0x1p-126,
			source: "aten/src/ATen/native/cpu/UnaryOpsKernel.cpp, sigmoid_kernel: (1 + (−x).exp()).reciprocal() (vectorised) and 1 / (1 + std::exp(−x)) (scalar)"},
	}},
}

// Profiles lists the names of the runtime profiles Options.Profile
// accepts ("" is ProfileIEEE).
func Profiles() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.name
	}
	return out
}

// lookupProfile returns the named profile ("" → ieee): a listed name,
// optionally followed by "+order" (SumOrders), the listed profile with
// that summation order.
func lookupProfile(name string) (*profile, error) {
	if name == "" {
		name = ProfileIEEE
	}
	base, order, err := splitProfileName(name)
	if err != nil {
		return nil, err
	}
	if base == "" {
		base = ProfileIEEE
	}
	for _, p := range profiles {
		if p.name == base {
			if order.kind == orderAny {
				return p, nil
			}
			q := *p
			q.order = order
			return &q, nil
		}
	}
	return nil, fmt.Errorf("fpbound: unknown profile %q (known: %v, each optionally +%s)", name, Profiles(), strings.Join(SumOrders(), "|+"))
}

// ValidProfile reports whether Options.Profile accepts name (nil) or why
// not: a listed profile, optionally followed by "+order" (SumOrders).
func ValidProfile(name string) error {
	_, err := lookupProfile(name)
	return err
}

// errRegistry returns the registry the Err algebra of format F runs under
// the named profile: nil for a profile without entries (the reference
// registry; irsem.Denote is then used, exactly as without profiles) and
// for binary64 (the profiles describe binary32 functions only); else a
// private copy whose listed primitives compute the profile's bound.
func errRegistry[F format](name string) *spec.Registry[ErrOf[F]] {
	var fm F
	pr, err := lookupProfile(name)
	if err != nil || len(pr.fns) == 0 || fm.kind() != (binary32{}).kind() {
		return nil
	}
	return profiledRegistry[ErrOf[F]](pr)
}

// errRegistryOrDefault is errRegistry, the reference registry where that
// is nil.
func errRegistryOrDefault[F format](name string) *spec.Registry[ErrOf[F]] {
	if r := errRegistry[F](name); r != nil {
		return r
	}
	return spec.Default[ErrOf[F]]()
}

// profiledRegistry is a private registry with the profile's primitives
// replaced by their library bound (libForward).
func profiledRegistry[T spec.Scalar[T]](pr *profile) *spec.Registry[T] {
	r := spec.New[T]()
	names := make([]string, 0, len(pr.fns))
	for n := range pr.fns {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		orig, err := r.Lookup(n)
		if err != nil {
			continue
		}
		p := *orig
		le := pr.fns[n]
		p.Forward = func(a *spec.Attrs, xs []spec.Tensor[T]) (spec.Tensor[T], error) {
			if le.library && len(xs) == 1 {
				// The runtime does not run the registry's formula, so
				// neither do we: its comparisons are not the runtime's.
				return spec.Map(xs[0], func(v T) (T, error) { return libValue(n, le, v, v), nil })
			}
			y, err := orig.Forward(a, xs)
			if err != nil || len(xs) != 1 {
				return y, err
			}
			out := spec.Tensor[T]{Shape: y.Shape, Data: slices.Clone(y.Data)}
			for i := range out.Data {
				out.Data[i] = libValue(n, le, xs[0].Data[i], out.Data[i])
			}
			return out, nil
		}
		r.Override(&p)
	}
	return r
}

// libValue is the profile's bound of one element of a library function:
// x the argument, y the registry's value of the function at it. Only Err
// values are changed (the registry is built for ErrOf[binary32] only).
func libValue[T spec.Scalar[T]](name string, le libErr, x, y T) T {
	xe, ok := any(x).(Err)
	if !ok {
		return y
	}
	ye := any(y).(Err)
	var r Err
	switch {
	case le.library && name == "sigmoid":
		r = librarySigmoid(xe, le)
	case le.library:
		r = unbounded[binary32](spec.Interval{Lo: math.Inf(-1), Hi: inf}) // no library rule for it
	default:
		r = widenLib(ye, le)
	}
	return any(r).(T)
}

// widenLib adds a library's extra ulps and absolute term to the bound of
// a function value y computed under M3 (doc.go, "Runtime profiles").
func widenLib[F format](y ErrOf[F], le libErr) ErrOf[F] {
	c := y.close()
	if math.IsInf(c.e, 1) {
		return c
	}
	m := mag(c.hull())
	e := addUp(addUp(c.e, constsOf[F]().ulpsOf(le.extraULPs, m)), le.abs)
	if !constsOf[F]().fits(addUp(m, e)) {
		return unbounded[F](c.x)
	}
	return ErrOf[F]{x: c.x, e: e}
}

// librarySigmoid bounds a sigmoid that the runtime computes as one library
// function within (k + extra)·ulp + abs of σ at its computed argument:
// σ is increasing and ¼-Lipschitz, so E = E_x/4 + (k + extra)·ulp(mag σ(H))
// + abs (doc.go, "Runtime profiles").
func librarySigmoid[F format](v ErrOf[F], le libErr) ErrOf[F] {
	a := v.close()
	x := sigmoidIv(a.x)
	if math.IsInf(a.e, 1) {
		return unbounded[F](x)
	}
	fh := sigmoidIv(a.hull())
	k := float64(curULPs.Load()) + le.extraULPs
	e := addUp(addUp(mulUp(0.25, a.e), constsOf[F]().ulpsOf(k, mag(fh))), le.abs)
	return ErrOf[F]{x: x, e: e}
}

// sigmoidIv encloses σ(X) = [σ(X.Lo), σ(X.Hi)] (σ is increasing), each end
// from spec.Interval's outward-rounded arithmetic, within [0, 1].
func sigmoidIv(x spec.Interval) spec.Interval {
	lo, hi := 0.0, 1.0
	if !math.IsInf(x.Lo, 0) && !math.IsNaN(x.Lo) {
		lo = max(sigmoidPoint(x.Lo).Lo, 0)
	} else if math.IsInf(x.Lo, 1) {
		lo = sigmoidPoint(math.MaxFloat64).Lo
	}
	if !math.IsInf(x.Hi, 0) && !math.IsNaN(x.Hi) {
		hi = min(sigmoidPoint(x.Hi).Hi, 1)
	}
	return spec.Interval{Lo: lo, Hi: hi}
}

// sigmoidPoint encloses σ(t) by the registry's sign-split formula over
// spec.Interval (exp of a non-positive argument, so nothing overflows).
func sigmoidPoint(t float64) spec.Interval {
	one := spec.Point(1)
	if t < 0 {
		e, _ := spec.Point(t).Exp()
		s, _ := e.Div(one.Add(e))
		return s
	}
	e, _ := spec.Point(-t).Exp()
	s, _ := one.Div(one.Add(e))
	return s
}

// denoteOut is irsem.Denote over Err under a profile's registry reg: the
// reference evaluation when reg is nil, else the same nodes' applications
// (irsem.Applications) run through reg.
func denoteOut[F format](g *irsem.Graph, p *irsem.Payload, x spec.Tensor[ErrOf[F]], reg *spec.Registry[ErrOf[F]]) (spec.Tensor[ErrOf[F]], error) {
	if reg == nil && mixedNodes == nil {
		return irsem.Denote(g, p, x)
	}
	all, err := denoteAllWith(g, p, x, orDefault(reg), nil)
	if err != nil {
		return spec.Tensor[ErrOf[F]]{}, err
	}
	return all[g.OutputID], nil
}

// denoteAll is irsem.DenoteAll under a profile's registry (see denoteOut).
func denoteAll[F format](g *irsem.Graph, p *irsem.Payload, x spec.Tensor[ErrOf[F]], reg *spec.Registry[ErrOf[F]]) ([]spec.Tensor[ErrOf[F]], error) {
	if reg == nil && mixedNodes == nil {
		return irsem.DenoteAll(g, p, x)
	}
	return denoteAllWith(g, p, x, orDefault(reg), nil)
}

// orDefault is reg, or the default registry when reg is nil (a mixed
// evaluation without a profile runs node by node, format_mixed.go).
func orDefault[T spec.Scalar[T]](reg *spec.Registry[T]) *spec.Registry[T] {
	if reg == nil {
		return spec.Default[T]()
	}
	return reg
}

// denoteAllWith evaluates every node of g over reg in id order, one node
// at a time, keeping every value; around each non-input node i it calls
// around(i, run) where run evaluates the node (around nil: run alone), so
// a caller can observe what one node's evaluation does (taintedNodes).
// Each node runs in its own format in a mixed evaluation (enterNode).
func denoteAllWith[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload, x spec.Tensor[T], reg *spec.Registry[T], around func(i int, run func() error) error) ([]spec.Tensor[T], error) {
	apps, err := irsem.Applications(g, p)
	if err != nil {
		return nil, err
	}
	vals := make([]spec.Tensor[T], len(g.Nodes))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Kind.Op == irsem.OpInput {
			vals[i] = x
			continue
		}
		parents := make([]spec.Tensor[T], len(n.Parents))
		for t, q := range n.Parents {
			parents[t] = vals[q]
		}
		run := func() error {
			enterNode(i)
			defer leaveNode()
			v, err := irsem.RunApplication(&apps[i], parents, func(_ int, s *irsem.Step, xs []spec.Tensor[T]) (spec.Tensor[T], error) {
				pr, err := reg.Lookup(s.Prim)
				if err != nil {
					return spec.Tensor[T]{}, err
				}
				return pr.Apply(s.Attrs, xs)
			})
			vals[i] = v
			return err
		}
		if around != nil {
			err = around(i, run)
		} else {
			err = run()
		}
		if err != nil {
			return nil, err
		}
	}
	return vals, nil
}
