//go:build cuda && cgo

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/tlcheck/tlcheck/backend"
)

// Built reports whether this binary contains the CUDA provider.
const Built = true

// ErrNotBuilt is never returned in this build; it exists so that callers
// compile in both.
var ErrNotBuilt = errors.New("CUDA provider not built (rebuild with -tags cuda and CGO_ENABLED=1)")

// DriverError is a failed CUDA driver call: which call, on what, and the
// driver's error.
type DriverError struct {
	// Call is the driver function, e.g. "cuMemAlloc".
	Call string
	// What names the object or sizes, e.g. "4194304 bytes for tl_matmul A".
	What string
	Err  error
}

func (e *DriverError) Error() string { return "cuda: " + e.Call + "(" + e.What + "): " + e.Err.Error() }
func (e *DriverError) Unwrap() error { return e.Err }

// LaunchError is a failed kernel launch (or a fault reported when the
// context synchronised after it): the kernel, its grid and block, and the
// problem sizes.
type LaunchError struct {
	Kernel      string
	Grid, Block [3]int
	Sizes       string
	Err         error
}

func (e *LaunchError) Error() string {
	return fmt.Sprintf("cuda: launch %s grid %v block %v (%s): %v", e.Kernel, e.Grid, e.Block, e.Sizes, e.Err)
}
func (e *LaunchError) Unwrap() error { return e.Err }

// NewProvider returns the CUDA provider on device 0 with tl_sum_tree for
// sum. See NewProviderWith.
func NewProvider() (backend.Provider, error) { return NewProviderWith(Options{}) }

// NewProviderWith creates a context on device 0, loads the embedded PTX
// and returns the native-cuda provider. Every driver error is a
// *DriverError naming the call. The context belongs to one worker
// goroutine locked to its OS thread; every kernel call is run by it.
func NewProviderWith(o Options) (backend.Provider, error) {
	g, err := newGPU()
	if err != nil {
		return nil, err
	}
	return &provider{k: g, atomic: o.AtomicSum}, nil
}

// gpu implements cudaKernels on device 0 through gorgonia.org/cu. All
// driver calls happen on the worker goroutine (loop), which owns the
// context; callers hand it closures through reqs and wait for the result.
type gpu struct {
	reqs chan func()
	mu   sync.Mutex
	shut bool
	name string

	// Owned by the worker goroutine.
	ctx  cu.CUContext
	mods []cu.Module
	fns  map[string]cu.Function
}

func newGPU() (*gpu, error) {
	g := &gpu{reqs: make(chan func())}
	errc := make(chan error, 1)
	go g.loop(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	return g, nil
}

func (g *gpu) loop(errc chan<- error) {
	// Never unlocked: the thread holds the context and exits with the
	// goroutine.
	runtime.LockOSThread()
	if err := g.init(); err != nil {
		g.release()
		errc <- err
		return
	}
	errc <- nil
	for f := range g.reqs {
		f()
	}
}

func (g *gpu) init() error {
	n, err := cu.NumDevices()
	if err != nil {
		return &DriverError{"cuDeviceGetCount", "", err}
	}
	if n == 0 {
		return &DriverError{"cuDeviceGetCount", "", errors.New("no CUDA device")}
	}
	dev, err := cu.GetDevice(0)
	if err != nil {
		return &DriverError{"cuDeviceGet", "0", err}
	}
	name, err := dev.Name()
	if err != nil {
		return &DriverError{"cuDeviceGetName", "0", err}
	}
	maj, err1 := dev.Attribute(cu.ComputeCapabilityMajor)
	min, err2 := dev.Attribute(cu.ComputeCapabilityMinor)
	if err := errors.Join(err1, err2); err != nil {
		return &DriverError{"cuDeviceGetAttribute", "compute capability", err}
	}
	g.name = fmt.Sprintf("%s (sm_%d%d)", name, maj, min)
	g.ctx, err = dev.MakeContext(cu.SchedAuto)
	if err != nil {
		return &DriverError{"cuCtxCreate", name, err}
	}
	g.fns = map[string]cu.Function{}
	for _, f := range kernelFiles() {
		src, err := ptxSource(f)
		if err != nil {
			return err
		}
		mod, err := cu.LoadData(src)
		if err != nil {
			return &DriverError{"cuModuleLoadData", f, err}
		}
		g.mods = append(g.mods, mod)
	}
	for _, k := range kernelSpecs {
		mod := g.mods[indexOf(kernelFiles(), k.File)]
		fn, err := mod.Function(k.Entry)
		if err != nil {
			return &DriverError{"cuModuleGetFunction", k.Entry + " in " + k.File, err}
		}
		g.fns[k.Entry] = fn
	}
	return nil
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// release unloads the modules and destroys the context (worker only).
func (g *gpu) release() error {
	var errs []error
	for _, m := range g.mods {
		if err := m.Unload(); err != nil {
			errs = append(errs, &DriverError{"cuModuleUnload", "", err})
		}
	}
	g.mods = nil
	if g.fns != nil || g.name != "" {
		var zero cu.CUContext
		if g.ctx != zero {
			if err := g.ctx.Destroy(); err != nil {
				errs = append(errs, &DriverError{"cuCtxDestroy", g.name, err})
			}
		}
	}
	return errors.Join(errs...)
}

// do runs f on the worker goroutine and returns its error.
func (g *gpu) do(f func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		return errors.New("cuda: provider is closed")
	}
	errc := make(chan error, 1)
	g.reqs <- func() { errc <- f() }
	return <-errc
}

func (g *gpu) device() string { return g.name }

func (g *gpu) close() error {
	err := g.do(g.release)
	g.mu.Lock()
	if !g.shut {
		g.shut = true
		close(g.reqs)
	}
	g.mu.Unlock()
	return err
}

// bufs is the set of device buffers of one call: every buffer is freed
// when the call returns (free), so none outlives it.
type bufs struct {
	kernel string
	ptrs   []cu.DevicePtr
}

func (b *bufs) alloc(what string, n int) (cu.DevicePtr, error) {
	bytes := int64(max(n, 1)) * 4
	p, err := cu.MemAlloc(bytes)
	if err != nil {
		return 0, &DriverError{"cuMemAlloc", fmt.Sprintf("%d bytes for %s %s", bytes, b.kernel, what), err}
	}
	b.ptrs = append(b.ptrs, p)
	return p, nil
}

func (b *bufs) upload(what string, src []float32) (cu.DevicePtr, error) {
	p, err := b.alloc(what, len(src))
	if err != nil || len(src) == 0 {
		return p, err
	}
	if err := cu.MemcpyHtoD(p, unsafe.Pointer(&src[0]), int64(len(src))*4); err != nil {
		return 0, &DriverError{"cuMemcpyHtoD", fmt.Sprintf("%d floats for %s %s", len(src), b.kernel, what), err}
	}
	return p, nil
}

func (b *bufs) uploadU64(what string, src []uint64) (cu.DevicePtr, error) {
	p, err := b.alloc(what, 2*len(src))
	if err != nil || len(src) == 0 {
		return p, err
	}
	if err := cu.MemcpyHtoD(p, unsafe.Pointer(&src[0]), int64(len(src))*8); err != nil {
		return 0, &DriverError{"cuMemcpyHtoD", fmt.Sprintf("%d words for %s %s", len(src), b.kernel, what), err}
	}
	return p, nil
}

func (b *bufs) download(what string, p cu.DevicePtr, n int) ([]float32, error) {
	out := make([]float32, n)
	if n == 0 {
		return out, nil
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&out[0]), p, int64(n)*4); err != nil {
		return nil, &DriverError{"cuMemcpyDtoH", fmt.Sprintf("%d floats of %s %s", n, b.kernel, what), err}
	}
	return out, nil
}

func (b *bufs) free() error {
	var errs []error
	for _, p := range b.ptrs {
		if err := cu.MemFree(p); err != nil {
			errs = append(errs, &DriverError{"cuMemFree", b.kernel, err})
		}
	}
	b.ptrs = nil
	return errors.Join(errs...)
}

// call runs body on the worker with a fresh buffer set freed afterwards.
func (g *gpu) call(kernel string, body func(b *bufs) error) error {
	return g.do(func() error {
		b := &bufs{kernel: kernel}
		err := body(b)
		return errors.Join(err, b.free())
	})
}

// Grid limits of every CUDA device of compute capability ≥ 3.0.
const (
	maxGridX = 1<<31 - 1
	maxGridY = 65535
)

// launch runs one kernel and synchronises (worker only). Every argument is
// passed as an 8-byte value.
func (g *gpu) launch(entry string, grid, block [3]int, sizes string, args ...uint64) error {
	ks, err := specOf(entry)
	if err != nil {
		return err
	}
	if len(args) != len(ks.Params) {
		return fmt.Errorf("cuda: %s takes %d arguments, launch passes %d", entry, len(ks.Params), len(args))
	}
	if grid[0] > maxGridX || grid[1] > maxGridY || grid[2] > maxGridY {
		return &LaunchError{entry, grid, block, sizes, errors.New("grid exceeds the device limits")}
	}
	vals := append([]uint64(nil), args...)
	ptrs := make([]unsafe.Pointer, len(vals))
	for i := range vals {
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	if err := g.fns[entry].LaunchAndSync(grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, cu.NoStream, ptrs); err != nil {
		return &LaunchError{entry, grid, block, sizes, err}
	}
	return nil
}

func blocksFor(n int) int { return (n + BlockThreads - 1) / BlockThreads }

func oneD(n int) ([3]int, [3]int) { return [3]int{blocksFor(n), 1, 1}, [3]int{BlockThreads, 1, 1} }

func (g *gpu) binary(entry string, a, b []float32) ([]float32, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("cuda: %s: operands of %d and %d elements", entry, len(a), len(b))
	}
	var out []float32
	err := g.call(entry, func(bs *bufs) error {
		if len(a) == 0 {
			out = []float32{}
			return nil
		}
		pa, err := bs.upload("a", a)
		if err != nil {
			return err
		}
		pb, err := bs.upload("b", b)
		if err != nil {
			return err
		}
		pc, err := bs.alloc("c", len(a))
		if err != nil {
			return err
		}
		gr, bl := oneD(len(a))
		if err := g.launch(entry, gr, bl, fmt.Sprintf("n=%d", len(a)), uint64(pa), uint64(pb), uint64(pc), uint64(len(a))); err != nil {
			return err
		}
		out, err = bs.download("c", pc, len(a))
		return err
	})
	return out, err
}

func (g *gpu) unary(entry string, x []float32) ([]float32, error) {
	var out []float32
	err := g.call(entry, func(bs *bufs) error {
		if len(x) == 0 {
			out = []float32{}
			return nil
		}
		px, err := bs.upload("x", x)
		if err != nil {
			return err
		}
		py, err := bs.alloc("y", len(x))
		if err != nil {
			return err
		}
		gr, bl := oneD(len(x))
		if err := g.launch(entry, gr, bl, fmt.Sprintf("n=%d", len(x)), uint64(px), uint64(py), uint64(len(x))); err != nil {
			return err
		}
		out, err = bs.download("y", py, len(x))
		return err
	})
	return out, err
}

func (g *gpu) divCount(x []float32, d int) ([]float32, error) {
	var out []float32
	err := g.call("tl_div_count", func(bs *bufs) error {
		if len(x) == 0 {
			out = []float32{}
			return nil
		}
		px, err := bs.upload("x", x)
		if err != nil {
			return err
		}
		py, err := bs.alloc("y", len(x))
		if err != nil {
			return err
		}
		gr, bl := oneD(len(x))
		if err := g.launch("tl_div_count", gr, bl, fmt.Sprintf("n=%d d=%d", len(x), d), uint64(px), uint64(py), uint64(len(x)), uint64(d)); err != nil {
			return err
		}
		out, err = bs.download("y", py, len(x))
		return err
	})
	return out, err
}

func (g *gpu) broadcast(src []float32, dims, strides []int) ([]float32, error) {
	n := 1
	for _, d := range dims {
		n *= d
	}
	var out []float32
	err := g.call("tl_broadcast", func(bs *bufs) error {
		if n == 0 {
			out = []float32{}
			return nil
		}
		ps, err := bs.upload("src", src)
		if err != nil {
			return err
		}
		pd, err := bs.alloc("dst", n)
		if err != nil {
			return err
		}
		meta := make([]uint64, 0, 2*len(dims))
		for _, d := range dims {
			meta = append(meta, uint64(d))
		}
		for _, s := range strides {
			meta = append(meta, uint64(s))
		}
		pm, err := bs.uploadU64("meta", meta)
		if err != nil {
			return err
		}
		gr, bl := oneD(n)
		if err := g.launch("tl_broadcast", gr, bl, fmt.Sprintf("n=%d rank=%d", n, len(dims)),
			uint64(ps), uint64(pd), uint64(n), uint64(len(dims)), uint64(pm)); err != nil {
			return err
		}
		out, err = bs.download("dst", pd, n)
		return err
	})
	return out, err
}

func (g *gpu) matmul(a, b []float32, m, n, k int) ([]float32, error) {
	var out []float32
	err := g.call("tl_matmul", func(bs *bufs) error {
		if m == 0 || n == 0 {
			out = []float32{}
			return nil
		}
		pa, err := bs.upload("A", a)
		if err != nil {
			return err
		}
		pb, err := bs.upload("B", b)
		if err != nil {
			return err
		}
		pc, err := bs.alloc("C", m*n)
		if err != nil {
			return err
		}
		t := MatmulTile
		grid := [3]int{(n + t - 1) / t, (m + t - 1) / t, 1}
		if err := g.launch("tl_matmul", grid, [3]int{t, t, 1}, fmt.Sprintf("m=%d n=%d k=%d", m, n, k),
			uint64(pa), uint64(pb), uint64(pc), uint64(m), uint64(n), uint64(k)); err != nil {
			return err
		}
		out, err = bs.download("C", pc, m*n)
		return err
	})
	return out, err
}

func (g *gpu) linear(x, w, bias []float32, rows, in, outN int) ([]float32, error) {
	var out []float32
	err := g.call("tl_linear", func(bs *bufs) error {
		if rows == 0 || outN == 0 {
			out = []float32{}
			return nil
		}
		px, err := bs.upload("X", x)
		if err != nil {
			return err
		}
		pw, err := bs.upload("W", w)
		if err != nil {
			return err
		}
		pb, err := bs.upload("bias", bias)
		if err != nil {
			return err
		}
		py, err := bs.alloc("Y", rows*outN)
		if err != nil {
			return err
		}
		gr, bl := oneD(rows * outN)
		if err := g.launch("tl_linear", gr, bl, fmt.Sprintf("rows=%d in=%d out=%d", rows, in, outN),
			uint64(px), uint64(pw), uint64(pb), uint64(py), uint64(rows), uint64(in), uint64(outN)); err != nil {
			return err
		}
		out, err = bs.download("Y", py, rows*outN)
		return err
	})
	return out, err
}

func (g *gpu) sumTree(x []float32) (float32, error) {
	var s float32
	err := g.call("tl_sum_tree", func(bs *bufs) error {
		if len(x) == 0 {
			return nil
		}
		cur, err := bs.upload("x", x)
		if err != nil {
			return err
		}
		n := len(x)
		for {
			parts := blocksFor(n)
			pp, err := bs.alloc("partials", parts)
			if err != nil {
				return err
			}
			gr, bl := oneD(n)
			if err := g.launch("tl_sum_tree", gr, bl, fmt.Sprintf("n=%d", n), uint64(cur), uint64(pp), uint64(n)); err != nil {
				return err
			}
			cur, n = pp, parts
			if n == 1 {
				break
			}
		}
		v, err := bs.download("result", cur, 1)
		if err == nil {
			s = v[0]
		}
		return err
	})
	return s, err
}

func (g *gpu) sumAtomic(x []float32) (float32, error) {
	var s float32
	err := g.call("tl_sum_atomic", func(bs *bufs) error {
		if len(x) == 0 {
			return nil
		}
		px, err := bs.upload("x", x)
		if err != nil {
			return err
		}
		po, err := bs.upload("out", []float32{0})
		if err != nil {
			return err
		}
		gr, bl := oneD(len(x))
		if err := g.launch("tl_sum_atomic", gr, bl, fmt.Sprintf("n=%d", len(x)), uint64(px), uint64(po), uint64(len(x))); err != nil {
			return err
		}
		v, err := bs.download("out", po, 1)
		if err == nil {
			s = v[0]
		}
		return err
	})
	return s, err
}

func (g *gpu) reduceSum(x []float32, outer, n, inner int) ([]float32, error) {
	var out []float32
	err := g.call("tl_reduce_sum", func(bs *bufs) error {
		if outer*inner == 0 {
			out = []float32{}
			return nil
		}
		px, err := bs.upload("x", x)
		if err != nil {
			return err
		}
		py, err := bs.alloc("y", outer*inner)
		if err != nil {
			return err
		}
		grid := [3]int{outer * inner, 1, 1}
		if err := g.launch("tl_reduce_sum", grid, [3]int{BlockThreads, 1, 1}, fmt.Sprintf("outer=%d n=%d inner=%d", outer, n, inner),
			uint64(px), uint64(py), uint64(n), uint64(inner)); err != nil {
			return err
		}
		out, err = bs.download("y", py, outer*inner)
		return err
	})
	return out, err
}
