package spec

import (
	"strings"
	"testing"
)

// TestReduceMeanEmptyAxis: the mean over an empty axis has no value, so
// reduce_mean rejects it on every scalar — in its shape rule and in its
// Forward, JVP and VJP called directly — naming the axis; a non-empty
// axis of an empty tensor is fine (no lanes), and reduce_sum over an
// empty axis is the exact empty sum 0.
func TestReduceMeanEmptyAxis(t *testing.T) {
	checkMeanEmpty[Rat](t)
	checkMeanEmpty[F64](t)
	checkMeanEmpty[F32](t)
	checkMeanEmpty[Binary32](t)
	checkMeanEmpty[Interval](t)
	checkMeanEmpty[Dual[Rat]](t)
}

func checkMeanEmpty[T Scalar[T]](t *testing.T) {
	t.Helper()
	kind := KindOf[T]()
	reg := Default[T]()
	mean, _ := reg.Lookup("reduce_mean")
	wantErr := func(what string, err error, axis string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "axis "+axis) || !strings.Contains(err.Error(), "empty") {
			t.Errorf("%s over %s: got %v, want an empty-axis error naming axis %s", what, kind, err, axis)
		}
	}
	for _, c := range []struct {
		shape Shape
		axis  int
		name  string
	}{{Shape{2, 0}, 1, "1"}, {Shape{0}, 0, "0"}, {Shape{3, 0, 2}, -2, "-2"}} {
		a := &Attrs{Axis: c.axis}
		x := zerosOf[T](c.shape)
		_, err := mean.InferShape(a, []Shape{c.shape})
		wantErr("shape rule", err, c.name)
		_, err = mean.Apply(a, []Tensor[T]{x})
		wantErr("Apply", err, c.name)
		_, err = mean.Forward(a, []Tensor[T]{x})
		wantErr("Forward", err, c.name)
		_, err = mean.JVP(a, []Tensor[T]{x}, Tensor[T]{}, []Tensor[T]{x})
		wantErr("JVP", err, c.name)
		_, err = mean.VJP(a, []Tensor[T]{x}, Tensor[T]{Shape: dropAxis(c.shape, 0)}, Tensor[T]{Shape: dropAxis(c.shape, 0)})
		if err == nil {
			t.Errorf("VJP over %s at %v: no error", kind, c.shape)
		}
	}
	// A non-empty axis of an empty tensor: no lanes, an empty result.
	y, err := mean.Apply(&Attrs{Axis: 0}, []Tensor[T]{zerosOf[T](Shape{3, 0})})
	if err != nil || !y.Shape.Equal(Shape{0}) || len(y.Data) != 0 {
		t.Errorf("reduce_mean of [3 0] along axis 0 over %s = %v, %v; want an empty [0]", kind, y, err)
	}
	// reduce_sum over an empty axis is the empty sum, exactly 0.
	sum, _ := reg.Lookup("reduce_sum")
	s, err := sum.Apply(&Attrs{Axis: 1}, []Tensor[T]{zerosOf[T](Shape{2, 0})})
	if err != nil || !s.Shape.Equal(Shape{2}) || !s.Data[0].IsZero() || !s.Data[1].IsZero() {
		t.Errorf("reduce_sum of [2 0] along axis 1 over %s = %v, %v; want [0, 0]", kind, s, err)
	}
}
