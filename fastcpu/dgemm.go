package fastcpu

import (
	"fmt"
	"runtime"
	"sync"
)

// Blocking of the float64 product. A call packs op(B) once into
// nr-column micro-panels, k block by k block (depth dkc), then computes
// C in mr-row strips: per k block, per group of dnc columns, per strip,
// per micro-panel, an mr×nr register block. The micro-kernel family
// (dfamily) fixes mr and nr: 12×16 with AVX-512, 6×8 with AVX2, 4×4 in
// portable Go. None of these sizes changes a result (see Dgemm).
const (
	dkc = 256 // depth of a k block
	dnc = 128 // columns per group (a multiple of every family's nr)

	// dParallelFlops is the work (2·m·n·k) below which Dgemm runs on the
	// calling goroutine only.
	dParallelFlops = 1 << 21
	// dNaiveRows is the row count below which Dgemm skips packing and
	// runs the plain loops (same order, same bits).
	dNaiveRows = 4
)

// Dgemm computes C = op(A)·op(B) in float64 for row-major matrices,
// overwriting the m×n block of C (row stride ldc); op(A) is m×k and
// op(B) is k×n. With transA false A is stored m×k (row stride lda),
// element (i, p) at a[i·lda+p]; with transA true A is stored k×m, element
// (i, p) at a[p·lda+i]. Likewise op(B)'s element (p, j) is b[p·ldb+j], or
// b[j·ldb+p] with transB. C is never read before it is written; k = 0
// sets the block to +0.
//
// Summation order: every element is the left fold
//
//	c[i][j] = (…((+0 + a(i,0)·b(0,j)) + a(i,1)·b(1,j)) + …) + a(i,k−1)·b(k−1,j)
//
// with each product rounded to float64 and each addition rounded to
// float64 (no fused multiply-add: the Go code converts every product
// explicitly, which the Go specification says prevents fusion on every
// architecture). The k blocks of depth 256 only decide when the running
// sum is stored into C and reloaded, which is exact. So each element
// accumulates exactly k product terms (an order-independent bound such as
// Higham's γ_k applies), and the result is bit-identical to the naive
// triple loop for every blocking, transposition, GOMAXPROCS and schedule.
//
// Implementation: op(B) is packed whole into nr-column panels,
// zero-padded, k block by k block; each goroutine packs its own mr-row
// strips of op(A) (zero-padded) and runs an mr×nr register-blocked
// micro-kernel on them, writing full blocks straight into C and edge
// blocks through a scratch block of which only the real rows and columns
// are copied back. The micro-kernel is chosen by CPU feature, like the
// float32 ones: with AVX-512F a 12×16 assembly kernel (24 ZMM
// accumulators), else with AVX2 a 6×8 one (12 YMM accumulators), else
// (other architectures, the purego tag) a 4×4 Go kernel in sixteen scalar
// accumulators. The vector kernels round every product with VMULPD and
// add it with VADDPD, vectorised across columns of C: no fused
// multiply-add anywhere, so every family performs, for every element,
// exactly the fold above and the families give the same bits (tested
// against the naive loop for each family forced in turn). Fusing would be
// faster on AVX-512, but the portable path would then have to fuse too
// (math.FMA, a software routine where the hardware has none) to keep the
// bits equal across machines, and the naive fold would no longer be the
// reference. Row strips are divided among at most runtime.GOMAXPROCS(0)
// goroutines in contiguous ranges (products under 2²¹ flops run on the
// caller's goroutine); a row is always computed by exactly one goroutine,
// with the fold above, so the division never changes a bit. Products with
// fewer than 4 rows (a matrix-vector product, a linear layer on one row)
// run plain loops in the same order: with op(B) untransposed, c_i ← c_i +
// a(i,p)·b_p row by row for p ascending (with AVX2, VMULPD then VADDPD
// across the row); transposed, four dot products' folds side by side.
//
// Preconditions (violations panic before anything is written; see
// DgemmChecked): m, n, k ≥ 0; the strides cover their rows and the
// slices hold every element addressed; C does not overlap A or B.
func Dgemm(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if err := DgemmChecked(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		panic(err)
	}
	dgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
}

// DgemmChecked validates Dgemm's size preconditions and returns an error
// naming the first violated one, or nil.
func DgemmChecked(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) error {
	if m < 0 || n < 0 || k < 0 {
		return fmt.Errorf("fastcpu.Dgemm: negative size m=%d n=%d k=%d", m, n, k)
	}
	need := func(name string, rows, cols, ld, have int) error {
		if rows == 0 || cols == 0 {
			return nil
		}
		if ld < cols {
			return fmt.Errorf("fastcpu.Dgemm: %s stride %d < %d columns", name, ld, cols)
		}
		if want := (rows-1)*ld + cols; have < want {
			return fmt.Errorf("fastcpu.Dgemm: %s holds %d values, needs %d", name, have, want)
		}
		return nil
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if err := need("A", ar, ac, lda, len(a)); err != nil {
		return err
	}
	if err := need("B", br, bc, ldb, len(b)); err != nil {
		return err
	}
	return need("C", m, n, ldc, len(c))
}

// dfamily is one float64 micro-kernel family: kernel computes an mr×nr
// block of C (row stride ldc) from a packed mr-row A strip (a[p·mr+r]) and
// a packed nr-column B panel (b[p·nr+j]): c[r·ldc+j] is the left fold
// c ← fl(c + fl(a[p·mr+r]·b[p·nr+j])), p = 0 … kc−1, from +0, or from
// c[r·ldc+j] when accumulate is set.
type dfamily struct {
	name   string
	mr, nr int
	kernel func(kc int, a, b, c []float64, ldc int, accumulate bool)
}

// dgemmFamily is the micro-kernel family this machine runs (useAVX512 and
// useAVX2 are set from the CPU's features; tests force each in turn).
func dgemmFamily() dfamily {
	switch {
	case useAVX512:
		return dfamily{"avx512", 12, 16, dkernelAVX512}
	case useAVX2:
		return dfamily{"avx2", 6, 8, dkernelAVX2}
	}
	return dfamily{"go", 4, 4, dkernelGo}
}

// dkernelAVX512 and dkernelAVX2 check the extents the assembly relies on
// (kc ≥ 1) and run it.
func dkernelAVX512(kc int, a, b, c []float64, ldc int, accumulate bool) {
	_, _, _ = a[12*kc-1], b[16*kc-1], c[11*ldc+15]
	dkernel12x16AVX512(kc, &a[0], &b[0], &c[0], ldc, accumulate)
}

func dkernelAVX2(kc int, a, b, c []float64, ldc int, accumulate bool) {
	_, _, _ = a[6*kc-1], b[8*kc-1], c[5*ldc+7]
	dkernel6x8AVX2(kc, &a[0], &b[0], &c[0], ldc, accumulate)
}

// dgemm is Dgemm without the checks.
func dgemm(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	if m < dNaiveRows {
		dgemmNaive(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	f := dgemmFamily()
	strips, panels := (m+f.mr-1)/f.mr, (n+f.nr-1)/f.nr
	workers := 1
	if 2*float64(m)*float64(n)*float64(k) >= dParallelFlops {
		workers = runtime.GOMAXPROCS(0)
	}
	// Split the larger dimension: row strips when m ≥ n, column panels
	// otherwise (each goroutine packs the B panels and A strips it reads).
	byRows := m >= n
	units := panels
	if byRows {
		units = strips
	}
	workers = min(workers, units)
	if workers <= 1 {
		dgemmBlock(f, transA, transB, 0, strips, 0, panels, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		u0, u1 := units*w/workers, units*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			if byRows {
				dgemmBlock(f, transA, transB, u0, u1, 0, panels, m, n, k, a, lda, b, ldb, c, ldc)
			} else {
				dgemmBlock(f, transA, transB, 0, strips, u0, u1, m, n, k, a, lda, b, ldb, c, ldc)
			}
		}()
	}
	wg.Wait()
}

// dgemmNaive is the plain loop for few rows. With B transposed, per row,
// the left folds over p of four outputs j…j+3 side by side (independent
// chains, so the additions overlap), then the remaining ones alone; with
// B not transposed, the folds of a whole row interleaved over j (c_j ←
// c_j + a(i,p)·b(p,j) for p ascending, by daxpyAVX2 with AVX2), which adds
// the same terms to each element in the same order.
func dgemmNaive(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	at := func(i, p int) float64 {
		if transA {
			return a[p*lda+i]
		}
		return a[i*lda+p]
	}
	for i := 0; i < m; i++ {
		crow := c[i*ldc : i*ldc+n]
		if transB {
			var arow []float64
			if transA {
				arow = make([]float64, k)
				for p := range arow {
					arow[p] = at(i, p)
				}
			} else {
				arow = a[i*lda : i*lda+k]
			}
			dotRows(arow, b, ldb, crow)
			continue
		}
		clear(crow)
		for p := 0; p < k; p++ {
			av := at(i, p)
			brow := b[p*ldb : p*ldb+n]
			if useAVX2 {
				daxpyAVX2(n, av, &brow[0], &crow[0])
				continue
			}
			for j, bv := range brow {
				crow[j] = crow[j] + float64(av*bv)
			}
		}
	}
}

// dotRows sets c[j] = the left fold from +0 of fl(x[p]·b[j·ldb+p]) over
// p < len(x), four outputs at a time.
func dotRows(x, b []float64, ldb int, c []float64) {
	k := len(x)
	j := 0
	for ; j+4 <= len(c); j += 4 {
		b0 := b[j*ldb : j*ldb+k]
		b1 := b[(j+1)*ldb : (j+1)*ldb+k]
		b2 := b[(j+2)*ldb : (j+2)*ldb+k]
		b3 := b[(j+3)*ldb : (j+3)*ldb+k]
		var s0, s1, s2, s3 float64
		for p, xv := range x {
			s0 = s0 + float64(xv*b0[p])
			s1 = s1 + float64(xv*b1[p])
			s2 = s2 + float64(xv*b2[p])
			s3 = s3 + float64(xv*b3[p])
		}
		c[j], c[j+1], c[j+2], c[j+3] = s0, s1, s2, s3
	}
	for ; j < len(c); j++ {
		bj := b[j*ldb : j*ldb+k]
		var s float64
		for p, xv := range x {
			s = s + float64(xv*bj[p])
		}
		c[j] = s
	}
}

// packB64 packs columns [q0·nr, q1·nr) ∩ [0, n) and rows [p0, p0+kc) of
// op(B) (k×n) into bp as q1 − q0 panels of kc rows × nr columns: panel
// q − q0 holds bp[(q−q0)·kc·nr + p·nr + jj] = b(p0+p, q·nr+jj), zero for
// columns ≥ n. It reads B in storage order (row by row untransposed,
// column of op(B) by column transposed), so that consecutive reads share
// cache lines and pages.
func packB64(nr int, transB bool, q0, q1, p0, kc, n int, b []float64, ldb int, bp []float64) {
	bp = bp[:(q1-q0)*kc*nr]
	if last := q1 - 1; last*nr+nr > n { // a partial panel: zero its padding
		clear(bp[(last-q0)*kc*nr:])
	}
	if transB {
		for q := q0; q < q1; q++ {
			panel := bp[(q-q0)*kc*nr : (q-q0+1)*kc*nr]
			j0 := q * nr
			for jj := 0; jj < min(nr, n-j0); jj++ {
				col := b[(j0+jj)*ldb+p0 : (j0+jj)*ldb+p0+kc]
				for p, v := range col {
					panel[p*nr+jj] = v
				}
			}
		}
		return
	}
	for p := 0; p < kc; p++ {
		row := b[(p0+p)*ldb : (p0+p)*ldb+n]
		for q := q0; q < q1; q++ {
			j0 := q * nr
			cols := min(nr, n-j0)
			off := (q-q0)*kc*nr + p*nr
			copy(bp[off:off+cols], row[j0:j0+cols])
		}
	}
}

// packA64 packs rows [i0, i0+rows) and columns [p0, p0+kc) of op(A) into
// ap as ap[p·mr+ii] = a(i0+ii, p0+p), zero for ii ≥ rows.
func packA64(mr int, transA bool, i0, rows, p0, kc int, a []float64, lda int, ap []float64) {
	ap = ap[:kc*mr]
	if rows < mr {
		clear(ap)
	}
	if transA {
		for p := 0; p < kc; p++ {
			copy(ap[p*mr:p*mr+rows], a[(p0+p)*lda+i0:(p0+p)*lda+i0+rows])
		}
		return
	}
	for ii := 0; ii < rows; ii++ {
		arow := a[(i0+ii)*lda+p0 : (i0+ii)*lda+p0+kc]
		for p, v := range arow {
			ap[p*mr+ii] = v
		}
	}
}

// dscratch recycles dgemmBlock's packed blocks (a product of the dense
// sweep's 64×64 planes allocated 4 KiB + 32 KiB per call, thousands of
// calls per bound).
var dscratch sync.Pool

// getDScratch returns a pooled slice of length n (contents unspecified).
func getDScratch(n int) *[]float64 {
	if p, _ := dscratch.Get().(*[]float64); p != nil && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float64, n)
	return &s
}

// dgemmBlock computes the elements of C in row strips [s0, s1) and
// column panels [q0, q1) with family f: per k block of depth dkc, per
// group of dnc columns, it packs the group's B panels (kc·dnc values, an
// L2-sized block reused by every strip) and then, per strip, the strip's
// A block (kc·mr values, L1-sized, reused by every panel of the group),
// and runs the micro-kernel on each strip × panel block: from +0 in the
// first k block, from C afterwards (parking the running sum in C and
// reloading it is exact).
func dgemmBlock(f dfamily, transA, transB bool, s0, s1, q0, q1, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	mr, nr, gp := f.mr, f.nr, dnc/f.nr
	// The packed blocks come from a pool (dscratch): packA64 and packB64
	// write every value the kernel reads (the padding as zeros), and the
	// edge block blk is cleared, so reuse changes no result.
	na := mr * min(dkc, k)
	// B's packed group: at most gp panels, fewer when the block has fewer
	// (a 64-column product packs 64·kc values, not dnc·kc).
	nb := min(gp, q1-q0) * nr * min(dkc, k)
	buf := getDScratch(na + nb + mr*nr)
	defer dscratch.Put(buf)
	ap, bp, blk := (*buf)[:na:na], (*buf)[na:na+nb:na+nb], (*buf)[na+nb:]
	clear(blk)
	for p0 := 0; p0 < k; p0 += dkc {
		kc := min(dkc, k-p0)
		acc := p0 > 0
		for jc := q0; jc < q1; jc += gp {
			jend := min(q1, jc+gp)
			packB64(nr, transB, jc, jend, p0, kc, n, b, ldb, bp)
			for s := s0; s < s1; s++ {
				i0 := s * mr
				rows := min(mr, m-i0)
				packA64(mr, transA, i0, rows, p0, kc, a, lda, ap)
				for pj := jc; pj < jend; pj++ {
					j0 := pj * nr
					cols := min(nr, n-j0)
					panel := bp[(pj-jc)*kc*nr : (pj-jc+1)*kc*nr]
					if rows == mr && cols == nr {
						f.kernel(kc, ap, panel, c[i0*ldc+j0:], ldc, acc)
						continue
					}
					if acc {
						for ii := 0; ii < rows; ii++ {
							copy(blk[ii*nr:ii*nr+cols], c[(i0+ii)*ldc+j0:(i0+ii)*ldc+j0+cols])
						}
					}
					f.kernel(kc, ap, panel, blk, nr, acc)
					for ii := 0; ii < rows; ii++ {
						copy(c[(i0+ii)*ldc+j0:(i0+ii)*ldc+j0+cols], blk[ii*nr:ii*nr+cols])
					}
				}
			}
		}
	}
}

// dkernelGo is the portable 4×4 family's kernel, in sixteen scalar
// accumulators; every product is converted to float64 explicitly, which
// the Go specification says forbids fusing it with the addition.
func dkernelGo(kc int, ap, bp, c []float64, ldc int, accumulate bool) {
	r0 := c[0:4:4]
	r1 := c[ldc : ldc+4 : ldc+4]
	r2 := c[2*ldc : 2*ldc+4 : 2*ldc+4]
	r3 := c[3*ldc : 3*ldc+4 : 3*ldc+4]
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 float64
	if accumulate {
		c00, c01, c02, c03 = r0[0], r0[1], r0[2], r0[3]
		c10, c11, c12, c13 = r1[0], r1[1], r1[2], r1[3]
		c20, c21, c22, c23 = r2[0], r2[1], r2[2], r2[3]
		c30, c31, c32, c33 = r3[0], r3[1], r3[2], r3[3]
	}
	ap, bp = ap[:kc*4], bp[:kc*4]
	for p := 0; p < kc; p++ {
		av := ap[p*4 : p*4+4 : p*4+4]
		bv := bp[p*4 : p*4+4 : p*4+4]
		a0, a1, a2, a3 := av[0], av[1], av[2], av[3]
		b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
		c00 = c00 + float64(a0*b0)
		c01 = c01 + float64(a0*b1)
		c02 = c02 + float64(a0*b2)
		c03 = c03 + float64(a0*b3)
		c10 = c10 + float64(a1*b0)
		c11 = c11 + float64(a1*b1)
		c12 = c12 + float64(a1*b2)
		c13 = c13 + float64(a1*b3)
		c20 = c20 + float64(a2*b0)
		c21 = c21 + float64(a2*b1)
		c22 = c22 + float64(a2*b2)
		c23 = c23 + float64(a2*b3)
		c30 = c30 + float64(a3*b0)
		c31 = c31 + float64(a3*b1)
		c32 = c32 + float64(a3*b2)
		c33 = c33 + float64(a3*b3)
	}
	r0[0], r0[1], r0[2], r0[3] = c00, c01, c02, c03
	r1[0], r1[1], r1[2], r1[3] = c10, c11, c12, c13
	r2[0], r2[1], r2[2], r2[3] = c20, c21, c22, c23
	r3[0], r3[1], r3[2], r3[3] = c30, c31, c32, c33
}
