package spec

import "math/big"

// Ties of an n-ary maximum.
//
// The registry's convention for a maximum attained by t operands at once
// (max_pool, max_pool_nd: poolTies) is that its tangent is the average of
// the t tied tangents, 1/t each, and its cotangent is split 1/t each. A
// left fold of the binary Dual.Max cannot give that: its tie rule averages
// two operands at a time, so a three-way tie [a, b, c] gives
// ((a+b)/2 + c)/2 = a/4 + b/4 + c/2. The forward rule of an n-ary maximum
// therefore calls MaxOf, which lets a scalar that carries tangents take
// the maximum of the whole window at once (TieMaxer), and is the plain
// left fold of Max for every other scalar — bit for bit the fold it
// replaces, so float and interval results do not change.

// TieMaxer is implemented by scalars whose maximum over several operands
// is not the left fold of their binary Max: dual numbers, where a t-way
// tie averages the t tangents (1/t each). MaxOfTies returns the maximum
// of the receiver and rest.
type TieMaxer[T any] interface {
	MaxOfTies(rest []T) T
}

// MaxFolder is implemented by a scalar with its own loop for MaxOf's left
// fold (fpbound's error bounds, whose binary Max normalises both operands
// and recomputes their hulls on every call). FoldMax(xs), len(xs) ≥ 2,
// must return what xs[0].Max(xs[1]).Max(xs[2])… returns, field for field;
// the method must not depend on its receiver's value.
type MaxFolder[T any] interface {
	FoldMax(xs []T) T
}

// MaxOf returns the maximum of xs (len(xs) ≥ 1): xs[0].MaxOfTies(xs[1:])
// when T is a TieMaxer, else the left fold xs[0].Max(xs[1]).Max(xs[2])…
// (by T's own loop when T is a MaxFolder).
func MaxOf[T Scalar[T]](xs []T) T {
	if len(xs) == 1 {
		return xs[0]
	}
	if tm, ok := any(xs[0]).(TieMaxer[T]); ok {
		return tm.MaxOfTies(xs[1:])
	}
	if f, ok := any(xs[0]).(MaxFolder[T]); ok {
		return f.FoldMax(xs)
	}
	m := xs[0]
	for _, x := range xs[1:] {
		m = m.Max(x)
	}
	return m
}

// MaxOfTies is the maximum of x and rest: the primal maximum m (decided
// with Compare), and as tangent the average of the tangents of every
// operand whose primal equals m — (Σ_{i∈P} du_i)/t with t = |P|, summed
// from 0 in operand order and divided once, as the max-pool JVP rule
// does — the registry's 1/t tie convention. Without a tie it is the operand with the
// largest primal, exactly as the fold of Max. When some order cannot be
// decided (a NaN, or overlapping enclosures in an inner scalar) it is the
// left fold of Max, whose binary rule handles that case.
func (x Dual[T]) MaxOfTies(rest []Dual[T]) Dual[T] {
	best := 0
	ties := []int{0}
	at := func(i int) Dual[T] {
		if i == 0 {
			return x
		}
		return rest[i-1]
	}
	for i := 1; i <= len(rest); i++ {
		c, ok := at(i).Re.Compare(at(best).Re)
		if !ok {
			m := x
			for _, y := range rest {
				m = m.Max(y)
			}
			return m
		}
		switch {
		case c > 0:
			best, ties = i, append(ties[:0], i)
		case c == 0:
			ties = append(ties, i)
		}
	}
	if len(ties) == 1 {
		return at(best)
	}
	var sum T
	for _, i := range ties {
		sum = sum.Add(at(i).Du)
	}
	var z T
	du, err := sum.Div(z.FromInt(int64(len(ties))))
	if err != nil { // t ≥ 2 is never a zero divisor; keep the primal exact anyway
		du = sum.Mul(z.FromRat(big.NewRat(1, int64(len(ties)))))
	}
	return Dual[T]{Re: at(best).Re, Du: du}
}

// Encloser is implemented by scalars whose values are sets (enclosures):
// Join returns a value containing both operands. A rule whose choice
// between branches cannot be decided over such a scalar may return the
// join of every branch's result instead of refusing (the max-pool tie
// rule does so when the order of a window cannot be decided).
type Encloser[T any] interface {
	Join(T) T
}

// Join is the hull of x and y: the smallest interval containing both.
func (x Interval) Join(y Interval) Interval { return Hull(x, y) }
