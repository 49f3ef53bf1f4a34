package fastcpu

// Linear computes the linear layer y = x·Wᵀ + b for a batch: x is
// rows×in, W is out×in (row-major, as a layer stores it), b has out
// elements or is nil (no bias), and y is rows×out; all are dense
// row-major. y is overwritten and never read first.
//
// Summation order: y[r][o] is the left fold from +0 over i = 0…in−1 of
// float32(x[r][i]·w[o][i]) (SgemmNT's order), then + b[o] with one more
// rounding. That is the reference provider's linear (left fold, then
// bias), bit for bit. At most in+1 terms per output (in without bias):
// |ŷ − y| ≤ γ_{in+1}·(Σ_i|x[r][i]·w[o][i]| + |b[o]|) plus the underflow
// term in·2⁻¹⁴⁹.
//
// Preconditions: rows, in, out ≥ 0; len(x) ≥ rows·in; len(w) ≥ out·in;
// b nil or len(b) ≥ out; len(y) ≥ rows·out; y overlaps none of x, w, b.
// A violated size precondition panics before y is written; LinearChecked
// returns an error instead.
func Linear(x []float32, rows, in int, w []float32, out int, b []float32, y []float32) {
	if err := checkLinear(x, rows, in, w, out, b, y, false); err != nil {
		panic(err)
	}
	linear(x, rows, in, w, out, b, y)
}

// LinearChecked is Linear with every precondition checked, overlap
// included: it returns an error wrapping ErrInvalidArgument, and leaves y
// untouched, when one fails.
func LinearChecked(x []float32, rows, in int, w []float32, out int, b []float32, y []float32) error {
	if err := checkLinear(x, rows, in, w, out, b, y, true); err != nil {
		return err
	}
	linear(x, rows, in, w, out, b, y)
	return nil
}

func linear(x []float32, rows, in int, w []float32, out int, b []float32, y []float32) {
	ld := max(in, 1)
	gemm(true, rows, out, in, x, ld, w, ld, y, max(out, 1))
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

func checkLinear(x []float32, rows, in int, w []float32, out int, b []float32, y []float32, overlap bool) error {
	if rows < 0 || in < 0 || out < 0 {
		return invalid("negative size rows=%d in=%d out=%d", rows, in, out)
	}
	ld := max(in, 1)
	nx, err := checkMatrix("x", x, rows, in, ld)
	if err != nil {
		return err
	}
	nw, err := checkMatrix("w", w, out, in, ld)
	if err != nil {
		return err
	}
	ny, err := checkMatrix("y", y, rows, out, max(out, 1))
	if err != nil {
		return err
	}
	nb := 0
	if b != nil {
		if len(b) < out {
			return invalid("b: needs %d elements, slice has %d", out, len(b))
		}
		nb = out
	}
	if overlap {
		switch {
		case overlaps(y, ny, x, nx):
			return invalid("y overlaps x")
		case overlaps(y, ny, w, nw):
			return invalid("y overlaps w")
		case overlaps(y, ny, b, nb):
			return invalid("y overlaps b")
		}
	}
	return nil
}
