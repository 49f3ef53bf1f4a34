package irsem

import (
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestTagTableFollowsRegistry: every registry primitive with an IR form is
// a tag with that form's arity, attributes, parameters and the
// primitive's exactness; irsem's own tags collide with none of them and
// have no primitive; every Op constant names a tag (a new tag needs no
// constant).
func TestTagTableFollowsRegistry(t *testing.T) {
	nat := map[Op]bool{}
	for _, o := range native {
		nat[o.Op] = true
	}
	registry := 0
	for _, p := range spec.Infos() {
		if p.IR == nil {
			continue
		}
		registry++
		tag := Op(p.IR.Tag)
		if nat[tag] {
			t.Errorf("registry primitive %s claims irsem's own tag %s", p.Name, tag)
			continue
		}
		o, ok := LookupTag(tag)
		if !ok {
			t.Errorf("primitive %s: tag %s missing", p.Name, tag)
			continue
		}
		if o.Prim != p.Name || o.MinArity != p.IR.MinArity || o.MaxArity != p.IR.MaxArity || o.Exact != p.Exact ||
			len(o.Attrs) != len(p.IR.Attrs) || len(o.Params) != len(p.IR.Params) || len(o.Required) != len(p.IR.Required) {
			t.Errorf("tag %s = %+v, registry form %+v (exact %v)", tag, o, *p.IR, p.Exact)
		}
	}
	if got := len(Ops()); got != registry+len(native) {
		t.Errorf("%d tags, want %d registry + %d irsem", got, registry, len(native))
	}
	for _, o := range native {
		if o.Prim != "" {
			t.Errorf("irsem's own tag %s names primitive %s", o.Op, o.Prim)
		}
	}
	consts := []Op{OpInput, OpConst, OpRandUniform, OpBernoulliMask, OpAdd, OpSub, OpMulElem, OpMaxElem, OpMinElem,
		OpAbs, OpSqrt, OpInv, OpRelu, OpTanh, OpSigmoid, OpExp, OpLog, OpSin, OpCos, OpSoftplus, OpSafeLog, OpMatmul,
		OpLinear, OpReduceSum, OpReduceMean, OpSum, OpSoftmax, OpHardMaskedSoftmax, OpLayerNorm, OpBatchNormEval,
		OpPermute, OpTranspose, OpBroadcastTo, OpReshape, OpFlatten, OpConcat, OpConv, OpMaxPool, OpAvgPool, OpDetach, OpMSELoss}
	for _, c := range consts {
		if _, ok := LookupTag(c); !ok {
			t.Errorf("constant %s is not a tag", c)
		}
	}
}
