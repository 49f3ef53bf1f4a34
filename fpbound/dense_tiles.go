package fpbound

import "github.com/tlcheck/tlcheck/enclose"

// weightRows is a dense layer's weights W (out×in, row j the weights of
// output j) as the dense kernels read them, tile by tile: either float64
// planes (c the centres or exact values, r the radii or nil for points)
// or the binary32 storage f32 of exact values (c and r nil), which a
// tile widens exactly. No whole float64 plane of a layer is made from
// f32, and no |W| plane of a whole layer is made at all: the kernels
// derive each tile's (doc.go, "Dense linear layers", last paragraph).
type weightRows struct {
	c, r []float64
	f32  []float32
}

// tile returns W's rows [j0, j1) as planes: subslices of c and r, or f32's
// rows widened into buf (grown as needed; the returned planes alias it).
func (w weightRows) tile(j0, j1, in int, buf *[]float64) enclose.Planes {
	if w.f32 == nil {
		p := enclose.Planes{C: w.c[j0*in : j1*in]}
		if w.r != nil {
			p.R = w.r[j0*in : j1*in]
		}
		return p
	}
	n := (j1 - j0) * in
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	c := (*buf)[:n]
	for i, v := range w.f32[j0*in : j1*in] {
		c[i] = float64(v)
	}
	return enclose.Planes{C: c}
}

// denseTileElems is the number of weights a tile of a dense product holds
// at most (whole rows of W, at least one): 2²⁰, 8 MiB a float64 plane.
// Tests lower it to make every layer many tiles.
var denseTileElems = 1 << 20

// tileRows is the number of W's rows in a tile: every row when the layer
// fits in one tile (the product then runs as one call, as before tiling).
func tileRows(out, in int) int {
	return min(out, max(1, denseTileElems/in))
}

// scatterTile copies the rows×nt result t of a tile (width float64s per
// element, row-major) into columns [j0, j0+nt) of the rows×out result
// dst (same layout).
func scatterTile(dst, t []float64, rows, out, j0, nt, width int) {
	for r := 0; r < rows; r++ {
		copy(dst[(r*out+j0)*width:(r*out+j0+nt)*width], t[r*nt*width:(r+1)*nt*width])
	}
}
