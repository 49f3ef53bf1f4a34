package fpbound

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/onnx"
)

// TestUNet38Profile (UNET38_PROFILE=dir of a zoo model: model.onnx and
// test_data_set_0/input_0.pb; off by default) prints, per node, the
// budget and the fallback allowance its sweeps spent, their wall time,
// the largest local error, box width and first-order bound: where
// Options.SweepWork goes (docs/bounds.md, unet38). UNET38_WORK sets
// SweepWork (default DefaultSweepWork).
func TestUNet38Profile(t *testing.T) {
	dir := os.Getenv("UNET38_PROFILE")
	if dir == "" {
		t.Skip("UNET38_PROFILE not set")
	}
	m, err := onnx.ReadModel(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := onnx.ReadTensor(filepath.Join(dir, "test_data_set_0", "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	o, fl, err := onnx.OptionsFor(m, []*onnx.Tensor{in})
	if err != nil {
		t.Fatal(err)
	}
	im, err := onnx.Import(m, o)
	if err != nil {
		t.Fatal(err)
	}
	x, err := im.PackInputs(fl)
	if err != nil {
		t.Fatal(err)
	}
	var work int64
	if w := os.Getenv("UNET38_WORK"); w != "" {
		fmt.Sscan(w, &work)
	}
	last, lastSpent, lastCut := time.Now(), int64(0), int64(0)
	nodeSeen = func(j int, nodes []foNode, spent, cutSpent int64) {
		now := time.Now()
		nd := &nodes[j]
		ml, mw, mf, fin := 0.0, 0.0, 0.0, 0
		for _, e := range nd.local {
			ml = math.Max(ml, e)
		}
		for _, b := range nd.box {
			mw = math.Max(mw, b.Hi-b.Lo)
		}
		for _, f := range nd.fo {
			if !math.IsInf(f, 1) {
				fin++
				mf = math.Max(mf, f)
			}
		}
		if nd.err || j == im.Graph.OutputID {
			t.Logf("node %3d %-16s n=%6d spent %11d cut %10d wall %7.3fs local %.2e box %.2e fo %d/%d max %.2e lvl %d fb %v parents %v",
				j, im.Graph.Nodes[j].Kind.Op, len(nd.e), spent-lastSpent, cutSpent-lastCut, now.Sub(last).Seconds(), ml, mw, fin, len(nd.fo), mf, nd.lvl, nd.fallback, im.Graph.Nodes[j].Parents)
		}
		last, lastSpent, lastCut = now, spent, cutSpent
	}
	defer func() { nodeSeen = nil }()
	start := time.Now()
	sh, err := SharpBounds(im.Graph, im.Payload, x, Options{SweepWork: work})
	if err != nil {
		t.Fatal(err)
	}
	fin, mb := 0, 0.0
	for _, s := range sh {
		if !math.IsInf(s.FirstOrder, 1) {
			fin++
			mb = math.Max(mb, s.FirstOrder)
		}
	}
	t.Logf("total %.1fs: %d/%d elements with a first-order bound, largest %.3e", time.Since(start).Seconds(), fin, len(sh), mb)
}
