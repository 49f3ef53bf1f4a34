package spec

import (
	"encoding/binary"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"testing"
)

// The window rules against PyTorch's own outputs: the ONNX backend tests
// in ../shared/onnx/pytorch-converted hold PyTorch modules with recorded
// float32 inputs and outputs. A max pool selects one of its inputs, so
// its float32 result is exact: the registry's value must equal the
// recording. A conv, conv_transpose or average pool rounds: by the
// order-independent inner-product bound (Higham, Accuracy and Stability of
// Numerical Algorithms, Thm 3.1 and Lemma 3.4), any float32 evaluation of
// Σ_{i≤n} a_i·b_i, in any order, with or without fused multiply-adds, is
// within γ_n·Σ|a_i·b_i| of the exact value, γ_n = n·u/(1−n·u), u = 2^-24.
// The bias is one more term (b·1), and an average's division (or
// multiplication by a rounded reciprocal) two more roundings, so the
// recording must lie within γ_{n+2}·(Σ|a_i·b_i| + |b|) of the exact value,
// where Σ|a_i·b_i| is the same rule applied to |x| and |W| exactly. Each
// test reads the shared folder when it exists and skips, saying so, when
// it does not.

// sharedONNX returns ../shared/onnx/pytorch-converted/name, walking up
// from the package directory, or skips the test.
func sharedONNX(t *testing.T, name string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "shared", "onnx", "pytorch-converted", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Skipf("shared ONNX test data not found (../shared/onnx/pytorch-converted/%s): skipping the comparison with PyTorch's recorded outputs", name)
		}
		dir = up
	}
}

// pbFields splits a protobuf message into (field, wire type, payload).
func pbFields(t *testing.T, b []byte) (out []struct {
	f, wt int
	v     uint64
	raw   []byte
}) {
	t.Helper()
	for len(b) > 0 {
		k, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatal("bad protobuf key")
		}
		b = b[n:]
		e := struct {
			f, wt int
			v     uint64
			raw   []byte
		}{f: int(k >> 3), wt: int(k & 7)}
		switch e.wt {
		case 0:
			e.v, n = binary.Uvarint(b)
			b = b[n:]
		case 1:
			e.raw, b = b[:8], b[8:]
		case 5:
			e.raw, b = b[:4], b[4:]
		case 2:
			l, n := binary.Uvarint(b)
			e.raw, b = b[n:n+int(l)], b[n+int(l):]
		default:
			t.Fatalf("wire type %d", e.wt)
		}
		out = append(out, e)
	}
	return out
}

// pbTensor decodes a float TensorProto: dims (1), data_type (2) = 1,
// float_data (4) or raw_data (9), little-endian.
func pbTensor(t *testing.T, b []byte) (Shape, []float32) {
	t.Helper()
	var s Shape
	var data []float32
	for _, e := range pbFields(t, b) {
		switch e.f {
		case 1:
			if e.wt == 0 {
				s = append(s, int(e.v))
			} else {
				for r := e.raw; len(r) > 0; {
					v, n := binary.Uvarint(r)
					s, r = append(s, int(v)), r[n:]
				}
			}
		case 2:
			if e.v != 1 {
				t.Fatalf("data type %d, want float", e.v)
			}
		case 4:
			if e.wt == 5 {
				data = append(data, math.Float32frombits(binary.LittleEndian.Uint32(e.raw)))
			} else {
				for r := e.raw; len(r) >= 4; r = r[4:] {
					data = append(data, math.Float32frombits(binary.LittleEndian.Uint32(r)))
				}
			}
		case 9:
			for r := e.raw; len(r) >= 4; r = r[4:] {
				data = append(data, math.Float32frombits(binary.LittleEndian.Uint32(r)))
			}
		}
	}
	if len(data) != s.Size() {
		t.Fatalf("tensor %v with %d values", s, len(data))
	}
	return s, data
}

func readPB(t *testing.T, path string) (Shape, []float32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return pbTensor(t, b)
}

// modelInitializers returns the model's initializers in file order
// (ModelProto.graph = 7, GraphProto.initializer = 5).
func modelInitializers(t *testing.T, path string) (shapes []Shape, vals [][]float32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range pbFields(t, b) {
		if m.f != 7 {
			continue
		}
		for _, g := range pbFields(t, m.raw) {
			if g.f == 5 {
				s, v := pbTensor(t, g.raw)
				shapes, vals = append(shapes, s), append(vals, v)
			}
		}
	}
	return shapes, vals
}

func toRat(s Shape, v []float32) Tensor[Rat] {
	x := zerosOf[Rat](s)
	for i, f := range v {
		x.Data[i] = RatFromBig(new(big.Rat).SetFloat64(float64(f)))
	}
	return x
}

func absT(x Tensor[Rat]) Tensor[Rat] { return MapPure(x, func(v Rat) Rat { return v.Abs() }) }

// gammaRat is γ_n = n·u/(1 − n·u) with u = 2^-24, exactly.
func gammaRat(n int) Rat {
	nu := NewRat(int64(n), 1<<24)
	q, _ := nu.Div(NewRat(1, 1).Sub(nu))
	return q
}

// TestWindowAgainstPyTorch: see the comment at the top of the file.
func TestWindowAgainstPyTorch(t *testing.T) {
	type tc struct {
		model string
		op    string
		w     *Window
		terms int // n of the bound: products per output element (+1 for a bias)
	}
	cases := []tc{
		{"test_MaxPool2d", "max_pool_nd", &Window{Kernel: []int{3, 3}, Stride: []int{2, 2}, Pads: []int{1, 1, 1, 1}, Dilation: []int{1, 1}}, 0},
		{"test_MaxPool3d_stride_padding", "max_pool_nd", &Window{Kernel: []int{2, 2, 2}, Stride: []int{2, 2, 2}, Pads: []int{1, 1, 1, 1, 1, 1}, Dilation: []int{1, 1, 1}}, 0},
		{"test_MaxPool1d_stride_padding_dilation", "max_pool_nd", &Window{Kernel: []int{200}, Stride: []int{10}, Pads: []int{100, 100}, Dilation: []int{10}}, 0},
		{"test_MaxPool2d_stride_padding_dilation", "max_pool_nd", &Window{Kernel: []int{60, 80}, Stride: []int{10, 10}, Pads: []int{10, 20, 10, 20}, Dilation: []int{10, 10}}, 0},
		{"test_AvgPool2d", "avg_pool_nd", &Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pads: make([]int, 4), Dilation: []int{1, 1}}, 4},
		{"test_AvgPool3d_stride", "avg_pool_nd", &Window{Kernel: []int{2, 2, 2}, Stride: []int{2, 2, 2}, Pads: make([]int, 6), Dilation: []int{1, 1, 1}}, 8},
		{"test_AvgPool3d_stride1_pad0_gpu_input", "avg_pool_nd", &Window{Kernel: []int{3, 3, 3}, Stride: []int{1, 1, 1}, Pads: make([]int, 6), Dilation: []int{1, 1, 1}}, 27},
		{"test_Conv2d_groups", "conv", &Window{Kernel: []int{3, 2}, Stride: []int{1, 1}, Pads: make([]int, 4), Dilation: []int{1, 1}, Groups: 2}, 2*6 + 1},
		{"test_Conv2d_dilated", "conv", &Window{Kernel: []int{3, 3}, Stride: []int{2, 2}, Pads: []int{1, 1, 1, 1}, Dilation: []int{2, 2}, Groups: 1}, 3*9 + 1},
		{"test_Conv2d_depthwise_with_multiplier", "conv", &Window{Kernel: []int{3, 3}, Stride: []int{1, 1}, Pads: make([]int, 4), Dilation: []int{1, 1}, Groups: 4}, 9 + 1},
		{"test_Conv3d_dilated_strided", "conv", &Window{Kernel: []int{2, 2, 2}, Stride: []int{2, 2, 2}, Pads: make([]int, 6), Dilation: []int{2, 2, 2}, Groups: 1}, 3*8 + 1},
		{"test_Conv1d_groups", "conv", &Window{Kernel: []int{3}, Stride: []int{1}, Pads: []int{0, 0}, Dilation: []int{1}, Groups: 2}, 2*3 + 1},
		{"test_ConvTranspose2d", "conv_transpose", &Window{Kernel: []int{3, 3}, Stride: []int{3, 2}, Pads: []int{1, 1, 1, 1}, Dilation: []int{1, 1}, OutputPadding: []int{1, 1}, Groups: 1}, 3*9 + 1},
		{"test_ConvTranspose2d_no_bias", "conv_transpose", &Window{Kernel: []int{3, 3}, Stride: []int{2, 3}, Pads: []int{1, 1, 1, 1}, Dilation: []int{1, 1}, OutputPadding: []int{1, 1}, Groups: 1}, 3 * 9},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			if testing.Short() && (c.model == "test_MaxPool1d_stride_padding_dilation" || c.model == "test_MaxPool2d_stride_padding_dilation") {
				t.Skip("-short: a 220000- and a 1000000-element max pool")
			}
			dir := sharedONNX(t, c.model)
			xs, xv := readPB(t, filepath.Join(dir, "test_data_set_0", "input_0.pb"))
			ys, yv := readPB(t, filepath.Join(dir, "test_data_set_0", "output_0.pb"))
			a := &Attrs{Window: c.w}
			if c.op == "max_pool_nd" { // exact: the maximum is one of the float32 inputs
				p, _ := Default[F64]().Lookup(c.op)
				x := zerosOf[F64](xs)
				for i, f := range xv {
					x.Data[i] = F64(f)
				}
				y, err := p.Apply(a, []Tensor[F64]{x})
				if err != nil {
					t.Fatal(err)
				}
				if !y.Shape.Equal(ys) {
					t.Fatalf("shape %v, PyTorch %v", y.Shape, ys)
				}
				for i := range y.Data {
					if float64(y.Data[i]) != float64(yv[i]) {
						t.Fatalf("element %d: %v, PyTorch %v", i, y.Data[i], yv[i])
					}
				}
				return
			}
			p, _ := Default[Rat]().Lookup(c.op)
			args := []Tensor[Rat]{toRat(xs, xv)}
			if c.op != "avg_pool_nd" {
				ws, wv := modelInitializers(t, filepath.Join(dir, "model.onnx"))
				for i := range ws {
					args = append(args, toRat(ws[i], wv[i]))
				}
			}
			y, err := p.Apply(a, args)
			if err != nil {
				t.Fatal(err)
			}
			if !y.Shape.Equal(ys) {
				t.Fatalf("shape %v, PyTorch %v", y.Shape, ys)
			}
			abs := make([]Tensor[Rat], len(args))
			for i := range args {
				abs[i] = absT(args[i])
			}
			mag, err := p.Apply(a, abs)
			if err != nil {
				t.Fatal(err)
			}
			g := gammaRat(c.terms + 2)
			worst := 0.0
			for i := range y.Data {
				rec := RatFromBig(new(big.Rat).SetFloat64(float64(yv[i])))
				err := rec.Sub(y.Data[i]).Abs()
				bound := g.Mul(mag.Data[i])
				if cmp, _ := err.Compare(bound); cmp > 0 {
					t.Fatalf("element %d: PyTorch %v, exact %v: |error| %v exceeds the bound %v", i, yv[i], y.Data[i].Float64(), err.Float64(), bound.Float64())
				}
				if b := bound.Float64(); b > 0 {
					worst = max(worst, err.Float64()/b)
				}
			}
			t.Logf("%s: %d elements within the bound (largest error %.2f of its bound)", c.model, len(y.Data), worst)
		})
	}
}
