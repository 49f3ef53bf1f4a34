package typedgraph

import (
	"fmt"
	"math/big"
	"unsafe"

	"github.com/tlcheck/tlcheck/fastcpu"
	"github.com/tlcheck/tlcheck/spec"
)

// Planned kernels: a compiled plan writes node values and VJP
// contributions into buffers it allocated once, instead of calling the
// registry rule (which allocates its result on every call).
//
// Every elementwise primitive gets its kernel from the registry itself:
// the kernel loops over the elements calling the primitive's own scalar
// rule (spec.Prim.Unary or spec.Prim.Binary — the functions the registry
// built the primitive's Forward and VJP from), so there is no second copy
// of any elementwise rule here and the kernel's results are the rule's by
// construction, over every scalar, ties and kinks included (relu'(0) = 0
// over Dual, the hull of Step over Interval). sum, mse_loss, linear and
// matmul keep hand-written kernels (whole-tensor loops, monomorphic float
// loops, fastcpu): each performs exactly the registry rule's scalar
// operations, in the same order and with the same operands, so its results
// are identical to the rule's bit for bit (for floats: up to which NaN a
// NaN result is, which Go leaves to the compiler even for the rule
// itself). The tests compare every planned kernel with its rule on special
// values over F32, F64, Rat, Dual[F64], Dual[Rat] and Interval, and the
// plan with the registry's tape on random graphs over Rat, F32 and F64. A
// kernel is only used for a node whose primitive is the reference
// registry's own (spec.Default[T]()), so a private registry — for example
// one with a planted fault — is always executed through its own rules.
//
// Reusing buffers is what recording the graph once buys: an eager tape
// cannot know the next operation's shape before it is requested.

// kernel is a planned primitive: fwd writes the node's value into dst;
// vjp writes the contribution for argument j into gs[j], given the node's
// value y and its cotangent dy. Their errors are the registry rule's.
type kernel[T spec.Scalar[T]] struct {
	fwd func(dst []T, xs []spec.Tensor[T]) error
	vjp func(gs [][]T, xs []spec.Tensor[T], y, dy []T) error
}

// kernelFor returns the planned kernel of node n, or nil when the node
// runs through its registry rule.
func kernelFor[T spec.Scalar[T]](n *Node[T]) *kernel[T] {
	if n.lit != nil {
		return nil
	}
	ref, err := spec.Default[T]().Lookup(n.op)
	if err != nil || ref != n.prim {
		return nil
	}
	a := n.attrs
	if a == nil {
		a = &spec.Attrs{}
	}
	switch {
	case ref.Unary != nil:
		return unaryKernel(n.op, a, ref.Unary)
	case ref.Binary != nil:
		return binaryKernel(n.op, ref.Binary)
	}
	var z T
	switch n.op {
	case "sum":
		return &kernel[T]{
			fwd: func(dst []T, xs []spec.Tensor[T]) error {
				var acc T
				for _, v := range xs[0].Data {
					acc = acc.Add(v)
				}
				dst[0] = acc
				return nil
			},
			vjp: func(gs [][]T, _ []spec.Tensor[T], _, dy []T) error {
				for i := range gs[0] {
					gs[0][i] = dy[0]
				}
				return nil
			},
		}
	case "mse_loss":
		n0 := n.inShapes[0].Size()
		if n0 == 0 {
			n0 = 1
		}
		nT := z.FromInt(int64(n0))
		invN := z.FromRat(big.NewRat(1, int64(n0)))
		two := z.FromInt(2)
		return &kernel[T]{
			fwd: func(dst []T, xs []spec.Tensor[T]) error {
				var acc T
				a, b := xs[0].Data, xs[1].Data
				for i := range a {
					d := a[i].Sub(b[i])
					acc = acc.Add(d.Mul(d))
				}
				q, err := acc.Div(nT)
				dst[0] = q
				return err
			},
			vjp: func(gs [][]T, xs []spec.Tensor[T], _, dy []T) error {
				k := two.Mul(invN).Mul(dy[0])
				a, b := xs[0].Data, xs[1].Data
				for i := range gs[0] {
					g := a[i].Sub(b[i]).Mul(k)
					gs[0][i], gs[1][i] = g, g.Neg()
				}
				return nil
			},
		}
	case "linear", "matmul":
		if spec.KindOf[T]() == "interval" {
			// Over Interval the registry's linear and matmul run the
			// dense midpoint-radius kernels (package enclose), whose
			// enclosures differ from the element fold: run the rule
			// itself, so every path computes the same intervals.
			return nil
		}
		if n.op == "linear" {
			return linearKernel[T]()
		}
		return matmulKernel[T](n)
	}
	return nil
}

// unaryKernel runs an elementwise one-parent primitive's registry rule r
// with attributes a: dst_i = r.F(a, x_i), and the contribution
// r.D(a, x_i, y_i)·δ_i, the registry's order. Errors name the element as
// the registry's Forward (spec.Map) and VJP do.
func unaryKernel[T spec.Scalar[T]](op string, a *spec.Attrs, r *spec.UnaryRule[T]) *kernel[T] {
	return &kernel[T]{
		fwd: func(dst []T, xs []spec.Tensor[T]) error {
			for i, x := range xs[0].Data {
				v, err := r.F(a, x)
				if err != nil {
					return spec.ElemError(i, err)
				}
				dst[i] = v
			}
			return nil
		},
		vjp: func(gs [][]T, xs []spec.Tensor[T], y, dy []T) error {
			for i, x := range xs[0].Data {
				d, err := r.D(a, x, y[i])
				if err != nil {
					return fmt.Errorf("%s derivative at element %d: %w", op, i, err)
				}
				gs[0][i] = d.Mul(dy[i])
			}
			return nil
		},
	}
}

// binaryKernel runs an elementwise two-parent primitive's registry rule r:
// dst_i = r.F(a_i, b_i), contributions r.VJP(a_i, b_i, y_i, δ_i). Errors
// name the element as the registry's Forward (spec.Zip) and VJP do.
func binaryKernel[T spec.Scalar[T]](op string, r *spec.BinaryRule[T]) *kernel[T] {
	return &kernel[T]{
		fwd: func(dst []T, xs []spec.Tensor[T]) error {
			a, b := xs[0].Data, xs[1].Data
			for i := range dst {
				v, err := r.F(a[i], b[i])
				if err != nil {
					return spec.ElemError(i, err)
				}
				dst[i] = v
			}
			return nil
		},
		vjp: func(gs [][]T, xs []spec.Tensor[T], y, dy []T) error {
			a, b := xs[0].Data, xs[1].Data
			for i := range dy {
				ga, gb, err := r.VJP(a[i], b[i], y[i], dy[i])
				if err != nil {
					return fmt.Errorf("%s vjp: element %d: %w", op, i, err)
				}
				gs[0][i], gs[1][i] = ga, gb
			}
			return nil
		},
	}
}

// linearKernel is linear(x, W, b) with the registry's folds: y[r,j] =
// (Σ_k x[r,k]·W[j,k] from 0) + b[j]; dx[r,k] = Σ_j W[j,k]·δ[r,j] from 0;
// db[j] and dW[j,k] accumulate over rows from 0. Over F32 and F64 it runs
// a monomorphic loop doing the same IEEE operations.
func linearKernel[T spec.Scalar[T]]() *kernel[T] {
	return &kernel[T]{
		fwd: func(dst []T, xs []spec.Tensor[T]) error {
			x, w, b := xs[0].Data, xs[1].Data, xs[2].Data
			out, in := xs[1].Shape[0], xs[1].Shape[1]
			rows := linearRows(len(x), len(dst), out, in)
			switch d := any(dst).(type) {
			case []spec.F32:
				linearFwd(d, any(x).([]spec.F32), any(w).([]spec.F32), any(b).([]spec.F32), rows, out, in)
			case []spec.F64:
				linearFwd(d, any(x).([]spec.F64), any(w).([]spec.F64), any(b).([]spec.F64), rows, out, in)
			default:
				for r := 0; r < rows; r++ {
					for j := 0; j < out; j++ {
						var acc T
						for k := 0; k < in; k++ {
							acc = acc.Add(x[r*in+k].Mul(w[j*in+k]))
						}
						dst[r*out+j] = acc.Add(b[j])
					}
				}
			}
			return nil
		},
		vjp: func(gs [][]T, xs []spec.Tensor[T], _, dy []T) error {
			x, w := xs[0].Data, xs[1].Data
			out, in := xs[1].Shape[0], xs[1].Shape[1]
			rows := len(dy) / max(out, 1)
			if out == 0 && in > 0 {
				rows = len(x) / in
			}
			dx, dw, db := gs[0], gs[1], gs[2]
			clear(dw)
			clear(db)
			switch d := any(dy).(type) {
			case []spec.F32:
				linearVJP(any(dx).([]spec.F32), any(dw).([]spec.F32), any(db).([]spec.F32),
					any(x).([]spec.F32), any(w).([]spec.F32), d, rows, out, in)
			case []spec.F64:
				linearVJP(any(dx).([]spec.F64), any(dw).([]spec.F64), any(db).([]spec.F64),
					any(x).([]spec.F64), any(w).([]spec.F64), d, rows, out, in)
			default:
				for r := 0; r < rows; r++ {
					for k := 0; k < in; k++ {
						var acc T
						for j := 0; j < out; j++ {
							acc = acc.Add(w[j*in+k].Mul(dy[r*out+j]))
						}
						dx[r*in+k] = acc
					}
					for j := 0; j < out; j++ {
						dj := dy[r*out+j]
						db[j] = db[j].Add(dj)
						for k := 0; k < in; k++ {
							dw[j*in+k] = dw[j*in+k].Add(dj.Mul(x[r*in+k]))
						}
					}
				}
			}
			return nil
		},
	}
}

// linearRows is the registry's row count for linear's forward.
func linearRows(nx, ny, out, in int) int {
	if in > 0 {
		return nx / in
	}
	return ny / max(out, 1)
}

// linearFwd and linearVJP are the monomorphic loops of linearKernel over
// F32 and F64: each product is a same-type conversion of a native
// operation, T(x*w), which the Go specification guarantees is rounded
// before the addition and never fused into an FMA — exactly what the
// scalar methods (F32.Mul, F32.Add) do. (Instantiated per type: F32 and
// F64 have different shapes, so each gets its own native code; the arm64
// build, where Go fuses unconverted x*y+z, shows separate multiplies and
// adds in both.)
func linearFwd[T spec.F32 | spec.F64](y, x, w, b []T, rows, out, in int) {
	for r := 0; r < rows; r++ {
		xr := x[r*in : r*in+in]
		for j := 0; j < out; j++ {
			wj := w[j*in : j*in+in]
			var acc T
			for k := range xr {
				acc = T(acc + T(xr[k]*wj[k]))
			}
			y[r*out+j] = T(acc + b[j])
		}
	}
}

// linearVJP is linearFwd's VJP: dx, and dw and db accumulated over rows.
func linearVJP[T spec.F32 | spec.F64](dx, dw, db, x, w, dy []T, rows, out, in int) {
	for r := 0; r < rows; r++ {
		dyr := dy[r*out : r*out+out]
		for k := 0; k < in; k++ {
			var acc T
			for j := range dyr {
				acc = T(acc + T(w[j*in+k]*dyr[j]))
			}
			dx[r*in+k] = acc
		}
		xr := x[r*in : r*in+in]
		for j, dj := range dyr {
			db[j] = T(db[j] + dj)
			dwj := dw[j*in : j*in+in]
			for k := range xr {
				dwj[k] = T(dwj[k] + T(dj*xr[k]))
			}
		}
	}
}

// matmulKernel plans a 2-D × 2-D float32 matmul on the fastcpu kernels.
// They compute every element as the registry's rule does — a left fold from
// +0 of float32-rounded products, each addition rounded, no fused
// multiply-add (fastcpu documents and tests this) — so the results are the
// rule's bit for bit: C = A·B by Sgemm; dA[i,k] = Σ_j δ[i,j]·B[k,j] by
// SgemmNT; dB[k,j] = Σ_i A[i,k]·δ[i,j] by Sgemm on a transposed copy of A.
// (The rule adds each fold into a zeroed buffer, 0 + acc, which is acc: a
// left fold from +0 never ends at −0 under round-to-nearest.) Other scalars,
// ranks and batched products run through the registry rule.
func matmulKernel[T spec.Scalar[T]](n *Node[T]) *kernel[T] {
	var z T
	if _, ok := any(z).(spec.F32); !ok || len(n.inputs) != 2 {
		return nil
	}
	var at []float32 // transposed A, reused across calls
	return &kernel[T]{
		fwd: func(dst []T, xs []spec.Tensor[T]) error {
			a, b := xs[0], xs[1]
			if a.Shape.Rank() != 2 || b.Shape.Rank() != 2 {
				y, err := n.prim.Forward(n.attrs, xs)
				copy(dst, y.Data)
				return err
			}
			m, k, nn := a.Shape[0], a.Shape[1], b.Shape[1]
			fastcpu.Sgemm(m, nn, k, f32s(a.Data), max(k, 1), f32s(b.Data), max(nn, 1), f32s(dst), max(nn, 1))
			return nil
		},
		vjp: func(gs [][]T, xs []spec.Tensor[T], y, dy []T) error {
			a, b := xs[0], xs[1]
			if a.Shape.Rank() != 2 || b.Shape.Rank() != 2 {
				g, err := n.prim.VJP(n.attrs, xs, spec.Tensor[T]{Shape: n.shape, Data: y}, spec.Tensor[T]{Shape: n.shape, Data: dy})
				if err != nil {
					return err
				}
				copy(gs[0], g[0].Data)
				copy(gs[1], g[1].Data)
				return nil
			}
			m, k, nn := a.Shape[0], a.Shape[1], b.Shape[1]
			fastcpu.SgemmNT(m, k, nn, f32s(dy), max(nn, 1), f32s(b.Data), max(nn, 1), f32s(gs[0]), max(k, 1))
			if cap(at) < m*k {
				at = make([]float32, m*k)
			}
			at = at[:m*k]
			av := f32s(a.Data)
			for i := 0; i < m; i++ {
				for kk := 0; kk < k; kk++ {
					at[kk*m+i] = av[i*k+kk]
				}
			}
			fastcpu.Sgemm(k, nn, m, at, max(m, 1), f32s(dy), max(nn, 1), f32s(gs[1]), max(nn, 1))
			return nil
		},
	}
}

// f32s views a slice of spec.F32 (whose underlying type is float32) as
// []float32 without copying; T is known to be spec.F32 where it is called.
func f32s[T any](d []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(d))), len(d))
}
