package obligations

import (
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/diffrun"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// FastPath is the obligation of the scalar-specialised fast paths: a rule
// that switches to a devirtualised kernel for the hardware float scalars
// (any(x.Data).(type) case []spec.F64, []spec.F32: matmul on fastcpu,
// linear, …) must give, bit for bit, what the generic rule gives over the
// same scalar — the kernels claim "exactly the operations of the generic
// rule in exactly the same order" (spec's fastpath.go). Adjointness and the
// derivative are decided over Rat and intervals, where no fast path runs,
// so a kernel wrong only over F64 (a softmax VJP whose lanes after the
// first are zeroed, a matmul reading the wrong row) escapes every other
// local obligation.
//
// The generic rule is reached through Plain[T], a scalar that performs
// every operation of T by calling T's own method, so its values are T's
// bit for bit, but whose slices are not []T: no type switch of a rule
// recognises it, and the registry's generic code runs. The obligation, per
// case and per scalar T ∈ {F64, F32}: the forward value, the JVP at dx and
// the VJP at δ of the rule over T (Registries.F64, Registries.F32) are
// Same as those over Plain[T] (spec.Default), element by element, any NaN
// equal to any NaN (Go does not fix which NaN an operation returns). Both
// sides failing is agreement; one failing is a failure. It is a
// comparison of two finite computations, so "holds" is exact: the two
// paths computed the same bits on this case.
const FastPath Obligation = "fast-path"

// Plain wraps a scalar T so that rules over it take their generic code
// path: every method is T's own, so results are T's bit for bit.
type Plain[T spec.Scalar[T]] struct{ V T }

func (x Plain[T]) Add(y Plain[T]) Plain[T] { return Plain[T]{x.V.Add(y.V)} }
func (x Plain[T]) Sub(y Plain[T]) Plain[T] { return Plain[T]{x.V.Sub(y.V)} }
func (x Plain[T]) Mul(y Plain[T]) Plain[T] { return Plain[T]{x.V.Mul(y.V)} }
func (x Plain[T]) Neg() Plain[T]           { return Plain[T]{x.V.Neg()} }
func (x Plain[T]) Div(y Plain[T]) (Plain[T], error) {
	v, err := x.V.Div(y.V)
	return Plain[T]{v}, err
}
func (x Plain[T]) Abs() Plain[T]           { return Plain[T]{x.V.Abs()} }
func (x Plain[T]) Max(y Plain[T]) Plain[T] { return Plain[T]{x.V.Max(y.V)} }
func (x Plain[T]) Min(y Plain[T]) Plain[T] { return Plain[T]{x.V.Min(y.V)} }
func (x Plain[T]) Relu() Plain[T]          { return Plain[T]{x.V.Relu()} }
func (x Plain[T]) Clamp(lo, hi Plain[T]) Plain[T] {
	return Plain[T]{x.V.Clamp(lo.V, hi.V)}
}
func (x Plain[T]) Sign() Plain[T] { return Plain[T]{x.V.Sign()} }
func (x Plain[T]) Step() Plain[T] { return Plain[T]{x.V.Step()} }
func (x Plain[T]) lift(f func() (T, error)) (Plain[T], error) {
	v, err := f()
	return Plain[T]{v}, err
}
func (x Plain[T]) Sqrt() (Plain[T], error)  { return x.lift(x.V.Sqrt) }
func (x Plain[T]) Exp() (Plain[T], error)   { return x.lift(x.V.Exp) }
func (x Plain[T]) Log() (Plain[T], error)   { return x.lift(x.V.Log) }
func (x Plain[T]) Log1p() (Plain[T], error) { return x.lift(x.V.Log1p) }
func (x Plain[T]) Tanh() (Plain[T], error)  { return x.lift(x.V.Tanh) }
func (x Plain[T]) Sin() (Plain[T], error)   { return x.lift(x.V.Sin) }
func (x Plain[T]) Cos() (Plain[T], error)   { return x.lift(x.V.Cos) }

// Erf and ErfDeriv are T's own (spec.ErfOf), for the erf primitive, whose
// rules call them through an interface check that a scalar without them
// fails loudly.
func (x Plain[T]) Erf() (Plain[T], error) {
	return x.lift(func() (T, error) { return spec.ErfOf(x.V) })
}
func (x Plain[T]) ErfDeriv() (Plain[T], error) {
	return x.lift(func() (T, error) { return spec.ErfDerivOf(x.V) })
}

// Sinc and SincDeriv are T's own (spec.SincOf, spec.SincDerivOf): the
// float scalars evaluate sinc′ by its series near 0.
func (x Plain[T]) Sinc() (Plain[T], error) {
	return x.lift(func() (T, error) { return spec.SincOf(x.V) })
}

func (x Plain[T]) SincDeriv() (Plain[T], error) {
	return x.lift(func() (T, error) { return spec.SincDerivOf(x.V) })
}

func (x Plain[T]) Compare(y Plain[T]) (int, bool)      { return x.V.Compare(y.V) }
func (x Plain[T]) IsZero() bool                        { return x.V.IsZero() }
func (x Plain[T]) Same(y Plain[T]) bool                { return x.V.Same(y.V) }
func (x Plain[T]) FromInt(n int64) Plain[T]            { return Plain[T]{x.V.FromInt(n)} }
func (x Plain[T]) FromRat(r *big.Rat) Plain[T]         { return Plain[T]{x.V.FromRat(r)} }
func (x Plain[T]) Float64() float64                    { return x.V.Float64() }
func (x Plain[T]) String() string                      { return x.V.String() }
func (x Plain[T]) Kind() string                        { return x.V.Kind() }
func wrapPlain[T spec.Scalar[T]](v T) Plain[T]         { return Plain[T]{v} }
func samePlain[T spec.Scalar[T]](a T, b Plain[T]) bool { return diffrun.SameBits(a, b.V) }

// CheckFastPath decides the fast-path obligation of one instance over F64
// and F32 (see FastPath), with the tangents dx and cotangent δ of the
// case.
func (r Registries) CheckFastPath(inst *casegen.Instance, dxs []spec.Tensor[spec.Rat], d spec.Tensor[spec.Rat]) (Outcome, error) {
	f64 := r.F64
	if f64 == nil {
		f64 = spec.Default[spec.F64]()
	}
	f32 := r.F32
	if f32 == nil {
		f32 = spec.Default[spec.F32]()
	}
	if err := fastPathOver(f64, inst, dxs, d); err != nil {
		return Outcome{Oracle: OracleBits}, err
	}
	if err := fastPathOver(f32, inst, dxs, d); err != nil {
		return Outcome{Oracle: OracleBits}, err
	}
	return Outcome{Oracle: OracleBits}, nil
}

// OracleBits decides by bit-for-bit comparison of two float computations.
const OracleBits Oracle = "bits"

func fastPathOver[T spec.Scalar[T]](reg *spec.Registry[T], inst *casegen.Instance, dxs []spec.Tensor[spec.Rat], d spec.Tensor[spec.Rat]) error {
	p, err := reg.Lookup(inst.Op)
	if err != nil {
		return err
	}
	g, err := spec.Default[Plain[T]]().Lookup(inst.Op)
	if err != nil {
		return err
	}
	// The generic side's inputs are the same T values, wrapped.
	wrap := func(ts []spec.Tensor[T]) []spec.Tensor[Plain[T]] {
		out := make([]spec.Tensor[Plain[T]], len(ts))
		for i, t := range ts {
			out[i] = spec.Convert(t, wrapPlain[T])
		}
		return out
	}
	xs, tdx := casegen.ConvertInputs[T](inst.Xs), casegen.ConvertInputs[T](dxs)
	td := casegen.ConvertInputs[T]([]spec.Tensor[spec.Rat]{d})[0]
	gxs, gdx, gd := wrap(xs), wrap(tdx), spec.Convert(td, wrapPlain[T])
	var z T
	kind := z.Kind()
	fail := func(what string, el int, a, b string) *counterexample.Failure {
		return &counterexample.Failure{Op: inst.Op, Law: string(FastPath), Oracle: string(OracleBits), Element: el, Inputs: inst.Xs, Attrs: attrsOf(inst), Dx: dxs, Delta: d,
			LHS: kind + " " + what + "=" + a, RHS: "generic rule=" + b,
			Detail: "the " + kind + " rule (its scalar-specialised path) and the generic rule over the same scalar differ"}
	}
	cmp := func(what string, a spec.Tensor[T], ea error, b spec.Tensor[Plain[T]], eb error) error {
		switch {
		case ea != nil && eb != nil:
			return nil
		case ea != nil || eb != nil:
			return fail(what, -1, fmt.Sprint(ea), fmt.Sprint(eb))
		case !a.Shape.Equal(b.Shape) || len(a.Data) != len(b.Data):
			return fail(what+" shape", -1, a.Shape.String(), b.Shape.String())
		}
		for k := range a.Data {
			if !samePlain(a.Data[k], b.Data[k]) {
				return fail(what, k, a.Data[k].String(), b.Data[k].String())
			}
		}
		return nil
	}
	y, ey := p.Apply(inst.Attrs, xs)
	gy, egy := g.Apply(inst.Attrs, gxs)
	if err := cmp("forward", y, ey, gy, egy); err != nil || ey != nil {
		return err
	}
	j, ej := p.JVP(inst.Attrs, xs, y, tdx)
	gj, egj := g.JVP(inst.Attrs, gxs, gy, gdx)
	if err := cmp("jvp", j, ej, gj, egj); err != nil {
		return err
	}
	v, ev := p.VJP(inst.Attrs, xs, y, td)
	gv, egv := g.VJP(inst.Attrs, gxs, gy, gd)
	if ev != nil || egv != nil {
		return cmp("vjp", spec.Tensor[T]{}, ev, spec.Tensor[Plain[T]]{}, egv)
	}
	if len(v) != len(gv) {
		return fail("vjp arity", -1, fmt.Sprint(len(v)), fmt.Sprint(len(gv)))
	}
	for i := range v {
		if err := cmp(fmt.Sprintf("vjp[%d]", i), v[i], nil, gv[i], nil); err != nil {
			return err
		}
	}
	return nil
}

var _ spec.Scalar[Plain[spec.F64]] = Plain[spec.F64]{}
