package emit

import (
	"math/big"
	"testing"
)

// isqrtBis transcribes Spec.lean's isqrtBis (bisection with fuel) and
// counts its steps.
func isqrtBis(n, fuel, lo, hi *big.Int, steps *int) *big.Int {
	one := big.NewInt(1)
	for fuel.Sign() > 0 {
		*steps++
		if hi.Cmp(new(big.Int).Add(lo, one)) <= 0 {
			return lo
		}
		m := new(big.Int).Rsh(new(big.Int).Add(lo, hi), 1)
		if new(big.Int).Mul(m, m).Cmp(n) <= 0 {
			lo = m
		} else {
			hi = m
		}
		fuel = new(big.Int).Sub(fuel, one)
	}
	return lo
}

// TestIsqrtBisection: Spec.lean's isqrt n = isqrtBis n (n+1) 0 (n+1) is
// ⌊√n⌋ (big.Int.Sqrt) and takes at most bitlen(n+1) + 2 steps, so the
// kernel's work on a square root is logarithmic in the numbers, not
// linear as the old downward search was.
func TestIsqrtBisection(t *testing.T) {
	check := func(n *big.Int) {
		steps := 0
		np1 := new(big.Int).Add(n, big.NewInt(1))
		got := isqrtBis(n, new(big.Int).Set(np1), big.NewInt(0), new(big.Int).Set(np1), &steps)
		if want := new(big.Int).Sqrt(n); got.Cmp(want) != 0 {
			t.Fatalf("isqrt %v = %v, want %v", n, got, want)
		}
		if steps > np1.BitLen()+2 {
			t.Fatalf("isqrt %v took %d steps, more than bitlen+2 = %d", n, steps, np1.BitLen()+2)
		}
	}
	for i := int64(0); i <= 5000; i++ {
		check(big.NewInt(i))
	}
	for _, s := range []string{"1000000000000000000000", "340282366920938463463374607431768211456", "99999999999999999999999999999999999999999999"} {
		n, _ := new(big.Int).SetString(s, 10)
		check(n)
		check(new(big.Int).Mul(n, n))
		check(new(big.Int).Sub(new(big.Int).Mul(n, n), big.NewInt(1)))
	}
}
