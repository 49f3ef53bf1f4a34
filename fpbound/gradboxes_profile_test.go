package fpbound

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/spec"
)

// TestGradBoxesProfile is a measurement, not a check (docs/bounds.md,
// vitgrad37): with GRADPROFILE set to a directory of tools/export_grads.py
// (model.onnx, input_0.pb, grads.json) it runs compare-grad's fpbound
// phases one by one — GradErr, forwardBoxes at GRADPROFILE_WORK
// (default DefaultGradSweepWork), boxedReverse, combinedBound and
// combinedParamBounds — and prints each phase's wall time, per node the
// sweep budget forwardBoxes' sweeps spent (boxesSeen), whether the node
// got a first-order bound F, its largest local error and how wide and
// whether finite its box is,
// and the budget summed per op. Without GRADPROFILE it is skipped.
func TestGradBoxesProfile(t *testing.T) {
	dir := os.Getenv("GRADPROFILE")
	if dir == "" {
		t.Skip("GRADPROFILE (an export_grads.py model directory) not set")
	}
	work := int64(DefaultGradSweepWork)
	if s := os.Getenv("GRADPROFILE_WORK"); s != "" {
		w, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		work = w
	}
	im, x, err := model.ImportPB(dir+"/model.onnx", []string{dir + "/input_0.pb"})
	if err != nil {
		t.Fatal(err)
	}
	g, p := im.Graph, im.Payload
	var doc struct {
		Cotangent map[string]struct {
			Values []float64
		}
	}
	b, err := os.ReadFile(dir + "/grads.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cotangent) != 1 {
		t.Fatalf("%d cotangents: the profile reads one output", len(doc.Cotangent))
	}
	seed := spec.Tensor[spec.Rat]{Shape: g.Nodes[g.OutputID].Shape.Clone()}
	for _, c := range doc.Cotangent {
		for _, v := range c.Values {
			r, err := spec.RatFromFloat64(v)
			if err != nil {
				t.Fatal(err)
			}
			seed.Data = append(seed.Data, r)
		}
	}
	o := Options{SweepWork: work, ConstParams: true}
	k, err := o.ulps()
	if err != nil {
		t.Fatal(err)
	}
	phase := func(name string, t0 time.Time, reason string) {
		fmt.Printf("phase %-20s %8.2fs %s\n", name, time.Since(t0).Seconds(), reason)
	}
	t0 := time.Now()
	_, params, _, err := GradErr(g, p, x, seed, o)
	if err != nil {
		t.Fatal(err)
	}
	phase("GradErr", t0, "")
	perOp := map[string][2]int64{}
	boxesSeen = func(j int, spent, cut int64, nd *foNode) {
		op := fmt.Sprint(g.Nodes[j].Kind.Op)
		s := perOp[op]
		perOp[op] = [2]int64{s[0] + spent, s[1] + cut}
		infBox, wide := 0, 0.0
		for _, b := range nd.box {
			if math.IsInf(b.Lo, 0) || math.IsInf(b.Hi, 0) {
				infBox++
			} else {
				wide = max(wide, b.Hi-b.Lo)
			}
		}
		loc := 0.0
		for _, e := range nd.local {
			loc = max(loc, e)
		}
		infF := 0
		for _, f := range nd.fo {
			if math.IsInf(f, 1) {
				infF++
			}
		}
		if nd.err {
			fmt.Printf("node %3d %-13s n=%5d spent=%9d cut=%9d local ≤ %.3g F=%v(lvl %d, fallback %v, %d infinite) box: %d unbounded, widest %.3g\n",
				j, op, len(nd.box), spent, cut, loc, nd.fo != nil, nd.lvl, nd.fallback, infF, infBox, wide)
		}
	}
	defer func() { boxesSeen = nil }()
	t0 = time.Now()
	boxes, reason, err := forwardBoxes[binary32](g, p, x, o, k)
	boxesSeen = nil
	if err != nil {
		t.Fatal(err)
	}
	phase("forwardBoxes", t0, reason)
	ops := make([]string, 0, len(perOp))
	for op := range perOp {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(a, b int) bool { return perOp[ops[a]][0]+perOp[ops[a]][1] > perOp[ops[b]][0]+perOp[ops[b]][1] })
	for _, op := range ops {
		fmt.Printf("op %-13s spent=%10d cut=%10d\n", op, perOp[op][0], perOp[op][1])
	}
	if reason != "" {
		return
	}
	t0 = time.Now()
	_, _, reason, err = boxedReverse[binary32](g, p, x, seed, params, boxes, errRegistryOrDefault[binary32](o.Profile), k)
	if err != nil {
		t.Fatal(err)
	}
	phase("boxedReverse", t0, reason)
	co := Options{ConstParams: true, SweepWork: DefaultCombinedSweepWork} // the combined graph's own budget, as gradErrSharp
	t0 = time.Now()
	_, reason, err = combinedBound(g, p, x, seed, boxes, co)
	if err != nil {
		t.Fatal(err)
	}
	phase("combinedBound", t0, reason)
	t0 = time.Now()
	_, reasons, err := combinedParamBounds(g, p, x, seed, boxes, params, co)
	if err != nil {
		t.Fatal(err)
	}
	phase("combinedParamBounds", t0, "")
	for i, r := range reasons {
		if r != "" {
			fmt.Printf("param %d: %s\n", i, r)
		}
	}
}
