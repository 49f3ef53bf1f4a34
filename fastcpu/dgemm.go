package fastcpu

import (
	"fmt"
	"runtime"
	"sync"
)

// Blocking of the float64 product. A call packs op(B) once into
// dnr-column micro-panels, k block by k block (depth dkc), then computes
// C in dmr-row strips: per k block, per group of dnc columns, per strip,
// per micro-panel, a dmr×dnr register block. None of these sizes changes
// a result (see Dgemm).
const (
	dmr = 4   // micro-kernel rows
	dnr = 4   // micro-kernel columns
	dkc = 256 // depth of a k block: an A strip and a B panel are 8 KiB each (L1)
	dnc = 128 // columns per group: 32 B panels of one k block, 256 KiB (L2)

	// dParallelFlops is the work (2·m·n·k) below which Dgemm runs on the
	// calling goroutine only.
	dParallelFlops = 1 << 21
	// dNaiveRows is the row count below which Dgemm skips packing and
	// runs the plain loops (same order, same bits).
	dNaiveRows = dmr
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
// Implementation: portable Go, no assembly (a float64 AVX2 or AVX-512
// kernel is future work). op(B) is packed whole into 4-column panels,
// zero-padded, k block by k block; each goroutine packs its own 4-row
// strips of op(A) and runs a 4×4 register-blocked micro-kernel, in
// sixteen scalar accumulators. Row strips are divided among at most
// runtime.GOMAXPROCS(0) goroutines in contiguous ranges (products under
// 2²¹ flops run on the caller's goroutine); a row is always computed by
// exactly one goroutine, with the fold above, so the division never
// changes a bit. Products with fewer than 4 rows (a matrix-vector
// product, a linear layer on one row) run plain loops in the same order.
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
	bp := packB64(transB, n, k, b, ldb)
	strips := (m + dmr - 1) / dmr
	workers := 1
	if 2*float64(m)*float64(n)*float64(k) >= dParallelFlops {
		workers = min(runtime.GOMAXPROCS(0), strips)
	}
	if workers <= 1 {
		dgemmStrips(transA, 0, strips, m, n, k, a, lda, bp, c, ldc)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		s0, s1 := strips*w/workers, strips*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			dgemmStrips(transA, s0, s1, m, n, k, a, lda, bp, c, ldc)
		}()
	}
	wg.Wait()
}

// dgemmNaive is the plain loop for few rows: per row, per j, the left
// fold over p (contiguous when B is transposed), or, for B not
// transposed, the same folds interleaved over j (c[j] += a(i,p)·b(p,j)
// for p ascending), which adds the same terms to each element in the
// same order.
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
			for j := range crow {
				brow := b[j*ldb : j*ldb+k]
				var acc float64
				if !transA {
					arow := a[i*lda : i*lda+k]
					for p, bv := range brow {
						acc = acc + float64(arow[p]*bv)
					}
				} else {
					for p, bv := range brow {
						acc = acc + float64(a[p*lda+i]*bv)
					}
				}
				crow[j] = acc
			}
			continue
		}
		clear(crow)
		for p := 0; p < k; p++ {
			av := at(i, p)
			brow := b[p*ldb : p*ldb+n]
			for j, bv := range brow {
				crow[j] = crow[j] + float64(av*bv)
			}
		}
	}
}

// packB64 packs op(B) (k×n) into k blocks of depth dkc; within a block,
// ⌈n/4⌉ panels of kc rows × 4 columns, zero-padded on the right.
func packB64(transB bool, n, k int, b []float64, ldb int) []float64 {
	panels := (n + dnr - 1) / dnr
	bp := make([]float64, panels*dnr*k)
	off := 0
	for p0 := 0; p0 < k; p0 += dkc {
		kc := min(dkc, k-p0)
		for pj := 0; pj < panels; pj++ {
			j0 := pj * dnr
			for p := p0; p < p0+kc; p++ {
				dst := bp[off : off+dnr]
				for jj := 0; jj < dnr; jj++ {
					j := j0 + jj
					switch {
					case j >= n:
						dst[jj] = 0
					case transB:
						dst[jj] = b[j*ldb+p]
					default:
						dst[jj] = b[p*ldb+j]
					}
				}
				off += dnr
			}
		}
	}
	return bp
}

// dgemmStrips computes the rows of strips [s0, s1) of C.
func dgemmStrips(transA bool, s0, s1, m, n, k int, a []float64, lda int, bp []float64, c []float64, ldc int) {
	panels := (n + dnr - 1) / dnr
	ap := make([]float64, dmr*min(dkc, k))
	var blk [dmr * dnr]float64
	boff := 0
	for p0 := 0; p0 < k; p0 += dkc {
		kc := min(dkc, k-p0)
		first := p0 == 0
		for jc := 0; jc < panels; jc += dnc / dnr {
			jend := min(panels, jc+dnc/dnr)
			for s := s0; s < s1; s++ {
				i0 := s * dmr
				rows := min(dmr, m-i0)
				// Pack the strip's kc columns: ap[p·4+ii] = a(i0+ii, p0+p).
				for p := 0; p < kc; p++ {
					for ii := 0; ii < dmr; ii++ {
						v := 0.0
						if ii < rows {
							if transA {
								v = a[(p0+p)*lda+i0+ii]
							} else {
								v = a[(i0+ii)*lda+p0+p]
							}
						}
						ap[p*dmr+ii] = v
					}
				}
				for pj := jc; pj < jend; pj++ {
					j0 := pj * dnr
					cols := min(dnr, n-j0)
					if first {
						blk = [dmr * dnr]float64{}
					} else {
						for ii := 0; ii < rows; ii++ {
							copy(blk[ii*dnr:ii*dnr+cols], c[(i0+ii)*ldc+j0:(i0+ii)*ldc+j0+cols])
						}
					}
					kernel4x4(kc, ap[:kc*dmr], bp[boff+pj*kc*dnr:boff+(pj+1)*kc*dnr], &blk)
					for ii := 0; ii < rows; ii++ {
						copy(c[(i0+ii)*ldc+j0:(i0+ii)*ldc+j0+cols], blk[ii*dnr:ii*dnr+cols])
					}
				}
			}
		}
		boff += panels * kc * dnr
	}
}

// kernel4x4 adds the kc products of a packed 4-row strip and a packed
// 4-column panel into the 4×4 block acc, for each element in p order:
// acc[i][j] = (…(acc[i][j] + a(i,0)·b(0,j)) + …) + a(i,kc−1)·b(kc−1,j).
func kernel4x4(kc int, ap, bp []float64, acc *[dmr * dnr]float64) {
	c00, c01, c02, c03 := acc[0], acc[1], acc[2], acc[3]
	c10, c11, c12, c13 := acc[4], acc[5], acc[6], acc[7]
	c20, c21, c22, c23 := acc[8], acc[9], acc[10], acc[11]
	c30, c31, c32, c33 := acc[12], acc[13], acc[14], acc[15]
	ap, bp = ap[:kc*dmr], bp[:kc*dnr]
	for p := 0; p < kc; p++ {
		av := ap[p*dmr : p*dmr+dmr : p*dmr+dmr]
		bv := bp[p*dnr : p*dnr+dnr : p*dnr+dnr]
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
	*acc = [dmr * dnr]float64{c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33}
}
