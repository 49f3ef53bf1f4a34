package enclose

// ProductTiles encloses y = x·Wᵀ + b for x (rows×in, row-major), W
// (out×in, one row per output) and b (out values, when withBias), with
// W's rows given tile by tile: wRows(j0, j1) returns rows [j0, j1) of W
// as planes (it may reuse one buffer between calls: each tile is read
// before the next is asked for), at most tileRows rows at a time. Each
// tile is one Product(rows, j1−j0, in, x, false, tile, true, b[j0:j1]);
// the radii of its result are multiplied by radScale (1: unchanged; a
// caller's widening factor ≥ 1) before the tile's (lo, hi) pairs are
// written, row-major, into the returned rows×out×2 slice. ok is false
// when a tile's Product declines (nothing is returned then).
//
// Tiling changes no value: element (r, j) of Product depends only on row
// r of x, row j of W and b[j] (Product's fold of one element does not
// depend on the blocking), so the tiled result equals the untiled one
// bit for bit.
func ProductTiles(rows, out, in, tileRows int, x Planes, wRows func(j0, j1 int) Planes, withBias bool, b Planes, radScale float64) (pairs []float64, ok bool) {
	if rows <= 0 || out <= 0 || in <= 0 || tileRows <= 0 {
		return nil, false
	}
	pairs = make([]float64, 2*rows*out)
	for j0 := 0; j0 < out; j0 += tileRows {
		j1 := min(out, j0+tileRows)
		nt := j1 - j0
		var bt Planes
		if withBias {
			bt.C = b.C[j0:j1]
			if b.R != nil {
				bt.R = b.R[j0:j1]
			}
		}
		yp := Make(rows * nt)
		if !Product(rows, nt, in, x, false, wRows(j0, j1), true, bt, yp) {
			return nil, false
		}
		if radScale != 1 {
			for i := range yp.R {
				yp.R[i] *= radScale
			}
		}
		t := make([]float64, 2*rows*nt)
		ToPairs(yp, t)
		for r := 0; r < rows; r++ {
			copy(pairs[2*(r*out+j0):2*(r*out+j1)], t[2*r*nt:2*(r+1)*nt])
		}
	}
	return pairs, true
}
