//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------------
// dkernel6x8AVX2: Dgemm's AVX2 micro-kernel. A 6×8 block of C in twelve
// YMM accumulators (Y0…Y11, two per row, four float64 each). Packed A
// strip: a[p·6+r]; packed B panel: b[p·8+j]. One step p: Y12:Y13 =
// b[p·8 : p·8+8]; for each row r, Y14 = broadcast a[p·6+r], then
// acc(r,h) = fl(acc(r,h) + fl(Y14·b_h)): the product rounded by VMULPD into
// Y15, the sum by VADDPD (no FMA). p increasing, so each element is the
// left fold c ← fl(c + fl(a·b)), p = 0 … kc−1, from +0 or from c
// (accumulate): the portable kernel's fold, element by element.

#define DROW(aoff, acc0, acc1) \
	VBROADCASTSD aoff(SI), Y14 \
	VMULPD       Y12, Y14, Y15 \
	VADDPD       Y15, acc0, acc0 \
	VMULPD       Y13, Y14, Y15 \
	VADDPD       Y15, acc1, acc1

#define DSTEP(aoff, boff) \
	VMOVUPD boff(DI), Y12 \
	VMOVUPD boff+32(DI), Y13 \
	DROW(aoff, Y0, Y1) \
	DROW(aoff+8, Y2, Y3) \
	DROW(aoff+16, Y4, Y5) \
	DROW(aoff+24, Y6, Y7) \
	DROW(aoff+32, Y8, Y9) \
	DROW(aoff+40, Y10, Y11)

#define DLOAD2(acc0, acc1) \
	VMOVUPD (R9), acc0 \
	VMOVUPD 32(R9), acc1 \
	ADDQ    R8, R9

#define DSTORE2(acc0, acc1) \
	VMOVUPD acc0, (DX) \
	VMOVUPD acc1, 32(DX) \
	ADDQ    R8, DX

// func dkernel6x8AVX2(kc int, a, b, c *float64, ldc int, accumulate bool)
TEXT ·dkernel6x8AVX2(SB), NOSPLIT, $0-41
	MOVQ    kc+0(FP), CX
	MOVQ    a+8(FP), SI
	MOVQ    b+16(FP), DI
	MOVQ    c+24(FP), DX
	MOVQ    ldc+32(FP), R8
	SHLQ    $3, R8
	MOVBQZX accumulate+40(FP), AX
	TESTQ   AX, AX
	JZ      zero

	MOVQ DX, R9
	DLOAD2(Y0, Y1)
	DLOAD2(Y2, Y3)
	DLOAD2(Y4, Y5)
	DLOAD2(Y6, Y7)
	DLOAD2(Y8, Y9)
	DLOAD2(Y10, Y11)
	JMP  loop4check

zero:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11

loop4check:
	CMPQ CX, $4
	JLT  tailcheck

loop4:
	DSTEP(0, 0)
	DSTEP(48, 64)
	DSTEP(96, 128)
	DSTEP(144, 192)
	ADDQ $192, SI
	ADDQ $256, DI
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  loop4

tailcheck:
	TESTQ CX, CX
	JZ    store

tail:
	DSTEP(0, 0)
	ADDQ $48, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  tail

store:
	DSTORE2(Y0, Y1)
	DSTORE2(Y2, Y3)
	DSTORE2(Y4, Y5)
	DSTORE2(Y6, Y7)
	DSTORE2(Y8, Y9)
	DSTORE2(Y10, Y11)
	VZEROUPPER
	RET

// ---------------------------------------------------------------------------
// daxpyAVX2: y[j] = fl(y[j] + fl(s·x[j])), j = 0 … n−1, four at a time with
// VMULPD then VADDPD (no FMA), the rest one at a time with VMULSD then
// VADDSD:
// the same two roundings per element as the Go loop it replaces.

// func daxpyAVX2(n int, s float64, x, y *float64)
TEXT ·daxpyAVX2(SB), NOSPLIT, $0-32
	MOVQ         n+0(FP), CX
	VBROADCASTSD s+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         y+24(FP), DI

axloop8check:
	CMPQ CX, $8
	JLT  axloop4check

axloop8:
	VMOVUPD (SI), Y1
	VMOVUPD 32(SI), Y2
	VMULPD  Y1, Y0, Y1
	VMULPD  Y2, Y0, Y2
	VADDPD  (DI), Y1, Y1
	VADDPD  32(DI), Y2, Y2
	VMOVUPD Y1, (DI)
	VMOVUPD Y2, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $8, CX
	CMPQ    CX, $8
	JGE     axloop8

axloop4check:
	CMPQ CX, $4
	JLT  axtailcheck
	VMOVUPD (SI), Y1
	VMULPD  Y1, Y0, Y1
	VADDPD  (DI), Y1, Y1
	VMOVUPD Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $4, CX

axtailcheck:
	TESTQ CX, CX
	JZ    axdone

axtail:
	VMOVSD (SI), X1
	VMULSD X0, X1, X1
	VADDSD (DI), X1, X1
	VMOVSD X1, (DI)
	ADDQ   $8, SI
	ADDQ   $8, DI
	DECQ   CX
	JNZ    axtail

axdone:
	VZEROUPPER
	RET
