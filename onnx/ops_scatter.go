package onnx

import (
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// maxScatterMatrix bounds the constant [m, n] matrix ScatterND with
// reduction add and repeated indices is written with.
const maxScatterMatrix = 1 << 22

// scatterReduction checks a Scatter* node's arity (data, indices,
// updates; one output) and reads its reduction ("none" before opset 16,
// which has no such attribute).
func scatterReduction(c *nctx) (string, error) {
	if err := c.oneOutput(3, 3); err != nil {
		return "", err
	}
	if c.b.opset < 16 {
		return "none", nil
	}
	return c.attrString("reduction", "none")
}

// scatterOperands reads a Scatter* node's float data (input 0), constant
// indices (input 1) and float updates (input 2).
func scatterOperands(c *nctx) (dv *value, d int, iv, uv *value, u int, err error) {
	if dv, d, err = c.float(0); err != nil {
		return
	}
	if iv, err = c.constInts(1); err != nil {
		return
	}
	uv, u, err = c.float(2)
	return
}

// importScatterND: ScatterND [11] with constant indices (an initializer,
// a Constant or a bound integer input). indices [q₁…, k] name slices
// data[i₁, …, i_k, :…] that updates [q₁…, data.shape[k:]…] write. With
// p(u) the flat data position update element u lands on:
//
//	none (default)  out[p] = u at every written p: the registry's scatter along
//	                axis 0 of the flat data; a position written twice is refused
//	                (the operator leaves the result undefined)
//	add             out = data + Σ_{u: p(u) = p} u: the updates times a constant 0/1
//	                matrix (exact sums, repeated positions included)
//	mul             out[p] = data[p]·u at each written p (selection of the updates
//	                against ones, then mul_elem); max, min [18] likewise with
//	                max_elem, min_elem against a selection of the updates against data
//
// mul, max and min with a position written k times reduce it k times,
// in the order of the updates (the operator's sequential definition; see
// scatterRounds).
func importScatterND(c *nctx) error {
	red, err := scatterReduction(c)
	if err != nil {
		return err
	}
	switch red {
	case "none", "add", "mul":
	case "max", "min":
		if c.b.opset < 18 {
			return c.errf(attrField("reduction"), "%q needs opset 18", red)
		}
	default:
		return c.errf(attrField("reduction"), "%q is not supported", red)
	}
	dv, d, iv, uv, u, err := scatterOperands(c)
	if err != nil {
		return err
	}
	ds, is, us := dv.shape, iv.shape, uv.shape
	if len(is) < 1 {
		return c.errf(c.inField(1), "rank 0, expected ≥ 1")
	}
	k := is[len(is)-1]
	if k > len(ds) {
		return c.errf(c.inField(1), "index tuples of %d entries for data of rank %d", k, len(ds))
	}
	want := append(is[:len(is)-1].Clone(), ds[k:]...)
	if !us.Equal(want) {
		return c.errf(c.inField(2), "shape %v, expected %v", us, want)
	}
	n, m := ds.Size(), us.Size()
	slice := prod(ds[k:])
	st := ds.Strides()
	target := make([]int, m) // flat data position of each update element
	hits := make([]int, n)
	tuples := prod(is[:len(is)-1])
	for t := 0; t < tuples; t++ {
		base := 0
		for j := 0; j < k; j++ {
			x := iv.ints[t*k+j]
			if x < 0 {
				x += int64(ds[j])
			}
			if x < 0 || x >= int64(ds[j]) {
				return c.errf(c.inField(1), "element %d is %d, outside [-%d, %d)", t*k+j, iv.ints[t*k+j], ds[j], ds[j])
			}
			base += int(x) * st[j]
		}
		for e := 0; e < slice; e++ {
			target[t*slice+e] = base + e
			hits[base+e]++
		}
	}
	for p, h := range hits {
		if h > 1 && red == "none" {
			return c.errf(c.inField(1), "data element %d is written %d times, which reduction %q leaves undefined here", p, h, red)
		}
	}
	fd := c.b.reshape(d, ds, spec.Shape{n})
	fu := c.b.reshape(u, us, spec.Shape{m})
	var out int
	switch red {
	case "add":
		if int64(n)*int64(m) > maxScatterMatrix {
			return c.errf("input", "a %d×%d scatter matrix exceeds %d entries", m, n, maxScatterMatrix)
		}
		w := make([]spec.Rat, m*n)
		for e, p := range target {
			w[e*n+p] = spec.NewRat(1, 1)
		}
		s := c.b.binary(irsem.OpMatmul, fu, c.b.constTensor(spec.Shape{m, n}, w), spec.Shape{n})
		out = c.b.binary(irsem.OpAdd, fd, s, spec.Shape{n})
	case "none":
		if out, err = c.b.scatterFlat(fd, fu, n, target); err != nil {
			return c.wrap("", err)
		}
	default:
		if out, err = c.b.scatterRounds(red, fd, fu, n, target); err != nil {
			return c.wrap("", err)
		}
	}
	c.out(0, c.b.reshape(out, spec.Shape{n}, ds), ds, dv.dt)
	return nil
}

// scatterRounds applies ScatterND's reduction mul, max or min to the flat
// data fd (n elements) with the flat updates fu written at target, in the
// operator's order: update elements in index order, so a position written
// k times is reduced k times, its r-th update in round r. Round r selects,
// at each position, its r-th update (gather from the concatenation of the
// neutral operand and the updates: ones for mul, the data for max and
// min, which max(out, data) = out leaves unchanged) and combines it with
// the running result: out = op(out, g_r). With no position written twice
// this is the one round op(fd, g_0).
func (b *imp) scatterRounds(red string, fd, fu, n int, target []int) (int, error) {
	m := len(target)
	op, other := irsem.OpMulElem, fd
	switch red {
	case "mul":
		other = b.constScalar(spec.NewRat(1, 1), spec.Shape{n})
	case "max":
		op = irsem.OpMaxElem
	case "min":
		op = irsem.OpMinElem
	}
	seen := make([]int, n)
	rank := make([]int, m) // rank[e]: how many earlier updates write target[e]
	rounds := 0
	for e, p := range target {
		rank[e] = seen[p]
		seen[p]++
		rounds = max(rounds, seen[p])
	}
	cat, cs := b.concat([]int{other, fu}, []spec.Shape{{n}, {m}}, 0)
	out := fd
	for r := 0; r < rounds; r++ {
		idx := make([]int, n)
		for p := range idx {
			idx[p] = p
		}
		for e, p := range target {
			if rank[e] == r {
				idx[p] = n + e
			}
		}
		g, _, err := b.gather(cat, cs, 0, idx, spec.Shape{n})
		if err != nil {
			return 0, err
		}
		out = b.binary(op, out, g, spec.Shape{n})
	}
	return out, nil
}
