//go:build openblas && cgo

package main

/*
#cgo CFLAGS: -I/usr/include/x86_64-linux-gnu/openblas-pthread
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import "unsafe"

// Built with -tags openblas: OpenBLAS's cblas_sgemm, row-major, no
// transposes, alpha 1, beta 0 — the same C = A·B as fastcpu.Sgemm.
const openblasAvailable = true

func openblasSgemm(n int, a, b, c []float32) {
	C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, C.CblasNoTrans, C.blasint(n), C.blasint(n), C.blasint(n),
		1, (*C.float)(unsafe.Pointer(&a[0])), C.blasint(n), (*C.float)(unsafe.Pointer(&b[0])), C.blasint(n),
		0, (*C.float)(unsafe.Pointer(&c[0])), C.blasint(n))
}

func openblasInfo() string {
	return "core " + C.GoString(C.openblas_get_corename()) + ", config " + C.GoString(C.openblas_get_config())
}

func setOpenblasThreads(t int) { C.openblas_set_num_threads(C.int(t)) }
