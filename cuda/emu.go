package cuda

import "fmt"

// emuKernels is the CPU emulation of the PTX kernels: each method
// evaluates in exactly the order the kernel's threads do (per the comments
// in kernels/*.ptx), one binary32 rounding per mul.rn / add.rn (Go's
// float32 arithmetic on explicitly converted operands is IEEE binary32
// round-to-nearest-even with subnormals, as the kernels use no .ftz). The
// only order the hardware decides is the order in which tl_sum_atomic's
// blocks add their sums into the result; atomicOrder fixes one (nil:
// last block first), so that tests can exercise several.
type emuKernels struct {
	atomicOrder func(blocks int) []int
}

func (e *emuKernels) device() string { return "cpu emulation of the PTX kernels" }
func (e *emuKernels) close() error   { return nil }

func (e *emuKernels) binary(entry string, a, b []float32) ([]float32, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("cuda: %s: operands of %d and %d elements", entry, len(a), len(b))
	}
	c := make([]float32, len(a))
	for i := range a {
		switch entry {
		case "tl_add":
			c[i] = a[i] + b[i]
		case "tl_sub":
			c[i] = a[i] - b[i]
		case "tl_mul":
			c[i] = a[i] * b[i]
		default:
			return nil, fmt.Errorf("cuda: %s is not a binary kernel", entry)
		}
	}
	return c, nil
}

func (e *emuKernels) unary(entry string, x []float32) ([]float32, error) {
	y := make([]float32, len(x))
	for i, v := range x {
		switch entry {
		case "tl_relu":
			if v < 0 { // false for NaN and −0, as setp.lt.f32
				v = 0
			}
			y[i] = v
		case "tl_neg":
			y[i] = -v
		default:
			return nil, fmt.Errorf("cuda: %s is not a unary kernel", entry)
		}
	}
	return y, nil
}

func (e *emuKernels) divCount(x []float32, d int) ([]float32, error) {
	y := make([]float32, len(x))
	den := float32(d) // cvt.rn.f32.u64: the nearest binary32 to d
	for i, v := range x {
		y[i] = v / den
	}
	return y, nil
}

func (e *emuKernels) broadcast(src []float32, dims, strides []int) ([]float32, error) {
	n := 1
	for _, d := range dims {
		n *= d
	}
	out := make([]float32, n)
	for i := range out {
		rem, off := i, 0
		for d := len(dims) - 1; d >= 0; d-- {
			off += (rem % dims[d]) * strides[d]
			rem /= dims[d]
		}
		if off >= len(src) {
			return nil, fmt.Errorf("cuda: tl_broadcast: source offset %d outside %d elements", off, len(src))
		}
		out[i] = src[off]
	}
	return out, nil
}

func (e *emuKernels) matmul(a, b []float32, m, n, k int) ([]float32, error) {
	c := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var acc float32
			// The tiles only split the k loop; the padded terms +0·+0 leave
			// acc unchanged (acc is never −0: it starts at +0 and x + y is
			// −0 in round-to-nearest only when both are −0).
			for p := range k {
				acc += float32(a[i*k+p] * b[p*n+j])
			}
			c[i*n+j] = acc
		}
	}
	return c, nil
}

func (e *emuKernels) linear(x, w, bias []float32, rows, in, out int) ([]float32, error) {
	y := make([]float32, rows*out)
	for r := range rows {
		for o := range out {
			var acc float32
			for j := range in {
				acc += float32(x[r*in+j] * w[o*in+j])
			}
			y[r*out+o] = acc + bias[o]
		}
	}
	return y, nil
}

// blockTree replays the shared-memory tree of one 256-thread block:
// sh[t] += sh[t+s] for s = 128, 64, ..., 1.
func blockTree(sh *[BlockThreads]float32) float32 {
	for s := BlockThreads / 2; s > 0; s >>= 1 {
		for t := 0; t < s; t++ {
			sh[t] += sh[t+s]
		}
	}
	return sh[0]
}

// blockSums returns tl_sum_tree's partials: block b sums
// x[b*256 .. b*256+255], +0 past the end.
func blockSums(x []float32) []float32 {
	blocks := (len(x) + BlockThreads - 1) / BlockThreads
	out := make([]float32, blocks)
	for b := range blocks {
		var sh [BlockThreads]float32
		copy(sh[:], x[b*BlockThreads:min(len(x), (b+1)*BlockThreads)])
		out[b] = blockTree(&sh)
	}
	return out
}

func (e *emuKernels) sumTree(x []float32) (float32, error) {
	if len(x) == 0 {
		return 0, nil
	}
	for {
		x = blockSums(x)
		if len(x) == 1 {
			return x[0], nil
		}
	}
}

func (e *emuKernels) sumAtomic(x []float32) (float32, error) {
	if len(x) == 0 {
		return 0, nil
	}
	parts := blockSums(x)
	order := make([]int, len(parts))
	for i := range order {
		order[i] = len(parts) - 1 - i
	}
	if e.atomicOrder != nil {
		order = e.atomicOrder(len(parts))
	}
	if len(order) != len(parts) {
		return 0, fmt.Errorf("cuda: emulated atomic order has %d blocks, want %d", len(order), len(parts))
	}
	var out float32
	seen := make([]bool, len(parts))
	for _, b := range order {
		if b < 0 || b >= len(parts) || seen[b] {
			return 0, fmt.Errorf("cuda: emulated atomic order %v is not a permutation", order)
		}
		seen[b] = true
		out += parts[b]
	}
	return out, nil
}

func (e *emuKernels) reduceSum(x []float32, outer, n, inner int) ([]float32, error) {
	y := make([]float32, outer*inner)
	for b := range y {
		o, c := b/inner, b%inner
		base := o*n*inner + c
		var sh [BlockThreads]float32
		for t := range BlockThreads {
			var acc float32
			for j := t; j < n; j += BlockThreads {
				acc += x[base+j*inner]
			}
			sh[t] = acc
		}
		y[b] = blockTree(&sh)
	}
	return y, nil
}
