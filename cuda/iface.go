package cuda

// cudaKernels is what the provider needs from a device: one method per
// kernel family, over host slices (the implementation owns the device
// buffers, whose lifetime is the call). The GPU implementation (gpu.go,
// build tag cuda && cgo) uploads, launches the embedded PTX and downloads;
// the CPU emulation (emu.go) replays the same evaluation orders in float32
// on the host, so that the refinement logic, the planted fault and the
// provider's shape handling are tested in every build without a GPU.
//
// Every method gets well-formed sizes (the provider checks them) and
// returns a fresh slice.
type cudaKernels interface {
	// binary runs tl_add, tl_sub or tl_mul on equal-length a and b.
	binary(entry string, a, b []float32) ([]float32, error)
	// unary runs tl_relu or tl_neg.
	unary(entry string, x []float32) ([]float32, error)
	// divCount runs tl_div_count: y[i] = x[i] / float32(d).
	divCount(x []float32, d int) ([]float32, error)
	// broadcast runs tl_broadcast, a gather: dims are the target extents,
	// strides the source stride of each target axis (0 where broadcast;
	// permuted strides for permute; row-major strides for reshape).
	broadcast(src []float32, dims, strides []int) ([]float32, error)
	// matmul runs tl_matmul: C[m,n] = A[m,k]·B[k,n].
	matmul(a, b []float32, m, n, k int) ([]float32, error)
	// linear runs tl_linear: Y[rows,out] = X[rows,in]·Wᵀ + bias.
	linear(x, w, bias []float32, rows, in, out int) ([]float32, error)
	// sumTree runs tl_sum_tree until one value is left.
	sumTree(x []float32) (float32, error)
	// sumAtomic runs tl_sum_atomic.
	sumAtomic(x []float32) (float32, error)
	// reduceSum runs tl_reduce_sum on x of shape [outer, n, inner].
	reduceSum(x []float32, outer, n, inner int) ([]float32, error)
	// device describes the device, e.g. "NVIDIA H200 (sm_90)" or
	// "cpu emulation".
	device() string
	// close releases the device; the kernels must not be used after it.
	close() error
}
