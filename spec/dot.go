package spec

import (
	"math/big"
	"math/bits"
)

// FoldDot returns the left fold acc + x₀·y₀ + x₁·y₁ + … + xₙ₋₁·yₙ₋₁ of
// the scalar's own Mul and Add; xs and ys must have the same length (a
// programming error otherwise: it panics).
//
// For the float scalars, Interval and Dual it is that loop, operation for
// operation, so the result has the same bits. For Rat it is the same
// rational (addition is associative and commutative over Q, and Rat's
// representation is canonical), computed as one exact fused sum instead
// of 2n separately normalised operations:
//
//   - while acc and every product so far are small dyadics whose sum
//     fits an int64 mantissa, the terms are folded in int64 arithmetic
//     (no allocation); the first term that does not fit, and all after
//     it, go to the fused sum below with the partial sum as acc;
//   - the dyadic terms (xᵢ = a·2^p, yᵢ = b·2^q, a product (ab)·2^(p+q))
//     and a dyadic acc are summed as integers over the common exponent
//     e = min(p+q): each product is shifted left by p+q−e bits and
//     added, in a fixed-size positive and a negative word accumulator
//     sized for the widest term plus ⌈log₂(n+1)⌉ carry bits, so no
//     intermediate allocation and no GCD; the total is normalised once
//     (trailing zeros into the exponent);
//   - the other terms (a factor with a denominator that is not a power
//     of two) are summed as an unreduced fraction N/D over the least
//     common multiple of their denominators (one GCD per term, none when
//     the term's denominator equals D), reduced once at the end;
//   - the two partial sums are added.
func FoldDot[T Scalar[T]](acc T, xs, ys []T) T {
	if len(xs) != len(ys) {
		panic("spec.FoldDot: operands of different lengths")
	}
	switch a := any(acc).(type) {
	case Rat:
		return any(ratDot(a, any(xs).([]Rat), any(ys).([]Rat))).(T)
	case F32:
		yf := any(ys).([]F32)
		for i, x := range any(xs).([]F32) {
			a = a.Add(x.Mul(yf[i]))
		}
		return any(a).(T)
	case F64:
		yf := any(ys).([]F64)
		for i, x := range any(xs).([]F64) {
			a = a.Add(x.Mul(yf[i]))
		}
		return any(a).(T)
	}
	if f, ok := any(acc).(DotFolder[T]); ok {
		return f.FoldDot(acc, xs, ys)
	}
	for i := range xs {
		acc = acc.Add(xs[i].Mul(ys[i]))
	}
	return acc
}

// DotFolder is implemented by a scalar with its own loop for FoldDot's
// generic fold (fpbound's error bounds, whose fold has a cheaper form once
// the partial sum carries no bound). FoldDot(acc, xs, ys) must return what
// the loop acc = acc.Add(xs[i].Mul(ys[i])) returns, field for field; the
// method must not depend on its receiver's value (FoldDot calls it on acc).
type DotFolder[T any] interface {
	FoldDot(acc T, xs, ys []T) T
}

// mantBits is the bit length of a non-zero dyadic's mantissa.
func (x Rat) mantBits() int {
	if x.b != nil {
		return x.b.BitLen()
	}
	return bits.Len64(absU(x.m))
}

const wordBits = bits.UintSize

// ratDot is FoldDot over Rat.
func ratDot(acc Rat, xs, ys []Rat) Rat {
	if len(xs) <= 1 {
		if len(xs) == 1 {
			return acc.Add(xs[0].Mul(ys[0])) // nothing to fuse
		}
		return acc
	}
	// While every term and the partial sum fit in int64 (float32 data
	// over few layers), the plain fold allocates nothing; from the first
	// term that does not fit on, the terms are fused.
	if acc.r == nil && acc.b == nil {
		rest := len(xs) // the index of the first term not folded
		for i, x := range xs {
			y := ys[i]
			if x.r != nil || x.b != nil || y.r != nil || y.b != nil {
				rest = i
				break
			}
			if x.m == 0 || y.m == 0 {
				continue
			}
			hi, lo := bits.Mul64(absU(x.m), absU(y.m))
			if hi != 0 || lo >= 1<<63 {
				rest = i
				break
			}
			p := int64(lo)
			if (x.m < 0) != (y.m < 0) {
				p = -p
			}
			if acc.m == 0 {
				acc = Rat{m: p, e: x.e + y.e}
			} else if z, ok := addSmall(acc.m, acc.e, p, x.e+y.e); ok {
				acc = z
			} else {
				rest = i
				break
			}
		}
		if rest == len(xs) {
			return acc
		}
		xs, ys = xs[rest:], ys[rest:]
	}
	// Pass 1: the exponent range of the dyadic terms.
	emin, tmax, nd := 0, 0, 0
	general := !acc.dyadic()
	note := func(e, w int) {
		if nd == 0 || e < emin {
			emin = e
		}
		if nd == 0 || e+w > tmax {
			tmax = e + w
		}
		nd++
	}
	if acc.dyadic() && !acc.IsZero() {
		note(acc.e, acc.mantBits())
	}
	for i, x := range xs {
		y := ys[i]
		if x.IsZero() || y.IsZero() {
			continue
		}
		if !x.dyadic() || !y.dyadic() {
			general = true
			continue
		}
		note(x.e+y.e, x.mantBits()+y.mantBits())
	}
	var sum Rat
	if nd > 0 {
		sum = dyadicDot(acc, xs, ys, emin, tmax, nd)
	}
	if general {
		sum = sum.Add(fracDot(acc, xs, ys))
	}
	return sum
}

// dyadicDot sums the dyadic terms (and a dyadic acc) exactly over the
// exponent emin; every term's magnitude is below 2^tmax and there are nd
// of them.
func dyadicDot(acc Rat, xs, ys []Rat, emin, tmax, nd int) Rat {
	width := tmax - emin + bits.Len(uint(nd)) + 1
	nw := width/wordBits + 3 // + 1 word of slack for addMulShifted's zero pieces
	buf := make([]big.Word, 2*nw)
	pos, neg := buf[:nw:nw], buf[nw:]
	var prod, sx, sy big.Int // scratch, reused across terms
	var small [128 / wordBits]big.Word
	term := func(v []big.Word, negative bool, e int) {
		if negative {
			addShifted(neg, v, e-emin)
		} else {
			addShifted(pos, v, e-emin)
		}
	}
	if acc.dyadic() && !acc.IsZero() {
		if acc.b != nil {
			term(acc.b.Bits(), acc.b.Sign() < 0, acc.e)
		} else {
			term(wordsOf(&small, 0, absU(acc.m)), acc.m < 0, acc.e)
		}
	}
	for i, x := range xs {
		y := ys[i]
		if x.IsZero() || y.IsZero() || !x.dyadic() || !y.dyadic() {
			continue
		}
		if x.b == nil && y.b == nil {
			hi, lo := bits.Mul64(absU(x.m), absU(y.m))
			term(wordsOf(&small, hi, lo), (x.m < 0) != (y.m < 0), x.e+y.e)
			continue
		}
		if wordBits == 64 && (x.b == nil) != (y.b == nil) {
			// A big mantissa times an int64 one (activation × weight):
			// multiply-and-add straight into the accumulator.
			bg, sm := x, y
			if x.b == nil {
				bg, sm = y, x
			}
			acc := pos
			if (bg.b.Sign() < 0) != (sm.m < 0) {
				acc = neg
			}
			addMulShifted(acc, bg.b.Bits(), absU(sm.m), x.e+y.e-emin)
			continue
		}
		mx, my := x.b, y.b
		if mx == nil {
			mx = sx.SetInt64(x.m)
		}
		if my == nil {
			my = sy.SetInt64(y.m)
		}
		prod.Mul(mx, my)
		term(prod.Bits(), prod.Sign() < 0, x.e+y.e)
	}
	p := new(big.Int).SetBits(pos)
	p.Sub(p, new(big.Int).SetBits(neg))
	return dyBig(p, emin)
}

// wordsOf writes the 128-bit hi:lo into w as little-endian words.
func wordsOf(w *[128 / wordBits]big.Word, hi, lo uint64) []big.Word {
	if wordBits == 64 {
		w[0], w[1] = big.Word(lo), big.Word(hi)
	} else {
		for i := range w {
			if i < len(w)/2 {
				w[i] = big.Word(lo >> (uint(i) * wordBits))
			} else {
				w[i] = big.Word(hi >> (uint(i-len(w)/2) * wordBits))
			}
		}
	}
	v := w[:]
	for len(v) > 0 && v[len(v)-1] == 0 {
		v = v[:len(v)-1] // significant words only: addShifted's bound needs it
	}
	return v
}

// addShifted adds v·2^s into the little-endian magnitude z, which is wide
// enough to hold the result.
func addShifted(z, v []big.Word, s int) {
	o, sh := s/wordBits, uint(s%wordBits)
	var carry uint
	i := o
	if sh == 0 {
		for _, w := range v {
			z[i], carry = addW(z[i], uint(w), carry)
			i++
		}
	} else {
		var prev uint
		for _, w := range v {
			piece := uint(w)<<sh | prev>>(wordBits-sh)
			prev = uint(w)
			z[i], carry = addW(z[i], piece, carry)
			i++
		}
		z[i], carry = addW(z[i], prev>>(wordBits-sh), carry)
		i++
	}
	for carry != 0 {
		z[i], carry = addW(z[i], 0, carry)
		i++
	}
}

// addMulShifted adds (a·s)·2^shift into the little-endian magnitude z
// (64-bit words), which is wide enough for the result plus one word.
func addMulShifted(z, a []big.Word, s uint64, shift int) {
	o, sh := shift/64, uint(shift%64)
	var mc, prev, carry uint64 // multiply carry, previous product word, add carry
	i := o
	for _, w := range a {
		hi, lo := bits.Mul64(uint64(w), s)
		var c uint64
		lo, c = bits.Add64(lo, mc, 0)
		mc = hi + c
		piece := lo<<sh | prev>>(64-sh) // a shift by 64 is 0 in Go
		prev = lo
		var v uint64
		v, carry = bits.Add64(uint64(z[i]), piece, carry)
		z[i] = big.Word(v)
		i++
	}
	for _, piece := range [2]uint64{mc<<sh | prev>>(64-sh), mc >> (64 - sh)} {
		var v uint64
		v, carry = bits.Add64(uint64(z[i]), piece, carry)
		z[i] = big.Word(v)
		i++
	}
	for carry != 0 {
		var v uint64
		v, carry = bits.Add64(uint64(z[i]), 0, carry)
		z[i] = big.Word(v)
		i++
	}
}

func addW(a big.Word, b, c uint) (big.Word, uint) {
	s, c2 := bits.Add(uint(a), b, c)
	return big.Word(s), c2
}

// fracDot sums the terms of acc + Σ xᵢyᵢ that have a non-dyadic factor
// (acc itself when it is non-dyadic) as N/D over the lcm of their
// denominators, reduced once.
func fracDot(acc Rat, xs, ys []Rat) Rat {
	var n, d *big.Int                // n/d; nil while empty
	addFrac := func(p, q *big.Int) { // p/q, q > 0; p and q are owned
		switch {
		case d == nil:
			n, d = p, q
		case q.Cmp(d) == 0:
			n.Add(n, p)
		default:
			g := new(big.Int).GCD(nil, nil, d, q)
			qg := q.Quo(q, g) // q/g
			n.Mul(n, qg)
			n.Add(n, p.Mul(p, g.Quo(d, g))) // p·(d/g)
			d.Mul(d, qg)
		}
	}
	if !acc.dyadic() {
		addFrac(new(big.Int).Set(acc.r.Num()), new(big.Int).Set(acc.r.Denom()))
	}
	for i, x := range xs {
		y := ys[i]
		if x.IsZero() || y.IsZero() || (x.dyadic() && y.dyadic()) {
			continue
		}
		xn, xd := x.frac()
		yn, yd := y.frac()
		addFrac(new(big.Int).Mul(xn, yn), new(big.Int).Mul(xd, yd))
	}
	if d == nil {
		return Rat{}
	}
	return fromBigRat(new(big.Rat).SetFrac(n, d))
}

// frac returns x = n/d (d > 0, lowest terms) as read-only big.Ints.
func (x Rat) frac() (n, d *big.Int) {
	if x.r != nil {
		return x.r.Num(), x.r.Denom()
	}
	v := x.v() // fresh for a dyadic
	return v.Num(), v.Denom()
}

// ratOuter writes the outer product dst[j·len(xs)+k] = ys[j]·xs[k] (the
// rational ys[j].Mul(xs[k]), so the same value). The big mantissas of
// the dyadic products are carved out of one word slab and one big.Int
// slab, two allocations for the whole product instead of two per
// element; each has its own words (capacity-limited sub-slices), and,
// as every stored mantissa, is never written again.
func ratOuter(dst, ys, xs []Rat) {
	words, nbig := 0, 0
	wl := func(r Rat) int {
		if r.b != nil {
			return len(r.b.Bits())
		}
		return 64 / wordBits
	}
	for _, y := range ys {
		for _, x := range xs {
			if x.dyadic() && y.dyadic() && !x.IsZero() && !y.IsZero() && (x.b != nil || y.b != nil) {
				words += wl(x) + wl(y)
				nbig++
			}
		}
	}
	slab := make([]big.Word, words)
	ints := make([]big.Int, nbig)
	off, n := 0, 0
	var sx, sy big.Int
	for j, y := range ys {
		for k, x := range xs {
			i := j*len(xs) + k
			if !x.dyadic() || !y.dyadic() || x.IsZero() || y.IsZero() || (x.b == nil && y.b == nil) {
				dst[i] = y.Mul(x)
				continue
			}
			need := wl(x) + wl(y)
			z := ints[n].SetBits(slab[off : off : off+need])
			off, n = off+need, n+1
			my, mx := y.b, x.b
			if my == nil {
				my = sy.SetInt64(y.m)
			}
			if mx == nil {
				mx = sx.SetInt64(x.m)
			}
			z.Mul(my, mx)
			// odd · odd is odd, and |z| ≥ |big factor| ≥ 2^63: canonical.
			dst[i] = Rat{b: z, e: y.e + x.e}
		}
	}
}
