//go:build !openblas

package main

// Built without the openblas tag: no OpenBLAS contender.
const openblasAvailable = false

func openblasSgemm(n int, a, b, c []float32) {}
func openblasInfo() string                   { return "" }
func setOpenblasThreads(t int)               {}
