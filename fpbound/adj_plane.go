package fpbound

import (
	"github.com/tlcheck/tlcheck/enclose"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// LinearDensePlane is LinearDense with the weights given as the float64
// plane w of their exact values (spec.DensePlane): it fills y exactly as
// LinearDense does with W[i] = FromRat(w[i]), or reports false. Proof
// (doc.go, "Dense linear layers"): FromRat of a float64 w[i] is the point
// [w[i], w[i]] (FromSmallFrac, which ConvertTensor uses, gives the same
// point), and adjPlanes of points that are all tame is the centre plane
// of their values with no radius plane — the plane w itself. So when w
// is tame (enclose.Tame) the weight planes are the same bit for bit, and
// adjLinearDenseWith runs the same code on them; otherwise it declines,
// and the caller converts the weights and runs the rule as before (the
// pairs path of adjPlanes then decides, as it always did).
func (adj) LinearDensePlane(x []adj, src []int32, w []float64, b, y []adj, rows, out, in int, withBias bool) bool {
	if rows <= 0 || out <= 0 || in <= 0 || len(w) < out*in {
		return false
	}
	wp := enclose.Planes{C: w[:out*in]}
	if !enclose.Tame(wp) {
		return false
	}
	return adjLinearDenseWith(x, src, wp, b, y, rows, out, in, withBias, 1)
}

// planeWeight reports whether argument t of step st is a payload weight
// that forwardSteps reads as a plane and does not keep converted in
// foNode.args: position 1 (W) of a linear, conv or conv_transpose step,
// a payload parameter with a value.
func planeWeight(st *irsem.Step, t int) bool {
	if t != 1 || len(st.Args) < 2 || len(st.Args) > 3 {
		return false
	}
	if st.Prim != "linear" && st.Prim != "conv" && st.Prim != "conv_transpose" {
		return false
	}
	wa := st.Args[1]
	return wa.Source == irsem.ArgParam && ((wa.Value != nil && len(wa.Value.Data) == wa.Shape.Size()) ||
		(wa.Value == nil && wa.Plane != nil && wa.Plane.Len() == wa.Shape.Size())) // payload plane (mem36)
}

// exactPlane is the float64 plane of the payload tensor v's exact values
// (spec.Rat.ExactFloat64: a normal float64 or 0), as irsem's
// RunApplicationPlanes builds it; false when some value is not one.
func exactPlane(v *irsem.RatTensor) ([]float64, bool) {
	wp := make([]float64, len(v.Data))
	for i, r := range v.Data {
		f, ok := r.ExactFloat64()
		if !ok {
			return nil, false
		}
		wp[i] = f
	}
	return wp, true
}

// planeForward computes step k of node application a over adj with its
// weights read as a plane (spec.LinearPlane, spec.ConvPlane on
// LinearDensePlane): the same value as the step's rule on the converted
// weights (spec.DensePlane's contract, LinearDensePlane's proof), without
// one adj per weight. It returns the value and the step's arguments with
// the weight left unconverted (a tensor of its shape and no data:
// stepArgs converts it where a sweep reads it); ok is false, computing
// nothing, where the step is not such a product or the plane rule
// declines (the caller then converts the weights and runs the rule).
func planeForward(a *irsem.Application, k int, parents, steps []spec.Tensor[adj]) (spec.Tensor[adj], []spec.Tensor[adj], bool, error) {
	s := &a.Steps[k]
	if !planeWeightsOn || !planeWeight(s, 1) {
		return spec.Tensor[adj]{}, nil, false, nil
	}
	wa := s.Args[1]
	var wp []float64 // nil for a payload plane: irsem.LinearPlaneOf reads it (mem36)
	if wa.Value != nil {
		var ok bool
		if wp, ok = exactPlane(wa.Value); !ok {
			return spec.Tensor[adj]{}, nil, false, nil
		}
	}
	if planePlant != nil && wp != nil {
		planePlant(wp)
	}
	xs := make([]spec.Tensor[adj], len(s.Args))
	for t, arg := range s.Args {
		if t == 1 {
			xs[t] = spec.Tensor[adj]{Shape: wa.Shape.Clone()}
			continue
		}
		v, err := irsem.ArgValue(a, k, arg, parents, steps)
		if err != nil {
			return spec.Tensor[adj]{}, nil, false, err
		}
		xs[t] = v
	}
	var y spec.Tensor[adj]
	var ok bool
	if s.Prim == "linear" {
		if len(xs) != 3 {
			return spec.Tensor[adj]{}, nil, false, nil
		}
		y, ok = irsem.LinearPlaneOf(xs[0], wa.Shape, wp, wa.Plane, xs[2])
	} else {
		var b *spec.Tensor[adj]
		if len(xs) == 3 {
			b = &xs[2]
		}
		y, ok = irsem.ConvPlaneOf(s.Attrs, xs[0], wa.Shape, wp, wa.Plane, b, s.Prim == "conv_transpose")
	}
	if !ok {
		return spec.Tensor[adj]{}, nil, false, nil
	}
	return y, xs, true, nil
}

// planePlant (tests only) changes the plane planeForward reads: a planted
// fault the agreement tests must catch.
var planePlant func(wp []float64)

// planeWeightsOn lets forwardSteps read dense weights as planes; tests
// turn it off to compare with the converted path.
var planeWeightsOn = true

// stepArgs is step s's arguments of node application a as forwardSteps
// kept them (xs), with a weight left unconverted by planeForward
// converted again from the payload (irsem.ArgValue, the conversion the
// forward would have made: the same adj values), for the reader alone
// (nodeVJP's VJP in x, dx = dy·W; linearIn's Jacobian): nothing per
// weight is kept between reads. xs itself is not modified.
func stepArgs(a *irsem.Application, s int, xs []spec.Tensor[adj]) ([]spec.Tensor[adj], error) {
	st := &a.Steps[s]
	var out []spec.Tensor[adj]
	for t := range xs {
		if xs[t].Data != nil || !planeWeight(st, t) || t >= len(st.Args) {
			continue
		}
		v, err := irsem.ArgValue[adj](a, s, st.Args[t], nil, nil)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = append([]spec.Tensor[adj](nil), xs...)
		}
		out[t] = v
	}
	if out == nil {
		return xs, nil
	}
	return out, nil
}
