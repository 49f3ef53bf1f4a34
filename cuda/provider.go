package cuda

import (
	"fmt"
	"unsafe"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/spec"
)

// Options configures a CUDA provider.
type Options struct {
	// AtomicSum makes sum use tl_sum_atomic (block trees added into the
	// result by compare-and-swap, in the order the hardware schedules)
	// instead of tl_sum_tree (block trees, repeated on the partials).
	AtomicSum bool
}

// opKernels maps each registry primitive the provider implements to the
// kernels its handler launches, in registry order of the ops. It is the
// provider's own fact (which kernels exist), like fast_cpu's handler set;
// the capsules themselves come from backend.CUDACatalog, derived from the
// registry.
var opKernels = []struct {
	op      string
	kernels []string
}{
	{"add", []string{"tl_add"}},
	{"sub", []string{"tl_sub"}},
	{"mul", []string{"tl_mul"}},
	{"neg", []string{"tl_neg"}},
	{"relu", []string{"tl_relu"}},
	{"sum", []string{"tl_sum_tree", "tl_sum_atomic"}},
	{"reduce_sum", []string{"tl_reduce_sum"}},
	{"broadcast_to", []string{"tl_broadcast"}},
	{"reshape", []string{"tl_broadcast"}},
	{"permute", []string{"tl_broadcast"}},
	{"mse_loss", []string{"tl_sub", "tl_mul", "tl_sum_tree", "tl_div_count"}},
	{"matmul", []string{"tl_matmul"}},
	{"linear", []string{"tl_linear"}},
}

// Ops lists the registry primitives the CUDA provider has kernels for.
func Ops() []string {
	out := make([]string, len(opKernels))
	for i, e := range opKernels {
		out[i] = e.op
	}
	return out
}

// provider is the native-cuda backend.Provider over a cudaKernels
// implementation (the GPU, or the CPU emulation in tests).
type provider struct {
	k      cudaKernels
	atomic bool
}

// NewEmulatedProvider returns a native-cuda provider whose kernels run in
// the CPU emulation of the PTX (same evaluation orders, binary32 on the
// host). It exists so that refinement, planted faults and the gate's CUDA
// stage are tested without a GPU; the command line never registers it.
func NewEmulatedProvider(o Options) backend.Provider {
	return &provider{k: &emuKernels{}, atomic: o.AtomicSum}
}

// Name is "native-cuda".
func (p *provider) Name() string { return backend.ProviderNativeCUDA }

// Device is cuda.
func (p *provider) Device() backend.Device { return backend.DeviceCUDA }

// Ops lists the primitives with kernels.
func (p *provider) Ops() []string { return Ops() }

// DeviceName describes the device the kernels run on.
func (p *provider) DeviceName() string { return p.k.device() }

// Close releases the device.
func (p *provider) Close() error { return p.k.close() }

func f32s(d []spec.F32) []float32 { return unsafe.Slice((*float32)(unsafe.SliceData(d)), len(d)) }

func tensorOf(shape spec.Shape, d []float32) spec.Tensor[spec.F32] {
	return spec.Tensor[spec.F32]{Shape: shape.Clone(), Data: unsafe.Slice((*spec.F32)(unsafe.SliceData(d)), len(d))}
}

// Execute runs op's kernels. Malformed input is an error naming the op and
// parent, never a panic.
func (p *provider) Execute(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	info, err := spec.Info(op)
	if err != nil {
		return zero, err
	}
	if len(xs) < info.MinArity || len(xs) > info.MaxArity {
		return zero, fmt.Errorf("%s takes %d parents, got %d", op, info.MinArity, len(xs))
	}
	for i, x := range xs {
		n, err := x.Shape.Check(0)
		if err != nil {
			return zero, fmt.Errorf("%s: parent %d: %w", op, i, err)
		}
		if len(x.Data) != n {
			return zero, fmt.Errorf("%s: parent %d of shape %v holds %d values, expected %d", op, i, x.Shape, len(x.Data), n)
		}
	}
	switch op {
	case "add", "sub", "mul":
		if !xs[0].Shape.Equal(xs[1].Shape) {
			return zero, fmt.Errorf("%s: shapes %v and %v differ (broadcast explicitly)", op, xs[0].Shape, xs[1].Shape)
		}
		y, err := p.k.binary("tl_"+op, f32s(xs[0].Data), f32s(xs[1].Data))
		if err != nil {
			return zero, err
		}
		return tensorOf(xs[0].Shape, y), nil
	case "neg", "relu":
		y, err := p.k.unary("tl_"+op, f32s(xs[0].Data))
		if err != nil {
			return zero, err
		}
		return tensorOf(xs[0].Shape, y), nil
	case "sum":
		var s float32
		if p.atomic {
			s, err = p.k.sumAtomic(f32s(xs[0].Data))
		} else {
			s, err = p.k.sumTree(f32s(xs[0].Data))
		}
		if err != nil {
			return zero, err
		}
		return spec.Scalar0(spec.F32(s)), nil
	case "reduce_sum":
		axis := 0
		if a != nil {
			axis = a.Axis
		}
		return p.reduceSum(xs[0], axis)
	case "broadcast_to":
		if a == nil {
			return zero, fmt.Errorf("broadcast_to: no target shape attribute")
		}
		return p.broadcastTo(xs[0], a.Shape)
	case "reshape":
		if a == nil {
			return zero, fmt.Errorf("reshape: no target shape attribute")
		}
		return p.reshape(xs[0], a.Shape)
	case "permute":
		if a == nil {
			return zero, fmt.Errorf("permute: no perm attribute")
		}
		return p.permute(xs[0], a.Perm)
	case "mse_loss":
		return p.mseLoss(xs[0], xs[1])
	case "matmul":
		return p.matmul(xs[0], xs[1])
	case "linear":
		return p.linear(xs[0], xs[1], xs[2])
	}
	return zero, fmt.Errorf("provider %s has no handler for %q", backend.ProviderNativeCUDA, op)
}

func (p *provider) broadcastTo(x spec.Tensor[spec.F32], to spec.Shape) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	if err := spec.BroadcastShape(x.Shape, to); err != nil {
		return zero, fmt.Errorf("broadcast_to: %w", err)
	}
	if _, err := to.Check(0); err != nil {
		return zero, fmt.Errorf("broadcast_to: target %w", err)
	}
	dims := make([]int, len(to))
	strides := make([]int, len(to))
	off := len(to) - len(x.Shape)
	st := x.Shape.Strides()
	for i := range to {
		dims[i] = to[i]
		if j := i - off; j >= 0 && x.Shape[j] != 1 {
			strides[i] = st[j]
		}
	}
	y, err := p.k.broadcast(f32s(x.Data), dims, strides)
	if err != nil {
		return zero, err
	}
	return tensorOf(to, y), nil
}

// reshape copies x into shape to (same element count) with the gather
// kernel and row-major strides.
func (p *provider) reshape(x spec.Tensor[spec.F32], to spec.Shape) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	n, err := to.Check(0)
	if err != nil {
		return zero, fmt.Errorf("reshape: target %w", err)
	}
	if n != len(x.Data) {
		return zero, fmt.Errorf("reshape: %v holds %d elements, target %v %d", x.Shape, len(x.Data), to, n)
	}
	dims, strides := []int{n}, []int{1}
	y, err := p.k.broadcast(f32s(x.Data), dims, strides)
	if err != nil {
		return zero, err
	}
	return tensorOf(to, y), nil
}

// permute gathers x so that output axis i is input axis perm[i].
func (p *provider) permute(x spec.Tensor[spec.F32], perm []int) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	r := x.Shape.Rank()
	if len(perm) != r {
		return zero, fmt.Errorf("permute: perm %v for rank %d", perm, r)
	}
	seen := make([]bool, r)
	st := x.Shape.Strides()
	dims, strides := make([]int, r), make([]int, r)
	for i, a := range perm {
		if a < 0 || a >= r || seen[a] {
			return zero, fmt.Errorf("permute: perm %v is not a permutation of %d axes", perm, r)
		}
		seen[a] = true
		dims[i], strides[i] = x.Shape[a], st[a]
	}
	y, err := p.k.broadcast(f32s(x.Data), dims, strides)
	if err != nil {
		return zero, err
	}
	return tensorOf(spec.Shape(dims), y), nil
}

// mseLoss computes Σ(ŷ−y)²/N (N the element count, 1 if empty) as
// tl_sub, tl_mul (d·d), tl_sum_tree and tl_div_count: each difference and
// square rounded once, the squares summed in the block-tree order.
func (p *provider) mseLoss(yh, y spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	if !yh.Shape.Equal(y.Shape) {
		return zero, fmt.Errorf("mse_loss: shapes %v and %v differ", yh.Shape, y.Shape)
	}
	d, err := p.k.binary("tl_sub", f32s(yh.Data), f32s(y.Data))
	if err != nil {
		return zero, err
	}
	sq, err := p.k.binary("tl_mul", d, d)
	if err != nil {
		return zero, err
	}
	s, err := p.k.sumTree(sq)
	if err != nil {
		return zero, err
	}
	q, err := p.k.divCount([]float32{s}, max(len(d), 1))
	if err != nil {
		return zero, err
	}
	return spec.Scalar0(spec.F32(q[0])), nil
}

// matmul resolves torch.matmul's shapes with spec.PlanMatmul (1-D
// promotion, batch broadcasting) and runs one tl_matmul per batch.
func (p *provider) matmul(a, b spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	pl, err := spec.PlanMatmul(a.Shape, b.Shape)
	if err != nil {
		return zero, err
	}
	if _, err := pl.Out.Check(0); err != nil {
		return zero, fmt.Errorf("matmul: output %w", err)
	}
	m, k, n := pl.M, pl.K, pl.N
	out := make([]float32, 0, pl.Out.Size())
	av, bv := f32s(a.Data), f32s(b.Data)
	for bt := range pl.AIndex {
		ao, bo := pl.AIndex[bt]*m*k, pl.BIndex[bt]*k*n
		c, err := p.k.matmul(av[ao:ao+m*k], bv[bo:bo+k*n], m, n, k)
		if err != nil {
			return zero, fmt.Errorf("matmul batch %d: %w", bt, err)
		}
		out = append(out, c...)
	}
	return tensorOf(pl.Out, out), nil
}

// linear computes x·Wᵀ + b over the last axis of x with tl_linear.
func (p *provider) linear(x, w, b spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	if w.Shape.Rank() != 2 {
		return zero, fmt.Errorf("linear weight must be [out,in], got %v", w.Shape)
	}
	out, in := w.Shape[0], w.Shape[1]
	if b.Shape.Rank() != 1 || b.Shape[0] != out {
		return zero, fmt.Errorf("linear bias has shape %v, expected [%d]", b.Shape, out)
	}
	if x.Shape.Rank() == 0 || x.Shape[x.Shape.Rank()-1] != in {
		return zero, fmt.Errorf("linear input has shape %v, expected last axis %d", x.Shape, in)
	}
	ys := x.Shape.Clone()
	ys[len(ys)-1] = out
	rows := x.Shape[:len(x.Shape)-1].Size()
	y, err := p.k.linear(f32s(x.Data), f32s(w.Data), f32s(b.Data), rows, in, out)
	if err != nil {
		return zero, err
	}
	return tensorOf(ys, y), nil
}

// reduceSum sums x along axis (negative axes count from the end) with
// tl_reduce_sum over the view [outer, n, inner].
func (p *provider) reduceSum(x spec.Tensor[spec.F32], axis int) (spec.Tensor[spec.F32], error) {
	var zero spec.Tensor[spec.F32]
	r := x.Shape.Rank()
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return zero, fmt.Errorf("reduce_sum: axis out of range for rank %d", r)
	}
	outer, n, inner := x.Shape[:axis].Size(), x.Shape[axis], x.Shape[axis+1:].Size()
	outShape := append(x.Shape[:axis].Clone(), x.Shape[axis+1:]...)
	y, err := p.k.reduceSum(f32s(x.Data), outer, n, inner)
	if err != nil {
		return zero, err
	}
	return tensorOf(outShape, y), nil
}
