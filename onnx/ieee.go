package onnx

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// IEEE special values.
//
// The IR is a graph over the reals: its Sqrt is sqrt(max(x, 0)), its Log
// and Div refuse a non-positive argument or a zero divisor, and it has no
// NaN or ±∞. ONNX computes in IEEE 754: Sqrt(−1) is NaN, Log(0) is −∞,
// 1/0 is +∞, and inputs may hold NaN and ±∞. Analyze decides, per output
// element, which semantics gives the reference value, so that a runtime
// that follows ONNX is judged by ONNX's result and the other elements of
// the same tensor keep their exact verdicts:
//
//   - the element's Status is Real: the IR's exact value is the reference
//     (the element depends on no special value and no out-of-domain
//     argument that this analysis sees);
//   - Known: every IEEE 754 evaluation of the ONNX graph gives Value at
//     this element (NaN, ±∞, or a finite value such as exp(−∞) = 0), so a
//     recorded value holds iff it is that value (NaN matching NaN, 0
//     matching −0) and fails otherwise;
//   - Unknown: the result depends on something the analysis does not
//     decide (a rounded finite operand beside an infinity, a NaN reaching
//     Max, a special value entering a non-elementwise op): no verdict.
//
// Where specials come from. (1) Elements of a float graph input that are
// NaN or ±∞. (2) An elementwise op whose operand is a graph input or an
// initializer (a value known exactly, whatever the runtime's rounding)
// and lies outside the op's real domain: Sqrt, Log, Pow of a negative or
// zero base, Reciprocal or Div by zero. Such an element is evaluated in
// float64 IEEE arithmetic on the exact operands, which is exact here: an
// operation whose result is NaN or infinite because an operand is NaN,
// infinite, or outside the domain (0/0, x/0, sqrt(x<0), log(x≤0),
// pow(x<0, non-integer), ∞−∞, 0·∞) gives that result in binary32 and
// binary64 alike, since those cases depend on the signs and zeroness of
// the operands only, never on their rounding.
//
// How they travel. Through the elementwise ops below, element by element
// with ONNX broadcasting: a unary op maps a Known element by its IEEE
// function (C99 Annex F: exp(−∞) = +0, log(+∞) = +∞, tanh(±∞) = ±1,
// sqrt(+∞) = +∞, sin(±∞) = NaN; Sigmoid(x) = 1/(1 + exp(−x)) as ONNX
// defines it; Relu(NaN) = NaN as ONNX's max(0, x)); Add, Sub, Mul, Div
// give NaN whenever an operand element is NaN (IEEE 754 §6.2), the IEEE
// result when both operand elements are known exactly, and Unknown when
// a special meets a value computed by the runtime (whose sign or
// finiteness the analysis does not know). Identity, Reshape, Flatten,
// Squeeze and Unsqueeze keep the row-major order, so they move statuses
// unchanged. Any other op that reads a non-Real element makes all of its
// outputs Unknown.
//
// The exact evaluation. Compare evaluates the IR on the input with every
// special or out-of-domain element of a graph input replaced by 1 (inside
// every domain); every element that replaced value reaches is Known or
// Unknown by the rules above (a replaced element is Unknown to every
// reader except the op whose domain it violates), so the IR's value is
// used only where it is the true one.
//
// Partial ops of computed values. When Sqrt, Log, Div, Reciprocal or Pow
// reads a value the runtime computes, the analysis cannot decide whether
// that value leaves the domain; then Partial is set, and a recorded NaN or
// infinity at a Real element is not a proven failure (the runtime may
// have met the domain boundary): compare reports it inconclusive. A
// recorded finite value there is judged by the IR as before.

// Status is the IEEE status of one element (see Analyze).
type Status uint8

// The statuses.
const (
	Real Status = iota
	Known
	Unknown
)

// Special is one element's status and, when Known, its IEEE value.
type Special struct {
	Status Status
	Value  float64
	// Masked: Value is −∞ as the sum of a finite part the runtime
	// computes and an additive −∞ mask; it is −∞ in every evaluation
	// whose finite part is finite (an overflow to +∞ would give NaN), so
	// a caller decides the element only where its bound on the finite
	// part (the IR's value there) is finite.
	Masked bool
}

// Specials is the result of Analyze.
type Specials struct {
	// Outputs holds, per Imported.Outputs entry, one Special per element
	// in row-major order, or nil when every element is Real.
	Outputs [][]Special
	// Partial names the first node applying a partial op to a computed
	// value ("" when none); see Analyze.
	Partial string
}

// Any reports whether some output element is not Real.
func (s *Specials) Any() bool {
	for _, o := range s.Outputs {
		if o != nil {
			return true
		}
	}
	return false
}

// Judge decides a recorded value at a Known element: holds (true, true)
// iff it is the value (NaN matches NaN; +0 matches −0), fails (false,
// true) otherwise; at an Unknown element nothing is decided (ok false).
func (s Special) Judge(rec float64) (holds, ok bool) {
	if s.Status != Known {
		return false, false
	}
	if math.IsNaN(s.Value) {
		return math.IsNaN(rec), true
	}
	return rec == s.Value, true
}

// NonReal names the first graph output element that the import decided
// is NaN or ±∞ (a constant such as an empty ReduceMax, −∞): only Analyze
// judges it; "" when there is none. Output order, then element order.
func (im *Imported) NonReal() string {
	for _, o := range im.Outputs {
		if j, x, ok := firstNonreal(im.consts[o.Name]); ok {
			return fmt.Sprintf("graph output %q is %v at element %d (an IEEE special value folded at import)", o.Name, x, j)
		}
		if j := firstTrue(im.masked[o.Name]); j >= 0 {
			return fmt.Sprintf("graph output %q is −∞ at element %d (an additive mask)", o.Name, j)
		}
	}
	return ""
}

// firstNonreal returns the element of m with the least index.
func firstNonreal(m map[int]float64) (j int, x float64, ok bool) {
	for k, v := range m {
		if !ok || k < j {
			j, x, ok = k, v, true
		}
	}
	return j, x, ok
}

// sval is the analysis' state of one ONNX value.
type sval struct {
	shape spec.Shape
	st    []Special // nil: every element Real
	raw   []float64 // exact element values of a graph input or initializer (nil: computed)
}

// ieeeUnary are the elementwise unary ops with their IEEE functions.
var ieeeUnary = map[string]func(float64) float64{
	"Identity": func(x float64) float64 { return x },
	"Neg":      func(x float64) float64 { return -x },
	"Abs":      math.Abs,
	"Relu": func(x float64) float64 {
		if math.IsNaN(x) || x > 0 {
			return x
		}
		return 0
	},
	"Exp":        math.Exp,
	"Log":        math.Log,
	"Sqrt":       math.Sqrt,
	"Reciprocal": func(x float64) float64 { return 1 / x },
	"Tanh":       math.Tanh,
	"Sigmoid":    func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	"Sin":        math.Sin,
	"Cos":        math.Cos,
	"Floor":      math.Floor,
	"Ceil":       math.Ceil,
}

// exactUnary are the unary ops that never round.
var exactUnary = map[string]bool{"Identity": true, "Neg": true, "Abs": true, "Relu": true, "Floor": true, "Ceil": true}

// ieeeBinary are the elementwise binary ops.
var ieeeBinary = map[string]func(a, b float64) float64{
	"Add": func(a, b float64) float64 { return a + b },
	"Sub": func(a, b float64) float64 { return a - b },
	"Mul": func(a, b float64) float64 { return a * b },
	"Div": func(a, b float64) float64 { return a / b },
	"Pow": math.Pow,
}

// partialOps are the ops that leave the reals on part of their domain.
var partialOps = map[string]bool{"Sqrt": true, "Log": true, "Div": true, "Reciprocal": true, "Pow": true}

// reorder are the ops that only move elements, keeping row-major order.
var reorder = map[string]bool{"Identity": true, "Reshape": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true}

// outOfDomain reports whether op at the exact operands x (and y for a
// binary op) leaves the reals, or an operand is not finite.
func outOfDomain(op string, x, y float64, binary bool) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) || (binary && (math.IsNaN(y) || math.IsInf(y, 0))) {
		return true
	}
	switch op {
	case "Sqrt":
		return x < 0
	case "Log":
		return x <= 0
	case "Reciprocal":
		return x == 0
	case "Div":
		return y == 0
	case "Pow":
		return (x < 0 && y != math.Trunc(y)) || (x == 0 && y < 0)
	}
	return false
}

// Analyze computes the IEEE statuses of the outputs of im (imported from
// m) on the float input tensors floats (in Imported.Inputs order, as for
// PackInputs), and returns them with the tensors compare must evaluate
// the IR on: copies of floats with each NaN, ±∞ or out-of-domain element
// replaced by 1 (floats themselves when nothing is replaced). The
// argument is in the comment above.
func (im *Imported) Analyze(m *Model, floats []*Tensor) (*Specials, []*Tensor, error) {
	if len(floats) != len(im.Inputs) {
		return nil, nil, &ImportError{Err: fmt.Errorf("the model has %d float inputs, %d tensors given", len(im.Inputs), len(floats))}
	}
	vals, err := im.rawValues(m, floats)
	if err != nil {
		return nil, nil, err
	}
	// Elements to replace: special ones, and those an op reads outside its
	// domain (decided below); a replaced element is Unknown to its other
	// readers.
	rp := replacement{inputs: im.Inputs, elems: map[string]map[int]bool{}}
	for _, in := range im.Inputs {
		for j, x := range vals[in.Name].raw {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				rp.mark(in.Name, j)
			}
		}
	}
	// First pass: the domain violations at raw operands.
	for _, n := range im.nodes(m) {
		if n != nil && partialOps[n.OpType] && len(n.Inputs) > 0 {
			rp.markDomain(n, vals)
		}
	}
	// Replaced elements are Unknown to every reader but the deciding op,
	// which reads the raw value.
	for name, js := range rp.elems {
		sv := vals[name]
		for j := range js {
			if sv.at(j).Status == Real {
				sv.set(j, Special{Status: Unknown})
			}
		}
	}
	return im.propagate(m, vals), rp.apply(floats), nil
}

// rawValues returns the analysis's starting values: the graph inputs'
// raw elements from floats (their NaN and ±∞ Known) and the float
// initializers' that the importer read, by name.
func (im *Imported) rawValues(m *Model, floats []*Tensor) (map[string]*sval, error) {
	vals := map[string]*sval{}
	for i, in := range im.Inputs {
		t := floats[i]
		if t == nil || t.Len() != in.Shape.Size() || !t.DataType.IsFloat() {
			return nil, &ImportError{Field: fmt.Sprintf("graph input %q", in.Name), Err: fmt.Errorf("expected %v %s values", in.Shape, in.DataType)}
		}
		raw := float64s(t)
		sv := &sval{shape: in.Shape, raw: raw}
		for j, x := range raw {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				sv.set(j, Special{Status: Known, Value: x})
			}
		}
		vals[in.Name] = sv
	}
	for _, t := range m.Graph.Initializers {
		if t == nil || !t.DataType.IsFloat() {
			continue
		}
		s, err := t.Shape()
		if err != nil || t.Len() != s.Size() {
			continue // the importer refused or ignored it
		}
		raw := float64s(t)
		if _, dup := vals[t.Name]; !dup {
			vals[t.Name] = &sval{shape: s, raw: raw}
		}
	}
	return vals, nil
}

// float64s returns the elements of the float tensor t widened to float64.
func float64s(t *Tensor) []float64 {
	raw := make([]float64, t.Len())
	for j := range raw {
		if t.DataType != Double {
			raw[j] = float64(t.Float32[j])
		} else {
			raw[j] = t.Float64[j]
		}
	}
	return raw
}

// A replacement collects the elements of the graph inputs that compare
// evaluates as 1: by input name, the set of element indices.
type replacement struct {
	inputs []IOValue
	elems  map[string]map[int]bool
}

// mark adds element j of name, when name is a graph input.
func (rp replacement) mark(name string, j int) {
	if _, isIn := ioIndex(rp.inputs, name); !isIn {
		return
	}
	if rp.elems[name] == nil {
		rp.elems[name] = map[int]bool{}
	}
	rp.elems[name][j] = true
}

// markDomain marks the raw operand elements the partial op n reads
// outside its domain.
func (rp replacement) markDomain(n *Node, vals map[string]*sval) {
	a := vals[n.Inputs[0]]
	if n.OpType != "Div" && n.OpType != "Pow" {
		if a == nil || a.raw == nil {
			return
		}
		for j, x := range a.raw {
			if outOfDomain(n.OpType, x, 0, false) {
				rp.mark(n.Inputs[0], j)
			}
		}
		return
	}
	if len(n.Inputs) < 2 {
		return
	}
	b := vals[n.Inputs[1]]
	if a == nil || b == nil || a.raw == nil || b.raw == nil {
		// One operand computed: only a raw divisor of 0 is decided
		// to leave the domain (the element becomes Unknown or NaN).
		if n.OpType == "Div" && b != nil && b.raw != nil {
			for j, y := range b.raw {
				if y == 0 {
					rp.mark(n.Inputs[1], j)
				}
			}
		}
		return
	}
	sh, ok := broadcast(a.shape, b.shape)
	if !ok {
		return
	}
	for k := 0; k < sh.Size(); k++ {
		ia, ib := bIndex(sh, a.shape, k), bIndex(sh, b.shape, k)
		if outOfDomain(n.OpType, a.raw[ia], b.raw[ib], true) {
			rp.mark(n.Inputs[0], ia)
			rp.mark(n.Inputs[1], ib)
		}
	}
}

// apply returns floats with the marked elements replaced by 1 (copies of
// the tensors that change; floats itself when nothing is marked).
func (rp replacement) apply(floats []*Tensor) []*Tensor {
	if len(rp.elems) == 0 {
		return floats
	}
	out := make([]*Tensor, len(floats))
	for i, in := range rp.inputs {
		out[i] = floats[i]
		js := rp.elems[in.Name]
		if len(js) == 0 {
			continue
		}
		c := *floats[i]
		if c.DataType != Double {
			c.Float32 = append([]float32(nil), c.Float32...)
		} else {
			c.Float64 = append([]float64(nil), c.Float64...)
		}
		for j := range js {
			if c.DataType != Double {
				c.Float32[j] = 1
			} else {
				c.Float64[j] = 1
			}
		}
		out[i] = &c
	}
	return out
}

// propagate steps every node of m over vals and returns the statuses of
// im's outputs, with the first partial op whose deciding operand is
// computed.
func (im *Imported) propagate(m *Model, vals map[string]*sval) *Specials {
	sp := &Specials{Outputs: make([][]Special, len(im.Outputs))}
	for _, n := range im.nodes(m) {
		if n == nil {
			continue
		}
		if partialOps[n.OpType] && sp.Partial == "" {
			// The operand whose value decides the domain: Div's divisor,
			// the others' first input (Pow's base).
			arg := 0
			if n.OpType == "Div" {
				arg = 1
			}
			if arg < len(n.Inputs) {
				if v := vals[n.Inputs[arg]]; v == nil || v.raw == nil {
					sp.Partial = n.Where()
				}
			}
		}
		im.step(n, vals)
	}
	for i, o := range im.Outputs {
		v := vals[o.Name]
		if m := im.masked[o.Name]; m != nil && len(m) == o.Shape.Size() && (v == nil || v.st == nil || len(v.st) == len(m)) {
			if v == nil {
				v = &sval{shape: o.Shape} // every element Real
			}
			w := &sval{shape: o.Shape}
			for j, b := range m {
				switch s := v.at(j); {
				case b && s.Status == Real:
					w.set(j, Special{Status: Known, Value: math.Inf(-1), Masked: true})
				default:
					w.set(j, s)
				}
			}
			v = w
		}
		if v == nil || v.st == nil {
			continue
		}
		if len(v.st) != o.Shape.Size() {
			sp.Outputs[i] = allUnknown(o.Shape.Size())
			continue
		}
		sp.Outputs[i] = v.st
	}
	return sp
}

// step computes the statuses of node n's outputs from its inputs'.
func (im *Imported) step(n *Node, vals map[string]*sval) {
	if len(n.Outputs) > 0 && n.Outputs[0] != "" {
		if nr, ok := im.consts[n.Outputs[0]]; ok {
			// Folded at import (exactly, on constants and recorded
			// inputs): its own statuses, whatever its inputs'.
			if s, ok := im.outShape(n, 0); ok {
				v := &sval{shape: s}
				for j, x := range nr {
					v.set(j, Special{Status: Known, Value: x})
				}
				vals[n.Outputs[0]] = v
				return
			}
		}
	}
	anySpecial := false
	for _, in := range n.Inputs {
		if v := vals[in]; v != nil && v.st != nil && !im.maskOnly(n, in, v) {
			anySpecial = true
		}
	}
	if !anySpecial && !partialOps[n.OpType] {
		return // every output Real, computed
	}
	if len(n.Outputs) == 0 || n.Outputs[0] == "" {
		return
	}
	if f, ok := im.unaryRule(n); ok && len(n.Inputs) >= 1 {
		if x := vals[n.Inputs[0]]; x != nil {
			vals[n.Outputs[0]] = stepUnary(n.OpType, f, x)
		}
		return
	}
	if f, ok := ieeeBinary[n.OpType]; ok && len(n.Inputs) >= 2 {
		a, b := vals[n.Inputs[0]], vals[n.Inputs[1]]
		if a == nil || b == nil {
			if anySpecial {
				im.unknownAll(n, vals)
			}
			return
		}
		sh, ok := broadcast(a.shape, b.shape)
		if !ok {
			im.unknownAll(n, vals)
			return
		}
		vals[n.Outputs[0]] = stepBinary(n.OpType, f, a, b, sh)
		return
	}
	if reorder[n.OpType] && len(n.Inputs) >= 1 {
		x := vals[n.Inputs[0]]
		s, ok := im.outShape(n, 0)
		if x == nil || !ok || s.Size() != x.shape.Size() {
			if anySpecial {
				im.unknownAll(n, vals)
			}
			return
		}
		vals[n.Outputs[0]] = &sval{shape: s, st: x.st}
		return
	}
	if anySpecial {
		im.unknownAll(n, vals)
	}
}

// maskOnly reports whether value v, read by node n as input in, is an
// Attention mask the import took with its −∞ elements blocked
// (Imported.maskInputs) and whose only specials are those −∞ elements
// (Known −∞; any NaN, +∞ or Unknown element still counts): the masked
// softmax gives exp(−∞) = 0 there whatever the finite part the IR reads.
func (im *Imported) maskOnly(n *Node, in string, v *sval) bool {
	if n.OpType != "Attention" || im.maskInputs[n.Where()] != in || len(n.Inputs) < 4 || n.Inputs[3] != in {
		return false
	}
	for _, s := range v.st {
		if s.Status != Real && !(s.Status == Known && math.IsInf(s.Value, -1)) {
			return false
		}
	}
	return true
}

// outShape returns the imported shape of node n's output k.
func (im *Imported) outShape(n *Node, k int) (spec.Shape, bool) {
	if k >= len(n.Outputs) {
		return nil, false
	}
	s, ok := im.shapes[n.Outputs[k]]
	return s, ok
}

// unknownAll makes every element of node n's outputs Unknown.
func (im *Imported) unknownAll(n *Node, vals map[string]*sval) {
	for k, o := range n.Outputs {
		if o == "" {
			continue
		}
		s, ok := im.outShape(n, k)
		if !ok {
			vals[o] = &sval{st: []Special{}} // no shape: a length that matches nothing
			continue
		}
		vals[o] = &sval{shape: s, st: allUnknown(s.Size())}
	}
}

// unaryRule returns the IEEE function of node n when n is elementwise
// unary: ieeeUnary's, or the identity for a cast between float types.
func (im *Imported) unaryRule(n *Node) (func(float64) float64, bool) {
	f, ok := ieeeUnary[n.OpType]
	if n.OpType == "Cast" {
		// A cast between float types keeps NaN and ±∞ (a finite value is
		// rounded: not exact, see exactUnary).
		if a := n.Attr("to"); a != nil && DataType(a.I).IsFloat() {
			f, ok = func(x float64) float64 { return x }, true
		}
	}
	if n.OpType == "CastLike" && len(n.Inputs) == 2 && im.dtypes[n.Inputs[1]].IsFloat() {
		f, ok = func(x float64) float64 { return x }, true
	}
	return f, ok
}

// stepUnary returns the statuses of the unary op's output f(x).
func stepUnary(op string, f func(float64) float64, x *sval) *sval {
	out := &sval{shape: x.shape}
	for j := 0; j < x.shape.Size(); j++ {
		s := x.at(j)
		if x.raw != nil && outOfDomain(op, x.raw[j], 0, false) {
			s = Special{Status: Known, Value: x.raw[j]}
		}
		switch {
		case s.Status == Known && (!finite(s.Value) || exactUnary[op] || outOfDomain(op, s.Value, 0, false)):
			out.set(j, Special{Status: Known, Value: f(s.Value)})
		case s.Status != Real:
			// Unknown, or a finite Known value through a rounded
			// function (its binary32 result is the runtime's).
			out.set(j, Special{Status: Unknown})
		}
	}
	return out
}

// stepBinary returns the statuses of the binary op's output f(a, b),
// broadcast to shape sh.
func stepBinary(op string, f func(float64, float64) float64, a, b *sval, sh spec.Shape) *sval {
	out := &sval{shape: sh}
	for k := 0; k < sh.Size(); k++ {
		ia, ib := bIndex(sh, a.shape, k), bIndex(sh, b.shape, k)
		sa, sb := a.at(ia), b.at(ib)
		va, ka := a.exact(ia)
		vb, kb := b.exact(ib)
		special := (ka && !finite(va)) || (kb && !finite(vb)) ||
			(ka && kb && outOfDomain(op, va, vb, true))
		switch {
		case ka && kb && special:
			out.set(k, Special{Status: Known, Value: f(va, vb)})
		case op != "Pow" && ((ka && math.IsNaN(va)) || (kb && math.IsNaN(vb))):
			out.set(k, Special{Status: Known, Value: math.NaN()})
		case special, sa.Status != Real, sb.Status != Real, op == "Div" && kb && vb == 0:
			// A special beside a value the runtime computes, a finite
			// result of a special or of a replaced element (its
			// rounding is the runtime's), or a zero divisor.
			out.set(k, Special{Status: Unknown})
		}
	}
	return out
}

// exact returns element j's exact value when the analysis knows it: a
// raw element (graph input or initializer) or a Known one.
func (v *sval) exact(j int) (float64, bool) {
	if v.raw != nil {
		return v.raw[j], true
	}
	if s := v.at(j); s.Status == Known {
		return s.Value, true
	}
	return 0, false
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func (v *sval) at(j int) Special {
	if v.st == nil {
		return Special{}
	}
	return v.st[j]
}

func (v *sval) set(j int, s Special) {
	if v.st == nil {
		if s.Status == Real {
			return
		}
		v.st = make([]Special, v.shape.Size())
	}
	v.st[j] = s
}

func allUnknown(n int) []Special {
	s := make([]Special, n)
	for i := range s {
		s[i].Status = Unknown
	}
	return s
}

func ioIndex(vs []IOValue, name string) (int, bool) {
	for i := range vs {
		if vs[i].Name == name {
			return i, true
		}
	}
	return -1, false
}

// broadcast is ONNX's multidirectional broadcast of two shapes.
func broadcast(a, b spec.Shape) (spec.Shape, bool) {
	r := max(len(a), len(b))
	out := make(spec.Shape, r)
	for i := 0; i < r; i++ {
		da, db := 1, 1
		if j := i - (r - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (r - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// bIndex maps the row-major index k of broadcast shape sh to the
// row-major index of the operand of shape s.
func bIndex(sh, s spec.Shape, k int) int {
	idx, stride := 0, 1
	off := len(sh) - len(s)
	for i := len(sh) - 1; i >= 0; i-- {
		c := k % sh[i]
		k /= sh[i]
		if j := i - off; j >= 0 {
			if s[j] != 1 {
				idx += c * stride
			}
			stride *= s[j]
		}
	}
	return idx
}
