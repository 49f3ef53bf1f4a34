//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------------
// kernel12x32FMA: the fast provider's implementation-defined micro-kernel.
//
// A 12×32 block of C in 24 ZMM accumulators (Z0…Z23, two per row). Packed A
// strip: a[p·12+r]; packed B strip: b[p·32+j]. One step p: Z24:Z25 =
// b[p·32 : p·32+32]; for each row r, broadcast a[p·12+r] and
// acc(r,h) = fma(a, b_h, acc(r,h)) (VFMADD231PS: one rounding of the exact
// a·b + acc). p increasing, so each element is the fused left fold
//
//	c = fma(a[p]·b[p] + c), p = 0 … kc−1, from +0 or from c (accumulate).

#define FROW(aoff, acc0, acc1, t) \
	VBROADCASTSS aoff(SI), t \
	VFMADD231PS  Z24, t, acc0 \
	VFMADD231PS  Z25, t, acc1

#define FSTEP(aoff, boff) \
	VMOVUPS boff(DI), Z24 \
	VMOVUPS boff+64(DI), Z25 \
	FROW(aoff, Z0, Z1, Z26) \
	FROW(aoff+4, Z2, Z3, Z27) \
	FROW(aoff+8, Z4, Z5, Z28) \
	FROW(aoff+12, Z6, Z7, Z29) \
	FROW(aoff+16, Z8, Z9, Z30) \
	FROW(aoff+20, Z10, Z11, Z31) \
	FROW(aoff+24, Z12, Z13, Z26) \
	FROW(aoff+28, Z14, Z15, Z27) \
	FROW(aoff+32, Z16, Z17, Z28) \
	FROW(aoff+36, Z18, Z19, Z29) \
	FROW(aoff+40, Z20, Z21, Z30) \
	FROW(aoff+44, Z22, Z23, Z31)

#define FLOAD(acc0, acc1) \
	VMOVUPS (R9), acc0 \
	VMOVUPS 64(R9), acc1 \
	ADDQ    R8, R9

#define FSTORE(acc0, acc1) \
	VMOVUPS acc0, (DX) \
	VMOVUPS acc1, 64(DX) \
	ADDQ    R8, DX

#define FPREF \
	PREFETCHT0 (R9) \
	PREFETCHT0 64(R9) \
	ADDQ       R8, R9

// KENTRY loads the arguments of a 12×32 kernel (kc in CX, a in SI, b in
// DI, c in DX, ldc in bytes in R8), prefetches the 12 rows of the next
// block of C, which the next call reads (k blocks after the first) and
// writes, and tests accumulate (ZF set when false).
#define KENTRY \
	MOVQ    kc+0(FP), CX \
	MOVQ    a+8(FP), SI \
	MOVQ    b+16(FP), DI \
	MOVQ    c+24(FP), DX \
	MOVQ    ldc+32(FP), R8 \
	SHLQ    $2, R8 \
	MOVQ    next+40(FP), R9 \
	FPREF \
	FPREF \
	FPREF \
	FPREF \
	FPREF \
	FPREF \
	FPREF \
	FPREF \
	FPREF \
	FPREF \
	FPREF \
	FPREF \
	MOVBQZX accumulate+48(FP), AX \
	TESTQ   AX, AX

// KLOAD loads the 24 accumulators from the 12 rows of C.
#define KLOAD \
	MOVQ DX, R9 \
	FLOAD(Z0, Z1) \
	FLOAD(Z2, Z3) \
	FLOAD(Z4, Z5) \
	FLOAD(Z6, Z7) \
	FLOAD(Z8, Z9) \
	FLOAD(Z10, Z11) \
	FLOAD(Z12, Z13) \
	FLOAD(Z14, Z15) \
	FLOAD(Z16, Z17) \
	FLOAD(Z18, Z19) \
	FLOAD(Z20, Z21) \
	FLOAD(Z22, Z23)

// KZERO zeroes the 24 accumulators.
#define KZERO \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23

// KSTORE stores the 24 accumulators to the 12 rows of C.
#define KSTORE \
	FSTORE(Z0, Z1) \
	FSTORE(Z2, Z3) \
	FSTORE(Z4, Z5) \
	FSTORE(Z6, Z7) \
	FSTORE(Z8, Z9) \
	FSTORE(Z10, Z11) \
	FSTORE(Z12, Z13) \
	FSTORE(Z14, Z15) \
	FSTORE(Z16, Z17) \
	FSTORE(Z18, Z19) \
	FSTORE(Z20, Z21) \
	FSTORE(Z22, Z23)

// KLOOP runs the kernel's steps, STEP (FSTEP or MSTEP) for each p, four
// at a time and then one at a time, and stores the accumulators. It
// defines the labels loopcheck (its entry), loop, tailcheck, tail and
// store of the kernel it ends.
#define KLOOP(STEP) \
loopcheck: \
	CMPQ CX, $4 \
	JLT  tailcheck \
loop: \
	PREFETCHT0 1024(DI) \
	STEP(0, 0) \
	STEP(48, 128) \
	PREFETCHT0 1152(DI) \
	STEP(96, 256) \
	STEP(144, 384) \
	ADDQ $192, SI \
	ADDQ $512, DI \
	SUBQ $4, CX \
	CMPQ CX, $4 \
	JGE  loop \
tailcheck: \
	TESTQ CX, CX \
	JZ    store \
tail: \
	STEP(0, 0) \
	ADDQ $48, SI \
	ADDQ $128, DI \
	DECQ CX \
	JNZ  tail \
store: \
	KSTORE \
	VZEROUPPER \
	RET

// func kernel12x32FMA(kc int, a, b, c *float32, ldc int, next *float32, accumulate bool)
TEXT ·kernel12x32FMA(SB), NOSPLIT, $0-49
	KENTRY
	JZ      fzero

	KLOAD
	JMP  loopcheck

fzero:
	KZERO
	KLOOP(FSTEP)

// ---------------------------------------------------------------------------
// kernel12x32MulAdd: the fixed-left micro-kernel in the 12×32 layout of
// kernel12x32FMA, for the bit-identical Sgemm. Same registers, but every
// product is rounded by VMULPS into a temporary (Z26/Z27) and then added by
// VADDPS (no FMA): per element, c ← fl(c + fl(a[p·12+r]·b[p·32+j])),
// p increasing, which is kernelGeneric's fold.

#define MROW(aoff, acc0, acc1, t) \
	VBROADCASTSS aoff(SI), t \
	VMULPS       Z24, t, Z26 \
	VADDPS       Z26, acc0, acc0 \
	VMULPS       Z25, t, Z27 \
	VADDPS       Z27, acc1, acc1

#define MSTEP(aoff, boff) \
	VMOVUPS boff(DI), Z24 \
	VMOVUPS boff+64(DI), Z25 \
	MROW(aoff, Z0, Z1, Z28) \
	MROW(aoff+4, Z2, Z3, Z29) \
	MROW(aoff+8, Z4, Z5, Z30) \
	MROW(aoff+12, Z6, Z7, Z31) \
	MROW(aoff+16, Z8, Z9, Z28) \
	MROW(aoff+20, Z10, Z11, Z29) \
	MROW(aoff+24, Z12, Z13, Z30) \
	MROW(aoff+28, Z14, Z15, Z31) \
	MROW(aoff+32, Z16, Z17, Z28) \
	MROW(aoff+36, Z18, Z19, Z29) \
	MROW(aoff+40, Z20, Z21, Z30) \
	MROW(aoff+44, Z22, Z23, Z31)

// func kernel12x32MulAdd(kc int, a, b, c *float32, ldc int, next *float32, accumulate bool)
TEXT ·kernel12x32MulAdd(SB), NOSPLIT, $0-49
	KENTRY
	JZ      mzero

	KLOAD
	JMP  loopcheck

mzero:
	KZERO
	KLOOP(MSTEP)
