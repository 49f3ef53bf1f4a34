package fpbound

import (
	"fmt"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The per-node format of a graph that computes in binary32 and binary64
// (doc.go, "Mixed binary32 and binary64 graphs"). The evaluation runs in
// binary64's instantiation, ErrOf[binary64]; while a node that rounds to
// binary32 is bounded, binary64's consts, holds and nearest answer with
// binary32's (format.go), so that every rounding of the node — its
// operations' u, η and Ω, its formula constants' M1 charge, its library
// ulps — is charged in binary32, and every other node's in binary64. A
// pending sum remembers the format its additions were performed in
// (ErrOf.sumFmt) and is closed with that format's γ, whichever node
// closes it.
//
// The state is package state, like curULPs: it is set only under evalMu,
// by the evaluations of SharpBoundsMixed and BoundsMixed (useFormats),
// and read by the scalar operations of that one evaluation. Between two
// nodes (and for anything evaluated outside a node) it says binary32,
// the coarse format, whose constants bound a binary64 rounding too.

// The tags of a pending sum's additions (ErrOf.sumFmt).
const (
	sumAny    uint8 = iota // not a mixed evaluation: the format's constants
	sumWide                // every addition in binary64 (a mixed evaluation)
	sumNarrow              // some addition in binary32 (a mixed evaluation)
)

var (
	// mixedNodes, under evalMu: per node of the mixed evaluation in
	// progress, whether it rounds to binary32; nil when none runs.
	mixedNodes []bool
	// mixedOn reports a mixed evaluation in progress.
	mixedOn atomic.Bool
	// narrowNow reports that the operation being bounded rounds to
	// binary32 (a binary32 node of the mixed evaluation, or no node).
	narrowNow atomic.Bool
)

// useFormats installs o's per-node formats for an evaluation; the caller
// holds evalMu and calls the returned function when the evaluation ends.
// Without per-node formats (o.binary32 nil) it does nothing.
func useFormats(o Options) (restore func()) {
	undoOrder := useSumOrder(o.Profile) // the profile's summation order (order.go)
	if o.binary32 == nil {
		return undoOrder
	}
	mixedNodes = o.binary32
	mixedOn.Store(true)
	narrowNow.Store(true)
	return func() {
		mixedNodes = nil
		mixedOn.Store(false)
		narrowNow.Store(false)
		undoOrder()
	}
}

// enterNode makes node j's format the current one (a no-op outside a
// mixed evaluation); leaveNode goes back to binary32's.
func enterNode(j int) {
	if mixedNodes != nil {
		narrowNow.Store(j < 0 || j >= len(mixedNodes) || mixedNodes[j])
	}
}

func leaveNode() {
	if mixedNodes != nil {
		narrowNow.Store(true)
	}
}

// convertInput is the input's Err values, converted in the input node's
// format (its M1 charge: 0 for data of the node's own type).
func convertInput[F format](g *irsem.Graph, input irsem.RatTensor) spec.Tensor[ErrOf[F]] {
	enterNode(g.InputID)
	defer leaveNode()
	return irsem.ConvertTensor[ErrOf[F]](input)
}

// sumConsts are the constants that close a pending sum whose additions
// carry the tag t: binary32's for sumNarrow, binary64's for sumWide
// (set only in binary64 evaluations), else the current ones.
func sumConsts[F format](t uint8) *consts {
	switch t {
	case sumNarrow:
		return &consts32
	case sumWide:
		return &consts64
	}
	return constsOf[F]()
}

// mergeSum is the tag of a sum of two operands tagged a and b, made now
// (tag now): binary32 when any addition is, else binary64 when every
// one is.
func mergeSum(a, b, now uint8) uint8 {
	if a == sumNarrow || b == sumNarrow || now == sumNarrow {
		return sumNarrow
	}
	return max(a, b, now)
}

// SharpBoundsMixed is SharpBounds64 for a graph that computes in binary32
// and binary64 (doc.go, "Mixed binary32 and binary64 graphs"):
// binary32[j] reports that node j's operations are performed in
// binary32 (an ONNX FLOAT node), every other node's in binary64; each
// rounding is charged with its own format's constants. The outputs are
// judged as float64 (JudgeFloat64). len(binary32) must be the number of
// nodes.
func SharpBoundsMixed(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, binary32 []bool, o Options) ([]Sharp, error) {
	if err := checkMixed(g, binary32); err != nil {
		return nil, err
	}
	o.binary32 = binary32
	return sharp[binary64](g, p, input, o)
}

// BoundsMixed is Bounds64 for a graph that computes in binary32 and
// binary64, with the per-node formats of SharpBoundsMixed.
func BoundsMixed(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, binary32 []bool, o Options) ([]Enclosure, error) {
	if err := checkMixed(g, binary32); err != nil {
		return nil, err
	}
	o.binary32 = binary32
	return bounds[binary64](g, p, input, o)
}

func checkMixed(g *irsem.Graph, binary32 []bool) error {
	if g == nil {
		return fmt.Errorf("fpbound: nil graph")
	}
	if len(binary32) != len(g.Nodes) {
		return fmt.Errorf("fpbound: %d node formats for %d nodes", len(binary32), len(g.Nodes))
	}
	return nil
}
