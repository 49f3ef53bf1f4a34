package spec

import (
	"fmt"
)

// MatmulPlan is torch.matmul's broadcasting and 1-D promotion resolved for
// a pair of shapes: A is promoted to [..., M, K] and B to [..., K, N], the
// batch axes broadcast (aligned on the right, extents of 1 repeat), and
// promoted axes are dropped from the output. Every matmul implementation
// (the registry rule, the fast provider, range traces) resolves shapes
// here.
type MatmulPlan struct {
	M, K, N int
	// Batch is the broadcast batch shape; Out the output shape.
	Batch, Out Shape
	// AIndex and BIndex map each flat batch index to the operand's flat
	// batch index (A's block starts at AIndex[b]·M·K, B's at BIndex[b]·K·N).
	AIndex, BIndex []int
}

// mmPlan is the package-internal name of MatmulPlan.
type mmPlan = MatmulPlan

// PlanMatmul resolves torch.matmul's shapes for operands of shapes a and
// b, or explains why they do not multiply.
func PlanMatmul(a, b Shape) (*MatmulPlan, error) { return planMatmul(a, b) }

func planMatmul(a, b Shape) (*mmPlan, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, fmt.Errorf("matmul needs operands of rank ≥ 1, got %v and %v", a, b)
	}
	p := &mmPlan{}
	pa, pb := a.Clone(), b.Clone()
	dropM, dropN := false, false
	if len(pa) == 1 {
		pa = Shape{1, pa[0]}
		dropM = true
	}
	if len(pb) == 1 {
		pb = Shape{pb[0], 1}
		dropN = true
	}
	p.M, p.K = pa[len(pa)-2], pa[len(pa)-1]
	if pb[len(pb)-2] != p.K {
		return nil, fmt.Errorf("matmul inner dimensions differ: %v · %v (%d vs %d)", a, b, p.K, pb[len(pb)-2])
	}
	p.N = pb[len(pb)-1]
	aBatch, bBatch := pa[:len(pa)-2], pb[:len(pb)-2]
	r := max(len(aBatch), len(bBatch))
	p.Batch = make(Shape, r)
	for i := 0; i < r; i++ {
		da, db := 1, 1
		if j := i - (r - len(aBatch)); j >= 0 {
			da = aBatch[j]
		}
		if j := i - (r - len(bBatch)); j >= 0 {
			db = bBatch[j]
		}
		switch {
		case da == db || db == 1:
			p.Batch[i] = da
		case da == 1:
			p.Batch[i] = db
		default:
			return nil, fmt.Errorf("matmul batch dimensions of %v and %v do not broadcast", a, b)
		}
	}
	p.Out = p.Batch.Clone()
	if !dropM {
		p.Out = append(p.Out, p.M)
	}
	if !dropN {
		p.Out = append(p.Out, p.N)
	}
	if _, err := p.Out.Check(0); err != nil {
		return nil, err
	}
	p.AIndex = broadcastIndex(aBatch, p.Batch)
	p.BIndex = broadcastIndex(bBatch, p.Batch)
	return p, nil
}

// matmulFwd computes C[b,i,j] = Σ_k A[b,i,k]·B[b,k,j] as a left fold from 0.
func matmulFwd[T Scalar[T]](p *mmPlan, a, b Tensor[T]) Tensor[T] {
	out := zerosOf[T](p.Out)
	switch od := any(out.Data).(type) {
	case []F32:
		matmulFwdF32(p, any(a.Data).([]F32), any(b.Data).([]F32), od)
		return out
	case []F64:
		matmulFwdF64(p, any(a.Data).([]F64), any(b.Data).([]F64), od)
		return out
	case []Interval:
		if matmulFwdIv(p, any(a.Data).([]Interval), any(b.Data).([]Interval), od) {
			return out
		}
	}
	// Each element is FoldDot over A's row and B's column (gathered into
	// a transposed copy of B's block): the same left fold from 0.
	mk, kn, mn := p.M*p.K, p.K*p.N, p.M*p.N
	bt := make([]T, kn) // B's block transposed: bt[j*K+k] = B[k,j]
	last := -1
	var zero T
	for t := range p.AIndex {
		ao, bo, co := p.AIndex[t]*mk, p.BIndex[t]*kn, t*mn
		if bo != last {
			transposeInto(bt, b.Data[bo:bo+kn], p.K, p.N)
			last = bo
		}
		if denseMatmul(a.Data[ao:ao+mk], bt, out.Data[co:co+mn], p.M, p.N, p.K) {
			continue
		}
		for i := 0; i < p.M; i++ {
			arow := a.Data[ao+i*p.K : ao+i*p.K+p.K]
			for j := 0; j < p.N; j++ {
				out.Data[co+i*p.N+j] = FoldDot(zero, arow, bt[j*p.K:j*p.K+p.K])
			}
		}
	}
	return out
}

// transposeInto writes the rows×cols row-major block src transposed into
// dst (cols×rows).
func transposeInto[T any](dst, src []T, rows, cols int) {
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			dst[c*rows+r] = src[r*cols+c]
		}
	}
}

// matmulVJP returns dA = δ·Bᵀ and dB = Aᵀ·δ, each a left fold over the
// contracted index, summed over broadcast batches in batch order.
func matmulVJP[T Scalar[T]](p *mmPlan, a, b, d Tensor[T]) (Tensor[T], Tensor[T]) {
	return matmulVJPNeed(p, a, b, d, true, true)
}

// matmulVJPNeed is matmulVJP computing dA only with needA and dB only with
// needB (the other nil), by the same folds.
func matmulVJPNeed[T Scalar[T]](p *mmPlan, a, b, d Tensor[T], needA, needB bool) (Tensor[T], Tensor[T]) {
	da, db := zerosOf[T](a.Shape), zerosOf[T](b.Shape)
	if dd, ok := any(da.Data).([]F32); ok {
		matmulVJPF32(p, any(a.Data).([]F32), any(b.Data).([]F32), any(d.Data).([]F32), dd, any(db.Data).([]F32))
		return keep(da, needA), keep(db, needB)
	}
	// Each fold is FoldDot over contiguous rows: dA's over δ's row and
	// B's row, dB's over the columns of A and δ (transposed copies).
	mk, kn, mn := p.M*p.K, p.K*p.N, p.M*p.N
	at := make([]T, mk) // A's block transposed: at[k*M+i] = A[i,k]
	dt := make([]T, mn) // δ's block transposed: dt[j*M+i] = δ[i,j]
	var zero T
	for bt := range p.AIndex {
		ao, bo, co := p.AIndex[bt]*mk, p.BIndex[bt]*kn, bt*mn
		for i := 0; i < p.M && needA; i++ {
			drow := d.Data[co+i*p.N : co+i*p.N+p.N]
			for k := 0; k < p.K; k++ {
				acc := FoldDot(zero, drow, b.Data[bo+k*p.N:bo+k*p.N+p.N])
				da.Data[ao+i*p.K+k] = da.Data[ao+i*p.K+k].Add(acc)
			}
		}
		if !needB {
			continue
		}
		transposeInto(at, a.Data[ao:ao+mk], p.M, p.K)
		transposeInto(dt, d.Data[co:co+mn], p.M, p.N)
		for k := 0; k < p.K; k++ {
			acol := at[k*p.M : k*p.M+p.M]
			for j := 0; j < p.N; j++ {
				acc := FoldDot(zero, acol, dt[j*p.M:j*p.M+p.M])
				db.Data[bo+k*p.N+j] = db.Data[bo+k*p.N+j].Add(acc)
			}
		}
	}
	return keep(da, needA), keep(db, needB)
}

// keep is t, or the absent tensor (nil Data) without need.
func keep[T any](t Tensor[T], need bool) Tensor[T] {
	if !need {
		return Tensor[T]{}
	}
	return t
}

func matmulPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "matmul", Contraction: lastAxis, Accumulates: true, ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "matmul", Doc: "torch.matmul (batch broadcasting, 1-D promotion), left folds from 0"}, Gen: GenHint{Degree: DegreeSum, Graph: 22}, Providers: []string{ProviderFastCPU}, MinArity: 2, MaxArity: 2, Exact: true, Smooth: true,
		Doc:      "torch.matmul (batch broadcasting, 1-D promotion); fixed left folds",
		LinearIn: &LinearJac{X: 0, Matrix: 1, InnerOut: true},
		Shape: func(_ *Attrs, in []Shape) (Shape, error) {
			p, err := planMatmul(in[0], in[1])
			if err != nil {
				return nil, err
			}
			return p.Out, nil
		}}
	return &Prim[T]{
		OpInfo: info,
		Forward: func(_ *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			p, err := planMatmul(xs[0].Shape, xs[1].Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			return matmulFwd(p, xs[0], xs[1]), nil
		},
		JVP: func(_ *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			p, err := planMatmul(xs[0].Shape, xs[1].Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			return AddT(matmulFwd(p, dxs[0], xs[1]), matmulFwd(p, xs[0], dxs[1]))
		},
		VJP: func(_ *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			p, err := planMatmul(xs[0].Shape, xs[1].Shape)
			if err != nil {
				return nil, err
			}
			da, db := matmulVJP(p, xs[0], xs[1], dy)
			return []Tensor[T]{da, db}, nil
		},
		VJPMasked: func(_ *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T], need []bool) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			p, err := planMatmul(xs[0].Shape, xs[1].Shape)
			if err != nil {
				return nil, err
			}
			da, db := matmulVJPNeed(p, xs[0], xs[1], dy, needs(need, 0), needs(need, 1))
			return []Tensor[T]{da, db}, nil
		},
	}
}

// linearShape checks x[..., in], W[out, in], b[out] and returns x's shape
// with the last axis replaced by out.
func linearShape(_ *Attrs, in []Shape) (Shape, error) {
	x, w, b := in[0], in[1], in[2]
	if len(w) != 2 {
		return nil, fmt.Errorf("weight must be [out,in], got %v", w)
	}
	if len(b) != 1 || b[0] != w[0] {
		return nil, fmt.Errorf("bias has shape %v, expected [%d]", b, w[0])
	}
	if len(x) == 0 || x[len(x)-1] != w[1] {
		return nil, fmt.Errorf("input has shape %v, expected last axis %d", x, w[1])
	}
	out := x.Clone()
	out[len(out)-1] = w[0]
	return out, nil
}

// linearFwd computes y[r,j] = (Σ_k x[r,k]·W[j,k]) + b[j], the sum a left
// fold from +0 and the bias added last.
func linearFwd[T Scalar[T]](x, w, b Tensor[T], withBias bool) Tensor[T] {
	out, in := w.Shape[0], w.Shape[1]
	s := x.Shape.Clone()
	s[len(s)-1] = out
	y := zerosOf[T](s)
	rows := 1
	if in > 0 {
		rows = len(x.Data) / in
	} else {
		rows = len(y.Data) / max(out, 1)
	}
	if yd, ok := any(y.Data).([]F32); ok {
		var bb []F32
		if withBias {
			bb = any(b.Data).([]F32)
		}
		linearFwdF32(any(x.Data).([]F32), any(w.Data).([]F32), bb, yd, rows, out, in)
		return y
	}
	if yd, ok := any(y.Data).([]Interval); ok {
		var bb []Interval
		if withBias {
			bb = any(b.Data).([]Interval)
		}
		if linearFwdIv(any(x.Data).([]Interval), any(w.Data).([]Interval), bb, yd, rows, out, in, withBias) {
			return y
		}
	}
	var zero T
	if d, ok := any(zero).(DenseLinear[T]); ok && rows*out*in >= ivDense {
		var bb []T
		if withBias {
			bb = b.Data
		}
		if d.LinearDense(x.Data[:rows*in], nil, w.Data, bb, y.Data, rows, out, in, withBias) {
			return y
		}
	}
	for r := 0; r < rows; r++ {
		xrow := x.Data[r*in : r*in+in]
		for j := 0; j < out; j++ {
			acc := FoldDot(zero, xrow, w.Data[j*in:j*in+in])
			if withBias {
				acc = acc.Add(b.Data[j])
			}
			y.Data[r*out+j] = acc
		}
	}
	return y
}

func linearPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "linear", Contraction: lastAxis, Accumulates: true, ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "linear", MinArity: 1, MaxArity: 1, Params: []string{"W", "b"}, Required: []string{"W", "b"}, Doc: "Wx+b over the last axis; W[out,in] and b[out] from the payload"}, Gen: GenHint{Graph: 23}, Providers: []string{ProviderFastCPU}, MinArity: 3, MaxArity: 3, Exact: true, Smooth: true, Shape: linearShape,
		LinearIn: &LinearJac{X: 0, Matrix: 1},
		Doc:      "Wx+b over the last axis of x; parents (x, W[out,in], b[out])"}
	p := &Prim[T]{
		OpInfo: info,
		Forward: func(_ *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			return linearFwd(xs[0], xs[1], xs[2], true), nil
		},
		JVP: func(_ *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			// dW·x + db + W·dx
			t1 := linearFwd(xs[0], dxs[1], dxs[2], true)
			t2 := linearFwd(dxs[0], xs[1], xs[2], false)
			return AddT(t1, t2)
		},
		VJP: func(_ *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			x, w := xs[0], xs[1]
			out, in := w.Shape[0], w.Shape[1]
			rows := len(dy.Data) / max(out, 1)
			if out == 0 && in > 0 {
				rows = len(x.Data) / in
			}
			dx, dw, db := zerosOf[T](x.Shape), zerosOf[T](w.Shape), zerosOf[T](xs[2].Shape)
			if dyd, ok := any(dy.Data).([]F32); ok {
				linearVJPF32(any(x.Data).([]F32), any(w.Data).([]F32), dyd, any(dx.Data).([]F32), any(dw.Data).([]F32), any(db.Data).([]F32), rows, out, in)
				return []Tensor[T]{dx, dw, db}, nil
			}
			if dyd, ok := any(dy.Data).([]Interval); ok && linearVJPIv(any(x.Data).([]Interval), any(w.Data).([]Interval), dyd, any(dx.Data).([]Interval), any(dw.Data).([]Interval), any(db.Data).([]Interval), rows, out, in) {
				return []Tensor[T]{dx, dw, db}, nil
			}
			linearVJP(x.Data, w.Data, dy.Data, dx.Data, dw.Data, db.Data, rows, out, in)
			return []Tensor[T]{dx, dw, db}, nil
		},
	}
	p.VJPMasked = func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T], need []bool) ([]Tensor[T], error) {
		var zero T
		switch any(zero).(type) {
		case F32, Interval: // the fast paths compute all three
			dxs, err := p.VJP(a, xs, y, dy)
			if err != nil {
				return nil, err
			}
			return masked(dxs, need), nil
		}
		if err := checkCotangent(info.Name, y, dy); err != nil {
			return nil, err
		}
		x, w := xs[0], xs[1]
		out, in := w.Shape[0], w.Shape[1]
		rows := len(dy.Data) / max(out, 1)
		if out == 0 && in > 0 {
			rows = len(x.Data) / in
		}
		nx, nw, nb := needs(need, 0), needs(need, 1), needs(need, 2)
		dxs := []Tensor[T]{{}, {}, {}}
		for t, sh := range []Shape{x.Shape, w.Shape, xs[2].Shape} {
			if needs(need, t) {
				dxs[t] = zerosOf[T](sh)
			}
		}
		linearVJPNeed(x.Data, w.Data, dy.Data, dxs[0].Data, dxs[1].Data, dxs[2].Data, rows, out, in, nx, nw, nb)
		return dxs, nil
	}
	return p
}

// linearVJP is the generic linear VJP: dx[r,k] = Σ_j W[j,k]·δ[r,j] (a
// left fold over j from 0), dW[j,k] = Σ_r δ[r,j]·x[r,k] and db[j] =
// Σ_r δ[r,j] (left folds over the rows from 0), each inner product a
// FoldDot over contiguous slices (W, and for several rows δ and x,
// transposed).
func linearVJP[T Scalar[T]](x, w, dy, dx, dw, db []T, rows, out, in int) {
	linearVJPNeed(x, w, dy, dx, dw, db, rows, out, in, true, true, true)
}

// linearVJPNeed is linearVJP computing dx only with needX, dW only with
// needW and db only with needB, by the same folds.
func linearVJPNeed[T Scalar[T]](x, w, dy, dx, dw, db []T, rows, out, in int, needX, needW, needB bool) {
	var zero T
	_, isRat := any(zero).(Rat)
	if needX && rows == 1 && !isRat {
		// One row: every dx[k] is the fold over j from 0 of W[j,k]·δ[j],
		// run for all k at once with j outermost — each k's operations
		// and their order are FoldDot's, without a transposed copy of W.
		for k := 0; k < in; k++ {
			dx[k] = zero
		}
		for j := 0; j < out; j++ {
			d, wrow := dy[j], w[j*in:j*in+in]
			for k := range wrow {
				dx[k] = dx[k].Add(wrow[k].Mul(d))
			}
		}
	} else if needX {
		wt := make([]T, in*out) // wt[k*out+j] = W[j,k]
		transposeInto(wt, w, out, in)
		for r := 0; r < rows; r++ {
			drow := dy[r*out : r*out+out]
			for k := 0; k < in; k++ {
				dx[r*in+k] = FoldDot(zero, wt[k*out:k*out+out], drow)
			}
		}
	}
	for j := 0; j < out && needB; j++ {
		for r := 0; r < rows; r++ {
			db[j] = db[j].Add(dy[r*out+j])
		}
	}
	if !needW {
		return
	}
	if rows == 1 {
		if dwr, ok := any(dw).([]Rat); ok {
			// 0 + δ[j]·x[k] is δ[j]·x[k] over Rat.
			ratOuter(dwr, any(dy).([]Rat), any(x).([]Rat))
			return
		}
		for j := 0; j < out; j++ {
			for k := 0; k < in; k++ {
				dw[j*in+k] = zero.Add(dy[j].Mul(x[k]))
			}
		}
		return
	}
	dt := make([]T, out*rows) // dt[j*rows+r] = δ[r,j]
	xt := make([]T, in*rows)  // xt[k*rows+r] = x[r,k]
	transposeInto(dt, dy[:rows*out], rows, out)
	transposeInto(xt, x[:rows*in], rows, in)
	for j := 0; j < out; j++ {
		dcol := dt[j*rows : j*rows+rows]
		for k := 0; k < in; k++ {
			dw[j*in+k] = FoldDot(zero, dcol, xt[k*rows:k*rows+rows])
		}
	}
}

// lastAxis is the extent of the first parent's last axis (1 for a scalar):
// the inner dimension that matmul and linear contract.
func lastAxis(_ *Attrs, in []Shape) int {
	if len(in) == 0 || len(in[0]) == 0 {
		return 1
	}
	return in[0][len(in[0])-1]
}
