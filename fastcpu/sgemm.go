package fastcpu

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Blocking parameters. The micro-kernel computes an mr×nr block of C. A
// call first packs all of A into mr-row strips and all of B into nr-column
// strips, k block by k block (depth kcBlock), then computes tileM×tileN
// tiles of C, each k block by k block. None of these sizes changes the
// result (see Sgemm); they only change the speed.
const (
	mr      = 6   // micro-kernel rows
	nr      = 16  // micro-kernel columns
	kcBlock = 512 // depth of a packed block: a B micro-panel is kcBlock·nr·4 = 32 KiB (L1)
	tileM   = 48  // rows of a C tile (multiple of mr): its A block is 96 KiB (L2)
	tileN   = 128 // columns of a C tile (multiple of nr): its B block is 256 KiB (L2)

	// packStrips is the number of micro-panels in one packing unit.
	packStrips = 8

	// parallelFlops is the work (2·m·n·k) below which Sgemm runs on the
	// calling goroutine only.
	parallelFlops = 2 * 48 * 48 * 48
	// naiveFlops is the work below which Sgemm skips packing and runs the
	// plain left-fold loop (same order, same bits).
	naiveFlops = 2 * 8 * 8 * 8
)

// Sgemm computes C = A·B for row-major A (m×k, row stride lda), B (k×n,
// row stride ldb) and C (m×n, row stride ldc), overwriting C. C is never
// read before it is written, so NaNs already in C do not leak into the
// result. k = 0 sets the m×n block of C to +0.
//
// Summation order: every element is the left fold
//
//	c[i][j] = (…((+0 + a[i][0]·b[0][j]) + a[i][1]·b[1][j]) + …) + a[i][k−1]·b[k−1][j]
//
// with each product rounded to float32 and each addition rounded to
// float32 (no fused multiply-add). The packed blocks of depth 512 only
// decide when the running float32 sum is stored into C and reloaded, which
// is exact. So each output accumulates at most k terms, and the result is
// bit-identical to the naive fixed-left triple loop, for every blocking,
// GOMAXPROCS and schedule.
//
// Preconditions: m, n, k ≥ 0; lda ≥ max(1, k); ldb ≥ max(1, n);
// ldc ≥ max(1, n); len(a) ≥ (m−1)·lda+k, len(b) ≥ (k−1)·ldb+n and
// len(c) ≥ (m−1)·ldc+n whenever the matrix is non-empty; C does not
// overlap A or B. A violated size precondition panics before any element
// is written; an overlap gives unspecified values. SgemmChecked reports
// violations as errors instead.
//
// Implementation. With AVX-512F (amd64, no purego tag), the panel driver
// of SgemmFast runs with a 12×32 VMULPS+VADDPS micro-kernel: per goroutine
// one packed B panel (256 deep, ≤ 1024 wide) and one packed 144×256 A
// block, ≤ 1.14 MiB of pooled scratch, whatever the size. Otherwise A and
// B are first packed whole, in k blocks of depth 512, into mr-row and
// nr-column micro-panels (6 and 16); then fixed 48×128 tiles of C are
// computed with a 6×16 register-blocked micro-kernel (AVX2 on amd64 when
// the CPU has it, portable Go otherwise); that packing buffer,
// (⌈m/6⌉·6 + ⌈n/16⌉·16)·k float32s, comes from a sync.Pool. All three
// kernels give the same bits. Both phases are spread over at most
// runtime.GOMAXPROCS(0) goroutines that claim units through atomic
// counters; products under 2·48³ flops run on the caller's goroutine only.
// Helper goroutines outlive calls (they poll for new work for 200 µs
// after each job, then park), so a call allocates nothing in the steady
// state.
func Sgemm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if err := checkGemm(false, m, n, k, a, lda, b, ldb, c, ldc, false); err != nil {
		panic(err)
	}
	gemm(false, m, n, k, a, lda, b, ldb, c, ldc)
}

// SgemmNT computes C = A·Bᵀ, where B is stored row-major as n×k (row
// stride ldb): c[i][j] = Σ_p a[i][p]·b[j][p]. It is the product a linear
// layer needs (W stored [out, in]).
//
// Summation order: every element is the left fold from +0 over p = 0…k−1
// of float32(a[i][p]·b[j][p]), exactly as in Sgemm; at most k terms per
// output; bit-identical to the naive loop.
//
// Preconditions are those of Sgemm except that ldb ≥ max(1, k) and
// len(b) ≥ (n−1)·ldb+k; a violated size precondition panics before any
// element is written. SgemmNTChecked reports violations as errors.
func SgemmNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if err := checkGemm(true, m, n, k, a, lda, b, ldb, c, ldc, false); err != nil {
		panic(err)
	}
	gemm(true, m, n, k, a, lda, b, ldb, c, ldc)
}

// SgemmChecked is Sgemm with every precondition checked: it returns an
// error, and leaves C untouched, when a size, stride or length is invalid
// or when C overlaps A or B.
func SgemmChecked(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	if err := checkGemm(false, m, n, k, a, lda, b, ldb, c, ldc, true); err != nil {
		return err
	}
	gemm(false, m, n, k, a, lda, b, ldb, c, ldc)
	return nil
}

// SgemmNTChecked is SgemmNT with every precondition checked: it returns
// an error, and leaves C untouched, when a size, stride or length is
// invalid or when C overlaps A or B.
func SgemmNTChecked(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	if err := checkGemm(true, m, n, k, a, lda, b, ldb, c, ldc, true); err != nil {
		return err
	}
	gemm(true, m, n, k, a, lda, b, ldb, c, ldc)
	return nil
}

// gemm dispatches a validated product.
func gemm(transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	flops := 2 * float64(m) * float64(n) * float64(k)
	if flops <= naiveFlops {
		naiveGemm(transB, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	if useAVX512 {
		panelGemm(false, transB, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	j := jobPool.Get().(*gemmJob)
	j.setup(transB, m, n, k, a, lda, b, ldb, c, ldc)
	workers := 1
	if flops > parallelFlops {
		workers = min(runtime.GOMAXPROCS(0), j.tiles)
	}
	if workers > 1 {
		dispatch(&j.offer, workers-1)
	}
	j.work()
	if workers > 1 {
		finish(&j.offer)
	}
	j.release()
	jobPool.Put(j)
}

// gemmJob is one call's shared state. A call runs in two phases. First
// the whole of A and B is packed, in units of (k block, group of strips)
// claimed through an atomic counter; then, once every unit is packed, the
// tiles of C are claimed the same way. Which goroutine packs a unit or
// computes a tile never changes what it computes.
type gemmJob struct {
	transB        bool
	m, n, k       int
	a, b, c       []float32
	lda, ldb, ldc int

	mpad, npad    int // m and n rounded up to mr and nr
	kBlocks       int // ⌈k/kcBlock⌉
	aGroups       int // packing units of A per k block
	bGroups       int // packing units of B per k block
	packUnits     int // kBlocks·(aGroups+bGroups)
	tilesN, tiles int
	buf           *[]float32 // packed A (mpad·k) then packed B (k·npad)
	nextUnit      atomic.Int64
	doneUnits     atomic.Int64
	nextTile      atomic.Int64
	offer         offer
}

var jobPool = sync.Pool{New: func() any {
	j := new(gemmJob)
	j.offer.task = j
	return j
}}

// packPool holds packing buffers; a buffer grows to the largest product
// it has served.
var packPool = sync.Pool{New: func() any { return new([]float32) }}

func (j *gemmJob) setup(transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	j.transB, j.m, j.n, j.k = transB, m, n, k
	j.a, j.lda, j.b, j.ldb, j.c, j.ldc = a, lda, b, ldb, c, ldc
	j.mpad = (m + mr - 1) / mr * mr
	j.npad = (n + nr - 1) / nr * nr
	j.kBlocks = (k + kcBlock - 1) / kcBlock
	j.aGroups = (j.mpad/mr + packStrips - 1) / packStrips
	j.bGroups = (j.npad/nr + packStrips - 1) / packStrips
	j.packUnits = j.kBlocks * (j.aGroups + j.bGroups)
	j.tilesN = (n + tileN - 1) / tileN
	j.tiles = (m + tileM - 1) / tileM * j.tilesN
	j.nextUnit.Store(0)
	j.doneUnits.Store(0)
	j.nextTile.Store(0)
	j.buf = packPool.Get().(*[]float32)
	if need := (j.mpad + j.npad) * k; cap(*j.buf) < need {
		*j.buf = make([]float32, need)
	}
}

// runHelper is work followed by the release of the job, for a helper.
func (j *gemmJob) runHelper() {
	j.work()
	j.offer.done()
}

func (j *gemmJob) release() {
	packPool.Put(j.buf)
	j.a, j.b, j.c, j.buf = nil, nil, nil, nil // do not pin the caller's slices
}

// work packs until no packing unit is left, waits until every unit is
// packed, then computes tiles until none is left.
func (j *gemmJob) work() {
	for {
		u := int(j.nextUnit.Add(1) - 1)
		if u >= j.packUnits {
			break
		}
		j.packUnit(u)
		j.doneUnits.Add(1)
	}
	// Wait for units other goroutines are still packing, without parking
	// (see finish).
	spinUntil(func() bool { return j.doneUnits.Load() == int64(j.packUnits) })
	var edge [mr * nr]float32
	for {
		t := int(j.nextTile.Add(1) - 1)
		if t >= j.tiles {
			return
		}
		ic := (t / j.tilesN) * tileM
		jc := (t % j.tilesN) * tileN
		j.tile(&edge, ic, min(tileM, j.m-ic), jc, min(tileN, j.n-jc))
	}
}

// blockOffsets returns where k block q starts in packed A and packed B,
// and its depth.
func (j *gemmJob) blockOffsets(q int) (aOff, bOff, kc int) {
	pc := q * kcBlock
	return pc * j.mpad, j.mpad*j.k + pc*j.npad, min(kcBlock, j.k-pc)
}

// packUnit packs one unit: packStrips strips of B or of A in one k block.
// B's units come first in each k block, being the larger (nr > mr), so
// that the last units claimed are the small ones.
func (j *gemmJob) packUnit(u int) {
	per := j.aGroups + j.bGroups
	q, g := u/per, u%per
	aOff, bOff, kc := j.blockOffsets(q)
	pc := q * kcBlock
	buf := *j.buf
	if g < j.bGroups {
		jr0 := g * packStrips * nr
		jr1 := min(jr0+packStrips*nr, j.npad)
		dst := buf[bOff+jr0*kc : bOff+jr1*kc]
		if j.transB {
			packBT(dst, j.b, j.ldb, pc, kc, jr0, min(jr1, j.n)-jr0, nr)
		} else {
			packB(dst, j.b, j.ldb, pc, kc, jr0, min(jr1, j.n)-jr0, nr)
		}
		return
	}
	g -= j.bGroups
	ir0 := g * packStrips * mr
	ir1 := min(ir0+packStrips*mr, j.mpad)
	packA(buf[aOff+ir0*kc:aOff+ir1*kc], j.a, j.lda, ir0, min(ir1, j.m)-ir0, pc, kc)
}

// tile computes the mc×nc tile of C at (ic, jc) from the packed blocks,
// k block by k block. The first block starts every accumulator at +0;
// later blocks reload the running sums from C, which continues the same
// left fold.
func (j *gemmJob) tile(edge *[mr * nr]float32, ic, mc, jc, nc int) {
	buf := *j.buf
	for q := 0; q < j.kBlocks; q++ {
		aOff, bOff, kc := j.blockOffsets(q)
		accumulate := q > 0
		for jr := 0; jr < nc; jr += nr {
			nrr := min(nr, nc-jr)
			bp := buf[bOff+(jc+jr)*kc : bOff+(jc+jr+nr)*kc]
			for ir := 0; ir < mc; ir += mr {
				mrr := min(mr, mc-ir)
				ap := buf[aOff+(ic+ir)*kc : aOff+(ic+ir+mr)*kc]
				off := (ic+ir)*j.ldc + jc + jr
				if mrr == mr && nrr == nr {
					microKernel(kc, ap, bp, j.c[off:off+(mr-1)*j.ldc+nr], j.ldc, accumulate)
					continue
				}
				e := edge[:]
				if accumulate {
					for r := 0; r < mrr; r++ {
						copy(e[r*nr:r*nr+nrr], j.c[off+r*j.ldc:off+r*j.ldc+nrr])
					}
				}
				microKernel(kc, ap, bp, e, nr, accumulate)
				for r := 0; r < mrr; r++ {
					copy(j.c[off+r*j.ldc:off+r*j.ldc+nrr], e[r*nr:r*nr+nrr])
				}
			}
		}
	}
}

// packA copies rows [ic, ic+mc) × columns [pc, pc+kc) of A into dst as
// consecutive mr-row strips; within a strip, element (p, r) sits at
// p·mr + r. Rows past mc, up to the next multiple of mr, are zero.
func packA(dst, a []float32, lda, ic, mc, pc, kc int) {
	for ir := 0; ir < mc; ir += mr {
		s := dst[ir*kc : ir*kc+mr*kc]
		rows := min(mr, mc-ir)
		if rows == mr {
			base := (ic+ir)*lda + pc
			r0 := a[base : base+kc]
			r1 := a[base+lda : base+lda+kc]
			r2 := a[base+2*lda : base+2*lda+kc]
			r3 := a[base+3*lda : base+3*lda+kc]
			r4 := a[base+4*lda : base+4*lda+kc]
			r5 := a[base+5*lda : base+5*lda+kc]
			for p := range kc {
				d := s[p*mr : p*mr+mr : p*mr+mr]
				d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
			}
			continue
		}
		packAEdge(s, a, lda, ic+ir, rows, pc, kc, mr)
	}
}

// packAEdge packs the last, short strip of A: rows [i, i+rows) ×
// columns [pc, pc+kc) into the strip s of h > rows rows, element (p, r)
// at p·h + r; the rows past rows are zero.
func packAEdge(s, a []float32, lda, i, rows, pc, kc, h int) {
	clear(s)
	for r := 0; r < rows; r++ {
		base := (i+r)*lda + pc
		row := a[base : base+kc]
		for p, v := range row {
			s[p*h+r] = v
		}
	}
}

// packB copies rows [pc, pc+kc) × columns [jc, jc+nc) of B into dst as
// consecutive w-column strips (w = nr for the AVX2 kernel, fnr for the
// AVX-512 one); within a strip, element (p, j) sits at p·w + j. Columns
// past nc, up to the next multiple of w, are zero.
func packB(dst, b []float32, ldb, pc, kc, jc, nc, w int) {
	full := nc / w * w
	for p := range kc {
		row := b[(pc+p)*ldb+jc : (pc+p)*ldb+jc+nc]
		for jr := 0; jr < full; jr += w {
			o := jr*kc + p*w
			copy(dst[o:o+w], row[jr:jr+w])
		}
	}
	if full < nc {
		s := dst[full*kc : full*kc+w*kc]
		clear(s)
		for p := range kc {
			base := (pc+p)*ldb + jc + full
			copy(s[p*w:p*w+nc-full], b[base:base+nc-full])
		}
	}
}

// packBT is packB for B stored transposed (n×k, row stride ldb): element
// (p, j) of the packed block is b[jc+j][pc+p].
func packBT(dst, b []float32, ldb, pc, kc, jc, nc, w int) {
	for jr := 0; jr < nc; jr += w {
		s := dst[jr*kc : jr*kc+w*kc]
		cols := min(w, nc-jr)
		if cols < w {
			clear(s)
		}
		for j := 0; j < cols; j++ {
			base := (jc+jr+j)*ldb + pc
			row := b[base : base+kc]
			for p, v := range row {
				s[p*w+j] = v
			}
		}
	}
}

// naiveGemm is the plain left-fold triple loop, used for tiny products;
// it produces the same bits as the blocked path.
func naiveGemm(transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		ar := a[i*lda : i*lda+k]
		cr := c[i*ldc : i*ldc+n]
		for j := range cr {
			var acc float32
			if transB {
				br := b[j*ldb : j*ldb+k]
				for p, av := range ar {
					acc += float32(av * br[p])
				}
			} else {
				for p, av := range ar {
					acc += float32(av * b[p*ldb+j])
				}
			}
			cr[j] = acc
		}
	}
}
