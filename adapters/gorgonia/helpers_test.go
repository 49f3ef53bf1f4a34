package gorgonia

import (
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

type (
	sessionT = tape.Session[spec.Rat]
	refT     = tape.Ref
)

func scaleAttrs(c float64) *spec.Attrs { return &spec.Attrs{C: new(big.Rat).SetFloat64(c)} }
