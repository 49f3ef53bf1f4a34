package check_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/spec"
)

// conv1d is a float32 convolution of x [N, C, L] with w [O, C, K],
// stride 1, no padding: y[n, o, i] = Σ_c Σ_k x[n, c, i+k]·w[o, c, k].
func conv1d(_ *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	x, w := xs[0], xs[1]
	n, c, l := x.Shape[0], x.Shape[1], x.Shape[2]
	o, k := w.Shape[0], w.Shape[2]
	out := l - k + 1
	y, _ := spec.Zeros[spec.F32](spec.Shape{n, o, out})
	for b := 0; b < n; b++ {
		for oc := 0; oc < o; oc++ {
			for i := 0; i < out; i++ {
				var s float32
				for ic := 0; ic < c; ic++ {
					for j := 0; j < k; j++ {
						s += float32(x.Data[(b*c+ic)*l+i+j]) * float32(w.Data[(oc*c+ic)*k+j])
					}
				}
				y.Data[(b*o+oc)*out+i] = spec.F32(s)
			}
		}
	}
	return y, nil
}

// conv1dVJP is its backward: ∂x[n, c, i+k] += dy[n, o, i]·w[o, c, k] and
// ∂w[o, c, k] += dy[n, o, i]·x[n, c, i+k]; skipLast plants a fault: the
// weight gradient leaves out the last output position.
func conv1dVJP(skipLast bool) check.VJPKernelFunc {
	return func(_ *spec.Attrs, xs []spec.Tensor[spec.F32], dy spec.Tensor[spec.F32]) ([]spec.Tensor[spec.F32], error) {
		x, w := xs[0], xs[1]
		n, c, l := x.Shape[0], x.Shape[1], x.Shape[2]
		o, k := w.Shape[0], w.Shape[2]
		out := l - k + 1
		dx, _ := spec.Zeros[spec.F32](x.Shape)
		dw, _ := spec.Zeros[spec.F32](w.Shape)
		for b := 0; b < n; b++ {
			for oc := 0; oc < o; oc++ {
				for i := 0; i < out; i++ {
					g := float32(dy.Data[(b*o+oc)*out+i])
					for ic := 0; ic < c; ic++ {
						for j := 0; j < k; j++ {
							xi, wi := (b*c+ic)*l+i+j, (oc*c+ic)*k+j
							dx.Data[xi] = spec.F32(float32(dx.Data[xi]) + g*float32(w.Data[wi]))
							if !(skipLast && i == out-1) {
								dw.Data[wi] = spec.F32(float32(dw.Data[wi]) + g*float32(x.Data[xi]))
							}
						}
					}
				}
			}
		}
		return []spec.Tensor[spec.F32]{dx, dw}, nil
	}
}

// softmaxRows is a float32 max-shifted softmax over the last axis of a
// matrix.
func softmaxRows(_ *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	x := xs[0]
	r, c := x.Shape[0], x.Shape[1]
	y, _ := spec.Zeros[spec.F32](x.Shape)
	for i := 0; i < r; i++ {
		row := x.Data[i*c : (i+1)*c]
		m := float32(row[0])
		for _, v := range row {
			m = max(m, float32(v))
		}
		var s float32
		e := make([]float32, c)
		for j, v := range row {
			e[j] = float32(math.Exp(float64(float32(v) - m)))
			s += e[j]
		}
		for j := range e {
			y.Data[i*c+j] = spec.F32(e[j] / s)
		}
	}
	return y, nil
}

// softmaxVJP is y ⊙ (δ − Σ δ ⊙ y) per row; dropSum plants the classic
// fault of leaving out the Σ δ ⊙ y term.
func softmaxVJP(dropSum bool) check.VJPKernelFunc {
	return func(a *spec.Attrs, xs []spec.Tensor[spec.F32], dy spec.Tensor[spec.F32]) ([]spec.Tensor[spec.F32], error) {
		y, _ := softmaxRows(a, xs)
		r, c := y.Shape[0], y.Shape[1]
		dx, _ := spec.Zeros[spec.F32](y.Shape)
		for i := 0; i < r; i++ {
			var s float32
			for j := 0; j < c; j++ {
				s += float32(dy.Data[i*c+j]) * float32(y.Data[i*c+j])
			}
			if dropSum {
				s = 0
			}
			for j := 0; j < c; j++ {
				dx.Data[i*c+j] = spec.F32(float32(y.Data[i*c+j]) * (float32(dy.Data[i*c+j]) - s))
			}
		}
		return []spec.Tensor[spec.F32]{dx}, nil
	}
}

// TestKernelPair: correct float32 forward and backward kernels of conv
// and softmax hold on every element; a planted wrong backward of each is
// caught, with the element named.
func TestKernelPair(t *testing.T) {
	convOpts := check.PairOptions{Attrs: &spec.Attrs{Window: &spec.Window{Kernel: []int{3}, Stride: []int{1}, Groups: 1}},
		Shapes: []spec.Shape{{2, 2, 6}, {3, 2, 3}}, Cases: 12}
	smOpts := check.PairOptions{Attrs: &spec.Attrs{Axis: 1}, Shapes: []spec.Shape{{3, 5}}, Cases: 12}
	for _, tc := range []struct {
		name  string
		op    string
		k     check.Kernels
		o     check.PairOptions
		fails bool
	}{
		{"conv", "conv", check.Kernels{Forward: conv1d, VJP: conv1dVJP(false)}, convOpts, false},
		{"conv, weight gradient skips a position", "conv", check.Kernels{Forward: conv1d, VJP: conv1dVJP(true)}, convOpts, true},
		{"softmax", "softmax", check.Kernels{Forward: softmaxRows, VJP: softmaxVJP(false)}, smOpts, false},
		{"softmax, backward without the sum", "softmax", check.Kernels{Forward: softmaxRows, VJP: softmaxVJP(true)}, smOpts, true},
	} {
		rep, err := check.CheckKernels(tc.op, tc.k, tc.o)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := rep.Failure != ""; got != tc.fails {
			t.Errorf("%s: failure %q, want failing %v", tc.name, rep.Failure, tc.fails)
		}
		if tc.fails && (rep.Fails["forward"] != 0 || !strings.Contains(rep.Failure, "∂/∂x")) {
			t.Errorf("%s: the forward is right, the backward wrong: %+v", tc.name, rep)
		}
		if !tc.fails && (rep.Holds["forward"] == 0 || rep.Holds["vjp"] == 0) {
			t.Errorf("%s: nothing held: %+v", tc.name, rep)
		}
	}
	if _, err := check.CheckKernels("softmax", check.Kernels{}, smOpts); err == nil {
		t.Error("no kernel accepted")
	}
	if _, err := check.CheckKernels("conv", check.Kernels{Forward: conv1d}, check.PairOptions{Attrs: convOpts.Attrs, Shapes: []spec.Shape{{2, 2, 6}, {3, 3, 3}}}); err == nil {
		t.Error("mismatched channels accepted")
	}
	tb := &captureTB{name: "TestKernelPairTB"}
	check.KernelPair(tb, "softmax", check.Kernels{Forward: softmaxRows, VJP: softmaxVJP(true)}, smOpts)
	if !tb.failed || !strings.Contains(tb.log.String(), "vjp elements fail") {
		t.Errorf("KernelPair did not fail:\n%s", tb.log.String())
	}
}
