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
