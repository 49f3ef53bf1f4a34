//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------------
// dkernel12x16AVX512: Dgemm's AVX-512 micro-kernel, the layout of the
// float32 kernel12x32MulAdd with float64 lanes. A 12×16 block of C in 24
// ZMM accumulators (Z0…Z23, two per row, eight float64 each). Packed A
// strip: a[p·12+r]; packed B panel: b[p·16+j]. One step p: Z24:Z25 =
// b[p·16 : p·16+16]; for each row r, broadcast a[p·12+r] into a rotating
// temporary (Z28…Z31), round each product by VMULPD into Z26/Z27, then add
// it by VADDPD (no FMA): per element c ← fl(c + fl(a[p·12+r]·b[p·16+j])),
// p increasing, from +0 or from c (accumulate) — the portable fold.

#define ZROW(aoff, acc0, acc1, t) \
	VBROADCASTSD aoff(SI), t \
	VMULPD       Z24, t, Z26 \
	VADDPD       Z26, acc0, acc0 \
	VMULPD       Z25, t, Z27 \
	VADDPD       Z27, acc1, acc1

#define ZSTEP(aoff, boff) \
	VMOVUPD boff(DI), Z24 \
	VMOVUPD boff+64(DI), Z25 \
	ZROW(aoff, Z0, Z1, Z28) \
	ZROW(aoff+8, Z2, Z3, Z29) \
	ZROW(aoff+16, Z4, Z5, Z30) \
	ZROW(aoff+24, Z6, Z7, Z31) \
	ZROW(aoff+32, Z8, Z9, Z28) \
	ZROW(aoff+40, Z10, Z11, Z29) \
	ZROW(aoff+48, Z12, Z13, Z30) \
	ZROW(aoff+56, Z14, Z15, Z31) \
	ZROW(aoff+64, Z16, Z17, Z28) \
	ZROW(aoff+72, Z18, Z19, Z29) \
	ZROW(aoff+80, Z20, Z21, Z30) \
	ZROW(aoff+88, Z22, Z23, Z31)

#define ZLOAD2(acc0, acc1) \
	VMOVUPD (R9), acc0 \
	VMOVUPD 64(R9), acc1 \
	ADDQ    R8, R9

#define ZSTORE2(acc0, acc1) \
	VMOVUPD acc0, (DX) \
	VMOVUPD acc1, 64(DX) \
	ADDQ    R8, DX

// func dkernel12x16AVX512(kc int, a, b, c *float64, ldc int, accumulate bool)
TEXT ·dkernel12x16AVX512(SB), NOSPLIT, $0-41
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
	ZLOAD2(Z0, Z1)
	ZLOAD2(Z2, Z3)
	ZLOAD2(Z4, Z5)
	ZLOAD2(Z6, Z7)
	ZLOAD2(Z8, Z9)
	ZLOAD2(Z10, Z11)
	ZLOAD2(Z12, Z13)
	ZLOAD2(Z14, Z15)
	ZLOAD2(Z16, Z17)
	ZLOAD2(Z18, Z19)
	ZLOAD2(Z20, Z21)
	ZLOAD2(Z22, Z23)
	JMP  loop4check

zero:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	VPXORQ Z13, Z13, Z13
	VPXORQ Z14, Z14, Z14
	VPXORQ Z15, Z15, Z15
	VPXORQ Z16, Z16, Z16
	VPXORQ Z17, Z17, Z17
	VPXORQ Z18, Z18, Z18
	VPXORQ Z19, Z19, Z19
	VPXORQ Z20, Z20, Z20
	VPXORQ Z21, Z21, Z21
	VPXORQ Z22, Z22, Z22
	VPXORQ Z23, Z23, Z23

loop4check:
	CMPQ CX, $4
	JLT  tailcheck

loop4:
	PREFETCHT0 1024(DI)
	ZSTEP(0, 0)
	ZSTEP(96, 128)
	PREFETCHT0 1152(DI)
	ZSTEP(192, 256)
	ZSTEP(288, 384)
	ADDQ $384, SI
	ADDQ $512, DI
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  loop4

tailcheck:
	TESTQ CX, CX
	JZ    store

tail:
	ZSTEP(0, 0)
	ADDQ $96, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  tail

store:
	ZSTORE2(Z0, Z1)
	ZSTORE2(Z2, Z3)
	ZSTORE2(Z4, Z5)
	ZSTORE2(Z6, Z7)
	ZSTORE2(Z8, Z9)
	ZSTORE2(Z10, Z11)
	ZSTORE2(Z12, Z13)
	ZSTORE2(Z14, Z15)
	ZSTORE2(Z16, Z17)
	ZSTORE2(Z18, Z19)
	ZSTORE2(Z20, Z21)
	ZSTORE2(Z22, Z23)
	VZEROUPPER
	RET
