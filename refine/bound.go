package refine

import (
	"fmt"
	"math/big"
)

// MaxTerms is the largest number of terms per output element for which
// Gamma and ElementBound are defined: n ≤ 2^23, so that n·u ≤ 1/2 with
// u = 2^-24. Beyond it γ_n would still exist up to n < 2^24, but the
// underflow term's factor (1+u)^(n−1) ≤ 2 (see ElementBound) needs
// (n−1)·u ≤ 1/2.
const MaxTerms = 1 << 23

// Unit returns the unit roundoff of binary32, u = 2^-24, as a fresh
// big.Rat.
func Unit() *big.Rat { return new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 24)) }

// Gamma returns γ_n = n·u/(1−n·u) with u = 2^-24, exactly: n/(2^24 − n).
// γ_0 = 0. It fails for n < 0 and n > MaxTerms.
func Gamma(n int) (*big.Rat, error) {
	if n < 0 || n > MaxTerms {
		return nil, fmt.Errorf("refine: γ_n is defined here for 0 ≤ n ≤ 2^23, got n = %d", n)
	}
	den := new(big.Int).Lsh(big.NewInt(1), 24)
	den.Sub(den, big.NewInt(int64(n)))
	return new(big.Rat).SetFrac(big.NewInt(int64(n)), den), nil
}

// UnderflowUnit returns 2^-149, the smallest positive subnormal binary32,
// as a fresh big.Rat. Half of it, 2^-150, is the largest absolute error of
// one round-to-nearest product (or fused multiply-add) whose result falls
// in the subnormal range.
func UnderflowUnit() *big.Rat {
	return new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 149))
}

// OverflowThreshold returns Ω = 2^128 − 2^103 as a fresh big.Rat: the
// midpoint between MaxFloat32 = 2^128 − 2^104 and 2^128. Round to nearest,
// ties to even, turns an exact result x into ±∞ exactly when |x| ≥ Ω (the
// tie at Ω goes to the "even" 2^128, which overflows).
func OverflowThreshold() *big.Rat {
	x := new(big.Int).Lsh(big.NewInt(1), 128)
	x.Sub(x, new(big.Int).Lsh(big.NewInt(1), 103))
	return new(big.Rat).SetInt(x)
}

// ElementBound returns the a-priori bound on |ŝ − s| for one output
// element whose exact value s is a sum of terms with Σ|terms| = absSum,
// evaluated in binary32 in any order:
//
//	B = γ_g·absSum + p·2^-149
//
// where g is the largest number of roundings any single term undergoes
// and p the number of rounded products (or fused multiply-adds). The
// callers use g = n, p = n for matmul (n = k products), g = n, p = n−1 for
// linear (n = in products plus the bias), and g = n−1, p = 0 for sum and
// reduce_sum (n terms).
//
// Derivation. Round to nearest with gradual underflow satisfies, for
// every operation whose exact result does not overflow,
// fl(x∘y) = (x∘y)(1+δ) + η with |δ| ≤ u, |η| ≤ 2^-150 and δ·η = 0; for an
// addition or subtraction η = 0, because a sum of two binary32 values
// whose exact result is subnormal is itself representable (Hauser), and a
// fused multiply-add has one δ and one η. Take any evaluation tree: each
// term t_i is formed by one product rounding (none for a sum's terms) and
// then passes through at most g−1 (products) or g (sums) further additions
// — at most n−1 additions combine n terms, and additions with an exact
// zero (an accumulator's +0 start, an empty lane) are exact and do not
// count. So ŝ = Σ t_i·(1+θ_i) + Σ η_j·(1+θ'_j) with |θ_i| ≤ γ_g
// (Higham, Lemma 3.1: Π(1+δ_k)^{±1} over g factors is within γ_g of 1 when
// g·u < 1) and |1+θ'_j| ≤ (1+u)^(n−1) ≤ 1/(1−(n−1)u) ≤ 2 when
// (n−1)·u ≤ 1/2. Hence |ŝ − s| ≤ γ_g·Σ|t_i| + p·2^-150·2 = B. The bound
// holds for every summation order, blocking, number of accumulators and
// use of FMA: all that ReductionImplementationDefined lets a checker
// assume is that each term enters once and each operation rounds once. It
// assumes no operation overflowed; a finite result
// guarantees that, since an infinity, once produced, can only stay
// infinite or become NaN in a sum.
func ElementBound(g, p int, absSum *big.Rat) (*big.Rat, error) {
	if p < 0 || p > MaxTerms {
		return nil, fmt.Errorf("refine: product count %d out of range", p)
	}
	gm, err := Gamma(g)
	if err != nil {
		return nil, err
	}
	return boundWith(gm, p, absSum), nil
}

// boundWith is ElementBound with γ_g given: γ·absSum + p·2^-149, in a
// fresh big.Rat.
func boundWith(gamma *big.Rat, p int, absSum *big.Rat) *big.Rat {
	b := new(big.Rat).Mul(gamma, absSum)
	under := new(big.Rat).SetInt64(int64(p))
	return b.Add(b, under.Mul(under, underflowUnit))
}

// overflowPossible reports whether some evaluation order could overflow
// towards the sign of part, where part is the sum of the magnitudes of
// the terms of that sign (P = (Σ|t| + s)/2 for +∞, N = (Σ|t| − s)/2 for
// −∞): the exact result of any operation in an evaluation that has not
// yet overflowed is at most (1+γ_g)·part + p·2^-149 towards that sign (the
// same expansion as ElementBound), and an operation overflows towards +∞
// only when its exact result is ≥ Ω. So the answer is
// (1+γ_g)·part + p·2^-149 ≥ Ω.
func overflowPossible(gamma *big.Rat, p int, part *big.Rat) bool {
	x := new(big.Rat).Add(big.NewRat(1, 1), gamma)
	x.Mul(x, part)
	under := new(big.Rat).SetInt64(int64(p))
	x.Add(x, under.Mul(under, underflowUnit))
	return x.Cmp(omega) >= 0
}

// Read-only copies of UnderflowUnit and OverflowThreshold for internal
// use; never passed as a receiver.
var (
	underflowUnit = UnderflowUnit()
	omega         = OverflowThreshold()
)
