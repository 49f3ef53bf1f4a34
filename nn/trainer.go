package nn

import (
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	"github.com/tlcheck/tlcheck/typedgraph"
)

// Execution selects how the trainer computes a loss and its gradient.
type Execution string

// Executions.
const (
	// Eager records a fresh tape for every evaluation: each operation
	// selects a kernel capsule and appends a node at once.
	Eager Execution = "eager"
	// TypedGraph records the loss graph once (per input shape and mode)
	// and reuses its compiled plan for every step: no per-step closures,
	// no per-step recording.
	TypedGraph Execution = "typed-graph"
)

// ParseExecution validates an execution name.
func ParseExecution(s string) (Execution, error) {
	switch Execution(s) {
	case Eager, TypedGraph:
		return Execution(s), nil
	}
	return "", fmt.Errorf("unknown execution %q (want eager|typed-graph)", s)
}

// Config configures a Trainer.
type Config[T spec.Scalar[T]] struct {
	Model     *Sequential
	InDim     int       // extent of the input's last axis
	Seed      uint64    // parameter initialisation and dropout draws
	Execution Execution // eager or typed-graph
	Optimizer Optimizer[T]
	// NewSelector, when set, is called once per eager session and returns
	// the capsule-selection hook for that session (the backend's
	// selection, which may print its report). Typed-graph execution does
	// not consult it.
	NewSelector func() (func(op string) error, error)
}

// Trainer trains a Sequential model one sample at a time with MSE loss.
type Trainer[T spec.Scalar[T]] struct {
	cfg     Config[T]
	params  []spec.Tensor[T]
	buffers []spec.Tensor[T]
	nDrop   int
	dropRNG spec.SeedStream
	mode    Mode
	// one compiled plan per (mode, input shape); a typed-graph trainer
	// records each at most once.
	plans   map[string]*typedgraph.Exec[T]
	statIDs map[string][]int
	// Recordings counts graph recordings (for tests and benchmarks).
	Recordings int
	cur        *eagerSession[T]
}

// NewTrainer initialises the model's parameters from cfg.Seed.
func NewTrainer[T spec.Scalar[T]](cfg Config[T]) (*Trainer[T], error) {
	if cfg.Model == nil {
		return nil, fmt.Errorf("trainer: no model")
	}
	if _, err := cfg.Model.Validate(cfg.InDim); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	if _, err := ParseExecution(string(cfg.Execution)); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	if cfg.Optimizer == nil {
		cfg.Optimizer = DefaultAdam[T]()
	}
	params, err := InitParams[T](cfg.Model.Params(), cfg.Seed)
	if err != nil {
		return nil, err
	}
	buffers, err := InitParams[T](cfg.Model.Buffers(), cfg.Seed)
	if err != nil {
		return nil, err
	}
	t := &Trainer[T]{cfg: cfg, params: params, buffers: buffers, plans: map[string]*typedgraph.Exec[T]{}, statIDs: map[string][]int{}}
	for _, l := range cfg.Model.Layers {
		if _, ok := l.(Dropout); ok {
			t.nDrop++
		}
	}
	// Dropout draws come from their own stream, so initialisation
	// (counters 0, 1, …) is unaffected by how many masks are drawn.
	t.dropRNG = spec.SeedStream{Seed: spec.SplitMix64(cfg.Seed ^ 0xd50), Counter: 0}
	return t, nil
}

// Params returns the current parameters (in Params order); callers must
// not modify them.
func (t *Trainer[T]) Params() []spec.Tensor[T] { return t.params }

// Buffers returns the current non-trainable state.
func (t *Trainer[T]) Buffers() []spec.Tensor[T] { return t.buffers }

// SetMode switches between train and eval mode.
func (t *Trainer[T]) SetMode(m Mode) { t.mode = m }

// Mode is the current mode.
func (t *Trainer[T]) Mode() Mode { return t.mode }

// masks draws one fresh 0/1 keep mask per dropout layer for a forward on
// input shape xShape (train mode only).
func (t *Trainer[T]) masks(xShape spec.Shape) ([]spec.Tensor[T], error) {
	if t.mode != Train || t.nDrop == 0 {
		return nil, nil
	}
	var out []spec.Tensor[T]
	shape := xShape.Clone()
	for _, l := range t.cfg.Model.Layers {
		switch l := l.(type) {
		case Linear:
			shape[len(shape)-1] = l.Out
		case Dropout:
			m, err := spec.Default[T]().Lookup("bernoulli_mask")
			if err != nil {
				return nil, err
			}
			z, err := spec.Zeros[T](shape)
			if err != nil {
				return nil, err
			}
			mask, err := m.Apply(&spec.Attrs{P: l.P, Seed: t.dropRNG.Next()}, []spec.Tensor[T]{z})
			if err != nil {
				return nil, err
			}
			out = append(out, mask)
		}
	}
	return out, nil
}

// eagerSession is one eager recording session: a tape session plus the
// capsule-selection hook of that session.
type eagerSession[T spec.Scalar[T]] struct {
	e *typedgraph.Eager[T]
}

// BeginSession starts a new eager session (a new backend banner when a
// selector is configured); later evaluations record into it, resetting
// its tape between evaluations. Typed-graph execution ignores sessions.
func (t *Trainer[T]) BeginSession() error {
	if t.cfg.Execution != Eager {
		return nil
	}
	e := typedgraph.NewEager[T](nil)
	if t.cfg.NewSelector != nil {
		sel, err := t.cfg.NewSelector()
		if err != nil {
			return err
		}
		e.Select = sel
	}
	t.cur = &eagerSession[T]{e: e}
	return nil
}

// evaluation is the result of one forward (and optional backward).
type evaluation[T spec.Scalar[T]] struct {
	out   spec.Tensor[T]   // the model output, or the loss when a target was given
	grads []spec.Tensor[T] // parameter gradients (when requested)
	stats []spec.Tensor[T] // batch-norm batch statistics (train mode)
}

// run evaluates the model on x (and the MSE loss against y when y is not
// nil), with parameter gradients when grad is set.
func (t *Trainer[T]) run(x spec.Tensor[T], y *spec.Tensor[T], grad bool) (*evaluation[T], error) {
	if len(x.Shape) == 0 || x.Shape[len(x.Shape)-1] != t.cfg.InDim {
		return nil, fmt.Errorf("input has shape %v, expected last axis %d", x.Shape, t.cfg.InDim)
	}
	masks, err := t.masks(x.Shape)
	if err != nil {
		return nil, err
	}
	if t.cfg.Execution == TypedGraph {
		return t.runGraph(x, y, masks, grad)
	}
	return t.runEager(x, y, masks, grad)
}

func (t *Trainer[T]) runEager(x spec.Tensor[T], y *spec.Tensor[T], masks []spec.Tensor[T], grad bool) (*evaluation[T], error) {
	if t.cur == nil {
		if err := t.BeginSession(); err != nil {
			return nil, err
		}
	}
	e := t.cur.e
	e.Session.Reset()
	s := e.Session
	specs := t.cfg.Model.Params()
	prefs := make([]tape.Ref, len(t.params))
	for i, p := range t.params {
		r, err := s.Param(specs[i].Name, p)
		if err != nil {
			return nil, err
		}
		prefs[i] = r
	}
	env := &Env[tape.Ref]{Mode: t.mode}
	for i, b := range t.buffers {
		r, err := s.Const(t.cfg.Model.Buffers()[i].Name, b)
		if err != nil {
			return nil, err
		}
		env.Buffers = append(env.Buffers, r)
	}
	for _, m := range masks {
		r, err := s.Const("dropout.mask", m)
		if err != nil {
			return nil, err
		}
		env.Masks = append(env.Masks, r)
	}
	xr, err := s.Input("x", x)
	if err != nil {
		return nil, err
	}
	out, err := Forward(t.cfg.Model, typedgraph.Ops[T, tape.Ref](e), env, prefs, xr, x.Shape)
	if err != nil {
		return nil, err
	}
	if y != nil {
		yr, err := s.Input("y", *y)
		if err != nil {
			return nil, err
		}
		if out, err = e.Apply("mse_loss", nil, out, yr); err != nil {
			return nil, err
		}
	}
	ev := &evaluation[T]{}
	if ev.out, err = s.Value(out); err != nil {
		return nil, err
	}
	for _, r := range env.BatchStats {
		v, err := s.Value(r)
		if err != nil {
			return nil, err
		}
		ev.stats = append(ev.stats, v)
	}
	if grad {
		g, err := s.Backward(out)
		if err != nil {
			return nil, err
		}
		for i, r := range prefs {
			v, ok, err := s.Grad(g, r)
			if err != nil {
				return nil, err
			}
			if !ok {
				v = spec.ZerosLike(t.params[i])
			}
			ev.grads = append(ev.grads, v)
		}
	}
	return ev, nil
}

// planKey identifies a recorded graph: the mode, whether it ends in a
// loss, and the input shape.
func planKey(m Mode, loss bool, xs spec.Shape) string {
	return fmt.Sprintf("%s/%t/%v", m, loss, xs)
}

// record traces the model (and loss) once over the context
// params ++ buffers ++ masks ++ x (++ y) and compiles the plan.
func (t *Trainer[T]) record(xShape spec.Shape, loss bool, nMasks int, maskShapes []spec.Shape) (*typedgraph.Exec[T], []int, error) {
	b := typedgraph.NewBuilder[T](nil)
	specs := t.cfg.Model.Params()
	pv := make([]typedgraph.Var, len(specs))
	for i, p := range specs {
		v, err := b.Input(p.Name, p.Shape)
		if err != nil {
			return nil, nil, err
		}
		pv[i] = v
	}
	env := &Env[typedgraph.Var]{Mode: t.mode}
	for _, bs := range t.cfg.Model.Buffers() {
		v, err := b.Input(bs.Name, bs.Shape)
		if err != nil {
			return nil, nil, err
		}
		env.Buffers = append(env.Buffers, v)
	}
	for i := 0; i < nMasks; i++ {
		v, err := b.Input("dropout.mask", maskShapes[i])
		if err != nil {
			return nil, nil, err
		}
		env.Masks = append(env.Masks, v)
	}
	xv, err := b.Input("x", xShape)
	if err != nil {
		return nil, nil, err
	}
	var yv typedgraph.Var
	if loss {
		outDim, _ := t.cfg.Model.Validate(t.cfg.InDim)
		ys := xShape.Clone()
		ys[len(ys)-1] = outDim
		if yv, err = b.Input("y", ys); err != nil {
			return nil, nil, err
		}
	}
	out, err := Forward(t.cfg.Model, typedgraph.Ops[T, typedgraph.Var](b), env, pv, xv, xShape)
	if err != nil {
		return nil, nil, err
	}
	if loss {
		if out, err = b.Apply("mse_loss", nil, out, yv); err != nil {
			return nil, nil, err
		}
	}
	g, err := b.Finish(out)
	if err != nil {
		return nil, nil, err
	}
	ex, err := g.Compile()
	if err != nil {
		return nil, nil, err
	}
	// Only parameters receive gradients; buffers, masks and data do not.
	mask := make([]bool, g.CtxLen())
	for i := range specs {
		mask[i] = true
	}
	if err := ex.SetRequiresGrad(mask); err != nil {
		return nil, nil, err
	}
	stats := make([]int, len(env.BatchStats))
	for i, v := range env.BatchStats {
		stats[i] = v.ID()
	}
	t.Recordings++
	return ex, stats, nil
}

func (t *Trainer[T]) runGraph(x spec.Tensor[T], y *spec.Tensor[T], masks []spec.Tensor[T], grad bool) (*evaluation[T], error) {
	key := planKey(t.mode, y != nil, x.Shape)
	ex, ok := t.plans[key]
	var statIDs []int
	if !ok {
		shapes := make([]spec.Shape, len(masks))
		for i, m := range masks {
			shapes[i] = m.Shape
		}
		var err error
		if ex, statIDs, err = t.record(x.Shape, y != nil, len(masks), shapes); err != nil {
			return nil, err
		}
		t.plans[key] = ex
		t.statIDs[key] = statIDs
	} else {
		statIDs = t.statIDs[key]
	}
	ctx := make([]spec.Tensor[T], 0, len(t.params)+len(t.buffers)+len(masks)+2)
	ctx = append(ctx, t.params...)
	ctx = append(ctx, t.buffers...)
	ctx = append(ctx, masks...)
	ctx = append(ctx, x)
	if y != nil {
		ctx = append(ctx, *y)
	}
	out, err := ex.Forward(ctx)
	if err != nil {
		return nil, err
	}
	ev := &evaluation[T]{out: out}
	for _, id := range statIDs {
		v, err := ex.Value(id)
		if err != nil {
			return nil, err
		}
		ev.stats = append(ev.stats, v.Clone())
	}
	if grad {
		gs, err := ex.Backward(spec.Scalar0(spec.One[T]()))
		if err != nil {
			return nil, err
		}
		ev.grads = gs[:len(t.params)]
	}
	ev.out = out.Clone()
	return ev, nil
}

// updateRunning folds the batch statistics into the running statistics:
// running ← (1−m)·running + m·batch.
func (t *Trainer[T]) updateRunning(stats []spec.Tensor[T]) {
	bn := 0
	for _, l := range t.cfg.Model.Layers {
		l, ok := l.(BatchNorm)
		if !ok {
			continue
		}
		m := l.Momentum
		if m == nil {
			m = big.NewRat(1, 10)
		}
		var z T
		mt := z.FromRat(m)
		keep := z.FromInt(1).Sub(mt)
		for k := 0; k < 2; k++ {
			run, batch := t.buffers[2*bn+k], stats[2*bn+k]
			for i := range run.Data {
				run.Data[i] = keep.Mul(run.Data[i]).Add(mt.Mul(batch.Data[i]))
			}
		}
		bn++
	}
}

// Step runs one training step on (x, y) in train mode: forward, MSE loss,
// reverse pass, optimiser update; it returns the step's pre-update loss.
func (t *Trainer[T]) Step(x, y spec.Tensor[T]) (T, error) {
	var zero T
	prev := t.mode
	t.mode = Train
	defer func() { t.mode = prev }()
	ev, err := t.run(x, &y, true)
	if err != nil {
		return zero, err
	}
	if len(ev.stats) > 0 {
		t.updateRunning(ev.stats)
	}
	if err := t.cfg.Optimizer.Step(t.params, ev.grads); err != nil {
		return zero, err
	}
	return ev.out.Data[0], nil
}

// Loss evaluates the MSE loss on (x, y) in eval mode.
func (t *Trainer[T]) Loss(x, y spec.Tensor[T]) (T, error) {
	var zero T
	prev := t.mode
	t.mode = Eval
	defer func() { t.mode = prev }()
	ev, err := t.run(x, &y, false)
	if err != nil {
		return zero, err
	}
	return ev.out.Data[0], nil
}

// Predict evaluates the model on x in eval mode.
func (t *Trainer[T]) Predict(x spec.Tensor[T]) (spec.Tensor[T], error) {
	prev := t.mode
	t.mode = Eval
	defer func() { t.mode = prev }()
	ev, err := t.run(x, nil, false)
	if err != nil {
		return spec.Tensor[T]{}, err
	}
	return ev.out, nil
}

// Gradients evaluates the loss on (x, y) in the current mode and returns
// it with the parameter gradients, without updating anything.
func (t *Trainer[T]) Gradients(x, y spec.Tensor[T]) (T, []spec.Tensor[T], error) {
	var zero T
	ev, err := t.run(x, &y, true)
	if err != nil {
		return zero, nil, err
	}
	gs := make([]spec.Tensor[T], len(ev.grads))
	for i, g := range ev.grads {
		gs[i] = g.Clone()
	}
	return ev.out.Data[0], gs, nil
}
