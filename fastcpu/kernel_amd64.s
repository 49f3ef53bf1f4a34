//go:build amd64 && !purego

#include "textflag.h"

// One step p of the fold: Y12:Y13 = b[p·16 : p·16+16]; for each row r,
// Y14 = broadcast a[p·6+r], then acc(r,0) += Y14·Y12 and acc(r,1) += Y14·Y13,
// the product rounded by VMULPS and the sum by VADDPS (no FMA).
#define ROW(aoff, acc0, acc1) \
	VBROADCASTSS aoff(SI), Y14 \
	VMULPS       Y12, Y14, Y15 \
	VADDPS       Y15, acc0, acc0 \
	VMULPS       Y13, Y14, Y15 \
	VADDPS       Y15, acc1, acc1

#define STEP(aoff, boff) \
	VMOVUPS boff(DI), Y12 \
	VMOVUPS boff+32(DI), Y13 \
	ROW(aoff, Y0, Y1) \
	ROW(aoff+4, Y2, Y3) \
	ROW(aoff+8, Y4, Y5) \
	ROW(aoff+12, Y6, Y7) \
	ROW(aoff+16, Y8, Y9) \
	ROW(aoff+20, Y10, Y11)

// func kernel6x16AVX2(kc int, a, b, c *float32, ldc int, accumulate bool)
TEXT ·kernel6x16AVX2(SB), NOSPLIT, $0-41
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	MOVBQZX accumulate+40(FP), AX
	TESTQ AX, AX
	JZ    zero

	MOVQ    DX, R9
	VMOVUPS (R9), Y0
	VMOVUPS 32(R9), Y1
	ADDQ    R8, R9
	VMOVUPS (R9), Y2
	VMOVUPS 32(R9), Y3
	ADDQ    R8, R9
	VMOVUPS (R9), Y4
	VMOVUPS 32(R9), Y5
	ADDQ    R8, R9
	VMOVUPS (R9), Y6
	VMOVUPS 32(R9), Y7
	ADDQ    R8, R9
	VMOVUPS (R9), Y8
	VMOVUPS 32(R9), Y9
	ADDQ    R8, R9
	VMOVUPS (R9), Y10
	VMOVUPS 32(R9), Y11
	JMP     loop4check

zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop4check:
	CMPQ CX, $4
	JLT  tailcheck

loop4:
	STEP(0, 0)
	STEP(24, 64)
	STEP(48, 128)
	STEP(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  loop4

tailcheck:
	TESTQ CX, CX
	JZ    store

tail:
	STEP(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  tail

store:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	VZEROUPPER
	RET
