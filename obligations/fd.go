package obligations

import (
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// fdStep is the central-difference step, 2^-14: small enough that the
// O(h²) truncation is far below the tangent's size for the smooth
// primitives, large enough that rounding (O(u/h)) stays small.
const fdStep = 1.0 / 16384

// CheckFiniteDifference compares the JVP over F64 with a central
// difference along dx. The admissible gap is derived, not chosen:
//
//   - truncation: the O(h²) error of the step-h difference is estimated by
//     Richardson extrapolation as (4/3)·|D(h) − D(h/2)|, doubled; the two
//     differences are themselves computed from rounded values of f, so
//     the estimate first adds their rounding bounds W(h)/(2h) and
//     W(h/2)/h (W as below), without which an f evaluated to within an
//     ulp can make |D(h) − D(h/2)| understate the truncation;
//   - rounding of f: the same primitive is evaluated over Interval at the
//     very F64 points x ± h·dx; outward rounding makes each enclosure
//     contain both the exact value and the F64 evaluation (each F64
//     intermediate lies in the corresponding interval), so the enclosure
//     widths W± bound the evaluation error and contribute (W₊ + W₋)/(2h);
//   - rounding of the JVP: the width of the JVP evaluated over Interval.
//
// The outcome's measure is the worst |jvp − D(h)|/bound over the output
// elements (≤ 1 holds).
func (r Registries) CheckFiniteDifference(inst *Instance, dxs []spec.Tensor[spec.Rat]) (Outcome, error) {
	p, err := r.F64.Lookup(inst.Op)
	if err != nil {
		return Outcome{}, err
	}
	conv := func(ts []spec.Tensor[spec.Rat]) []spec.Tensor[spec.F64] {
		out := make([]spec.Tensor[spec.F64], len(ts))
		for i, t := range ts {
			out[i] = spec.Convert(t, func(x spec.Rat) spec.F64 { return spec.F64(x.Float64()) })
		}
		return out
	}
	xs, dx := conv(inst.Xs), conv(dxs)
	y, err := p.Apply(inst.Attrs, xs)
	if err != nil {
		return Outcome{}, err
	}
	jv, err := p.JVP(inst.Attrs, xs, y, dx)
	if err != nil {
		return Outcome{}, err
	}
	pi, err := r.Interval.Lookup(inst.Op)
	if err != nil {
		return Outcome{}, err
	}
	toI := func(ts []spec.Tensor[spec.F64]) []spec.Tensor[spec.Interval] {
		out := make([]spec.Tensor[spec.Interval], len(ts))
		for i, t := range ts {
			out[i] = spec.Convert(t, func(v spec.F64) spec.Interval { return spec.Point(float64(v)) })
		}
		return out
	}
	// eval returns the central differences D(h) and the enclosure widths
	// (W₊ + W₋) of f at the two shifted points.
	eval := func(h float64) (d, wsum []float64, err error) {
		shift := func(sign float64) (spec.Tensor[spec.F64], spec.Tensor[spec.Interval], error) {
			s := make([]spec.Tensor[spec.F64], len(xs))
			for i := range xs {
				s[i] = xs[i].Clone()
				for k := range s[i].Data {
					s[i].Data[k] += spec.F64(sign * h * float64(dx[i].Data[k]))
				}
			}
			yf, err := p.Apply(inst.Attrs, s)
			if err != nil {
				return yf, spec.Tensor[spec.Interval]{}, err
			}
			yi, err := pi.Apply(inst.Attrs, toI(s))
			return yf, yi, err
		}
		yp, ip, err := shift(1)
		if err != nil {
			return nil, nil, err
		}
		ym, im, err := shift(-1)
		if err != nil {
			return nil, nil, err
		}
		d, wsum = make([]float64, len(yp.Data)), make([]float64, len(yp.Data))
		for k := range yp.Data {
			d[k] = (float64(yp.Data[k]) - float64(ym.Data[k])) / (2 * h)
			wsum[k] = ip.Data[k].Width() + im.Data[k].Width()
		}
		return d, wsum, nil
	}
	ixs := toI(xs)
	iy, err := pi.Apply(inst.Attrs, ixs)
	if err != nil {
		return Outcome{}, err
	}
	ijv, err := pi.JVP(inst.Attrs, ixs, iy, toI(dx))
	if err != nil {
		return Outcome{}, err
	}
	d1, w1, err := eval(fdStep)
	if err != nil {
		return Outcome{}, err
	}
	d2, w2, err := eval(fdStep / 2)
	if err != nil {
		return Outcome{}, err
	}
	worst := 0.0
	for k := range d1 {
		j := float64(jv.Data[k])
		trunc := 2 * (4.0 / 3.0) * (math.Abs(d1[k]-d2[k]) + w1[k]/(2*fdStep) + w2[k]/fdStep)
		round := w1[k]/(2*fdStep) + ijv.Data[k].Width()
		bound := trunc + round + math.SmallestNonzeroFloat64
		gap := math.Abs(j - d1[k])
		if !(gap <= bound) {
			return Outcome{Oracle: OracleFD, Measure: gap / bound}, &Failure{Op: inst.Op, Obligation: FiniteDifference, Oracle: OracleFD,
				Element: k, Inst: inst, Dx: dxs, LHS: "jvp=" + spec.F64(j).String(), RHS: "fd=" + spec.F64(d1[k]).String(),
				Detail: "gap " + spec.F64(gap).String() + " exceeds derived bound " + spec.F64(bound).String()}
		}
		worst = math.Max(worst, gap/bound)
	}
	return Outcome{Oracle: OracleFD, Measure: worst}, nil
}
