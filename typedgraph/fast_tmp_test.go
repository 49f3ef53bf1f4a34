package typedgraph_test

import (
	"testing"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	tg "github.com/tlcheck/tlcheck/typedgraph"
)

type F = spec.F32

func fastReg() *spec.Registry[F] {
	reg := spec.New[F]()
	lin, _ := reg.Lookup("linear")
	fl := *lin
	fl.Forward = func(_ *spec.Attrs, xs []spec.Tensor[F]) (spec.Tensor[F], error) {
		x, w, b := xs[0], xs[1], xs[2]
		out, in := w.Shape[0], w.Shape[1]
		rows := len(x.Data) / in
		s := x.Shape.Clone()
		s[len(s)-1] = out
		y := make([]F, rows*out)
		for r := 0; r < rows; r++ {
			for j := 0; j < out; j++ {
				var acc float32
				for k := 0; k < in; k++ {
					acc = float32(acc + float32(float32(x.Data[r*in+k])*float32(w.Data[j*in+k])))
				}
				y[r*out+j] = F(float32(acc + float32(b.Data[j])))
			}
		}
		return spec.Tensor[F]{Shape: s, Data: y}, nil
	}
	fl.VJP = func(_ *spec.Attrs, xs []spec.Tensor[F], yv, dy spec.Tensor[F]) ([]spec.Tensor[F], error) {
		x, w := xs[0], xs[1]
		out, in := w.Shape[0], w.Shape[1]
		rows := len(dy.Data) / out
		dx := make([]F, len(x.Data))
		dw := make([]F, len(w.Data))
		db := make([]F, out)
		for r := 0; r < rows; r++ {
			for k := 0; k < in; k++ {
				var acc float32
				for j := 0; j < out; j++ {
					acc = float32(acc + float32(float32(w.Data[j*in+k])*float32(dy.Data[r*out+j])))
				}
				dx[r*in+k] = F(acc)
			}
			for j := 0; j < out; j++ {
				d := float32(dy.Data[r*out+j])
				db[j] = F(float32(float32(db[j]) + d))
				for k := 0; k < in; k++ {
					dw[j*in+k] = F(float32(float32(dw[j*in+k]) + float32(d*float32(x.Data[r*in+k]))))
				}
			}
		}
		return []spec.Tensor[F]{{Shape: x.Shape, Data: dx}, {Shape: w.Shape, Data: dw}, {Shape: xs[2].Shape, Data: db}}, nil
	}
	reg.Override(&fl)
	return reg
}

func TestTmpFastSame(t *testing.T) {
	in := mlpInputs[F]()
	for _, reg := range []*spec.Registry[F]{nil, fastReg()} {
		g, _ := tg.Trace(reg, mlp[F, tg.Var], mlpShapes...)
		e, _ := g.Compile()
		e.Forward(in)
		gs, _ := e.Backward(spec.Scalar0[F](1))
		t.Log(gs[0])
	}
}

func BenchmarkTmpFastExec(b *testing.B) {
	reg := fastReg()
	g, _ := tg.Trace(reg, mlp[F, tg.Var], mlpShapes...)
	e, _ := g.Compile()
	e.SetRequiresGrad(paramMask)
	in := mlpInputs[F]()
	seed := spec.Scalar0[F](1)
	b.ReportAllocs()
	for b.Loop() {
		e.Forward(in)
		e.Backward(seed)
	}
}

func BenchmarkTmpFastEager(b *testing.B) {
	reg := fastReg()
	in := mlpInputs[F]()
	e := tg.NewEager[F](reg)
	seed := spec.Scalar0[F](1)
	b.ReportAllocs()
	for b.Loop() {
		e.Session.Reset()
		refs := make([]tape.Ref, len(in))
		for i, v := range in {
			if paramMask[i] {
				refs[i], _ = e.Session.Param("p", v)
			} else {
				refs[i], _ = e.Session.Input("x", v)
			}
		}
		out, _ := mlp[F, tape.Ref](e, refs)
		e.Session.Tape().BackwardAll(out.ID(), seed)
	}
}
