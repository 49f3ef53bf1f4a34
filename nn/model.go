package nn

import (
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/typedgraph"
)

// Layer is one layer of a Sequential model: Linear, ReLU, Dropout or
// BatchNorm. Layers are plain configuration; the forward pass is written
// once against typedgraph.Ops (see Forward), so the same text runs eagerly
// on a tape and is recorded once as a typed graph.
type Layer interface {
	// Kind names the layer ("linear", "relu", "dropout", "batchnorm").
	Kind() string
}

// Linear is y = W·x + b with W[Out, In], b[Out]. Its forward is built from
// reshape → permute(W) → matmul → broadcast_to(b) → add → reshape, so a CPU
// run selects exactly the reshape, permute, matmul, broadcast_to and add
// capsules.
type Linear struct{ In, Out int }

// ReLU is max(x, 0) with relu'(0) = 0.
type ReLU struct{}

// Dropout zeroes each element with probability P in train mode (scaling
// the survivors by 1/(1−P)) and is the identity in eval mode. The mask is
// drawn once per forward from the trainer's seed stream and the reverse
// pass replays exactly that draw.
type Dropout struct{ P *big.Rat }

// BatchNorm normalises a [N, C] batch per channel. In train mode it uses
// the batch statistics (biased variance) and updates the running
// statistics, running ← (1−Momentum)·running + Momentum·batch; in eval
// mode it uses the running statistics. γ and β are parameters.
type BatchNorm struct {
	C        int
	Eps      *big.Rat
	Momentum *big.Rat
}

// Kind is "linear".
func (Linear) Kind() string { return "linear" }

// Kind is "relu".
func (ReLU) Kind() string { return "relu" }

// Kind is "dropout".
func (Dropout) Kind() string { return "dropout" }

// Kind is "batchnorm".
func (BatchNorm) Kind() string { return "batchnorm" }

// Init names how a parameter is initialised.
type Init int

// Initialisers: Xavier-uniform draws one seed from the stream; zeros and
// ones draw nothing.
const (
	InitXavier Init = iota
	InitZeros
	InitOnes
)

// ParamInfo describes one parameter tensor of a model, in state order.
type ParamInfo struct {
	Name  string
	Shape spec.Shape
	Init  Init
	// FanIn and FanOut feed Xavier initialisation.
	FanIn, FanOut int
}

// Sequential is a stack of layers applied in order.
type Sequential struct {
	Layers []Layer
}

// MLP returns Linear(sizes[0]→sizes[1]), ReLU, …, Linear(→sizes[n−1]): a
// ReLU between consecutive linear layers, none after the last.
func MLP(sizes ...int) *Sequential {
	s := &Sequential{}
	for i := 0; i+1 < len(sizes); i++ {
		if i > 0 {
			s.Layers = append(s.Layers, ReLU{})
		}
		s.Layers = append(s.Layers, Linear{In: sizes[i], Out: sizes[i+1]})
	}
	return s
}

// Params lists the parameters in state order: for each linear layer its
// weight [Out, In] then its bias [Out]; for each batch norm γ then β.
func (s *Sequential) Params() []ParamInfo {
	var ps []ParamInfo
	lin, bn := 0, 0
	for _, l := range s.Layers {
		switch l := l.(type) {
		case Linear:
			lin++
			ps = append(ps,
				ParamInfo{Name: fmt.Sprintf("linear%d.weight", lin), Shape: spec.Shape{l.Out, l.In}, Init: InitXavier, FanIn: l.In, FanOut: l.Out},
				ParamInfo{Name: fmt.Sprintf("linear%d.bias", lin), Shape: spec.Shape{l.Out}, Init: InitZeros})
		case BatchNorm:
			bn++
			ps = append(ps,
				ParamInfo{Name: fmt.Sprintf("batchnorm%d.weight", bn), Shape: spec.Shape{l.C}, Init: InitOnes},
				ParamInfo{Name: fmt.Sprintf("batchnorm%d.bias", bn), Shape: spec.Shape{l.C}, Init: InitZeros})
		}
	}
	return ps
}

// Buffers lists the non-trainable state (batch-norm running mean and
// variance, per batch norm, in layer order).
func (s *Sequential) Buffers() []ParamInfo {
	var bs []ParamInfo
	bn := 0
	for _, l := range s.Layers {
		if l, ok := l.(BatchNorm); ok {
			bn++
			bs = append(bs,
				ParamInfo{Name: fmt.Sprintf("batchnorm%d.running_mean", bn), Shape: spec.Shape{l.C}, Init: InitZeros},
				ParamInfo{Name: fmt.Sprintf("batchnorm%d.running_var", bn), Shape: spec.Shape{l.C}, Init: InitOnes})
		}
	}
	return bs
}

// Validate checks that consecutive layers fit together for an input whose
// last axis has extent in, and returns the output's last-axis extent.
func (s *Sequential) Validate(in int) (int, error) {
	cur := in
	for i, l := range s.Layers {
		switch l := l.(type) {
		case Linear:
			if l.In <= 0 || l.Out <= 0 {
				return 0, fmt.Errorf("layer %d (linear): sizes must be positive, got %d→%d", i, l.In, l.Out)
			}
			if l.In != cur {
				return 0, fmt.Errorf("layer %d (linear): expects %d inputs, previous layer gives %d", i, l.In, cur)
			}
			cur = l.Out
		case BatchNorm:
			if l.C != cur {
				return 0, fmt.Errorf("layer %d (batchnorm): expects %d channels, previous layer gives %d", i, l.C, cur)
			}
		case Dropout:
			if l.P == nil || l.P.Sign() < 0 || l.P.Cmp(big.NewRat(1, 1)) >= 0 {
				return 0, fmt.Errorf("layer %d (dropout): probability must be in [0,1)", i)
			}
		case ReLU:
		default:
			return 0, fmt.Errorf("layer %d: unknown layer kind %q", i, l.Kind())
		}
	}
	return cur, nil
}

func fill[T spec.Scalar[T]](s spec.Shape, v int64) (spec.Tensor[T], error) {
	var z T
	return spec.Full(s, z.FromInt(v))
}

// InitParams initialises the parameters from seed: each Xavier
// initialiser draws the next seed of the stream {seed, counter 0}, zero and
// one initialisers draw nothing.
func InitParams[T spec.Scalar[T]](specs []ParamInfo, seed uint64) ([]spec.Tensor[T], error) {
	stream := &spec.SeedStream{Seed: seed}
	out := make([]spec.Tensor[T], len(specs))
	for i, p := range specs {
		var err error
		switch p.Init {
		case InitXavier:
			out[i], err = XavierUniform[T](stream.Next(), p.Shape, p.FanIn, p.FanOut)
		case InitZeros:
			out[i], err = fill[T](p.Shape, 0)
		case InitOnes:
			out[i], err = fill[T](p.Shape, 1)
		}
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
	}
	return out, nil
}

// Mode is train or eval.
type Mode int

// Modes.
const (
	Train Mode = iota
	Eval
)

// String is "train" or "eval".
func (m Mode) String() string {
	if m == Eval {
		return "eval"
	}
	return "train"
}

// Env supplies what a forward pass reads besides parameters and input:
// the mode, the per-forward dropout masks and batch-norm buffers, each as
// handles of the interpreter.
type Env[R any] struct {
	Mode Mode
	// Masks holds one 0/1 keep mask per dropout layer (train mode only),
	// in layer order; the trainer draws them once per forward.
	Masks []R
	// Buffers holds running mean and variance per batch norm (layer
	// order), used in eval mode.
	Buffers []R
	// BatchStats receives, in train mode, the batch mean and variance
	// handles of each batch norm, so the trainer can update the running
	// statistics after the forward.
	BatchStats []R
}

// Forward runs the model on x (whose shape is xShape: [In] or [N, In])
// with params in Params order, written once against the Ops interface.
func Forward[T spec.Scalar[T], R any](s *Sequential, o typedgraph.Ops[T, R], env *Env[R], params []R, x R, xShape spec.Shape) (R, error) {
	var zero R
	if env == nil {
		env = &Env[R]{Mode: Eval}
	}
	if len(params) != len(s.Params()) {
		return zero, fmt.Errorf("model has %d parameters, got %d", len(s.Params()), len(params))
	}
	if len(xShape) == 0 {
		return zero, fmt.Errorf("input must have rank ≥ 1, got shape %v", xShape)
	}
	cur, shape := x, xShape.Clone()
	pi, mi, bi := 0, 0, 0
	env.BatchStats = env.BatchStats[:0]
	for i, l := range s.Layers {
		var err error
		switch l := l.(type) {
		case Linear:
			cur, err = linearForward(o, cur, shape, params[pi], params[pi+1], l)
			pi += 2
			shape[len(shape)-1] = l.Out
		case ReLU:
			cur, err = o.Apply("relu", nil, cur)
		case Dropout:
			if env.Mode == Train {
				if mi >= len(env.Masks) {
					return zero, fmt.Errorf("layer %d (dropout): no mask supplied for this forward", i)
				}
				if cur, err = o.Apply("mul", nil, cur, env.Masks[mi]); err == nil {
					q := new(big.Rat).Sub(big.NewRat(1, 1), l.P)
					cur, err = o.Apply("scale", &spec.Attrs{C: q.Inv(q)}, cur)
				}
				mi++
			}
		case BatchNorm:
			cur, err = batchNormForward(o, env, cur, shape, params[pi], params[pi+1], l, bi)
			pi += 2
			bi++
		}
		if err != nil {
			return zero, fmt.Errorf("layer %d (%s): %w", i, l.Kind(), err)
		}
	}
	return cur, nil
}

// linearForward is reshape → permute(W) → matmul → broadcast_to(b) → add →
// reshape back to x's leading axes.
func linearForward[T spec.Scalar[T], R any](o typedgraph.Ops[T, R], x R, xShape spec.Shape, w, b R, l Linear) (R, error) {
	var zero R
	rows := spec.Shape(xShape[:len(xShape)-1]).Size()
	x2, err := o.Apply("reshape", &spec.Attrs{Shape: spec.Shape{rows, l.In}}, x)
	if err != nil {
		return zero, err
	}
	wt, err := o.Apply("permute", &spec.Attrs{Perm: []int{1, 0}}, w)
	if err != nil {
		return zero, err
	}
	y, err := o.Apply("matmul", nil, x2, wt)
	if err != nil {
		return zero, err
	}
	bb, err := o.Apply("broadcast_to", &spec.Attrs{Shape: spec.Shape{rows, l.Out}}, b)
	if err != nil {
		return zero, err
	}
	if y, err = o.Apply("add", nil, y, bb); err != nil {
		return zero, err
	}
	out := append(spec.Shape{}, xShape[:len(xShape)-1]...)
	return o.Apply("reshape", &spec.Attrs{Shape: append(out, l.Out)}, y)
}

// batchNormForward normalises x[N, C] per channel.
func batchNormForward[T spec.Scalar[T], R any](o typedgraph.Ops[T, R], env *Env[R], x R, xShape spec.Shape, gamma, beta R, l BatchNorm, idx int) (R, error) {
	var zero R
	if len(xShape) != 2 || xShape[1] != l.C {
		return zero, fmt.Errorf("batchnorm expects [N, %d], got %v", l.C, xShape)
	}
	full := &spec.Attrs{Shape: xShape.Clone()}
	var mean, variance R
	var err error
	if env.Mode == Train {
		if mean, err = o.Apply("reduce_mean", &spec.Attrs{Axis: 0}, x); err != nil {
			return zero, err
		}
		mb, err := o.Apply("broadcast_to", full, mean)
		if err != nil {
			return zero, err
		}
		d, err := o.Apply("sub", nil, x, mb)
		if err != nil {
			return zero, err
		}
		d2, err := o.Apply("square", nil, d)
		if err != nil {
			return zero, err
		}
		if variance, err = o.Apply("reduce_mean", &spec.Attrs{Axis: 0}, d2); err != nil {
			return zero, err
		}
		env.BatchStats = append(env.BatchStats, mean, variance)
	} else {
		if 2*idx+1 >= len(env.Buffers) {
			return zero, fmt.Errorf("batchnorm %d: running statistics not supplied", idx)
		}
		mean, variance = env.Buffers[2*idx], env.Buffers[2*idx+1]
	}
	eps := l.Eps
	if eps == nil {
		eps = spec.DefaultNormEps()
	}
	epsT, err := o.Const("eps", spec.Scalar0(spec.Zero[T]().FromRat(eps)))
	if err != nil {
		return zero, err
	}
	epsB, err := o.Apply("broadcast_to", &spec.Attrs{Shape: spec.Shape{l.C}}, epsT)
	if err != nil {
		return zero, err
	}
	ve, err := o.Apply("add", nil, variance, epsB)
	if err != nil {
		return zero, err
	}
	sd, err := o.Apply("sqrt", nil, ve)
	if err != nil {
		return zero, err
	}
	mb, err := o.Apply("broadcast_to", full, mean)
	if err != nil {
		return zero, err
	}
	sb, err := o.Apply("broadcast_to", full, sd)
	if err != nil {
		return zero, err
	}
	d, err := o.Apply("sub", nil, x, mb)
	if err != nil {
		return zero, err
	}
	xh, err := o.Apply("div", nil, d, sb)
	if err != nil {
		return zero, err
	}
	gb, err := o.Apply("broadcast_to", full, gamma)
	if err != nil {
		return zero, err
	}
	bb, err := o.Apply("broadcast_to", full, beta)
	if err != nil {
		return zero, err
	}
	y, err := o.Apply("mul", nil, xh, gb)
	if err != nil {
		return zero, err
	}
	return o.Apply("add", nil, y, bb)
}
