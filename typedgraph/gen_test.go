package typedgraph_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	tg "github.com/tlcheck/tlcheck/typedgraph"
)

// A recipe is a scalar-independent random graph: a context of shapes and a
// list of steps, each a primitive over earlier entries. It can be built as
// a Graph over any scalar, run as a Program under either interpreter, and
// recorded eagerly on a tape.
type recipe struct {
	ctx    []spec.Shape
	steps  []step
	shapes []spec.Shape // every entry
	result int
}

type step struct {
	op    string
	attrs *spec.Attrs
	in    []int
	// val is the value of a "const" step (Attrs.Values hold it too).
	val []*big.Rat
}

func (rc *recipe) String() string {
	s := fmt.Sprintf("ctx=%v", rc.ctx)
	for k, st := range rc.steps {
		s += fmt.Sprintf("\n  %d: %s%v -> %v", len(rc.ctx)+k, st.op, st.in, rc.shapes[len(rc.ctx)+k])
	}
	return s + fmt.Sprintf("\n  result %d", rc.result)
}

// genOpts selects the primitives a recipe may use.
type genOpts struct {
	ops      []string
	maxSteps int
	scalar   bool // force a rank-0 result (append sum when needed)
}

// exactOps are primitives with exact rational semantics and exact,
// total VJPs over Rat.
var exactOps = []string{
	"add", "sub", "mul", "neg", "scale", "square", "abs", "relu", "max", "min", "clamp",
	"sum", "reduce_sum", "reduce_mean", "matmul", "linear", "reshape", "flatten", "permute",
	"transpose", "broadcast_to", "concat", "slice", "detach", "mse_loss", "const",
}

// polyOps are the smooth polynomial primitives the symbolic gradient
// builder of the transform tests understands.
var polyOps = []string{
	"add", "sub", "mul", "neg", "scale", "square", "sum", "reduce_sum", "matmul", "linear",
	"reshape", "permute", "broadcast_to", "concat", "slice", "detach", "mse_loss", "const",
}

var smallDims = []int{1, 2, 3}

func randShape(r *rand.Rand, maxRank int) spec.Shape {
	s := make(spec.Shape, r.IntN(maxRank+1))
	for i := range s {
		s[i] = smallDims[r.IntN(len(smallDims))]
	}
	return s
}

// randRat draws from a small set with repeats, so that ties (max, min,
// relu at 0, abs at 0) are frequent.
func randRat(r *rand.Rand) *big.Rat {
	num := int64(r.IntN(7) - 3)
	den := []int64{1, 1, 2, 3}[r.IntN(4)]
	return big.NewRat(num, den)
}

func randRats(r *rand.Rand, n int) []*big.Rat {
	out := make([]*big.Rat, n)
	for i := range out {
		out[i] = randRat(r)
	}
	return out
}

func tensorOf[T spec.Scalar[T]](s spec.Shape, vals []*big.Rat) spec.Tensor[T] {
	var z T
	t := spec.Tensor[T]{Shape: s.Clone(), Data: make([]T, len(vals))}
	for i, v := range vals {
		t.Data[i] = z.FromRat(v)
	}
	return t
}

func randTensor[T spec.Scalar[T]](r *rand.Rand, s spec.Shape) spec.Tensor[T] {
	return tensorOf[T](s, randRats(r, s.Size()))
}

func randTensors[T spec.Scalar[T]](r *rand.Rand, shapes []spec.Shape) []spec.Tensor[T] {
	out := make([]spec.Tensor[T], len(shapes))
	for i, s := range shapes {
		out[i] = randTensor[T](r, s)
	}
	return out
}

func infer(op string, a *spec.Attrs, in []spec.Shape) (spec.Shape, bool) {
	info, err := spec.Info(op)
	if err != nil {
		return nil, false
	}
	s, err := info.InferShape(a, in)
	if err != nil {
		return nil, false
	}
	return s, true
}

// genRecipe draws a random recipe.
func genRecipe(r *rand.Rand, o genOpts) *recipe {
	rc := &recipe{}
	for n := 1 + r.IntN(3); n > 0; n-- {
		rc.ctx = append(rc.ctx, randShape(r, 3))
	}
	rc.shapes = append(rc.shapes, rc.ctx...)
	steps := 1 + r.IntN(o.maxSteps)
	for tries := 0; len(rc.steps) < steps && tries < 40*steps; tries++ {
		op := o.ops[r.IntN(len(o.ops))]
		if st, s, ok := tryStep(r, rc, op); ok {
			rc.steps = append(rc.steps, st)
			rc.shapes = append(rc.shapes, s)
		}
	}
	if len(rc.steps) == 0 || r.IntN(8) == 0 {
		rc.result = r.IntN(len(rc.shapes))
	} else {
		rc.result = len(rc.shapes) - 1
	}
	if o.scalar && len(rc.shapes[rc.result]) != 0 {
		rc.steps = append(rc.steps, step{op: "sum", attrs: &spec.Attrs{}, in: []int{rc.result}})
		rc.shapes = append(rc.shapes, spec.Shape{})
		rc.result = len(rc.shapes) - 1
	}
	return rc
}

func pick(r *rand.Rand, ids []int) int { return ids[r.IntN(len(ids))] }

func (rc *recipe) entries(f func(s spec.Shape) bool) []int {
	var ids []int
	for id, s := range rc.shapes {
		if f(s) {
			ids = append(ids, id)
		}
	}
	return ids
}

func tryStep(r *rand.Rand, rc *recipe, op string) (step, spec.Shape, bool) {
	all := rc.entries(func(spec.Shape) bool { return true })
	ranked := rc.entries(func(s spec.Shape) bool { return len(s) > 0 })
	st := step{op: op, attrs: &spec.Attrs{}}
	switch op {
	case "add", "sub", "mul", "max", "min", "mse_loss":
		a := pick(r, all)
		b := pick(r, rc.entries(func(s spec.Shape) bool { return s.Equal(rc.shapes[a]) }))
		st.in = []int{a, b}
	case "neg", "square", "abs", "relu", "sum", "detach":
		st.in = []int{pick(r, all)}
	case "scale":
		st.in = []int{pick(r, all)}
		st.attrs.C = randRat(r)
	case "clamp":
		st.in = []int{pick(r, all)}
		lo, hi := randRat(r), randRat(r)
		if lo.Cmp(hi) > 0 {
			lo, hi = hi, lo
		}
		st.attrs.Lo, st.attrs.Hi = lo, hi
	case "reduce_sum", "reduce_mean", "flatten":
		if len(ranked) == 0 {
			return st, nil, false
		}
		a := pick(r, ranked)
		st.in = []int{a}
		st.attrs.Axis = r.IntN(len(rc.shapes[a])) - r.IntN(2)*len(rc.shapes[a]) // sometimes negative
	case "slice":
		if len(ranked) == 0 {
			return st, nil, false
		}
		a := pick(r, ranked)
		st.in = []int{a}
		ax := r.IntN(len(rc.shapes[a]))
		n := rc.shapes[a][ax]
		st.attrs.Axis = ax
		st.attrs.Start = r.IntN(n + 1)
		st.attrs.End = st.attrs.Start + r.IntN(n-st.attrs.Start+1)
	case "permute", "transpose":
		if len(ranked) == 0 {
			return st, nil, false
		}
		a := pick(r, ranked)
		st.in = []int{a}
		k := len(rc.shapes[a])
		if op == "permute" {
			st.attrs.Perm = r.Perm(k)
		} else {
			st.attrs.Axis, st.attrs.Axis2 = r.IntN(k), r.IntN(k)
		}
	case "reshape":
		a := pick(r, all)
		st.in = []int{a}
		st.attrs.Shape = refactor(r, rc.shapes[a].Size())
	case "broadcast_to":
		a := pick(r, all)
		st.in = []int{a}
		var to spec.Shape
		if len(rc.shapes[a]) < 3 && r.IntN(2) == 0 {
			to = append(to, 1+r.IntN(2))
		}
		for _, d := range rc.shapes[a] {
			if d == 1 && r.IntN(2) == 0 {
				d = 2
			}
			to = append(to, d)
		}
		st.attrs.Shape = to
	case "concat":
		if len(ranked) == 0 {
			return st, nil, false
		}
		a := pick(r, ranked)
		ax := r.IntN(len(rc.shapes[a]))
		fits := rc.entries(func(s spec.Shape) bool {
			if len(s) != len(rc.shapes[a]) {
				return false
			}
			for i := range s {
				if i != ax && s[i] != rc.shapes[a][i] {
					return false
				}
			}
			return true
		})
		st.in = []int{a}
		for n := r.IntN(3); n > 0; n-- {
			st.in = append(st.in, pick(r, fits))
		}
		st.attrs.Axis = ax
	case "matmul":
		var pairs [][2]int
		for _, a := range ranked {
			for _, b := range ranked {
				if _, ok := infer("matmul", st.attrs, []spec.Shape{rc.shapes[a], rc.shapes[b]}); ok {
					pairs = append(pairs, [2]int{a, b})
				}
			}
		}
		if len(pairs) == 0 {
			return st, nil, false
		}
		p := pairs[r.IntN(len(pairs))]
		st.in = []int{p[0], p[1]}
	case "linear":
		var triples [][3]int
		for _, w := range rc.entries(func(s spec.Shape) bool { return len(s) == 2 }) {
			for _, b := range rc.entries(func(s spec.Shape) bool { return len(s) == 1 && s[0] == rc.shapes[w][0] }) {
				for _, x := range ranked {
					if rc.shapes[x][len(rc.shapes[x])-1] == rc.shapes[w][1] {
						triples = append(triples, [3]int{x, w, b})
					}
				}
			}
		}
		if len(triples) == 0 {
			return st, nil, false
		}
		t := triples[r.IntN(len(triples))]
		st.in = t[:]
	case "const":
		s := randShape(r, 2)
		st.val = randRats(r, s.Size())
		st.attrs.Shape, st.attrs.Values = s, st.val
	default:
		panic("gen: unknown op " + op)
	}
	in := make([]spec.Shape, len(st.in))
	for j, id := range st.in {
		in[j] = rc.shapes[id]
	}
	s, ok := infer(op, st.attrs, in)
	return st, s, ok
}

// refactor returns a random shape with n elements.
func refactor(r *rand.Rand, n int) spec.Shape {
	var s spec.Shape
	for n > 1 && len(s) < 3 {
		d := 1
		for _, f := range []int{2, 3} {
			if n%f == 0 && r.IntN(2) == 0 {
				d = f
				break
			}
		}
		if d == 1 {
			d = n
		}
		s = append(s, d)
		n /= d
		if r.IntN(4) == 0 {
			s = append(s, 1)
		}
	}
	if n == 1 && r.IntN(3) == 0 {
		s = append(s, 1)
	}
	if n == 0 {
		s = append(s, 0)
	}
	return s
}

// graph builds the recipe as a typed graph over T (declared shapes, so
// the construction check runs).
func graphOf[T spec.Scalar[T]](rc *recipe, reg *spec.Registry[T]) (*tg.Graph[T], error) {
	g, err := tg.New(reg, rc.ctx...)
	if err != nil {
		return nil, err
	}
	for k, st := range rc.steps {
		id := len(rc.ctx) + k
		got, err := g.Append(st.op, st.attrs, st.in, rc.shapes[id])
		if err != nil {
			return nil, err
		}
		if got != id {
			return nil, fmt.Errorf("append returned id %d, expected %d", got, id)
		}
	}
	return g, g.SetResult(rc.result)
}

// programOf runs the recipe against any interpreter.
func programOf[T spec.Scalar[T], R any](rc *recipe) tg.Program[T, R] {
	return func(o tg.Ops[T, R], in []R) (R, error) {
		refs := append([]R(nil), in...)
		for _, st := range rc.steps {
			args := make([]R, len(st.in))
			for j, id := range st.in {
				args[j] = refs[id]
			}
			var (
				v   R
				err error
			)
			switch st.op {
			case "detach":
				v, err = o.Detach(args[0])
			case "const":
				v, err = o.Const("c", tensorOf[T](st.attrs.Shape, st.val))
			default:
				v, err = o.Apply(st.op, st.attrs.Clone(), args...)
			}
			if err != nil {
				return v, err
			}
			refs = append(refs, v)
		}
		return refs[rc.result], nil
	}
}

// eagerTape records the recipe on a tape with tape.Apply, the context as
// leaves whose requiresGrad is mask[i] (nil: all true); the tape ids equal
// the recipe's entry ids.
func eagerTape[T spec.Scalar[T]](rc *recipe, inputs []spec.Tensor[T], mask []bool) (*tape.Tape[T], error) {
	t := tape.New[T](nil)
	for i, v := range inputs {
		if _, err := t.Leaf(fmt.Sprintf("x%d", i), v, mask == nil || mask[i]); err != nil {
			return nil, err
		}
	}
	for _, st := range rc.steps {
		var err error
		switch st.op {
		case "detach":
			_, err = t.Detach(st.in[0])
		case "const":
			_, err = t.Const("c", tensorOf[T](st.attrs.Shape, st.val))
		default:
			_, err = t.Apply(st.op, st.attrs, st.in...)
		}
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

func sameList[T spec.Scalar[T]](a, b []spec.Tensor[T]) (int, bool) {
	if len(a) != len(b) {
		return -1, false
	}
	for i := range a {
		if !spec.SameTensor(a[i], b[i]) {
			return i, false
		}
	}
	return -1, true
}
