package spec

import "math/big"

// DefaultNormEps returns the normalization ε used when none is given:
// 1/100000, TorchLean's (and PyTorch's) default for layer norm and batch
// norm. It is the one statement of that default: the registry's layer_norm
// (Attrs.Eps nil), the IR's layernorm and batch_norm_eval payload entries
// and nn's normalization layers all take it from here. The result is a
// fresh big.Rat, the caller's to keep or modify.
func DefaultNormEps() *big.Rat { return big.NewRat(1, 100000) }
