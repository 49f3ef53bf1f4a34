package spec

import (
	"fmt"
	"math/big"
)

// The channel-wise normalisations of imported models: batch_norm_eval
// (moved here from package irsem, which had it forward-only),
// instance_norm and lrn. (The masks, hard_masked_softmax and keep_mask,
// are in ops_mask.go.)
//
// batch_norm_eval. Parents x, μ, σ², and optionally γ, β (each [C], C the
// extent of channel axis Axis; γ = 1 and β = 0 when absent); ε = Eps
// (1/100000 when nil). With s_c = sqrt(max(σ²_c, 0) + ε) and
// q = (x − μ_c)/s_c,
//
//	y = q·γ_c + β_c
//	∂y/∂x = γ_c/s_c,  ∂y/∂μ_c = −γ_c/s_c,  ∂y/∂γ_c = q,  ∂y/∂β_c = 1,
//	∂y/∂σ²_c = −q·γ_c·step(σ²_c) / (2·(max(σ²_c, 0) + ε)),
//
// the last because d(1/s)/dσ² = −1/(2s³) and q/s² = (x−μ)/s³; σ² enters
// through max(σ², 0), whose derivative follows relu′(0) = 0 (so ∂/∂σ² = 0
// where σ² ≤ 0). The per-channel contributions of the VJP sum over every
// position of the channel (left folds from 0 in row-major order). Over
// Rat, s_c is rational only when max(σ²,0)+ε is a square (Partial).
//
// instance_norm (ONNX InstanceNormalization). Parents x [N, C, spatial…]
// (rank ≥ 3), γ, β [C]; ε = Eps. For every (n, c), μ and the biased
// variance σ² are taken over the spatial positions, x̂ = (x − μ)/sqrt(σ²+ε)
// and y = x̂·γ_c + β_c: layer_norm's rules on the [N·C, S] view (S the
// spatial size) with the affine parameters per row's channel. Squares are
// computed as |d|·|d| (the same value, never negative over Interval), here
// and in lrn's sum of squares.
//
// lrn (ONNX LRN over axis 1, rank ≥ 2). With lo = ⌊(size−1)/2⌋,
// hi = ⌈(size−1)/2⌉ and W(c) = [max(0, c−lo), min(C−1, c+hi)],
//
//	S_c = Σ_{i∈W(c)} x_i²,  d_c = bias + (alpha/size)·S_c,  p_c = d_c^(−beta),  y_c = x_c·p_c
//	∂y_c/∂x_j = [c = j]·p_c − 2·beta·(alpha/size)·x_c·p_c/d_c·x_j·[j ∈ W(c)]
//
// at every spatial position separately. d^(−β) = exp(−β·log d) is a real
// power (no exact rational semantics: not Exact), defined for d > 0;
// d ≤ 0 (not decidedly positive) is a DomainError (Partial).

// channelOf is the channel of flat index i for channel extent c and inner
// size inner.
func channelOf(i, c, inner int) int { return (i / inner) % c }

// bnShape checks x and the [C] parameters of batch_norm_eval.
func bnShape(a *Attrs, in []Shape) (Shape, error) {
	ax, err := normAxis(a.Axis, len(in[0]))
	if err != nil {
		return nil, err
	}
	c := Shape{in[0][ax]}
	names := []string{"", "mean", "var", "gamma", "beta"}
	for i := 1; i < len(in); i++ {
		if !in[i].Equal(c) {
			return nil, fmt.Errorf("parent %d (%s) has shape %v, expected %v", i, names[i], in[i], c)
		}
	}
	return in[0].Clone(), nil
}

// bnConsts holds batch_norm_eval's per-channel constants over T.
type bnConsts[T Scalar[T]] struct {
	axis, c, inner  int
	mean, std, vpos []T // vpos = max(σ², 0) + ε = s²
	gamma, beta     []T
	varStep         []T // step(σ²)
}

// newBN computes s_c = sqrt(max(σ²_c, 0) + ε) once per channel; γ and β
// default to 1 and 0.
func newBN[T Scalar[T]](a *Attrs, xs []Tensor[T]) (*bnConsts[T], error) {
	x := xs[0]
	ax, err := normAxis(a.Axis, len(x.Shape))
	if err != nil {
		return nil, err
	}
	c := x.Shape[ax]
	bn := &bnConsts[T]{axis: ax, c: c, inner: max(x.Shape[ax+1:].Size(), 1), mean: xs[1].Data,
		std: make([]T, c), vpos: make([]T, c), varStep: make([]T, c)}
	var z T
	one := z.FromInt(1)
	eps := rc[T](attrRat(a.Eps, DefaultNormEps()))
	for ch, v := range xs[2].Data {
		// Relu, not Max(z): the same value over every scalar, and over duals
		// the declared relu′(0) = 0 at σ² = 0 instead of Max's tie average.
		bn.vpos[ch] = v.Relu().Add(eps)
		s, err := bn.vpos[ch].Sqrt()
		if err != nil {
			return nil, fmt.Errorf("channel %d: sqrt(max(var,0)+eps): %w", ch, err)
		}
		bn.std[ch] = s
		bn.varStep[ch] = v.Step()
	}
	bn.gamma, bn.beta = make([]T, c), make([]T, c)
	for ch := range bn.gamma {
		bn.gamma[ch] = one
		if len(xs) > 3 {
			bn.gamma[ch] = xs[3].Data[ch]
		}
		if len(xs) > 4 {
			bn.beta[ch] = xs[4].Data[ch]
		}
	}
	return bn, nil
}

// q is (x_i − μ_c)/s_c at flat index i.
func (bn *bnConsts[T]) q(x Tensor[T], i int) (int, T, error) {
	ch := channelOf(i, bn.c, bn.inner)
	q, err := x.Data[i].Sub(bn.mean[ch]).Div(bn.std[ch])
	if err != nil {
		return ch, q, fmt.Errorf("element %d: %w", i, err)
	}
	return ch, q, nil
}

// dVar is ∂y/∂σ²_c at flat index i: −q·γ·step(σ²)/(2·(max(σ²,0)+ε)).
func (bn *bnConsts[T]) dVar(ch int, q T) (T, error) {
	num := q.Mul(bn.gamma[ch]).Mul(bn.varStep[ch])
	r, err := num.Div(bn.vpos[ch].Add(bn.vpos[ch]))
	return r.Neg(), err
}

func batchNormPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "batch_norm_eval", MinArity: 3, MaxArity: 5, Attrs: []string{"Axis", "Eps"}, Exact: true, Partial: true,
		Ties: "σ² enters through max(σ², 0): ∂y/∂σ² = 0 where σ² ≤ 0 (relu′(0) = 0)",
		IR: &IRForm{Tag: "batch_norm_eval", MinArity: 1, MaxArity: 1, Attrs: []string{"channel_axis", "channels"},
			Params: []string{"mean", "var", "gamma", "beta", "eps"}, Required: []string{"mean", "var"},
			Doc: "((x−μ)/sqrt(max(σ²,0)+ε))·γ+β per channel, running statistics from the payload"},
		Shape: bnShape,
		Doc:   "((x−μ)/sqrt(max(σ²,0)+ε))·γ+β per channel of Axis; parents (x, μ, σ²[, γ[, β]]), γ=1 and β=0 when absent"}
	return &Prim[T]{OpInfo: info,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			bn, err := newBN(a, xs)
			if err != nil {
				return Tensor[T]{}, err
			}
			x := xs[0]
			y := zerosOf[T](x.Shape)
			for i := range x.Data {
				ch, q, err := bn.q(x, i)
				if err != nil {
					return Tensor[T]{}, err
				}
				y.Data[i] = q.Mul(bn.gamma[ch]).Add(bn.beta[ch])
			}
			return y, nil
		},
		JVP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			bn, err := newBN(a, xs)
			if err != nil {
				return Tensor[T]{}, err
			}
			x := xs[0]
			out := zerosOf[T](x.Shape)
			for i := range x.Data {
				ch, q, err := bn.q(x, i)
				if err != nil {
					return Tensor[T]{}, err
				}
				d, err := dxs[0].Data[i].Sub(dxs[1].Data[ch]).Div(bn.std[ch])
				if err != nil {
					return Tensor[T]{}, fmt.Errorf("element %d: %w", i, err)
				}
				dv, err := bn.dVar(ch, q)
				if err != nil {
					return Tensor[T]{}, fmt.Errorf("element %d: %w", i, err)
				}
				v := d.Mul(bn.gamma[ch]).Add(dv.Mul(dxs[2].Data[ch]))
				if len(xs) > 3 {
					v = v.Add(q.Mul(dxs[3].Data[ch]))
				}
				if len(xs) > 4 {
					v = v.Add(dxs[4].Data[ch])
				}
				out.Data[i] = v
			}
			return out, nil
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			bn, err := newBN(a, xs)
			if err != nil {
				return nil, err
			}
			x := xs[0]
			outs := make([]Tensor[T], len(xs))
			for j := range xs {
				outs[j] = zerosOf[T](xs[j].Shape)
			}
			for i := range x.Data {
				ch, q, err := bn.q(x, i)
				if err != nil {
					return nil, err
				}
				gx, err := dy.Data[i].Mul(bn.gamma[ch]).Div(bn.std[ch])
				if err != nil {
					return nil, fmt.Errorf("element %d: %w", i, err)
				}
				dv, err := bn.dVar(ch, q)
				if err != nil {
					return nil, fmt.Errorf("element %d: %w", i, err)
				}
				outs[0].Data[i] = gx
				outs[1].Data[ch] = outs[1].Data[ch].Sub(gx)
				outs[2].Data[ch] = outs[2].Data[ch].Add(dy.Data[i].Mul(dv))
				if len(xs) > 3 {
					outs[3].Data[ch] = outs[3].Data[ch].Add(dy.Data[i].Mul(q))
				}
				if len(xs) > 4 {
					outs[4].Data[ch] = outs[4].Data[ch].Add(dy.Data[i])
				}
			}
			return outs, nil
		},
	}
}

// inShape checks instance_norm's x [N, C, spatial…] and γ, β [C].
func inShape(_ *Attrs, in []Shape) (Shape, error) {
	x := in[0]
	if len(x) < 3 {
		return nil, fmt.Errorf("input %v must have rank ≥ 3 ([N, C, spatial…])", x)
	}
	if x[2:].Size() == 0 {
		return nil, fmt.Errorf("input %v has no spatial positions to normalise over", x)
	}
	for i := 1; i < len(in); i++ {
		if !in[i].Equal(Shape{x[1]}) {
			return nil, fmt.Errorf("parent %d (γ/β) has shape %v, expected [%d]", i, in[i], x[1])
		}
	}
	return x.Clone(), nil
}

// inView is the [N·C, S] view of instance_norm's input and its channel
// count.
func inView[T Scalar[T]](x Tensor[T]) (Tensor[T], int) {
	s := x.Shape[2:].Size()
	return Tensor[T]{Shape: Shape{x.Shape[0] * x.Shape[1], s}, Data: x.Data}, x.Shape[1]
}

func instanceNormPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "instance_norm", MinArity: 3, MaxArity: 3, Attrs: []string{"Eps"}, Exact: true, Partial: true, Smooth: true, Accumulates: true,
		IR: &IRForm{Tag: "instance_norm", MinArity: 1, MaxArity: 1, Attrs: []string{"channels"},
			Params: []string{"gamma", "beta", "eps"}, Required: []string{"gamma", "beta"}, Superset: true,
			Doc: "ONNX InstanceNormalization: (x−μ)/sqrt(σ²+ε)·γ+β over the spatial axes per (n, c), biased σ²; γ, β [channels], ε default 1/100000"},
		Shape: inShape,
		Doc:   "instance norm of x [N, C, spatial…]: layer_norm over the spatial axes per (n, c), then ·γ_c + β_c"}
	stats := func(a *Attrs, x Tensor[T]) (*lnStats[T], int, int, error) {
		v, c := inView(x)
		st, err := laneStats(a, v, 1, true)
		return st, c, v.Shape[1], err
	}
	return &Prim[T]{OpInfo: info,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			st, c, s, err := stats(a, xs[0])
			if err != nil {
				return Tensor[T]{}, err
			}
			y := zerosOf[T](xs[0].Shape)
			for i := range y.Data {
				ch := (i / s) % c
				y.Data[i] = st.xhat.Data[i].Mul(xs[1].Data[ch]).Add(xs[2].Data[ch])
			}
			return y, nil
		},
		JVP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			st, c, s, err := stats(a, xs[0])
			if err != nil {
				return Tensor[T]{}, err
			}
			out := zerosOf[T](xs[0].Shape)
			var z T
			n := z.FromInt(int64(s))
			for r := 0; r < len(st.invStd); r++ {
				ch := r % c
				var s1, s2 T
				for j := r * s; j < (r+1)*s; j++ {
					s1 = s1.Add(dxs[0].Data[j])
					s2 = s2.Add(st.xhat.Data[j].Mul(dxs[0].Data[j]))
				}
				m1, err := s1.Div(n)
				if err != nil {
					return Tensor[T]{}, err
				}
				m2, err := s2.Div(n)
				if err != nil {
					return Tensor[T]{}, err
				}
				for j := r * s; j < (r+1)*s; j++ {
					dxh := dxs[0].Data[j].Sub(m1).Sub(st.xhat.Data[j].Mul(m2)).Mul(st.invStd[r])
					out.Data[j] = xs[1].Data[ch].Mul(dxh).Add(dxs[1].Data[ch].Mul(st.xhat.Data[j])).Add(dxs[2].Data[ch])
				}
			}
			return out, nil
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			st, c, s, err := stats(a, xs[0])
			if err != nil {
				return nil, err
			}
			outs := []Tensor[T]{zerosOf[T](xs[0].Shape), zerosOf[T](xs[1].Shape), zerosOf[T](xs[2].Shape)}
			var z T
			n := z.FromInt(int64(s))
			dxh := make([]T, s)
			for r := 0; r < len(st.invStd); r++ {
				ch := r % c
				var s1, s2 T
				for k := 0; k < s; k++ {
					j := r*s + k
					dxh[k] = dy.Data[j].Mul(xs[1].Data[ch])
					s1 = s1.Add(dxh[k])
					s2 = s2.Add(dxh[k].Mul(st.xhat.Data[j]))
				}
				m1, err := s1.Div(n)
				if err != nil {
					return nil, err
				}
				m2, err := s2.Div(n)
				if err != nil {
					return nil, err
				}
				for k := 0; k < s; k++ {
					j := r*s + k
					outs[0].Data[j] = dxh[k].Sub(m1).Sub(st.xhat.Data[j].Mul(m2)).Mul(st.invStd[r])
					outs[1].Data[ch] = outs[1].Data[ch].Add(dy.Data[j].Mul(st.xhat.Data[j]))
					outs[2].Data[ch] = outs[2].Data[ch].Add(dy.Data[j])
				}
			}
			return outs, nil
		},
	}
}

// lrnParams returns size, α/size, β and bias as T: the attributes, ONNX's
// defaults α = 1/10000, β = 3/4, bias = 1 when nil; size must be ≥ 1.
func lrnParams[T Scalar[T]](a *Attrs) (size int, k, beta, bias T, err error) {
	if a.Size < 1 {
		return 0, k, beta, bias, fmt.Errorf("lrn size %d must be ≥ 1", a.Size)
	}
	alpha := attrRat(a.Alpha, big.NewRat(1, 10000))
	ks := new(big.Rat).Quo(alpha, big.NewRat(int64(a.Size), 1))
	return a.Size, rc[T](ks), rc[T](attrRat(a.Beta, big.NewRat(3, 4))), rc[T](attrRat(a.Bias, big.NewRat(1, 1))), nil
}

// lrnState holds d and p = d^(−β) per element, and the window bounds.
type lrnState[T Scalar[T]] struct {
	c, inner, lo, hi int
	d, p             []T
	beta, k          T
}

// lrnWindow is the channel window [max(0, c−lo), min(C−1, c+hi)].
func (st *lrnState[T]) window(c int) (int, int) { return max(0, c-st.lo), min(st.c-1, c+st.hi) }

func newLRN[T Scalar[T]](a *Attrs, x Tensor[T]) (*lrnState[T], error) {
	size, k, beta, bias, err := lrnParams[T](a)
	if err != nil {
		return nil, err
	}
	st := &lrnState[T]{c: x.Shape[1], inner: max(x.Shape[2:].Size(), 1), lo: (size - 1) / 2, hi: size / 2,
		d: make([]T, len(x.Data)), p: make([]T, len(x.Data)), beta: beta, k: k}
	var z T
	for i := range x.Data {
		ch := channelOf(i, st.c, st.inner)
		base := i - ch*st.inner
		lo, hi := st.window(ch)
		var s T
		for j := lo; j <= hi; j++ {
			v := x.Data[base+j*st.inner].Abs() // |v|·|v| = v·v, and ≥ 0 over Interval too
			s = s.Add(v.Mul(v))
		}
		d := bias.Add(k.Mul(s))
		if c, decided := d.Compare(z); !decided || c <= 0 {
			return nil, fmt.Errorf("element %d: lrn base bias + alpha/size·Σx² = %s is not positive: %w", i, d,
				&DomainError{Op: "lrn", Scalar: KindOf[T](), Reason: "the power d^(−β) needs d > 0"})
		}
		ld, err := d.Log()
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		p, err := beta.Neg().Mul(ld).Exp()
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		st.d[i], st.p[i] = d, p
	}
	return st, nil
}

// coef is 2·β·(α/size)·p/d at element i.
func (st *lrnState[T]) coef(i int) (T, error) {
	two := st.beta.FromInt(2)
	return two.Mul(st.beta).Mul(st.k).Mul(st.p[i]).Div(st.d[i])
}

func lrnShape(a *Attrs, in []Shape) (Shape, error) {
	if len(in[0]) < 2 {
		return nil, fmt.Errorf("input %v must have rank ≥ 2 ([N, C, …], channels on axis 1)", in[0])
	}
	if _, _, _, _, err := lrnParams[F64](a); err != nil {
		return nil, err
	}
	return in[0].Clone(), nil
}

func lrnPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "lrn", MinArity: 1, MaxArity: 1, Attrs: []string{"Size", "Alpha", "Beta", "Bias"}, Partial: true, Smooth: true, Accumulates: true,
		IR: &IRForm{Tag: "lrn", Attrs: []string{"size", "alpha", "beta", "bias"}, Superset: true,
			Doc: "ONNX LRN over axis 1: x/(bias + alpha/size·Σ_window x²)^beta, window [c−⌊(size−1)/2⌋, c+⌈(size−1)/2⌉]"},
		Shape: lrnShape,
		// Each output sums the squares of at most min(size, C) channels:
		// that many terms per element, beyond what the parents' element
		// count covers when C is large.
		Contraction: func(a *Attrs, in []Shape) int {
			if len(in) == 0 || len(in[0]) < 2 {
				return 1
			}
			return max(1, min(a.Size, in[0][1]))
		},
		Doc: "ONNX LRN: y = x·(bias + α/size·S)^(−β), S the sum of squares over the channel window; a real power (not exact)"}
	return &Prim[T]{OpInfo: info,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			st, err := newLRN(a, xs[0])
			if err != nil {
				return Tensor[T]{}, err
			}
			y := zerosOf[T](xs[0].Shape)
			for i, v := range xs[0].Data {
				y.Data[i] = v.Mul(st.p[i])
			}
			return y, nil
		},
		JVP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			x, dx := xs[0], dxs[0]
			st, err := newLRN(a, x)
			if err != nil {
				return Tensor[T]{}, err
			}
			out := zerosOf[T](x.Shape)
			for i := range x.Data {
				ch := channelOf(i, st.c, st.inner)
				base := i - ch*st.inner
				lo, hi := st.window(ch)
				var s T
				for j := lo; j <= hi; j++ {
					s = s.Add(x.Data[base+j*st.inner].Mul(dx.Data[base+j*st.inner]))
				}
				cf, err := st.coef(i)
				if err != nil {
					return Tensor[T]{}, fmt.Errorf("element %d: %w", i, err)
				}
				out.Data[i] = dx.Data[i].Mul(st.p[i]).Sub(cf.Mul(x.Data[i]).Mul(s))
			}
			return out, nil
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			x := xs[0]
			st, err := newLRN(a, x)
			if err != nil {
				return nil, err
			}
			// w_c = δ_c·x_c·coef_c; g_j = δ_j·p_j − x_j·Σ_{c: j∈W(c)} w_c,
			// and j ∈ W(c) ⇔ c ∈ [j−hi, j+lo].
			w := make([]T, len(x.Data))
			for i := range x.Data {
				cf, err := st.coef(i)
				if err != nil {
					return nil, fmt.Errorf("element %d: %w", i, err)
				}
				w[i] = dy.Data[i].Mul(x.Data[i]).Mul(cf)
			}
			g := zerosOf[T](x.Shape)
			for j := range x.Data {
				ch := channelOf(j, st.c, st.inner)
				base := j - ch*st.inner
				var s T
				for c := max(0, ch-st.hi); c <= min(st.c-1, ch+st.lo); c++ {
					s = s.Add(w[base+c*st.inner])
				}
				g.Data[j] = dy.Data[j].Mul(st.p[j]).Sub(x.Data[j].Mul(s))
			}
			return []Tensor[T]{g}, nil
		},
	}
}

// channelNormPrims lists batch_norm_eval, instance_norm and lrn.
func channelNormPrims[T Scalar[T]]() []*Prim[T] {
	return []*Prim[T]{batchNormPrim[T](), instanceNormPrim[T](), lrnPrim[T]()}
}
