package spec

// This file holds the rules of stop-gradient (NoGrad) primitives that the
// execution paths share: which nodes require a gradient, and what a
// NoGrad primitive does to a dual number's tangent. Each path asks here
// instead of restating them.

// RequiresGrad is the requires-grad rule of a node of primitive info whose
// parents' flags are parents: the node requires a gradient when one of its
// parents does, unless the primitive is NoGrad (its JVP and VJP are zero
// by definition, so nothing flows through it). The tape and the typed
// graph decide with it.
func RequiresGrad(info *OpInfo, parents ...bool) bool {
	if info != nil && info.NoGrad {
		return false
	}
	for _, p := range parents {
		if p {
			return true
		}
	}
	return false
}

// DropTangent returns y with every tangent set to zero and the primal
// kept: (a + a'ε) ↦ (a + 0ε). It is the dual-number forward value of a
// NoGrad primitive. Over plain dual arithmetic detach would be the identity
// and carry the tangent through, contradicting its zero JVP; dropping the
// tangent makes the dual forward of every NoGrad node agree with its JVP
// (0), so forward mode over duals equals the JVP. The result is fresh.
func DropTangent[T Scalar[T]](y Tensor[Dual[T]]) Tensor[Dual[T]] {
	return Convert(y, func(d Dual[T]) Dual[T] { return Dual[T]{Re: d.Re} })
}

// StopTangent returns p itself when it is not NoGrad, and otherwise a copy
// of p whose Forward drops the tangent of its value (DropTangent).
func StopTangent[T Scalar[T]](p *Prim[Dual[T]]) *Prim[Dual[T]] {
	if p == nil || !p.NoGrad {
		return p
	}
	q := *p
	q.Forward = func(a *Attrs, xs []Tensor[Dual[T]]) (Tensor[Dual[T]], error) {
		y, err := p.Forward(a, xs)
		if err != nil {
			return y, err
		}
		return DropTangent(y), nil
	}
	return &q
}
