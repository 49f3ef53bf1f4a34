package spec

import (
	"fmt"
	"math"
	"math/big"
)

// UnaryRule is the scalar rule of a one-parent elementwise primitive: its
// output is y_i = F(a, x_i) and its Jacobian is diagonal with entries
// D(a, x_i, y_i) = f'(x_i), so the registry's JVP is D ⊙ dx and its VJP
// D ⊙ δ, each product computed as D(a, x_i, y_i).Mul(t_i) in that order.
// Both functions need a non-nil a.
type UnaryRule[T Scalar[T]] struct {
	F func(a *Attrs, x T) (T, error)
	D func(a *Attrs, x, y T) (T, error)
}

// BinaryRule is the scalar rule of a two-parent elementwise primitive with
// equal shapes: y_i = F(a_i, b_i); the JVP's element i is
// JVP(a_i, b_i, y_i, da_i, db_i) and the VJP's contributions are
// VJP(a_i, b_i, y_i, δ_i).
type BinaryRule[T Scalar[T]] struct {
	F   func(a, b T) (T, error)
	JVP func(a, b, y, da, db T) (T, error)
	VJP func(a, b, y, d T) (T, T, error)
}

// unaryPrim builds an elementwise primitive from its scalar forward rule
// and its local derivative d(x, y) = f'(x) (y is the forward output). The
// Jacobian is diagonal, so the JVP is d ⊙ dx and the VJP is d ⊙ δ.
func unaryPrim[T Scalar[T]](info *OpInfo, f func(a *Attrs, x T) (T, error), d func(a *Attrs, x, y T) (T, error)) *Prim[T] {
	if info.Shape == nil {
		info.Shape = shapeSame
	}
	info.MinArity, info.MaxArity = 1, 1
	info.Elementwise = true // Forward is Map of f: y_i = f(x_i)
	local := func(a *Attrs, x, y, t Tensor[T]) (Tensor[T], error) {
		out := Tensor[T]{Shape: x.Shape.Clone(), Data: make([]T, len(x.Data))}
		for i := range x.Data {
			g, err := d(a, x.Data[i], y.Data[i])
			if err != nil {
				return Tensor[T]{}, fmt.Errorf("%s derivative at element %d: %w", info.Name, i, err)
			}
			out.Data[i] = g.Mul(t.Data[i])
		}
		return out, nil
	}
	return &Prim[T]{
		OpInfo: info,
		Unary:  &UnaryRule[T]{F: f, D: d},
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			return Map(xs[0], func(v T) (T, error) { return f(a, v) })
		},
		JVP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			return local(a, xs[0], y, dxs[0])
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			g, err := local(a, xs[0], y, dy)
			if err != nil {
				return nil, err
			}
			return []Tensor[T]{g}, nil
		},
	}
}

// checkTangents verifies one tangent per parent with the parent's shape.
func checkTangents[T any](op string, xs, dxs []Tensor[T]) error {
	if len(dxs) != len(xs) {
		return fmt.Errorf("%s jvp: %d tangents for %d parents", op, len(dxs), len(xs))
	}
	for i := range xs {
		if !dxs[i].Shape.Equal(xs[i].Shape) || len(dxs[i].Data) != len(xs[i].Data) {
			return fmt.Errorf("%s jvp: tangent %d has shape %v, expected %v", op, i, dxs[i].Shape, xs[i].Shape)
		}
	}
	return nil
}

// checkCotangent verifies that the cotangent has the output's shape.
func checkCotangent[T any](op string, y, dy Tensor[T]) error {
	if !dy.Shape.Equal(y.Shape) || len(dy.Data) != len(y.Data) {
		return fmt.Errorf("%s vjp: cotangent has shape %v, expected %v", op, dy.Shape, y.Shape)
	}
	return nil
}

func rc[T Scalar[T]](r *big.Rat) T {
	var z T
	return z.FromRat(r)
}

// attrRat returns the attribute constant r, or def when it is absent.
func attrRat(r *big.Rat, def *big.Rat) *big.Rat {
	if r == nil {
		return def
	}
	return r
}

func ok[T any](v T) (T, error) { return v, nil }

// The gelu constants: √(2/π) rounded to float64 (gelu has no exact
// rational semantics anyway), and 0.044715 exactly.
var (
	geluK = new(big.Rat).SetFloat64(math.Sqrt(2 / math.Pi))
	geluA = big.NewRat(44715, 1000000)
)

// GeluConstants returns copies of gelu's k = √(2/π) (as a float64) and a =
// 0.044715, for code that writes gelu's formulas as steps (fpbound's
// declarative VJP).
func GeluConstants() (k, a *big.Rat) { return new(big.Rat).Set(geluK), new(big.Rat).Set(geluA) }

func geluInner[T Scalar[T]](x T) (u, t T, err error) {
	k, a := rc[T](geluK), rc[T](geluA)
	u = k.Mul(x.Add(a.Mul(x.Mul(x).Mul(x))))
	t, err = u.Tanh()
	return u, t, err
}

func elementwisePrims[T Scalar[T]]() []*Prim[T] {
	half := big.NewRat(1, 2)
	one := func(x T) T { return x.FromInt(1) }
	return []*Prim[T]{
		binaryAdd[T](), binarySub[T](), binaryMul[T](), binaryDiv[T](),
		unaryPrim[T](&OpInfo{Name: "scale", IR: &IRForm{Tag: "scale", Attrs: []string{"c"}, Superset: true, Doc: "c·x, c a rational attribute"}, ZeroPreserving: true, Polynomial: true, Gen: GenHint{Graph: 12}, Attrs: []string{"C"}, Exact: true, Linear: true, Smooth: true, Doc: "c·x"},
			func(a *Attrs, x T) (T, error) { return rc[T](attrRat(a.C, big.NewRat(1, 1))).Mul(x), nil },
			func(a *Attrs, x, _ T) (T, error) { return rc[T](attrRat(a.C, big.NewRat(1, 1))), nil }),
		unaryPrim[T](&OpInfo{Name: "neg", IR: &IRForm{Tag: "neg", Superset: true, Doc: "−x"}, ZeroPreserving: true, Polynomial: true, Gen: GenHint{Graph: 10}, Exact: true, Linear: true, Smooth: true, Doc: "−x"},
			func(_ *Attrs, x T) (T, error) { return x.Neg(), nil },
			func(_ *Attrs, x, _ T) (T, error) { return x.FromInt(-1), nil }),
		unaryPrim[T](&OpInfo{Name: "square", IR: &IRForm{Tag: "square", Superset: true, Doc: "x⊙x"}, ZeroPreserving: true, Polynomial: true, Gen: GenHint{Degree: DegreeDouble, Graph: 11}, Exact: true, Smooth: true, Doc: "x⊙x"},
			func(_ *Attrs, x T) (T, error) { return x.Mul(x), nil },
			func(_ *Attrs, x, _ T) (T, error) { return x.Add(x), nil }),
		unaryPrim[T](&OpInfo{Name: "abs", Ties: "abs′(0) = 0", ZeroPreserving: true, IR: &IRForm{Tag: "abs", Doc: "|x|"}, Gen: GenHint{Graph: 5}, Exact: true, Doc: "|x|, abs'(0)=0"},
			func(_ *Attrs, x T) (T, error) { return x.Abs(), nil },
			func(_ *Attrs, x, _ T) (T, error) { return x.Sign(), nil }),
		unaryPrim[T](&OpInfo{Name: "sqrt", Ties: "sqrt′(x) = 0 for x ≤ 0", Partial: true, ZeroPreserving: true, IR: &IRForm{Tag: "sqrt", Doc: "sqrt(max(x,0))"}, Gen: GenHint{Domain: DomainSquare, Graph: 36}, Exact: true, Doc: "sqrt(max(x,0)); derivative 1/(2√x) for x>0, else 0"},
			func(_ *Attrs, x T) (T, error) { return x.Max(x.FromInt(0)).Sqrt() },
			func(_ *Attrs, x, y T) (T, error) {
				if c, decided := x.Compare(x.FromInt(0)); decided && c <= 0 {
					return x.FromInt(0), nil
				}
				g, err := one(x).Div(y.Add(y))
				if err != nil {
					return g, err
				}
				// Interval straddling 0: the derivative is 0 or 1/(2√x).
				return g.Mul(x.Step()), nil
			}),
		unaryPrim[T](&OpInfo{Name: "clamp", IR: &IRForm{Tag: "clamp", Attrs: []string{"lo", "hi"}, Superset: true, Doc: "clamp(x, lo, hi), lo ≤ hi rational attributes"}, Ties: "clamp′ = 1 only strictly inside (lo, hi), 0 at the bounds", ZeroPreserving: true, Gen: GenHint{Graph: 26}, Attrs: []string{"Lo", "Hi"}, Exact: true, Doc: "clamp(x, lo, hi); derivative 1 strictly inside (lo,hi)",
			Shape: func(a *Attrs, in []Shape) (Shape, error) {
				if _, _, err := clampBounds[F64](a); err != nil {
					return nil, err
				}
				return in[0].Clone(), nil
			}},
			func(a *Attrs, x T) (T, error) {
				lo, hi, err := clampBounds[T](a)
				if err != nil {
					return x, err
				}
				return x.Clamp(lo, hi), nil
			},
			func(a *Attrs, x, _ T) (T, error) {
				lo, hi, err := clampBounds[T](a)
				if err != nil {
					return x, err
				}
				return x.Sub(lo).Step().Mul(hi.Sub(x).Step()), nil
			}),
		binaryChoice[T]("max", "max_elem", 8, func(x, y T) T { return x.Max(y) }, 1),
		binaryChoice[T]("min", "min_elem", 9, func(x, y T) T { return x.Min(y) }, -1),
		unaryPrim[T](&OpInfo{Name: "relu", Ties: "relu′(0) = 0", ZeroPreserving: true, IR: &IRForm{Tag: "relu", Doc: "max(x,0)"}, Gen: GenHint{Graph: 4}, Exact: true, Doc: "max(x,0), relu'(0)=0"},
			func(_ *Attrs, x T) (T, error) { return x.Relu(), nil },
			func(_ *Attrs, x, _ T) (T, error) { return x.Step(), nil }),
		unaryPrim[T](&OpInfo{Name: "sigmoid", ZeroPreserving: true, IR: &IRForm{Tag: "sigmoid", Doc: "1/(1+e^−x), sign-split"}, Gen: GenHint{Graph: 29}, Smooth: true, Doc: "σ(x); derivative σ(1−σ)"},
			func(_ *Attrs, x T) (T, error) { return sigmoidScalar(x) },
			func(_ *Attrs, _, y T) (T, error) { return y.Mul(one(y).Sub(y)), nil }),
		unaryPrim[T](&OpInfo{Name: "tanh", ZeroPreserving: true, IR: &IRForm{Tag: "tanh", Doc: "tanh x"}, Gen: GenHint{Graph: 28}, Smooth: true, Doc: "tanh(x); derivative 1−tanh²"},
			func(_ *Attrs, x T) (T, error) { return x.Tanh() },
			func(_ *Attrs, _, y T) (T, error) { return one(y).Sub(y.Mul(y)), nil }),
		unaryPrim[T](&OpInfo{Name: "gelu", IR: &IRForm{Tag: "gelu", Superset: true, Doc: "tanh-approximate gelu"}, ZeroPreserving: true, Gen: GenHint{Graph: 35}, Smooth: true, Doc: "tanh-approximate gelu and its analytic derivative"},
			func(_ *Attrs, x T) (T, error) {
				_, t, err := geluInner(x)
				if err != nil {
					return x, err
				}
				return rc[T](half).Mul(x).Mul(one(x).Add(t)), nil
			},
			func(_ *Attrs, x, _ T) (T, error) {
				_, t, err := geluInner(x)
				if err != nil {
					return x, err
				}
				k, a := rc[T](geluK), rc[T](geluA)
				h := rc[T](half)
				du := k.Mul(one(x).Add(x.FromInt(3).Mul(a).Mul(x.Mul(x))))
				sech2 := one(x).Sub(t.Mul(t))
				return h.Mul(one(x).Add(t)).Add(h.Mul(x).Mul(sech2).Mul(du)), nil
			}),
		unaryPrim[T](&OpInfo{Name: "softplus", ZeroPreserving: true, IR: &IRForm{Tag: "softplus", Doc: "stable log(1+e^x)"}, Gen: GenHint{Graph: 32}, Smooth: true, Doc: "stable log(1+e^x); derivative σ(x)"},
			func(_ *Attrs, x T) (T, error) { return softplusScalar(x) },
			func(_ *Attrs, x, _ T) (T, error) { return sigmoidScalar(x) }),
		unaryPrim[T](&OpInfo{Name: "exp", IR: &IRForm{Tag: "exp", Doc: "e^x"}, Gen: GenHint{Graph: 37}, Smooth: true, Doc: "e^x"},
			func(_ *Attrs, x T) (T, error) { return x.Exp() },
			func(_ *Attrs, _, y T) (T, error) { return y, nil }),
		unaryPrim[T](&OpInfo{Name: "log", Partial: true, IR: &IRForm{Tag: "log", Doc: "raw ln x: rejects x ≤ 0 (the only data-dependent failure); use safe_log"}, Gen: GenHint{Domain: DomainPositive}, Smooth: true, Doc: "ln x; rejects x ≤ 0 or NaN before recording (use safe_log)"},
			func(_ *Attrs, x T) (T, error) {
				if c, decided := x.Compare(x.FromInt(0)); !decided || c <= 0 {
					return x, fmt.Errorf("log of %s: raw log requires x > 0; use safe_log for inputs that may be ≤ 0", x)
				}
				return x.Log()
			},
			func(_ *Attrs, x, _ T) (T, error) { return one(x).Div(x) }),
		unaryPrim[T](&OpInfo{Name: "safe_log", Partial: true, ZeroPreserving: true, IR: &IRForm{Tag: "safe_log", MinArity: 2, MaxArity: 2, Doc: "log(softplus(x)+ε), ε the second parent (a scalar); the registry's safe_log with the ε taken from the graph"}, Attrs: []string{"Eps"}, Smooth: true, Doc: "log(softplus(x)+ε) in stable forms; derivative σ(x)/(softplus(x)+ε); softplus(x)+ε ≤ 0 (only ε ≤ 0) is a domain error"},
			func(a *Attrs, x T) (T, error) { return SafeLogScalar(x, safeLogEps[T](a)) },
			func(a *Attrs, x, _ T) (T, error) { return safeLogDeriv(x, safeLogEps[T](a)) }),
		unaryPrim[T](&OpInfo{Name: "inv", Partial: true, IR: &IRForm{Tag: "inv", Doc: "1/x"}, Gen: GenHint{Domain: DomainNonZero, Graph: 38}, Exact: true, Smooth: true, Doc: "1/x; derivative −1/x²"},
			func(_ *Attrs, x T) (T, error) { return one(x).Div(x) },
			func(_ *Attrs, x, _ T) (T, error) {
				q, err := one(x).Div(x.Mul(x))
				return q.Neg(), err
			}),
		unaryPrim[T](&OpInfo{Name: "sin", ZeroPreserving: true, IR: &IRForm{Tag: "sin", Doc: "sin x"}, Gen: GenHint{Graph: 30}, Smooth: true, Doc: "sin x; derivative cos x"},
			func(_ *Attrs, x T) (T, error) { return x.Sin() },
			func(_ *Attrs, x, _ T) (T, error) { return x.Cos() }),
		unaryPrim[T](&OpInfo{Name: "cos", ZeroPreserving: true, IR: &IRForm{Tag: "cos", Doc: "cos x"}, Gen: GenHint{Graph: 31}, Smooth: true, Doc: "cos x; derivative −sin x"},
			func(_ *Attrs, x T) (T, error) { return x.Cos() },
			func(_ *Attrs, x, _ T) (T, error) {
				s, err := x.Sin()
				return s.Neg(), err
			}),
	}
}

// safeLogEps is safe_log's ε as a T: the Eps attribute, 1/1000000 when
// absent.
func safeLogEps[T Scalar[T]](a *Attrs) T { return rc[T](attrRat(a.Eps, big.NewRat(1, 1000000))) }

func clampBounds[T Scalar[T]](a *Attrs) (lo, hi T, err error) {
	if a.Lo == nil || a.Hi == nil {
		return lo, hi, fmt.Errorf("clamp needs both lo and hi")
	}
	if a.Lo.Cmp(a.Hi) > 0 {
		return lo, hi, fmt.Errorf("clamp bounds lo=%s > hi=%s", a.Lo.RatString(), a.Hi.RatString())
	}
	return rc[T](a.Lo), rc[T](a.Hi), nil
}

// binaryPrim is the frame of a two-parent elementwise primitive with
// equal shapes.
func binaryPrim[T Scalar[T]](info *OpInfo,
	f func(a, b T) (T, error),
	jvp func(a, b, y, da, db T) (T, error),
	vjp func(a, b, y, d T) (T, T, error)) *Prim[T] {
	info.MinArity, info.MaxArity, info.Shape = 2, 2, shapeSame
	info.Elementwise = true // Forward is Zip of f: y_i = f(a_i, b_i)
	return &Prim[T]{
		OpInfo: info,
		Binary: &BinaryRule[T]{F: f, JVP: jvp, VJP: vjp},
		Forward: func(_ *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			return Zip(xs[0], xs[1], f)
		},
		JVP: func(_ *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			out := Tensor[T]{Shape: y.Shape.Clone(), Data: make([]T, len(y.Data))}
			for i := range out.Data {
				v, err := jvp(xs[0].Data[i], xs[1].Data[i], y.Data[i], dxs[0].Data[i], dxs[1].Data[i])
				if err != nil {
					return Tensor[T]{}, fmt.Errorf("%s jvp: element %d: %w", info.Name, i, err)
				}
				out.Data[i] = v
			}
			return out, nil
		},
		VJP: func(_ *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			ga := Tensor[T]{Shape: xs[0].Shape.Clone(), Data: make([]T, len(dy.Data))}
			gb := Tensor[T]{Shape: xs[1].Shape.Clone(), Data: make([]T, len(dy.Data))}
			for i := range dy.Data {
				a, b, err := vjp(xs[0].Data[i], xs[1].Data[i], y.Data[i], dy.Data[i])
				if err != nil {
					return nil, fmt.Errorf("%s vjp: element %d: %w", info.Name, i, err)
				}
				ga.Data[i], gb.Data[i] = a, b
			}
			return []Tensor[T]{ga, gb}, nil
		},
	}
}

func binaryAdd[T Scalar[T]]() *Prim[T] {
	return binaryPrim[T](&OpInfo{Name: "add", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "add", Doc: "a+b elementwise (equal shapes; broadcast explicitly)"}, Gen: GenHint{Graph: 1}, Exact: true, Linear: true, Smooth: true, Doc: "a+b"},
		func(a, b T) (T, error) { return a.Add(b), nil },
		func(_, _, _, da, db T) (T, error) { return da.Add(db), nil },
		func(_, _, _, d T) (T, T, error) { return d, d, nil })
}

func binarySub[T Scalar[T]]() *Prim[T] {
	return binaryPrim[T](&OpInfo{Name: "sub", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "sub", Doc: "a−b elementwise"}, Gen: GenHint{Graph: 3}, Exact: true, Linear: true, Smooth: true, Doc: "a−b"},
		func(a, b T) (T, error) { return a.Sub(b), nil },
		func(_, _, _, da, db T) (T, error) { return da.Sub(db), nil },
		func(_, _, _, d T) (T, T, error) { return d, d.Neg(), nil })
}

func binaryMul[T Scalar[T]]() *Prim[T] {
	return binaryPrim[T](&OpInfo{Name: "mul", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "mul_elem", Doc: "a⊙b elementwise"}, Gen: GenHint{Degree: DegreeSum, Graph: 2}, Exact: true, Smooth: true, Doc: "a⊙b"},
		func(a, b T) (T, error) { return a.Mul(b), nil },
		func(a, b, _, da, db T) (T, error) { return da.Mul(b).Add(a.Mul(db)), nil },
		func(a, b, _, d T) (T, T, error) { return d.Mul(b), d.Mul(a), nil })
}

func binaryDiv[T Scalar[T]]() *Prim[T] {
	return binaryPrim[T](&OpInfo{Name: "div", IR: &IRForm{Tag: "div", Superset: true, Doc: "a/b elementwise (equal shapes)"}, Partial: true, Gen: GenHint{Domain: DomainNonZero, Degree: DegreeSum, Graph: 39}, Exact: true, Smooth: true, Doc: "a/b; vjp (δ/b, −δ⊙a/(b⊙b))"},
		func(a, b T) (T, error) { return a.Div(b) },
		func(a, b, _, da, db T) (T, error) {
			p, err := da.Div(b)
			if err != nil {
				return p, err
			}
			q, err := a.Mul(db).Div(b.Mul(b))
			return p.Sub(q), err
		},
		func(a, b, _, d T) (T, T, error) {
			ga, err := d.Div(b)
			if err != nil {
				return ga, ga, err
			}
			gb, err := d.Mul(a).Div(b.Mul(b))
			return ga, gb.Neg(), err
		})
}

// binaryChoice builds max (dir=1) or min (dir=-1): the winner gets weight
// 1, the loser 0, and a tie 0.5/0.5. The weight of a is (1 + dir·sign(a−b))/2.
// tag is its IR tag and graph its place in the graph generator's table.
func binaryChoice[T Scalar[T]](name, tag string, graph int, f func(a, b T) T, dir int64) *Prim[T] {
	weights := func(a, b T) (T, T) {
		h := rc[T](big.NewRat(1, 2))
		s := a.Sub(b).Sign().Mul(a.FromInt(dir))
		wa := h.Add(h.Mul(s))
		return wa, a.FromInt(1).Sub(wa)
	}
	return binaryPrim[T](&OpInfo{Name: name, Exact: true, Ties: "winner 1, loser 0, ties 0.5/0.5", ZeroPreserving: true,
		IR: &IRForm{Tag: tag, Doc: "elementwise " + name}, Gen: GenHint{Graph: graph},
		Doc: "elementwise " + name + "; winner 1, loser 0, ties 0.5/0.5"},
		func(a, b T) (T, error) { return f(a, b), nil },
		func(a, b, _, da, db T) (T, error) {
			wa, wb := weights(a, b)
			return wa.Mul(da).Add(wb.Mul(db)), nil
		},
		func(a, b, _, d T) (T, T, error) {
			wa, wb := weights(a, b)
			return wa.Mul(d), wb.Mul(d), nil
		})
}
