package spec

import "math/big"

// GoldenGamma is the splitmix64 increment 0x9e3779b97f4a7c15.
const GoldenGamma uint64 = 0x9e3779b97f4a7c15

// SplitMix64 is the splitmix64 finaliser applied to x + GoldenGamma, as
// TorchLean defines it: z = x + γ; z = (z ^ z>>30)·0xbf58476d1ce4e5b9;
// z = (z ^ z>>27)·0x94d049bb133111eb; return z ^ z>>31 (all mod 2^64).
func SplitMix64(x uint64) uint64 {
	z := x + GoldenGamma
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// SeedStream hands out per-initialiser seeds: each draw returns
// SplitMix64(Seed + Counter + γ) and increments Counter, so the first
// random initialiser uses counter 0, the next counter 1, and so on.
type SeedStream struct {
	Seed    uint64
	Counter uint64
}

// Next returns nextSeed(seed, counter) and advances the counter.
func (s *SeedStream) Next() uint64 {
	v := SplitMix64(s.Seed + s.Counter + GoldenGamma)
	s.Counter++
	return v
}

// UniformBits returns the idx-th 32-bit uniform draw of the stream keyed
// by seed: (splitmix64(splitmix64(seed)+idx) mod 2^32). Divided by 2^32 it
// is a uniform in [0,1) with an exact rational value.
func UniformBits(seed uint64, idx int) uint32 {
	key := SplitMix64(seed)
	return uint32(SplitMix64(key + uint64(idx)))
}

// UniformRat returns UniformBits(seed, idx)/2^32 exactly.
func UniformRat(seed uint64, idx int) *big.Rat {
	return new(big.Rat).SetFrac(new(big.Int).SetUint64(uint64(UniformBits(seed, idx))), new(big.Int).Lsh(big.NewInt(1), 32))
}

// fnv1a64 is the 64-bit FNV-1a hash of s's bytes: h = 0xcbf29ce484222325,
// then for each byte b: h = (h ⊕ b)·0x100000001b3 (mod 2^64).
func fnv1a64(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

// CaseSeed is the seed of case i of the case family label under the run
// seed: the one seed function of every generator of cases (tlcheck
// check's local and graph cases, every certificate kind, refine's input
// generator). With sm = SplitMix64 and fnv = 64-bit FNV-1a of the label's
// bytes,
//
//	CaseSeed(seed, label, i) = sm(sm(sm(seed) ⊕ fnv(label)) + i)   (mod 2^64)
//
// so a case depends only on (seed, label, i) — not on how many cases run
// or in which order — and can be regenerated alone. The labels in use:
// a primitive's name for its local obligation cases (the same label in
// tlcheck check and in adjointness certificates, so a certificate case is
// replayed by tlcheck check --ops OP --case I), a graph obligation's name
// for its graph cases, "composition" and "composition.tangents" for the
// composition certificate's graphs and their tangents, "range.NAME" for a
// range certificate's sample points, and "refine/OP" for refine's inputs.
// sm is a bijection, so distinct seeds give distinct sm(seed); distinct
// labels are separated by FNV-1a, which is not collision-free in general
// but has none among these labels (tested).
func CaseSeed(seed uint64, label string, i int) uint64 {
	return SplitMix64(SplitMix64(SplitMix64(seed)^fnv1a64(label)) + uint64(i))
}
