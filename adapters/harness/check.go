package harness

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/spec"
)

// Case is one engine-independent check: a graph in registry primitives at
// exact dyadic inputs (binary64 numbers, so the engine receives them
// exactly), a non-trivial cotangent and tangents for the adjoint check.
type Case struct {
	Name string
	// DAG marks small multi-op graphs with fan-out and shared leaves: their
	// gradient obligation is the path sum.
	DAG   bool
	Graph Graph
	Xs    []spec.Tensor[spec.Rat]
	Cot   spec.Tensor[spec.Rat]
	// Tangents are one direction per input for ⟨vjp(cot), v⟩ = ⟨cot,
	// jvp(v)⟩. At a tie they must be a direction along which the function
	// is differentiable (moving every tied argument together), so that
	// every valid subgradient satisfies the identity: mass conservation.
	Tangents []spec.Tensor[spec.Rat]
	// Tie marks inputs placed on kinks or ties on purpose; the adjoint
	// obligation is then called mass conservation.
	Tie bool
	// Singular marks, per element of input 0, points where the function
	// has no derivative and no Clarke subdifferential (sqrt at 0: not
	// locally Lipschitz, one-sided derivative +∞), so any gradient value
	// there — tlcheck's 0 as much as an engine's +∞ — is a convention:
	// the gradient and zero obligations are inconclusive at those
	// elements, never a verdict.
	Singular []bool
	// Kinks, for single-op elementwise cases at kinks, gives per element
	// of input 0 the Clarke subdifferential of the op there as an
	// interval [lo, hi] of local derivatives (nil entries: smooth).
	Kinks []*[2]spec.Rat
	// random marks a case of RandomCases: Shrink then also shrinks its
	// graph (random_shrink.go).
	random bool
}

// The obligations.
const (
	OblForward  = "forward"
	OblVJP      = "vjp"
	OblPathSum  = "path_sum"
	OblAdjoint  = "adjoint"
	OblMass     = "mass"
	OblZero     = "zero"
	OblSubgrad  = "subgradient"
	OblMachines = "machines"
	OblRun      = "run"
	OblJVP      = "jvp"
)

// Row is one line of the table: one obligation of one case on one
// engine machine.
type Row struct {
	Engine, Machine, Case string
	Ops                   []string
	Obligation            string
	Verdict               Verdict
	// Detail names the first element outside (or the note), with the
	// engine's value, the exact enclosure and the bound.
	Detail string
	// unsupported is the adapter's reason when Run refused the case
	// (ErrUnsupported).
	unsupported string
}

// Finding reports whether the row is a finding.
func (r Row) Finding() bool { return r.Verdict == Fails }

func zerosLike(t spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
	z, _ := spec.Zeros[spec.Rat](t.Shape)
	return z
}

func fmtEnc(b Bound) string {
	en := b.Tight
	ex := fmt.Sprintf("exact in [%.17g, %.17g]", en.Exact.Lo, en.Exact.Hi)
	if en.Exact.Lo == en.Exact.Hi {
		ex = "exact " + ratString(en.Exact.Lo)
	}
	if b.f32 {
		return fmt.Sprintf("%s, bound %.3g (binary32%s) / %.3g (%d× binary32)", ex, en.Bound, byNote(b.TightBy), b.Loose.Bound, F32Slack)
	}
	return fmt.Sprintf("%s, bound %.3g (binary64%s) / %.3g (binary32%s)", ex, en.Bound, byNote(b.TightBy), b.Loose.Bound, byNote(b.LooseBy))
}

// byNote names a bound decided by the first-order bound ("" otherwise:
// the classic bound is the default reading).
func byNote(by string) string {
	if by == DecidedFirstOrder {
		return ", " + DecidedFirstOrder
	}
	return ""
}

func ratString(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Sprint(f)
	}
	return new(big.Rat).SetFloat64(f).RatString()
}

// judgeAll judges got against want element by element and returns the
// worst verdict and the detail of its first element.
func judgeAll(what string, got []float64, want []Bound) (Verdict, string) {
	if len(got) != len(want) {
		return Fails, fmt.Sprintf("%s: the engine returned %d values for %d elements", what, len(got), len(want))
	}
	v, detail := Holds, ""
	for k, w := range want {
		j := judge(got[k], w)
		if j != Holds && worst(v, j) != v {
			v = j
			detail = fmt.Sprintf("%s[%d] = %v (engine), %s", what, k, got[k], fmtEnc(w))
			if j == Inconclusive && w.Tight.Reason != "" {
				detail += ": " + w.Tight.Reason
			}
		}
	}
	return v, detail
}

// gradVerdict judges every input's gradient.
func gradVerdict(grads []Tensor64, want [][]Bound) (Verdict, string) {
	if len(grads) != len(want) {
		return Fails, fmt.Sprintf("%d gradients for %d inputs", len(grads), len(want))
	}
	v, detail := Holds, ""
	for i := range want {
		j, d := judgeAll(fmt.Sprintf("∂/∂x%d", i), grads[i].Data, want[i])
		if worst(v, j) != v {
			v, detail = j, d
		}
	}
	return v, detail
}

// adjointVerdict decides ⟨g, v⟩ (the engine's gradients g, exact
// tangents v, the sum computed exactly) against ⟨cot, J·v⟩: if each
// g_i is within E_i of the exact gradient, then |⟨g, v⟩ − ⟨cot, Jv⟩| ≤
// Σ|v_i|·E_i wherever the exact gradient is the adjoint of the JVP (the
// function is differentiable along v). Fails iff the distance is
// provably larger; Holds iff provably within.
//
// At a tie (mass) the per-element bounds come from the selection model of
// the package doc instead: |ĝᵢ − gᵢ| ≤ 2⁻⁴⁹·|ĝᵢ| + 2⁻¹⁰⁷¹ in binary64, and
// |ĝᵢ − gᵢ| ≤ 2⁻²⁰·|ĝᵢ| + 2⁻¹⁴⁶ on a float32 machine (S32).
func adjointVerdict(grads []Tensor64, want [][]Bound, tangents []spec.Tensor[spec.Rat], jv Bound, tie bool) (Verdict, string) {
	t, td := adjoint1(grads, want, tangents, jv.Tight, tie, jv.f32, func(b Bound) float64 { return b.Tight.Bound })
	if t == Holds {
		return Holds, ""
	}
	l, ld := adjoint1(grads, want, tangents, jv.Tight, tie, jv.f32, func(b Bound) float64 { return b.Loose.Bound })
	tn, ln := "binary64", "binary32"
	if jv.f32 {
		tn, ln = "binary32", fmt.Sprintf("%d× binary32", F32Slack)
	}
	switch {
	case l == Fails:
		return Fails, ld + " (" + ln + " bounds)"
	case t == Fails:
		return Suspect, td + " (" + tn + " bounds)"
	case l == Holds:
		return Holds, ""
	}
	return Inconclusive, td
}

// adjoint1 is adjointVerdict with one bound per element (bound), or the
// selection model's at a tie.
func adjoint1(grads []Tensor64, want [][]Bound, tangents []spec.Tensor[spec.Rat], jv fpbound.Enclosure, tie, f32 bool, bound func(Bound) float64) (Verdict, string) {
	if len(grads) != len(tangents) {
		return Fails, fmt.Sprintf("%d gradients for %d inputs", len(grads), len(tangents))
	}
	dot, allowed := new(big.Rat), new(big.Rat)
	for i, t := range tangents {
		if len(grads[i].Data) != len(t.Data) {
			return Fails, fmt.Sprintf("∂/∂x%d: %d values for %d elements", i, len(grads[i].Data), len(t.Data))
		}
		for k, v := range t.Data {
			if v.IsZero() {
				continue // no contribution, whatever g and its bound are
			}
			g := grads[i].Data[k]
			e := bound(want[i][k])
			if tie {
				e = math.Abs(g)*0x1p-49 + 0x1p-1071
				if f32 {
					e = math.Abs(g)*0x1p-20 + 0x1p-146
				}
			}
			if math.IsInf(e, 1) || math.IsNaN(e) {
				return Inconclusive, fmt.Sprintf("∂/∂x%d[%d] has no finite bound", i, k)
			}
			if math.IsNaN(g) || math.IsInf(g, 0) {
				return Fails, fmt.Sprintf("∂/∂x%d[%d] = %v (engine) in ⟨g, v⟩", i, k, g)
			}
			vb := v.Big()
			dot.Add(dot, new(big.Rat).Mul(vb, new(big.Rat).SetFloat64(g)))
			allowed.Add(allowed, new(big.Rat).Mul(new(big.Rat).Abs(vb), new(big.Rat).SetFloat64(e)))
		}
	}
	if math.IsInf(jv.Exact.Lo, 0) || math.IsInf(jv.Exact.Hi, 0) {
		return Inconclusive, "⟨cot, J·v⟩ is not enclosed"
	}
	lo, hi := new(big.Rat).SetFloat64(jv.Exact.Lo), new(big.Rat).SetFloat64(jv.Exact.Hi)
	ex := fmt.Sprintf("in [%.17g, %.17g]", jv.Exact.Lo, jv.Exact.Hi)
	if jv.Exact.Lo == jv.Exact.Hi {
		ex = ratString(jv.Exact.Lo)
	}
	detail := fmt.Sprintf("⟨g, v⟩ = %s (engine), ⟨cot, J·v⟩ exact %s, allowed %s", dot.FloatString(12), ex, allowed.FloatString(12))
	switch {
	case new(big.Rat).Sub(lo, dot).Cmp(allowed) > 0 || new(big.Rat).Sub(dot, hi).Cmp(allowed) > 0:
		return Fails, detail
	case new(big.Rat).Sub(dot, lo).Cmp(allowed) <= 0 && new(big.Rat).Sub(hi, dot).Cmp(allowed) <= 0:
		return Holds, ""
	}
	return Inconclusive, detail
}

// subgradVerdict checks, at each kink of input 0, that the engine's local
// derivative g/c lies in the op's Clarke subdifferential there.
func subgradVerdict(c Case, grads []Tensor64) (Verdict, string) {
	for k, iv := range c.Kinks {
		if iv == nil || k >= len(c.Cot.Data) || c.Cot.Data[k].IsZero() {
			continue
		}
		g := grads[0].Data[k]
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return Fails, fmt.Sprintf("∂/∂x0[%d] = %v (engine) at a kink", k, g)
		}
		d := new(big.Rat).Quo(new(big.Rat).SetFloat64(g), c.Cot.Data[k].Big())
		if d.Cmp(iv[0].Big()) < 0 || d.Cmp(iv[1].Big()) > 0 {
			return Fails, fmt.Sprintf("at x0[%d] = %s the engine's local derivative is %s, outside the Clarke subdifferential [%s, %s]", k, c.Xs[0].Data[k], d.RatString(), iv[0], iv[1])
		}
	}
	return Holds, ""
}

// Options configures a run.
type Options struct {
	// Progress, when set, is called before each case.
	Progress func(engine, kase string, i, n int)
}

// Run checks every case the engine supports on each of its machines and
// returns the rows in a deterministic order (cases in order, machines in
// order, obligations in a fixed order), plus the cases it skipped.
func Run(e Engine, cases []Case, o Options) (rows []Row, skipped []string) {
	for i, c := range cases {
		if o.Progress != nil {
			o.Progress(e.Name(), c.Name, i, len(cases))
		}
		if why := supports(e, c.Graph); why != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", c.Name, why))
			continue
		}
		rs, why := runCaseSkip(e, c)
		if why != "" {
			skipped = append(skipped, fmt.Sprintf("%s: %s", c.Name, why))
			continue
		}
		rows = append(rows, rs...)
	}
	return rows, skipped
}

// runCaseSkip is runCase, or the reason the adapter gave for not
// expressing the case (an ErrUnsupported from Run).
func runCaseSkip(e Engine, c Case) ([]Row, string) {
	rows := runCase(e, c)
	for _, r := range rows {
		if r.Obligation == OblRun && r.unsupported != "" {
			return nil, r.unsupported
		}
	}
	return rows, ""
}

func supports(e Engine, g Graph) error {
	for _, n := range g.Nodes {
		if err := e.Supports(n.Op, n.Attrs); err != nil {
			return fmt.Errorf("%s: %w", n.Op, err)
		}
	}
	return nil
}

func runCase(e Engine, c Case) []Row {
	ops := c.Graph.Ops()
	row := func(m, obl string, v Verdict, d string) Row {
		return Row{Engine: e.Name(), Machine: m, Case: c.Name, Ops: ops, Obligation: obl, Verdict: v, Detail: d}
	}
	ref, err := NewReference(c.Graph, c.Xs, c.Cot, c.Tangents)
	if err != nil {
		return []Row{row("", OblRun, Inconclusive, "reference: "+err.Error())}
	}
	ref.singular(c)
	var cref *Reference
	convErr := ""
	if usesConvention(e, ops) {
		shapes, err := c.Graph.ValueShapes(c.Xs)
		if err != nil {
			return []Row{row("", OblRun, Inconclusive, "shapes: "+err.Error())}
		}
		conv := c.Graph.ExpandAt(e.Conventions(), shapes)
		// A convention graph that does not apply at these shapes (written
		// for one channel, say) leaves the case judged by tlcheck's
		// conventions alone; the reason is told where it matters.
		// Only the gradients and tangents of the convention's reference are
		// read (the forward value is judged against ref's sharp bound), so
		// its classic reference suffices.
		if cref, err = classicReference(conv, c.Xs, c.Cot, c.Tangents); err != nil {
			cref, convErr = nil, "; the engine's convention graph does not apply here: "+oneLine(err.Error())
		} else {
			cref.singular(c)
		}
	}
	xs := make([]Tensor64, len(c.Xs))
	for i, x := range c.Xs {
		xs[i] = Float64s(x)
	}
	// The hand-written cases declare their kinks (Kinks, Tie) and the
	// engines their conventions; a random graph is judged strictly only
	// where it is provably smooth.
	kinked := c.random && !smoothAt(c.Graph, c.Xs)
	zref, zerr := zeroReference(c)
	var rows []Row
	// Machines are compared with the first machine of their format; a
	// float32 machine is judged against the binary32 view of each
	// reference (Reference.Binary32).
	first := map[string][]Tensor64{}
	firstM := map[string]string{}
	seen := map[string]bool{}
	refs := map[string][3]*Reference{Float64: {ref, cref, zref}}
	machines := e.Machines()
	for _, m := range machines {
		format := machineFormat(e, m)
		if _, ok := refs[format]; !ok {
			refs[format] = [3]*Reference{ref.Binary32(), cref.Binary32(), zref.Binary32()}
		}
		ref, cref, zref := refs[format][0], refs[format][1], refs[format][2]
		y, grads, err := e.Run(m, c.Graph, xs, Float64s(c.Cot))
		if errors.Is(err, ErrUnsupported) {
			r := row(m, OblRun, Inconclusive, oneLine(err.Error()))
			r.unsupported = r.Detail
			return append(rows, r)
		}
		if err != nil {
			rows = append(rows, row(m, OblRun, Fails, "the engine failed: "+oneLine(err.Error())))
			seen[format] = true
			continue
		}
		v, d := judgeAll("y", y.Data, ref.Y)
		rows = append(rows, row(m, OblForward, v, d))
		if !can(e, m, "vjp") {
			continue
		}
		gobl := OblVJP
		if c.DAG {
			gobl = OblPathSum
		}
		v, d = gradVerdict(grads, ref.Grads)
		adjRef := ref
		if v != Holds && cref != nil {
			if cv, cd := gradVerdict(grads, cref.Grads); cv == Holds {
				v, d, adjRef = ByConvention, conventionNote(e, ops), cref
			} else if worst(cv, v) == v {
				d = cd + " (under the engine's convention)"
				v, adjRef = cv, cref
			}
		}
		if v == Fails && kinked && finite(grads) {
			// A random graph at a kink or tie: another engine convention
			// (relu′(0) = 1, abs′(0) = 1, a max tie to one side) gives
			// another valid gradient there, which the harness cannot
			// enumerate for a DAG; only a value no subgradient can have
			// (NaN, ±∞) is a verdict.
			v, d = Inconclusive, "at a kink or tie of a random graph (another valid convention may give this): "+d
		}
		if v != Holds {
			d += convErr
		}
		rows = append(rows, row(m, gobl, v, d))
		if c.Tangents != nil {
			obl := OblAdjoint
			if c.Tie {
				obl = OblMass
			}
			v, d = adjointVerdict(grads, adjRef.Grads, c.Tangents, adjRef.JV, c.Tie)
			rows = append(rows, row(m, obl, v, d))
		}
		if c.Kinks != nil {
			v, d = subgradVerdict(c, grads)
			rows = append(rows, row(m, OblSubgrad, v, d))
		}
		rows = append(rows, zeroRow(e, m, c, xs, zref, zerr, row))
		if je, ok := e.(JVPEngine); ok && c.Tangents != nil && can(e, m, "jvp") {
			rows = append(rows, jvpRow(je, m, c, xs, ref, cref, ops, e, row))
		}
		if !seen[format] {
			seen[format] = true
			first[format], firstM[format] = grads, m
		} else if first[format] != nil {
			rows = append(rows, machinesRow(row, firstM[format], m, first[format], grads, ref, cref, kinked))
		}
	}
	return rows
}

// jvpRow judges the engine's own forward mode (JVPEngine): J·v along the
// case's tangents, element by element, against the registry's JVP (or
// the engine's declared convention's). The case's tangents are given
// only where the function is differentiable along them (Case.Tangents),
// so J·v there does not depend on a tie convention.
func jvpRow(je JVPEngine, m string, c Case, xs []Tensor64, ref, cref *Reference, ops []string, e Engine, row func(m, obl string, v Verdict, d string) Row) Row {
	ts := make([]Tensor64, len(c.Tangents))
	for i, t := range c.Tangents {
		ts[i] = Float64s(t)
	}
	_, jv, err := je.RunJVP(m, c.Graph, xs, ts)
	if errors.Is(err, ErrUnsupported) {
		return row(m, OblJVP, Inconclusive, "the engine cannot run forward mode here: "+oneLine(err.Error()))
	}
	if err != nil {
		return row(m, OblJVP, Fails, "the engine's forward mode failed: "+oneLine(err.Error()))
	}
	v, d := judgeAll("J·v", jv.Data, ref.JVs)
	if v != Holds && cref != nil {
		if cv, cd := judgeAll("J·v", jv.Data, cref.JVs); cv == Holds {
			v, d = ByConvention, conventionNote(e, ops)
		} else if worst(cv, v) == v {
			v, d = cv, cd+" (under the engine's convention)"
		}
	}
	if v != Holds && slices.Contains(c.Singular, true) {
		// At a point where the function has no derivative and no Clarke
		// subdifferential (sqrt at 0) J·v is a convention too (+∞·v, or
		// NaN for v = 0, as much as the registry's 0).
		v, d = Inconclusive, d+": the function has no derivative at a singular element of this case: any J·v there is a convention"
	}
	return row(m, OblJVP, v, d)
}

func usesConvention(e Engine, ops []string) bool {
	for _, c := range e.Conventions() {
		for _, op := range ops {
			if op == c.Op && (c.Expand != nil || c.ExpandAt != nil) {
				return true
			}
		}
	}
	return false
}

func conventionNote(e Engine, ops []string) string {
	var notes []string
	for _, c := range e.Conventions() {
		for _, op := range ops {
			if op == c.Op {
				notes = append(notes, fmt.Sprintf("%s (%s)", c.Doc, c.Source))
			}
		}
	}
	return "differs from tlcheck's tie convention, equals the engine's: " + strings.Join(notes, "; ")
}

// zeroRow: with a zero cotangent the engine's gradients are judged
// against the reference at the zero cotangent. Where every local
// derivative the registry's VJP rules multiply the cotangent by is
// bounded at the case's point, fpbound's algebra makes each term an
// exact zero (an exact 0 times a finite value), so the reference is
// exactly 0 with bound 0 and the theorem says every modelled evaluation
// returns exactly ±0: any other value, NaN included, fails. Where a
// derivative may have a pole there, the bound is +∞ and the row is
// inconclusive.
func zeroRow(e Engine, m string, c Case, xs []Tensor64, ref *Reference, rerr error, row func(m, obl string, v Verdict, d string) Row) Row {
	if rerr != nil {
		return row(m, OblZero, Inconclusive, "reference: "+rerr.Error())
	}
	_, grads, err := e.Run(m, c.Graph, xs, Float64s(zerosLike(c.Cot)))
	if err != nil {
		return row(m, OblZero, Fails, "the engine failed on a zero cotangent: "+oneLine(err.Error()))
	}
	v, d := gradVerdict(grads, ref.Grads)
	if d != "" {
		d += " (zero cotangent)"
	}
	return row(m, OblZero, v, d)
}

// zeroReference is the reference of case c at a zero cotangent (one per
// case, whatever the number of machines).
func zeroReference(c Case) (*Reference, error) {
	// Only its gradients are read: the classic reference suffices.
	ref, err := classicReference(c.Graph, c.Xs, zerosLike(c.Cot), nil)
	if err != nil {
		return nil, err
	}
	ref.singular(c)
	return ref, nil
}

// machinesRow compares two machines of one engine: identical bits hold;
// different values both within the bound of tlcheck's reference or of the
// reference under the engine's declared convention (cref, nil when none
// applies) hold with a note (summation order is free); a difference with
// one outside both is reported by that machine's own row, and here as a
// finding too — except at a kink of a random graph (kinked), where two
// finite values may be two valid conventions.
func machinesRow(row func(m, obl string, v Verdict, d string) Row, m1, m2 string, g1, g2 []Tensor64, ref, cref *Reference, kinked bool) Row {
	name := m1 + "↔" + m2
	// Every element is compared: a difference within the bound (at a tie,
	// say) must not hide a later one outside it.
	v, detail := Holds, ""
	for i := range g1 {
		if i >= len(g2) || len(g1[i].Data) != len(g2[i].Data) {
			return row(name, OblMachines, Fails, fmt.Sprintf("∂/∂x%d: the machines return different shapes", i))
		}
		for k := range g1[i].Data {
			a, b := g1[i].Data[k], g2[i].Data[k]
			if math.Float64bits(a) == math.Float64bits(b) {
				continue
			}
			best := func(x float64) Verdict {
				j := judge(x, ref.Grads[i][k])
				if cref != nil && j != Holds {
					if jc := judge(x, cref.Grads[i][k]); jc == Holds || (jc != Fails && j == Fails) {
						j = jc
					}
				}
				if j == Fails && kinked && !math.IsNaN(x) && !math.IsInf(x, 0) {
					j = Inconclusive
				}
				return j
			}
			ja, jb := best(a), best(b)
			d := fmt.Sprintf("∂/∂x%d[%d]: %s %v, %s %v, %s", i, k, m1, a, m2, b, fmtEnc(ref.Grads[i][k]))
			if ja == Fails || jb == Fails {
				return row(name, OblMachines, Fails, d)
			}
			if ja != Holds || jb != Holds {
				if v != Inconclusive {
					v, detail = Inconclusive, d
				}
				continue
			}
			if detail == "" {
				detail = "differ within the bound: " + d
			}
		}
	}
	return row(name, OblMachines, v, detail)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// singular unbounds the gradient enclosures of input 0 at the case's
// singular elements (Case.Singular), with the reason.
func (r *Reference) singular(c Case) {
	for k, s := range c.Singular {
		if s && len(r.Grads) > 0 && k < len(r.Grads[0]) {
			why := "the function has no derivative and no Clarke subdifferential here: any value is a convention"
			for _, en := range []*fpbound.Enclosure{&r.Grads[0][k].Tight, &r.Grads[0][k].Loose} {
				en.Bound, en.Reason = math.Inf(1), why
			}
		}
	}
}

// finite reports whether every gradient value is finite.
func finite(grads []Tensor64) bool {
	for _, g := range grads {
		for _, v := range g.Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}
