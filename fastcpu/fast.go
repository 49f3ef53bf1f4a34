package fastcpu

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Blocking of the implementation-defined (fast) product, GotoBLAS style:
// for each column panel of C (at most fncMax columns), for each k block of
// depth fkc, the panel's B block (fkc × panel width) is packed into fnr-
// column strips; then for each block of fmc rows, A's fmc×fkc block is
// packed into fmr-row strips and the fmr×fnr micro-kernel sweeps it, B
// strip by B strip (a B strip, fkc·fnr·4 = 32 KiB, stays in L1; the A
// block, 144 KiB, in L2). Only these two panels are ever packed, never a
// whole matrix.
const (
	fmr    = 12   // FMA micro-kernel rows
	fnr    = 32   // FMA micro-kernel columns (two ZMM vectors)
	fkc    = 256  // depth of a packed block
	fmc    = 144  // rows of a packed A block (multiple of fmr)
	fncMax = 1024 // widest column panel (multiple of fnr)
)

// SgemmFast computes C = A·B like Sgemm (same arguments, same
// preconditions, same panics), but in an implementation-defined order:
// it is the fast provider's product, not the fixed-left one.
//
// What it computes today: on amd64 with AVX-512F (and without the purego
// tag), each element is the fused left fold
//
//	c[i][j] = fl(a[i][k−1]·b[k−1][j] + fl(… fl(a[i][1]·b[1][j] + fl(a[i][0]·b[0][j] + 0)) …))
//
// where fl(x·y + z) is one rounding to float32 of the exact x·y + z
// (VFMADD231PS); the running sum is parked in C between k blocks, which
// is exact. Elsewhere it is Sgemm's separate-rounding left fold. Either
// way each output passes through at most k roundings of a sum of at most
// k exact products, and the order-independent bound
//
//	|ĉ − c| ≤ γ_k·Σ_p|a[i][p]·b[p][j]| + k·2⁻¹⁴⁹,  γ_k = k·u/(1−k·u), u = 2⁻²⁴,
//
// holds for both (refine's RuleBound, whose model covers a fused
// multiply-add: see refine's package doc). Callers must rely on nothing
// more: neither the order nor the use of FMA is part of the contract, and
// the bits differ from Sgemm's. For a given machine and build the result
// does not depend on GOMAXPROCS or scheduling: which goroutine computes a
// block never changes what the block computes.
//
// Scratch: each goroutine working on a call holds fkc·(panel width) +
// fmc·fkc float32s, at most 256·1024 + 144·256 = 299 008 float32s
// (1.14 MiB), from a sync.Pool; two goroutines hold 2.28 MiB whatever the
// size of the product (Sgemm packs all of A and B: 33.6 MB at 2048³).
func SgemmFast(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if err := checkGemm(false, m, n, k, a, lda, b, ldb, c, ldc, false); err != nil {
		panic(err)
	}
	fastGemm(false, m, n, k, a, lda, b, ldb, c, ldc)
}

// SgemmFastNT is SgemmFast for C = A·Bᵀ with B stored n×k (SgemmNT's
// layout); same order, bound and scratch as SgemmFast.
func SgemmFastNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if err := checkGemm(true, m, n, k, a, lda, b, ldb, c, ldc, false); err != nil {
		panic(err)
	}
	fastGemm(true, m, n, k, a, lda, b, ldb, c, ldc)
}

// SgemmFastChecked is SgemmFast with every precondition checked (overlap
// included): it returns an error, leaving C untouched, when one fails.
func SgemmFastChecked(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	if err := checkGemm(false, m, n, k, a, lda, b, ldb, c, ldc, true); err != nil {
		return err
	}
	fastGemm(false, m, n, k, a, lda, b, ldb, c, ldc)
	return nil
}

// LinearFast is Linear (same arguments, preconditions and panics) on
// SgemmFastNT: y[r][o] is the implementation-defined fold of SgemmFast over
// i of x[r][i]·w[o][i], then + b[o] with one more rounding; at most in+1
// roundings per output, so |ŷ − y| ≤ γ_{in+1}·(Σ_i|x[r][i]·w[o][i]| +
// |b[o]|) + in·2⁻¹⁴⁹.
func LinearFast(x []float32, rows, in int, w []float32, out int, b []float32, y []float32) {
	if err := checkLinear(x, rows, in, w, out, b, y, false); err != nil {
		panic(err)
	}
	linearFast(x, rows, in, w, out, b, y)
}

// LinearFastChecked is LinearFast with every precondition checked,
// overlap included: it returns an error wrapping ErrInvalidArgument, and
// leaves y untouched, when one fails.
func LinearFastChecked(x []float32, rows, in int, w []float32, out int, b []float32, y []float32) error {
	if err := checkLinear(x, rows, in, w, out, b, y, true); err != nil {
		return err
	}
	linearFast(x, rows, in, w, out, b, y)
	return nil
}

func linearFast(x []float32, rows, in int, w []float32, out int, b []float32, y []float32) {
	ld := max(in, 1)
	fastGemm(true, rows, out, in, x, ld, w, ld, y, max(out, 1))
	if b == nil {
		return
	}
	b = b[:out]
	for r := 0; r < rows; r++ {
		yr := y[r*out : r*out+out]
		for o, v := range b {
			yr[o] += v
		}
	}
}

// fastGemm dispatches a validated implementation-defined product: the
// FMA path when the AVX-512 kernels are selected and the product is not
// tiny, Sgemm's path otherwise.
func fastGemm(transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	flops := 2 * float64(m) * float64(n) * float64(k)
	if !useAVX512 || flops <= naiveFlops {
		gemm(transB, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	panelGemm(true, transB, m, n, k, a, lda, b, ldb, c, ldc)
}

// panelGemm runs a validated product above naiveFlops on the AVX-512
// panel driver: with the fused kernel (SgemmFast's fold) or with the
// separate-rounding one (Sgemm's fixed-left fold, bit for bit).
func panelGemm(fused, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	flops := 2 * float64(m) * float64(n) * float64(k)
	workers := 1
	if flops > parallelFlops {
		workers = runtime.GOMAXPROCS(0)
	}
	j := fmaJobPool.Get().(*fmaJob)
	j.setup(transB, m, n, k, a, lda, b, ldb, c, ldc, workers)
	j.fused = fused
	workers = min(workers, j.units)
	if workers > 1 {
		dispatch(&j.offer, workers-1)
	}
	j.work()
	if workers > 1 {
		finish(&j.offer)
	}
	j.a, j.b, j.c = nil, nil, nil // do not pin the caller's slices
	fmaJobPool.Put(j)
}

// fmaJob is one SgemmFast call. C is cut into units of rowH rows × colW
// columns, claimed through an atomic counter; each unit is computed start
// to finish by the goroutine that claims it, in its own scratch.
type fmaJob struct {
	fused, transB bool
	m, n, k       int
	a, b, c       []float32
	lda, ldb, ldc int
	rowH, colW    int
	unitsN, units int
	next          atomic.Int64
	offer         offer
}

var fmaJobPool = sync.Pool{New: func() any {
	j := new(fmaJob)
	j.offer.task = j
	return j
}}

// fmaScratch is one goroutine's packing space: a B panel, an A block and
// an edge block for partial micro-tiles.
type fmaScratch struct {
	bp   []float32
	ap   [fmc * fkc]float32
	edge [fmr * fnr]float32
}

var fmaScratchPool = sync.Pool{New: func() any { return new(fmaScratch) }}

func ceilDiv(x, y int) int { return (x + y - 1) / y }

func (j *fmaJob) setup(transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, workers int) {
	j.transB, j.m, j.n, j.k = transB, m, n, k
	j.a, j.lda, j.b, j.ldb, j.c, j.ldc = a, lda, b, ldb, c, ldc
	// Column panels first (each packs B once per k block); if there are
	// fewer than workers, cut the rows too (each row range then packs the
	// same B panel again, a cost of 1/(rows in the range) per flop).
	unitsN := ceilDiv(n, fncMax)
	if unitsN < workers {
		unitsN = min(workers, ceilDiv(n, fnr))
	}
	j.colW = ceilDiv(ceilDiv(n, unitsN), fnr) * fnr
	j.unitsN = ceilDiv(n, j.colW)
	unitsM := 1
	if j.unitsN < workers {
		unitsM = min(ceilDiv(workers, j.unitsN), ceilDiv(m, fmr))
	}
	j.rowH = ceilDiv(ceilDiv(m, unitsM), fmr) * fmr
	j.units = ceilDiv(m, j.rowH) * j.unitsN
	j.next.Store(0)
}

func (j *fmaJob) runHelper() {
	j.work()
	j.offer.done()
}

func (j *fmaJob) work() {
	s := fmaScratchPool.Get().(*fmaScratch)
	if need := fkc * j.colW; cap(s.bp) < need {
		s.bp = make([]float32, need)
	}
	for {
		u := int(j.next.Add(1) - 1)
		if u >= j.units {
			break
		}
		i0 := (u / j.unitsN) * j.rowH
		j0 := (u % j.unitsN) * j.colW
		j.unit(s, i0, min(j.rowH, j.m-i0), j0, min(j.colW, j.n-j0))
	}
	fmaScratchPool.Put(s)
}

// unit computes the mu×nu block of C at (i0, j0): GotoBLAS's loops over
// k blocks (pack B), row blocks (pack A), B strips and A strips. The
// first k block starts every accumulator at +0, later ones reload the
// running sums from C, which continues the same fused left fold.
func (j *fmaJob) unit(s *fmaScratch, i0, mu, j0, nu int) {
	kernel := kernel12x32MulAdd
	if j.fused {
		kernel = kernel12x32FMA
	}
	npad := ceilDiv(nu, fnr) * fnr
	for pc := 0; pc < j.k; pc += fkc {
		kc := min(fkc, j.k-pc)
		accumulate := pc > 0
		bp := s.bp[:npad*kc]
		if j.transB {
			packBT(bp, j.b, j.ldb, pc, kc, j0, nu, fnr)
		} else {
			packB(bp, j.b, j.ldb, pc, kc, j0, nu, fnr)
		}
		for ic := i0; ic < i0+mu; ic += fmc {
			mc := min(fmc, i0+mu-ic)
			ap := s.ap[:ceilDiv(mc, fmr)*fmr*kc]
			packFA(ap, j.a, j.lda, ic, mc, pc, kc)
			for jr := 0; jr < nu; jr += fnr {
				nrr := min(fnr, nu-jr)
				bs := bp[jr*kc : (jr+fnr)*kc]
				for ir := 0; ir < mc; ir += fmr {
					mrr := min(fmr, mc-ir)
					as := ap[ir*kc : (ir+fmr)*kc]
					off := (ic+ir)*j.ldc + j0 + jr
					// The next block of C: down one strip, or the top
					// of the next column strip.
					next := off + fmr*j.ldc
					if ir+fmr >= mc {
						next = ic*j.ldc + j0 + min(jr+fnr, nu-1)
					}
					np := &j.c[min(next, len(j.c)-1)]
					if mrr == fmr && nrr == fnr {
						cs := j.c[off : off+(fmr-1)*j.ldc+fnr]
						kernel(kc, &as[0], &bs[0], &cs[0], j.ldc, np, accumulate)
						continue
					}
					e := s.edge[:]
					if accumulate {
						for r := 0; r < mrr; r++ {
							copy(e[r*fnr:r*fnr+nrr], j.c[off+r*j.ldc:off+r*j.ldc+nrr])
						}
					}
					kernel(kc, &as[0], &bs[0], &e[0], fnr, np, accumulate)
					for r := 0; r < mrr; r++ {
						copy(j.c[off+r*j.ldc:off+r*j.ldc+nrr], e[r*fnr:r*fnr+nrr])
					}
				}
			}
		}
	}
}

// packFA copies rows [ic, ic+mc) × columns [pc, pc+kc) of A into dst as
// fmr-row strips, element (p, r) of a strip at p·fmr + r; rows past mc,
// up to the next multiple of fmr, are zero.
func packFA(dst, a []float32, lda, ic, mc, pc, kc int) {
	for ir := 0; ir < mc; ir += fmr {
		sd := dst[ir*kc : ir*kc+fmr*kc]
		rows := min(fmr, mc-ir)
		if rows == fmr {
			var rs [fmr][]float32
			for r := range rs {
				base := (ic+ir+r)*lda + pc
				rs[r] = a[base : base+kc : base+kc]
			}
			for p := range kc {
				d := (*[fmr]float32)(sd[p*fmr : p*fmr+fmr])
				d[0], d[1], d[2], d[3] = rs[0][p], rs[1][p], rs[2][p], rs[3][p]
				d[4], d[5], d[6], d[7] = rs[4][p], rs[5][p], rs[6][p], rs[7][p]
				d[8], d[9], d[10], d[11] = rs[8][p], rs[9][p], rs[10][p], rs[11][p]
			}
			continue
		}
		packAEdge(sd, a, lda, ic+ir, rows, pc, kc, fmr)
	}
}
