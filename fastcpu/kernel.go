package fastcpu

// microKernel computes one mr×nr block of C from a packed A strip
// (a[p·mr+r], len ≥ mr·kc) and a packed B strip (b[p·nr+j], len ≥ nr·kc):
//
//	c[r·ldc+j] = fold_{p=0..kc−1} (acc + float32(a[p·mr+r]·b[p·nr+j]))
//
// starting from acc = c[r·ldc+j] when accumulate is set and from +0
// otherwise. c must hold (mr−1)·ldc+nr elements. The vector kernel and
// the portable one perform the same float32 operations in the same order
// and so give the same bits, as does the AVX-512 kernel12x32MulAdd that
// replaces this driver when useAVX512 is set: the vectors only run the
// columns of a row side by side.
func microKernel(kc int, a, b, c []float32, ldc int, accumulate bool) {
	if useAVX2 {
		_ = a[mr*kc-1]
		_ = b[nr*kc-1]
		_ = c[(mr-1)*ldc+nr-1]
		kernel6x16AVX2(kc, &a[0], &b[0], &c[0], ldc, accumulate)
		return
	}
	kernelGeneric(kc, a, b, c, ldc, accumulate)
}

// kernelGeneric is the portable micro-kernel. It walks the mr×nr block in
// 2×4 sub-blocks, each kept in eight scalar accumulators over the whole
// depth kc (more accumulators make the Go register allocator spill). Every
// product is converted to float32 explicitly, which the Go specification
// says forbids fusing it with the addition.
func kernelGeneric(kc int, a, b, c []float32, ldc int, accumulate bool) {
	a = a[:mr*kc]
	b = b[:nr*kc]
	for i0 := 0; i0 < mr; i0 += 2 {
		for j0 := 0; j0 < nr; j0 += 4 {
			c0 := c[i0*ldc+j0 : i0*ldc+j0+4 : i0*ldc+j0+4]
			c1 := c[(i0+1)*ldc+j0 : (i0+1)*ldc+j0+4 : (i0+1)*ldc+j0+4]
			var c00, c01, c02, c03, c10, c11, c12, c13 float32
			if accumulate {
				c00, c01, c02, c03 = c0[0], c0[1], c0[2], c0[3]
				c10, c11, c12, c13 = c1[0], c1[1], c1[2], c1[3]
			}
			ap := a[i0:]
			bp := b[j0:]
			for p := 0; p < kc; p++ {
				av := ap[p*mr : p*mr+2 : p*mr+2]
				bv := bp[p*nr : p*nr+4 : p*nr+4]
				a0, a1 := av[0], av[1]
				b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
				c00 += float32(a0 * b0)
				c01 += float32(a0 * b1)
				c02 += float32(a0 * b2)
				c03 += float32(a0 * b3)
				c10 += float32(a1 * b0)
				c11 += float32(a1 * b1)
				c12 += float32(a1 * b2)
				c13 += float32(a1 * b3)
			}
			c0[0], c0[1], c0[2], c0[3] = c00, c01, c02, c03
			c1[0], c1[1], c1[2], c1[3] = c10, c11, c12, c13
		}
	}
}
